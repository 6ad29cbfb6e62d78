"""Public tensor functions (``retrograd.add``, ``Tensor.sum``, ...), built on the table.

Each function normalises PyTorch's arguments and calls one primitive, or composes
several (softmax, var, lerp-free composites...). The same function serves as the
``retrograd.name`` function and the ``Tensor.name`` method (see ``install_methods``).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    >>> x.sum(dim=1)
    tensor([3., 7.], grad_fn=<SumBackward1>)
"""

from __future__ import annotations

import builtins
import collections
import copy
import math

import numpy as np

from .. import _dtype as D
from .._grad_mode import STATE
from .._size import Size
from .._tensor import (
    _C_NAMES,
    _LEGACY_NAMES,
    Tensor,
    _make,
    _wrap_dim,
    check_inference_write,
    mark_views_requiring_grad,
    track_view,
)
from ..autograd.forward_ad import FW as _FW
from ..autograd.forward_ad import inplace_tangent as _inplace_tangent
from ..autograd.node import _LEGACY, RELEASED
from ..autograd.provenance import mark as _cut_mark
from . import buffers as _buffers
from . import overlap as _overlap
from . import table as T
from ._core import _LOW, FLOAT_NP, Op, record
from ._core import any_requires_grad as _any_rg
from .argcheck import invalid_combination, not_tensor
from .creation import tensor, zeros
from .dispatch import (
    _is_number,
    _mismatch,
    apply,
    base_positions,
    binary,
    check_view_rebase,
    move_retain,
    replay_view,
    unary,
    view_apply,
)
from .dispatch import scalar_array as _scalar_array
from .out_arg import write_out

__all__ = [
    "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "float_power", "atan2",
    "maximum", "minimum", "neg", "round", "square", "frac", "clamp", "clamp_min", "clamp_max",
    "where", "lerp", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf",
    "isneginf", "nan_to_num", "allclose", "isclose", "equal", "sum", "mean", "nansum", "nanmean",
    "prod", "max", "min", "amax", "amin", "aminmax", "argmax", "argmin", "all", "any",
    "count_nonzero", "var", "std", "var_mean", "std_mean", "logsumexp", "cumsum", "cumprod",
    "vector_norm", "norm", "dist", "matmul", "mm", "bmm", "mv", "dot", "outer", "addmm", "einsum",
    "tensordot", "view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
    "unsqueeze", "permute", "transpose", "t", "movedim", "expand", "expand_as", "broadcast_to",
    "broadcast_tensors", "broadcast_shapes", "sum_to_size", "repeat", "tile", "repeat_interleave",
    "flip", "fliplr", "flipud", "roll", "cat", "stack", "hstack", "vstack", "split",
    "tensor_split", "chunk", "unbind", "narrow", "select", "diagonal", "diag", "trace", "tril",
    "as_strided", "index_copy", "index_fill",
    "triu", "index_put", "gather", "scatter", "scatter_add", "index_select", "index_add",
    "masked_fill", "masked_select", "take_along_dim", "take", "nonzero", "argwhere", "sort",
    "argsort", "topk", "kthvalue", "median", "clone", "bernoulli", "multinomial", "subtract",
    "multiply", "divide", "arctan2", "fmax", "fmin", "negative", "absolute", "arcsin", "arccos",
    "arctan", "clip", "greater", "greater_equal", "less", "less_equal", "not_equal", "inner",
    "ger", "swapaxes", "moveaxis", "concat"
]

_py_sum = builtins.sum
_py_max = builtins.max
_py_min = builtins.min
_py_abs = builtins.abs
_py_round = builtins.round


def _t(x, like=None) -> Tensor:
    """A Tensor for ``x`` (numbers become 0-d tensors of the promoted dtype)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        dt = D.result_type(like, x)
        return _make(np.asarray(x, dtype=dt.np))
    return tensor(x)


def _dims(dim, ndim: int):
    """Normalise a ``dim`` argument to a sorted tuple of non-negative axes or None."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        d = _wrap_dim(int(dim), ndim)
        return None if ndim == 0 else (d,)  # dim 0/-1 of a 0-d tensor: all of it
    dims = tuple(_wrap_dim(int(d), ndim) for d in dim)
    if not dims or ndim == 0:
        return None
    if len(set(dims)) != len(dims):
        dup = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims (list each "
                           "dim once)")
    return tuple(sorted(dims))


# ----------------------------------------------------------------------------------
# arithmetic


def add(input, other, *, alpha=1, out=None) -> Tensor:  # noqa: A002
    """``input + alpha * other`` with broadcasting and type promotion.

    Example:
        >>> import retrograd as torch
        >>> torch.add(torch.ones(2), torch.ones(2), alpha=3)
        tensor([4., 4.])
    """
    if out is not None:
        return write_out("add", out, add(input, other, alpha=alpha), (input, other))
    if alpha.__class__ is not int or alpha != 1:
        return _with_alpha(T.add_alpha, T.add, input, other, alpha)
    return binary(T.add, input, other)


def sub(input, other, *, alpha=1, out=None) -> Tensor:  # noqa: A002
    """``input - alpha * other``.

    Example:
        >>> import retrograd as torch
        >>> torch.sub(torch.ones(2), 1)
        tensor([0., 0.])
    """
    if out is not None:
        return write_out("sub", out, sub(input, other, alpha=alpha), (input, other))
    if alpha.__class__ is not int or alpha != 1:
        return _with_alpha(T.sub_alpha, T.sub, input, other, alpha)
    return binary(T.sub, input, other)


def _with_alpha(op, plain, input, other, alpha) -> Tensor:  # noqa: A002
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


subtract = sub


