"""Dropout.

Example:
    >>> import retrograd as torch
    >>> d = torch.nn.Dropout(0.5)
    >>> d.eval()(torch.ones(3))
    tensor([1., 1., 1.])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class Dropout(Module):
    """Zero elements with probability ``p`` in training (others scaled by 1/(1-p));
    the identity in eval mode.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Dropout(p=0.2)
        Dropout(p=0.2, inplace=False)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) or (C, L) inputs in training.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Dropout1d(0.3)
        Dropout1d(p=0.3, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) inputs in training.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Dropout2d()
        Dropout2d(p=0.5, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs in training.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Dropout3d(0.1)
        Dropout3d(p=0.1, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Alpha dropout (for SELU networks) in training, the identity in eval mode.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AlphaDropout(0.2)
        AlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels in training, the identity in eval mode.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.FeatureAlphaDropout(0.2)
        FeatureAlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
