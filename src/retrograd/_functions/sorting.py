"""Sorting and order statistics: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``.

Example:
    >>> import retrograd as torch
    >>> torch.tensor([3., 1., 2.]).topk(2)
    torch.return_types.topk(
    values=tensor([3., 2.]),
    indices=tensor([0, 2]))
"""

from __future__ import annotations

import numpy as np

from .._tensor.tensor import Tensor, _make, _wrap_dim
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.kernels.selection import kth_indices, median_indices, stable_order
from ..ops.public import public
from ..ops.records import scans as TSC
from ..ops.records import table as T
from .reductions import _rt


def _take_values(input, idx_arr, dim, which, keepdim=True):
    it = _make(np.ascontiguousarray(idx_arr).astype(np.int64))
    vals = apply(T.take_ops[which], (input, it), (dim, keepdim))
    return vals, it


@public
@per_element_under_vmap
def sort(input: Tensor, dim: int = -1, descending: bool = False,
         stable: bool = False) -> tuple[Tensor, Tensor]:
    """Sorted values and the indices that sort them (values carry the gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.sort(torch.tensor([3., 1., 2.])).values
        tensor([1., 2., 3.])
    """
    if input._data.ndim == 0:  # SortBackward0 all the same, as PyTorch
        it = _make(np.zeros((), np.int64))
        return _rt("sort")(apply(T.take_ops["sort"], (input, it), (0, True)), it)
    d = _wrap_dim(dim, input._data.ndim)
    idx = stable_order(input._data, d, descending)  # Note [NaN order in sorts]
    vals, it = _take_values(input, idx, d, "sort")
    return _rt("sort")(vals, it)


@public
@per_element_under_vmap
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.argsort(torch.tensor([3., 1., 2.]))
        tensor([1, 2, 0])
    """
    return sort(input, dim, descending, stable).indices


@public
@per_element_under_vmap
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Example:
        >>> import retrograd as torch
        >>> torch.topk(torch.tensor([1., 5., 3.]), 2).values
        tensor([5., 3.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d] if input._data.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    idx = np.take(stable_order(input._data, d, largest), np.arange(k), axis=d)
    vals, it = _take_values(input, idx, d, "topk")
    return _rt("topk")(vals, it)


@public
@per_element_under_vmap
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The ``k``-th smallest value along ``dim`` and its index.

    Example:
        >>> import retrograd as torch
        >>> torch.kthvalue(torch.tensor([3., 1., 2.]), 2).values
        tensor(2.)
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d] if input._data.ndim else 1
    if n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} (k is "
                           f"1-based: 1 to {n} along dim {d} of shape {list(input.shape)})")
    return _kth(TSC.kthvalue, input, k, dim, keepdim)


def _kth(op, input, k, dim, keepdim):
    """kthvalue/median(dim): the index picked here (Note [NaN order in sorts]), the values
    by ``op`` (one node that saves the indices, as PyTorch's KthvalueBackward0/
    MedianBackward1)."""
    d = _wrap_dim(dim, input.ndim)
    data = input._data if input._data.ndim else input._data.reshape(1)
    idx = median_indices(data, d) if op is TSC.median_dim else kth_indices(data, d, k)
    if keepdim and input._data.ndim:
        idx = np.expand_dims(idx, d)
    it = _make(np.array(idx, dtype=np.int64))  # (ascontiguousarray makes 0-d 1-d)
    return _rt("median" if op is TSC.median_dim else "kthvalue")(
        apply(op, (input,), (d, bool(keepdim), it)), it)


@public
@per_element_under_vmap
def median(input: Tensor, dim: int | None = None,
           keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The lower median of all elements, or along ``dim`` with its index.

    Example:
        >>> import retrograd as torch
        >>> torch.median(torch.tensor([3., 1., 2., 4.]))
        tensor(2.)
    """
    if dim is None:  # of an empty tensor: nan, as in PyTorch
        return apply(T.median_all, (input,), (None, False))
    d = _wrap_dim(dim, input._data.ndim)  # (PyTorch's IndexError for a dim out of range)
    n = input._data.shape[d] if input._data.ndim else 1
    return _kth(TSC.median_dim, input, (n - 1) // 2 + 1, dim, keepdim)
