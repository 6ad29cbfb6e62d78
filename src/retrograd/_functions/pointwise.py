"""Elementwise public functions: arithmetic with PyTorch's scalar and ``alpha`` rules,
the unary table functions (``exp``, ``sin``, ...), comparisons and logical ops,
``clamp``, ``where`` (and ``nonzero``, its one-argument form), ``lerp``, ``isclose``.

Example:
    >>> import retrograd as torch
    >>> torch.add(torch.tensor([1., 2.]), torch.tensor([3., 4.]), alpha=2)
    tensor([ 7., 10.])
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from .._core import dtype as D
from .._tensor.tensor import _C_NAMES, _LEGACY_NAMES, Tensor, _make, result_type
from ..ops.argcheck import broadcast_checked, invalid_combination, not_tensor
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import _is_number, apply, binary, unary
from ..ops.op import FLOAT_NP
from ..ops.out_arg import write_out
from ..ops.public import alias, public
from ..ops.records import table as T
from .arguments import _t
from .creation import tensor
from .legacy_forms import value_first, value_first_method

# ----------------------------------------------------------------------------------
# arithmetic


@public(inplace=True)
def add(input: Tensor | int | float | bool, other: Tensor | int | float | bool, *rest,
        alpha: Tensor | int | float | bool = 1, out: Tensor | None = None) -> Tensor:
    """``input + alpha * other`` with broadcasting and type promotion.

    Example:
        >>> import retrograd as torch
        >>> torch.add(torch.ones(2), torch.ones(2), alpha=3)
        tensor([4., 4.])
    """
    if rest:  # Note [Legacy value-first forms] (_functions/legacy_forms.py)
        (other,), alpha = value_first("add", False, "alpha", "Tensor other", (other, *rest),
                                      alpha != 1)
    if out is not None:
        return write_out("add", out, add(input, other, alpha=alpha), (input, other))
    if alpha.__class__ is not int or alpha != 1:
        return _with_alpha(T.add_alpha, T.add, input, other, alpha)
    return binary(T.add, input, other)


@public(inplace=True)
def sub(input: Tensor | int | float | bool, other: Tensor | int | float | bool, *rest,
        alpha: Tensor | int | float | bool = 1, out: Tensor | None = None) -> Tensor:
    """``input - alpha * other``.

    Example:
        >>> import retrograd as torch
        >>> torch.sub(torch.ones(2), 1)
        tensor([0., 0.])
    """
    if rest:  # Note [Legacy value-first forms] (_functions/legacy_forms.py)
        (other,), alpha = value_first("sub", False, "alpha", "Tensor other", (other, *rest),
                                      alpha != 1)
    if out is not None:
        return write_out("sub", out, sub(input, other, alpha=alpha), (input, other))
    if alpha.__class__ is not int or alpha != 1:
        return _with_alpha(T.sub_alpha, T.sub, input, other, alpha)
    return binary(T.sub, input, other)


# the functions the in-place methods add_/sub_ run: the method form's legacy warning
add.inplace_variant = value_first_method("add_", add, "alpha", "Tensor other", 4)
sub.inplace_variant = value_first_method("sub_", sub, "alpha", "Tensor other", 4)


def _with_alpha(op, plain, input, other, alpha) -> Tensor:
    """add/sub with ``alpha``, one node as in PyTorch (alpha: a number, or a 0-d tensor that
    PyTorch reads as one; its checks against the result dtype run in the kernel)."""
    cls = alpha.__class__
    if cls is not int and cls is not float and cls is not bool and cls is not complex:
        if isinstance(alpha, np.generic) or (isinstance(alpha, Tensor) and not alpha._data.ndim):
            alpha = alpha.item()
        else:
            raise TypeError(f"{plain.name}(): argument 'alpha' must be Number, not "
                            f"{type(alpha).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        return binary(plain, input, other)  # the error for two numbers
    return binary(op, input, other, alpha)


subtract = alias("subtract", sub, inplace=True)


@public(inplace=True)
def mul(input: Tensor | int | float | bool, other: Tensor | int | float | bool, *,
        out: Tensor | None = None) -> Tensor:
    """Elementwise product.

    Example:
        >>> import retrograd as torch
        >>> torch.mul(torch.tensor([2.]), 3)
        tensor([6.])
    """
    if out is not None:
        return write_out("mul", out, binary(T.mul, input, other), (input, other))
    return binary(T.mul, input, other)


multiply = alias("multiply", mul, inplace=True)


@public(inplace=True)
def div(input: Tensor | int | float | bool, other: Tensor | int | float | bool, *,
        rounding_mode: str | None = None, out: Tensor | None = None) -> Tensor:
    """True division (ints give floats), or ``rounding_mode='floor'``/``'trunc'``.

    Example:
        >>> import retrograd as torch
        >>> torch.div(torch.tensor([7, -7]), 2, rounding_mode='floor')
        tensor([ 3, -4])
    """
    if out is not None:
        return write_out("div", out, div(input, other, rounding_mode=rounding_mode),
                         (input, other))
    if rounding_mode is None:
        return binary(T.div, input, other)
    if rounding_mode == "floor":
        return binary(T.div_floor, input, other)
    if rounding_mode == "trunc":
        return binary(T.trunc_divide, input, other)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


divide = alias("divide", div, inplace=True)
true_divide = alias("true_divide", div, inplace=True)


def _binary_overload(tensor_op, scalar_op, rscalar_op, input, other) -> Tensor:
    """``input op other`` with PyTorch's overload for the operands (Note [Scalar overloads]
    in ops/records/elementwise.py): Tensor-Tensor, Tensor-Scalar, or Scalar-Tensor."""
    if isinstance(other, Tensor):
        return binary(tensor_op if isinstance(input, Tensor) else rscalar_op, input, other)
    return binary(scalar_op, input, other)


@public
def floor_divide(input: Tensor | int | float | bool, other: Tensor | int | float | bool) -> Tensor:
    """Division rounded toward negative infinity (no gradient, as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.floor_divide(torch.tensor([7.]), 2)
        tensor([3.])
    """
    return _binary_overload(T.floor_divide, T.floor_divide_scalar, T.floor_divide_rscalar,
                            input, other)


@public(inplace=True)
def remainder(input: Tensor, other: Tensor | int | float | bool) -> Tensor:
    """Python-style modulus (sign of the divisor).

    Example:
        >>> import retrograd as torch
        >>> torch.remainder(torch.tensor([-3.]), 2)
        tensor([1.])
    """
    return _binary_overload(T.remainder, T.remainder_scalar, T.remainder_rscalar, input, other)


@public(inplace=True)
def fmod(input: Tensor, other: Tensor | int | float | bool) -> Tensor:
    """C-style modulus (sign of the dividend).

    Example:
        >>> import retrograd as torch
        >>> torch.fmod(torch.tensor([-3.]), 2)
        tensor([-1.])
    """
    if not isinstance(input, Tensor) or not (  # unlike remainder, no (Number, Tensor) form
            isinstance(other, Tensor) or other.__class__ in (int, float, bool) or
            _is_number(other)):
        raise invalid_combination("fmod", (input, other), _FMOD_SIGNATURES)
    return binary(T.fmod if isinstance(other, Tensor) else T.fmod_scalar, input, other)


_FMOD_SIGNATURES = ("Tensor input, Tensor other, *, Tensor out = None",
                    "Tensor input, Number other, *, Tensor out = None")


@public(inplace=True)
def pow(input: Tensor | int | float | bool, exponent: Tensor | int | float | bool) -> Tensor:
    """``input ** exponent`` (either may be a number).

    Example:
        >>> import retrograd as torch
        >>> torch.pow(torch.tensor([3.]), 2)
        tensor([9.])
    """
    return _binary_overload(T.pow, T.pow_scalar, T.pow_rscalar, input, exponent)


@public(inplace=True)
def float_power(input: Tensor, exponent: Tensor | int | float | bool) -> Tensor:
    a = input.double() if isinstance(input, Tensor) else input
    b = exponent.double() if isinstance(exponent, Tensor) else exponent
    return pow(a, b)


@public(inplace=True, tensor_operand=True)
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Angle of (other, input), elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.atan2(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.7854])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("atan2", input, other)
    return binary(T.atan2, input, other)


arctan2 = alias("arctan2", atan2, inplace=True, tensor_operand=True)


@public(inplace=True, tensor_operand=True)
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)``, elementwise, without overflow (floating tensors).

    Example:
        >>> import retrograd as torch
        >>> torch.hypot(torch.tensor([3., 5.]), torch.tensor([4., 12.]))
        tensor([ 5., 13.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("hypot", input, other)
    dt = result_type(input, other)
    if not dt.is_floating_point:
        raise NotImplementedError(
            f'"hypot_cpu" not implemented for \'{_LEGACY_NAMES[dt.name]}\' (hypot takes '
            "floating-point tensors: convert first, e.g. x.float())")
    return binary(T.hypot, input, other)


@public(tensor_operand=True)
def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum (ties share the gradient, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.maximum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
        tensor([3., 5.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("maximum", input, other)
    return binary(T.maximum, input, other)


@public(tensor_operand=True)
def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum.

    Example:
        >>> import retrograd as torch
        >>> torch.minimum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
        tensor([1., 2.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("minimum", input, other)
    return binary(T.minimum, input, other)


@public(tensor_operand=True)
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores NaN: the other operand where one is NaN.

    Example:
        >>> import retrograd as torch
        >>> torch.fmax(torch.tensor([1., float("nan")]), torch.tensor([3., 2.]))
        tensor([3., 2.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("fmax", input, other)
    return binary(T.fmax, input, other)


@public(tensor_operand=True)
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores NaN: the other operand where one is NaN.

    Example:
        >>> import retrograd as torch
        >>> torch.fmin(torch.tensor([1., float("nan")]), torch.tensor([3., 2.]))
        tensor([1., 2.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("fmin", input, other)
    return binary(T.fmin, input, other)


def _not_tensors(fn: str, input, other) -> TypeError:
    """The TypeError of a two-tensor function given a non-tensor (PyTorch's parser
    reports the first such argument)."""
    if not isinstance(input, Tensor):
        return not_tensor(fn, "input", 1, input)
    return not_tensor(fn, "other", 2, other)


def tensor_operand_method(fn, name: str):
    """``Tensor.<name>(other)`` for a function whose operand must be a tensor: the
    method form of PyTorch's TypeError counts positions after ``self``."""
    def method(self, other: Tensor) -> Tensor:
        if not isinstance(other, Tensor):
            raise not_tensor(name, "other", 1, other)
        return fn(self, other)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


@public(inplace=True, inplace_function=True)
def neg(input: Tensor) -> Tensor:
    """``-input``.

    Example:
        >>> import retrograd as torch
        >>> torch.neg(torch.tensor([1.]))
        tensor([-1.])
    """
    if input._data.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return unary(T.neg, input)


negative = alias("negative", neg, inplace=True, inplace_function=True)


# the unary functions of the table: one record each; every one has an in-place method and,
# all but sign, an in-place function (torch.sin_); ``out=`` writes into a given tensor
# (Note [out= arguments] in ops/out_arg.py)


@public(inplace=True, inplace_function=True)
def abs(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The absolute value of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.abs(torch.tensor([-2.]))
        tensor([2.])
    """
    if out is not None:
        return write_out("abs", out, unary(T.abs, input), (input,))
    return unary(T.abs, input)


@public(inplace=True)
def sign(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """-1, 0 or 1 by each element's sign (0 for nan, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.sign(torch.tensor([-2.]))
        tensor([-1.])
    """
    if out is not None:
        return write_out("sign", out, unary(T.sign, input), (input,))
    return unary(T.sign, input)


@public(inplace=True, inplace_function=True)
def floor(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Each element rounded down to an integer value.

    Example:
        >>> import retrograd as torch
        >>> torch.floor(torch.tensor([1.5]))
        tensor([1.])
    """
    if out is not None:
        return write_out("floor", out, unary(T.floor, input), (input,))
    return unary(T.floor, input)


@public(inplace=True, inplace_function=True)
def ceil(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Each element rounded up to an integer value.

    Example:
        >>> import retrograd as torch
        >>> torch.ceil(torch.tensor([1.5]))
        tensor([2.])
    """
    if out is not None:
        return write_out("ceil", out, unary(T.ceil, input), (input,))
    return unary(T.ceil, input)


@public(inplace=True, inplace_function=True)
def trunc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Each element rounded toward zero to an integer value.

    Example:
        >>> import retrograd as torch
        >>> torch.trunc(torch.tensor([-1.5]))
        tensor([-1.])
    """
    if out is not None:
        return write_out("trunc", out, unary(T.trunc, input), (input,))
    return unary(T.trunc, input)


@public(inplace=True, inplace_function=True)
def exp(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``e ** input``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.exp(torch.tensor([0.]))
        tensor([1.])
    """
    if out is not None:
        return write_out("exp", out, unary(T.exp, input), (input,))
    return unary(T.exp, input)


@public(inplace=True, inplace_function=True)
def exp2(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``2 ** input``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.exp2(torch.tensor([3.]))
        tensor([8.])
    """
    if out is not None:
        return write_out("exp2", out, unary(T.exp2, input), (input,))
    return unary(T.exp2, input)


@public(inplace=True, inplace_function=True)
def expm1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``exp(input) - 1``, elementwise, accurate near zero.

    Example:
        >>> import retrograd as torch
        >>> torch.expm1(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("expm1", out, unary(T.expm1, input), (input,))
    return unary(T.expm1, input)


@public(inplace=True, inplace_function=True)
def log(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The natural logarithm of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.log(torch.tensor([1.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("log", out, unary(T.log, input), (input,))
    return unary(T.log, input)


@public(inplace=True, inplace_function=True)
def log2(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The base-2 logarithm of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.log2(torch.tensor([8.]))
        tensor([3.])
    """
    if out is not None:
        return write_out("log2", out, unary(T.log2, input), (input,))
    return unary(T.log2, input)


@public(inplace=True, inplace_function=True)
def log10(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The base-10 logarithm of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.log10(torch.tensor([100.]))
        tensor([2.])
    """
    if out is not None:
        return write_out("log10", out, unary(T.log10, input), (input,))
    return unary(T.log10, input)


@public(inplace=True, inplace_function=True)
def log1p(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``log(1 + input)``, elementwise, accurate near zero.

    Example:
        >>> import retrograd as torch
        >>> torch.log1p(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("log1p", out, unary(T.log1p, input), (input,))
    return unary(T.log1p, input)


@public(inplace=True, inplace_function=True)
def sqrt(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The square root of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.sqrt(torch.tensor([4.]))
        tensor([2.])
    """
    if out is not None:
        return write_out("sqrt", out, unary(T.sqrt, input), (input,))
    return unary(T.sqrt, input)


@public(inplace=True, inplace_function=True)
def rsqrt(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``1 / sqrt(input)``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.rsqrt(torch.tensor([4.]))
        tensor([0.5000])
    """
    if out is not None:
        return write_out("rsqrt", out, unary(T.rsqrt, input), (input,))
    return unary(T.rsqrt, input)


@public(inplace=True, inplace_function=True)
def reciprocal(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``1 / input``, elementwise (integer tensors give floats).

    Example:
        >>> import retrograd as torch
        >>> torch.reciprocal(torch.tensor([4.]))
        tensor([0.2500])
    """
    if out is not None:
        return write_out("reciprocal", out, unary(T.reciprocal, input), (input,))
    return unary(T.reciprocal, input)


@public(inplace=True, inplace_function=True)
def sin(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The sine of each element (in radians).

    Example:
        >>> import retrograd as torch
        >>> torch.sin(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("sin", out, unary(T.sin, input), (input,))
    return unary(T.sin, input)


@public(inplace=True, inplace_function=True)
def cos(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The cosine of each element (in radians).

    Example:
        >>> import retrograd as torch
        >>> torch.cos(torch.tensor([0.]))
        tensor([1.])
    """
    if out is not None:
        return write_out("cos", out, unary(T.cos, input), (input,))
    return unary(T.cos, input)


@public(inplace=True, inplace_function=True)
def tan(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The tangent of each element (in radians).

    Example:
        >>> import retrograd as torch
        >>> torch.tan(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("tan", out, unary(T.tan, input), (input,))
    return unary(T.tan, input)


@public(inplace=True, inplace_function=True)
def asin(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse sine of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.asin(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("asin", out, unary(T.asin, input), (input,))
    return unary(T.asin, input)


@public(inplace=True, inplace_function=True)
def acos(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse cosine of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.acos(torch.tensor([1.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("acos", out, unary(T.acos, input), (input,))
    return unary(T.acos, input)


@public(inplace=True, inplace_function=True)
def atan(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse tangent of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.atan(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("atan", out, unary(T.atan, input), (input,))
    return unary(T.atan, input)


@public(inplace=True, inplace_function=True)
def sinh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The hyperbolic sine of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.sinh(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("sinh", out, unary(T.sinh, input), (input,))
    return unary(T.sinh, input)


@public(inplace=True, inplace_function=True)
def cosh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The hyperbolic cosine of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.cosh(torch.tensor([0.]))
        tensor([1.])
    """
    if out is not None:
        return write_out("cosh", out, unary(T.cosh, input), (input,))
    return unary(T.cosh, input)


@public(inplace=True, inplace_function=True)
def tanh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The hyperbolic tangent of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.tanh(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("tanh", out, unary(T.tanh, input), (input,))
    return unary(T.tanh, input)


@public(inplace=True, inplace_function=True)
def sigmoid(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``1 / (1 + exp(-input))``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.sigmoid(torch.tensor([0.]))
        tensor([0.5000])
    """
    if out is not None:
        return write_out("sigmoid", out, unary(T.sigmoid, input), (input,))
    return unary(T.sigmoid, input)


@public(inplace=True, inplace_function=True)
def relu(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``max(input, 0)``, elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.relu(torch.tensor([-1., 2.]))
        tensor([0., 2.])
    """
    if out is not None:
        return write_out("relu", out, unary(T.relu, input), (input,))
    return unary(T.relu, input)


@public(inplace=True, inplace_function=True)
def erf(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The error function of each element.

    Example:
        >>> import retrograd as torch
        >>> torch.erf(torch.tensor([0.]))
        tensor([0.])
    """
    if out is not None:
        return write_out("erf", out, unary(T.erf, input), (input,))
    return unary(T.erf, input)


absolute = alias("absolute", abs, inplace=True)
arcsin = alias("arcsin", asin, inplace=True, inplace_function=True)
arccos = alias("arccos", acos, inplace=True, inplace_function=True)
arctan = alias("arctan", atan, inplace=True, inplace_function=True)


@public(inplace=True, inplace_function=True)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even (``decimals`` digits).

    Example:
        >>> import retrograd as torch
        >>> torch.round(torch.tensor([0.5, 1.5, 2.567]))
        tensor([0., 2., 3.])
    """
    if decimals == 0:
        return unary(T.round, input)
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(f'"round_cpu" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name]}' (round with decimals "
                                  "takes a floating-point tensor: convert first, e.g. x.float())")
    return apply(T.round_decimals, (input,), decimals)


@public(inplace=True, inplace_function=True)
def square(input: Tensor) -> Tensor:
    """``input ** 2``.

    Example:
        >>> import retrograd as torch
        >>> torch.square(torch.tensor([3.]))
        tensor([9.])
    """
    return binary(T.pow_scalar, input, 2)


@public(inplace=True, inplace_function=True)
def frac(input: Tensor) -> Tensor:
    return input - trunc(input)


@public(inplace=True, inplace_function=True)
def clamp(input: Tensor, min: Tensor | int | float | bool | None = None,
          max: Tensor | int | float | bool | None = None) -> Tensor:
    """Limit values to [min, max]; bounds may be numbers or tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.clamp(torch.tensor([-2., 0.5, 3.]), min=-1, max=1)
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (isinstance(min, Tensor) and not isinstance(max, (Tensor, type(None)))) or (
            isinstance(max, Tensor) and not isinstance(min, (Tensor, type(None)))):
        raise TypeError(f"clamp() received an invalid combination of arguments - got (Tensor, "
                        f"{type(min).__name__}, {type(max).__name__}): the bounds must both be "
                        "tensors or both be numbers (use torch.full_like(x, v) for a number)")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = _t(min, input) if min is not None else None
        hi = _t(max, input) if max is not None else None
        dts = [x for x in (input, lo, hi) if x is not None]
        rdt = result_type(*dts).np
        ins = [input, lo, hi]  # saved as given: an in-place write into a bound is caught,
        # as PyTorch's (it saves them and casts inside its kernel); the kernel casts here
        same = all(x._data.dtype == rdt for x in dts)
        try:
            return apply(T.clamp_tensor, ins, None if same else rdt)
        except ValueError:
            _check_broadcast("clamp", ("input", "min", "max"), ins)
            raise
    rdt = result_type(input, *(v for v in (min, max) if v is not None))
    x = input if input.dtype == rdt else input.to(rdt)
    return unary(T.clamp, x, (min, max))


clip = alias("clip", clamp, inplace=True, inplace_function=True)


@public(inplace=True, inplace_function=True)
def clamp_min(input: Tensor, min: Tensor | int | float | bool) -> Tensor:
    if min.__class__ in (int, float) and isinstance(input, Tensor) and \
            input._data.dtype in FLOAT_NP and min == min:
        return unary(T.clamp_min, input, (min, None))  # ClampMinBackward0, as PyTorch
    return clamp(input, min=min)


@public(inplace=True, inplace_function=True)
def clamp_max(input: Tensor, max: Tensor | int | float | bool) -> Tensor:
    if max.__class__ in (int, float) and isinstance(input, Tensor) and \
            input._data.dtype in FLOAT_NP and max == max:
        return unary(T.clamp_max, input, (None, max))  # ClampMaxBackward0, as PyTorch
    return clamp(input, max=max)


@public(method=False)
def where(condition: Tensor, input: Tensor | int | float | bool | None = None,
          other: Tensor | int | float | bool | None = None) -> Tensor:
    """Elementwise ``input if condition else other`` (numbers allowed).

    Example:
        >>> import retrograd as torch
        >>> torch.where(torch.tensor([True, False]), torch.ones(2), 0.0)
        tensor([1., 0.])
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = condition if isinstance(condition, Tensor) else tensor(condition)
    if cond._data.dtype != np.bool_:
        if cond._data.dtype == np.uint8:
            cond = _make(cond._data.astype(np.bool_))
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {cond.dtype}")
    ti, to = isinstance(input, Tensor), isinstance(other, Tensor)
    if ti and to:
        rdt = result_type(input, other)
    elif ti:
        rdt = result_type(input, other)
    elif to:
        rdt = result_type(input, other)
    else:
        rdt = D.result_type_of([], [], [input, other])
    a = input if ti else _make(np.asarray(input, dtype=rdt.np))
    b = other if to else _make(np.asarray(other, dtype=rdt.np))
    dt = rdt.np
    try:  # mixed dtypes are promoted by the kernel: no ToCopy node (PyTorch's graph)
        if a._data.dtype is dt and b._data.dtype is dt:
            return apply(T.where, (cond, a, b))
        return apply(T.where, (cond, a, b), dt)
    except ValueError:
        _check_broadcast("where", ("condition", "input", "other"), (cond, a, b))
        raise


def _check_broadcast(fn, names, tensors) -> None:
    """Raise PyTorch's broadcasting error (RuntimeError, "The size of tensor a (m) must
    match the size of tensor b (n) at non-singleton dimension k") for ``tensors`` that do
    not broadcast, naming ``fn``, the arguments and their shapes."""
    present = [(nm, t._data.shape) for nm, t in zip(names, tensors) if t is not None]
    broadcast_checked(fn, tuple(nm for nm, _ in present), tuple(sh for _, sh in present))


@public(inplace=True)
def lerp(input: Tensor, end: Tensor, weight: Tensor | int | float | bool) -> Tensor:
    """``input + weight * (end - input)``, computed as PyTorch does.

    Example:
        >>> import retrograd as torch
        >>> torch.lerp(torch.zeros(2), torch.ones(2), 0.25)
        tensor([0.2500, 0.2500])
    """
    if not isinstance(end, Tensor) or not isinstance(input, Tensor) or not (
            isinstance(weight, Tensor) or _is_number(weight)):
        raise invalid_combination("lerp", (input, end, weight), _LERP_SIGNATURES)
    dt = input._data.dtype
    if end._data.dtype != dt:
        raise _lerp_dtype_error("end", input, end)
    if isinstance(weight, Tensor):
        w = weight
        if weight._data.dtype != dt:
            if weight._data.ndim:
                raise _lerp_dtype_error("weight", input, weight)
            # Note [lerp dtypes]: a 0-d weight is promoted with the operands, as a
            # TensorIterator input (int and float weights work; float32 stays float32)
            rdt = result_type(input, weight)
            input, end, w = (x if x._data.dtype == rdt.np else x.to(rdt)
                             for x in (input, end, weight))
            dt = rdt.np
        kernel = "lerp_kernel_tensor"
        args = (input, end, w)
    else:  # a number: a parameter of the node (LerpBackward0), as PyTorch's lerp.Scalar
        kernel = "lerp_kernel_scalar"
        args = (input, end)
    if dt not in FLOAT_NP:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name]}' (lerp interpolates "
                                  "floating-point tensors: convert first, e.g. x.float())")
    try:
        if len(args) == 3:
            return apply(T.lerp, args)
        return apply(T.lerp_scalar, args, weight)
    except ValueError:
        _check_broadcast("lerp", ("input", "end", "weight"), args)
        raise


# Note [lerp dtypes]
# PyTorch's lerp is stricter than the binary ops: ``end`` must have the dtype of
# ``input`` ("expected dtype float for `end` but got dtype double"), and so must a
# weight tensor with dimensions; a 0-d weight tensor is promoted with them instead (the
# result may then be float64, or float32 from int64 operands), and a Python number
# weight takes input's dtype. Integer and bool results have no kernel.
_LERP_SIGNATURES = ("Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
                    "Tensor input, Tensor end, Number weight, *, Tensor out = None")


_LERP_METHOD_SIGNATURES = ("Tensor end, Tensor weight", "Tensor end, Number weight")


def lerp_method(fn, name: str):
    """``Tensor.lerp`` / ``Tensor.lerp_`` (``fn``): PyTorch's method-form TypeError for an
    ``end`` that is not a tensor, then ``fn``."""
    def method(self, end: Tensor, weight: Tensor | int | float | bool) -> Tensor:
        if not isinstance(end, Tensor) or not (isinstance(weight, Tensor) or
                                               _is_number(weight)):
            raise invalid_combination(name, (end, weight), _LERP_METHOD_SIGNATURES)
        return fn(self, end, weight)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def _lerp_dtype_error(arg: str, input, other) -> RuntimeError:
    want, got = _C_NAMES[input.dtype.name], _C_NAMES[other.dtype.name]
    return RuntimeError(f"expected dtype {want} for `{arg}` but got dtype {got} (lerp does not "
                        f"promote: convert {arg}, e.g. {arg}.to({input.dtype}))")


# comparisons and logical and bitwise ops: one record each (no gradient); each has an
# in-place method (x.eq_(y) writes 0/1 in x's dtype)


@public(inplace=True)
def eq(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input == other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.eq(torch.tensor([1, 2]), 2)
        tensor([False,  True])
    """
    return binary(T._CMP["eq"], input, other)


@public(inplace=True)
def ne(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input != other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.ne(torch.tensor([1, 2]), 2)
        tensor([ True, False])
    """
    return binary(T._CMP["ne"], input, other)


@public(inplace=True)
def lt(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input < other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.lt(torch.tensor([1, 2]), 2)
        tensor([ True, False])
    """
    return binary(T._CMP["lt"], input, other)


@public(inplace=True)
def le(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input <= other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.le(torch.tensor([1, 2]), 2)
        tensor([True, True])
    """
    return binary(T._CMP["le"], input, other)


@public(inplace=True)
def gt(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input > other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.gt(torch.tensor([1, 2]), 1)
        tensor([False,  True])
    """
    return binary(T._CMP["gt"], input, other)


@public(inplace=True)
def ge(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """``input >= other``, elementwise: a bool tensor (no gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.ge(torch.tensor([1, 2]), 2)
        tensor([False,  True])
    """
    return binary(T._CMP["ge"], input, other)


@public(inplace=True)
def logical_and(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise logical and of the truth of each element (a bool tensor).

    Example:
        >>> import retrograd as torch
        >>> torch.logical_and(torch.tensor([True, False]), torch.tensor([True, True]))
        tensor([ True, False])
    """
    return binary(T._CMP["logical_and"], input, other)


@public(inplace=True)
def logical_or(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise logical or of the truth of each element (a bool tensor).

    Example:
        >>> import retrograd as torch
        >>> torch.logical_or(torch.tensor([True, False]), torch.tensor([0, 0]))
        tensor([ True, False])
    """
    return binary(T._CMP["logical_or"], input, other)


@public(inplace=True)
def logical_xor(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise logical exclusive or of the truth of each element (a bool tensor).

    Example:
        >>> import retrograd as torch
        >>> torch.logical_xor(torch.tensor([True, False]), torch.tensor([1., 1.]))
        tensor([False,  True])
    """
    return binary(T._CMP["logical_xor"], input, other)


@public(inplace=True)
def bitwise_and(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise bitwise and of integer or bool tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_and(torch.tensor([12, 10]), 6)
        tensor([4, 2])
    """
    return _bitwise("bitwise_and", input, other)


@public(inplace=True)
def bitwise_or(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise bitwise or of integer or bool tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_or(torch.tensor([12, 10]), 6)
        tensor([14, 14])
    """
    return _bitwise("bitwise_or", input, other)


@public(inplace=True)
def bitwise_xor(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    """Elementwise bitwise exclusive or of integer or bool tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_xor(torch.tensor([12, 10]), 6)
        tensor([10, 12])
    """
    return _bitwise("bitwise_xor", input, other)


def _bitwise(name: str, input, other) -> Tensor:
    """A bitwise op, with PyTorch's NotImplementedError for a floating result type
    (NumPy's ufunc raises a TypeError of its own)."""
    try:
        return binary(T._CMP[name], input, other)
    except TypeError:
        dt = result_type(input, other)
        if dt.is_floating_point:
            raise NotImplementedError(
                f'"{name}_cpu" not implemented for \'{_LEGACY_NAMES[dt.name]}\' (bitwise ops take '
                "integer or bool tensors: convert, e.g. x.long())") from None
        raise


greater = alias("greater", gt, inplace=True)
greater_equal = alias("greater_equal", ge, inplace=True)
less = alias("less", lt, inplace=True)
less_equal = alias("less_equal", le, inplace=True)
not_equal = alias("not_equal", ne, inplace=True)


@public(inplace=True)
@per_element_under_vmap
def logical_not(input: Tensor) -> Tensor:
    """Elementwise not (bool result).

    Example:
        >>> import retrograd as torch
        >>> torch.logical_not(torch.tensor([True, False]))
        tensor([False,  True])
    """
    return _make(np.logical_not(input._data))


@public(inplace=True)
@per_element_under_vmap
def bitwise_not(input: Tensor) -> Tensor:
    """``~input`` for bool and integer tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_not(torch.tensor([True]))
        tensor([False])
    """
    if input._data.dtype in FLOAT_NP:
        raise TypeError("bitwise_not is only supported for integer and boolean tensors, got "
                        f"{input.dtype}")
    return _make(np.asarray(np.invert(input._data)))


@public
def isnan(input: Tensor) -> Tensor:
    """Elementwise NaN test.

    Example:
        >>> import retrograd as torch
        >>> torch.isnan(torch.tensor([float('nan'), 1.]))
        tensor([ True, False])
    """
    return _make(np.asarray(np.isnan(input._data)))


@public
def isinf(input: Tensor) -> Tensor:
    return _make(np.asarray(np.isinf(input._data)))


@public
def isfinite(input: Tensor) -> Tensor:
    return _make(np.asarray(np.isfinite(input._data)))


@public
def isposinf(input: Tensor) -> Tensor:
    return _make(np.asarray(np.isposinf(input._data)))


@public
def isneginf(input: Tensor) -> Tensor:
    return _make(np.asarray(np.isneginf(input._data)))


@public(inplace=True, inplace_function=True)
def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replace NaN and infinities (gradient flows where values are kept).

    Example:
        >>> import retrograd as torch
        >>> torch.nan_to_num(torch.tensor([float('nan'), 2.]))
        tensor([0., 2.])
    """
    return apply(T.nan_to_num, (input,), (nan, posinf, neginf))


@public
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when all elements are close: |input - other| <= atol + rtol * |other|.

    Example:
        >>> import retrograd as torch
        >>> torch.allclose(torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]))
        True
    """
    return bool(np.allclose(_np(input), _np(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


@public
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise closeness test.

    Example:
        >>> import retrograd as torch
        >>> torch.isclose(torch.tensor([1., 2.]), torch.tensor([1., 2.1]))
        tensor([ True, False])
    """
    return _make(np.asarray(np.isclose(_np(input), _np(other), rtol=rtol, atol=atol,
                                       equal_nan=equal_nan)))


@public
def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and elements.

    Example:
        >>> import retrograd as torch
        >>> torch.equal(torch.ones(2), torch.ones(2))
        True
    """
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data,
                                                                           other._data))


def _np(x):
    if isinstance(x, Tensor):
        d = x._data
        return d.astype(np.float32) if d.dtype == D.bfloat16.np else d
    return np.asarray(x)


@public
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """Indices of non-zero elements.

    Example:
        >>> import retrograd as torch
        >>> torch.nonzero(torch.tensor([0, 3, 0, 4]))
        tensor([[1],
                [3]])
    """
    nz = np.nonzero(input._data)
    if as_tuple:
        return tuple(_make(a.astype(np.int64)) for a in nz)
    return _make(np.stack(nz, axis=1).astype(np.int64) if nz else np.zeros((0, 0), np.int64))


@public
def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)
