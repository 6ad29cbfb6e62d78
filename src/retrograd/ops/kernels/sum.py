"""The sum kernel every summing record shares, with PyTorch's low-precision rule.

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.sum import sum_kernel
    >>> sum_kernel(np.ones((2, 3), np.float32), ((0,), False, None))
    array([2., 2., 2.], dtype=float32)
"""

from __future__ import annotations

import numpy as np
from ml_dtypes import bfloat16

__all__ = ["sum_kernel", "reduced_count", "row_sums", "row_dots", "LOW_FLOATS", "F32"]

F32 = np.dtype(np.float32)
#: the dtypes PyTorch accumulates in float32 and rounds once (Note [Low-precision
#: accumulation] in ops/records/matmul.py)
LOW_FLOATS = frozenset((np.dtype(np.float16), np.dtype(bfloat16)))
_add_reduce = np.add.reduce  # the ufunc method: np.sum's wrapper costs ~1 us per call


def sum_kernel(a: np.ndarray, p: tuple) -> np.ndarray:
    """``a`` summed over ``p = (axes or None, keepdim, dtype or None)``.

    torch sums bfloat16/float16 in float32 and rounds once (NumPy's bfloat16 sum would
    round every partial sum); bias gradients of low-precision layers and linalg.vecdot
    depend on it (Note [Low-precision accumulation]).
    """
    axes, keepdim, dt = p
    if dt is None and a.dtype in LOW_FLOATS:
        return _add_reduce(a, axis=axes, keepdims=keepdim, dtype=F32).astype(a.dtype)
    return _add_reduce(a, axis=axes, keepdims=keepdim, dtype=dt)


def reduced_count(shape, axes) -> int:
    """How many elements a reduction over ``axes`` (None: all) of ``shape`` combines.

    Example:
        >>> reduced_count((2, 3, 4), (0, 2)), reduced_count((2, 3), None)
        (8, 6)
    """
    if axes is None:
        return int(np.prod(shape, dtype=np.int64))
    c = 1
    for ax in axes:
        c *= shape[ax]
    return c


# Note [Row sums]
# The sums along the rows of a 2-d C-contiguous array (softmax's and layer_norm's
# statistics and gradients). Short rows (up to 256 elements) are summed by np.einsum:
# NumPy's add.reduce along short rows pays a fixed cost per row (4-8x slower on 64-element
# rows), einsum sums each row with SIMD partial sums; longer rows keep add.reduce's
# pairwise sums, whose rounding is closer to PyTorch's there (einsum's running sums were
# 1.5 ulp of the sum off log_softmax's gradient on 1000-element rows).
_EINSUM_MAX_LEN = 256
_einsum = np.einsum


def row_sums(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The sums of the rows of the 2-d ``a`` (Note [Row sums]).

    Example:
        >>> row_sums(np.arange(6.0).reshape(2, 3))
        array([ 3., 12.])
    """
    if a.shape[1] <= _EINSUM_MAX_LEN:
        return _einsum("ij->i", a, out=out)
    return _add_reduce(a, axis=1, out=out)


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sums of the rows of ``a * b`` (2-d arrays of one shape; Note [Row sums]).

    Example:
        >>> row_dots(np.ones((2, 3)), np.arange(6.0).reshape(2, 3))
        array([ 3., 12.])
    """
    if a.shape[1] <= _EINSUM_MAX_LEN:
        return _einsum("ij,ij->i", a, b)
    return _add_reduce(np.multiply(a, b), axis=1)