def mul(input, other, *, out=None) -> Tensor:  # noqa: A002
    """Elementwise product.

    Example:
        >>> import retrograd as torch
        >>> torch.mul(torch.tensor([2.]), 3)
        tensor([6.])
    """
    if out is not None:
        return write_out("mul", out, binary(T.mul, input, other), (input, other))
    return binary(T.mul, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:  # noqa: A002
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


divide = true_divide = div


def floor_divide(input, other) -> Tensor:  # noqa: A002
    """Division rounded toward negative infinity (no gradient, as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.floor_divide(torch.tensor([7.]), 2)
        tensor([3.])
    """
    if isinstance(other, Tensor):  # Note [Scalar overloads] (ops/table.py)
        return binary(T.floor_divide if isinstance(input, Tensor) else T.floor_divide_rscalar,
                      input, other)
    return binary(T.floor_divide_scalar, input, other)


def remainder(input, other) -> Tensor:  # noqa: A002
    """Python-style modulus (sign of the divisor).

    Example:
        >>> import retrograd as torch
        >>> torch.remainder(torch.tensor([-3.]), 2)
        tensor([1.])
    """
    if isinstance(other, Tensor):  # Note [Scalar overloads] (ops/table.py)
        return binary(T.remainder if isinstance(input, Tensor) else T.remainder_rscalar,
                      input, other)
    return binary(T.remainder_scalar, input, other)


def fmod(input, other) -> Tensor:  # noqa: A002
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


def pow(input, exponent) -> Tensor:  # noqa: A001,A002
    """``input ** exponent`` (either may be a number).

    Example:
        >>> import retrograd as torch
        >>> torch.pow(torch.tensor([3.]), 2)
        tensor([9.])
    """
    if isinstance(exponent, Tensor):  # Note [Scalar overloads] (ops/table.py)
        return binary(T.pow if isinstance(input, Tensor) else T.pow_rscalar, input, exponent)
    return binary(T.pow_scalar, input, exponent)


def float_power(input, exponent) -> Tensor:  # noqa: A002
    a = input.double() if isinstance(input, Tensor) else input
    b = exponent.double() if isinstance(exponent, Tensor) else exponent
    return pow(a, b)


def atan2(input, other) -> Tensor:  # noqa: A002
    """Angle of (other, input), elementwise.

    Example:
        >>> import retrograd as torch
        >>> torch.atan2(torch.tensor([1.]), torch.tensor([1.]))
        tensor([0.7854])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("atan2", input, other)
    return binary(T.atan2, input, other)


arctan2 = atan2


def maximum(input, other) -> Tensor:  # noqa: A002
    """Elementwise maximum (ties share the gradient, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.maximum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
        tensor([3., 5.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("maximum", input, other)
    return binary(T.maximum, input, other)


def minimum(input, other) -> Tensor:  # noqa: A002
    """Elementwise minimum.

    Example:
        >>> import retrograd as torch
        >>> torch.minimum(torch.tensor([1., 5.]), torch.tensor([3., 2.]))
        tensor([1., 2.])
    """
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise _not_tensors("minimum", input, other)
    return binary(T.minimum, input, other)


fmax, fmin = maximum, minimum


def _not_tensors(fn: str, input, other) -> TypeError:  # noqa: A002
    """The TypeError of a two-tensor function given a non-tensor (PyTorch's parser
    reports the first such argument)."""
    if not isinstance(input, Tensor):
        return not_tensor(fn, "input", 1, input)
    return not_tensor(fn, "other", 2, other)


def tensor_operand_method(fn, name: str):
    """``Tensor.<name>(other)`` for a function whose operand must be a tensor: the
    method form of PyTorch's TypeError counts positions after ``self``."""
    def method(self, other) -> Tensor:
        if not isinstance(other, Tensor):
            raise not_tensor(name, "other", 1, other)
        return fn(self, other)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def neg(input) -> Tensor:  # noqa: A002
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


negative = neg


def _unary_fn(op, doc_example: str):
    def fn(input, *, out=None) -> Tensor:  # noqa: A002
        if out is not None:  # Note [out= arguments] (ops/out_arg.py)
            return write_out(op.name, out, unary(op, input), (input,))
        return unary(op, input)
    fn.__name__ = op.name
    fn.__qualname__ = op.name
    fn.__doc__ = (f"Elementwise ``{op.name}``.\n\n    Example:\n        >>> import retrograd as "
                  f"torch\n        >>> {doc_example}\n")
    return fn


_UNARY_EXAMPLES = {
    "abs": "torch.abs(torch.tensor([-2.]))\n        tensor([2.])",
    "sign": "torch.sign(torch.tensor([-2.]))\n        tensor([-1.])",
    "floor": "torch.floor(torch.tensor([1.5]))\n        tensor([1.])",
    "ceil": "torch.ceil(torch.tensor([1.5]))\n        tensor([2.])",
    "trunc": "torch.trunc(torch.tensor([-1.5]))\n        tensor([-1.])",
    "exp": "torch.exp(torch.tensor([0.]))\n        tensor([1.])",
    "exp2": "torch.exp2(torch.tensor([3.]))\n        tensor([8.])",
    "expm1": "torch.expm1(torch.tensor([0.]))\n        tensor([0.])",
    "log": "torch.log(torch.tensor([1.]))\n        tensor([0.])",
    "log2": "torch.log2(torch.tensor([8.]))\n        tensor([3.])",
    "log10": "torch.log10(torch.tensor([100.]))\n        tensor([2.])",
    "log1p": "torch.log1p(torch.tensor([0.]))\n        tensor([0.])",
    "sqrt": "torch.sqrt(torch.tensor([4.]))\n        tensor([2.])",
    "rsqrt": "torch.rsqrt(torch.tensor([4.]))\n        tensor([0.5000])",
    "reciprocal": "torch.reciprocal(torch.tensor([4.]))\n        tensor([0.2500])",
    "sin": "torch.sin(torch.tensor([0.]))\n        tensor([0.])",
    "cos": "torch.cos(torch.tensor([0.]))\n        tensor([1.])",
    "tan": "torch.tan(torch.tensor([0.]))\n        tensor([0.])",
    "asin": "torch.asin(torch.tensor([0.]))\n        tensor([0.])",
    "acos": "torch.acos(torch.tensor([1.]))\n        tensor([0.])",
    "atan": "torch.atan(torch.tensor([0.]))\n        tensor([0.])",
    "sinh": "torch.sinh(torch.tensor([0.]))\n        tensor([0.])",
    "cosh": "torch.cosh(torch.tensor([0.]))\n        tensor([1.])",
    "tanh": "torch.tanh(torch.tensor([0.]))\n        tensor([0.])",
    "sigmoid": "torch.sigmoid(torch.tensor([0.]))\n        tensor([0.5000])",
    "relu": "torch.relu(torch.tensor([-1., 2.]))\n        tensor([0., 2.])",
    "erf": "torch.erf(torch.tensor([0.]))\n        tensor([0.])",
}
_g = globals()
for _name, _ex in _UNARY_EXAMPLES.items():
    _g[_name] = _unary_fn(getattr(T, _name), _ex)
absolute = _g["abs"]
arcsin, arccos, arctan = _g["asin"], _g["acos"], _g["atan"]


def round(input, *, decimals: int = 0) -> Tensor:  # noqa: A001,A002
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


def square(input) -> Tensor:  # noqa: A002
    """``input ** 2``.

    Example:
        >>> import retrograd as torch
        >>> torch.square(torch.tensor([3.]))
        tensor([9.])
    """
    return binary(T.pow_scalar, input, 2)


def frac(input) -> Tensor:  # noqa: A002
    return input - trunc(input)  # noqa: F821


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A001,A002
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
        rdt = D.result_type(*dts)
        ins = [x if x is None or x.dtype == rdt else x.to(rdt) for x in (input, lo, hi)]
        try:
            return apply(T.clamp_tensor, ins)
        except ValueError:
            _check_broadcast("clamp", ("input", "min", "max"), ins)
            raise
    rdt = D.result_type(input, *(v for v in (min, max) if v is not None))
    x = input if input.dtype == rdt else input.to(rdt)
    return unary(T.clamp, x, (min, max))


clip = clamp


def clamp_min(input, min) -> Tensor:  # noqa: A001,A002
    if min.__class__ in (int, float) and isinstance(input, Tensor) and \
            input._data.dtype in FLOAT_NP and min == min:
        return unary(T.clamp_min, input, (min, None))  # ClampMinBackward0, as PyTorch
    return clamp(input, min=min)


def clamp_max(input, max) -> Tensor:  # noqa: A001,A002
    if max.__class__ in (int, float) and isinstance(input, Tensor) and \
            input._data.dtype in FLOAT_NP and max == max:
        return unary(T.clamp_max, input, (None, max))  # ClampMaxBackward0, as PyTorch
    return clamp(input, max=max)


def where(condition, input=None, other=None) -> Tensor:  # noqa: A002
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
        rdt = D.result_type(input, other)
    elif ti:
        rdt = D.result_type(input, other)
    elif to:
        rdt = D.result_type(input, other)
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
    shape: tuple = ()
    for t in tensors:
        if t is None:
            continue
        ts = tuple(t._data.shape)
        try:
            shape = np.broadcast_shapes(shape, ts)
        except ValueError:
            a, b, k = _mismatch(shape, ts)
            desc = ", ".join(f"{nm} {tuple(x._data.shape)}" for nm, x in zip(names, tensors)
                             if x is not None)
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {k}. {fn} got shapes {desc}, which do not broadcast: "
                "line the dimensions up from the right; each pair must be equal or one of them "
                "1 (use unsqueeze/reshape/expand).") from None


def lerp(input, end, weight) -> Tensor:  # noqa: A002
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
            rdt = D.result_type(input, weight)
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
    def method(self, end, weight) -> Tensor:
        if not isinstance(end, Tensor) or not (isinstance(weight, Tensor) or
                                               _is_number(weight)):
            raise invalid_combination(name, (end, weight), _LERP_METHOD_SIGNATURES)
        return fn(self, end, weight)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def _lerp_dtype_error(arg: str, input, other) -> RuntimeError:  # noqa: A002
    want, got = _C_NAMES[input.dtype.name], _C_NAMES[other.dtype.name]
    return RuntimeError(f"expected dtype {want} for `{arg}` but got dtype {got} (lerp does not "
                        f"promote: convert {arg}, e.g. {arg}.to({input.dtype}))")


def _cmp(name):
    op = T._CMP[name]

    def fn(input, other) -> Tensor:  # noqa: A002
        return binary(op, input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` (a bool tensor, no gradient).\n\n    Example:\n"
                  f"        >>> import retrograd as torch\n        >>> torch.{name}(torch.tensor"
                  f"([1, 2]), 2).dtype\n        torch.bool\n")
    if name.startswith("bitwise"):
        fn.__doc__ = f"Elementwise ``{name}`` of integer or bool tensors."
    return fn


for _name in T._CMP:
    _g[_name] = _cmp(_name)
greater, greater_equal, less, less_equal, not_equal = (_g["gt"], _g["ge"], _g["lt"], _g["le"],
                                                      _g["ne"])


def logical_not(input) -> Tensor:  # noqa: A002
    """Elementwise not (bool result).

    Example:
        >>> import retrograd as torch
        >>> torch.logical_not(torch.tensor([True, False]))
        tensor([False,  True])
    """
    return _make(np.logical_not(input._data))


def bitwise_not(input) -> Tensor:  # noqa: A002
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


def isnan(input) -> Tensor:  # noqa: A002
    """Elementwise NaN test.

    Example:
        >>> import retrograd as torch
        >>> torch.isnan(torch.tensor([float('nan'), 1.]))
        tensor([ True, False])
    """
    return _make(np.asarray(np.isnan(input._data)))


def isinf(input) -> Tensor:  # noqa: A002
    return _make(np.asarray(np.isinf(input._data)))


def isfinite(input) -> Tensor:  # noqa: A002
    return _make(np.asarray(np.isfinite(input._data)))


def isposinf(input) -> Tensor:  # noqa: A002
    return _make(np.asarray(np.isposinf(input._data)))


def isneginf(input) -> Tensor:  # noqa: A002
    return _make(np.asarray(np.isneginf(input._data)))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor:  # noqa: A002
    """Replace NaN and infinities (gradient flows where values are kept).

    Example:
        >>> import retrograd as torch
        >>> torch.nan_to_num(torch.tensor([float('nan'), 2.]))
        tensor([0., 2.])
    """
    return apply(T.nan_to_num, (input,), (nan, posinf, neginf))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when all elements are close: |input - other| <= atol + rtol * |other|.

    Example:
        >>> import retrograd as torch
        >>> torch.allclose(torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]))
        True
    """
    return bool(np.allclose(_np(input), _np(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """Elementwise closeness test.

    Example:
        >>> import retrograd as torch
        >>> torch.isclose(torch.tensor([1., 2.]), torch.tensor([1., 2.1]))
        tensor([ True, False])
    """
    return _make(np.asarray(np.isclose(_np(input), _np(other), rtol=rtol, atol=atol,
                                       equal_nan=equal_nan)))


def equal(input, other) -> bool:  # noqa: A002
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


# ----------------------------------------------------------------------------------
# reductions

ReturnTypes = {}


def _rt(name):
    """PyTorch's ``torch.return_types.<name>`` (values, indices) named tuple."""
    if name not in ReturnTypes:
        base = collections.namedtuple(name, ["values", "indices"])

        def __repr__(self):
            return (f"torch.return_types.{name}(\nvalues={self.values!r},\n"
                    f"indices={self.indices!r})")
        ReturnTypes[name] = type(name, (base,), {"__repr__": __repr__, "__slots__": ()})
    return ReturnTypes[name]


def _sum_dtype(x, dtype):
    if dtype is not None:
        return D.as_dtype(dtype).np
    if x._data.dtype.kind in "biu":
        return np.dtype(np.int64)
    return None


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001,A002
    """Sum over all elements or over ``dim`` (ints and bools sum to int64).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
        tensor([4., 6.])
    """
    axes = _dims(dim, input._data.ndim)
    x = input
    dt = _sum_dtype(x, dtype)
    if dt is not None and dt in FLOAT_NP and x._data.dtype != dt:
        x, dt = x.to(dt), None
    op = T.sum if axes is None and not keepdim and dim is None else _SUM1
    return apply(op, (x,), (axes, keepdim, dt))


_SUM1 = Op("sum", T._sum_fwd, T.sum.vjp, node_name="SumBackward1")


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """Mean over all elements or over ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).mean()
        tensor(2.5000)
    """
    x = input if dtype is None else input.to(dtype)
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_legacy_name(x.dtype)}. Convert first: x.float().mean()")
    axes = _dims(dim, x._data.ndim)
    op = T.mean if dim is None else _MEAN1
    if x._data.dtype in _LOW:
        r = apply(op, (x,), (axes, keepdim, np.float32))
        return r.to(x.dtype) if not r._rg else _cast_keep(r, x.dtype)
    return apply(op, (x,), (axes, keepdim, None))


_MEAN1 = Op("mean", T._mean_fwd, T.mean.vjp, node_name="MeanBackward1")


def _cast_keep(r, dt):
    return r.to(dt)


def _legacy_name(dt) -> str:
    return _LEGACY[dt.name] if dt.name in _INT_NAMES else dt.name


_INT_NAMES = frozenset(("int64", "int32", "int16", "int8", "uint8", "bool"))


def nansum(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return sum(where(isnan(input), 0.0, input), dim, keepdim)


def nanmean(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    keep = logical_not(isnan(input))
    return nansum(input, dim, keepdim) / keep.sum(dim, keepdim)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """Product over all elements or over one ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).prod()
        tensor(6.)
    """
    x = input if dtype is None else input.to(dtype)
    dt = _sum_dtype(x, None)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError("prod(): dim must be a single int")
    axes = _dims(dim, x._data.ndim)
    return apply(T.prod if dim is None else _PROD1, (x,), (axes, keepdim, dt))


_PROD1 = Op("prod", T._prod_fwd, T.prod.vjp, T.prod.save, node_name="ProdBackward1")


def _reduce_minmax(input, dim, keepdim, which, fn_name, other=None):
    if other is not None:
        return maximum(input, other) if which == "max" else minimum(input, other)
    x = input
    if x._data.size == 0 and dim is None:
        raise _no_dim_error(fn_name, x)
    if dim is None:
        return apply(T.max_all if which == "max" else T.min_all, (x,), (None, False))
    d = _wrap_dim(dim, x._data.ndim)
    data = x._data
    if not data.size and data.shape[d] == 0:  # Note [Empty reductions]
        raise _empty_dim_error(fn_name, x, d)
    if data.ndim == 0:
        idx = np.zeros((), np.int64)
    else:
        # first occurrence of the extreme value; NaN propagates as in PyTorch
        idx = np.argmax(data, axis=d) if which == "max" else np.argmin(data, axis=d)
        nanmask = np.isnan(data).any(axis=d) if data.dtype in FLOAT_NP else None
        if nanmask is not None and nanmask.any():
            idx = np.where(nanmask, np.argmax(np.isnan(data), axis=d), idx)
        if keepdim:
            idx = np.expand_dims(idx, d)
    it = _make(np.asarray(idx, dtype=np.int64))
    vals = apply(T.take_ops[which], (x, it), (d, keepdim))
    return _rt(which)(vals, it)


def max(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001,A002
    """Largest element; with ``dim``, (values, indices); with a tensor, elementwise maximum.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 5.], [7., 2.]]).max(dim=1)
        torch.return_types.max(
        values=tensor([5., 7.]),
        indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _reduce_minmax(input, dim, keepdim, "max", "max", other)


def min(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001,A002
    """Smallest element; with ``dim``, (values, indices); with a tensor, elementwise minimum.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([3., 1., 2.]).min()
        tensor(1.)
    """
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _reduce_minmax(input, dim, keepdim, "min", "min", other)


def amax(input, dim=(), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Maximum over ``dim`` (all dims by default); ties share the gradient.

    Example:
        >>> import retrograd as torch
        >>> torch.amax(torch.tensor([[1., 5.], [7., 2.]]), dim=0)
        tensor([7., 5.])
    """
    if not input._data.size:
        _check_empty_reduction("amax", input, dim)
    return apply(T.amax, (input,), (_dims(dim, input._data.ndim), keepdim))


def amin(input, dim=(), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Minimum over ``dim`` (all dims by default).

    Example:
        >>> import retrograd as torch
        >>> torch.amin(torch.tensor([[1., 5.], [7., 2.]]), dim=1)
        tensor([1., 2.])
    """
    if not input._data.size:
        _check_empty_reduction("amin", input, dim)
    return apply(T.amin, (input,), (_dims(dim, input._data.ndim), keepdim))


# Note [Empty reductions]
# max, min, amax, amin, argmax, argmin and aminmax have no identity element, so PyTorch
# refuses a reduction over a size-0 dim: an IndexError naming the dim ("Expected
# reduction dim 1 to have non-zero size."; amax/amin name it as given, max/min/argmax
# wrapped), or a RuntimeError when an empty tensor is reduced over all dims. Reducing
# an empty tensor over a dim of nonzero size is fine (the result is empty). The checks
# run only for empty inputs.
def _empty_dim_error(fn: str, x: Tensor, d, sep: str = "():") -> IndexError:
    return IndexError(f"{fn}{sep} Expected reduction dim {d} to have non-zero size. (the "
                      f"tensor has shape {list(x.shape)}: there is no {fn} of zero elements; "
                      "reduce over another dim, or test x.numel() first)")


def _no_dim_error(fn: str, x: Tensor) -> RuntimeError:
    return RuntimeError(f"{fn}(): Expected reduction dim to be specified for input.numel() == "
                        "0. Specify the reduction dim with the 'dim' argument. (the tensor has "
                        f"shape {list(x.shape)}: there is no {fn} of zero elements)")


def _check_empty_reduction(fn: str, x: Tensor, dim) -> None:
    """amax/amin of an empty tensor: PyTorch's error if a reduced dim has size 0 (Note
    [Empty reductions]); dims are checked in the order given."""
    if dim is None or (not isinstance(dim, (int, np.integer)) and not len(dim)):
        raise _no_dim_error(fn, x)
    shape = x._data.shape
    for d in ((dim,) if isinstance(dim, (int, np.integer)) else dim):
        w = _wrap_dim(int(d), len(shape))
        if shape and shape[w] == 0:
            raise _empty_dim_error(fn, x, d)


def aminmax(input, *, dim=None, keepdim: bool = False):  # noqa: A002
    if not input._data.size:  # Note [Empty reductions]
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               f"operation has no identity. (the tensor has shape "
                               f"{list(input.shape)}: pass a dim of nonzero size)")
        d = _wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input._data.shape[d] == 0:
            raise _empty_dim_error("aminmax", input, d, sep=":")
    return collections.namedtuple("aminmax", ["min", "max"])(
        amin(input, () if dim is None else dim, keepdim),
        amax(input, () if dim is None else dim, keepdim))


def argmax(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the largest element (flattened when ``dim`` is None).

    Example:
        >>> import retrograd as torch
        >>> torch.argmax(torch.tensor([1., 9., 3.]))
        tensor(1)
    """
    return _argext(input, dim, keepdim, np.argmax)


def argmin(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the smallest element.

    Example:
        >>> import retrograd as torch
        >>> torch.argmin(torch.tensor([4., 1., 3.]))
        tensor(1)
    """
    return _argext(input, dim, keepdim, np.argmin)


def _argext(x, dim, keepdim, fn):
    data = x._data
    if not data.size:  # Note [Empty reductions]
        if dim is None:
            raise IndexError(f"{fn.__name__}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0. (the tensor has shape {list(x.shape)}: "
                             "pass a dim of nonzero size)")
        d = _wrap_dim(dim, data.ndim)
        if data.ndim and data.shape[d] == 0:
            raise _empty_dim_error(fn.__name__, x, d)
    if dim is None:
        r = fn(data.reshape(-1))
        if keepdim:
            r = np.reshape(r, (1,) * data.ndim)
    else:
        r = fn(data, axis=_wrap_dim(dim, data.ndim), keepdims=keepdim)
    return _make(np.asarray(r, dtype=np.int64))


def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    """True where all elements are non-zero.

    Example:
        >>> import retrograd as torch
        >>> torch.all(torch.tensor([True, False]))
        tensor(False)
    """
    axes = _dims(dim, input._data.ndim)
    r = np.all(input._data, axis=axes, keepdims=keepdim)
    return _make(np.asarray(r if input._data.dtype != np.uint8 else r.astype(np.uint8)))


def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    """True where any element is non-zero.

    Example:
        >>> import retrograd as torch
        >>> torch.any(torch.tensor([True, False]))
        tensor(True)
    """
    axes = _dims(dim, input._data.ndim)
    r = np.any(input._data, axis=axes, keepdims=keepdim)
    return _make(np.asarray(r if input._data.dtype != np.uint8 else r.astype(np.uint8)))


def count_nonzero(input, dim=None) -> Tensor:  # noqa: A002
    return _make(np.asarray(np.count_nonzero(input._data, axis=_dims(dim, input.ndim)),
                            dtype=np.int64))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
        correction=None) -> Tensor:
    """Variance with Bessel's ``correction`` (1 by default).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).var()
        tensor(1.6667)
    """
    return apply(T.var, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def _var_args(input, dim, unbiased, keepdim, correction) -> tuple:  # noqa: A002
    """(axes, keepdim, correction) of var/std, after torch's checks."""
    if isinstance(unbiased, (int, tuple, list)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None
    if input._data.dtype not in FLOAT_NP:
        raise RuntimeError(
            "std and var only support floating point and complex dtypes (got "
            f"{input.dtype}: convert first, e.g. x.float().var())")
    return (_dims(dim, input._data.ndim), bool(keepdim), _correction(unbiased, correction))


def std(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
        correction=None) -> Tensor:
    """Standard deviation (square root of ``var``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).std()
        tensor(1.2910)
    """
    return apply(T.std, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
             correction=None):
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim) if dim is not None else mean(input))


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *,  # noqa: A002
             correction=None):
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim, keepdim) if dim is not None else mean(input))


def softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / exp(x).sum(dim)``, computed stably (``torch.softmax``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 1.]).softmax(0)
        tensor([0.5000, 0.5000])
    """
    from ..nn.functional import softmax as _softmax

    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """``log(softmax(x))``, computed stably (``torch.log_softmax``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([0., 0.]).log_softmax(0)
        tensor([-0.6931, -0.6931])
    """
    from ..nn.functional import log_softmax as _log_softmax

    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow.

    Example:
        >>> import retrograd as torch
        >>> torch.logsumexp(torch.tensor([1000., 1000.]), dim=0)
        tensor(1000.6932)
    """
    x = input if input._data.dtype in FLOAT_NP else input.float()
    return apply(T.logsumexp, (x,), (_dims(dim, x._data.ndim), keepdim))


def cumsum(input, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """Cumulative sum along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.cumsum(torch.tensor([1., 2., 3.]), dim=0)
        tensor([1., 3., 6.])
    """
    return apply(T.cumsum, (input,), (_wrap_dim(dim, input._data.ndim), _sum_dtype(input, dtype)))


def cumprod(input, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """Cumulative product along ``dim`` (zeros handled in the gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.cumprod(torch.tensor([1., 2., 3.]), dim=0)
        tensor([1., 2., 6.])
    """
    return apply(T.cumprod, (input,), (_wrap_dim(dim, input._data.ndim), _sum_dtype(input, dtype)))


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The vector ``ord``-norm over ``dim`` (all elements by default).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.vector_norm(torch.tensor([3., 4.]))
        tensor(5.)
    """
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_legacy_name(x.dtype)}")
    ordv = float(ord)
    dt = None if dtype is None else D.as_dtype(dtype).np
    return apply(T.vector_norm, (x,), (_dims(dim, x._data.ndim), keepdim, ordv, dt))


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:  # noqa: A002
    """Vector norm (``p``: a number, 'fro' or inf) over ``dim`` or all elements.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[3., 4.]]).norm()
        tensor(5.)
    """
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("retrograd: the nuclear norm is not supported (no SVD rule)")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def dist(input, other, p=2) -> Tensor:  # noqa: A002
    return vector_norm(input - other, p)


# ----------------------------------------------------------------------------------
# matrix products


def _mm_error(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if a.ndim == 2 and b.ndim == 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]}): "
            f"the inner sizes {sa[1]} and {sb[0]} must be equal (transpose one operand or fix "
            "the layer size)")
    return RuntimeError(f"matmul: shapes {sa} and {sb} cannot be multiplied: the last dim of "
                        f"the first ({sa[-1] if sa else '-'}) must equal the "
                        f"{'only' if len(sb) == 1 else 'second-to-last'} dim of the second")


def matmul(input, other) -> Tensor:  # noqa: A002
    """Matrix product with NumPy/PyTorch broadcasting of batch dims; 1-D operands allowed.

    Example:
        >>> import retrograd as torch
        >>> (torch.ones(2, 3) @ torch.ones(3)).shape
        torch.Size([2])
    """
    a, b = input, other
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        raise TypeError("matmul expects two tensors")
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a._data.dtype != b._data.dtype:
        return _matmul_mixed(a, b)
    na, nb = a._data.ndim, b._data.ndim
    if na == 2 and nb == 2:
        op = T.mm_ops["mm"]
    elif na == 1 and nb == 1:
        op = T.mm_ops["dot"]
    elif na == 2 and nb == 1:
        op = T.mm_ops["mv"]
    elif na == 3 and nb == 3 and a._data.shape[0] == b._data.shape[0]:
        op = T.mm_ops["bmm"]
    else:
        op = T.mm_ops["matmul"]
    try:
        r = apply(op, (a, b))
        if op is T.mm_ops["matmul"] and r._gfn is not None:
            _save_copies(a, b, r._gfn)
    except ValueError:
        raise _mm_error(a, b) from None
    if na > 1 and nb > 1 and a._data.shape[-1] == 1:
        _gemm_outer_zeros(a, b, r)
    return r


# Note [What matmul saves]
# PyTorch's matmul (at::_matmul_impl) reshapes a batched operand before its mm, mv or
# bmm: folded into a matrix (_should_fold; the second operand as its mT), or with its
# broadcast batch flattened into one dim (the bmm path). Where that reshape cannot be a
# view (a transposed or permuted batch, a broadcast one), it copies, and the copy is
# what the product saves for the other operand's gradient: writing into the operand in
# place afterwards neither invalidates the graph nor changes the gradient. retrograd
# multiplies the operands as they are, and saves a copy (in the graph, as PyTorch's
# CloneBackward0) in exactly those cases. The reshape is NumPy's, whose no-copy rule is
# PyTorch's (computeStride). A batch of 2-D operands of one shape never copies (bmm).
def _save_copies(a: Tensor, b: Tensor, node) -> None:
    """Swap ``a``/``b`` in ``node._saved`` for copies where PyTorch saves its reshape's
    copy (Note [What matmul saves])."""
    da, db = a._data, b._data
    if da.flags.c_contiguous and (db.ndim <= 2 or (db.flags.c_contiguous and
                                                   da.shape[:-2] == db.shape[:-2])):
        return  # the common case: a contiguous batch folds or flattens as a view
    saved = node._saved
    if saved.__class__ is not list:  # packed by saved-tensor hooks: kept as they are
        return
    ca, cb = _copied_operands(da, db, a._rg, b._rg)
    for i, (x, copied) in enumerate(((a, ca), (b, cb))):
        if copied and saved[i] is x:
            saved[i] = c = clone(x)
            node._ver[i] = c._vc[0]


def _copied_operands(da: np.ndarray, db: np.ndarray, a_rg: bool, b_rg: bool) -> tuple:
    """Whether PyTorch's ``a @ b`` (one of them batched) reshapes a, and b, by a copy."""
    if da.ndim == 3 and db.ndim == 3 and da.shape[0] != db.shape[0]:
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        if da.shape[0] == 1 and a_rg:
            da = da[0]
        elif db.shape[0] == 1 and b_rg:
            db = db[0]
    sa, sb = da.shape, db.shape
    if _should_fold(da, db, a_rg, b_rg):
        if da.ndim >= db.ndim:
            return not _reshapes_as_view(da, (math.prod(sa[:-1]), sa[-1])), False
        t1 = np.swapaxes(db, -1, -2)
        return False, not _reshapes_as_view(t1, (math.prod(t1.shape[:-1]), sb[-2]))
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    n = math.prod(batch)
    ea = np.broadcast_to(da, batch + ((sa[-2],) if da.ndim > 1 else (1,)) + sa[-1:])
    eb = np.broadcast_to(db, batch + sb[-2:])
    return (not _reshapes_as_view(ea, (n,) + ea.shape[-2:]),
            not _reshapes_as_view(eb, (n,) + (sb[-2:] if db.ndim > 1 else sb)))


def _reshapes_as_view(x: np.ndarray, shape: tuple) -> bool:
    try:
        np.reshape(x, shape, copy=False)
    except ValueError:
        return False
    return True


# Note [Signed zeros of k=1 products]
# With an inner size of 1, a matrix product is an outer product: every element is one
# exact product, so only the sign of a zero can differ. PyTorch's gemm (MKL; taken by mm
# and by matmul when it folds a batched operand, _should_fold) writes the product
# itself: 0.0 * -1.5 gives -0.0. Its gemv and dot (a side of size 1) and its small bmm
# loop start from +0.0, as NumPy's matmul always does: +0.0. The gemm case is repaired.
def _gemm_outer_zeros(a: Tensor, b: Tensor, r: Tensor) -> None:
    da, db = a._data, b._data
    sa, sb = da.shape, db.shape
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0]:
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        if sa[0] == 1 and a._rg:
            da, sa = da[0], sa[1:]
        elif sb[0] == 1 and b._rg:
            db, sb = db[0], sb[1:]
    if len(sa) == 2 and len(sb) == 2:
        m, n = sa[0], sb[1]
    elif _should_fold(da, db, a._rg, b._rg):  # the folded operand's rows, the other's columns
        m, n = ((math.prod(sa[:-1]), sb[-1]) if len(sa) >= len(sb) else
                (math.prod(sb[:-2]) * sb[-1], sa[-2]))
    else:
        return
    out = r._data
    if m > 1 and n > 1 and out.dtype == da.dtype and out.dtype.kind == "f":
        np.copyto(out, np.multiply(da, db), where=out == 0)


# Note [matmul dtypes]
# PyTorch's matmul never promotes, but whether mixed dtypes are refused, and with which
# message, depends on the kernel its dispatch picks (_matmul_impl): dot, mv ("addmv"), mm
# (also for a batched operand folded into a matrix, see _should_fold) check the dtypes
# even for empty operands; bmm (the broadcast batched path) returns early when the
# result is empty or the inner size is 0, with the second operand's dtype, and
# otherwise says "expected scalar type Float but found Double". Shape errors come first.
def _matmul_mixed(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for operands of different dtypes: PyTorch's error, or its empty (or
    zero) result (Note [matmul dtypes])."""
    sa, sb = a._data.shape, b._data.shape
    na, nb = len(sa), len(sb)
    fix = (f" (matmul does not promote: convert one operand, e.g. "
           f"b.to({D.promote_types(a.dtype, b.dtype)}))")
    if na == 1 and nb == 1:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_LEGACY_NAMES[a.dtype.name]} and {_LEGACY_NAMES[b.dtype.name]}"
                           + fix)
    if sa[-1] != (sb[-2] if nb > 1 else sb[0]):
        raise _mm_error(a, b)
    try:
        batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:  # stand-ins of the batch shapes (no memory), for the message
        stand_in = [_make(np.broadcast_to(np.int8(0), sh)) for sh in (sa[:-2], sb[:-2])]
        _check_broadcast("matmul", ("the batch dims of input", "of other"), stand_in)
        raise
    if na <= 2 and nb <= 2:  # mm, or mv for a 1-D b
        mat, other = a, b
    elif _should_fold(a._data, b._data, a._rg, b._rg):  # the batched operand, folded
        mat, other = (a, b) if na >= nb else (b, a)
    elif na == 3 and nb == 3 and sa[0] != sb[0] and (
            (sa[0] == 1 and a._rg) or (sb[0] == 1 and b._rg)):
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        return matmul(a.squeeze(0), b) if sa[0] == 1 and a._rg else matmul(a, b.squeeze(0))
    else:  # the bmm path
        out = batch + (sa[-2] if na > 1 else 1,) + (sb[-1] if nb > 1 else 1,)
        if 0 in out or sa[-1] == 0:
            if b._data.dtype not in FLOAT_NP and STATE.enabled and (a._rg or b._rg):
                raise RuntimeError(f"Autograd not support dtype: {_LEGACY_NAMES[b.dtype.name]} "
                                   "(the result of a @ b takes b's dtype here; make b "
                                   "floating-point)")
            return matmul(a.to(b.dtype), b)
        raise RuntimeError(f"expected scalar type {_LEGACY_NAMES[a.dtype.name]} but found "
                           f"{_LEGACY_NAMES[b.dtype.name]}" + fix)
    if other._data.ndim == 1:  # mv: PyTorch names (result, mat, vec), result as vec
        v, m = _LEGACY_NAMES[other.dtype.name], _LEGACY_NAMES[mat.dtype.name]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, "
                           f"and {v}" + fix)
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                       f"{_dt_name(mat.dtype)} != {_dt_name(other.dtype)}" + fix)


def _should_fold(a: np.ndarray, b: np.ndarray, a_rg: bool, b_rg: bool) -> bool:
    """PyTorch's should_fold for ``a @ b`` (arrays, and whether each needs a grad):
    matmul folds the batched operand into a matrix (mm or mv) when the other is 1-D or
    2-D and that needs no copy, or when the small one needs a grad."""
    big, small, small_rg = (a, b, b_rg) if a.ndim >= b.ndim else (b, a, a_rg)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small_rg:
        return True
    if a.ndim == 2:
        return False
    if not big.size:
        return True
    shape = list(big.shape)
    strides = [st // big.itemsize for st in big.strides]
    if big is b:  # PyTorch folds b.mT
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def _dt_name(dt) -> str:
    return _C_NAMES.get(dt.name, dt.name)


def mm(input, mat2) -> Tensor:  # noqa: A002
    """Product of two 2-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.mm(torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm got {input.ndim}-D and {mat2.ndim}-D)")
    return matmul(input, mat2)


def bmm(input, mat2) -> Tensor:  # noqa: A002
    """Batched product of two 3-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bmm(torch.ones(4, 2, 3), torch.ones(4, 3, 5)).shape
        torch.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm got {input.ndim}-D and "
                           f"{mat2.ndim}-D)")
    return matmul(input, mat2)


def mv(input, vec) -> Tensor:  # noqa: A002
    """Matrix-vector product.

    Example:
        >>> import retrograd as torch
        >>> torch.mv(torch.eye(2), torch.tensor([1., 2.]))
        tensor([1., 2.])
    """
    return matmul(input, vec)


def dot(input, other) -> Tensor:  # noqa: A002
    """Dot product of two 1-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.dot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    return matmul(input, other)


inner = dot


def outer(input, vec2) -> Tensor:  # noqa: A002
    """Outer product of two vectors.

    Example:
        >>> import retrograd as torch
        >>> torch.outer(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor([[3., 4.],
                [6., 8.]])
    """
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D "
                               "(outer takes two vectors; flatten them first, or use "
                               "broadcasting: a[:, None] * b)")
    return input.reshape(input._data.shape[0], 1) * vec2  # PyTorch's: one view, then mul


ger = outer


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``.

    Example:
        >>> import retrograd as torch
        >>> torch.addmm(torch.zeros(2, 2), torch.eye(2), torch.eye(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    a, b, c = input._data, mat1._data, mat2._data
    # (float16/bfloat16 take the float32 path below: it rounds each gradient as torch does)
    if b.ndim == 2 and c.ndim == 2 and b.shape[1] == c.shape[0] and a.dtype == b.dtype == \
            c.dtype and b.dtype in FLOAT_NP and b.dtype not in _LOW and a.ndim <= 2 and \
            np.broadcast_shapes(a.shape, (b.shape[0], c.shape[1])) == (b.shape[0], c.shape[1]):
        return apply(T.addmm, (input, mat1, mat2), (beta, alpha))  # one AddmmBackward0 node
    low = mat1._data.dtype
    if low in _LOW and mat2._data.dtype == low and input._data.dtype == low:
        # torch forms beta * input + alpha * (mat1 @ mat2) in float32 and rounds once
        # (Note [Low-precision accumulation] in table.py); the casts' rules round each
        # gradient once too, as torch's low-precision AddmmBackward0 does
        f32 = D.float32
        return addmm(input.to(f32), mat1.to(f32), mat2.to(f32), beta=beta,
                     alpha=alpha).to(D.FROM_NP[low])
    prod_ = mm(mat1, mat2)
    if alpha != 1:
        prod_ = prod_ * alpha
    return prod_ + (input if beta == 1 else input * beta)


def _einsum_parse(eq: str, shapes):
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise RuntimeError(f"einsum(): {len(ins)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    ell_n = 0
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            ell_n = _py_max(ell_n, len(shape) - (len(sub) - 3))
    ell = "".join(free[:ell_n])
    new_ins = []
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            k = len(shape) - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_n - k:] if k else "")
        if len(sub) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(sub)}) does not match the number of dimensions "
                               f"({len(shape)}) for operand")
        new_ins.append(sub)
    if rhs is None:
        counts = collections.Counter("".join(new_ins))
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return new_ins, rhs


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation, differentiable in every operand (ellipsis supported).

    Example:
        >>> import retrograd as torch
        >>> torch.einsum('ij,jk->ik', torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ins, out = _einsum_parse(equation, [o.shape for o in operands])
    spec = ",".join(ins) + "->" + out
    rdt = D.result_type(*operands)
    ops_ = tuple(o if o.dtype == rdt else o.to(rdt) for o in operands)
    return apply(T.einsum_op(len(ops_)), ops_, (ins, out, spec))


def tensordot(a, b, dims=2) -> Tensor:
    """Contract ``dims`` dimensions of ``a`` with ``b`` (an int or two lists of dims).

    Example:
        >>> import retrograd as torch
        >>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=1).shape
        torch.Size([2, 4])
    """
    if isinstance(dims, int):
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [_wrap_dim(d, a.ndim) for d in da]
    db = [_wrap_dim(d, b.ndim) for d in db]
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    am = a.permute(*(fa + da)).reshape(-1, k)
    bm = b.permute(*(db + fb)).reshape(k, -1)
    return (am @ bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


# ----------------------------------------------------------------------------------
# shape and view ops


def _shape_arg(shape):
    if len(shape) == 1 and shape[0].__class__ in (tuple, list, Size):
        shape = shape[0]
    for s in shape:
        if s.__class__ is not int:
            return tuple(int(s) for s in shape)
    return tuple(shape)


def _infer_shape(shape, numel: int, orig):
    known = 1
    neg = -1
    for i, s in enumerate(shape):
        if s == -1:
            if neg >= 0:
                raise RuntimeError("only one dimension can be inferred")
            neg = i
        else:
            known *= s
    if neg >= 0:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:neg] + (numel // known,) + shape[neg + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} "
                           f"(input shape {list(orig)})")
    return shape


def view(input, *shape) -> Tensor:  # noqa: A002
    """The same data seen with a new shape (no copy; see ``reshape`` otherwise).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.).view(2, 3).shape
        torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _make(input._data.view(shape[0].np))
    shp = _infer_shape(_shape_arg(shape), input._data.size, input._data.shape)
    try:
        return view_apply(T.view, input, shp)
    except (ValueError, AttributeError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
            f"(input shape {list(input.shape)}, stride {list(input.stride())}, asked for "
            f"{list(shp)})") from None


def reshape(input, *shape) -> Tensor:  # noqa: A002
    """A tensor with the same data and a new shape (a view when possible).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6).reshape(3, -1).shape
        torch.Size([3, 2])
    """
    shp = _infer_shape(_shape_arg(shape), input._data.size, input._data.shape)
    # PyTorch: a view of a contiguous tensor (ViewBackward0), an alias with new strides of
    # another one when its strides allow (ReshapeAliasBackward0), else a contiguous clone
    # viewed (CloneBackward0, then UnsafeViewBackward0)
    try:
        return view_apply(T.view if input._data.flags.c_contiguous else T.reshape_alias,
                          input, shp)
    except (ValueError, AttributeError):
        return apply(T.unsafe_view, (clone(input),), shp)


def view_as(input, other) -> Tensor:  # noqa: A002
    return view(input, other.shape)


def reshape_as(input, other) -> Tensor:  # noqa: A002
    return reshape(input, other.shape)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """Merge dims ``start_dim..end_dim`` into one.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).flatten(1).shape
        torch.Size([2, 12])
    """
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, 1)
    s = _wrap_dim(start_dim, nd)
    e = _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:  # nothing to merge: PyTorch returns the tensor itself (same object)
        return input
    shp = input._data.shape
    new = shp[:s] + (int(np.prod(shp[s:e + 1], dtype=np.int64)),) + shp[e + 1:]
    return reshape(input, new)


def unflatten(input, dim: int, sizes) -> Tensor:  # noqa: A002
    """Split dim ``dim`` into ``sizes``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 12).unflatten(1, (3, 4)).shape
        torch.Size([2, 3, 4])
    """
    d = _wrap_dim(dim, input._data.ndim)
    shp = input._data.shape
    sizes = _infer_shape(tuple(sizes), shp[d], shp[d:d + 1])
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def squeeze(input, dim=None) -> Tensor:  # noqa: A002
    """Remove dims of size 1 (all, or those in ``dim``).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(1, 2, 1).squeeze().shape
        torch.Size([2])
    """
    shp = input._data.shape
    if dim is None:
        return view_apply(T.squeeze_all, input, tuple(i for i, s in enumerate(shp) if s == 1))
    axes = tuple(d for d in (_dims(dim, len(shp)) or ()) if shp[d] == 1) if shp else ()
    # one dim or a tuple of dims: PyTorch's SqueezeBackward1 or SqueezeBackward2
    return view_apply(T.squeeze_dims if isinstance(dim, (tuple, list)) else T.squeeze, input,
                      axes)


def unsqueeze(input, dim: int) -> Tensor:  # noqa: A002
    """Insert a dim of size 1 at ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).unsqueeze(0).shape
        torch.Size([1, 3])
    """
    return view_apply(T.unsqueeze, input, _wrap_dim(dim, input._data.ndim + 1))


def permute(input, *dims) -> Tensor:  # noqa: A002
    """Reorder dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).permute(2, 0, 1).shape
        torch.Size([4, 2, 3])
    """
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims" (pass '
                        'the new order of the dims, e.g. x.permute(1, 0), or () for a 0-d '
                        'tensor)')
    dims = _shape_arg(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(wrapped)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed. (got dims {tuple(dims)} "
                           f"for a {nd}-d tensor, i.e. {wrapped} after wrapping negative dims; "
                           f"name each dim 0..{nd - 1} exactly once)")
    return view_apply(T.permute, input, wrapped)


def transpose(input, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """Swap two dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).transpose(0, 1).shape
        torch.Size([3, 2])
    """
    nd = input._data.ndim
    return view_apply(T.transpose, input, (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


swapaxes = swapdims = transpose


def t(input) -> Tensor:  # noqa: A002
    """Transpose of a tensor with at most 2 dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).t().shape
        torch.Size([3, 2])
    """
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return view_apply(T.t_op, input, None)


def movedim(input, source, destination) -> Tensor:  # noqa: A002
    """Move dims from ``source`` positions to ``destination`` positions.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).movedim(0, -1).shape
        torch.Size([3, 4, 2])
    """
    nd = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, nd) for s in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


def expand(input, *sizes) -> Tensor:  # noqa: A002
    """A broadcast view with ``sizes`` (-1 keeps a dim); no copy.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1.], [2.]]).expand(2, 3)
        tensor([[1., 1., 1.],
                [2., 2., 2.]])
    """
    sizes = _shape_arg(sizes)
    shp = input._data.shape
    _check_expand(input, shp, sizes)
    lead = len(sizes) - len(shp)
    target = tuple(shp[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return view_apply(T.expand, input, target)


def _check_expand(t: Tensor, shp: tuple, sizes) -> None:
    """PyTorch's checks (and messages) for expanding ``t``, of shape ``shp``, to ``sizes``:
    dims are matched from the right, the first mismatch from the right is reported."""
    nd = len(sizes)
    if nd < len(shp):
        raise RuntimeError(f"expand({_legacy_type_str(t)}{{{list(shp)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({nd}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shp)})")
    lead = nd - len(shp)
    for i in range(nd - 1, -1, -1):
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        cur = shp[i - lead]
        if s != cur and s != -1 and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shp)}")


def expand_as(input, other) -> Tensor:  # noqa: A002
    return expand(input, other.shape)


def broadcast_to(input, size) -> Tensor:  # noqa: A002
    """``input`` broadcast to ``size`` (a view).

    Example:
        >>> import retrograd as torch
        >>> torch.broadcast_to(torch.tensor([1., 2.]), (3, 2)).shape
        torch.Size([3, 2])
    """
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*(t._data.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    return Size(np.broadcast_shapes(*shapes))


def sum_to_size(input, *size) -> Tensor:  # noqa: A002
    """Sum ``input`` down to ``size`` (undoes broadcasting).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
    """
    size = _shape_arg(size)
    return sum_to(input, size)


def sum_to(g: Tensor, shape, node=None, i: int = 0, batch: int = 0) -> Tensor:
    """Sum a gradient back to an input's shape (the engine's one place for broadcasting).

    ``batch`` leading dims of ``g`` are kept as they are (Note [Batched rules]).
    """
    gs = g._data.shape
    shape = tuple(shape)
    lead = len(gs) - len(shape) - batch
    ok = lead >= 0 and builtins.all(s == 1 or s == gs[batch + lead + k]
                                    for k, s in enumerate(shape))
    if not ok:
        who = f"Function {node.name()}" if node is not None else "sum_to_size"
        raise RuntimeError(
            f"{who} returned an invalid gradient at index {i} - got {list(gs[batch:])} but "
            f"expected shape compatible with {list(shape)}. A backward must return one gradient "
            "per input, each with that input's shape.")
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + k for k, s in enumerate(shape) if s == 1 and gs[batch + lead + k] != 1)
    r = sum(g, dim=axes, keepdim=True) if axes else g
    target = gs[:batch] + shape
    if r._data.shape != target:
        r = reshape(r, target)
    return r


def repeat(input, *sizes) -> Tensor:  # noqa: A002
    """Tile the tensor ``sizes`` times along each dim (a copy).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2.]).repeat(2)
        tensor([1., 2., 1., 2.])
    """
    sizes = _shape_arg(sizes)
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return apply(T.repeat, (input,), sizes)


def tile(input, dims) -> Tensor:  # noqa: A002
    """Like ``repeat``; missing leading dims count as 1.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.]]).tile((2,)).shape
        torch.Size([1, 4])
    """
    dims = tuple(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats, dim=None) -> Tensor:  # noqa: A002
    if dim is None:
        input, dim = input.reshape(-1), 0
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(input.shape[dim]), reps)
    return index_select(input, dim, _make(idx.astype(np.int64)))


def flip(input, dims) -> Tensor:  # noqa: A002
    """Reverse the order of elements along ``dims``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).flip(0)
        tensor([3., 2., 1.])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return apply(T.flip, (input,), tuple(_wrap_dim(d, input._data.ndim) for d in dims))


def fliplr(input) -> Tensor:  # noqa: A002
    return flip(input, 1)


def flipud(input) -> Tensor:  # noqa: A002
    return flip(input, 0)


def roll(input, shifts, dims=None) -> Tensor:  # noqa: A002
    """Rotate elements along ``dims`` by ``shifts``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).roll(1)
        tensor([3., 1., 2.])
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required (roll takes one shift per dim, or one shift "
                           "of the flattened tensor when no dims are given)")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)} (give one shift per dim, or a single shift without "
                           "dims to roll the flattened tensor)")
    # no dims: the flattened tensor rolls (one RollBackward0 node, as in PyTorch)
    return apply(T.roll, (input,), (shifts, tuple(_wrap_dim(d, input.ndim) for d in dims)
                                    if dims else None))


def _promote_list(tensors, fn_name):
    tensors = list(tensors)
    if not tensors:  # PyTorch's types and wording differ between cat and stack
        if fn_name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList (got an empty sequence; "
                               "check that the list of tensors to stack was filled)")
        raise ValueError(f"torch.{fn_name}(): expected a non-empty list of Tensors (got an "
                         "empty sequence; check that the list of tensors was filled)")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn_name}(): argument 'tensors' must be a sequence of Tensors, but "
                            f"element {i} is {type(x).__name__}")
    rdt = D.result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    return [x if x.dtype == rdt else x.to(rdt) for x in tensors]


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim.

    Example:
        >>> import retrograd as torch
        >>> torch.cat([torch.zeros(2, 1), torch.ones(2, 2)], dim=1).shape
        torch.Size([2, 3])
    """
    ts = _promote_list(tensors, "cat")
    # legacy empty 1-D tensors are skipped (and get an empty gradient), as in PyTorch
    legacy = [x._data.ndim == 1 and x._data.size == 0 for x in ts]
    if builtins.all(legacy):
        legacy[0] = False
    first = ts[legacy.index(False)]
    nd = first._data.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, nd)
    ref = first._data.shape
    for k, x in enumerate(ts):
        if legacy[k]:
            continue
        s = x._data.shape
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{len(s)}")
        for j in range(nd):
            if j != d and s[j] != ref[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref[j]} but got size {s[j]} for tensor number {k} in the list.")
    sizes = tuple(None if e else x._data.shape[d] for x, e in zip(ts, legacy))
    return apply(T.cat, ts, (d, sizes))


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors along a new dim.

    Example:
        >>> import retrograd as torch
        >>> torch.stack([torch.zeros(3), torch.ones(3)]).shape
        torch.Size([2, 3])
    """
    ts = _promote_list(tensors, "stack")
    ref = ts[0]._data.shape
    for k, x in enumerate(ts):
        if x._data.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {k}")
    d = _wrap_dim(dim, len(ref) + 1)
    return apply(T.stack, ts, d)


def hstack(tensors) -> Tensor:
    ts = list(tensors)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    return cat([x.reshape(1, -1) if x.ndim == 1 else x for x in tensors], 0)


def _pieces(input, d, bounds, kind, sizes):
    """Multi-output view op (split/unbind): pieces share memory with ``input``."""
    outs = []
    base = input._base if input._base is not None else input
    ver = input._vc[0]
    meta = "multi" if STATE.enabled else "no_grad"  # check_view_rebase (ops/dispatch.py)
    for lo, hi in bounds:
        key = (slice(None),) * d + ((lo if kind == "unbind" else slice(lo, hi)),)
        arr = T.select.fwd(input._data, key)  # a 0-d piece too is a view, not a copy
        t = _make(arr)
        t._vc = input._vc
        t._base = base
        t._vfn = (input._vfn, T.slice_op if kind != "unbind" else T.select, key)
        t._vmeta = meta
        if ver:
            t._vver = ver
        if not input._rg:
            track_view(base, t)
        elif not STATE.enabled:
            t._rg = True  # as view_apply: a view of a tensor that requires grad does too
        outs.append(t)
    if STATE.enabled and input._rg:
        op = T.unbind if kind == "unbind" else T.split if kind == "split" else \
            T.split_with_sizes
        record(op, outs[0] if len(outs) == 1 else tuple(outs), (input,), (kind, d, sizes),
               nout=len(outs))
    if _FW.active:  # forward-mode AD: the pieces' tangents are the same pieces of the tangent
        from ..autograd.forward_ad import fw_op

        fw_op(T.unbind if kind == "unbind" else T.split, (input,), tuple(outs),
              (kind, d, sizes), 0)
    return tuple(outs)


def split(tensor, split_size_or_sections, dim: int = 0):
    """Split into pieces of a given size (an int) or sizes (a list); views.

    Example:
        >>> import retrograd as torch
        >>> [p.shape[0] for p in torch.arange(5).split(2)]
        [2, 2, 1]
    """
    d = _wrap_dim(dim, tensor._data.ndim)
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, (int, np.integer)):
        s = int(split_size_or_sections)
        if s <= 0 and n > 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        # one empty piece of a size-0 dim, as PyTorch (max(ceil(n / s), 1) pieces)
        sizes = [s] * (n // s) + ([n % s] if n % s else []) if s and n else [0]
    else:
        sizes = [int(x) for x in split_size_or_sections]
        if _py_sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sizes}")
    bounds, off = [], 0
    for s in sizes:
        bounds.append((off, off + s))
        off += s
    kind = "split" if isinstance(split_size_or_sections, (int, np.integer)) else "sizes"
    return _pieces(tensor, d, bounds, kind, tuple(sizes))


def tensor_split(input, indices_or_sections, dim: int = 0):  # noqa: A002
    n = input.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
    else:
        idx = [0] + list(indices_or_sections) + [n]
        sizes = [_py_max(0, idx[i + 1] - idx[i]) for i in range(len(idx) - 1)]
    return split(input, sizes, dim)


def chunk(input, chunks: int, dim: int = 0):  # noqa: A002
    """Split into ``chunks`` pieces (the last may be smaller).

    Example:
        >>> import retrograd as torch
        >>> len(torch.arange(6).chunk(3))
        3
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks} (the "
                           "number of pieces; for pieces of a given size use split(size))")
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    if n == 0:  # PyTorch: ``chunks`` empty pieces of a size-0 dim
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


def unbind(input, dim: int = 0):  # noqa: A002
    """Slices along ``dim`` as a tuple of views.

    Example:
        >>> import retrograd as torch
        >>> a, b = torch.tensor([[1., 2.], [3., 4.]]).unbind(0); b
        tensor([3., 4.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    return _pieces(input, d, [(i, i + 1) for i in range(n)], "unbind", None)


def narrow(input, dim: int, start, length: int) -> Tensor:  # noqa: A002
    """A view of ``length`` elements from ``start`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.arange(5).narrow(0, 1, 2)
        tensor([1, 2])
    """
    d = _wrap_dim(dim, input._data.ndim)
    start = int(start)
    n = input._data.shape[d]
    if start < 0:
        start += n
    if start < 0 or start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return view_apply(T.slice_op, input, key)


def select(input, dim: int, index: int) -> Tensor:  # noqa: A002
    """The slice at ``index`` along ``dim`` (a view, one dim fewer).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1, 2], [3, 4]]).select(1, 0)
        tensor([1, 3])
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    key = (slice(None),) * d + (index,)
    return view_apply(T.select, input, key)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal of the ``dim1``/``dim2`` planes, as a view (it shares memory).

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(9.).reshape(3, 3)
        >>> x.diagonal(), x.diagonal(1)
        (tensor([0., 4., 8.]), tensor([1., 5.]))
    """
    nd = input._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2} (a tensor "
                           f"of shape {list(input.shape)}: pick two different dims)")
    return view_apply(T.diagonal, input, (int(offset), d1, d2))


def unfold(input, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """All slices of length ``size`` along ``dimension``, ``step`` apart, as a view with a new
    last dim (``Tensor.unfold``).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(5.).unfold(0, 2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    nd = input._data.ndim
    d = _wrap_dim(dimension, nd)
    n = input._data.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}"
                           f" (unfold of a tensor of shape {list(input.shape)}: use size <= {n})")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return view_apply(T.unfold, input, (d, int(size), int(step)))


