"""The fused activation kernels of the elementwise records: sigmoid, relu and the backward
ops PyTorch's derivative table calls (tanh_backward, sigmoid_backward, threshold_backward),
each one output buffer updated in place and, on large arrays, run block by block.

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.activations import relu_kernel
    >>> relu_kernel(np.array([-1.0, -0.0, 2.0]))
    array([ 0., -0.,  2.])
"""

from __future__ import annotations

import numpy as np

from .. import buffers as _buffers
from ..dispatch import scalar_array

# Note [Kernel passes]
# On large arrays a kernel costs its passes over memory plus, for every fresh buffer, the
# page faults that map it (a 4 MB boolean mask is ~1000 faults: more than the arithmetic).
# So a kernel allocates its output once, from the buffer pool (Note [Buffer pool] in
# buffers.py), and updates it in place (ufunc ``out=``), makes no boolean temporaries,
# and writes only into arrays it allocated itself: its inputs may be saved for backward
# or held by the user.
#
# Note [Blocked kernels]
# A fused kernel makes two to four passes. On arrays larger than the cache each pass goes
# to memory; run block by block (256 KiB of each operand, which stays in the L2 cache),
# with its temporaries in block-sized scratch arrays, only the first read and the last
# write of each element go to memory. Every element goes through the same ufuncs in the
# same order as unblocked, so the results are bit-identical. The output may be the
# gradient operand itself (Note [Gradient donation] in buffers.py): each block reads its
# gradient elements before it writes them. Small, broadcast or non-contiguous operands
# take the unblocked path.
_BLOCK_BYTES = 1 << 18
_BLOCKED_MIN = 4 * _BLOCK_BYTES  # smaller arrays: one call per pass costs less


def _blockable(*arrays) -> bool:
    """All of ``arrays`` C-contiguous and of one shape and dtype."""
    a = arrays[0]
    for x in arrays:
        if x.shape != a.shape or x.dtype != a.dtype or not x.flags.c_contiguous:
            return False
    return True


def _blocked(kernel, out, ins, scratch=()):
    """Run ``kernel(out_block, *in_blocks, *scratch_blocks)`` block by block (Note
    [Blocked kernels]); ``scratch`` lists the dtypes of block-sized temporaries."""
    o = out.reshape(-1)
    xs = [x.reshape(-1) for x in ins]
    step = _BLOCK_BYTES // o.itemsize
    tmp = [np.empty(step, dt) for dt in scratch]
    for i in range(0, o.size, step):
        j = i + step
        ob = o[i:j]
        kernel(ob, *[x[i:j] for x in xs], *[t[:ob.size] for t in tmp])
    return out


def _tanh_bwd_block(o, g, y, t):
    np.multiply(y, y, out=t)
    np.subtract(1, t, out=t)
    np.multiply(t, g, out=o)


def tanh_backward_kernel(g, y):
    if g.nbytes >= _BLOCKED_MIN and _blockable(g, y):
        out = _buffers.result_for(g, None, g.shape, g.dtype)
        return _blocked(_tanh_bwd_block, out, (g, y), (g.dtype,))
    t = np.multiply(y, y)  # one temporary, updated in place: g * (1 - y*y)
    if t.__class__ is not np.ndarray:  # NumPy gives a scalar for 0-d inputs
        t = np.asarray(t)
    np.subtract(_one(t.dtype), t, out=t)
    if t.shape == g.shape or t.shape == np.broadcast_shapes(t.shape, g.shape):
        t *= g
        return t
    return g * t  # g broadcasts y up (a batched gradient, Note [Batched rules])


def _sigmoid_bwd_block(o, g, y, t):
    np.subtract(1, y, out=t)
    np.multiply(g, t, out=o)
    o *= y


def sigmoid_backward_kernel(g, y):
    if g.nbytes >= _BLOCKED_MIN and _blockable(g, y):
        out = _buffers.result_for(g, None, g.shape, g.dtype)
        return _blocked(_sigmoid_bwd_block, out, (g, y), (g.dtype,))
    t = np.asarray(np.subtract(1, y))  # g * (1 - y) * y, in PyTorch's order
    if t.shape != g.shape and t.shape != np.broadcast_shapes(t.shape, g.shape):
        return g * t * y  # g broadcasts y up (a batched gradient, Note [Batched rules])
    np.multiply(g, t, out=t)
    t *= y
    return t


