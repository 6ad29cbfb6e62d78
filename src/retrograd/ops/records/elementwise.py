"""The table of primitives: NumPy forward kernels and derivative rules in Tensor ops.

Note [One table]
Every differentiable primitive is one ``Op`` below. Its rules are written with
retrograd's own Tensor operations, never raw NumPy, so the engine can run them under
``no_grad`` for a plain backward and with grad mode on for ``create_graph=True``:
derivatives of any order come from the same rules. Rules never mention broadcasting:
the engine sums a gradient back to its input's shape (Note [Engine order]).
Composites (var, lerp, ...) live in the public functions (``ops/namespace.py`` lists their
modules) and have no entry here unless numerical stability or memory asks for one (each
says which).

Rule signature: ``rule(g, s, n)`` with ``g`` the output gradient, ``s`` the saved
values (in the order of ``save``), ``n`` the node (``n._p`` holds the op's
non-tensor arguments, ``n.input_shape(i)`` the shape of input i).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([0.5], requires_grad=True)
    >>> g, = torch.autograd.grad(x.sin(), x, create_graph=True)
    >>> g2, = torch.autograd.grad(g, x)
    >>> bool(torch.allclose(g2, -x.sin()))
    True
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..._core.dtype import bfloat16
from ..._core.grad_mode import STATE
from ..._core.layouts import cast_copy, layout_copy
from ..._tensor.tensor import Tensor, _make
from .. import buffers as _buffers
from ..batch_rules import dim_at, pointwise, reduction
from ..dispatch import apply, binary, scalar_array, view_apply
from ..jvp_rules import jvp_elementwise, jvp_linear, jvp_reduction
from ..kernels.pow import pow_kernel
from ..kernels.sum import reduced_count as _count
from ..kernels.sum import sum_kernel
from ..kernels.var import var_kernel
from ..op import _LOW, Op
from ..public import FP32
from .activations import *  # noqa: F403  (re-exported: the one table)
from .ctc import *  # noqa: F403  (re-exported: the one table)
from .distance import *  # noqa: F403  (re-exported: the one table)
from .helpers import (  # noqa: F401
    _bdims,
    _no_derivative,
    _no_forward_ad,
    _not_implemented,
    arrays_suffice,
    ones_like_of,
    rule_zeros,
    zeros_like_of,
)
from .linalg import *  # noqa: F403  (re-exported: the one table)
from .matmul import (  # noqa: F401  (re-exported: the one table)
    _F16,
    _F32,
    _LANE_BUDGET,
    _LOW_MM,
    _MM_RULES,
    _addmm_fwd,
    _addmm_jvp,
    _addmm_vjp,
    _matmul_fwd,
    _mm_rule_a,
    _mm_rule_b,
    addmm,
    addmm_layout,
    low_matmul_f32,
    mm_ops,
)
from .polynomials import *  # noqa: F403  (re-exported: the one table)
from .shape import (  # noqa: F401  (re-exported: the one table)
    _SCATTER_REDUCE_HINT,
    _adv_index_fwd,
    _as_strided_fwd,
    _back_to_input_shape,
    _cat,
    _cat_fwd,
    _cat_vjp,
    _diagonal_fwd,
    _expand_fwd,
    _gather_fwd,
    _gather_grid,
    _index_add_fwd,
    _index_fill_into,
    _index_fill_self_rule,
    _index_fill_tensor_jvp,
    _index_fill_value_rule,
    _index_fwd,
    _index_map_rule,
    _index_put_fwd,
    _index_put_vjp,
    _index_rule,
    _index_select_fwd,
    _is_basic,
    _multi_out_vjp,
    _new_dim_strides,
    _pad_fwd,
    _pad_rule,
    _pad_to,
    _repeat_rule,
    _roll_fwd,
    _scatter_fwd,
    _scatter_value_fwd,
    _scatter_value_rule,
    _scatter_vjp,
    _squeeze_fwd,
    _strided_view,
    _take_fwd,
    _unfold_fwd,
    _unsqueeze_fwd,
    _unsqueeze_strides,
    _value_at_index_rule,
    _view_op,
    alias,
    as_strided,
    cat,
    constant_pad,
    diagonal,
    expand,
    flip,
    gather,
    index,
    index_add,
    index_fill,
    index_fill_tensor,
    index_put,
    index_put_setitem,
    index_select,
    permute,
    repeat,
    reshape_alias,
    roll,
    scatter,
    scatter_add,
    scatter_reduce,
    scatter_value,
    scatter_value_reduce,
    select,
    slice_op,
    split,
    split_with_sizes,
    squeeze,
    squeeze_all,
    squeeze_dims,
    squeeze_inplace,
    stack,
    t_op,
    take_ops,
    transpose,
    tril,
    triu,
    unbind,
    unfold,
    unsafe_view,
    unsqueeze,
    view,
    whole_selection,
)

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def _zeros_rule(g, s, n):
    return zeros_like_of(g)


def _where(cond, x, y):
    """``torch.where(cond, x, y)`` inside a rule: a number operand takes the tensor
    operand's dtype, as a Python scalar does in PyTorch (no promotion)."""
    if x.__class__ is float:
        x = _make(np.asarray(x, dtype=y._data.dtype))
    elif y.__class__ is float:
        y = _make(np.asarray(y, dtype=x._data.dtype))
    dt = x._data.dtype
    if y._data.dtype is dt:
        return apply(where, (cond, x, y))
    return apply(where, (cond, x, y), np.promote_types(dt, y._data.dtype))


def _where0(cond, g):
    """g where cond, else 0 (a masked gradient that never turns inf*0 into nan)."""
    return _where(cond, g, 0.0)


# Note [Gradient donation] (buffers.py): the records given ``grad_once=_one_rule`` (or
# mul's ``_mul_once``) read their gradient at most once in every rule, so when one rule
# runs, a backward pass may let the op that reads the gradient write its result into it.
def _one_rule(node, needs) -> bool:
    """One of ``node``'s inputs gets a gradient: one rule runs."""
    flags = [e is not None for e in node._edges] if needs is None else needs
    return flags.count(True) == 1


def _mul_once(node, needs) -> bool:
    """One rule runs, or x * x of a plain saved tensor: _mul_vjp then computes g * x once."""
    s = node._saved
    return _one_rule(node, needs) or (
        s is not None and len(s) == 2 and s[0] is s[1] and s[0].__class__ is Tensor)


# ---------------------------------------------------------------------------------
# elementwise, one input.  "float" kind: integer inputs are computed in the default
# float dtype, as in PyTorch (torch.exp(int tensor) is float32).
def _u(name, fwd, rule=None, save=(), kind="float", node_name=None, jvp=None, batch_ok=False,
       grad_once=None):
    return Op(name, fwd, None if rule is None else (rule,), save, node_name=node_name, jvp=jvp,
              batch_ok=batch_ok, batch=pointwise, kind=kind, grad_once=grad_once)


