"""The special functions and the elementwise math next to them: ``lgamma``, ``digamma``,
``polygamma``, ``erfc``, ``erfinv``, ``i0``, ``xlogy``, ``logit``, ``logaddexp``,
``copysign``, ``nextafter``, ``heaviside``, ``sinc``, ``deg2rad``, ``asinh``, ``frexp``,
``ldexp`` ... as ``retrograd.<name>`` and ``Tensor.<name>``, and the functions only
``retrograd.special`` exposes (``erfcx``, ``ndtri``, ``i1``, ``zeta``, ...). Each checks
PyTorch's arguments and calls one record of ``ops/records/special.py``.

Example:
    >>> import retrograd as torch
    >>> torch.lgamma(torch.tensor([1., 2., 3.]))
    tensor([0.0000, 0.0000, 0.6931])
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from .._core.hints import Number
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, result_type
from ..ops.argcheck import invalid_combination, not_tensor
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply, binary, unary
from ..ops.op import FLOAT_NP
from ..ops.out_arg import write_out
from ..ops.public import alias, public
from ..ops.records import special as TSF
from ..ops.records import table as T
from .pointwise import _binary_overload

_SQRT1_2 = math.sqrt(0.5)
_XLOGY_SIGNATURES = ("Tensor input, Tensor other, *, Tensor out = None",
                     "Number self, Tensor other, *, Tensor out = None",
                     "Tensor input, Number other, *, Tensor out = None")


def _floating_only(kernel: str, fn: str, *tensors: Tensor) -> None:
    """PyTorch's NotImplementedError for an integer or bool tensor where its CPU kernel has
    floating loops only, then the fix."""
    dt = result_type(*tensors)
    if not dt.is_floating_point:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_LEGACY_NAMES[dt.name]}\' ({fn} takes '
            "floating-point tensors: convert first, e.g. x.float())")


def _out(name: str):
    """Give a function PyTorch's ``out=`` keyword: the result is written into ``out``
    (Note [out= arguments] in out_arg.py)."""
    def deco(fn):
        @functools.wraps(fn)
        def with_out(*args, out=None, **kwargs):
            if out is None:
                return fn(*args, **kwargs)
            return write_out(name, out, fn(*args, **kwargs), (*args, *kwargs.values()))
        return with_out
    return deco


# --- one input ------------------------------------------------------------------------
@public(inplace=True)
@_out("lgamma")
def lgamma(input: Tensor) -> Tensor:
    """``log|Γ(input)|``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.lgamma(torch.tensor([0.5]))
        tensor([0.5724])
    """
    return unary(TSF.lgamma, input)


@public(inplace=True)
@_out("digamma")
def digamma(input: Tensor) -> Tensor:
    """``d/dx log Γ(x)``; -inf at 0, nan at the negative integers (as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.digamma(torch.tensor([1.]))
        tensor([-0.5772])
    """
    return unary(TSF.digamma, input)


# Note [polygamma's operand order]
# PyTorch's function is polygamma(n, input) but its methods are x.polygamma(n) and
# x.polygamma_(n): one function serves both (the Tensor operand is found by its type), so
# the method and in-place forms that @public derives call it with self first.
@public(inplace=True)
@_out("polygamma")
def polygamma(n: int | Tensor, input: Tensor | int) -> Tensor:
    """The ``n``-th derivative of digamma (Note [polygamma's operand order]).

    Example:
        >>> import retrograd as torch
        >>> torch.polygamma(1, torch.tensor([1.]))
        tensor([1.6449])
    """
    if isinstance(n, Tensor) and not isinstance(input, Tensor):
        n, input = input, n
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n. (n is the order "
                           "of the derivative of digamma: pass n >= 0)")
    return unary(TSF.polygamma, input, int(n))


def _polygamma_inplace(input: Tensor, n: int) -> Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n. (n is the order "
                           "of the derivative of digamma: pass n >= 0)")
    return unary(TSF.polygamma_inplace, input, int(n))


_polygamma_inplace.__name__ = "polygamma"
polygamma.inplace_variant = _polygamma_inplace


@public(inplace=True, name="mvlgamma")
@_out("mvlgamma")
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``.

    Example:
        >>> import retrograd as torch
        >>> torch.mvlgamma(torch.tensor([2.5]), 2)
        tensor([0.8570])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1 (mvlgamma sums p log-gamma "
                           "terms: pass p >= 1)")
    x = input if input._data.dtype in FLOAT_NP else input.float()
    return unary(TSF.mvlgamma, x, int(p))


@public(inplace=True, inplace_function=True)
@_out("erfc")
def erfc(input: Tensor) -> Tensor:
    """``1 - erf(input)``, accurate where erf is near 1.

    Example:
        >>> import retrograd as torch
        >>> torch.erfc(torch.tensor([0.]))
        tensor([1.])
    """
    return unary(TSF.erfc, input)


@public(inplace=True)
@_out("erfinv")
def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1) (±inf at ±1, nan outside).

    Example:
        >>> import retrograd as torch
        >>> torch.erfinv(torch.tensor([0.]))
        tensor([0.])
    """
    return unary(TSF.erfinv, input)


@public(inplace=True, inplace_function=True)
@_out("i0")
def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0.

    Example:
        >>> import retrograd as torch
        >>> torch.i0(torch.tensor([0.]))
        tensor([1.])
    """
    return unary(TSF.i0, input)


@public(inplace=True, inplace_function=True)
@_out("sinc")
def sinc(input: Tensor) -> Tensor:
    """The normalized sinc, ``sin(pi x) / (pi x)`` (1 at 0).

    Example:
        >>> import retrograd as torch
        >>> torch.sinc(torch.tensor([0., 0.5]))
        tensor([1.0000, 0.6366])
    """
    return unary(TSF.sinc, input)


@public(inplace=True, inplace_function=True)
@_out("logit")
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when eps is given.

    Example:
        >>> import retrograd as torch
        >>> torch.logit(torch.tensor([0.5, 0.]), eps=1e-6)
        tensor([  0.0000, -13.8155])
    """
    return unary(TSF.logit, input, -1.0 if eps is None else float(eps))


@public(inplace=True, inplace_function=True)
@_out("deg2rad")
def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians.

    Example:
        >>> import retrograd as torch
        >>> torch.deg2rad(torch.tensor([180.]))
        tensor([3.1416])
    """
    x = input if input._data.dtype in FLOAT_NP else input.float()
    return unary(TSF.deg2rad, x)


@public(inplace=True, inplace_function=True)
@_out("rad2deg")
def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees.

    Example:
        >>> import retrograd as torch
        >>> torch.rad2deg(torch.tensor([3.1415927]))
        tensor([180.])
    """
    x = input if input._data.dtype in FLOAT_NP else input.float()
    return unary(TSF.rad2deg, x)


@public(inplace=True, inplace_function=True)
@_out("asinh")
def asinh(input: Tensor) -> Tensor:
    """The inverse hyperbolic sine.

    Example:
        >>> import retrograd as torch
        >>> torch.asinh(torch.tensor([0.]))
        tensor([0.])
    """
    return unary(TSF.asinh, input)


@public(inplace=True, inplace_function=True)
@_out("acosh")
def acosh(input: Tensor) -> Tensor:
    """The inverse hyperbolic cosine (nan below 1).

    Example:
        >>> import retrograd as torch
        >>> torch.acosh(torch.tensor([1.]))
        tensor([0.])
    """
    return unary(TSF.acosh, input)


@public(inplace=True, inplace_function=True)
@_out("atanh")
def atanh(input: Tensor) -> Tensor:
    """The inverse hyperbolic tangent (±inf at ±1).

    Example:
        >>> import retrograd as torch
        >>> torch.atanh(torch.tensor([0.]))
        tensor([0.])
    """
    return unary(TSF.atanh, input)


def _inplace_variant(op):
    """The function an in-place form computes with (methods.inplace_methods): ``op``'s
    record, PyTorch's in-place overload."""
    def fn(input: Tensor) -> Tensor:
        return unary(op, input)
    fn.__name__ = fn.__qualname__ = op.name
    return fn


asinh.inplace_variant = _inplace_variant(TSF.asinh_inplace)
acosh.inplace_variant = _inplace_variant(TSF.acosh_inplace)
atanh.inplace_variant = _inplace_variant(TSF.atanh_inplace)
arcsinh = alias("arcsinh", asinh, inplace=True, inplace_function=True)
arccosh = alias("arccosh", acosh, inplace=True, inplace_function=True)
arctanh = alias("arctanh", atanh, inplace=True, inplace_function=True)


@public
@per_element_under_vmap
def frexp(input: Tensor) -> tuple[Tensor, Tensor]:
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, |mantissa| in
    [0.5, 1); the exponent is int32 and carries no gradient.

    Example:
        >>> import retrograd as torch
        >>> torch.frexp(torch.tensor([8.]))
        torch.return_types.frexp(
        mantissa=tensor([0.5000]),
        exponent=tensor([4], dtype=torch.int32))
    """
    if input._data.dtype not in FLOAT_NP:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes (convert "
                           "first, e.g. x.float())")
    d = input._data
    e = _make(np.frexp(d.astype(np.float32) if d.dtype.itemsize < 4 else d)[1]
              .astype(np.int32))
    mantissa = unary(TSF.frexp, input, (e,))
    return _Frexp(mantissa, e)


class _Frexp(NamedTuple):
    """``torch.return_types.frexp``: (mantissa, exponent)."""

    mantissa: Tensor
    exponent: Tensor

    def __repr__(self) -> str:
        return (f"torch.return_types.frexp(\nmantissa={self.mantissa!r},\n"
                f"exponent={self.exponent!r})")


# --- two operands ---------------------------------------------------------------------
def _xlogy_like(name: str, ops, input, other) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise invalid_combination(name, (input, other), _XLOGY_SIGNATURES)
    return _binary_overload(*ops, input, other)


@public(inplace=True, inplace_function=True)
@_out("xlogy")
def xlogy(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log(other)``, 0 where input is 0 (unless other is nan).

    Example:
        >>> import retrograd as torch
        >>> torch.xlogy(torch.tensor([0., 2.]), torch.tensor([0., 1.]))
        tensor([0., 0.])
    """
    return _xlogy_like("xlogy", (TSF.xlogy, TSF.xlogy_scalar, TSF.xlogy_rscalar), input, other)


@_out("special_xlog1py")
def xlog1py(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input * log1p(other)``, 0 where input is 0 (``torch.special.xlog1py``).

    Example:
        >>> import retrograd as torch
        >>> torch.special.xlog1py(torch.tensor([0., 2.]), torch.tensor([-1., 0.]))
        tensor([0., 0.])
    """
    return _xlogy_like("special_xlog1py",
                       (TSF.xlog1py, TSF.xlog1py_scalar, TSF.xlog1py_rscalar), input, other)


@_out("special_zeta")
def zeta(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (``torch.special.zeta``).

    Example:
        >>> import retrograd as torch
        >>> torch.special.zeta(torch.tensor([2.]), 1.)
        tensor([1.6449])
    """
    return _xlogy_like("special_zeta", (TSF.zeta, TSF.zeta_scalar, TSF.zeta_rscalar), input, other)


def _two_tensors(fn: str, input, other) -> None:
    if not isinstance(input, Tensor):
        raise not_tensor(fn, "input", 1, input)
    if not isinstance(other, Tensor):
        raise not_tensor(fn, "other", 2, other)


@public(tensor_operand=True)
@_out("logaddexp")
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow.

    Example:
        >>> import retrograd as torch
        >>> torch.logaddexp(torch.tensor([1000.]), torch.tensor([1000.]))
        tensor([1000.6932])
    """
    _two_tensors("logaddexp", input, other)
    _floating_only("logaddexp_cpu", "logaddexp", input, other)
    return binary(TSF.logaddexp, input, other)


@public(tensor_operand=True)
@_out("logaddexp2")
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow.

    Example:
        >>> import retrograd as torch
        >>> torch.logaddexp2(torch.tensor([1.]), torch.tensor([1.]))
        tensor([2.])
    """
    _two_tensors("logaddexp2", input, other)
    _floating_only("logaddexp2_cpu", "logaddexp2", input, other)
    return binary(TSF.logaddexp2, input, other)


@public(inplace=True)
@_out("copysign")
def copysign(input: Tensor, other: Tensor | Number) -> Tensor:
    """``|input|`` with the sign of ``other`` (a tensor or a number).

    Example:
        >>> import retrograd as torch
        >>> torch.copysign(torch.tensor([1., -2.]), -1.)
        tensor([-1., -2.])
    """
    if not isinstance(input, Tensor):
        raise not_tensor("copysign", "input", 1, input)
    return binary(TSF.copysign if isinstance(other, Tensor) else TSF.copysign_scalar, input,
                  other)


@public(inplace=True, tensor_operand=True)
@_out("nextafter")
def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next floating-point value after ``input`` towards ``other``.

    Example:
        >>> import retrograd as torch
        >>> torch.nextafter(torch.tensor([1.], dtype=torch.float64), torch.tensor([2.],
        ...     dtype=torch.float64)) - 1
        tensor([2.2204e-16], dtype=torch.float64)
    """
    _two_tensors("nextafter", input, other)
    _floating_only("nextafter_cpu", "nextafter", input, other)
    return binary(TSF.nextafter, input, other)


@public(inplace=True)
@_out("heaviside")
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 below 0, ``values`` at 0, 1 above (no gradient, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.heaviside(torch.tensor([-1., 0., 2.]), torch.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    _check_heaviside(input, values)
    return binary(TSF.heaviside, input, values)


def _check_heaviside(input, values) -> None:
    if not isinstance(input, Tensor):
        raise not_tensor("heaviside", "input", 1, input)
    if not isinstance(values, Tensor):
        raise not_tensor("heaviside", "values", 2, values)
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes. (convert values first, e.g. values.to(input.dtype))")


def _heaviside_inplace(input: Tensor, values: Tensor) -> Tensor:
    _check_heaviside(input, values)
    return binary(TSF.heaviside_inplace, input, values)


_heaviside_inplace.__name__ = "heaviside"
heaviside.inplace_variant = _heaviside_inplace


@public(inplace=True, inplace_function=True, tensor_operand=True)
@_out("ldexp")
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2**other``.

    Example:
        >>> import retrograd as torch
        >>> torch.ldexp(torch.tensor([1.5]), torch.tensor([3]))
        tensor([12.])
    """
    _two_tensors("ldexp", input, other)
    return binary(TSF.ldexp, input, other)


# --- torch.special only -------------------------------------------------------------
def _special_unary(op, doc_call: str, doc_out: str, summary: str):
    def fn(input: Tensor) -> Tensor:
        return unary(op, input)
    fn.__name__ = fn.__qualname__ = op.name
    fn = _out("special_" + op.name)(fn)
    fn.__doc__ = (f"{summary}\n\n    Example:\n        >>> import retrograd as torch\n"
                  f"        >>> {doc_call}\n        {doc_out}\n")
    return fn


erfcx = _special_unary(TSF.erfcx, "torch.special.erfcx(torch.tensor([0.]))", "tensor([1.])",
                       "The scaled complementary error function ``exp(x**2) * erfc(x)``.")
ndtri = _special_unary(TSF.ndtri, "torch.special.ndtri(torch.tensor([0.5]))", "tensor([0.])",
                       "The inverse of the standard normal CDF.")
log_ndtr = _special_unary(TSF.log_ndtr, "torch.special.log_ndtr(torch.tensor([0.]))",
                          "tensor([-0.6931])", "The log of the standard normal CDF.")
i0e = _special_unary(TSF.i0e, "torch.special.i0e(torch.tensor([0.]))", "tensor([1.])",
                     "The exponentially scaled ``i0``: ``exp(-|x|) * i0(x)``.")
i1 = _special_unary(TSF.i1, "torch.special.i1(torch.tensor([0.]))", "tensor([0.])",
                    "The modified Bessel function of the first kind, order 1.")
i1e = _special_unary(TSF.i1e, "torch.special.i1e(torch.tensor([0.]))", "tensor([0.])",
                     "The exponentially scaled ``i1``: ``exp(-|x|) * i1(x)``.")
entr = _special_unary(TSF.entr, "torch.special.entr(torch.tensor([0.5]))", "tensor([0.3466])",
                      "``-x * log(x)`` (0 at 0, -inf below 0).")
bessel_j0 = _special_unary(TSF.bessel_j0, "torch.special.bessel_j0(torch.tensor([0.]))",
                           "tensor([1.])", "The Bessel function of the first kind, order 0 "
                           "(no gradient, as PyTorch).")
bessel_j1 = _special_unary(TSF.bessel_j1, "torch.special.bessel_j1(torch.tensor([0.]))",
                           "tensor([0.])", "The Bessel function of the first kind, order 1 "
                           "(no gradient, as PyTorch).")


bessel_y0 = _special_unary(TSF.bessel_y0, "torch.special.bessel_y0(torch.tensor([1.]))",
                           "tensor([0.0883])", "The Bessel function of the second kind, "
                           "order 0 (no gradient, as PyTorch).")
bessel_y1 = _special_unary(TSF.bessel_y1, "torch.special.bessel_y1(torch.tensor([1.]))",
                           "tensor([-0.7812])", "The Bessel function of the second kind, "
                           "order 1 (no gradient, as PyTorch).")
modified_bessel_i0 = _special_unary(
    TSF.modified_bessel_i0, "torch.special.modified_bessel_i0(torch.tensor([0.]))",
    "tensor([1.])", "The modified Bessel function of the first kind, order 0 (no gradient, "
    "as PyTorch; ``i0`` has one).")
modified_bessel_i1 = _special_unary(
    TSF.modified_bessel_i1, "torch.special.modified_bessel_i1(torch.tensor([0.]))",
    "tensor([0.])", "The modified Bessel function of the first kind, order 1 (no gradient, "
    "as PyTorch; ``i1`` has one).")
modified_bessel_k0 = _special_unary(
    TSF.modified_bessel_k0, "torch.special.modified_bessel_k0(torch.tensor([1.]))",
    "tensor([0.4210])", "The modified Bessel function of the second kind, order 0 (no "
    "gradient, as PyTorch).")
modified_bessel_k1 = _special_unary(
    TSF.modified_bessel_k1, "torch.special.modified_bessel_k1(torch.tensor([1.]))",
    "tensor([0.6019])", "The modified Bessel function of the second kind, order 1 (no "
    "gradient, as PyTorch).")
scaled_modified_bessel_k0 = _special_unary(
    TSF.scaled_modified_bessel_k0,
    "torch.special.scaled_modified_bessel_k0(torch.tensor([1.]))", "tensor([1.1445])",
    "``exp(x) * modified_bessel_k0(x)`` (no gradient, as PyTorch).")
scaled_modified_bessel_k1 = _special_unary(
    TSF.scaled_modified_bessel_k1,
    "torch.special.scaled_modified_bessel_k1(torch.tensor([1.]))", "tensor([1.6362])",
    "``exp(x) * modified_bessel_k1(x)`` (no gradient, as PyTorch).")
airy_ai = _special_unary(TSF.airy_ai, "torch.special.airy_ai(torch.tensor([0.]))",
                         "tensor([0.3550])", "The Airy function Ai (no gradient, as PyTorch).")
spherical_bessel_j0 = _special_unary(
    TSF.spherical_bessel_j0, "torch.special.spherical_bessel_j0(torch.tensor([0.]))",
    "tensor([1.])", "The spherical Bessel function ``sin(x) / x`` (no gradient, as PyTorch).")


def _igamma(name: str, op, input, other) -> Tensor:
    """igamma/igammac under PyTorch's name for the call (``special_gammainc``...)."""
    if not isinstance(input, Tensor):
        raise not_tensor(name, "input", 1, input)
    if not isinstance(other, Tensor):
        raise not_tensor(name, "other", 2, other)
    _floating_only(f"{op.name}_cpu", name, input, other)
    return binary(op, input, other)


@public(inplace=True, tensor_operand=True)
@_out("igamma")
def igamma(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``
    (``torch.special.gammainc``; differentiable in ``other`` only, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.igamma(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.6321])
    """
    return _igamma("igamma", TSF.igamma, input, other)


@public(inplace=True, tensor_operand=True)
@_out("igammac")
def igammac(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``
    (``torch.special.gammaincc``).

    Example:
        >>> import retrograd as torch
        >>> torch.igammac(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.3679])
    """
    return _igamma("igammac", TSF.igammac, input, other)


@_out("special_gammainc")
def gammainc(input: Tensor, other: Tensor) -> Tensor:
    """``torch.special.gammainc``: ``igamma`` under its name.

    Example:
        >>> import retrograd as torch
        >>> torch.special.gammainc(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.6321])
    """
    return _igamma("special_gammainc", TSF.igamma, input, other)


@_out("special_gammaincc")
def gammaincc(input: Tensor, other: Tensor) -> Tensor:
    """``torch.special.gammaincc``: ``igammac`` under its name.

    Example:
        >>> import retrograd as torch
        >>> torch.special.gammaincc(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.3679])
    """
    return _igamma("special_gammaincc", TSF.igammac, input, other)


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal CDF, ``(1 + erf(x / sqrt(2))) / 2``: PyTorch's composition of
    Scalar overloads (its graph: MulBackward1, AddBackward1, ErfBackward0, MulBackward1).

    Example:
        >>> import retrograd as torch
        >>> torch.special.ndtr(torch.tensor([0.]))
        tensor([0.5000])
    """
    x = input if input._data.dtype in FLOAT_NP else input.float()
    e = unary(TSF.mul_scalar, x, _SQRT1_2).erf()
    r = unary(TSF.mul_scalar, unary(TSF.add_scalar, e, 1.0), 0.5)
    if out is None:
        return r
    # PyTorch's composite writes out= with copy_: autograd goes on through it
    if tuple(out.shape) == tuple(r.shape):
        return out.copy_(r)
    return write_out("special_ndtr", out, r, (input,))


@_out("special_round")
def special_round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """``torch.special.round``: round half to even (PyTorch's ``round.decimals`` overload,
    RoundBackward1, whatever ``decimals``).

    Example:
        >>> import retrograd as torch
        >>> torch.special.round(torch.tensor([0.5, 1.5]))
        tensor([0., 2.])
    """
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(f'"round_vml_cpu" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name]}' (special.round takes "
                                  "a floating-point tensor: convert first, e.g. x.float())")
    return apply(T.round_decimals, (input,), decimals)