def _sigmoid_block(t, a):
    np.negative(a, out=t)
    np.exp(t, out=t)
    t += 1
    np.divide(1, t, out=t)  # np.reciprocal's float loop is ~2x slower than divide


def sigmoid_kernel(a):
    # PyTorch's formula, 1 / (1 + exp(-a)), in one buffer updated in place (Note [Kernel
    # passes]). It is stable: for a < -88.7 (float32) exp(-a) overflows to inf and the
    # result is 0, as in PyTorch; for large a, exp(-a) underflows and the result is 1.
    if a.nbytes >= _BLOCKED_MIN and _blockable(a):
        with np.errstate(over="ignore"):
            return _blocked(_sigmoid_block, _buffers.empty(a.shape, a.dtype), (a,))
    t = np.negative(a, out=np.empty_like(a))  # out=: a 0-d input stays an array
    with np.errstate(over="ignore"):
        np.exp(t, out=t)
    t += 1
    return np.divide(1, t, out=t)


def _threshold_bwd_block(o, g, y, mask, bits):
    # o = +0.0 where y <= 0 else g, as bits: g's bits AND a mask of all ones or all zeros
    np.less_equal(y, 0, out=mask)
    np.subtract(mask.view(np.int8), 1, out=bits, casting="unsafe")  # False -> -1: all set
    np.bitwise_and(g.view(bits.dtype), bits, out=o.view(bits.dtype))


def _zero(dt):
    """A read-only 0-d zero of NumPy dtype ``dt`` (a Python 0 costs a conversion in every
    ufunc call)."""
    return scalar_array(0, dt)


def _one(dt):
    return scalar_array(1, dt)


def threshold_backward_kernel(g, y):
    # 0 where y <= 0, else g: PyTorch's threshold_backward, so a nan y passes g on (Note
    # [Masked gradients]). Beyond small sizes, as bits: g's bits AND a mask of all ones or
    # all zeros (exactly np.where's result, NaN payloads and signed zeros included, and
    # ~10x faster than np.where on a random mask), block by block for large contiguous
    # operands (Note [Kernel passes]: no temporaries the size of g).
    if g.shape != y.shape or g.dtype.kind != "f" or g.size <= 8192 or g.itemsize not in (4, 8):
        z = _zero(g.dtype)
        return np.where(y <= z, z, g)
    out = _buffers.result_for(g, None, g.shape, g.dtype)
    bits = np.int32 if g.itemsize == 4 else np.int64
    if g.nbytes >= _BLOCKED_MIN and _blockable(g, y):
        return _blocked(_threshold_bwd_block, out, (g, y), (np.bool_, bits))
    _threshold_bwd_block(out, g, y, np.empty(g.shape, np.bool_), np.empty(g.shape, bits))
    return out


def _relu_block(o, a, zeros):
    # zeros first: for -0.0 the SIMD max returns its second operand, and PyTorch's relu
    # keeps -0.0 (max(x, 0) returns x unless x < 0). A zeros array: ~4x faster than a 0.
    np.maximum(zeros[:a.size], a, out=o)


def relu_kernel(a):
    if a.nbytes >= _BLOCKED_MIN and a.dtype.kind == "f" and _blockable(a):
        z = _ZEROS.get(a.dtype)
        if z is None or z.size * a.itemsize < _BLOCK_BYTES:
            z = _ZEROS[a.dtype] = np.zeros(_BLOCK_BYTES // a.itemsize, a.dtype)
            z.flags.writeable = False
        out = _buffers.empty(a.shape, a.dtype)
        return _blocked(lambda o, x: _relu_block(o, x, z), out, (a,))
    return np.maximum(_zero(a.dtype), a)  # zeros first: -0.0 stays -0.0 (as above)


_ZEROS: dict = {}  # dtype -> a read-only block of zeros for relu_kernel
