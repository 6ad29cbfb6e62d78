"""float32 logarithm, sine and cosine as PyTorch's AVX2 ``randn`` kernel computes them.

PyTorch fills a float32 ``randn`` of 16 or more elements with Box-Muller on blocks of 8
lanes, using the Cephes polynomials of ``avx_mathfun`` (not libm), compiled with fused
multiply-adds. To give its numbers bit for bit we evaluate the same polynomials lane-wise
in NumPy float32, with each fused multiply-add rounded once (see Note [Exact fma]).

Example:
    >>> import numpy as np
    >>> from retrograd._random_avx import box_muller_16
    >>> d = np.linspace(0.1, 0.9, 16, dtype=np.float32).reshape(1, 16)
    >>> box_muller_16(d); d.dtype
    dtype('float32')
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_muller_16"]

_F = np.float32

# Note [Exact fma]
# fma(a, b, c) for float32 must round a*b + c once. The product of two float32 values is
# exact in float64; the float64 sum is not always, and rounding it again to float32 could
# round twice. We round the float64 sum to odd instead (the sum, moved one step towards
# zero when rounding went away from it, with its last bit set when inexact); float64 has
# more than 24 + 2 bits, so rounding that to float32 is the correctly rounded fma.


def _fma(a, b, c) -> np.ndarray:
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    # two-sum: the exact error of s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    inexact = err != 0
    away = inexact & ((err > 0) != (s > 0))  # s was rounded away from zero
    bits = (s.view(np.int64) - away) | inexact
    return bits.view(np.float64).astype(_F)


_LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1]
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRT_HALF = _F(0.707106781186547524)
_DP = [_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)]
_SIN_P = [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1]
_COS_P = [2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002]
_FOUR_OVER_PI = _F(1.27323954473516)


def _log(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal float32 values (Cephes logf on mantissa/exponent)."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 127).astype(_F) + _F(1)
    m = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _SQRT_HALF
    e = e - small.astype(_F)
    x = (m - _F(1)) + np.where(small, m, _F(0))
    z = x * x
    y = np.full_like(x, _F(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = _fma(y, x, _F(p))
    y = _fma(y * x, z, e * _LOG_Q1)
    y = y - z * _F(0.5)
    return _fma(e, _LOG_Q2, x + y)


def _sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine of non-negative float32 values (Cephes sinf/cosf, octant reduction)."""
    j = (x * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F)
    for dp in _DP:
        x = _fma(y, dp, x)
    z = x * x
    c = np.full_like(x, _F(_COS_P[0]))
    for p in _COS_P[1:]:
        c = _fma(c, z, _F(p))
    c = _fma(c * z, z, -(z * _F(0.5))) + _F(1)
    s = np.full_like(x, _F(_SIN_P[0]))
    for p in _SIN_P[1:]:
        s = _fma(s, z, _F(p))
    s = _fma(s * z, x, x)
    first = (j & 2) == 0  # octants where the sine polynomial gives the sine
    sin, cos = np.where(first, s, c), np.where(first, c, s)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where((~(j - 2) & 4) != 0, -cos, cos)
    return sin, cos


def box_muller_16(d: np.ndarray) -> None:
    """Turn uniforms into normals in place on float32 blocks of 16 (``d`` has shape (k, 16)):
    u1 = 1 - d[:, :8], u2 = d[:, 8:]; d[:, :8] = r cos(2 pi u2), d[:, 8:] = r sin(2 pi u2)
    with r = sqrt(-2 log u1)."""
    radius = np.sqrt(_F(-2) * _log(_F(1) - d[:, :8]))
    sin, cos = _sincos(_F(2 * np.pi) * d[:, 8:])
    d[:, :8] = radius * cos
    d[:, 8:] = radius * sin
