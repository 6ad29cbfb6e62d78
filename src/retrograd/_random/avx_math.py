"""float32 logarithm, sine and cosine as PyTorch's AVX2 ``randn`` kernel computes them, and
exact fused multiply-adds (``fma32``, ``fma64``) for the distributions that need them.

PyTorch fills a float32 ``randn`` of 16 or more elements with Box-Muller on blocks of 8
lanes, using the Cephes polynomials of ``avx_mathfun`` (not libm), compiled with fused
multiply-adds. To give its numbers bit for bit we evaluate the same polynomials lane-wise
in NumPy float32, with each fused multiply-add rounded once (see Note [Exact fma]).

Example:
    >>> import numpy as np
    >>> from retrograd._random.avx_math import box_muller_16
    >>> d = np.linspace(0.1, 0.9, 16, dtype=np.float32).reshape(1, 16)
    >>> box_muller_16(d); d.dtype
    dtype('float32')
"""

from __future__ import annotations

import numpy as np

from .._core.cpu_capability import cpu_capability

__all__ = ["box_muller_16", "fma32", "fma64", "mul_add"]

_F = np.float32

# Note [Exact fma]
# fma(a, b, c) for float32 must round a*b + c once. The product of two float32 values is
# exact in float64, so s = a*b + c in float64 is rounded once; rounding s to float32 then
# gives the fma's result unless s sits exactly halfway between two float32 values (rounding
# is monotonic, and every float32 value and midpoint is a float64 value): only there can
# the second rounding go the wrong way. Those rare lanes (a midpoint has its low 29 float64
# mantissa bits 1 followed by 28 zeros) are redone with round-to-odd: the float64 sum moved
# one step towards zero when rounding went away from it, its last bit set when inexact;
# float64 has more than 24 + 2 bits, so rounding that to float32 is the exact fma.
# Note [Deferred midpoint check]
# Checking each fma for a midpoint costs three NumPy calls more than the fma itself, and
# a small randn is nothing but such calls. So a block is first computed with fmas that
# round the float64 sum straight to float32 and only keep the sums; one check over all of
# them at the end finds whether any lane sat on a midpoint with an inexact sum, and only
# then is the block recomputed with the checked fma (in practice almost never: such a
# lane needs the float64 sum to land exactly on one of 2**-29 of its possible values).
# Note [Exact products]
# Three of the kernel's fmas multiply small integers by constants of few bits: e * ln2_hi
# in logf (|e| <= 24, 0.693359375 has 9 significant bits) and j * DP1, j * DP2 in the
# sine/cosine reduction (j <= 8). Those products are exact float32 values, so the fma is
# one correctly rounded float32 addition, with nothing to check (the log's one used to sit
# on an exact midpoint in a tenth of the lanes, sending every small block to the slow check).
# Note [Chunks]
# The polynomials take a few dozen NumPy passes over their arrays; run over blocks of
# _CHUNK rows they stay in the CPU cache, which makes a large randn about 4x faster.

_CHUNK = 4096
_MID_LOW_BITS = np.int64(-(1 << 63))  # a float64 whose low 29 bits are 1 << 28, shifted by 35


def _fma_odd(a, b, c) -> np.ndarray:
    """fma by round-to-odd (every lane; see Note [Exact fma])."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    err = _two_sum_error(p, c, s)
    inexact = err != 0
    away = inexact & ((err > 0) != (s > 0))  # s was rounded away from zero
    bits = (s.view(np.int64) - away) | inexact
    return bits.view(np.float64).astype(_F)


def _on_midpoint(s: np.ndarray) -> np.ndarray:
    return (s.view(np.int64) << 35) == _MID_LOW_BITS


def _fma(a, b, c) -> np.ndarray:
    """float32 fused multiply-add of arrays/scalars, rounded once (see Note [Exact fma]).

    Example:
        >>> import numpy as np
        >>> from retrograd._random.avx_math import _fma
        >>> one_ulp = np.float32(2.0 ** -23)
        >>> float(_fma(np.float32(1) + one_ulp, np.float32(1) - one_ulp, np.float32(-1)))
        -1.4210854715202004e-14
    """
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    r = s.astype(_F)
    mid = _on_midpoint(s)
    if mid.any():
        at = np.flatnonzero(mid)
        a, b, c = (np.broadcast_to(v, s.shape).reshape(-1)[at] for v in (a, b, c))
        r.reshape(-1)[at] = _fma_odd(a, b, c)
    return r


def _two_sum_error(p: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The exact error of the float64 sum ``s = p + c`` (Knuth's two-sum)."""
    bb = s - p
    return (p - (s - bb)) + (c - bb)