def as_strided(input, size, stride, storage_offset: int | None = None) -> Tensor:  # noqa: A002
    """A view of the memory under ``input`` with the given sizes and element strides, from
    element ``storage_offset`` of the storage on (default: where ``input`` starts).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.).as_strided((2, 2), (1, 2))
        tensor([[0., 2.],
                [1., 3.]])
    """
    base = input._base if input._base is not None else input
    storage = base._data
    if not storage.flags.c_contiguous:
        raise RuntimeError(f"as_strided: the memory under this tensor (shape "
                           f"{list(base.shape)}) is not one contiguous block in retrograd; "
                           "call .contiguous() first and take the view of that")
    start = (input.data_ptr() - base.data_ptr()) // storage.itemsize
    offset = start if storage_offset is None else int(storage_offset)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for "
                           f"{len(size)} sizes")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)} (take the view with positive strides, "
                           "then .flip() the dims that should run backwards)")
    need = offset + builtins.sum((n - 1) * st for n, st in zip(size, stride)) + 1 \
        if builtins.all(size) else 0
    if need > storage.size or offset < 0:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {storage.itemsize} requiring a "
                           f"storage size of {need * storage.itemsize} are out of bounds for "
                           f"storage of size {storage.size * storage.itemsize}")
    if input._data.flags.c_contiguous and offset >= start and \
            need - start <= input._data.size:  # within input's own block: a view of input
        return view_apply(T.as_strided, input, (size, stride, offset - start))
    return view_apply(T.as_strided, base, (size, stride, offset))


