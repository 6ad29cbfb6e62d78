"""The derivative table of the special functions (``torch.special`` and the elementwise
math next to it: lgamma, digamma, erfinv, xlogy, logaddexp, copysign, ...): one record an
op, its kernel from SciPy's ``scipy.special`` (imported on first use, Note [Lazy SciPy])
or NumPy, one rule per input in Tensor ops (PyTorch's derivatives.yaml formulas), so
second derivatives come from the rules themselves.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> torch.lgamma(x).grad_fn.name()
    'LgammaBackward0'
"""

from __future__ import annotations

import math

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import binary, unary
from ..jvp_rules import jvp_elementwise
from .elementwise import LN2, _where, _where0, _zeros_rule
from .elementwise import _b as _table_b
from .elementwise import _u as _table_u
from .helpers import _not_implemented

_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI
_SQRT_2PI = math.sqrt(2 * math.pi)


# Note [Lazy SciPy]
# The kernels of the special functions are SciPy's ufuncs (cephes, Boost and Faddeeva
# under them: the same algorithms PyTorch's own kernels copy). SciPy takes ~0.2 s to
# import, so ``import retrograd`` does not load it: a kernel looks ``scipy.special`` up
# on its first call. float32 input runs SciPy's float32 loop where it has one (most of
# those compute in double and round), otherwise float64 and rounds the result; float16
# and bfloat16 come here as float32 (dispatch.unary), as PyTorch computes them.
def _scipy(name: str):
    """The ufunc ``scipy.special.<name>``, imported on first use (Note [Lazy SciPy])."""
    import scipy.special

    return getattr(scipy.special, name)


def _sp_kernel(name: str):
    """A unary kernel calling ``scipy.special.<name>`` in the input's floating dtype."""
    def fwd(a):
        f = _scipy(name)
        if a.dtype == np.float32 and "f->f" in f.types:
            return f(a)
        return np.asarray(f(a.astype(np.float64, copy=False))).astype(a.dtype, copy=False)
    fwd.__name__ = name
    return fwd


def _sp_kernel2(name: str):
    """A binary kernel calling ``scipy.special.<name>`` (operands already of one dtype)."""
    def fwd(a, b):
        f = _scipy(name)
        if a.dtype == np.float32 and "ff->f" in getattr(f, "types", ()):
            return f(a, b)
        r = f(a.astype(np.float64, copy=False), b.astype(np.float64, copy=False))
        return np.asarray(r).astype(a.dtype, copy=False)
    fwd.__name__ = name
    return fwd


def _u(name, fwd, rule, save=(), node_name=None, kind="float", jvp=None):
    """table's elementwise record of one input, with this module's defaults: integer
    inputs computed as floats, forward mode (``jvp``, else the elementwise rule) and
    batching whenever there is a rule."""
    if jvp is None and rule is not None:
        jvp = jvp_elementwise
    return _table_u(name, fwd, rule, save, kind=kind, node_name=node_name, jvp=jvp,
                    batch_ok=rule is not None)


def _b(name, fwd, rules, save=(), node_name=None, kind="float", jvp=jvp_elementwise):
    """table's elementwise record of two operands (a None rule: a Python-number operand),
    with this module's defaults (floats, forward mode, batching)."""
    return _table_b(name, fwd, rules, save, kind=kind, node_name=node_name, jvp=jvp,
                    batch_ok=True)


# --- gamma family -----------------------------------------------------------------
lgamma = _u("lgamma", _sp_kernel("gammaln"), lambda g, s, n: g * unary(digamma, s[0]), (0,))
digamma = _u("digamma", _sp_kernel("psi"), lambda g, s, n: g * unary(polygamma, s[0], 1),
                  (0,))


