"""Dropout.

Example:
    >>> import retrograd as torch
    >>> d = torch.nn.Dropout(0.5)
    >>> d.eval()(torch.ones(3))
    tensor([1., 1., 1.])
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


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

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