neg = _u("neg", np.negative, lambda g, s, n: -g, kind=None, jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
abs = _u("abs", np.absolute, lambda g, s, n: g * s[0].sign(), (0,), kind=None,
         jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)


def _sign_fwd(a):
    # PyTorch's sign is (0 < a) - (a < 0): 0 for nan, where NumPy's sign gives nan
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind != "f":
        return np.sign(a)
    r = np.sign(a, out=np.empty(a.shape, a.dtype))  # an array also for 0-d input
    np.copyto(r, 0, where=np.isnan(r))
    return r


sign = _u("sign", _sign_fwd, _zeros_rule, kind=None, jvp=jvp_elementwise, batch_ok=True)
floor = _u("floor", np.floor, _zeros_rule, kind=None, jvp=jvp_elementwise, batch_ok=True)
ceil = _u("ceil", np.ceil, _zeros_rule, kind=None, jvp=jvp_elementwise, batch_ok=True)
round = _u("round", np.round, _zeros_rule, kind=None,
           jvp=jvp_elementwise, batch_ok=True)
trunc = _u("trunc", np.trunc, _zeros_rule, kind=None, jvp=jvp_elementwise, batch_ok=True)
exp = _u("exp", np.exp, lambda g, s, n: g * s[0], ("out",), jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
exp2 = _u("exp2", np.exp2, lambda g, s, n: g * s[0] * LN2, ("out",),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
expm1 = _u("expm1", np.expm1, lambda g, s, n: g * (s[0] + 1), ("out",),
           jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
log = _u("log", np.log, lambda g, s, n: g / s[0], (0,), jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
log2 = _u("log2", np.log2, lambda g, s, n: g / (s[0] * LN2), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
def _log10_fwd(a):
    # float32 through float64: NumPy's float32 log10 misses exact powers of ten
    return np.log10(a.astype(np.float64)).astype(a.dtype) if a.dtype == np.float32 else \
        np.log10(a)


log10 = _u("log10", _log10_fwd, lambda g, s, n: g / (s[0] * LN10), (0,),
           jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
log1p = _u("log1p", np.log1p, lambda g, s, n: g / (s[0] + 1), (0,), node_name="Log1PBackward0",
           jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
sqrt = _u("sqrt", np.sqrt, lambda g, s, n: g / (2 * s[0]), ("out",),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
rsqrt = _u("rsqrt", lambda a: np.reciprocal(np.sqrt(a)),
           lambda g, s, n: -0.5 * g * s[0].pow(3), ("out",), jvp=jvp_elementwise, batch_ok=True,
           grad_once=_one_rule)
reciprocal = _u("reciprocal", lambda a: np.reciprocal(a),
                lambda g, s, n: -g * (s[0] * s[0]), ("out",), jvp=jvp_elementwise, batch_ok=True,
                grad_once=_one_rule)
sin = _u("sin", np.sin, lambda g, s, n: g * s[0].cos(), (0,), jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
cos = _u("cos", np.cos, lambda g, s, n: g * -s[0].sin(), (0,), jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
tan = _u("tan", np.tan, lambda g, s, n: g * (1 + s[0] * s[0]), ("out",),
         jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
asin = _u("asin", np.arcsin, lambda g, s, n: g * (-s[0] * s[0] + 1).rsqrt(), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
acos = _u("acos", np.arccos, lambda g, s, n: g * -((-s[0] * s[0] + 1).rsqrt()), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
atan = _u("atan", np.arctan, lambda g, s, n: g / (s[0] * s[0] + 1), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
sinh = _u("sinh", np.sinh, lambda g, s, n: g * s[0].cosh(), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)
cosh = _u("cosh", np.cosh, lambda g, s, n: g * s[0].sinh(), (0,),
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)


# Note [Fused backward ops]
# PyTorch's derivative table calls fused kernels (tanh_backward, sigmoid_backward)
# rather than composing three ops; a backward step then costs one dispatch, not
# three. They are primitives like any other, with their own rules in Tensor ops,
# so double backward goes through them too.
#
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


def _tanh_bwd_fwd(g, y):
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


def _sigmoid_bwd_fwd(g, y):
    if g.nbytes >= _BLOCKED_MIN and _blockable(g, y):
        out = _buffers.result_for(g, None, g.shape, g.dtype)
        return _blocked(_sigmoid_bwd_block, out, (g, y), (g.dtype,))
    t = np.asarray(np.subtract(1, y))  # g * (1 - y) * y, in PyTorch's order
    if t.shape != g.shape and t.shape != np.broadcast_shapes(t.shape, g.shape):
        return g * t * y  # g broadcasts y up (a batched gradient, Note [Batched rules])
    np.multiply(g, t, out=t)
    t *= y
    return t


tanh_backward = Op("tanh_backward", _tanh_bwd_fwd,
                   (lambda gg, s, n: binary(tanh_backward, gg, s[1]),
                    lambda gg, s, n: -2 * gg * s[0] * s[1]), (0, 1), save_if=((1,), (0, 1)),
                   jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
sigmoid_backward = Op("sigmoid_backward", _sigmoid_bwd_fwd,
                      (lambda gg, s, n: binary(sigmoid_backward, gg, s[1]),
                       lambda gg, s, n: gg * s[0] * (1 - 2 * s[1])), (0, 1),
                      save_if=((1,), (0, 1)), jvp=jvp_elementwise, batch_ok=True, batch=pointwise)


def _fused(op):
    def rule(g, s, n):
        return binary(op, g, s[0])
    return rule


tanh = _u("tanh", np.tanh, _fused(tanh_backward), ("out",), jvp=jvp_elementwise, batch_ok=True,
          grad_once=_one_rule)


def _sigmoid_block(t, a):
    np.negative(a, out=t)
    np.exp(t, out=t)
    t += 1
    np.divide(1, t, out=t)  # np.reciprocal's float loop is ~2x slower than divide


def _sigmoid_fwd(a):
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


def _threshold_bwd_fwd(g, y):
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


def _relu_fwd(a):
    if a.nbytes >= _BLOCKED_MIN and a.dtype.kind == "f" and _blockable(a):
        z = _ZEROS.get(a.dtype)
        if z is None or z.size * a.itemsize < _BLOCK_BYTES:
            z = _ZEROS[a.dtype] = np.zeros(_BLOCK_BYTES // a.itemsize, a.dtype)
            z.flags.writeable = False
        out = _buffers.empty(a.shape, a.dtype)
        return _blocked(lambda o, x: _relu_block(o, x, z), out, (a,))
    return np.maximum(_zero(a.dtype), a)  # zeros first: -0.0 stays -0.0 (as above)


_ZEROS: dict = {}  # dtype -> a read-only block of zeros for _relu_fwd


sigmoid = _u("sigmoid", _sigmoid_fwd, _fused(sigmoid_backward), ("out",),
             jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)


# Note [Fused backward ops]: relu's rule is PyTorch's threshold_backward(g, out), a
# primitive whose rule w.r.t. ``out`` is zero: the second derivative of relu is then
# a tensor of zeros, as in PyTorch, not "does not require grad".
threshold_backward = Op("threshold_backward", _threshold_bwd_fwd,
                        (lambda gg, s, n: binary(threshold_backward, gg, s[1]),
                         lambda gg, s, n: zeros_like_of(gg)), (0, 1), save_if=((1,), (0,)),
                        jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
relu = _u("relu", _relu_fwd, _fused(threshold_backward), ("out",), kind=None,
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# Note [Vectorized erf]
# erf is computed in float64 with NumPy array operations (no per-element Python call),
# accurate to under 1 ulp (max 0.97 ulp against a 60-digit mpmath reference over
# 50,000 points in [0, 6.5]). Coefficients are Chebyshev interpolants computed in
# 60-digit arithmetic (mpmath) and rounded to float64:
#  * |x| < 1: erf(x) = x + x * R(x*x), R a degree-15 polynomial in x*x (the
#    x + x*R form keeps the final rounding close to correct);
#  * 1 <= |x| < 6: erf(x) = 1 - exp(-x*x) * Q(t), Q = erfc(x) exp(x*x) (smooth and
#    slowly varying) as a polynomial in t in [-1, 1] on each of five intervals;
#  * |x| >= 6: erf(x) = +-1 (erfc(6) < 2**-55); NaN stays NaN.
# Only the intervals that hold elements are evaluated.
_ERF_SMALL = (0.1283791670955126, -0.37612638903183754, 0.11283791670955126,
              -0.026866170645131252, 0.005223977625442175, -0.0008548327023449497,
              0.00012055332981694495, -1.4925650353787866e-05, 1.6462114205798046e-06,
              -1.6365840648222765e-07, 1.4807117719731329e-08, -1.2289529419960295e-09,
              9.412558594992829e-11, -6.639294901316118e-12, 4.117309460970657e-13,
              -1.746609279318069e-14)
_ERF_MID = (
    (1.0, 1.5, (
        0.3678229164523611, -0.052205468991152464, 0.006674723218537425, -0.0007846605374360558,
        8.598189160491081e-05, -8.868776985287543e-06, 8.674584724681751e-07,
        -8.09193682669026e-08, 7.232212986536168e-09, -6.2164310187399e-10, 5.154996825451268e-11,
        -4.135150662990467e-12, 3.216067621644534e-13, -2.4299240942461725e-14,
        1.7863487198253203e-15, -1.2802473421178134e-16, 9.143010410605215e-18,
        -6.244296497146991e-19,)),
    (1.5, 2.0, (
        0.2849722347374364, -0.0327440863786213, 0.0034852268804429543, -0.0003478124256466926,
        3.282937190362831e-05, -2.9501705580323608e-06, 2.537120416125359e-07,
        -2.0967611906153502e-08, 1.6709180979669551e-09, -1.2876646139527718e-10,
        9.619410833370215e-12, -6.980748332508779e-13, 4.930093872484171e-14,
        -3.3939297448167925e-15, 2.2803422751731324e-16, -1.4976937369568214e-17,
        9.795970361478663e-19, -6.162094888887938e-20,)),
    (2.0, 3.0, (
        0.2108063640611436, -0.037173673394897334, 0.006234499271664226, -0.001000196172762701,
        0.0001541898009813415, -2.2924716785600132e-05, 3.297184754431634e-06,
        -4.5991378666819117e-07, 6.235098888731702e-08, -8.231046817245061e-09,
        1.059787540163483e-09, -1.3327762030708664e-10, 1.6391982667860516e-11,
        -1.973859529748696e-12, 2.326172177382197e-13, -2.6933879017350214e-14,
        3.2400458281168157e-15, -3.6122375599135015e-16,)),
    (3.0, 4.0, (
        0.1552936556088943, -0.020661788916626248, 0.002665283298127644, -0.00033413430495545665,
        4.079289542992325e-05, -4.858403694593252e-06, 5.653391307093344e-07,
        -6.435927001017616e-08, 7.176514796968728e-09, -7.846480175848879e-10,
        8.419945217596862e-11, -8.875298339270431e-12, 9.190688044843335e-13,
        -9.36928175164091e-14, 9.778066768083697e-15, -9.654286793495858e-16,)),
    (4.0, 6.0, (
        0.11070463773306863, -0.02133278976482631, 0.0040406889089373834, -0.0007528968134273368,
        0.00013810242089385338, -2.4953883569275264e-05, 4.444334401233983e-06,
        -7.806319572345831e-07, 1.352934488442005e-07, -2.3147456116675594e-08,
        3.911671423997266e-09, -6.530260734491417e-10, 1.0723886840405964e-10,
        -1.7498984106891532e-11, 3.139638329414755e-12, -5.001865871242102e-13,)),
)


def _horner(c, t):
    acc = t * c[-1] + c[-2]
    for k in range(len(c) - 3, -1, -1):
        acc *= t
        acc += c[k]
    return acc


def _erf_f64(x):
    ax = np.abs(x)
    out = np.ones_like(ax)
    m = ax < 1.0
    if m.all():
        return x + x * _horner(_ERF_SMALL, x * x)
    if m.any():
        xs = ax[m]
        out[m] = xs + xs * _horner(_ERF_SMALL, xs * xs)
    for lo, hi, c in _ERF_MID:
        m = (ax >= lo) & (ax < hi)
        if m.any():
            xs = ax[m]
            out[m] = 1.0 - np.exp(-xs * xs) * _horner(c, (2.0 * xs - (lo + hi)) / (hi - lo))
    out[np.isnan(ax)] = np.nan
    return np.copysign(out, x)


_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def _erf_fwd(a):
    # float64 kernel (Note [Vectorized erf]), then back to the tensor dtype; a few
    # elements go through libm's erf, which is cheaper there than the array passes
    x = np.asarray(a, dtype=np.float64)
    if x.size <= 16:
        return np.asarray(_erf_scalar(x), dtype=a.dtype)
    return _erf_f64(x).astype(a.dtype, copy=False)


erf = _u("erf", _erf_fwd, lambda g, s, n: g * _TWO_OVER_SQRT_PI * (-(s[0] * s[0])).exp(), (0,),
         jvp=jvp_elementwise, batch_ok=True)

# ---------------------------------------------------------------------------------
# elementwise, two inputs (either may be a Python scalar; see binary() in _core)


def _b(name, fwd, rules, save=(), kind=None, node_name=None, jvp=None, batch_ok=False,
       save_if=None, grad_once=None, bool_error=None):
    return Op(name, fwd, rules, save, node_name=node_name, jvp=jvp, batch_ok=batch_ok,
              batch=pointwise, kind=kind, save_if=save_if, grad_once=grad_once,
              bool_error=bool_error)


add = _b("add", np.add, (lambda g, s, n: g, lambda g, s, n: g), jvp=jvp_elementwise, batch_ok=True,
         grad_once=_one_rule)
# PyTorch refuses bool operands for subtraction with this message (``bool_error``)
_BOOL_SUB = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
             "`^` or `logical_xor()` operator instead.")
sub = _b("sub", np.subtract, (lambda g, s, n: g, lambda g, s, n: -g),
         jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule, bool_error=_BOOL_SUB)
# Note [Scalar overloads]
# PyTorch gives some ops an overload per kind of operand, each its own node class:
# ``x ** 2`` is pow.Tensor_Scalar (PowBackward0, one edge), ``x ** y`` pow.Tensor_Tensor
# (PowBackward1), ``2 ** x`` pow.Scalar (PowBackward2, the exponent's edge); likewise
# ``1.5 - x`` (rsub.Scalar, RsubBackward1), remainder/fmod (Backward0 for a number
# divisor, Backward1 for a tensor one) and the NotImplemented nodes of the overloads
# without a derivative. Each overload is an Op of its own here, picked by the public
# function from its operands' types (one isinstance); its number operand has a None rule,
# so the node has no slot for it (Note [Non-differentiable inputs], _graph/node.py).
# The overloads share the kernel and the name of their op, hence its batched rules,
# JVP rule and autocast category. Ops whose scalar form PyTorch wraps into a tensor
# (``x * 2``, ``x - 1``: mul.Tensor, sub.Tensor) keep one Op and a (None, 0) slot.
rsub_scalar = _b("sub", np.subtract, (None, lambda g, s, n: -g), node_name="RsubBackward1",
                 jvp=jvp_elementwise, batch_ok=True, bool_error=_BOOL_SUB)


def _alpha_fwd(ufunc):
    """``a ufunc alpha * b`` (add/sub with ``alpha``, a Python number; PyTorch's one node)."""
    def fwd(a, b, alpha):
        if a.shape != b.shape:
            np.broadcast_shapes(a.shape, b.shape)  # PyTorch checks shapes before alpha
        _check_alpha(a.dtype.kind, alpha)
        dt = a.dtype
        if dt in _LOW:  # float16/bfloat16 compute in float32, as PyTorch's kernel
            a, b = a.astype(np.float32), b.astype(np.float32)
        r = ufunc(a, np.multiply(b, scalar_array(alpha, b.dtype)))
        return r if r.dtype == dt else r.astype(dt)
    return fwd


def _check_alpha(kind: str, alpha) -> None:
    """PyTorch's ``alpha_check`` against the result's dtype kind (NumPy's letter)."""
    cls = alpha.__class__
    if cls is bool and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if cls is float and kind in "biu":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number. (pass an integer alpha, or convert the tensors to "
                           "floating point first)")
    if cls is complex and kind != "c":
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


# add/sub with alpha != 1: ``alpha`` is the node's parameter (n._p), as in PyTorch
add_alpha = _b("add_alpha", _alpha_fwd(np.add), (lambda g, s, n: g, lambda g, s, n: g * n._p),
               node_name="AddBackward0", jvp=jvp_elementwise, batch_ok=True)
sub_alpha = _b("sub_alpha", _alpha_fwd(np.subtract),
               (lambda g, s, n: g, lambda g, s, n: -g * n._p), node_name="SubBackward0",
               jvp=jvp_elementwise, batch_ok=True, bool_error=_BOOL_SUB)


def _mul_vjp(g, s, n, needs):
    # x * x: both inputs are one saved tensor, so both gradients are the same product;
    # it is computed once and given to both inputs (the engine sums the two, as it sums
    # any fan-in), one multiply less per square (Note [Kernel passes]).
    a, b = s[0], s[1]
    ga = g * b if needs[0] else None
    if not needs[1]:
        return [ga, None]
    return [ga, ga if ga is not None and a is b else g * a]


mul = _b("mul", np.multiply, _mul_vjp, (0, 1), jvp=jvp_elementwise, batch_ok=True,
         save_if=((1,), (0,)), grad_once=_mul_once)
div = _b("div", np.true_divide,
         (lambda g, s, n: g / s[1], lambda g, s, n: -g * ((s[0] / s[1]) / s[1])), (0, 1),
         kind="float", jvp=jvp_elementwise, batch_ok=True, save_if=((1,), (0, 1)),
         grad_once=_one_rule)


def _pow_self(g, s, n):
    a, b = s[0], s[1]
    if isinstance(b, Tensor):
        return _where(b == 0, 0.0, g * (b * a.pow(b - 1)))
    if b == 0:
        return zeros_like_of(g)
    return g * (b * a.pow(b - 1))


def _pow_exp(g, s, n):
    a, b, out = s
    if isinstance(a, Tensor):
        return g * _where((a == 0) & (b >= 0), 0.0, out * a.log())
    if a == 0:
        return g * _where(b >= 0, 0.0, out * float("-inf"))
    # log of a negative (or -inf, nan) number base is nan, as PyTorch's Scalar log
    return g * (out * (math.log(a) if a > 0 else math.nan))


# Note [Scalar overloads]: pow.Tensor_Tensor, pow.Tensor_Scalar, pow.Scalar
pow = _b("pow", pow_kernel, (_pow_self, _pow_exp), (0, 1, "out"),
         node_name="PowBackward1", jvp=jvp_elementwise, batch_ok=True)
pow_scalar = _b("pow", pow_kernel, (_pow_self, None), (0, 1), node_name="PowBackward0",
                jvp=jvp_elementwise, batch_ok=True)
pow_rscalar = _b("pow", pow_kernel, (None, _pow_exp), (0, 1, "out"), node_name="PowBackward2",
                 jvp=jvp_elementwise, batch_ok=True)
# the output is read only by the exponent's rule: pow.Tensor_Tensor saves it whether or
# not the exponent needs a gradient (as PyTorch), pow.Tensor_Scalar does not, so x.pow(2)
# followed by an in-place op on its result stays valid


def _atan2_vjp(g, s, n, needs):
    # PyTorch's atan2_backward: one 1 / (a^2 + b^2) for both gradients (under
    # create_graph their graphs share its nodes, as PyTorch's do), masked to 0 where it is
    # 0, so the gradients at (0, 0) are 0 and -0 (not 0 * inf = nan)
    a, b = s
    denom = a * a + b * b
    recip = _where(denom == 0, 0.0, denom.reciprocal())
    return [g * b * recip if needs[0] else None, g * -a * recip if needs[1] else None]


atan2 = _b("atan2", np.arctan2, _atan2_vjp, (0, 1), kind="float", jvp=jvp_elementwise,
           batch_ok=True)

# hypot(a, b) = sqrt(a² + b²), NumPy's overflow-safe kernel. PyTorch's derivatives.yaml:
# self: grad * self / result, other: grad * other / result (so at (0, 0) both are nan).
# The worked example of docs/adding-an-op.md.
hypot = _b("hypot", np.hypot,
           (lambda g, s, n: g * (s[0] / s[2]), lambda g, s, n: g * (s[1] / s[2])),
           save=(0, 1, "out"), jvp=jvp_elementwise, batch_ok=True)


def _minmax_rule(which, loses):
    def rule(g, s, n):
        a, b = s
        half = _where(a == b, g / 2, g)
        lose = (a < b) if loses == "lt" else (a > b)
        return _where(lose, 0.0, half)
    return rule


maximum = _b("maximum", np.maximum, (_minmax_rule(0, "lt"), _minmax_rule(1, "gt")), (0, 1),
             jvp=jvp_elementwise, batch_ok=True)
minimum = _b("minimum", np.minimum, (_minmax_rule(0, "gt"), _minmax_rule(1, "lt")), (0, 1),
             jvp=jvp_elementwise, batch_ok=True)


def _check_int_divisor(b, name):
    """Integer division by zero raises, as in PyTorch (NumPy returns 0 with a warning).
    Only integer divisors are scanned: float division by zero is inf/nan, as in PyTorch."""
    if b.dtype.kind in "iu" and not b.all():
        raise RuntimeError(
            f"ZeroDivisionError: integer division or modulo by zero in torch.{name} (the "
            f"divisor of shape {tuple(b.shape)} holds zeros; PyTorch raises this for integer "
            "tensors). Mask the zeros first, e.g. torch.where(b == 0, 1, b), or divide in "
            "floating point (a.double() / b), where division by zero gives inf or nan.")


def _floor_div_fwd(a, b):
    _check_int_divisor(b, "floor_divide")
    return np.floor_divide(a, b)


def _remainder_fwd(a, b):
    _check_int_divisor(b, "remainder")
    r = np.remainder(a, b)
    if r.dtype.kind == "f":
        # PyTorch's kernel: fmod, plus b where the signs differ, so a zero result keeps
        # the dividend's sign (0.0 % -1.5 is 0.0; NumPy gives the divisor's, -0.0)
        zero = r == 0
        if zero.any():
            r = np.where(zero, np.fmod(a, b), r).astype(r.dtype, copy=False)
    return r


def _fmod_fwd(a, b):
    _check_int_divisor(b, "fmod")
    return np.fmod(a, b)


def _trunc_div_fwd(a, b):
    _check_int_divisor(b, "div(rounding_mode='trunc')")
    return np.trunc(np.true_divide(a, b))




remainder = _b("remainder", _remainder_fwd,
               (lambda g, s, n: g, lambda g, s, n: -g * s[0].div(s[1], rounding_mode="floor")),
               (0, 1), node_name="RemainderBackward1", jvp=jvp_elementwise, batch_ok=True,
               save_if=((1,), (1,)))  # the operands serve the divisor's gradient only
# Note [Scalar overloads]: remainder.Scalar saves nothing; remainder.Scalar_Tensor (a
# number modulo a tensor) has no derivative in PyTorch
remainder_scalar = _b("remainder", _remainder_fwd, (lambda g, s, n: g, None),
                      node_name="RemainderBackward0", jvp=jvp_elementwise, batch_ok=True)
remainder_rscalar = _not_implemented(
    "remainder", _remainder_fwd, (None, True),
    "A number modulo a tensor (torch.remainder(2.0, x), 2.0 % x) has no gradient with "
    "respect to the tensor: make the number a tensor (torch.full_like(x, 2.0) % x) or "
    "detach() x.")
fmod = _b("fmod", _fmod_fwd,
          (lambda g, s, n: g, lambda g, s, n: -g * s[0].div(s[1], rounding_mode="trunc")),
          (0, 1), node_name="FmodBackward1", jvp=jvp_elementwise, batch_ok=True,
          save_if=((1,), (1,)))
fmod_scalar = _b("fmod", _fmod_fwd, (lambda g, s, n: g, None), node_name="FmodBackward0",
                 jvp=jvp_elementwise, batch_ok=True)

# PyTorch: `//` (floor_divide) records a node whose backward raises; div with a
# rounding mode has a zero gradient, ``grad.zeros_like()`` (an inf or nan gradient gives
# 0 too, and under create_graph the zeros are a constant: no node, no requires_grad).
_FLOOR_DIV_HINT = ("The `//` operator and torch.floor_divide have no gradient; use torch.div("
                   "a, b, rounding_mode='floor'), whose gradient is zero, or detach() the "
                   "operands.")
floor_divide = _not_implemented("floor_divide", _floor_div_fwd, (True, True), _FLOOR_DIV_HINT)
floor_divide_scalar = _not_implemented("floor_divide", _floor_div_fwd, (True, None),
                                       _FLOOR_DIV_HINT)
floor_divide_rscalar = _not_implemented("floor_divide", _floor_div_fwd, (None, True),
                                        _FLOOR_DIV_HINT)
_zero_grads = (lambda g, s, n: zeros_like_of(g), lambda g, s, n: zeros_like_of(g))
div_floor = _b("div_floor", _floor_div_fwd, _zero_grads, node_name="DivBackward2",
               jvp=jvp_elementwise)
trunc_divide = _b("trunc_divide", _trunc_div_fwd, _zero_grads,
                  node_name="DivBackward2", jvp=jvp_elementwise)



# comparisons and logic: no gradient, bool results
_CMP = {}
for _name, _f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                  ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                  ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                  ("logical_xor", np.logical_xor)):
    _CMP[_name] = _b(_name, _f, None, kind="bool")
for _name, _f in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                  ("bitwise_xor", np.bitwise_xor)):
    _CMP[_name] = _b(_name, _f, None, kind=None)


def _where_fwd(c, a, b, dt=None):
    if dt is not None:  # operands of two dtypes: promoted here, one node (PyTorch's kernel)
        a = a.astype(dt, copy=False)
        b = b.astype(dt, copy=False)
    # Note [Masked gradients]: ``where(mask, g, 0)`` is how every masked rule (relu,
    # clamp, maximum...) keeps a gradient. np.where over a random mask runs ~15x slower
    # than a multiply on large arrays, so that case is a multiply, then two repairs that
    # keep it exact: -0.0 * False gives -0.0 (where gives +0.0), and inf/nan * False gives
    # nan (where gives 0).
    if (b.ndim == 0 and a.size > 8192 and a.shape == c.shape and b == 0
            and a.dtype.kind == "f"):
        with np.errstate(invalid="ignore"):
            r = np.multiply(a, c, dtype=a.dtype)
        r += b
        if not np.isfinite(a).all():
            r[~c] = b
        return r
    return np.where(c, a, b)


# where(cond, a, b): cond is not differentiable
where = Op("where", _where_fwd,
           (None, lambda g, s, n: _where0(s[0], g), lambda g, s, n: _where(s[0], 0.0, g)),
           (0,), jvp=jvp_linear, batch_ok=True, batch=pointwise)


def _clamp_rule(g, s, n):
    a = s[0]
    lo, hi = n._p
    if lo is not None and hi is not None:
        return _where0((a >= lo) & (a <= hi), g)
    return _where0(a >= lo, g) if lo is not None else _where0(a <= hi, g)


def _clamp_fwd(a, p):
    # PyTorch's kernel is min(max(a, lo), hi) with std::max/min, which return their first
    # argument on ties: clamp(-0.0, min=0.0) is -0.0. NumPy's maximum/minimum return
    # the second, hence a zero bound first (a tie with a nonzero bound is the same
    # value either way, and NumPy's (array, scalar) order is the faster loop).
    lo, hi = p
    out = a
    if lo is not None:
        out = np.maximum(lo, out) if lo == 0 else np.maximum(out, lo)
    if hi is not None:
        out = np.minimum(hi, out) if hi == 0 else np.minimum(out, hi)
    return out.astype(a.dtype, copy=False)


clamp = Op("clamp", _clamp_fwd, (_clamp_rule,), (0,), node_name="ClampBackward1",
           jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
# clamp_min(x, number) / clamp_max(x, number): clamp's kernel and rule under PyTorch's names
clamp_min = Op("clamp", _clamp_fwd, (_clamp_rule,), (0,), node_name="ClampMinBackward0",
               jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
clamp_max = Op("clamp", _clamp_fwd, (_clamp_rule,), (0,), node_name="ClampMaxBackward0",
               jvp=jvp_elementwise, batch_ok=True, batch=pointwise)


def _clamp_t_fwd(a, lo, hi, rdt=None):
    # PyTorch's kernel: min(max(a, lo), hi) with std::max/min, which return their first
    # argument on ties (clamp(0.0, min=-0.0) is 0.0; NumPy's maximum gives -0.0), and a
    # NaN bound or input propagates. ``rdt``: the result type, when the operands differ
    # (they are saved as given, and cast here and in the rule)
    if rdt is not None:
        a, lo, hi = (x if x is None or x.dtype == rdt else x.astype(rdt) for x in (a, lo, hi))
    with np.errstate(invalid="ignore"):
        if lo is not None:
            a = np.where((a < lo) | (lo != lo), lo, a)
        if hi is not None:
            a = np.where((a > hi) | (hi != hi), hi, a)
    return a


def _clamp_t_vjp(g, s, n, needs):
    a, lo, hi = s
    rdt = n._p
    if rdt is not None:  # the operands as the kernel compared them (masks: no graph)
        a, lo, hi = (x if x is None or x._data.dtype == rdt else _make(x._data.astype(rdt))
                     for x in (a, lo, hi))
    out = [None, None, None]
    if needs[0]:
        m = None
        if lo is not None:
            m = a >= lo
        if hi is not None:
            m = (a <= hi) if m is None else m & (a <= hi)
        out[0] = _where0(m, g)
    if needs[1]:
        m = a < lo
        if hi is not None:
            m = m & (lo < hi)
        out[1] = _where0(m, g)
    if needs[2]:
        m = a > hi
        if lo is not None:
            m = m | (hi < lo)
        out[2] = _where0(m, g)
    return out


clamp_tensor = Op("clamp_tensor", _clamp_t_fwd, _clamp_t_vjp, (0, 1, 2), node_name="ClampBackward0",
                  jvp=jvp_elementwise, batch_ok=True, batch=pointwise)


def _lerp_fwd(a, b, w):
    # PyTorch's formula: exact at both ends of the interpolation
    d = b - a
    return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w)).astype(np.result_type(a, b))


lerp = Op("lerp", _lerp_fwd, (lambda g, s, n: g * (1 - s[2]), lambda g, s, n: g * s[2],
                              lambda g, s, n: g * (s[1] - s[0])), (0, 1, 2),
          node_name="LerpBackward1", jvp=jvp_elementwise, batch_ok=True, batch=pointwise,
          save_if=((2,), (2,), (0, 1)))  # the ends serve the weight's gradient only
# a Python number weight is a parameter, as PyTorch's lerp.Scalar: nothing saved, so
# the node may run again (Note [Nodes that saved nothing] in _graph/node.py)
lerp_scalar = Op("lerp_scalar", lambda a, b, w: _lerp_fwd(a, b, np.asarray(w, a.dtype)),
                 (lambda g, s, n: g * (1 - n._p), lambda g, s, n: g * n._p),
                 node_name="LerpBackward0", jvp=jvp_elementwise, batch_ok=True, batch=pointwise)


# ---------------------------------------------------------------------------------
# type conversion and copies
# copies keep a non-contiguous input's layout (Note [Memory formats] in _core/layouts.py)
to_copy = Op("to_copy", cast_copy, (lambda g, s, n: g,), node_name="ToCopyBackward0",
             jvp=jvp_linear, batch_ok=True, batch=pointwise)
clone = Op("clone", layout_copy, (lambda g, s, n: g,), jvp=jvp_linear, batch_ok=True,
           batch=pointwise)
# in-place building blocks: the value an in-place op writes, as an out-of-place op
copy_from = Op("copy_from", lambda a, b: np.broadcast_to(b, a.shape).astype(a.dtype),
               (_zeros_rule, lambda g, s, n: g), node_name="torch::autograd::CopyBackwards",
               jvp=jvp_linear)
# fill_(number) is fill_.Scalar (FillBackward2: no slot for the number, Note [Scalar
# overloads]); fill_(0-d tensor) is fill_.Tensor (FillBackward3)
fill = Op("fill", lambda a, v: np.full_like(a, v), (_zeros_rule, None), node_name="FillBackward2",
          jvp=jvp_linear)
fill_tensor = Op("fill_tensor", fill.fwd, (_zeros_rule, lambda g, s, n: g.sum()),
                 node_name="FillBackward3", jvp=jvp_linear)
zero = Op("zero", lambda a: np.zeros_like(a), (_zeros_rule,), node_name="ZeroBackward0",
          jvp=jvp_linear)


# ---------------------------------------------------------------------------------
# reductions.  p = (axes or None, keepdim)



# Note [Batched rules]
# autograd.grad(..., is_grads_batched=True) runs the graph once with output
# gradients that carry one extra leading dim (STATE.batch == 1). Records marked
# ``batch_ok=True`` have rules that address dims from the right or offset them by
# STATE.batch, so the same rule serves both; the engine runs any other rule once per
# row. The flag is part of each record, next to its rules.


def _restore(g, n, i=0, saved=False):
    """Reshape a reduced gradient (or a ``saved`` reduced output, which never has batch
    dims) so it broadcasts against input i (keepdim shape)."""
    axes, keepdim = n._p[0], n._p[1]
    shape = n.input_shape(i)
    b = () if saved else _bdims(g)
    if keepdim or axes is None and g.ndim == len(shape) + len(b):
        return g
    if axes is None:
        return g.reshape(b + (1,) * len(shape))
    ks = list(shape)
    for ax in axes:
        ks[ax] = 1
    return g.reshape(b + tuple(ks))


def _expand_back(g, s, n):
    if n._p[0] is None and not STATE.batch and not n._p[1]:  # a full reduction: g is 0-d
        return view_apply(expand, g, n.input_shape(0))  # (a 0-d g expands to any shape)
    return _restore(g, n).expand(_bdims(g) + tuple(n.input_shape(0)))


_sum_fwd = sum_kernel  # (the summing records' kernel: ops/kernels/sum.py)


sum = Op("sum", _sum_fwd, (_expand_back,), jvp=jvp_linear, batch_ok=True, batch=reduction)


def _mean_fwd(a, p):
    axes, keepdim, dt = p
    return np.mean(a, axis=axes, keepdims=keepdim, dtype=dt)


mean = Op("mean", _mean_fwd, (lambda g, s, n: _expand_back(g, s, n)
                              / _count(n.input_shape(0), n._p[0]),), jvp=jvp_linear, batch_ok=True,
          batch=reduction)


def _nan_to_num_fwd(a, p):
    nan, posinf, neginf = p
    if a.dtype.kind != "f":
        return a.copy()
    fi = np.finfo(a.dtype)  # defaults: the dtype's largest and lowest finite values
    return np.nan_to_num(a, nan=nan, posinf=fi.max if posinf is None else posinf,
                         neginf=fi.min if neginf is None else neginf)


# one node saving its input, as PyTorch's NanToNumBackward0 (grad * isfinite(self))
nan_to_num = Op("nan_to_num", _nan_to_num_fwd, (lambda g, s, n: g * s[0].isfinite(),), (0,),
                jvp=jvp_elementwise, batch=pointwise)


# Note [var and std]: one node each (VarBackward0, StdBackward0), saving the input
# (std: and its result), as PyTorch: a later in-place write into the input is caught,
# and the rules are PyTorch's var_backward/std_backward point for point, singular
# points included (dof <= 0: nan where x equals the mean, inf elsewhere; std 0: zero).
_var_fwd = var_kernel  # (Note [var of equal values] in ops/kernels/var.py)


def _var_grad(g, x, n):
    axes, keepdim, c = n._p
    if x.ndim == 0 or axes is None:
        dof = x.numel() - c
        if dof <= 0:
            # torch.where of two numbers: the default dtype (float32), no gradient
            return g * _make(np.where((x == x.mean())._data, np.float32("nan"), np.float32("inf")))
        return (2.0 / dof) * g * (x - x.mean())
    if not keepdim and x.ndim > 1:
        for ax in axes:  # ascending: each lands where it was reduced
            g = g.unsqueeze(ax)
    dof = _count(x.shape, axes) - c
    return (2.0 / dof if dof else math.inf) * g * (x - x.mean(axes, keepdim=True))


var = Op("var", _var_fwd, (lambda g, s, n: _var_grad(g, s[0], n),), (0,), jvp=jvp_reduction,
         batch=reduction)
def _std_rule(g, s, n):
    with np.errstate(divide="ignore", invalid="ignore"):  # masked where std is 0 (PyTorch's
        return _var_grad(_where(s[1] == 0, 0.0, g / (s[1] * 2)), s[0], n)  # masked_fill)


std = Op("std", lambda a, p: np.sqrt(_var_fwd(a, p)), (_std_rule,), (0, "out"),
         jvp=jvp_reduction, batch=reduction)


def _prod_rule(g, s, n):
    # PyTorch's prod_backward: g itself for a 0-d input, g * (result / input) without zeros
    a, out = s
    if a.ndim == 0:
        return g
    axes = n._p[0]
    gk, ok = _restore(g, n), _restore(out, n, saved=True)
    if not bool((a == 0).any()):
        return gk * (ok / a)
    # zeros present: product of the others, by exclusive cumulative products per axis;
    # g itself over one element (PyTorch's prod_safe_zeros_backward: no graph through a)
    if (a.numel() if axes is None else a.shape[axes[0]]) == 1:
        return gk
    if axes is None and not STATE.enabled and int((a == 0).sum()) > 1:
        return zeros_like_of(a)  # PyTorch's shortcut (no create_graph): zeros, even for a nan g
    if axes is None:
        flat = a.reshape(-1)
        others = _prod_others(flat, 0).reshape(a.shape)
    else:
        (ax,) = axes
        others = _prod_others(a, ax)
    return gk * others


def _prod_others(a, dim):
    n = a.shape[dim]
    ones = ones_like_of(a.narrow(dim, 0, 1))
    left = _cat([ones, a.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = _cat([a.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
    return left * right


def _prod_fwd(a, p):
    axes, keepdim, dt = p
    return np.prod(a, axis=axes, keepdims=keepdim, dtype=dt)


prod = Op("prod", _prod_fwd, (_prod_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          autocast=FP32, batch=reduction)
# sum/mean/prod over given dims: PyTorch's dim_IntList overloads, the same kernels and
# rules under the node names PyTorch gives them (SumBackward1, MeanBackward1, ProdBackward1)
sum_dims = Op("sum", _sum_fwd, sum.vjp, node_name="SumBackward1", jvp=jvp_linear, batch_ok=True,
              batch=reduction)
mean_dims = Op("mean", _mean_fwd, mean.vjp, node_name="MeanBackward1", jvp=jvp_linear,
               batch_ok=True, batch=reduction)
prod_dims = Op("prod", _prod_fwd, prod.vjp, prod.save, node_name="ProdBackward1",
               jvp=jvp_reduction, batch_ok=True, autocast=FP32, batch=reduction)


def _amax_rule(g, s, n):
    a, out = s
    mask = a == _restore(out, n, saved=True)
    cnt = mask.sum(dim=n._p[0], keepdim=True) if n._p[0] is not None else mask.sum()
    return (_restore(g, n) / cnt) * mask


def _amax_fwd(a, p):
    return np.amax(a, axis=p[0], keepdims=p[1])


def _amin_fwd(a, p):
    return np.amin(a, axis=p[0], keepdims=p[1])


amax = Op("amax", _amax_fwd, (_amax_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          batch=reduction)
amin = Op("amin", _amin_fwd, (_amax_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          batch=reduction)
def _evenly_rule(g, s, n):
    # PyTorch's evenly_distribute_backward (max(), min(), median() of all elements): g
    # shared by the elements equal to the result (the nans, for a nan result) and written
    # into zeros, so a nan g reaches those elements only (not nan * 0 everywhere)
    a, out = s
    mask = a.isnan() if bool(out.isnan()) else a == out
    return _where(mask, g / mask.sum(), 0.0)


max_all = Op("max_all", _amax_fwd, (_evenly_rule,), (0, "out"), node_name="MaxBackward1",
             jvp=jvp_reduction, batch_ok=True)
min_all = Op("min_all", _amin_fwd, (_evenly_rule,), (0, "out"), node_name="MinBackward1",
             jvp=jvp_reduction, batch_ok=True)


def _median_all_fwd(a, p):
    # the lower median of all elements; nan if any element is nan (PyTorch)
    flat = a.reshape(-1)
    if flat.size == 0 or np.isnan(flat).any():
        with np.errstate(invalid="ignore"):  # an empty integer tensor: nan cast, as torch
            return np.array(np.nan).astype(a.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


# torch.median() with no dim: the gradient is spread evenly over the elements equal to the
# median (median(dim) picks one index and has its own rule, in take_ops)
median_all = Op("median_all", _median_all_fwd, (_evenly_rule,), (0, "out"),
                node_name="MedianBackward0", jvp=jvp_reduction)


def _logsumexp_fwd(a, p):
    axes, keepdim = p[0], p[1]
    if a.size == 0:  # PyTorch: the log of an empty sum, -inf (NumPy's amax has no identity)
        m = np.zeros([1 if axes is None or d in axes else k for d, k in enumerate(a.shape)],
                     a.dtype)
    else:
        m = np.amax(a, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=axes)
    return r.astype(a.dtype, copy=False)


# own entry for numerical stability (max-shifted), see Note [One table]
logsumexp = Op("logsumexp", _logsumexp_fwd,
               (lambda g, s, n: _restore(g, n) * (s[0] - _restore(s[1], n, saved=True)).exp(),),
               (0, "out"), jvp=jvp_reduction, batch_ok=True, batch=reduction)


# Note [Cumulative kernels]
# PyTorch's CPU cumsum and cumprod are one sequential loop per slice that starts from
# the identity and accumulates in the accumulate type (float64 for float32, float32 for
# float16/bfloat16), rounding each partial result to the output dtype. NumPy starts
# from the first element and accumulates in the output dtype: float32 partial sums
# differ in the last bits, and a cumsum of -0.0 is -0.0 where 0 + (-0.0) gives +0.0.
_CUM_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


def torch_cumulative(fn, a: np.ndarray, axis: int, dtype=None) -> np.ndarray:
    """``np.cumsum`` or ``np.cumprod`` (``fn``) as PyTorch's CPU kernel computes it
    (Note [Cumulative kernels]).

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.records.elementwise import torch_cumulative
        >>> np.signbit(torch_cumulative(np.cumsum, np.array([-0.0]), 0))
        array([False])
    """
    if a.ndim == 0:  # a 0-d input gives a 0-d result (NumPy's would be 1-d)
        return torch_cumulative(fn, a.reshape(1), 0, dtype).reshape(())
    if not a.flags.c_contiguous:  # a C-order result for any input layout, as PyTorch's
        a = np.ascontiguousarray(a)
    out_dt = np.dtype(dtype) if dtype is not None else a.dtype
    if out_dt.kind != "f":
        return fn(a, axis=axis, dtype=dtype)
    acc = _CUM_ACC.get(out_dt) or (np.float32 if out_dt == bfloat16.np else None)
    r = fn(a, axis=axis, dtype=acc or out_dt)
    if acc is not None:
        r = r.astype(out_dt)
    if fn is np.cumsum:
        r += 0.0  # the loop starts from +0.0
    return r


def _cumsum_fwd(a, p):
    return torch_cumulative(np.cumsum, a, p[0], p[1])


cumsum = Op("cumsum", _cumsum_fwd, (lambda g, s, n: g if not len(n.input_shape(0)) else
                                    g.flip(n._p[0]).cumsum(n._p[0]).flip(n._p[0]),), jvp=jvp_linear,
            batch=dim_at(0))


def _cumprod_rule(g, s, n):
    # PyTorch's cumprod_backward, both algorithms, so that values (signed zeros too)
    # match: with zeros in the input, an O(n) one when no graph is built, else the
    # O(n^2) one whose derivative is cumprod's second derivative
    a, out = s
    dim = n._p[0]
    if a.numel() <= 1 or a.shape[dim] == 1:
        return g
    size = a.shape[dim]
    w = out * g
    if not bool((a == 0).any()):
        return w.flip(dim).cumsum(dim).flip(dim) / a
    if arrays_suffice():
        return _make(_cumprod_grad_zeros(g._data, a._data, out._data, dim))
    # prod_{i <= j, i != k} a_i = prod(a[:k]) * cumprod(a[k+1:j+1]), one k at a time
    cols = []
    for k in range(size):
        if k == 0:
            omitted = _cat([ones_like_of(a.narrow(dim, 0, 1)),
                            a.narrow(dim, 1, size - 1).cumprod(dim)], dim)
        else:
            until = a.narrow(dim, 0, k).prod(dim, keepdim=True)
            if k == size - 1:
                omitted = until
            else:
                after = a.narrow(dim, k + 1, size - k - 1).cumprod(dim)
                omitted = _cat([until, until.expand_as(after) * after], dim)
        cols.append((g.narrow(dim, k, size - k) * omitted).sum(dim, keepdim=True))
    return _cat(cols, dim)


def _cumprod_grad_zeros(g, a, out, dim):
    """PyTorch's O(n) cumprod gradient for an input with zeros (no graph): before the
    first zero of a slice, reversed_cumsum(out * g) / a; at the first zero, the products
    after it up to the second zero; after it, zero."""
    def rcumsum(x):
        return np.flip(torch_cumulative(np.cumsum, np.flip(x, dim), dim), dim)

    grad = np.zeros(a.shape, g.dtype)
    cs = np.cumsum(a == 0, axis=dim)
    before = cs == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        part = rcumsum(np.where(before, out * g, 0)).astype(g.dtype) / a
    grad[before] = part[before]
    between = cs == 1
    first = np.argmax(between, axis=dim, keepdims=True)
    first_mask = np.zeros(a.shape, bool)
    np.put_along_axis(first_mask, first, True, axis=dim)
    first_mask &= between
    between &= ~first_mask
    prods = torch_cumulative(np.cumprod, np.where(between, a, 1).astype(a.dtype), dim)
    tail = (prods * np.where(cs != 1, 0, g)).sum(axis=dim, keepdims=True, dtype=g.dtype)
    lead = np.take_along_axis(out, np.maximum(first - 1, 0), axis=dim)
    lead = np.where(first == 0, 1, lead).astype(g.dtype)
    grad[first_mask] = np.broadcast_to(tail * lead, a.shape)[first_mask]
    return grad


def _cumprod_fwd(a, p):
    return torch_cumulative(np.cumprod, a, p[0], p[1])


def _cumprod_jvp(t, s, n, out):
    a = s[0]
    ta = t[0].to(out.dtype) if t[0].dtype != out.dtype else t[0]
    if a.ndim == 0:
        return ta
    dim = n._p[0]
    if not bool((a == 0).any()):
        return out * (ta / a).cumsum(dim)
    # zeros present: out'_i = sum_{j <= i} t_j prod_{k <= i, k != j} a_k, one cumprod per j
    size = a.shape[dim]
    pos = _make(np.arange(size)).reshape([size if d == dim else 1 for d in range(a.ndim)])
    res = None
    for j in range(size):
        term = _where(pos >= j, _where(pos == j, ta, a).cumprod(dim), 0.0)
        res = term if res is None else res + term
    return res


cumprod = Op("cumprod", _cumprod_fwd, (_cumprod_rule,), (0, "out"), jvp=_cumprod_jvp,
             batch=dim_at(0))


def _norm_rule(g, s, n):
    a, out = s
    return norm_backward(_restore(g, n), a, _restore(out, n, saved=True), n._p[2], n._p[0])


def norm_backward(gk, a, ok, ordv, dims):
    """PyTorch's norm_backward: the gradient ``gk`` of the ``ordv``-norm ``ok`` of ``a`` over
    ``dims`` (None: all), both kept broadcastable against ``a`` (vector_norm, renorm)."""
    # case by case: the masks sit where PyTorch puts them, so the first derivative at a
    # zero norm is 0 and the second is nan (0/0 behind the mask)
    if ordv == 2:
        with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 behind the mask, silent
            q = a / ok                                         # as PyTorch's masked_fill_
        return gk * _where(ok == 0, 0.0, q)
    if ordv == 1:
        return gk * a.sign()
    if ordv == 0:
        return None  # PyTorch leaves it undefined (grad None), not zeros
    if ordv == float("inf") or ordv == float("-inf"):
        aa = a.abs()
        mask = (aa == ok) | aa.isnan()
        cnt = mask.sum(dim=dims, keepdim=True) if dims is not None else mask.sum()
        return a.sign() * ((gk / cnt) * mask)
    if ordv < 1:
        scaled = a.sign() * _where(a == 0, 0.0, a.abs().pow(ordv - 1))
        return scaled * gk * ok.pow(1 - ordv)
    scaled = a.sign() * a.abs().pow(ordv - 1) if ordv < 2 else a * a.abs().pow(ordv - 2)
    with np.errstate(divide="ignore", invalid="ignore"):  # (as above)
        q = gk / ok.pow(ordv - 1)
    return scaled * _where(ok == 0, 0.0, q)


def _norm_fwd(a, p):
    axes, keepdim, ordv, dt = p
    out_dt = a.dtype if dt is None else np.dtype(dt)  # float16/bfloat16 sum in float32 (opmath)
    x = np.abs(a).astype(np.float32 if out_dt.itemsize == 2 else out_dt, copy=False)
    if ordv == 2:
        r = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    elif ordv == float("inf"):
        r = np.amax(x, axis=axes, keepdims=keepdim)
    elif ordv == float("-inf"):
        r = np.amin(x, axis=axes, keepdims=keepdim)
    elif ordv == 0:
        r = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif ordv == 1:
        r = np.sum(x, axis=axes, keepdims=keepdim)
    else:
        r = np.power(np.sum(np.power(x, ordv), axis=axes, keepdims=keepdim), 1.0 / ordv)
    return np.asarray(r).astype(out_dt, copy=False)


# own entry: the p=2 rule masks norm == 0 to a zero gradient instead of 0/0 (PyTorch)
vector_norm = Op("vector_norm", _norm_fwd, (_norm_rule,), (0, "out"),
                 node_name="LinalgVectorNormBackward0", jvp=jvp_reduction, batch_ok=True,
                 batch=reduction)


# ---------------------------------------------------------------------------------
# Ops PyTorch records as one node of their own where a composite would record several
# (masked_fill, masked_select, round(decimals), kthvalue, median(dim)). Masks and index
# tensors are parameters, not inputs (Note [Tensors saved from parameters] in ops/op.py).

def _masked_fill_fwd(a, p):  # p: (mask Tensor, the value as a 0-d array of a's dtype)
    return np.where(p[0]._data, p[1], a)


def _masked_fill_tensor_fwd(a, v, p):  # p: (mask Tensor,)
    return np.where(p[0]._data, v.astype(a.dtype, copy=False), a)


def _masked_fill_self_rule(g, s, n):
    return g.masked_fill(s[0], 0)


def _masked_fill_value_rule(g, s, n):
    return g.masked_select(s[0]).sum()  # PyTorch's masked_fill_backward


def _masked_fill_jvp(t, s, n, out):
    ts = zeros_like_of(out) if t[0] is None else t[0]
    if len(t) == 1 or t[1] is None:
        return ts.masked_fill(s[0], 0)
    return ts.masked_fill(s[0], t[1])


# masked_fill(x, mask, number) / masked_fill(x, mask, 0-d tensor): PyTorch saves the mask
masked_fill = Op("masked_fill", _masked_fill_fwd, (_masked_fill_self_rule,), ("p0",),
                 jvp=_masked_fill_jvp)
masked_fill_tensor = Op("masked_fill_tensor", _masked_fill_tensor_fwd,
                        (_masked_fill_self_rule, _masked_fill_value_rule), ("p0",),
                        jvp=_masked_fill_jvp, node_name="MaskedFillBackward1")


def _masked_select_fwd(a, p):
    m = p[0]._data
    if m.shape != a.shape:
        a, m = np.broadcast_arrays(a, m)
    return a[m]


def _masked_select_rule(g, s, n):
    x, mask = s  # PyTorch's masked_select_backward: zeros of the broadcast shape, g scattered
    shape = np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    m = mask if tuple(mask.shape) == shape else mask.expand(shape)
    return rule_zeros(shape, g._data.dtype).index_put((m,), g)


masked_select = Op("masked_select", _masked_select_fwd, (_masked_select_rule,), (0, "p0"),
                   jvp=jvp_linear)


def _round_decimals_fwd(a, decimals):
    # PyTorch's round_decimals_kernel: the power of ten in the tensor's dtype, and a
    # division (not a multiplication by its inverse) for negative decimals
    ten = np.asarray(10.0 ** builtins.abs(decimals), dtype=a.dtype)
    if decimals < 0:
        return np.round(a / ten) * ten
    return np.round(a * ten) / ten


round_decimals = Op("round_decimals", _round_decimals_fwd, (_zeros_rule,),
                    node_name="RoundBackward1", jvp=jvp_elementwise)


ALL_OPS = {k: v for k, v in dict(globals()).items() if isinstance(v, Op)}


from .construction import *  # noqa: E402, F403  (re-exported: the one table)
from .fill_split import *  # noqa: E402, F403  (torch.fill, unsafe_split: issue 16)
