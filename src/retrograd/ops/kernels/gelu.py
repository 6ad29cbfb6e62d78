"""GELU's float32 kernels as PyTorch's CPU build computes them: oneDNN's JIT formulas,
reproduced operation for operation (Note [GELU as oneDNN computes it]).

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.gelu import gelu_minimax_kernel
    >>> gelu_minimax_kernel(np.array([-1.0, 0.0, 1.0], np.float32))
    array([-0.15865526,  0.        ,  0.8413447 ], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .. import buffers as _buffers

# Note [GELU as oneDNN computes it]
# PyTorch sends a contiguous float32 gelu (approximate='none') of two or more elements,
# and its gelu_backward, to oneDNN (bfloat16/float16 where oneDNN takes them, Note [CPU
# capability]), whose JIT kernels (src/cpu/x64/injectors/jit_uni_eltwise_injector.cpp)
# compute in float32 with fused multiply-adds:
#  * forward on AVX-512 (gelu_erf_minimax_approx_compute_vector_fwd): erf(x/sqrt(2)) as
#    one of 24 degree-5 minimax polynomials in |x|, picked by the bits of |x| (the
#    exponent and two mantissa bits), 1.0 beyond 5.54 (``_RBOUND``); then
#    0.5 * x * (1 + sign(x) * erf);
#  * backward (gelu_erf_compute_vector_bwd, every ISA): Abramowitz and Stegun's 7.1.26,
#    erf(r) = 1 - t * P(t) * exp(-r*r) with t = 1 / (1 + p|r|), and oneDNN's own exp
#    (a degree-5 polynomial times 2**n); dgelu = 0.5 + r/sqrt(pi) * exp(-r*r) + 0.5 erf.
# Here each step is the same float32 operation in the same order. A fused multiply-add
# a*b + c of float32 numbers is computed in float64 (the product is exact there) and
# rounded to float32, which is the fused result except when the float64 sum lands on a
# float32 tie (about one in 2**29). Measured against torch 2.13 on an AVX-512 machine
# (Sapphire Rapids): bit for bit equal, forward and backward, on 3.1 million inputs
# (normal and uniform draws, random bit patterns, zeros, infinities, nans);
# tests/nn/test_fast_kernels.py checks 200,000 of them on the machine it runs on. The
# cost: each fused multiply-add is four NumPy passes (multiply and add in float64, round
# to float32 and back), about 40 passes and 6 table lookups forward, 70 passes backward,
# where the float64 erf they replace took ~35 passes with masked gathers, in both
# directions; still about 20x PyTorch's time (docs/performance.md). The kernels run block
# by block (Note [Blocked kernels] in activations.py), in blocks of 16384 elements whose
# float64 temporaries stay in the L2 cache. oneDNN's AVX2 and SSE4.1 forward (Abramowitz
# and Stegun's) is not reproduced: there the minimax kernel runs (under
# ONEDNN_MAX_CPU_ISA=AVX2, at most 1.5e-6 from torch's values on 2 million inputs, 56%
# bit-equal; the backward, the same kernel on every ISA, stays bit for bit) and the
# special values are set as that ISA gives them (records/nn.py).
_STEP = 16384
_F32 = np.float32
_F64 = np.float64


def _bits(h: int) -> np.float32:
    return np.array([h], np.uint32).view(_F32)[0]


# the coefficients by degree (0..5) and interval (0..23): oneDNN's gelu_erf_minimax_pol
# table (index 24, which maps a nan to itself, is not needed: a nan stays nan at 23)
_POL = (
    (0xa6f2cb94, 0x32827792, 0x3381cc0c, 0x34523d4a, 0x351ac44d, 0x35f36d88, 0x36ee8229,
     0x37b8a3bb, 0x3867a213, 0x3940033b, 0x3a2a5a1d, 0x3ae35863, 0x3b7828f2, 0x3c08b14b,
     0x3c515ed3, 0xbb503236, 0xbd8d8e5e, 0xbe8abcd9, 0xbf0c19a2, 0xbeccb328, 0x3e176ced,
     0x3f470d99, 0x3f7abb28, 0x3f800000),
    (0x3f4c422a, 0x3f4c421f, 0x3f4c4207, 0x3f4c41cb, 0x3f4c413b, 0x3f4c3fad, 0x3f4c3a2f,
     0x3f4c2d40, 0x3f4c146a, 0x3f4bc341, 0x3f4ad08c, 0x3f48f8cf, 0x3f45fac7, 0x3f404e07,
     0x3f3b980f, 0x3f48dff3, 0x3f78b21b, 0x3fbb0704, 0x40019c32, 0x3fe536d6, 0x3f81331e,
     0x3e6c8684, 0x3c98f936, 0x00000000),
    (0xb62173f4, 0x3735e4cf, 0x37f2ff89, 0x388c23be, 0x3917535c, 0x39ab2ab0, 0x3a60fadb,
     0x3af9b960, 0x3b6e5491, 0x3c0a4ec5, 0x3ca5aa8c, 0x3d2138d9, 0x3d8737d4, 0x3ddfb660,
     0x3e0f27ab, 0x3d94004b, 0xbe0efdeb, 0xbf1d96c3, 0xbf89db58, 0xbf6d9897, 0xbef69fb8,
     0xbdc4f8a8, 0xbbde6422, 0x00000000),
    (0xbe081a19, 0xbe084570, 0xbe08639b, 0xbe089837, 0xbe08f409, 0xbe09ab95, 0xbe0b66d0,
     0xbe0e400a, 0xbe124df8, 0xbe1bde02, 0xbe2f19c9, 0xbe4931bf, 0xbe685fbc, 0xbe89c95f,
     0xbe96cbca, 0xbe8044aa, 0xbe0550f2, 0x3dcfd6a1, 0x3e94c826, 0x3e79345f, 0x3decec91,
     0x3ca46568, 0x3aa1e00a, 0x00000000),
    (0xba3d61db, 0x39f097a3, 0x3a5845dc, 0x3ab1fa35, 0x3b0cefb8, 0x3b653ab6, 0x3bcae527,
     0x3c221712, 0x3c6c5840, 0x3cc0a703, 0x3d1dcc19, 0x3d63656d, 0x3d955907, 0x3dbf9910,
     0x3dd53f69, 0x3db7dcef, 0x3d639ebe, 0xba6ede48, 0xbd22be69, 0xbd041cf1, 0xbc64f5ab,
     0xbb097a32, 0xb8ebf380, 0x00000000),
    (0x3cb7d80c, 0x3c9b6050, 0x3c978d11, 0x3c92e850, 0x3c8d058b, 0x3c848454, 0x3c6cd623,
     0x3c4c824b, 0x3c2a7935, 0x3be0b390, 0x3b0651ac, 0xbb232f53, 0xbbd42fa0, 0xbc2c5366,
     0xbc492c9e, 0xbc2a7aa6, 0xbbd55d04, 0xba823a76, 0x3b102aa8, 0x3ae25a7e, 0x3a31f792,
     0x38b84375, 0x3689bb5a, 0x00000000),
)
_TAB = tuple(np.array(row, np.uint32).view(_F32).astype(_F64) for row in _POL)
_IDX_BIAS = np.int32(-0x3de00001)  # 0xc21fffff as int32
_RBOUND = np.int32(0x40b15cee)  # bits of 5.54: beyond it erf is 1
_ABS = np.int32(0x7fffffff)
_SIGN = np.int32(-0x80000000)
_ONE = _F32(1.0)
_HALF = _F32(0.5)
_ONE64 = _F64(1.0)

# oneDNN's Abramowitz and Stegun constants, and its exp's
_SQRT_HALF = _bits(0x3f3504f3)
_INV_SQRT_PI = _bits(0x3f106eba)
_AS_P = _F64(_bits(0x3ea7ba05))
_AS = tuple(_F64(_bits(h)) for h in (0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3,
                                     0x3f87dc22))
_EXP_LOG2E = _bits(0x3fb8aa3b)
_EXP_MINUS_LN2 = _F64(-_bits(0x3f317218))
_EXP_LN_MIN = _bits(0xc2aeac50)
_EXP_P = tuple(_F64(_bits(h)) for h in (0x3f7ffffb, 0x3efffee3, 0x3e2aad40, 0x3d2b9d0d,
                                        0x3c07cfce))
_EXP_BIAS = np.int32(126)  # 2**(n-1) as bits: (n - 1 + 127) << 23


def _blocks(kernel, out, ins, scratch):
    """``kernel(out_block, *in_blocks, *scratch_blocks)`` over blocks of ``_STEP``
    elements of C-contiguous arrays of one shape (Note [Blocked kernels])."""
    o = out.reshape(-1)
    xs = [x.reshape(-1) for x in ins]
    n = min(_STEP, o.size)
    tmp = [np.empty(n, dt) for dt in scratch]
    with np.errstate(all="ignore"):
        for i in range(0, o.size, _STEP):
            j = i + _STEP
            ob = o[i:j]
            m = ob.size
            kernel(ob, *[x[i:j] for x in xs], *[t[:m] for t in tmp])
    return out


def _round32(d, f):
    """Round the float64 ``d`` to float32 in place, through the float32 scratch ``f``."""
    np.copyto(f, d, casting="same_kind")
    np.copyto(d, f)


def _horner(acc, t, coefs, f):
    """acc = fma(...fma(fma(acc, t, c0), t, c1)..., t, ck) in float32 (Note [GELU as
    oneDNN computes it]); ``acc``, ``t`` float64 holding float32 values, ``f`` a float32
    scratch; the result is left in ``acc`` and in ``f``."""
    for c in coefs:
        np.multiply(acc, t, out=acc)
        np.add(acc, c, out=acc)
        _round32(acc, f)


def _minimax_block(o, x, bits, idx32, idx, gt, p, xp, acc, c):
    np.bitwise_and(x.view(np.int32), _ABS, out=bits)  # |x| as bits
    np.add(bits, _IDX_BIAS, out=idx32)  # the interval: (bits - 0x3de00001) >> 21 in [1, 24],
    np.right_shift(idx32, 21, out=idx32)  # and 23 beyond _RBOUND (a nan too: its
    np.maximum(idx32, 1, out=idx32)  # polynomial at 24, x itself, or at 23 is nan alike)
    np.minimum(idx32, 22, out=idx32)
    np.greater(bits, _RBOUND, out=gt)
    np.add(idx32, gt, out=idx32)
    np.copyto(idx, idx32)
    np.copyto(xp, bits.view(_F32))
    _TAB[5].take(idx, out=acc, mode="wrap")
    for d in (4, 3, 2, 1, 0):
        np.multiply(acc, xp, out=acc)
        np.add(acc, _TAB[d].take(idx, out=c, mode="wrap"), out=acc)
        np.copyto(p, acc, casting="same_kind")
        if d:
            np.copyto(acc, p)
    pb = p.view(np.int32)  # erf's sign is x's (a bit flip, as oneDNN's xor)
    np.bitwise_and(x.view(np.int32), _SIGN, out=bits)
    np.bitwise_xor(pb, bits, out=pb)
    np.add(p, _ONE, out=p)
    np.multiply(x, p, out=o)
    np.multiply(o, _HALF, out=o)


def gelu_minimax_kernel(x: np.ndarray) -> np.ndarray:
    """oneDNN's AVX-512 gelu (erf form) of a float32 array (Note [GELU as oneDNN computes
    it]); a new C-contiguous array."""
    x = np.ascontiguousarray(x)
    out = _buffers.empty(x.shape, _F32)
    if x.size == 0:
        return out
    return _blocks(_minimax_block, out, (x,),
                   (np.int32, np.int32, np.intp, np.bool_, _F32, _F64, _F64, _F64))


def _exp_neg_square(r, q, a, n, d, e):
    """q = oneDNN's exp(-(r*r)) (float32), as its exp_compute_vector_fwd; ``a`` float32,
    ``n`` int32, ``d``, ``e`` float64 scratch."""
    np.multiply(r, r, out=q)
    np.negative(q, out=q)
    np.fmax(q, _EXP_LN_MIN, out=q)  # below log(FLT_MIN) the result is 0 (via 2**(n-1)
    np.multiply(q, _EXP_LOG2E, out=a)  # = 0 below); a nan argument stays the -(nan)
    np.add(a, _HALF, out=a)  # that oneDNN's min/max clamps to a finite number: gelu's
    np.floor(a, out=a)  # result is nan from r either way
    np.copyto(d, a)  # x - n * ln2, fused
    np.multiply(d, _EXP_MINUS_LN2, out=d)
    np.copyto(e, q)
    np.add(d, e, out=d)
    _round32(d, q)  # d = r (float64 of a float32)
    np.multiply(d, _EXP_P[4], out=e)
    np.add(e, _EXP_P[3], out=e)
    _round32(e, q)
    _horner(e, d, (_EXP_P[2], _EXP_P[1], _EXP_P[0], _ONE64), q)
    np.copyto(n, a, casting="unsafe")  # 2**(n-1) by its bits, then * 2
    np.add(n, _EXP_BIAS, out=n)
    np.left_shift(n, 23, out=n)
    np.multiply(q, n.view(_F32), out=q)
    np.multiply(q, _F32(2.0), out=q)


def _as_backward_block(o, g, s, r, q, a, b, n, d, e, w):
    np.multiply(s, _SQRT_HALF, out=r)  # r = s / sqrt(2)
    _exp_neg_square(r, q, a, n, d, e)  # q = exp(-r*r)
    np.multiply(r, _INV_SQRT_PI, out=a)  # a = r / sqrt(pi) * q
    np.multiply(a, q, out=a)
    np.abs(r, out=b)  # t = 1 / fma(p, |r|, 1)
    np.copyto(d, b)
    np.multiply(d, _AS_P, out=d)
    np.add(d, _ONE64, out=d)
    np.copyto(b, d, casting="same_kind")
    np.divide(_ONE, b, out=b)
    np.copyto(w, b)
    np.multiply(q, b, out=q)  # q * t (oneDNN's (-q) * t, negated below)
    np.multiply(w, _AS[4], out=e)
    np.add(e, _AS[3], out=e)
    _round32(e, b)
    _horner(e, w, (_AS[2], _AS[1], _AS[0]), b)
    np.copyto(d, q)  # erf = fma(-(q t), P(t), 1), with r's sign
    np.multiply(d, e, out=d)
    np.subtract(_ONE64, d, out=d)
    np.copyto(q, d, casting="same_kind")
    np.bitwise_and(r.view(np.int32), _SIGN, out=n)
    np.bitwise_xor(q.view(np.int32), n, out=q.view(np.int32))
    np.add(a, _HALF, out=a)  # fma(erf, 0.5, a + 0.5): erf * 0.5 is exact
    np.multiply(q, _HALF, out=q)
    np.add(q, a, out=q)
    np.multiply(g, q, out=o)


def gelu_backward_onednn_kernel(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """oneDNN's gelu_backward (erf form) of float32 arrays of one shape: ``g`` times
    gelu'(x) (Note [GELU as oneDNN computes it])."""
    g = np.ascontiguousarray(g)
    x = np.ascontiguousarray(x)
    out = _buffers.result_for(g, None, x.shape, _F32)
    if x.size == 0:
        return out
    return _blocks(_as_backward_block, out, (g, x),
                   (_F32, _F32, _F32, _F32, np.int32, _F64, _F64, _F64))


