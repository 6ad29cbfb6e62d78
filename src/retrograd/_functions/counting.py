"""Counting and searching: ``unique``, ``unique_consecutive``, ``bincount``, ``histc``,
``histogram``, ``bucketize``, ``searchsorted``, ``isin`` and ``unravel_index``.

None of these has a derivative; where PyTorch still records a node (Note [Nodes without a
derivative] in ops/records/scans.py) the result carries it.

Example:
    >>> import retrograd as torch
    >>> torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
"""

from __future__ import annotations

import builtins
import collections
from collections.abc import Sequence

import numpy as np

from .._core.hints import Number, ShapeLike
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim, result_type
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.op import FLOAT_NP
from ..ops.out_arg import with_out
from ..ops.public import public
from ..ops.records import scans as TSC
from .creation import _linspace_values


def _float_result(op, inputs, value: np.ndarray) -> Tensor:
    """``value`` as the result of ``op`` on ``inputs`` (its node when one requires grad)."""
    return apply(op, tuple(inputs), value)


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` as a 2-D array of its rows along the first dim (empty ones too)."""
    return x.reshape(len(x), int(np.prod(x.shape[1:], dtype=np.int64)))


def _group_starts(x: np.ndarray) -> np.ndarray:
    """True where a new group of equal rows starts (rows: x's first dim; nan != nan)."""
    flat = _rows(x)
    starts = np.ones(len(x), bool)
    if len(x) > 1:
        starts[1:] = (flat[1:] != flat[:-1]).any(axis=1)
    return starts


def _unique_parts(x: np.ndarray, consecutive: bool):
    """(unique rows, inverse, counts) of ``x`` along its first dim, sorted unless
    ``consecutive``; nans are all distinct, as PyTorch's sort-based kernel has them."""
    if consecutive or not len(x):
        order = np.arange(len(x))
    else:  # lexicographic and stable, the rows' first element most significant
        keys = _rows(x)
        order = np.lexsort(keys.T[::-1]) if keys.shape[1] else np.arange(len(x))
    s = x[order]
    starts = _group_starts(s)
    group = np.cumsum(starts) - 1
    inverse = np.empty(len(x), np.int64)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(starts), len(x))).astype(np.int64)
    return s[starts], inverse, counts


def _unique(fn: str, op, input: Tensor, return_inverse: bool, return_counts: bool,
            dim, consecutive: bool):
    data = input._data
    if dim is None:
        vals, inverse, counts = _unique_parts(data.reshape(-1), consecutive)
        inverse = inverse.reshape(data.shape)
    else:
        d = _wrap_dim(dim, data.ndim)
        if data.ndim == 0:
            raise IndexError(f"{fn}: a 0-d tensor has no dim {dim} (pass dim=None)")
        moved = np.moveaxis(data, d, 0)
        if moved.size == 0 and moved.shape[0]:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied (a tensor empty along a dim other "
                               "than dim has no slices to compare)")
        vals, inverse, counts = _unique_parts(moved, consecutive)
        vals = np.moveaxis(vals, 0, d)
    out = _float_result(op, (input,), np.ascontiguousarray(vals))
    extra = ([_make(inverse)] if return_inverse else []) + (
        [_make(counts)] if return_counts else [])
    return (out, *extra) if extra else out


@public
@per_element_under_vmap
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None
           ) -> Tensor | tuple[Tensor, ...]:
    """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted,
    with the inverse indices and the counts when asked for.

    Example:
        >>> import retrograd as torch
        >>> torch.unique(torch.tensor([[1, 2], [1, 2], [0, 3]]), dim=0, return_inverse=True)
        (tensor([[0, 3],
                [1, 2]]), tensor([1, 1, 0]))
    """
    op = TSC.unique2 if dim is None else TSC.unique_dim
    return _unique("unique", op, input, return_inverse, return_counts, dim, False)


@public
@per_element_under_vmap
def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None
                       ) -> Tensor | tuple[Tensor, ...]:
    """``input`` with each run of equal consecutive elements (or slices along ``dim``)
    kept once, with the inverse indices and the run lengths when asked for.

    Example:
        >>> import retrograd as torch
        >>> torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
        (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    return _unique("unique_consecutive", TSC.unique_consecutive, input, return_inverse,
                   return_counts, dim, True)


@public
@per_element_under_vmap
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer ``input``
    (the sum of ``weights`` at its positions, when given), at least ``minlength`` bins.

    Example:
        >>> import retrograd as torch
        >>> torch.bincount(torch.tensor([0, 2, 2]), minlength=4)
        tensor([1, 0, 2, 0])
    """
    data = input._data
    if data.dtype.kind not in "biu":
        raise NotImplementedError(
            f'"bincount_cpu" not implemented for \'{_LEGACY_NAMES[input.dtype.name]}\' '
            "(bincount counts integers: convert first, e.g. x.long())")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0 (got {minlength})")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._data.ndim != 1 or weights._data.size != data.size):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    idx = data.astype(np.int64)
    size = max(int(idx.max()) + 1 if idx.size else 0, minlength)
    if weights is None:
        return _make(np.bincount(idx, minlength=size).astype(np.int64))
    w = weights._data
    dt = w.dtype if w.dtype in FLOAT_NP else np.dtype(np.float64)
    counts = np.bincount(idx, weights=w.astype(np.float64), minlength=size).astype(dt)
    return _float_result(TSC.bincount, (weights,), counts)  # (PyTorch's node: one edge)


def _histogram_counts(x: np.ndarray, edges: np.ndarray, w, linear: bool):
    """PyTorch's histogramdd kernel in one dimension: each element in [edges[0],
    edges[-1]] lands in a bin by linear interpolation (``linear``, histc's) or by binary
    search (histogram's; its linear interpolation with local search gives the same bins);
    the last edge belongs to the last bin."""
    lo, hi = edges[0], edges[-1]
    keep = (x >= lo) & (x <= hi)
    x = x[keep]
    nbins = len(edges) - 1
    if linear:
        with np.errstate(invalid="ignore", divide="ignore"):
            pos = ((x - lo) * x.dtype.type(nbins) / (hi - lo)).astype(np.int64)
    else:
        pos = np.searchsorted(edges, x, side="right") - 1
    pos = np.where(pos == nbins, nbins - 1, pos)
    weights = None if w is None else w.reshape(-1)[keep.reshape(-1)].astype(np.float64)
    return np.bincount(pos.reshape(-1), weights=weights, minlength=nbins)[:nbins]


def _outer_edges(fn: str, data: np.ndarray, lo, hi, widen: float):
    """(leftmost, rightmost) edge: the given range, or the data's when it is empty; an
    empty range is widened by ``widen`` each side (histc: 1, histogram: 0.5)."""
    if lo is None or hi is None or lo == hi:
        if data.size:
            lo, hi = data.min().item(), data.max().item()
        else:
            lo, hi = 0.0, 0.0
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"{fn}: range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError(f"{fn}: max must be larger than min")
    if lo == hi:
        lo, hi = lo - widen, hi + widen
    return lo, hi


def _check_floating(input: Tensor) -> None:
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(
            f'"histogram_cpu" not implemented for \'{_LEGACY_NAMES[input.dtype.name]}\' '
            "(histograms take floating-point tensors: convert first, e.g. x.float())")


@public
@per_element_under_vmap
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Tensor | None = None) -> Tensor:
    """A histogram of ``bins`` equal-width bins over [min, max] (the data's range when
    min == max); elements outside are ignored.

    Example:
        >>> import retrograd as torch
        >>> torch.histc(torch.tensor([1., 2., 1.]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    _check_floating(input)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    data = input._data
    lo, hi = _outer_edges("torch.histc", data, min, max, 1.0)
    edges = _linspace_values(lo, hi, bins + 1, data.dtype)
    counts = _histogram_counts(data.reshape(-1), edges, None, True)
    return with_out("histc", _make(counts.astype(data.dtype)), out)  # (no derivative)


@public
@per_element_under_vmap
def histogram(input: Tensor, bins: Tensor | int = 100, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False,
              out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """A histogram of ``input``: ``bins`` equal-width bins over ``range`` (the data's by
    default) or the given bin edges; ``weight`` weighs each element, ``density`` divides
    by the total and the bin widths. Returns (hist, bin_edges).

    Example:
        >>> import retrograd as torch
        >>> torch.histogram(torch.tensor([1., 2., 1.]), bins=4, range=(0., 3.))
        torch.return_types.histogram(
        hist=tensor([0., 2., 1., 0.]),
        bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    _check_floating(input)
    data = input._data
    inputs = [input]
    if isinstance(bins, Tensor):
        if bins._data.ndim != 1:
            raise RuntimeError("torch.histogram(): bins tensor should have one dimension, but "
                               f"got {bins._data.ndim} dimensions in the bins tensor")
        edges = bins._data.astype(data.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        lo, hi = _outer_edges("torch.histogram()", data,
                              *(range if range is not None else (None, None)), 0.5)
        edges = _linspace_values(lo, hi, bins + 1, data.dtype)
    if weight is not None:
        if weight._data.shape != data.shape:
            raise RuntimeError("torch.histogram(): if weight tensor is provided it should "
                               "have the same shape as the input tensor")
        inputs.append(weight)
    hist = _histogram_counts(data.reshape(-1), edges, None if weight is None
                             else weight._data, False).astype(data.dtype)
    if density:
        widths = np.diff(edges)
        total = hist.sum()
        hist = (hist / (total * widths)).astype(data.dtype)
    return with_out("histogram", HistogramResult(*apply(
        TSC.histogram, tuple(inputs), (hist, np.array(edges)), nout=2)), out, inputs,
        through_copy=True)


class HistogramResult(collections.namedtuple("histogram", ["hist", "bin_edges"])):
    """PyTorch's ``torch.return_types.histogram``: (hist, bin_edges)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return (f"torch.return_types.histogram(\nhist={self.hist!r},\n"
                f"bin_edges={self.bin_edges!r})")


def _as_values(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _sorted_search(boundaries: np.ndarray, values: np.ndarray, side: str,
                   sorter: np.ndarray | None) -> np.ndarray:
    """np.searchsorted along the last dim of ``boundaries`` (1-D, or one row per row of
    ``values``), after promoting both to one dtype as PyTorch does."""
    dt = np.promote_types(boundaries.dtype, values.dtype)
    b, v = boundaries.astype(dt, copy=False), values.astype(dt, copy=False)
    if sorter is not None:
        b = np.take_along_axis(b, sorter, axis=-1)
    if b.ndim == 1:
        return np.searchsorted(b, v, side=side)
    rows_b = b.reshape(-1, b.shape[-1])
    rows_v = v.reshape(-1, v.shape[-1])
    out = np.stack([np.searchsorted(rb, rv, side=side) for rb, rv in zip(rows_b, rows_v)])
    return out.reshape(v.shape)


def _index_result(idx: np.ndarray, out_int32: bool) -> Tensor:
    return _make(np.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


@public(method=False)
@per_element_under_vmap
def bucketize(input: Tensor, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False, out: Tensor | None = None) -> Tensor:
    """The index of the bucket each element of ``input`` falls in, between the 1-D sorted
    ``boundaries`` (``right``: a value equal to a boundary goes to the bucket after it).

    Example:
        >>> import retrograd as torch
        >>> torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([1, 3, 5, 7, 9]))
        tensor([0, 2, 4])
    """
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    values = _as_values(input)
    return with_out("bucketize", _index_result(_sorted_search(
        boundaries._data, values, "right" if right else "left", None), out_int32), out)


@public(method=False)
@per_element_under_vmap
def searchsorted(sorted_sequence: Tensor, input: Tensor, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None, out: Tensor | None = None) -> Tensor:
    """Where each element of ``input`` would be inserted into the innermost dim of
    ``sorted_sequence`` to keep it sorted (``side='right'``/``right``: after equal ones;
    ``sorter``: the indices that sort an unsorted sequence).

    Example:
        >>> import retrograd as torch
        >>> torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([3, 6]), side="right")
        tensor([2, 3])
    """
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True")
    seq = sorted_sequence._data
    values = _as_values(input)
    if seq.ndim != 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    srt = None
    if sorter is not None:
        if sorter._data.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)}and got sorter "
                               f"tensor {list(sorter.shape)}")
        srt = sorter._data.astype(np.int64)
    use_right = right or side == "right"
    return with_out("searchsorted", _index_result(
        _sorted_search(seq, values, "right" if use_right else "left", srt), out_int32), out)


@public(method=False)
@per_element_under_vmap
def isin(elements: Tensor | Number, test_elements: Tensor | Number, *, assume_unique: bool = False,
         invert: bool = False, out: Tensor | None = None) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements`` (False with
    ``invert``); either may be a number.

    Example:
        >>> import retrograd as torch
        >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]))
        tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one "
                        "of elements and test_elements must be a Tensor")
    dt = result_type(elements, test_elements)
    a = np.asarray(elements._data if isinstance(elements, Tensor) else elements, dt.np)
    b = np.asarray(test_elements._data if isinstance(test_elements, Tensor)
                   else test_elements, dt.np)
    return with_out("isin", _make(np.asarray(np.isin(a, b, invert=invert))), out)


@public(method=False)
@per_element_under_vmap
def unravel_index(indices: Tensor, shape: ShapeLike) -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of each flat index in ``indices`` (one
    tensor per dim; indices wrap around as PyTorch's floor division has them).

    Example:
        >>> import retrograd as torch
        >>> torch.unravel_index(torch.tensor([4, 1]), (2, 3))
        (tensor([1, 0]), tensor([1, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{type(indices).__name__} (pass a tensor, e.g. torch.tensor(i))")
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = [int(shape)] if isinstance(shape, (int, np.integer)) else [int(s) for s in shape]
    if any(s < 0 for s in dims):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(dims)}")
    rest = indices._data.astype(np.int64)
    coords = []
    for size in reversed(dims):
        coords.append(np.mod(rest, size) if size else np.zeros_like(rest))
        rest = np.floor_divide(rest, size) if size else rest
    return tuple(_make(np.array(c)) for c in reversed(coords))  # (0-d stays 0-d)



class HistogramddResult(collections.namedtuple("histogramdd", ["hist", "bin_edges"])):
    """PyTorch's ``torch.return_types.histogramdd``: (hist, bin_edges tuple)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return (f"torch.return_types.histogramdd(\nhist={self.hist!r},\n"
                f"bin_edges={self.bin_edges!r})")


@public(method=False)
@per_element_under_vmap
def histogramdd(input: Tensor, bins: tuple[Tensor, ...] | list[Tensor] | ShapeLike = 10, *,
                range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False) -> tuple[Tensor, tuple[Tensor, ...]]:
    """A histogram of the points in ``input``'s last dim (D coordinates each): ``bins`` per
    dim (a number, one per dim, or one tensor of edges per dim) over ``range`` (2 D
    numbers) or the data's range. Returns (hist, bin_edges).

    Example:
        >>> import retrograd as torch
        >>> torch.histogramdd(torch.tensor([[0., 1.], [1., 1.]]), 2, range=[0., 1., 0., 2.])
        torch.return_types.histogramdd(
        hist=tensor([[0., 1.],
                [0., 1.]]),
        bin_edges=(tensor([0.0000, 0.5000, 1.0000]), tensor([0., 1., 2.])))
    """
    _check_floating(input)
    if input._data.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    data = input._data
    points = data.reshape(-1, data.shape[-1])
    n_dims = points.shape[1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * n_dims
    if len(per_dim) != n_dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None and len(range) != 2 * n_dims:
        raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram range "
                           f"should have {2 * n_dims} elements, but got {len(range)}")
    edges = []
    for k, b in enumerate(per_dim):
        if isinstance(b, Tensor):
            if b._data.dtype != data.dtype:
                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same "
                    f"dtype, but got input with dtype {_LEGACY_NAMES[input.dtype.name].lower()}"
                    f" and bins for dimension {k} with dtype "
                    f"{_LEGACY_NAMES[b.dtype.name].lower()}")
            edges.append(b._data)
            continue
        if b <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for "
                               f"dimension {k}")
        lo, hi = _outer_edges("torch.histogramdd", points[:, k],
                              *(range[2 * k:2 * k + 2] if range is not None else (None, None)),
                              0.5)
        edges.append(_linspace_values(lo, hi, b + 1, data.dtype))
    if weight is not None and weight._data.shape != data.shape[:-1]:
        raise RuntimeError("torch.histogramdd(): if weight tensor is provided it should have "
                           "the same shape as the input tensor excluding its innermost "
                           "dimension")
    keep = np.ones(len(points), bool)
    pos = []
    for k, e in enumerate(edges):
        x = points[:, k]
        keep &= (x >= e[0]) & (x <= e[-1])
        p = np.searchsorted(e, x, side="right") - 1
        pos.append(np.clip(p, 0, len(e) - 2))
    shape = tuple(len(e) - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(p[keep] for p in pos), shape) if keep.any() \
        else np.zeros(0, np.int64)
    w = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(flat, weights=w, minlength=int(np.prod(shape))).reshape(shape)
    if density:
        widths = np.ones(shape)
        for k, e in enumerate(edges):
            widths = widths * np.diff(e).reshape([-1 if j == k else 1
                                                  for j in builtins.range(len(shape))])
        hist = hist / (hist.sum() * widths)
    hist = hist.astype(data.dtype)
    inputs = (input,) + ((weight,) if weight is not None else ())
    if all(isinstance(b, Tensor) for b in per_dim):  # the edges given, as themselves
        out_edges = tuple(per_dim)
    elif len(edges) == 1:
        out_edges = (apply(TSC.histogramdd_bin_edges, inputs, np.array(edges[0])),)
    else:
        out_edges = apply(TSC.histogramdd_bin_edges, inputs, tuple(np.array(e) for e in edges),
                          nout=len(edges))
    return HistogramddResult(apply(TSC.histogramdd_counts, inputs, hist), tuple(out_edges))