# Note [Trigamma series]
# PyTorch computes polygamma(1, x) with its own series, not with the Hurwitz zeta that
# serves n >= 2: reflection below 1/2 (psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)), six
# steps of the recurrence psi1(x) = 1/x^2 + psi1(x + 1), then the asymptotic expansion
# 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7), cut after that term (~1e-10 relative
# from the exact value near x = 0). SciPy's polygamma(1, x) is exact to ~1e-16, so the
# two differ in the tenth digit; this kernel takes PyTorch's truncation, to print its
# numbers (and digamma's gradient, which is polygamma(1, x)).
def _trigamma(x: np.ndarray) -> np.ndarray:  # in x's dtype, as PyTorch's scalar_t
    low = x < 0.5
    s = np.sin(np.pi * x)
    result = np.where(low, -(np.pi * np.pi) / (s * s), x.dtype.type(0))
    x = np.where(low, 1 - x, x)
    for _ in range(6):
        result += 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result += (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return np.where(low, -result, result)


def _polygamma_fwd(a, k):
    if k == 0:
        return _sp_kernel("psi")(a)
    if k == 1:  # Note [Trigamma series]
        with np.errstate(divide="ignore", invalid="ignore"):
            return _trigamma(a)
    r = _scipy("polygamma")(k, a.astype(np.float64, copy=False))
    return np.asarray(r).astype(a.dtype, copy=False)


# polygamma(n, x): the order is the record's parameter (PolygammaBackward0, one edge)
def _polygamma_rule(g, s, n):
    return g * unary(polygamma, s[0], n._p + 1)


polygamma = _u("polygamma", _polygamma_fwd, _polygamma_rule, (0,))
# x.polygamma_(n) is PyTorch's in-place overload (PolygammaBackward1), the same formula
polygamma_inplace = _u("polygamma", _polygamma_fwd, _polygamma_rule, (0,),
                       node_name="PolygammaBackward1")


def _mvlgamma_offsets(p: int, dt) -> np.ndarray:
    # PyTorch's arange(-p/2 + 0.5, 0.5, 0.5): the shifts x - j/2, j = p-1 ... 0
    return np.arange(-p / 2 + 0.5, 0.5, 0.5)[:p].astype(dt)


def _mvlgamma_fwd(a, p):
    x = a.astype(np.float64, copy=False)[..., None] + _mvlgamma_offsets(p, np.float64)
    r = _scipy("gammaln")(x).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return np.asarray(r).astype(a.dtype, copy=False)


def _mvlgamma_rule(g, s, n):
    x = s[0].unsqueeze(-1) + _make(_mvlgamma_offsets(n._p, s[0]._data.dtype))
    return g * unary(digamma, x).sum(-1)


mvlgamma = _u("mvlgamma", _mvlgamma_fwd, _mvlgamma_rule, (0,), kind=None)

# --- error function family ------------------------------------------------------------
erfc = _u("erfc", _sp_kernel("erfc"),
          lambda g, s, n: g * (-_TWO_OVER_SQRT_PI) * (-(s[0] * s[0])).exp(), (0,))
_erfinv_inside = _sp_kernel("erfinv")


def _erfinv_fwd(a):
    # SciPy's (Boost's) erfinv reports each argument outside [-1, 1] through its error
    # policy, ~2 us an element: those (and nan) are nan without the call, as in PyTorch
    inside = np.abs(a) <= 1
    if inside.all():
        return _erfinv_inside(a)
    out = np.full(a.shape, np.nan, dtype=a.dtype)
    out[inside] = _erfinv_inside(a[inside])
    return out


erfinv = _u("erfinv", _erfinv_fwd,
            lambda g, s, n: g * (0.5 * _SQRT_PI) * (s[0] * s[0]).exp(), ("out",))
erfcx = _u("erfcx", _sp_kernel("erfcx"),
           lambda g, s, n: g * (2.0 * s[0] * s[1] - _TWO_OVER_SQRT_PI), (0, "out"),
           node_name="SpecialErfcxBackward0")
ndtri = _u("ndtri", _sp_kernel("ndtri"),
           lambda g, s, n: g * _SQRT_2PI * (s[0] * s[0] / 2).exp(), ("out",),
           node_name="SpecialNdtriBackward0")
log_ndtr = _u("log_ndtr", _sp_kernel("log_ndtr"),
              lambda g, s, n: g / _SQRT_2PI * (-(s[1] + s[0] * s[0] / 2)).exp(), (0, "out"),
              node_name="SpecialLogNdtrBackward0")

# --- modified Bessel functions ------------------------------------------------------
i0 = _u("i0", _sp_kernel("i0"), lambda g, s, n: g * unary(i1, s[0]), (0,))
i0e = _u("i0e", _sp_kernel("i0e"),
         lambda g, s, n: g * (unary(i1e, s[0]) - s[0].sign() * s[1]), (0, "out"),
         node_name="SpecialI0EBackward0")


def _i1_grad(scaled: bool):
    """PyTorch's i1_backward / i1e_backward: at |x| <= eps the gradient is 0.5 (the
    formula's result / x would be 0/0 there)."""
    def rule(g, s, n):
        x, out = s
        eps = float(np.finfo(x._data.dtype).eps)
        big = x.abs() > eps
        safe = _where(big, x, eps)
        if scaled:
            gx = unary(i0e, safe) - out * (safe.sign() + safe.reciprocal())
        else:
            gx = unary(i0, safe) - out * safe.reciprocal()
        return g * _where(big, gx, 0.5)
    return rule


i1 = _u("i1", _sp_kernel("i1"), _i1_grad(False), (0, "out"), node_name="SpecialI1Backward0")
i1e = _u("i1e", _sp_kernel("i1e"), _i1_grad(True), (0, "out"), node_name="SpecialI1EBackward0")
# Bessel and Airy functions PyTorch gives no derivative and no node (their outputs never
# require grad): one record a function, its SciPy ufunc
bessel_j0 = _u("bessel_j0", _sp_kernel("j0"), None)
bessel_j1 = _u("bessel_j1", _sp_kernel("j1"), None)
bessel_y0 = _u("bessel_y0", _sp_kernel("y0"), None)
bessel_y1 = _u("bessel_y1", _sp_kernel("y1"), None)
modified_bessel_i0 = _u("modified_bessel_i0", _sp_kernel("i0"), None)
modified_bessel_i1 = _u("modified_bessel_i1", _sp_kernel("i1"), None)
modified_bessel_k0 = _u("modified_bessel_k0", _sp_kernel("k0"), None)
modified_bessel_k1 = _u("modified_bessel_k1", _sp_kernel("k1"), None)
scaled_modified_bessel_k0 = _u("scaled_modified_bessel_k0", _sp_kernel("k0e"), None)
scaled_modified_bessel_k1 = _u("scaled_modified_bessel_k1", _sp_kernel("k1e"), None)


def _airy_ai_fwd(a):
    ai = _scipy("airy")(a.astype(np.float64, copy=False))[0]
    return np.asarray(ai).astype(a.dtype, copy=False)


def _spherical_j0_fwd(a):
    # sin(x) / x: 1 at 0, 0 at +-inf (PyTorch's values there)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sin(a) / a
    r = np.where(a == 0, a.dtype.type(1), r)
    return np.where(np.isinf(a), a.dtype.type(0), r).astype(a.dtype, copy=False)


airy_ai = _u("airy_ai", _airy_ai_fwd, None)
spherical_bessel_j0 = _u("spherical_bessel_j0", _spherical_j0_fwd, None)

# --- logs, entropies ------------------------------------------------------------------
entr = _u("entr", _sp_kernel("entr"), lambda g, s, n: g * -(1 + s[0].log()), (0,),
          node_name="SpecialEntrBackward0")


def _sinc_fwd(a):
    return np.sinc(a)


def _sinc_rule(g, s, n):
    px = s[0] * math.pi
    d = (px * px.cos() - px.sin()) / (px * s[0])
    return g * _where0(s[0] != 0, d)


sinc = _u("sinc", _sinc_fwd, _sinc_rule, (0,))


def _logit_fwd(a, eps):  # eps < 0: no clamping (PyTorch's eps=None)
    if eps >= 0:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _logit_rule(g, s, n):
    x, eps = s[0], n._p
    d = g / (x * (1 - x))
    if eps < 0:  # outside [0, 1] the gradient is nan, as PyTorch's logit_backward
        return _where((x < 0) | (x > 1), float("nan"), d)
    return _where0((x >= eps) & (x <= 1 - eps), d)


logit = _u("logit", _logit_fwd, _logit_rule, (0,))


def _pick(name: str, a, b):
    """The overload of the record ``name`` for the operands (a Python number on one side:
    its Scalar overload, Note [Scalar overloads] in ops/records/elementwise.py)."""
    if a.__class__ is float or a.__class__ is int:
        return globals()[name + "_rscalar"]
    if b.__class__ is float or b.__class__ is int:
        return globals()[name + "_scalar"]
    return globals()[name]


def _xlog_rule(log_fn: str, pole: float):
    # derivatives.yaml: self: xlogy(grad, other), 0 where self == 0 and other <= 0 (the
    # log's pole; xlog1py: other <= -1)
    def rule(g, s, n):
        x, y = s
        r = binary(_pick(log_fn, g, y), g, y)
        if y.__class__ is float or y.__class__ is int:  # xlogy.Scalar_Other
            return _where0(x != 0, r) if y <= pole else r
        return _where0(~((x == 0) & (y <= pole)), r)
    return rule


def _xlogy_other(g, s, n):
    return g * s[0] / s[1]


def _xlog1py_other(g, s, n):
    return g * s[0] / (s[1] + 1)


def _no_forward_ad(name: str):
    """The JVP rule of an op PyTorch gives no forward derivative (its error, then ours)."""
    def rule(t, s, n, out):
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has "
            "not been implemented yet. (PyTorch has no forward-mode rule for it: use reverse "
            "mode, torch.autograd.grad)")
    return rule


