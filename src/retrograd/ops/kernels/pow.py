"""pow's kernel: PyTorch's special cases for a number exponent, and integer powers.

PyTorch's pow_tensor_scalar computes some exponents by other kernels (sqrt, rsqrt,
reciprocal, x*x, x*x*x, 1/(x*x)), whose results differ from NumPy's single-rounding
``power`` in the last bit or at signed zeros; ``pow_kernel`` takes the same ones.

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.pow import pow_kernel
    >>> pow_kernel(np.array([2.0, -0.0]), np.array(0.5))
    array([ 1.41421356, -0.        ])
"""

from __future__ import annotations

import numpy as np

__all__ = ["pow_kernel"]


def pow_kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ** b`` as PyTorch's CPU kernels compute it (the module's note).

    Example:
        >>> pow_kernel(np.array([3.0], np.float32), np.array(3))
        array([27.], dtype=float32)
    """
    if b.ndim == 0 and a.dtype.kind == "f" and b.dtype.kind in "fiu":
        # PyTorch computes x ** 0.5 as sqrt(x) and x ** -0.5 as rsqrt(x) (pow_tensor_scalar's
        # special cases): (-0.0) ** 0.5 is -0.0 and (-0.0) ** -0.5 is -inf (NumPy: +0.0,
        # +inf), (-inf) ** 0.5 is nan. The rule's a.pow(b - 1) inherits this, so the
        # gradient of x ** 0.5 at -0.0 is -inf, as in PyTorch. Its x ** 3 is x * x * x
        # and x ** -2 is 1 / (x * x) (NumPy's power rounds once: an ulp apart), and x ** 2
        # is x * x, x ** -1 a reciprocal in both.
        e = b.item()
        if e == 0.5:
            return np.sqrt(a)
        if e == -0.5:
            return np.reciprocal(np.sqrt(a))
        if e == 3:
            return a * a * a
        if e == -2:
            return 1 / (a * a)
    elif a.dtype.kind in "iu" and b.dtype.kind in "iu" and (b < 0).any():
        if b.ndim == 0 and not b.flags.writeable:
            # a Python int exponent (dispatch passes numbers as cached read-only 0-d
            # arrays): PyTorch refuses it; a tensor exponent is computed below
            raise RuntimeError(
                f"Integers to negative integer powers are not allowed. (an integer tensor "
                f"of dtype {a.dtype} raised to {int(b)}: the result would not be an "
                f"integer; use a float base, e.g. x.double() ** {int(b)} or "
                f"x.float().pow({int(b)}))")
        return _int_pow_negative(a, b)
    return np.power(a, b)


def _int_pow_negative(a, b):
    """Integer ``a ** b`` with some ``b < 0`` (a tensor exponent; PyTorch allows it):
    1 for a == 1, +-1 for a == -1, 0 otherwise (a == 0 gives 0 where C++ would divide by
    zero; PyTorch's kernel gives the same)."""
    a, b = np.broadcast_arrays(a, b)
    out = np.power(a, np.where(b < 0, 0, b))
    neg = b < 0
    odd = (b % 2) != 0
    out[neg] = np.where(a[neg] == 1, 1, np.where(a[neg] == -1, np.where(odd[neg], -1, 1), 0))
    return out
