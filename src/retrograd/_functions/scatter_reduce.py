"""Writes that reduce into a tensor: ``scatter_reduce``, ``index_reduce``,
``masked_scatter`` and ``put`` (each with its in-place form).

Example:
    >>> import retrograd as torch
    >>> torch.zeros(3).scatter_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([1., 2., 3.]),
    ...                               "amax", include_self=False)
    tensor([2., 0., 3.])
"""

from __future__ import annotations

import numpy as np

from .._tensor.tensor import _LEGACY_NAMES, Tensor, _wrap_dim
from ..ops.argcheck import broadcast_checked
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.out_arg import with_out
from ..ops.public import public
from ..ops.records import scans as TSC
from .indexing import _check_index

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _same_dtype(fn: str, input: Tensor, src: Tensor, what: str = "src") -> None:
    if src._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"{fn}(): Expected self.dtype to be equal to {what}.dtype ({input.dtype} and "
            f"{src.dtype}: convert one, e.g. {what}.to(self.dtype))")


@public(inplace=True)
@per_element_under_vmap
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor,
                   reduce: str, *, include_self: bool = True,
                   out: Tensor | None = None) -> Tensor:
    """``src`` reduced into ``input`` at ``index`` along ``dim`` with ``reduce`` ('sum',
    'prod', 'mean', 'amax' or 'amin'); ``include_self=False`` leaves ``input``'s own values
    out of the positions written to.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(3).scatter_reduce(0, torch.tensor([1, 1]), torch.tensor([2., 3.]), "prod")
        tensor([1., 6., 1.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's old spellings
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = _wrap_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    _check_index(index.long(), "scatter_reduce", input, d, src)
    _same_dtype("scatter", input, src)
    return with_out("scatter_reduce", apply(TSC.scatter_reduce, (input, index.long(), src),
                                            (d, reduce, bool(include_self))), out, (input, src))


@public(inplace=True)
@per_element_under_vmap
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor,
                 reduce: str, *, include_self: bool = True,
                 out: Tensor | None = None) -> Tensor:
    """``source``'s slices along ``dim`` reduced into ``input``'s slices ``index`` with
    ``reduce`` ('prod', 'mean', 'amax' or 'amin').

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).index_reduce(0, torch.tensor([0, 0]), torch.tensor([2., 3.]), "prod")
        tensor([6., 1.])
    """
    if reduce not in _REDUCES[1:]:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _wrap_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector (a 1-D tensor of "
                         f"indices; got {index._data.ndim} dims: flatten it first)")
    n = source._data.shape[d] if source._data.ndim else 1
    if index._data.size != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index._data.size}) should be "
                           f"equal to source.size(dim): ({n}), for dim: {d}")
    _same_dtype("index_reduce_", input, source, "source")
    size = input._data.shape[d] if input._data.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise IndexError(f"index out of range in self (index {int(bad[0])} along dim {d} of "
                         f"size {size}: every index must lie in [0, {size - 1}])")
    return with_out("index_reduce", apply(TSC.index_reduce, (input, index.long().reshape(-1),
                                                          source), (d, reduce, bool(include_self))),
                    out, (input, source))


@public(inplace=True)
@per_element_under_vmap
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` is True filled, in order, from the
    elements of ``source`` (``mask`` broadcasts with ``input``).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(4).masked_scatter(torch.tensor([True, False, True, False]),
        ...                               torch.tensor([1., 2., 3.]))
        tensor([1., 0., 2., 0.])
    """
    if mask._data.dtype != np.bool_:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_LEGACY_NAMES[mask.dtype.name]} (convert the mask, e.g. mask.bool())")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_LEGACY_NAMES[input.dtype.name]} and {_LEGACY_NAMES[source.dtype.name]} "
            "(convert the source, e.g. source.to(self.dtype))")
    shape = broadcast_checked("masked_scatter", ("mask", "self"),
                              (mask._data.shape, input._data.shape))
    if np.count_nonzero(np.broadcast_to(mask._data, shape)) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask (source "
                           f"has {source._data.size} elements: give one per True of the "
                           "broadcast mask)")
    x = input if tuple(input.shape) == shape else input.expand(shape)
    m = mask if tuple(mask.shape) == shape else mask.expand(shape)
    return apply(TSC.masked_scatter, (x, m, source))


@public(inplace=True)
@per_element_under_vmap
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``source``'s elements written (or added, ``accumulate=True``) at the
    flat indices ``index`` (negative ones count from the end).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 2).put(torch.tensor([3, 0]), torch.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 1.]])
    """
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype} and source.dtype = {source.dtype}")
    if index._data.size != source._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {index._data.size}")
    numel = input._data.size
    flat = index._data.reshape(-1)
    bad = flat[(flat < -numel) | (flat >= numel)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of "
                         f"{numel} elements.")
    idx = index if not (flat < 0).any() else index % max(numel, 1)
    return apply(TSC.put, (input, idx, source), (bool(accumulate),))