def diag(input, diagonal_: int = 0) -> Tensor:  # noqa: A002
    if input.ndim == 1:
        n = input.shape[0] + _py_abs(diagonal_)
        z = zeros(n, n, dtype=input.dtype)
        i = np.arange(input.shape[0])
        r, c = i + _py_max(0, -diagonal_), i + _py_max(0, diagonal_)
        return z.index_put((_make(r), _make(c)), input)
    return diagonal(input, diagonal_)


def trace(input) -> Tensor:  # noqa: A002
    return diagonal(input).sum()


def tril(input, diagonal: int = 0) -> Tensor:  # noqa: A002
    mask = np.tril(np.ones(input.shape[-2:], dtype=bool), diagonal)
    return where(_make(mask), input, 0.0 if input.is_floating_point() else 0)


def triu(input, diagonal: int = 0) -> Tensor:  # noqa: A002
    mask = np.triu(np.ones(input.shape[-2:], dtype=bool), diagonal)
    return where(_make(mask), input, 0.0 if input.is_floating_point() else 0)


# ----------------------------------------------------------------------------------
# indexing


def _norm_index(k):
    if isinstance(k, Tensor):
        d = k._data
        if d.dtype == np.bool_:
            return d
        if d.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return d.astype(np.intp, copy=False) if d.dtype != np.bool_ else d
    if isinstance(k, (list, tuple)):
        arr = np.array([_norm_index(x) if isinstance(x, Tensor) else x for x in k])
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(k, np.ndarray):
        return k
    if k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)):
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
        return k
    if isinstance(k, bool):
        return k
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(k).__name__})")