def _xlogy_overloads(name, kernel, self_rule, other_rule, node, jvp=jvp_elementwise):
    """The Tensor-Tensor, Scalar-self and Scalar-other records (Note [Scalar overloads])."""
    return (_b(name, kernel, (self_rule, other_rule), (0, 1), node + "0", jvp=jvp),
            _b(name, kernel, (self_rule, None), (0, 1), node + "2", jvp=jvp),
            _b(name, kernel, (None, other_rule), (0, 1), node + "1", jvp=jvp))


xlogy, xlogy_scalar, xlogy_rscalar = _xlogy_overloads(
    "xlogy", _sp_kernel2("xlogy"), _xlog_rule("xlogy", 0.0), _xlogy_other, "XlogyBackward")
xlog1py, xlog1py_scalar, xlog1py_rscalar = _xlogy_overloads(
    "xlog1py", _sp_kernel2("xlog1py"), _xlog_rule("xlog1py", -1.0), _xlog1py_other,
    "SpecialXlog1PyBackward")


def _zeta_self(g, s, n):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_other(g, s, n):
    return g * -s[0] * binary(_pick("zeta", s[0], s[1]), s[0] + 1.0, s[1])


zeta, zeta_scalar, zeta_rscalar = _xlogy_overloads(
    "zeta", _sp_kernel2("zeta"), _zeta_self, _zeta_other, "SpecialZetaBackward",
    jvp=_no_forward_ad("special_zeta"))



