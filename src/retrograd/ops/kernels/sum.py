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

__all__ = ["sum_kernel", "reduced_count", "LOW_FLOATS", "F32"]

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
