"""Distances of ``retrograd.nn.functional``: ``pairwise_distance`` and ``pdist``
(re-exported there; ``cosine_similarity`` lives with the cosine loss).

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.pdist(torch.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from ...ops.dispatch import apply
from ...ops.op import FLOAT_NP
from ...ops.records import table as T

__all__ = ["pairwise_distance", "pdist"]


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of ``x1 - x2 + eps`` over the last dim (the inputs broadcast).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pairwise_distance(torch.tensor([[3., 4.]]),
        ...                                       torch.zeros(1, 2), eps=0.)
        tensor([5.])
    """
    innermost = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of a 2-D ``input``, condensed: the pairs
    (i, j), i < j, in row-major order (``n * (n - 1) / 2`` values).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pdist(torch.tensor([[0., 0.], [3., 4.]]))
        tensor([5.])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._data.dtype not in FLOAT_NP:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(T.pdist, (input.contiguous(),), float(p))