# --- regularized incomplete gamma functions ---------------------------------------------
def _igamma_self(name: str):
    def rule(g, s, n):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented. "
                                  "(PyTorch differentiates it in its second argument only)")
    return rule


def _igamma_other(sign: float):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) (Q = 1 - P: the opposite sign)
    def rule(g, s, n):
        a, x = s
        return g * (sign * ((a - 1) * x.log() - x - unary(lgamma, a)).exp())
    return rule


igamma = _b("igamma", _sp_kernel2("gammainc"), (_igamma_self("igamma"), _igamma_other(1.0)),
            (0, 1))
igammac = _b("igammac", _sp_kernel2("gammaincc"),
             (_igamma_self("igammac"), _igamma_other(-1.0)), (0, 1))


# --- two-operand elementwise math -----------------------------------------------------
logaddexp = _b("logaddexp", np.logaddexp,
               (lambda g, s, n: g / (1 + (s[1] - s[0]).exp()),
                lambda g, s, n: g / (1 + (s[0] - s[1]).exp())), (0, 1), kind=None)
logaddexp2 = _b("logaddexp2", np.logaddexp2,
                (lambda g, s, n: g / (1 + (s[1] - s[0]).exp2()),
                 lambda g, s, n: g / (1 + (s[0] - s[1]).exp2())), (0, 1), kind=None)


