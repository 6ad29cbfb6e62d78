"""The backward kernels of elu (celu, selu), hardtanh (relu6), hardswish and hardsigmoid,
with PyTorch's gradients at NaN inputs.

Note [NaN in the vector and scalar loops]
PyTorch's elu_backward, hardtanh_backward and hardswish_backward kernels
(aten/src/ATen/native/cpu/Activation.cpp) each have a vector lambda and a scalar one
that agree on every input but NaN, where the comparison that picks a branch is false in
both and the two lambdas put the branches the other way round:

* elu_backward: the vector loop blends on ``x > 0`` (false: the negative branch, whose
  ``exp(x)`` or ``x + alpha`` is nan), the scalar loop tests ``x <= 0`` (false: the
  positive branch, ``grad * scale``); the same with the saved result (``elu_``).
* hardtanh_backward: the vector loop keeps the gradient where ``min < x < max`` (false:
  0), the scalar loop zeroes it where ``x <= min || x >= max`` (false: the gradient).
* hardswish_backward: the vector loop blends on ``x >= 3`` and ``x <= -3`` (false: the
  middle branch, ``grad * (x / 3 + 0.5)``, nan), the scalar loop tests ``x <= -3`` and
  ``x < 3`` (false: the gradient).

leaky_relu_backward, hardsigmoid_backward, threshold_backward (relu, threshold),
softplus_backward, silu, mish and gelu give the same at NaN in both loops (measured).
Which elements the scalar loop gets is ``cpu_kernel_vec``'s split (Note [Signed zeros on
ties], kernels/minmax.py, whose ``elementwise`` and ``scalar_positions`` this module
uses): the last ``run % (2 * lanes)`` elements of each run (cut at the thread chunks
from 32,769 elements on), all of a run that is not contiguous in every operand. The
vector width is 32 bytes on every build but one: elu_backward and hardswish_backward are
also compiled for AVX-512, whose ``Vectorized<T>`` is 64 bytes (blocks of 32 float32,
16 float64, 64 float16/bfloat16 elements), while hardtanh_backward runs its AVX2 build
there (measured with torch 2.13 under ATEN_CPU_CAPABILITY=default, avx2 and avx512 for
float32, float64, float16 and bfloat16, 1 to 40,000 elements, contiguous, strided,
transposed and with an expanded gradient).

Cost: the common case, operands C-contiguous and of one shape, computes the vector
formula over everything (one formula, as before) and looks for NaN only among the scalar
loop's elements (``n % block`` of them up to 32,768 elements: a Python sum of a list of
fewer than 64 floats, cheaper than a NumPy call), rewriting them with the scalar formula
only when one is NaN; ``np.isnan(x).any()`` over the whole input would be a pass more.
Other layouts go through ``elementwise``. Measured with timeit's process-time clock on a
loaded machine, float32 without NaN, before -> after: the elu_backward kernel 5.0 ->
5.8 us at 100 elements, 8.9 -> 7.6 ms at 10**6; hardtanh_backward 2.5 -> 3.0 us and
3.9 -> 3.6 ms.

Example:
    >>> import numpy as np
    >>> x = np.full(20, np.nan, np.float32)
    >>> g = hardtanh_backward_kernel(np.ones(20, np.float32), x, -1.0, 1.0)
    >>> g.tolist()[14:]  # 16 in the vector loop, the last 4 in the scalar loop
    [0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..._core.cpu_capability import cpu_capability
from ..dispatch import scalar_array
from .minmax import GRAIN, VEC_BYTES, _is_float, elementwise, scalar_positions

# computed in float32, as PyTorch's reduced-float kernels
_LOW = frozenset((np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)))


def _avx512_bytes() -> int:
    """The vector width of a kernel PyTorch also builds for AVX-512."""
    return 64 if cpu_capability() == "AVX512" else VEC_BYTES


_BLOCKS: dict = {}  # (dtype, vector bytes) -> cpu_kernel_vec's block, None: not a float


def _block(dt: np.dtype, vec_bytes: int):
    key = (dt, vec_bytes)
    if key not in _BLOCKS:
        _BLOCKS[key] = 2 * vec_bytes // dt.itemsize if _is_float(dt) else None
    return _BLOCKS[key]


def vector_then_tail(vector, scalar, g: np.ndarray, x: np.ndarray, vec_bytes: int, *args):
    """``vector(g, x, *args)`` where PyTorch's vector loop runs and ``scalar(g, x, *args)``
    where its scalar loop does (Note [NaN in the vector and scalar loops]); the two may
    differ only where ``x`` is NaN."""
    dt = g.dtype
    block = _BLOCKS.get((dt, vec_bytes)) or _block(dt, vec_bytes)
    if block is None or g.shape != x.shape or x.dtype != dt or \
            not (g.flags.c_contiguous and x.flags.c_contiguous):
        return np.asarray(elementwise(
            lambda a, v: (vector if v else scalar)(a[0], a[1], *args), [g, x], dt, vec_bytes))
    n = g.size
    if n < block:
        return scalar(g, x, *args)
    out = vector(g, x, *args)
    if n <= GRAIN:
        r = n % block
        if r:
            xt = (x if x.ndim == 1 else x.reshape(-1))[n - r:]
            s = sum(xt.tolist())  # nan if one is (or inf - inf: recomputed the same); on
            if s != s:  # fewer than 64 elements, cheaper than any NumPy call
                gt = (g if g.ndim == 1 else g.reshape(-1))[n - r:]
                (out if out.ndim == 1 else out.reshape(-1))[n - r:] = scalar(gt, xt, *args)
        return out
    lin = scalar_positions(n, n, block)
    xt = x.reshape(-1)[lin]
    if len(lin) and np.isnan(xt).any():
        out.reshape(-1)[lin] = scalar(g.reshape(-1)[lin], xt, *args)
    return out


# ---------------------------------------------------------------- elu_backward
def _elu_neg(g, y, c):
    negcoef, negipt, is_result = c[0], c[2], c[3]
    if is_result:
        return g * negipt * (y + negcoef)
    return g * negipt * negcoef * np.exp(np.minimum(y, 0) * negipt)


def _elu_vector(g, y, c):  # blendv(negative, positive, y > 0)
    if g.dtype in _LOW:
        return _elu_vector(g.astype(np.float32), y.astype(np.float32), c).astype(g.dtype)
    return np.where(y > 0, g * c[1], _elu_neg(g, y, c))


def _elu_scalar(g, y, c):  # y <= 0 ? negative : positive
    if g.dtype in _LOW:
        return _elu_scalar(g.astype(np.float32), y.astype(np.float32), c).astype(g.dtype)
    return np.where(y <= 0, _elu_neg(g, y, c), g * c[1])


_ELU_COEFS: dict = {}


def _elu_coefs(p: tuple, dt: np.dtype) -> tuple:
    """(negcoef, poscoef, negiptcoef, is_result) in PyTorch's compute type, where
    ``negcoef = alpha * scale`` is a product of that type."""
    key = (p, dt)
    c = _ELU_COEFS.get(key)
    if c is None:
        if len(_ELU_COEFS) > 256:
            _ELU_COEFS.clear()
        alpha, scale, iscale, is_result = p
        ct = np.float32 if dt in _LOW else dt.type
        neg, pos, ipt = (np.asarray(v) for v in (ct(alpha) * ct(scale), ct(scale), ct(iscale)))
        for v in (neg, pos, ipt):  # 0-d arrays: NumPy is faster with these than scalars
            v.flags.writeable = False
        c = _ELU_COEFS[key] = (neg, pos, ipt, is_result)
    return c


def elu_backward_kernel(g: np.ndarray, y: np.ndarray, p: tuple) -> np.ndarray:
    """PyTorch's elu_backward(g, y, alpha, scale, input_scale, is_result), ``y`` the input
    or (``is_result``) the output; p = (alpha, scale, input_scale, is_result). As in
    PyTorch, ``negcoef = alpha * scale`` is a product in the compute type (float32 for
    float16 and bfloat16, whose gradients are computed in float32).

    Example:
        >>> import numpy as np
        >>> elu_backward_kernel(np.ones(2), np.array([-1.0, 2.0]), (1.0, 1.0, 1.0, False))
        array([0.36787944, 1.        ])
    """
    return vector_then_tail(_elu_vector, _elu_scalar, g, y, _avx512_bytes(),
                            _elu_coefs(p, g.dtype))


# ---------------------------------------------------------------- hardtanh_backward
def _hardtanh_vector(g, x, lo, hi, zero):  # (x > lo) & (x < hi) & g
    if x.dtype in _LOW:
        x = x.astype(np.float32)
    return np.where((x > lo) & (x < hi), g, zero)


def _hardtanh_scalar(g, x, lo, hi, zero):  # x <= lo || x >= hi ? 0 : g
    if x.dtype in _LOW:
        x = x.astype(np.float32)
    return np.where((x <= lo) | (x >= hi), zero, g)


def hardtanh_backward_kernel(g: np.ndarray, x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """PyTorch's hardtanh_backward: ``g`` where ``lo < x < hi``, else 0 (a NaN ``x``: see
    Note [NaN in the vector and scalar loops]); float16/bfloat16 inputs are compared with
    the bounds in float32, as PyTorch's kernel does.

    Example:
        >>> import numpy as np
        >>> hardtanh_backward_kernel(np.ones(3), np.array([-2.0, 0.5, 1.0]), -1.0, 1.0)
        array([0., 1., 0.])
    """
    key = (lo, hi, g.dtype, x.dtype)
    args = _HARDTANH_ARGS.get(key)
    if args is None:  # 0-d arrays: NumPy is faster with these than with floats
        if len(_HARDTANH_ARGS) > 256:
            _HARDTANH_ARGS.clear()
        ct = np.float32 if x.dtype in _LOW else x.dtype
        args = _HARDTANH_ARGS[key] = (scalar_array(lo, ct), scalar_array(hi, ct),
                                      scalar_array(0, g.dtype))
    return vector_then_tail(_hardtanh_vector, _hardtanh_scalar, g, x, VEC_BYTES, *args)


_HARDTANH_ARGS: dict = {}


# ---------------------------------------------------------------- hardswish, hardsigmoid
def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype in _LOW else a


def hardswish_kernel(x: np.ndarray) -> np.ndarray:
    """PyTorch's hardswish: ``x * min(max(x + 3, 0), 6) / 6`` (float32 for float16 and
    bfloat16); NaN gives NaN.

    Example:
        >>> import numpy as np
        >>> hardswish_kernel(np.array([-4.0, 1.0, 4.0]))
        array([-0.        ,  0.66666667,  4.        ])
    """
    xw = _wide(x)
    out = xw * np.clip(xw + 3, 0, 6)
    out /= 6
    return out.astype(x.dtype, copy=False)


def hardswish_backward_kernel(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's hardswish_backward: 0 up to -3, ``g * (x / 3 + 0.5)`` inside, ``g`` from 3
    on (a NaN ``x``: Note [NaN in the vector and scalar loops]; at exactly -3 and 3 both
    of torch 2.13's loops take the outer branches, measured)."""
    dt = g.dtype

    def middle(g, x):
        return g * (x / 3 + 0.5)

    def vector(g, x):  # blendv(blendv(middle, g, x >= 3), 0, x <= -3)
        gw, xw = _wide(g), _wide(x)
        r = np.where(x <= -3, 0, np.where(xw >= 3, gw, middle(gw, xw)))
        return r.astype(dt, copy=False)

    def scalar(g, x):  # x <= -3 ? 0 : x < 3 ? middle : g
        gw, xw = _wide(g), _wide(x)
        r = np.where(x <= -3, 0, np.where(xw < 3, middle(gw, xw), gw))
        return r.astype(dt, copy=False)

    return vector_then_tail(vector, scalar, g, x, _avx512_bytes())


def hardsigmoid_kernel(x: np.ndarray) -> np.ndarray:
    """PyTorch's hardsigmoid: ``min(max(x + 3, 0), 6) / 6`` (float32 for float16 and
    bfloat16).

    Example:
        >>> import numpy as np
        >>> hardsigmoid_kernel(np.array([-4.0, 0.0, 4.0]))
        array([0. , 0.5, 1. ])
    """
    xw = _wide(x)
    out = np.clip(xw + 3, 0, 6)
    out /= 6
    return out.astype(x.dtype, copy=False)


_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))  # PyTorch's ``scalar_t(1.0f / 6.0f)``


def hardsigmoid_backward_kernel(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's hardsigmoid_backward: ``g / 6`` (times float32's 1/6, float64 too) where
    ``-3 < x < 3``, else 0; 0 at NaN in both of its loops."""
    gw = _wide(g)
    r = np.where((x > -3) & (x < 3), gw * gw.dtype.type(_ONE_SIXTH), 0)
    return r.astype(g.dtype, copy=False)
