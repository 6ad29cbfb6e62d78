"""Index kernels of the sort-based reductions: the orders ``sort``/``argsort``/``topk``
read, and the index ``kthvalue`` and ``median(dim)`` pick, with NaN where PyTorch puts it.

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.selection import median_indices
    >>> median_indices(np.array([[1., np.nan, 2.], [3., 0., 5.]]), 1).tolist()
    [1, 0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["stable_order", "kth_indices", "median_indices", "nanmedian_indices", "quick_select"]


# Note [NaN order in sorts]
# PyTorch's CPU sorts and selections treat NaN as larger than every number, and all NaNs
# as equal to each other ("we want NaN to be sorted as top for numpy compatibility"):
# * sort/argsort/msort and topk: ascending puts the NaNs last, descending (largest=True)
#   first, ahead of +inf. NumPy's stable argsort already puts them last; descending is a
#   stable sort on the key (is-a-number, -x), so NaN never ties with +inf.
# * median(dim) (median_with_indices_impl) first looks for a NaN in the slice and, if
#   there is one, returns it with the index of the FIRST NaN; otherwise nth_element under
#   the total order (value, index), which is NumPy's stable argsort position. median() of
#   all elements is NaN if any element is.
# * nanmedian(dim) uses (value, index) with NaNs last: the stable argsort position again.
# * kthvalue uses PyTorch's own quickselect (quick_select_template, Sedgewick's, median of
#   three) on a copy of the slice, with "greater, or NaN against a number" as the order.
#   When the k-th value is unique its index is the stable argsort one; when it ties (a
#   repeated value, +0 against -0, or several NaNs) the index, and the sign of a zero,
#   are where that quickselect leaves them, so those slices are run through the same
#   algorithm here (``quick_select``).
# What follows the C++ library's or the CPU's own algorithm is not reproduced: the order
# of ties in sort(stable=False) (x86-simd-sort for float32/float64/int32/int64 on AVX2
# and AVX-512, std::sort otherwise), topk's indices among equal values (std::nth_element,
# std::partial_sort), mode's among NaNs; retrograd gives the stable order there.


def stable_order(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices that stably sort ``data`` along ``axis``, NaN as the largest value
    (Note [NaN order in sorts]).

    Example:
        >>> stable_order(np.array([1., np.nan, np.inf, 1.]), 0, True).tolist()
        [1, 2, 0, 3]
    """
    if not descending:
        return np.argsort(data, axis=axis, kind="stable")
    kind = data.dtype.kind
    if kind == "b":
        return np.argsort(~data, axis=axis, kind="stable")
    if kind in "ui":
        return np.argsort(-data.astype(np.int64) if kind == "u" else ~data.astype(np.int64),
                          axis=axis, kind="stable")
    wide = data.astype(np.float64)
    return np.lexsort((-wide, ~np.isnan(wide)), axis=axis)


def _gt_or_nan(x: float, y: float) -> bool:
    return (x != x and y == y) or x > y


def quick_select(values: list, k: int) -> int:
    """Position in ``values`` of the element PyTorch's quick_select_template leaves at
    ``k`` (kthvalue's index on ties; Note [NaN order in sorts]).

    Example:
        >>> quick_select([1., 2., 2., 1., 1.], 1)
        4
    """
    arr = list(values)
    idx = list(range(len(arr)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if _gt_or_nan(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)  # median of three as the pivot
        if _gt_or_nan(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(arr[lo], arr[hi]):
            swap(lo, hi)
        if _gt_or_nan(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while _gt_or_nan(piv, arr[i]):
                i += 1
            j -= 1
            while _gt_or_nan(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype.kind == "V"  # (ml_dtypes' bfloat16 is "V")


def _rows(data: np.ndarray, axis: int) -> np.ndarray:
    x = np.moveaxis(data, axis, -1)
    return x.reshape(-1, x.shape[-1])


def kth_indices(data: np.ndarray, axis: int, k: int) -> np.ndarray:
    """Index along ``axis`` of each slice's ``k``-th smallest value (1-based), as
    PyTorch's kthvalue picks it; the shape of ``data`` without ``axis``.

    Example:
        >>> kth_indices(np.array([[1., 2., 2., 1., 1.], [3., np.nan, 0., np.nan, 1.]]),
        ...             1, 5).tolist()
        [2, 3]
    """
    rows = _rows(data, axis)
    out = np.argsort(rows, axis=1, kind="stable")[:, k - 1]
    if rows.shape[1] > 1:
        kth = rows[np.arange(len(rows)), out]
        same = rows == kth[:, None]
        if _is_float(rows):
            same |= np.isnan(rows) & np.isnan(kth)[:, None]
            rows = rows.astype(np.float64)
        for r in np.flatnonzero(same.sum(axis=1) > 1):  # ties: PyTorch's quickselect
            out[r] = quick_select(rows[r].tolist(), k - 1)
    return out.reshape(np.moveaxis(data, axis, -1).shape[:-1])


def median_indices(data: np.ndarray, axis: int) -> np.ndarray:
    """Index along ``axis`` of each slice's lower median, or of its first NaN, as
    PyTorch's median(dim) picks it (Note [NaN order in sorts]).

    Example:
        >>> median_indices(np.array([[2., 1., 2.], [np.nan, 0., np.nan]]), 1).tolist()
        [0, 0]
    """
    rows = _rows(data, axis)
    n = rows.shape[1]
    out = np.argsort(rows, axis=1, kind="stable")[:, (n - 1) // 2]
    if _is_float(rows):
        nan = np.isnan(rows)
        has = nan.any(axis=1)
        out = np.where(has, nan.argmax(axis=1), out)
    return out.reshape(np.moveaxis(data, axis, -1).shape[:-1])


def nanmedian_indices(data: np.ndarray, axis: int) -> np.ndarray:
    """Index along ``axis`` of each slice's lower median of the numbers that are not NaN
    (of a NaN where all are), as PyTorch's nanmedian(dim) picks it.

    Example:
        >>> nanmedian_indices(np.array([[np.nan, 3., 1., 2.]]), 1).tolist()
        [3]
    """
    rows = _rows(data, axis)
    if not rows.shape[1]:
        return np.zeros(rows.shape[0], np.int64).reshape(np.moveaxis(data, axis, -1).shape[:-1])
    valid = (~np.isnan(rows)).sum(axis=1) if _is_float(rows) else np.full(len(rows),
                                                                          rows.shape[1])
    pos = np.maximum((valid - 1) // 2, 0)
    out = np.argsort(rows, axis=1, kind="stable")[np.arange(len(rows)), pos]
    return out.reshape(np.moveaxis(data, axis, -1).shape[:-1])