def norm_key(key):
    """A NumPy-ready indexing key (tensors become integer or bool arrays)."""
    if not isinstance(key, tuple):
        key = (key,)
    return tuple(_norm_index(k) for k in key)


def _basic(key) -> bool:
    for k in key:
        if not (k is None or k is Ellipsis or k.__class__ is slice or k.__class__ is int
                or isinstance(k, np.integer)):
            return False
    return True


# Note [Basic indexing as view steps]
# PyTorch applies a basic key (ints, slices, None, ...) one part at a time, left to right:
# an int selects (SelectBackward0), a slice slices (SliceBackward0) unless, inside a
# tuple, it keeps its dim whole as written (start None or 0, step None or 1, stop None
# or at least the size), None unsqueezes (UnsqueezeBackward0), and a key that changes
# nothing gives an alias (AliasBackward0). ``x[a:b]`` alone always slices. Each part is
# one view op here too, so the graph and the recipe a view is re-derived from (Note
# [View grad_fn regeneration]) are PyTorch's. A single int, the commonest key, is tested
# first and costs one view op.
_FULL = slice(None)
_SLICE, _SELECT, _UNSQUEEZE = T.slice_op, T.select, T.unsqueeze


def _basic_steps(key: tuple, shape: tuple):
    """The view steps ``[(op, p), ...]`` of a basic tuple ``key`` on a tensor of ``shape``
    (Note [Basic indexing as view steps]); None when ``key`` has other parts."""
    nd = len(shape)
    steps = []
    d = src = 0  # the dim in the result so far, in the input
    for k in key:
        c = k.__class__
        if c is slice:
            if src >= nd:
                _too_many_indices(key, shape)
            step = k.step
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop = k.start, k.stop
            if start or (step is not None and step != 1) or (stop is not None and
                                                            stop < shape[src]):
                steps.append((_SLICE, (k,) if not d else (_FULL,) * d + (k,)))
            d += 1
            src += 1
        elif c is int or (c is not bool and isinstance(k, np.integer)):
            if src >= nd:
                _too_many_indices(key, shape)
            size = shape[src]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {src} with size "
                                 f"{size} (tensor of shape {list(shape)})")
            steps.append((_SELECT, (k,) if not d else (_FULL,) * d + (k,)))
            src += 1
        elif k is None:
            steps.append((_UNSQUEEZE, d))
            d += 1
        elif k is Ellipsis:
            rest = 0
            for k2 in key[key.index(Ellipsis) + 1:]:
                if k2 is Ellipsis:
                    return None  # (NumPy's message)
                if k2 is not None:
                    rest += 1
            skip = nd - src - rest
            if skip > 0:
                d += skip
                src += skip
        else:
            return None
    return steps


def _too_many_indices(key, shape):
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                         "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    used = _py_sum(1 for k in key if k is not None and k is not Ellipsis)
    raise IndexError(f"too many indices for tensor of dimension {len(shape)} (tensor of shape "
                     f"{list(shape)}, {used} indices)")


def getitem(self, key) -> Tensor:
    """``tensor[key]``: basic indexing gives a view, advanced indexing a copy.

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(6.).reshape(2, 3)
        >>> x[1], x[:, ::2].shape, x[x > 3]
        (tensor([3., 4., 5.]), torch.Size([2, 2]), tensor([4., 5.]))
    """
    c = key.__class__
    if c is int:  # Note [Basic indexing as view steps]: the commonest key first
        shape = self._data.shape
        if shape and -shape[0] <= key < shape[0]:
            return view_apply(T.select, self, (key,))
        steps = _basic_steps((key,), shape)  # (raises PyTorch's error)
    elif c is tuple:
        steps = _basic_steps(key, self._data.shape)
    elif c is slice:  # alone, a slice always slices
        if not self._data.ndim:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if key.step is not None and key.step <= 0:
            raise ValueError("step must be greater than zero")
        return view_apply(T.slice_op, self, (key,))
    elif key is None:
        return view_apply(T.unsqueeze, self, 0)
    elif key is Ellipsis:
        return view_apply(T.alias, self, None)
    else:
        steps = None
    if steps is None:
        key = norm_key(key)
        steps = _basic_steps(key, self._data.shape) if _basic(key) else None
    if steps is not None:
        if not steps:
            return view_apply(T.alias, self, None)
        t = self
        for op, p in steps:
            t = view_apply(op, t, p)
        return t
    parts = _advanced_parts(key, self._data.shape)
    t = self
    if parts is not None:  # the basic parts first, as views (Note [Basic indexing as ...])
        steps, idx = parts
        for op, p in steps:
            t = view_apply(op, t, p)
        if not idx:
            return t
    else:
        idx = key
    try:
        return apply(T.index, (t,), idx)
    except IndexError as e:
        _mask_shape_error(self._data.shape, key)
        raise IndexError(f"{e} (tensor of shape {list(self.shape)}, index {key})") from None


def _advanced_parts(key: tuple, shape: tuple):
    """For a key with index arrays: PyTorch's view steps of its basic parts (ints select,
    slices slice, None unsqueezes: Note [Basic indexing as view steps]; a 0-d integer index
    is an int) and the key of arrays left for the advanced index of that view; None for
    keys left to NumPy whole (bools, several ellipses, errors)."""
    nd = len(shape)
    used = 0
    for k in key:
        if k.__class__ is np.ndarray:
            used += k.ndim if k.dtype == np.bool_ else 1
        elif k is not None and k is not Ellipsis:
            used += 1
    if used > nd:
        return None
    steps, idx = [], []
    d = src = pos = 0  # dims of the view so far, of the input, covered by idx
    ellipsis = False
    for k in key:
        c = k.__class__
        if c is np.ndarray and (k.ndim or k.dtype == np.bool_):
            if not k.ndim:
                return None
            while pos < d:
                idx.append(_FULL)
                pos += 1
            n = k.ndim if k.dtype == np.bool_ else 1
            idx.append(k)
            pos += n
            d += n
            src += n
        elif c is slice:
            if k.start or (k.step is not None and k.step != 1) or (
                    k.stop is not None and k.stop < shape[src]):
                steps.append((_SLICE, (_FULL,) * d + (k,)))
            d += 1
            src += 1
        elif c is int or c is np.ndarray or (c is not bool and isinstance(k, np.integer)):
            size = shape[src]
            if not -size <= k < size:
                return None
            steps.append((_SELECT, (_FULL,) * d + (int(k),)))
            src += 1
        elif k is None:
            steps.append((_UNSQUEEZE, d))
            d += 1
        elif k is Ellipsis and not ellipsis:
            ellipsis = True
            d += nd - used
            src += nd - used
        else:
            return None
    return steps, tuple(idx)


def _mask_shape_error(shape, key) -> None:
    """Raise PyTorch's IndexError for a boolean mask in ``key`` whose shape does not match
    the dims it covers (NumPy's message says "boolean index did not match")."""
    nd = len(shape)
    used = _py_sum(1 if not isinstance(k, np.ndarray) else (k.ndim if k.dtype == np.bool_ else 1)
                   for k in key if k is not None and k is not Ellipsis)
    pos = 0
    shape = list(shape)  # None inserts a dim first, as PyTorch reports it
    for k in key:
        if k is None:
            shape.insert(pos, 1)
            pos += 1
            continue
        if k is Ellipsis:
            pos += nd - used
            continue
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j, m in enumerate(k.shape):
                if pos + j < len(shape) and m != shape[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {pos + j} (a "
                        f"boolean mask must have the shape of the dims it selects from; "
                        f"build it from the tensor itself, e.g. x[x > 0], or index with "
                        f"integer positions, e.g. mask.nonzero())")
            pos += k.ndim
            continue
        pos += 1


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:  # noqa: A002
    """Out-of-place ``input[indices] = values`` (or ``+=`` with ``accumulate``).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_put((torch.tensor([0, 0]),), torch.tensor(1.), accumulate=True)
        tensor([2., 0., 0.])
    """
    key = norm_key(tuple(indices) if isinstance(indices, list) else indices)
    if not isinstance(values, Tensor):
        values = _make(np.asarray(values, dtype=input._data.dtype))
    elif values._data.dtype != input._data.dtype:
        _check_put_dtype(input, key, values, accumulate)
        values = values.to(input.dtype)
    return apply(T.index_put, (input, values), (key, bool(accumulate)))


# Note [index_put dtypes]
# PyTorch's index_put_ (``x[idx] = v`` with a tensor or list index) requires ``v`` to
# have x's dtype ("Index put requires the source and destination dtypes match"), after
# checking that v broadcasts to the indexed shape. Two cases cast instead: an index
# without tensors (ints and 0-d integer tensors select, slices view: a copy_), and one
# boolean mask of one or more dims with a one-element value (PyTorch dispatches that to
# masked_fill_).
def _check_put_dtype(self: Tensor, key: tuple, value: Tensor, accumulate: bool) -> None:
    """Raise PyTorch's error for ``self[key] = value`` (or index_put) when ``value``'s
    dtype differs from self's and PyTorch would not cast it (Note [index_put dtypes]).
    Called only on a dtype mismatch."""
    arrays = [k for k in key if isinstance(k, np.ndarray) and (k.ndim or k.dtype == np.bool_)]
    if not arrays:
        return
    if not accumulate and value._data.size == 1 and len(arrays) == 1 and \
            arrays[0].dtype == np.bool_ and arrays[0].ndim:
        return
    try:
        shape = _indexed_shape(self, key)
    except IndexError:
        shape = None
    vs = value._data.shape
    if shape is not None and (len(vs) > len(shape) or builtins.any(
            a != b and a != 1 for a, b in zip(vs[::-1], shape[::-1]))):
        raise _index_put_shape_error(self, key, vs)
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got "
        f"{_LEGACY_NAMES[self.dtype.name]} for the destination and "
        f"{_LEGACY_NAMES[value.dtype.name]} for the source. (writing through a tensor index "
        f"does not convert: use value.to({self.dtype}))")


def setitem(self, key, value) -> None:
    """``tensor[key] = value`` as an in-place op (differentiable in both).

    Example:
        >>> import retrograd as torch
        >>> x = torch.zeros(3); x[1] = 5; x
        tensor([0., 5., 0.])
    """
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    key = norm_key(key)
    vt = isinstance(value, Tensor)
    basic = _basic(key)
    graph = STATE.enabled and (self._rg or (vt and value._rg))
    if not graph and not _FW.active:
        if vt and value._data.dtype != self._data.dtype:
            _check_put_dtype(self, key, value, False)
        _check_inplace_leaf(self)
        if _writes_into_itself(self, value, vt):
            return _setitem_overlapping(self, key, value)
        try:
            self._data[key] = value._data if vt else value
        except ValueError:  # NumPy refused the value's shape: PyTorch's rules and messages
            if not vt:
                raise
            shape = _setitem_value_shape(self, key, basic, value)
            vd = value._data if shape is None else value._data.reshape(shape)
            try:
                self._data[key] = vd
            except ValueError:
                if basic:
                    raise
                raise _index_put_shape_error(self, key, vd.shape) from None
        self._vc[0] += 1
        if vt and value._rg and not self._rg and STATE.cut_watch:
            _cut_mark("inplace", "__setitem__ under no_grad", value, self)
        return
    shape = _setitem_value_shape(self, key, basic, value) if vt and value._data.ndim else None
    via = _setitem_check_inplace(self, key) if graph else "Slice"
    if vt and value._data.dtype != self._data.dtype:  # after the in-place checks (PyTorch)
        _check_put_dtype(self, key, value, False)
    if _writes_into_itself(self, value, vt):
        return _setitem_overlapping(self, key, value)
    v = value if vt else _make(np.asarray(value, dtype=self._data.dtype))
    if basic and vt and value._data.ndim:
        ds = self._data[key].shape
        if value._data.shape != ds:  # PyTorch's copy_to: the value viewed without its
            # leading 1s (ViewBackward0, always), then expanded to the view's shape
            v = view(v, _strip_leading_ones(value._data.shape))
            if v._data.shape != ds:
                v = expand(v, ds)
    elif shape is not None:
        v = v.reshape(shape)  # PyTorch views the value without its leading 1s too
    if v._data.dtype != self._data.dtype:
        v = to(v, self.dtype)
    # Note [Setitem nodes]: the node PyTorch records depends on where the write goes: into
    # self itself (a key of ``...``, ``:``, ``0:n``) a 0-d value is fill_ (FillBackward3)
    # and any other a copy_ (CopyBackwards); tensor indices on self are index_put_
    # (IndexPutBackward0); a write into a view of self is CopySlices. The last two are
    # freed after a backward without retain_graph, the first two may run again.
    if via is None and basic:
        full = not vt or not value._data.ndim
        _inplace(self, apply(T.fill_tensor if full else T.copy_from, (self, v)))
        return
    try:
        res = apply(T.index_put if via is None else T.index_put_setitem, (self, v), (key, False))
    except ValueError:
        if basic:
            raise
        raise _index_put_shape_error(self, key, v._data.shape) from None
    _inplace(self, res)


# Note [Setitem checks]
# PyTorch's ``x[key] = v`` first applies the basic part of ``key`` (ints, slices, None,
# ...), which makes a view of x unless every part keeps x whole (``...``, ``:``, ``0:n``).
# Without tensor indices it then copies v into that view, expanding v to the view's shape
# first: a shape error comes before the in-place checks (a leaf, a view of one). With
# tensor indices it calls ``index_put_`` on the view: the in-place checks come first, then
# the shape check of the value against the indexing result. Either way, the value is
# viewed without its leading 1-sized dims. The checks below follow that order in grad
# mode; a plain write (no graph) tries NumPy first, whose broadcasting agrees with
# PyTorch's but for those leading 1s, and checks only when NumPy refuses. The indexing
# result's shape (a copy, for tensor indices) is computed only for a message.
def _setitem_value_shape(self, key, basic, value):
    """The value's shape without its leading 1s if that differs from its shape, else None;
    for a basic key, PyTorch's expand check of the value against ``self[key]``."""
    vs = value._data.shape
    if basic:
        r = self._data[key]
        ds = r.shape
        if vs == ds:
            return None
    stripped = _strip_leading_ones(vs)
    if basic and stripped != ds:
        _check_expand(value, stripped, ds)
    return stripped if len(stripped) != len(vs) else None


def _indexed_shape(self, key) -> tuple:
    """The shape of ``self[key]``, from a zero-strided stand-in for self (no copy of self
    for tensor indices)."""
    return np.lib.stride_tricks.as_strided(
        np.zeros(1, np.int8), self._data.shape, (0,) * self._data.ndim)[key].shape