# GELU's tanh form, as ATen's GeluKernelImpl/GeluBackwardKernelImpl write it (kBeta =
# sqrt(2/pi), kKappa = 0.044715), in the input's dtype with one output buffer and one
# temporary updated in place
_KAPPA = 0.044715
_M_SQRT2, _M_2_SQRTPI = 1.41421356237309504880, 1.12837916709551257390


def _beta(dt):
    """ATen's kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, computed in the compute dtype ``dt``."""
    return dt(dt(_M_SQRT2) * dt(_M_2_SQRTPI)) * dt(0.5)


def gelu_tanh_kernel(x: np.ndarray) -> np.ndarray:
    """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))) of a float array.

    Example:
        >>> import numpy as np
        >>> gelu_tanh_kernel(np.array([-1.0, 0.0, 1.0], np.float32))
        array([-0.158808,  0.      ,  0.841192], dtype=float32)
    """
    dt = x.dtype.type
    t = np.multiply(x, x)
    t *= x
    t *= dt(_KAPPA)
    t += x
    t *= _beta(dt)
    np.tanh(t, out=t)
    t += dt(1.0)
    out = np.multiply(x, dt(0.5))
    out *= t
    return out


def gelu_tanh_backward_kernel(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """g * d/dx gelu_tanh(x), ATen's operation order."""
    dt = x.dtype.type
    sq = np.multiply(x, x)
    t = np.multiply(sq, x)  # tanh(inner)
    t *= dt(_KAPPA)
    t += x
    t *= _beta(dt)
    np.tanh(t, out=t)
    sq *= dt(3.0 * _KAPPA)  # inner derivative: kBeta * (1 + 3 kKappa x^2)
    sq += dt(1.0)
    sq *= _beta(dt)
    out = np.multiply(t, t)  # left * (1 - tanh^2) * inner', left = 0.5 x
    np.subtract(dt(1.0), out, out=out)
    out *= np.multiply(x, dt(0.5))
    out *= sq
    t += dt(1.0)  # + 0.5 * (1 + tanh)
    t *= dt(0.5)
    out += t
    out *= g
    return out
