"""The kernel of var and std, with the exact zeros of PyTorch's Welford reduction.

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.var import var_kernel
    >>> float(var_kernel(np.full((2, 3), 1.1), ((1,), False, 1))[0])
    0.0
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .sum import LOW_FLOATS, reduced_count

__all__ = ["var_kernel"]

_TWO_PASS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_add_reduce = np.add.reduce


# Note [var of equal values]
# PyTorch's CPU var/std takes two passes (mean, then squared deviations, in double) only
# when the result is one number of float32/float64 (std_var_all_cpu); every other
# reduction is Welford's (std_var_kernel: running mean and M2 in double). Welford's
# deviations from a slice of equal values are exactly 0, so its variance is exactly 0,
# and std's gradient there is 0 (std_backward masks a zero result), where a two-pass
# mean can be off by an ulp (1.1 * 3 / 3 is not 1.1) and leave a variance of 1e-33 and a
# std gradient of +-0.5. So the two-pass result here is made exactly 0 where PyTorch's
# Welford reduction gives 0: slices whose elements are all equal and finite, with a
# positive divisor. Only slices whose result is already tiny against their squared mean
# are candidates (one comparison over the output); the max == min test over the input
# runs only when some are.
def var_kernel(a: np.ndarray, p: tuple) -> np.ndarray:
    """Variance of ``a`` over ``p = (axes or None, keepdim, correction)`` (Note [var of
    equal values]).

    Example:
        >>> float(var_kernel(np.array([1.0, 2.0, 3.0]), (None, False, 1)))
        1.0
    """
    axes, keepdim, c = p
    m = np.mean(a, axis=axes, keepdims=True)
    d = a - m
    ss = _add_reduce(d * d, axis=axes, keepdims=keepdim)
    if keepdim and axes is None:
        ss = ss.reshape((1,) * a.ndim)
    dof = max(reduced_count(a.shape, axes) - c, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.true_divide(ss, dof).astype(a.dtype)
    if dof == 0 or (a.dtype.kind != "f" and a.dtype not in LOW_FLOATS) or (
            out.size <= 1 and a.dtype in _TWO_PASS):
        return out
    out = np.asarray(out)  # (a full reduction's result is a NumPy scalar)
    shaped = out.reshape(m.shape)  # (a view: the same elements in the same order)
    eps = ml_dtypes.finfo(a.dtype).eps  # (bfloat16's too)
    cand = shaped <= np.square(np.abs(m) * (64 * eps))
    if not cand.any():
        return out
    same = np.max(a, axis=axes, keepdims=True) == np.min(a, axis=axes, keepdims=True)
    fix = cand & same & np.isfinite(m)
    if fix.any():
        shaped[fix] = 0
    return out