def _index_put_shape_error(self, key, vshape) -> RuntimeError:
    rshape = _indexed_shape(self, key)
    return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                        f"broadcast to indexing result of shape {list(rshape)} (the value must "
                        "broadcast to the shape of x[key])")


def _setitem_check_inplace(self, key):
    """PyTorch's in-place checks for ``self[key] = v`` in grad mode (Note [Setitem checks]):
    those of ``self`` when the write goes into ``self`` itself, else those of the view of
    ``self`` the basic part of ``key`` makes, named after its last view op. Returns that
    view op's name ("Select", "Slice", "Unsqueeze"), or None for ``self`` itself."""
    via = None
    shape = self._data.shape
    dims = len(shape) - _py_sum(0 if k is None or k is Ellipsis else
                                k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_
                                else 1 for k in key)
    d = 0
    for k in key:
        if k is None or k is True:
            via = "Unsqueeze"
        elif k is Ellipsis:
            d += dims
        elif k.__class__ is slice:
            if not (k.start in (None, 0) and k.step in (None, 1) and
                    (k.stop is None or d >= len(shape) or k.stop >= shape[d])):
                via = "Slice"
            d += 1
        elif isinstance(k, np.ndarray):
            d += k.ndim if k.dtype == np.bool_ else 1
        else:
            via = "Select"
            d += 1
    if via is None:
        _check_inplace_leaf(self, True)
        return None
    base = self._base
    if base is not None:
        check_view_rebase(self, indirect=False, via=via if self._rg else None)
    else:
        base = self
    if (self._rg or base._rg) and base._gfn is None:
        _raise_view_of_leaf()
    return via


def _strip_leading_ones(shape) -> tuple:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def _writes_into_itself(self, value, vt: bool) -> bool:
    """``self[key] = value`` needs the overlap rules: NumPy holds self's memory read-only
    (an expanded or overlapping view) or the value shares it (Note [Memory overlap in
    in-place ops] in overlap.py); not while ``_setitem_overlapping`` itself writes."""
    d = self._data
    return self is not _WRITING[0] and (not d.flags.writeable or (vt and (
        value._data is d or _overlap.may_alias(d, value._data))))


def _setitem_overlapping(self, key, value) -> None:
    """``self[key] = value`` where NumPy holds self's memory read-only (an expanded or
    overlapping view) or ``value`` shares it: PyTorch's checks (a basic key is a copy_ into
    the view ``self[key]``; an advanced one index_put_, or masked_fill_ for one mask and a
    single value), then the write (Note [Memory overlap in in-place ops] in overlap.py)."""
    d = self._data
    vd = value._data if isinstance(value, Tensor) else None
    if _basic(key):
        try:
            target = d[key]
        except (IndexError, ValueError, TypeError):  # the write reports it
            return _aliased_write(self, lambda: setitem(self, key, value))
        src = same = ()
        if vd is not None:  # PyTorch: target.copy_(value), target.fill_(a 0-d value), or
            if vd.shape == target.shape:  # the copy_ of the value without its leading 1s
                src = (vd,)  # and expanded
            elif vd.ndim == 0:  # (fill_ clones a value that shares memory: not compared)
                pass
            else:  # (stride 0 along a dim of size > 1 makes it "too hard": not compared)
                try:
                    src = (T._expand_fwd(vd.reshape(_strip_leading_ones(vd.shape)),
                                         target.shape),)
                except ValueError:
                    pass
            same = src
        if not (same and _overlap.same_memory(target, same[0])):  # onto itself: a no-op
            _overlap.check(target, src)

        if STATE.enabled and (self._rg or (vd is not None and value._rg)):
            # as PyTorch, a copy_ into the view self[key]: the base's gradient is then
            # CopySlices' over that view, which differs from an index_put on self when the
            # view's elements share memory
            if vd is None:
                value = _make(np.asarray(value, dtype=d.dtype))
            elif vd.ndim == 0 and target.shape != ():
                fill_(getitem(self, key), value)
                return None
            elif vd.shape != target.shape:
                value = value.reshape(_strip_leading_ones(vd.shape)).expand(target.shape)
            copy_(getitem(self, key), value)
            return None

        def compute():
            return np.broadcast_to(vd if vd is not None else np.asarray(value, d.dtype),
                                   target.shape)
        return _aliased_write(self, lambda: setitem(self, key, value), compute,
                              (vd,) if vd is not None else (), out=target)
    sliced_key = []
    for k in key:
        if isinstance(k, np.ndarray):
            sliced_key += [slice(None)] * (k.ndim if k.dtype == np.bool_ else 1)
        else:
            sliced_key.append(k)
    sliced = d[tuple(sliced_key)]
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    as_mask = (len(arrays) == 1 and arrays[0].dtype == np.bool_ and
               (vd is None or vd.size == 1))  # PyTorch's masked_fill_ dispatch
    cmp = vd
    if vd is not None and vd.ndim and vd.shape[0] == 1:
        # PyTorch views the value without its leading 1s: a tensor of its own, compared
        # with self by its memory and strides (an expanded one is "too hard": allowed)
        cmp = vd.reshape(_strip_leading_ones(vd.shape))
    elif vd is not None and value is self and T.whole_selection(key, d.shape, False):
        cmp = sliced  # PyTorch writes into the value tensor itself: "full" overlap
    _overlap.check(sliced, (cmp,) if cmp is not None and not as_mask else (), "index_put",
                   "index_put_")
    if as_mask and not sliced.flags.writeable and _overlap.internal(sliced):
        _overlap.warn_expanded("masked_fill_")

    def body():
        return setitem(self, key, value)
    if STATE.enabled and (self._rg or (vd is not None and value._rg)) and \
            _views_itself(self):  # Note [In-place ops on overlapping views]
        def body():
            v = value if vd is not None else _make(np.asarray(value, dtype=d.dtype))
            if v._data.dtype != d.dtype:
                v = to(v, self.dtype)
            _inplace(self, apply(T.index_put_setitem, (_overlapping_self(self), v),
                                 (key, False)))
    return _aliased_write(self, body,
                          rewrite=lambda w: w.__setitem__(key, vd if vd is not None else value))


def _views_itself(self) -> bool:
    """Is ``self`` a view (of a base that requires grad) whose elements share memory?"""
    return self._base is not None and self._base._rg and _overlap.aliases_itself(self._data)


def gather(input, dim: int, index) -> Tensor:  # noqa: A002
    """``out[i][j] = input[i][index[i][j]]`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.gather(torch.tensor([[1., 2.], [3., 4.]]), 1, torch.tensor([[1], [0]]))
        tensor([[2.],
                [3.]])
    """
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "gather", input, d)
    return apply(T.gather, (input, index), d)


def _check_index(index, fn, input=None, d=0):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError(f"{fn}(): Expected dtype int64 for index")
    if input is None or not index._data.size:
        return
    idx = index._data
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.min() < 0 or idx.max() >= size:  # PyTorch checks too (negative indices included)
        bad = int(idx[(idx < 0) | (idx >= size)].flat[0])
        raise RuntimeError(
            f"index {bad} is out of bounds for dimension {d} with size {size} (in {fn}: "
            f"every index along dim {d} must lie in [0, {size - 1}]; {fn} takes no negative "
            "indices, so wrap them first, e.g. index % size)")


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:  # noqa: A002
    """Out-of-place scatter: ``out[index[i][j]][j] = src[i][j]`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).scatter(0, torch.tensor([2]), torch.tensor([5.]))
        tensor([0., 0., 5.])
    """
    if src is None:
        src = value
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "scatter", input, d)
    if reduce is not None and reduce not in ("add",):
        raise NotImplementedError(f"retrograd: scatter reduce={reduce!r} is not supported; use "
                                  "scatter_add or scatter_reduce")
    if not isinstance(src, Tensor):  # scatter.value / scatter.value_reduce (one edge)
        op = T.scatter_value if reduce is None else T.scatter_value_reduce
        return apply(op, (input, index), (d, reduce, src))
    # scatter.reduce records PyTorch's NotImplemented node (kernel: scatter_add's)
    return apply(T.scatter if reduce is None else T.scatter_reduce, (input, index, src),
                 (d, reduce))


def scatter_add(input, dim: int, index, src) -> Tensor:  # noqa: A002
    """Out-of-place scatter that adds: ``out[index[i][j]][j] += src[i][j]``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).scatter_add(0, torch.tensor([1, 1]), torch.tensor([1., 2.]))
        tensor([0., 3., 0.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "scatter_add", input, d)
    return apply(T.scatter_add, (input, index, src), (d, "add"))


def index_select(input, dim: int, index) -> Tensor:  # noqa: A002
    """Rows (or slices along ``dim``) picked by ``index``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).index_select(0, torch.tensor([1]))
        tensor([[3., 4.]])
    """
    d = _wrap_dim(dim, input._data.ndim)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return apply(T.index_select, (input, index), d)


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:  # noqa: A002
    """Out-of-place ``input[index] += alpha * source`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_add(0, torch.tensor([0, 0]), torch.ones(2))
        tensor([2., 0., 0.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    return apply(T.index_add, (input, index, source), (d, alpha))


def index_copy(input, dim: int, index, source) -> Tensor:  # noqa: A002
    """Out-of-place ``input[..., index, ...] = source`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([5., 7.]))
        tensor([7., 0., 5.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor) or index._data.dtype != np.int64 or index._data.ndim > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 and be a LongTensor "
                         f"(got {type(index).__name__}"
                         f"{'' if not isinstance(index, Tensor) else ' ' + str(index.dtype)}; "
                         "pass a 1-D int64 tensor, e.g. torch.tensor([0, 2]))")
    _check_index(index.reshape(-1), "index_copy", input, d)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype} and (source) {source.dtype}")
    key = norm_key((slice(None),) * d + (index.reshape(-1),))
    src = source if source._data.ndim == input._data.ndim or index._data.ndim else \
        source.unsqueeze(d)
    return apply(T.index_put_setitem, (input, src), (key, False))


def index_fill(input, dim: int, index, value) -> Tensor:  # noqa: A002
    """Out-of-place ``input[..., index, ...] = value`` along ``dim`` (``value``: a number or
    a 0-d tensor, which then gets the gradient of the filled positions).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).index_fill(1, torch.tensor([0, 2]), 5.)
        tensor([[5., 0., 5.],
                [5., 0., 5.]])
    """
    vt = isinstance(value, Tensor)
    if vt and value._data.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    int_dim = dim.__class__ is int or isinstance(dim, np.integer)
    number = vt or _is_number(value) or value.__class__ is complex
    if not (isinstance(index, Tensor) and int_dim and number):
        got = ", ".join(type(a).__name__ for a in (dim, index, value))
        raise TypeError(f"index_fill() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n * (int dim, Tensor index, Tensor value)"
                        "\n * (int dim, Tensor index, Number value)")
    if index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index. (pass an int64 "
                         "tensor, e.g. torch.tensor([0, 2]) or index.long())")
    if not vt and value.__class__ is complex and not input.is_complex():
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    nd = input._data.ndim
    d = _wrap_dim(int(dim), nd)
    if index._data.ndim > 1:
        raise RuntimeError(f"Index has to be a vector/scalar (got an index of shape "
                           f"{list(index.shape)}: flatten it first)")
    raw = index._data.reshape(-1)
    idx = raw
    if raw.size:
        size = input._data.shape[d] if nd else 1
        lo, hi = raw.min(), raw.max()
        if lo < -size or hi >= size:
            bad = int(raw[(raw < -size) | (raw >= size)][0])
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size} "
                             f"(index_fill takes indices in [{-size}, {size - 1}])")
        if lo < 0:
            idx = np.where(raw < 0, raw + size, raw)
    if vt:
        return apply(T.index_fill_tensor, (input, value), (d, idx, raw))
    return apply(T.index_fill, (input,), (d, idx, raw, value))


def masked_fill(input, mask, value) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is True, ``input`` elsewhere.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(3).masked_fill(torch.tensor([True, False, True]), 0.)
        tensor([0., 1., 0.])
    """
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_legacy_name(mask.dtype).lower()}")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return apply(T.masked_fill_tensor, (input, value), (mask,))
    return apply(T.masked_fill, (input,), (mask, np.asarray(value, dtype=input._data.dtype)))


def masked_select(input, mask) -> Tensor:  # noqa: A002
    """The elements where ``mask`` is True, as a 1-D tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).masked_select(torch.tensor([True, False, True]))
        tensor([1., 3.])
    """
    return apply(T.masked_select, (input,), (mask,))


def take_along_dim(input, indices, dim=None) -> Tensor:  # noqa: A002
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the other dims).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[10., 30.], [40., 20.]])
        >>> torch.take_along_dim(x, x.argmax(1, keepdim=True), dim=1)
        tensor([[30.],
                [40.]])
    """
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim)
    si, sx = list(indices.shape), list(input.shape)
    si[d] = sx[d] = 1
    b = np.broadcast_shapes(tuple(si), tuple(sx))
    xs = list(b)
    xs[d] = input.shape[d]
    ishp = list(b)
    ishp[d] = indices.shape[d]
    return gather(expand(input, xs), d, _make(np.ascontiguousarray(
        np.broadcast_to(indices._data, ishp))))


def take(input, index) -> Tensor:  # noqa: A002
    return input.reshape(-1)[index]


def nonzero(input, *, as_tuple: bool = False):  # noqa: A002
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


def argwhere(input) -> Tensor:  # noqa: A002
    return nonzero(input)


def _take_values(input, idx_arr, dim, which, keepdim=True):
    it = _make(np.ascontiguousarray(idx_arr).astype(np.int64))
    vals = apply(T.take_ops[which], (input, it), (dim, keepdim))
    return vals, it


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False):  # noqa: A002
    """Sorted values and the indices that sort them (values carry the gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.sort(torch.tensor([3., 1., 2.])).values
        tensor([1., 2., 3.])
    """
    if input._data.ndim == 0:  # SortBackward0 all the same, as PyTorch
        it = _make(np.zeros((), np.int64))
        return _rt("sort")(apply(T.take_ops["sort"], (input, it), (0, True)), it)
    d = _wrap_dim(dim, input._data.ndim)
    data = input._data
    if descending:
        idx = np.argsort(_desc_key(data), axis=d, kind="stable")
    else:
        idx = np.argsort(data, axis=d, kind="stable")
    vals, it = _take_values(input, idx, d, "sort")
    return _rt("sort")(vals, it)


def _desc_key(data):
    if data.dtype.kind == "b":
        return ~data
    if data.dtype.kind == "u":
        return -(data.astype(np.int64))
    k = -data.astype(np.float64) if data.dtype.kind == "f" or data.dtype == D.bfloat16.np \
        else -data.astype(np.int64)
    if data.dtype.kind == "f":
        k = np.where(np.isnan(data), -np.inf, k)
    return k


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:  # noqa: A002
    """Indices that sort ``input`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.argsort(torch.tensor([3., 1., 2.]))
        tensor([1, 2, 0])
    """
    return sort(input, dim, descending, stable).indices


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Example:
        >>> import retrograd as torch
        >>> torch.topk(torch.tensor([1., 5., 3.]), 2).values
        tensor([5., 3.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d] if input._data.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    data = input._data
    key = _desc_key(data) if largest else data
    idx = np.argsort(key, axis=d, kind="stable")
    idx = np.take(idx, np.arange(k), axis=d)
    vals, it = _take_values(input, idx, d, "topk")
    return _rt("topk")(vals, it)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):  # noqa: A002
    """The ``k``-th smallest value along ``dim`` and its index.

    Example:
        >>> import retrograd as torch
        >>> torch.kthvalue(torch.tensor([3., 1., 2.]), 2).values
        tensor(2.)
    """
    return _kth(T.kthvalue, input, k, dim, keepdim)


def _kth(op, input, k, dim, keepdim):
    """kthvalue/median(dim): the index picked here, the values by ``op`` (one node that
    saves the indices, as PyTorch's KthvalueBackward0/MedianBackward1)."""
    d = _wrap_dim(dim, input.ndim)
    idx = np.take(np.argsort(input._data, axis=d, kind="stable"), [k - 1], axis=d)
    if not keepdim and input._data.ndim:
        idx = np.squeeze(idx, d)
    it = _make(np.array(idx, dtype=np.int64))  # (ascontiguousarray makes 0-d 1-d)
    return _rt("median" if op is T.median_dim else "kthvalue")(
        apply(op, (input,), (d, bool(keepdim), it)), it)


