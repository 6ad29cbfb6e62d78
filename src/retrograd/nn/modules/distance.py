"""Distance layers: PairwiseDistance, CosineSimilarity.

Example:
    >>> import retrograd as torch
    >>> torch.nn.CosineSimilarity(dim=0)(torch.tensor([1., 0.]), torch.tensor([1., 0.]))
    tensor(1.)
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The p-norm of ``x1 - x2 + eps`` over the last dim.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.PairwiseDistance(eps=0.)(torch.tensor([[3., 4.]]), torch.zeros(1, 2))
        tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.CosineSimilarity()(torch.tensor([[1., 0.]]), torch.tensor([[0., 1.]]))
        tensor([0.])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
