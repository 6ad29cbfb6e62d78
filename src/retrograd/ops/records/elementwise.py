"""The derivative table of the elementwise ops: one input (neg .. erf), two inputs (add ..
minimum, remainder, the divisions), comparisons, where, clamp, lerp, copies and fills, and
the masked ops PyTorch records as one node. Each entry is an ``Op``: a NumPy forward kernel
(the longer ones in ``ops/kernels/``) and a derivative rule per input in Tensor ops (Note
[One table] in ``ops/records/table.py``).

Example:
    >>> from retrograd.ops.records import elementwise
    >>> elementwise.mul.node_name, elementwise.mul.save
    ('MulBackward0', (0, 1))
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..._core.layouts import cast_copy, layout_copy
from ..._tensor.tensor import Tensor, _make
from ..batch_rules import pointwise
from ..dispatch import apply, binary, scalar_array
from ..jvp_rules import jvp_elementwise, jvp_linear
from ..kernels import minmax
from ..kernels.activations import (
    relu_kernel,
    sigmoid_backward_kernel,
    sigmoid_kernel,
    tanh_backward_kernel,
    threshold_backward_kernel,
)
from ..kernels.erf import erf_kernel
from ..kernels.pow import pow_kernel
from ..op import _LOW, Op
from .helpers import _not_implemented, rule_zeros, zeros_like_of

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


tanh_backward = Op("tanh_backward", tanh_backward_kernel,
                   (lambda gg, s, n: binary(tanh_backward, gg, s[1]),
                    lambda gg, s, n: -2 * gg * s[0] * s[1]), (0, 1), save_if=((1,), (0, 1)),
                   jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
sigmoid_backward = Op("sigmoid_backward", sigmoid_backward_kernel,
                      (lambda gg, s, n: binary(sigmoid_backward, gg, s[1]),
                       lambda gg, s, n: gg * s[0] * (1 - 2 * s[1])), (0, 1),
                      save_if=((1,), (0, 1)), jvp=jvp_elementwise, batch_ok=True, batch=pointwise)


def _fused(op):
    def rule(g, s, n):
        return binary(op, g, s[0])
    return rule


tanh = _u("tanh", np.tanh, _fused(tanh_backward), ("out",), jvp=jvp_elementwise, batch_ok=True,
          grad_once=_one_rule)


sigmoid = _u("sigmoid", sigmoid_kernel, _fused(sigmoid_backward), ("out",),
             jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)


# Note [Fused backward ops]: relu's rule is PyTorch's threshold_backward(g, out), a
# primitive whose rule w.r.t. ``out`` is zero: the second derivative of relu is then
# a tensor of zeros, as in PyTorch, not "does not require grad".
threshold_backward = Op("threshold_backward", threshold_backward_kernel,
                        (lambda gg, s, n: binary(threshold_backward, gg, s[1]),
                         lambda gg, s, n: zeros_like_of(gg)), (0, 1), save_if=((1,), (0,)),
                        jvp=jvp_elementwise, batch_ok=True, batch=pointwise)
relu = _u("relu", relu_kernel, _fused(threshold_backward), ("out",), kind=None,
          jvp=jvp_elementwise, batch_ok=True, grad_once=_one_rule)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


erf = _u("erf", erf_kernel, lambda g, s, n: g * _TWO_OVER_SQRT_PI * (-(s[0] * s[0])).exp(), (0,),
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


# the kernels keep PyTorch's zero on +0/-0 ties (Note [Signed zeros on ties])
maximum = _b("maximum", minmax.maximum, (_minmax_rule(0, "lt"), _minmax_rule(1, "gt")), (0, 1),
             jvp=jvp_elementwise, batch_ok=True)
minimum = _b("minimum", minmax.minimum, (_minmax_rule(0, "gt"), _minmax_rule(1, "lt")), (0, 1),
             jvp=jvp_elementwise, batch_ok=True)


def _fminmax_rule(which, wins):
    # PyTorch's derivatives.yaml for fmax (fmin with <=): self keeps the whole gradient
    # where self >= other or other is nan, other keeps it elsewhere (no split on ties)
    def rule(g, s, n):
        a, b = s
        keep = ((a >= b) if wins == "ge" else (a <= b)) | b.isnan()
        return _where0(keep, g) if which == 0 else _where(keep, 0.0, g)
    return rule


fmax = _b("fmax", minmax.fmax, (_fminmax_rule(0, "ge"), _fminmax_rule(1, "ge")), (0, 1),
          jvp=jvp_elementwise, batch_ok=True)
fmin = _b("fmin", minmax.fmin, (_fminmax_rule(0, "le"), _fminmax_rule(1, "le")), (0, 1),
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
    # PyTorch's kernel (vector and scalar loops alike) keeps the input on ties:
    # clamp(-0.0, min=0.0) is -0.0 (Note [Signed zeros on ties]); a tie with a nonzero
    # bound is the same value either way, so only a zero bound takes minmax's ordered form
    lo, hi = p
    out = a
    fl = a.dtype.kind == "f" or a.dtype.name == "bfloat16"
    if lo is not None:
        out = (minmax.keep(np.maximum, out, np.asarray(lo, a.dtype), 0) if lo == 0 and fl
               else np.maximum(out, lo))
    if hi is not None:
        out = (minmax.keep(np.minimum, out, np.asarray(hi, a.dtype), 0) if hi == 0 and fl
               else np.minimum(out, hi))
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
    return minmax.clamp(a, lo, hi)  # Note [Signed zeros on ties]


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