def median(input, dim=None, keepdim: bool = False):  # noqa: A002
    """The lower median of all elements, or along ``dim`` with its index.

    Example:
        >>> import retrograd as torch
        >>> torch.median(torch.tensor([3., 1., 2., 4.]))
        tensor(2.)
    """
    if dim is None:  # of an empty tensor: nan, as in PyTorch
        return apply(T.median_all, (input,), (None, False))
    n = input.shape[dim]
    return _kth(T.median_dim, input, (n - 1) // 2 + 1, dim, keepdim)


# ----------------------------------------------------------------------------------
# conversions and copies


def parse_to_args(args, kwargs) -> tuple:
    """(dtype or None, copy) from the arguments of ``Tensor.to``/``Module.to``, in any of
    PyTorch's forms: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
    ``to(dtype, non_blocking, copy)``, keywords. The device must be the CPU."""
    from .._device import check_device
    from .._device import device as _device

    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: unexpected "
                        f"keyword {next(iter(kwargs))!r}. to() takes a dtype, a device (the "
                        "CPU), another tensor, or the keywords dtype, device, copy, "
                        "non_blocking and memory_format.")
    flags = []
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, bool):  # positional non_blocking, then copy (PyTorch's order)
            flags.append(a)
        elif isinstance(a, (str, _device, int)):
            dev = a
        elif a is not None:
            dtype = D.as_dtype(a)
    if len(flags) > 1:
        copy = flags[1]
    check_device(dev)
    return dtype, copy


def to(self, *args, **kwargs) -> Tensor:
    """Convert dtype (and accept a device, which must be the CPU).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).to(torch.float64).dtype
        torch.float64
    """
    dtype, copy = parse_to_args(args, kwargs)
    if dtype is None:
        return clone(self) if copy else self
    dt = D.as_dtype(dtype).np
    if dt == self._data.dtype and not copy:
        return self
    return apply(T.to_copy, (self,), dt)


def _caster(dt):
    def fn(self, memory_format=None) -> Tensor:
        return to(self, dt)
    fn.__name__ = dt.name
    fn.__doc__ = f"``self.to({dt!r})``."
    return fn


def type_as(self, other) -> Tensor:
    return to(self, other.dtype)


def type_(self, dtype=None, non_blocking: bool = False):
    if dtype is None:
        return _legacy_type_str(self)
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": D.float32, "torch.DoubleTensor": D.float64,
                 "torch.LongTensor": D.int64, "torch.IntTensor": D.int32,
                 "torch.HalfTensor": D.float16, "torch.BoolTensor": D.bool,
                 "torch.ByteTensor": D.uint8}
        dtype = names[dtype]
    return to(self, dtype)


def _legacy_type_str(t) -> str:
    from ..autograd.node import legacy_type_name

    return legacy_type_name(t)


def clone(input, *, memory_format=None) -> Tensor:  # noqa: A002
    """A copy in the graph (its gradient flows back to ``input``).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, requires_grad=True).clone()
        tensor([1.], grad_fn=<CloneBackward0>)
    """
    return apply(T.clone, (input,))


def contiguous(input, memory_format=None) -> Tensor:  # noqa: A002
    """``input`` itself when contiguous, otherwise a contiguous copy.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).t().contiguous().is_contiguous()
        True
    """
    if input._data.flags.c_contiguous:
        return input
    out = apply(T.clone, (input,))
    out._data = np.ascontiguousarray(out._data)
    return out


# ----------------------------------------------------------------------------------
# in-place ops (Note [In-place ops])


def _check_inplace_leaf(self, grad: bool | None = None) -> None:
    """PyTorch's ``check_inplace``: in grad mode, when the op involves a tensor that
    requires grad (``grad``; default: ``self`` does), refuse to write into a leaf that
    requires grad, a view (that requires grad) of any leaf, or a view whose history can't
    be rewritten."""
    if not STATE.enabled:
        return
    if grad is None:
        grad = self._rg
    if not grad:
        return
    base = self._base
    if base is not None:
        if grad:
            check_view_rebase(self, indirect=False)
        if (self._rg or base._rg) and base._gfn is None:  # PyTorch: the view requires
            _raise_view_of_leaf()  # grad and its base is a leaf (whether or not it does)
    elif self._rg and self._gfn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation. Leaves "
            "that require grad (parameters, tensors made with requires_grad=True) must keep "
            "their value for backward: update them inside `with torch.no_grad():` (as optimizers "
            "do), or use an out-of-place op (x = x + 1).")


def _raise_view_of_leaf() -> None:
    # PyTorch asks only that the view require grad and its base be a leaf: the base need not
    # require grad itself (a view made before ``view.requires_grad_()`` counts too)
    raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation. Clone the leaf first (x = leaf.clone(); "
                       "x[...] = ...), or modify it under torch.no_grad().")


#: the tensor an overlapping write (``_aliased_write``) is under way into: its op, re-entered,
#: skips the overlap checks
_WRITING: list = [None]


def _aliased_write(self, body, compute=None, inputs=(), out=None, rewrite=None):
    """Run ``body()``, an in-place op's usual path, on ``self`` whose memory NumPy holds
    read-only (an expanded or overlapping view) or that an input overlaps: the op writes
    through a writable alias of the same memory (Note [Memory overlap in in-place ops] in
    ops/overlap.py). When element-by-element order matters (``out``, default ``self``'s
    array, aliases itself or an input), the values are then rewritten as PyTorch's kernel
    leaves them: ``compute()`` gives the op's result from the memory as it is. An op that
    writes only some elements (index_put_, masked_fill_) passes ``rewrite(w)``, which
    writes just those into the writable alias ``w``, when self's elements share memory."""
    d = self._data
    w = _overlap.writable(d)
    if w is None:  # memory NumPy must not write (a shared constant): self gets its own
        d = self._data = _overlap.private_copy(d)
        w = _overlap.writable(d)
    out = d if out is None else out
    seq = compute is not None and _overlap.needs_sequential(out, inputs)
    redo = not seq and rewrite is not None and _overlap.aliases_itself(d)
    orig = d.copy() if seq or redo else None
    self._data = w
    prev_writing = _WRITING[0]
    _WRITING[0] = self  # body() may re-enter the op: the checks are done
    try:
        res = body()
    finally:
        _WRITING[0] = prev_writing
        if self._data is w:
            self._data = d
    node = self._gfn  # a node that saved its result keeps the read-only array
    if w is not d and node is not None and node._out is not None:
        node._out[:] = [(d,) + e[1:] if e is not None and e[0] is w else e for e in node._out]
    if redo:
        w[...] = orig
        rewrite(w)
    if seq:
        w[...] = orig
        prev = STATE.enabled
        STATE.enabled = False
        try:
            _overlap.sequential(out, compute, inputs)
        finally:
            STATE.enabled = prev
    return res


_CAN_CAST_CACHE: dict = {}


def _can_cast(src, dst) -> bool:
    key = (src, dst)
    r = _CAN_CAST_CACHE.get(key)
    if r is None:
        s, d = D.FROM_NP[src], D.FROM_NP[dst]
        r = _CAN_CAST_CACHE[key] = s.category <= d.category
    return r


# Note [In-place ops]
# An in-place op is its out-of-place op followed by a write into the tensor's
# memory: the value is computed (and, in grad mode, recorded against the tensor's
# *old* history), written with np.copyto so views see it, and the version counter
# is bumped so saved copies of the old value are detected. The tensor then takes
# the new node as its grad_fn ("rebase"). For a view, the base's history is
# rewritten instead (Note [Views and in-place]).
def _inplace(self: Tensor, res: Tensor) -> Tensor:
    _check_inplace_leaf(self, res._rg)
    sd = self._data.dtype
    rd = res._data.dtype
    if sd != rd and not _can_cast(rd, sd):
        raise RuntimeError(f"result type {_LEGACY[res.dtype.name]} can't be cast to the desired "
                           f"output type {_LEGACY[self.dtype.name]}. The in-place op would "
                           "truncate its result; use the out-of-place op, or convert the tensor "
                           "first (x = x.float()).")
    if res._data.shape != self._data.shape:
        bshape = np.broadcast_shapes(res._data.shape, self._data.shape)
        if bshape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(bshape)}")
    if res._rg:
        _snapshot_saved_self(self, res._gfn)
    np.copyto(self._data, res._data, casting="unsafe")
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, res)
    if not (res._rg and STATE.enabled):
        if self._rg and self.grad_fn is not None and STATE.enabled:
            raise RuntimeError("the derivative of this in-place op is not implemented: it was "
                               "applied to a tensor that requires grad. Use it under no_grad() "
                               "or on a detached tensor.")
        return self
    node = res._gfn
    if node._out is not None and res._data.shape == self._data.shape:
        # the op saved its output: that output now lives in self's memory, under self's
        # version counter (shared with the base and every view), so a later write into
        # any of them is caught when the rule reads it (PyTorch saves self itself, in
        # self's dtype: x32.pow_(e64) saves the float32 result, and its node is x's
        # grad_fn with no cast node after it; the engine casts gradients to each edge's
        # dtype)
        node._out[res._out_nr] = (self._data, self._vc, self._vc[0])
    if res._data.shape != self._data.shape:
        res = expand(res, self._data.shape)
    base = self._base
    if base is not None:
        _rebase_view(self, res)
        return self
    # Note [In-place ops]: the tensor takes the result's node as its grad_fn ("rebase")
    old = self._gfn
    node = res._gfn
    self._gfn = node
    self._out_nr = res._out_nr
    if not self._rg:
        self._rg = True
        if self._views is not None:
            mark_views_requiring_grad(self)
    if self._retains:
        move_retain(self, old, node)
    return self


def _snapshot_saved_self(self: Tensor, node) -> None:
    """If the op being applied in place saved ``self`` (its rule needs the value from
    before the write, e.g. the other operand's gradient of ``x.mul_(w)``), save a copy
    instead, keeping self's old history so double backward still reaches it. PyTorch
    does the same ("original self")."""
    saved = node._saved if node is not None else None
    if not saved:
        return
    save = node._op.save
    for i, x in enumerate(saved):
        if x is self and save[i] == 0:  # only the self operand (PyTorch: original self)
            snap = _make(self._data.copy())
            if self._rg:
                snap._rg = True
                snap.grad_fn = self.grad_fn
                snap._out_nr = self._out_nr
            saved[i] = snap
            node._ver[i] = 0


def _copy_slices_vjp(g, s, n, needs):
    recipe = n._p
    out = [None, None]
    if needs[0]:
        mask = _make(np.ones(g._data.shape, dtype=np.bool_))
        region = replay_view(recipe, mask)._data
        if _overlap.internal(region):  # PyTorch copies the view's gradient into this region
            raise RuntimeError(_overlap.INTERNAL_MSG + " (backward of an in-place op on an "
                               "expanded view: its gradient cannot be written back; make the "
                               "view with .clone() before the in-place op)")
        _overlap.writable(region)[...] = False  # (maybe overlapping)
        out[0] = where(mask, g, 0.0)
    if needs[1]:  # on a contiguous g, as the mask above (PyTorch copies g into the base's
        out[1] = replay_view(recipe, contiguous(g))  # layout first): g may be transposed
    return out


_COPY_SLICES = Op("copy_slices", None, _copy_slices_vjp, node_name="torch::autograd::CopySlices")
_COPY_SLICES.unsaved = RELEASED  # PyTorch's CopySlices releases the node it wraps


# Note [CopySlices folding]
# An in-place op on a view rewrites the base's history. PyTorch records one CopySlices
# node on the base that holds the op's own node (``fn``): backward takes the base's
# gradient, gives the written region's part to ``fn`` as its output gradient, writes
# what ``fn`` returns for its self input back into that region (the region's old values
# were overwritten: only that path reaches them) and passes ``fn``'s other input
# gradients on. Its next_functions are the base's old history followed by ``fn``'s other
# inputs, and ``fn`` itself is no longer a node of the graph. retrograd does the same
# when ``fn`` is a one-output table node whose first edge is the view; otherwise (a
# custom Function's node, a hooked node, a multi-output op) the unfolded CopySlices
# above keeps ``fn`` as a node of its own, with the same gradients.
def _folded_copy_slices_vjp(g, s, n, needs):
    recipe, fn = n._p
    edges = n._edges
    if needs is None:
        needs = [e is not None for e in edges]
    mask = _make(np.ones(g._data.shape, dtype=np.bool_))
    region = replay_view(recipe, mask)._data
    if _overlap.internal(region):  # as _copy_slices_vjp
        raise RuntimeError(_overlap.INTERNAL_MSG + " (backward of an in-place op on an "
                           "expanded view: its gradient cannot be written back; make the "
                           "view with .clone() before the in-place op)")
    _overlap.writable(region)[...] = False
    grads = fn._op.backward(fn, [replay_view(recipe, contiguous(g))], list(needs))
    out = [None, *grads[1:]]
    if needs[0]:
        base = where(mask, g, 0.0)
        if grads[0] is not None:
            replay_view(recipe, base).copy_(grads[0])
        out[0] = base
    return out


_FOLDED_COPY_SLICES = Op("copy_slices_folded", None, _folded_copy_slices_vjp,
                         node_name="torch::autograd::CopySlices")
_FOLDED_COPY_SLICES.unsaved = RELEASED
_FOLDED_BY_NONDIFF = {(): _FOLDED_COPY_SLICES}


def _folded_copy_slices(nondiff: tuple) -> Op:
    """The folded CopySlices op whose hidden slots are ``fn``'s (Note [Non-differentiable
    inputs]): its edges are fn's with the first one replaced, so the positions agree."""
    op = _FOLDED_BY_NONDIFF.get(nondiff)
    if op is None:
        op = _FOLDED_BY_NONDIFF[nondiff] = copy.copy(_FOLDED_COPY_SLICES)
        op.nondiff = nondiff
    return op


# Note [In-place ops on overlapping views]
# PyTorch's CopySlices computes the base's gradient as: the incoming gradient, with the
# view's elements overwritten (``grad_slice.copy_(...)``) by the in-place op's gradient with
# respect to the view's old value. When the view's elements share memory (an overlapping
# unfold or as_strided view), that copy keeps, for each memory location, the value of the
# element written last (TensorIterator's order); our view ops' own rules would sum them
# instead. So an in-place op on such a view computes from ``_overlapping_self(view)``: the
# view's values, recorded from the base by an op whose rule is that overwrite. A saved
# result of the op is the view's memory, as PyTorch's. Known difference: PyTorch's double
# backward differentiates that saved result through the view's own node (a sum over shared
# elements), ours through the overwrite, so second derivatives at shared elements differ.
def _overlap_self_rule(g, s, n):
    _, shape, dt, pos, locs = n._p
    flat = zeros(int(np.prod(shape, dtype=np.int64)), dtype=D.FROM_NP[dt])
    b = g._data.ndim - len(n._p[0].shape)  # leading batch dims (vmap)
    vals = g.reshape(g.shape[:b] + (-1,))[(slice(None),) * b + (_make(pos),)]
    return flat.index_put((slice(None),) * b + (_make(locs),), vals).reshape(
        g.shape[:b] + tuple(shape))


_OVERLAP_SELF = Op("overlap_self", lambda a, p: p[0], (_overlap_self_rule,),
                   node_name="AsStridedBackward0")


def _overlapping_self(view_t: Tensor) -> Tensor:
    """The values of ``view_t`` (a view whose elements share memory), as a tensor recorded
    from its base whose gradient rule is CopySlices' overwrite (Note [In-place ops on
    overlapping views])."""
    base = view_t._base
    d = view_t._data
    where = base_positions(view_t._vfn, base._data.shape)
    contiguous = np.empty(d.shape, d.dtype).strides
    order = _overlap.ti_order(d.shape, [d.strides, contiguous])
    locs = where.reshape(-1)[order]
    last = np.unique(locs[::-1], return_index=True)[1]  # the last write to each location
    pos = order[::-1][last]
    return apply(_OVERLAP_SELF, (base,), (d.copy(), base._data.shape, base._data.dtype, pos,
                                           locs[::-1][last]))