fma32 = _fma

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's split of a float64 into two 26-bit halves


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 fused multiply-add of arrays/scalars, rounded once: a*b = p + e exactly
    (Dekker), p + c = s + t exactly (two-sum), then s + round-to-odd(t + e) rounded to
    nearest is the fma (Boldo and Melquiond's emulation; finite values without overflow).

    Example:
        >>> from retrograd._random.avx_math import fma64
        >>> float(fma64(0.1, 10.0, -1.0))
        5.551115123125783e-17
    """
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    t = _two_sum_error(p, c, s)
    v = t + e
    rest = _two_sum_error(t, e, v)
    vb = v.view(np.int64)
    # move v one step towards the exact t + e where it is even and inexact: round to odd
    towards = np.where((rest > 0) == (v > 0), 1, -1)
    v = np.where((rest != 0) & ((vb & 1) == 0), vb + towards, vb).view(np.float64)
    return s + v


class _Deferred:
    """An fma that keeps its operands and float64 sums for one check at the end (see Note
    [Deferred midpoint check])."""

    def __init__(self):
        self.calls = []

    def __call__(self, a, b, c) -> np.ndarray:
        s = np.multiply(a, b, dtype=np.float64)
        s += c
        self.calls.append((a, b, c, s))
        return s.astype(_F)

    def rounded_twice(self) -> bool:
        """Whether any sum sat on a float32 midpoint without being exact."""
        if self.calls[0][3].size > _SMALL:  # large: check each sum while it is in cache
            return any(_inexact(call, np.flatnonzero(_on_midpoint(call[3])))
                       for call in self.calls)
        mid = _on_midpoint(np.concatenate([s.reshape(-1) for *_, s in self.calls]))
        if not mid.any():
            return False
        at = np.flatnonzero(mid)
        ends = np.cumsum([s.size for *_, s in self.calls])
        owner = np.searchsorted(ends, at, side="right")
        return any(_inexact(self.calls[k], at[owner == k] - (ends[k] - self.calls[k][3].size))
                   for k in np.unique(owner).tolist())


_SMALL = 4096  # lanes up to which one check over all sums beats one check per sum


def _inexact(call: tuple, lanes: np.ndarray) -> bool:
    """Whether the float64 sum ``s = a*b + c`` of ``call`` was rounded in any of ``lanes``
    (an exact sum on a midpoint rounds once, correctly)."""
    if not lanes.size:
        return False
    a, b, c, s = call
    a, b, c = (np.broadcast_to(v, s.shape).reshape(-1)[lanes].astype(np.float64)
               for v in (a, b, c))
    return bool(_two_sum_error(a * b, c, s.reshape(-1)[lanes]).any())


_LOG_P = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1]
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_SQRT_HALF = _F(0.707106781186547524)
_DP = [_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8)]
_SIN_P = [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1]
_COS_P = [2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002]
_FOUR_OVER_PI = _F(1.27323954473516)
# Horner steps of the three polynomials side by side (rows: logf, cosf, sinf); the short
# ones start with zeros, and fma(0, z, 0) = 0, fma(0, z, c) = c exactly, so they come out
# the same as if run alone (Note [One Horner pass])
_POLY = np.array([_LOG_P, [0.0] * 6 + _COS_P, [0.0] * 6 + _SIN_P], _F).T.reshape(9, 3, 1, 1)

# Note [One Horner pass]
# logf (on u1) and sinf/cosf (on theta) are independent until the end, so after their
# argument reductions one Horner pass evaluates all three polynomials on a stacked array,
# and one fma does their last steps: logf's fma(y*x, z, e*ln2_lo), cosf's
# fma(c*z, z, -z/2) and sinf's fma(s*z, x, x). That is 10 fmas for a block instead of 15,
# which matters for small tensors, where each NumPy call costs more than its arithmetic.


def _rows(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """np.stack((a, b, c)) of equal-shaped float32 arrays, with less overhead."""
    out = np.empty((3,) + a.shape, _F)
    out[0], out[1], out[2] = a, b, c
    return out


def _block(d: np.ndarray, fma) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Radius, sine and cosine of a float32 (k, 16) block of uniforms, as PyTorch's AVX2
    kernel computes them (avx_mathfun's log256_ps and sincos256_ps)."""
    # logf's reduction of u1 = 1 - d[:, :8] to e and x = m - 1 (m in [sqrt(1/2), sqrt(2)))
    bits = (_F(1) - d[:, :8]).view(np.int32)
    e = (bits >> 23).astype(_F) - _F(126)
    m = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(_F)  # in [0.5, 1)
    small = m < _SQRT_HALF
    np.subtract(e, _F(1), out=e, where=small)
    xl = m - _F(1)
    np.add(xl, m, out=xl, where=small)
    zl = xl * xl
    # sinf/cosf's reduction of theta = 2 pi d[:, 8:] to its octant j and x in [-pi/4, pi/4]
    theta = _F(2 * np.pi) * d[:, 8:]
    j = (theta * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F)
    xt = y * _DP[0] + theta  # fmas with exact products (Note [Exact products])
    xt = y * _DP[1] + xt
    xt = fma(y, _DP[2], xt)
    zt = xt * xt
    at = _rows(xl, zt, zt)
    p = fma(_POLY[0], at, _POLY[1])
    for coef in _POLY[2:]:
        p = fma(p, at, coef)
    last = fma(p * at, _rows(zl, zt, xt), _rows(e * _LOG_Q1, -(zt * _F(0.5)), xt))
    log = e * _LOG_Q2 + (xl + (last[0] - zl * _F(0.5)))  # an exact product again
    c, s = last[1] + _F(1), last[2]
    first = (j & 2) == 0  # octants where the sine polynomial gives the sine
    sin, cos = np.where(first, s, c), np.where(first, c, s)
    sin.view(np.int32)[...] ^= (j & 4) << 29  # flip the sign bits
    cos.view(np.int32)[...] ^= (~(j - 2) & 4) << 29
    return np.sqrt(_F(-2) * log), sin, cos


def box_muller_16(d: np.ndarray, mean: float = 0.0, std: float = 1.0) -> None:
    """Turn uniforms into normals in place on float32 blocks of 16 (``d`` has shape (k, 16)):
    u1 = 1 - d[:, :8], u2 = d[:, 8:]; d[:, :8] = r cos(2 pi u2), d[:, 8:] = r sin(2 pi u2)
    with r = sqrt(-2 log u1), then fma(d, std, mean) as float32."""
    mean, std = _F(mean), _F(std)
    for i in range(0, d.shape[0], _CHUNK):
        block = d[i:i + _CHUNK]
        fma = _Deferred()
        radius, sin, cos = _block(block, fma)
        if fma.rounded_twice():
            radius, sin, cos = _block(block, _fma)
        block[:, :8] = radius * cos
        block[:, 8:] = radius * sin
        if std != 1 or mean != 0:
            block[...] = _fma(block, std, mean)


def mul_add(a, b, c, dtype) -> np.ndarray:
    """``a * b + c`` in ``dtype`` (float32 or float64) as PyTorch's compiled kernels form it:
    one fused multiply-add where its CPU capability compiles them (AVX2, AVX-512), a
    rounded product then a rounded sum on DEFAULT (Note [CPU capability]).

    Example:
        >>> import numpy as np
        >>> from retrograd._random.avx_math import mul_add
        >>> float(mul_add(np.float32(0.5), 3.0, 1.0, np.float32))
        2.5
    """
    dt = np.dtype(dtype)
    if cpu_capability() != "DEFAULT":
        return (fma64 if dt == np.float64 else fma32)(a, b, c)
    a, b, c = (np.asarray(v, dt) for v in (a, b, c))
    return a * b + c