def _copysign_self(g, s, n):
    # copysign_tensor_self_backward: grad * result / self, 0 where self == 0
    return g * _where0(s[0] != 0, s[1] / s[0])


copysign = _b("copysign", np.copysign, (_copysign_self, _zeros_rule), (0, "out"))
copysign_scalar = _b("copysign", np.copysign, (_copysign_self, None), (0, "out"),
                     node_name="CopysignBackward1")
nextafter = _b("nextafter", np.nextafter,
               (lambda g, s, n: _where0(s[0] != s[1], g), _zeros_rule), (0, 1), kind=None)


def _heaviside_fwd(a, v):
    # PyTorch: x == 0 ? values : x > 0 (so nan gives 0, where NumPy's heaviside gives nan)
    return np.where(a == 0, v, a > 0).astype(a.dtype, copy=False)


_STEP_HINT = ("heaviside is a step function: use a smooth surrogate (e.g. "
              "torch.sigmoid(k * x)) where a gradient is needed.")
heaviside = _not_implemented("heaviside", _heaviside_fwd, (True, True), _STEP_HINT)
# the in-place overload's node has self's edge alone (PyTorch's graph)
heaviside_inplace = _not_implemented("heaviside_", _heaviside_fwd, (True, None), _STEP_HINT)
ldexp = _b("ldexp", lambda a, b: a * np.exp2(b),
           (lambda g, s, n: g * s[0].exp2(), lambda g, s, n: g * s[1] * LN2), (1, "out"))
deg2rad = _u("deg2rad", lambda a: a * a.dtype.type(math.pi / 180),
             lambda g, s, n: g * (math.pi / 180), kind=None, node_name="Deg2RadBackward0")
rad2deg = _u("rad2deg", lambda a: a * a.dtype.type(180 / math.pi),
             lambda g, s, n: g * (180 / math.pi), kind=None, node_name="Rad2DegBackward0")

# mul.Scalar (MulBackward1): ``x * c`` of a Python number, as PyTorch's C++ compositions
# call it (special.ndtr's final ``* 0.5``); Python's ``x * c`` is mul.Tensor
mul_scalar = _u("mul", lambda a, c: a * a.dtype.type(c), lambda g, s, n: g * n._p, kind=None,
                node_name="MulBackward1")
# add.Scalar (AddBackward1): ``x + c``, likewise (special.ndtr's ``1 + erf(...)``)
add_scalar = _u("add", lambda a, c: a + a.dtype.type(c), lambda g, s, n: g, kind=None,
                node_name="AddBackward1")

# --- inverse hyperbolic functions -----------------------------------------------------
asinh = _u("asinh", np.arcsinh, lambda g, s, n: g * (s[0] * s[0] + 1).rsqrt(), (0,))
acosh = _u("acosh", np.arccosh, lambda g, s, n: g * (s[0] * s[0] - 1).rsqrt(), (0,))
atanh = _u("atanh", np.arctanh, lambda g, s, n: g / (1 - s[0] * s[0]), (0,))


def _no_inplace_derivative(name: str):
    def rule(g, s, n):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                  "implemented. (use the out-of-place form, y = x." + name +
                                  "(), where a gradient is needed)")
    return rule


# their in-place forms are PyTorch overloads without a derivative (AsinhBackward1, ...):
# backward through them raises, as in PyTorch
asinh_inplace, acosh_inplace, atanh_inplace = (
    _u(f"{f}_", k, _no_inplace_derivative(f), node_name=f"{f.capitalize()}Backward1",
       jvp=_no_forward_ad(f"{f}_"))
    for f, k in (("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh)))


# frexp: the mantissa is this record (FrexpBackward0, grad / 2**exponent); the exponent,
# an int32 tensor, is its parameter ("p0"), computed by the public function
frexp = _u("frexp", lambda a, p: np.frexp(a)[0], lambda g, s, n: g / s[0].exp2(), ("p0",),
           kind=None)