def _rebase_view(view_t: Tensor, res: Tensor) -> None:
    """An in-place op wrote ``res`` into the view ``view_t``: the base's new history is a
    CopySlices node over its old history and ``res`` (Note [Views and in-place]); the view
    itself, like every other view of the base, re-derives its grad_fn from it (Note [View
    grad_fn regeneration])."""
    check_view_rebase(view_t, indirect=False)
    base = view_t._base
    old_node = base._gfn
    old = _make(base._data)
    old._rg = base._rg
    old._gfn = old_node
    old._out_nr = base._out_nr
    old._acc = base._acc
    fn = res._gfn
    e0 = fn._edges[0] if fn is not None and fn._edges else None
    if fn is not None and res._out_nr == 0 and fn._nout == 1 and fn._op.__class__ is Op and \
            0 not in fn._op.nondiff and \
            e0 is not None and e0[0] is view_t._gfn and not fn._hooked:
        # Note [CopySlices folding]: as PyTorch, one CopySlices node that runs the op's
        # node on the written region's gradient: its edges are the base's old history
        # and the op's other inputs (the op's edge to the view itself is replaced)
        node = record(_folded_copy_slices(fn._op.nondiff), base, (old,), (view_t._vfn, fn))
        node._edges = [node._edges[0], *fn._edges[1:]]
    else:
        record(_COPY_SLICES, base, (old, res), view_t._vfn)
    if base._out_nr:
        base._out_nr = 0
    if base._views is not None:
        mark_views_requiring_grad(base)
    if base._retains:
        move_retain(base, old_node, base._gfn)
    view_t._rg = True  # its grad_fn is re-derived on next use (its version is stale)


def _make_inplace(fn, name):
    fast = _FAST_INPLACE.get(name)
    kind = _overlap.policy(name)

    def method(self, *args, **kwargs):
        # Note [Memory overlap in in-place ops] (overlap.py), inline: the hot path of every
        # in-place op. An array that owns its memory is writable (ours are: only views of
        # others are made read-only), and two such arrays never overlap unless they are
        # one; the checks run again only while _overlapping_inplace itself writes
        if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
            check_inference_write(self)
        d = self._data
        own = d.base is None
        if not own and not d.flags.writeable:
            if self is not _WRITING[0]:
                return _overlapping_inplace(self, fn, kind, name, method, args, kwargs)
        else:
            for a in args:
                if isinstance(a, Tensor) and not (own and a._data.base is None) and \
                        a._data is not d and _may_share(d, a._data) and \
                        self is not _WRITING[0]:
                    return _overlapping_inplace(self, fn, kind, name, method, args, kwargs)
            if kwargs:
                for a in kwargs.values():
                    if isinstance(a, Tensor) and not (own and a._data.base is None) and \
                            a._data is not d and _may_share(d, a._data) and \
                            self is not _WRITING[0]:
                        return _overlapping_inplace(self, fn, kind, name, method, args,
                                                    kwargs)
        if not STATE.enabled or not (self._rg or _any_rg(args) or _any_rg(kwargs.values())):
            if fast is not None and fast(self, *args, **kwargs):
                self._vc[0] += 1
                return self
            return _write_plain(self, fn(self, *args, **kwargs))
        # PyTorch's check_inplace runs before the kernel: a leaf (or a view of one) is
        # refused before any argument or shape error of the op itself
        _check_inplace_leaf(self, True)
        return _inplace(self, fn(self, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = f"In-place ``{fn.__name__}`` (bumps the version counter)."
    return method


_may_share = np.may_share_memory


def _overlapping_inplace(self, fn, kind, name, method, args, kwargs):
    """An in-place op on a tensor whose memory NumPy holds read-only (an expanded or
    overlapping view) or that an argument may share: PyTorch's checks, then the write
    (Note [Memory overlap in in-place ops] in overlap.py)."""
    d = self._data
    ins = [a._data for a in (*args, *kwargs.values()) if isinstance(a, Tensor) and
           a is not self]
    _overlap.check(d, ins[:1] if kind == "masked_fill" else ins, kind, name)
    compute = None
    if kind == "ti":
        def compute():
            return fn(self, *args, **kwargs)._data
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        if tensors and D.result_type(self, *tensors).np != d.dtype:
            # PyTorch's CPU TensorIterator reads a promoted copy of self and copies a
            # temporary result back: every value is computed from the memory as it was
            # (Note [Memory overlap in in-place ops]); the copy's order is the output's
            # and the temporary's (contiguous)
            frozen = []

            def compute():
                if not frozen:
                    frozen.append(fn(self, *args, **kwargs)._data)
                return frozen[0]
            ins = [np.empty(d.shape, np.int8)]

    def run():
        return method(self, *args, **kwargs)
    if STATE.enabled and _views_itself(self):  # Note [In-place ops on overlapping views]
        def run():
            _check_inplace_leaf(self, True)
            r = fn(_overlapping_self(self), *args, **kwargs)
            node = r._gfn
            out = _inplace(self, r)
            if node is not None and node._out is not None:  # a saved result is, as in
                # PyTorch, the view: what the kernel leaves in memory
                node._out[r._out_nr] = (d, self._vc, self._vc[0])
            return out
    return _aliased_write(self, run, compute, ins,
                          rewrite=_partial_rewrite(self, fn, kind, args, kwargs))


def _partial_rewrite(self, fn, kind, args, kwargs):
    """For the in-place ops that write only some elements (masked_fill_, index_put_,
    scatter_, index_copy_, tril_, ...): a function writing just those into a writable array
    (``_aliased_write``'s ``rewrite``); None for elementwise ops."""
    def arr(v):
        return v._data if isinstance(v, Tensor) else v
    if kind in ("no_overlap", "none", "index_fill"):  # the elements whose value it changes
        def rewrite(w):
            prev = STATE.enabled
            STATE.enabled = False
            try:
                res = np.broadcast_to(fn(self, *args, **kwargs)._data, w.shape).astype(w.dtype)
            finally:
                STATE.enabled = prev
            old = self._data  # (the memory as it was)
            bits = np.dtype(f"u{w.itemsize}")
            changed = np.ascontiguousarray(res).view(bits) != \
                np.ascontiguousarray(old).view(bits)
            w[changed] = res[changed]
        return rewrite
    if kind == "masked_fill":
        mask = args[0] if args else kwargs["mask"]
        value = args[1] if len(args) > 1 else kwargs["value"]
        return lambda w: w.__setitem__(np.broadcast_to(arr(mask), w.shape), arr(value))
    if kind == "index_put":
        indices, values = args[0], arr(args[1])
        accumulate = args[2] if len(args) > 2 else kwargs.get("accumulate", False)
        key = norm_key(tuple(indices) if isinstance(indices, list) else indices)
        if accumulate:
            return lambda w: np.add.at(w, key, values)
        return lambda w: w.__setitem__(key, values)
    return None


# Note [Direct in-place kernels]
# Outside any graph (optimizer steps under no_grad), the arithmetic in-place ops write
# straight into the tensor's array with ``out=``: computing a full-size result and
# copying it back costs two large temporaries per call, which glibc returns to the OS
# and faults back in every step. Each fast path applies only when the result dtype is
# the tensor's own floating dtype and the operands broadcast to its shape; otherwise
# it returns False and the general path runs. The operation order is the general
# path's, so results are identical.
_F32_64 = frozenset((np.dtype(np.float32), np.dtype(np.float64)))


def _operand(self, other):
    """``other`` as an array that can be written into ``self`` in place, or None."""
    d = self._data
    if isinstance(other, Tensor):
        od = other._data
        if od.dtype != d.dtype:
            return None
        if od.shape != d.shape:
            try:
                if np.broadcast_shapes(od.shape, d.shape) != d.shape:
                    return None
            except ValueError:  # the general path raises PyTorch's error
                return None
        return od
    if other.__class__ in (int, float):
        return _scalar_array(other, d.dtype)
    return None


def _fast_arith(ufunc):
    def fast(self, other, *, alpha=1, rounding_mode=None):
        d = self._data
        if d.dtype not in _F32_64 or rounding_mode is not None or _fw_active():
            return False
        od = _operand(self, other)
        if od is None or (alpha.__class__ is not int and alpha.__class__ is not float):
            return False  # bool, complex, NumPy or tensor alpha: the general path checks it
        if alpha != 1:  # the scaled operand is a temporary: a pooled one for large steps
            a = _scalar_array(alpha, d.dtype)
            od = np.multiply(od, a) if od.nbytes < _buffers.pool_min() else \
                np.multiply(od, a, out=_buffers.empty(od.shape, d.dtype))
        ufunc(d, od, out=d)
        return True
    return fast


def _fast_addc(ufunc):
    def fast(self, tensor1, tensor2, *, value=1):
        d = self._data
        if d.dtype not in _F32_64 or _fw_active():
            return False
        a, b = _operand(self, tensor1), _operand(self, tensor2)
        if a is None or b is None or value.__class__ not in (int, float):
            return False
        t = np.multiply(a, _scalar_array(value, d.dtype)) if value != 1 else a.copy()
        if t.shape != np.broadcast_shapes(t.shape, b.shape):
            return False
        ufunc(t, b, out=t)  # (value * t1) op t2, then added: PyTorch's kernel order
        np.add(d, t, out=d)
        return True
    return fast


def _fast_lerp(self, end, weight):
    d = self._data
    if d.dtype not in _F32_64 or _fw_active() or weight.__class__ not in (int, float) or \
            not isinstance(end, Tensor):
        return False
    e = _operand(self, end)
    if e is None:
        return False
    t = np.subtract(e, d)
    if _py_abs(weight) < 0.5:  # PyTorch's two-sided formula, as in the lerp kernel
        t *= _scalar_array(weight, d.dtype)
        np.add(d, t, out=d)
    else:
        t *= _scalar_array(1 - weight, d.dtype)
        np.subtract(e, t, out=d)
    return True


def _fw_active() -> bool:
    """True while a forward-AD dual level is open (tangents must be tracked)."""
    return bool(_FW.active)


_FAST_INPLACE = {
    "add_": _fast_arith(np.add), "sub_": _fast_arith(np.subtract),
    "mul_": _fast_arith(np.multiply), "div_": _fast_arith(np.true_divide),
    "addcmul_": _fast_addc(np.multiply), "addcdiv_": _fast_addc(np.true_divide),
    "lerp_": _fast_lerp,
}


def _write_plain(self, res):
    """In-place write outside any graph (no_grad updates, optimizers)."""
    _check_inplace_leaf(self)
    sd = self._data.dtype
    if res._data.dtype != sd and not _can_cast(res._data.dtype, sd):
        return _inplace(self, res)
    if res._data.shape != self._data.shape:
        return _inplace(self, res)
    np.copyto(self._data, res._data, casting="unsafe")
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, res)
    return self


def fill_(self, value) -> Tensor:
    """Fill with ``value`` in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2).fill_(3)
        tensor([3., 3.])
    """
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:
        # Note [Memory overlap in in-place ops] (overlap.py): a scalar is written unchecked
        if isinstance(value, Tensor):  # PyTorch: self.copy_(value), which checks self
            _overlap.check(self._data, ())
        return _aliased_write(self, lambda: fill_(self, value))
    vt = value if isinstance(value, Tensor) else None
    if vt is not None:
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if STATE.enabled and (self._rg or value._rg):
            return _inplace(self, apply(T.fill_tensor, (self, value.to(self.dtype))))
        value = value.item()
    if STATE.enabled and self._rg:
        return _inplace(self, apply(T.fill, (self, value)))
    _check_inplace_leaf(self)
    self._data[...] = value
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, vt if vt is not None else _make(self._data))
    return self


def zero_(self) -> Tensor:
    """Set every element to zero in place.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).zero_()
        tensor([0., 0.])
    """
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:  # (unchecked in PyTorch)
        return _aliased_write(self, lambda: zero_(self))
    if STATE.enabled and self._rg:
        return _inplace(self, apply(T.zero, (self,)))
    _check_inplace_leaf(self)
    self._data[...] = 0
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, _make(self._data))
    return self


def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast and cast) into this tensor in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 2).copy_(torch.tensor([1., 2.]))
        tensor([[1., 2.],
                [1., 2.]])
    """
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    if not isinstance(src, Tensor):
        src = tensor(src)
    d, sd = self._data, src._data
    ds, ss = d.shape, sd.shape
    if ds != ss:
        try:
            bshape = np.broadcast_shapes(ds, ss)
        except ValueError:
            a, b, i = _mismatch(ds, ss)
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                               f"at non-singleton dimension {i}: copy_ from {list(ss)} into "
                               f"{list(ds)} (src must broadcast to the destination)") from None
        if bshape != ds:
            raise RuntimeError(f"output with shape {list(ds)} doesn't match the broadcast shape "
                               f"{list(bshape)}")
    if self is not _WRITING[0] and (not d.flags.writeable or (
            sd is not d and (d.base is not None or sd.base is not None) and _may_share(d, sd))):
        # Note [Memory overlap in in-place ops] (overlap.py); copying a tensor onto itself
        # (the same tensor, or the same memory and layout) is a no-op PyTorch allows
        if src is not self and not _overlap.same_memory(d, sd):
            _overlap.check(d, (sd,))
        return _aliased_write(self, lambda: copy_(self, src),
                              lambda: np.broadcast_to(sd, d.shape), (sd,))
    if STATE.enabled and (self._rg or src._rg):
        return _inplace(self, apply(T.copy_from, (self, src)))
    _check_inplace_leaf(self)
    if src._rg and not self._rg and STATE.cut_watch:
        _cut_mark("inplace", "copy_ under no_grad", src, self)
    try:
        np.copyto(self._data, np.broadcast_to(sd, self._data.shape), casting="unsafe")
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must "
                           f"match the size of tensor b ({src.shape[-1] if src.ndim else 1}): "
                           f"copy_ from {list(src.shape)} into {list(self.shape)}") from None
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, src)
    return self


def _rand_inplace(self, arr):
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:
        _overlap.check(self._data, ())  # Note [Memory overlap in in-place ops] (overlap.py)
        return _aliased_write(self, lambda: _rand_inplace(self, arr))
    _check_inplace_leaf(self)
    self._data[...] = arr
    self._vc[0] += 1
    return self


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill with uniform samples from [a, b) in place.

    Example:
        >>> import retrograd as torch
        >>> bool((torch.zeros(100).uniform_(2, 3) >= 2).all())
        True
    """
    from .._random import gen

    return _rand_inplace(self, gen(generator).uniform(a, b, self._data.shape))


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with normal samples in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).normal_().shape
        torch.Size([3])
    """
    from .._random import gen

    return _rand_inplace(self, gen(generator).normal(mean, std, self._data.shape))


def bernoulli_(self, p: float = 0.5, *, generator=None) -> Tensor:
    from .._random import gen

    pp = p._data if isinstance(p, Tensor) else p
    return _rand_inplace(self, gen(generator).random(self._data.shape) < pp)


def bernoulli(input, p=None, *, generator=None) -> Tensor:  # noqa: A002
    from .._random import gen

    probs = input._data if p is None else p
    return _make((gen(generator).random(input._data.shape) < probs).astype(input._data.dtype))


def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    from .._random import gen

    return _rand_inplace(self, gen(generator).exponential(1.0 / lambd, self._data.shape))


def random_(self, low: int = 0, high=None, *, generator=None) -> Tensor:
    from .._random import gen

    if high is None:
        low, high = 0, low if low else 2 ** 24
    return _rand_inplace(self, gen(generator).integers(low, high, self._data.shape))


def multinomial(input, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator=None) -> Tensor:
    from .._random import gen

    g = gen(generator)
    p = np.asarray(input._data, dtype=np.float64)
    rows = p.reshape(-1, p.shape[-1])
    out = []
    for r in rows:
        out.append(g.choice(len(r), num_samples, replace=replacement, p=r / r.sum()))
    res = np.array(out, dtype=np.int64)
    return _make(res.reshape(p.shape[:-1] + (num_samples,)))


def detach_copy(input) -> Tensor:  # noqa: A002
    return _make(input._data.copy())


__all__ += list(_UNARY_EXAMPLES) + list(T._CMP) + ["softmax", "log_softmax"]
