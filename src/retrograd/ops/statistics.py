"""Order statistics that skip nans or count: ``nanmedian``, ``mode``, ``msort``.

Example:
    >>> import retrograd as torch
    >>> torch.nanmedian(torch.tensor([1., float("nan"), 3., 2.]))
    tensor(2.)
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make, _wrap_dim
from . import table as T
from . import table_scan as TS
from .dispatch import apply
from .public import public
from .reductions import _rt
from .sorting import sort


def _slices(data: np.ndarray, d: int) -> np.ndarray:
    """``data`` with ``d`` moved last and the other dims flattened: (rows, size)."""
    x = np.moveaxis(data, d, -1)
    return x.reshape(-1, x.shape[-1])


def _indices_back(idx: np.ndarray, data: np.ndarray, d: int, keepdim: bool) -> Tensor:
    """Per-row indices back in ``data``'s shape without (or keeping) dim ``d``."""
    shape = list(np.moveaxis(data, d, -1).shape[:-1])
    idx = idx.reshape(shape)
    if keepdim:
        idx = np.expand_dims(idx, d)
    return _make(np.array(idx, dtype=np.int64))  # (ascontiguousarray makes 0-d 1-d)


def _check_reduction_dim(fn: str, input: Tensor, d: int) -> None:  # noqa: A002
    if input._data.ndim and input._data.shape[d] == 0 and input._data.size == 0 \
            and np.prod([s for k, s in enumerate(input._data.shape) if k != d]) != 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size. (the "
                         f"tensor has shape {list(input.shape)}: reduce over a dim of "
                         "nonzero size)")


@public
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A002
    """The lower median of the elements that are not nan, of all elements or along ``dim``
    with its index (nan where a slice is all nan).

    Example:
        >>> import retrograd as torch
        >>> torch.nanmedian(torch.tensor([[1., float("nan")], [4., 2.]]), 1).values
        tensor([1., 2.])
    """
    if dim is None:
        return apply(TS.nanmedian_all, (input,))
    d = _wrap_dim(dim, input._data.ndim)
    data = input._data
    if data.ndim == 0:
        it = _make(np.zeros((), np.int64))
        return _rt("nanmedian")(apply(TS.nanmedian_dim, (input,), (0, True, it)), it)
    _check_reduction_dim("nanmedian", input, d)
    rows = _slices(data, d)
    order = np.argsort(rows, axis=1, kind="stable")  # nans last
    valid = (~np.isnan(rows)).sum(1) if rows.dtype.kind == "f" else np.full(len(rows),
                                                                            rows.shape[1])
    pos = np.maximum((valid - 1) // 2, 0)
    idx = order[np.arange(len(rows)), pos] if rows.shape[1] else np.zeros(len(rows), np.int64)
    it = _indices_back(idx, data, d, keepdim)
    return _rt("nanmedian")(apply(TS.nanmedian_dim, (input,), (d, bool(keepdim), it)), it)


def _mode_row(row: np.ndarray) -> int:
    """Index of the most frequent value of ``row`` (the smallest of equally frequent ones,
    its last occurrence), as PyTorch's CPU kernel scans the sorted row."""
    order = np.argsort(row, kind="stable")
    s = row[order]
    ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    counts = np.diff(np.append(-1, ends))
    return int(order[ends[int(np.argmax(counts))]])


@public
def mode(input: Tensor, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """The most frequent value along ``dim`` (the smallest if several are as frequent) and
    the index of its last occurrence.

    Example:
        >>> import retrograd as torch
        >>> torch.mode(torch.tensor([1., 2., 2., 1., 3., 1.]))
        torch.return_types.mode(
        values=tensor(1.),
        indices=tensor(5))
    """
    data = input._data
    if data.ndim == 0:
        it = _make(np.zeros((), np.int64))
        return _rt("mode")(apply(T.take_ops["mode"], (input, it), (0, True)), it)
    d = _wrap_dim(dim, data.ndim)
    _check_reduction_dim("mode", input, d)
    rows = _slices(data, d)
    idx = np.array([_mode_row(r) for r in rows] if rows.shape[1] else [0] * len(rows),
                   dtype=np.int64)
    it = _indices_back(idx, data, d, keepdim)
    return _rt("mode")(apply(T.take_ops["mode"], (input, it), (d, bool(keepdim))), it)


@public
def msort(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` sorted along its first dim (``sort(input, dim=0).values``).

    Example:
        >>> import retrograd as torch
        >>> torch.msort(torch.tensor([[3., 1.], [1., 2.]]))
        tensor([[1., 1.],
                [3., 2.]])
    """
    return sort(input, 0).values
