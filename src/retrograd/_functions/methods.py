"""Tensor methods and operators: one function serves ``retrograd.f(x)`` and ``x.f()``.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1., 2.])
    >>> (2 * x + 1).tolist(), x.exp().sum().item() == torch.exp(x).sum().item()
    ([3.0, 5.0], True)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from .._core import dtype as D
from .._core import layouts
from .._core.hints import DeviceLike, Number
from .._core.meta import NO_DATA
from .._graph.entry_points import backward as autograd_backward
from .._graph.node import _LEGACY
from .._tensor.tensor import Tensor
from ..ops.dispatch import binary
from ..ops.public import PUBLIC, numpy_named
from ..ops.records import table as T
from . import namespace, new_tensors, shape_inplace, tensor_attributes
from .conversion import _caster, type_
from .creation import legacy_new
from .inplace import _make_inplace
from .legacy_forms import value_first, value_first_method
from .pointwise import lerp_method, tensor_operand_method

# Note [In-place forms]
# Every in-place form is generated here, in one place, from the out-of-place function of
# the same name (``_make_inplace`` in inplace.py: compute, write, bump the version, rebase the
# history). The functions with a ``Tensor.<name>_`` method, as in PyTorch (ops whose result
# has the input's shape), say so where they are defined (``@public(inplace=True)``, Note
# [Exposure records] in public.py); an alias (``divide``, ``arcsin``, ``clip``) gets the very
# method of the op it names, and ``inplace_function=True`` also makes it the function
# ``torch.<name>_(input, ...)``. Not generated: the shape-changing in-place methods
# (squeeze_, unsqueeze_, t_, transpose_, swapaxes_, swapdims_), which rewrite metadata
# rather than values, and the methods that are in place by nature (``fill_``, ``zero_``,
# ``detach_``), which PyTorch also exposes as functions (_INPLACE_BY_NATURE).
_INPLACE_BY_NATURE = ("fill", "zero", "detach")

# arguments for the doctest example of each generated function (none: one tensor)
_EXAMPLE_ARGS = {"clamp": "0.0, 0.5", "clip": "0.0, 0.5", "clamp_min": "0.5",
                 "clamp_max": "0.5", "index_put": "(torch.tensor([0]),), torch.tensor(2.)",
                 "fill": "2.0", "xlogy": "x", "ldexp": "torch.tensor([1, 2])",
                 "polygamma": "1", "mvlgamma": "1", "copysign": "-1.0", "nextafter": "x + 1",
                 "heaviside": "x", "igamma": "x", "igammac": "x", "addmv": "torch.eye(2), x",
                 "gcd": "torch.tensor([6, 4])", "lcm": "torch.tensor([6, 4])"}
# the example's input where [0.25, 0.75] is outside the function's domain
_EXAMPLE_INPUT = {"acosh": "[1.25, 1.75]", "arccosh": "[1.25, 1.75]", "gcd": "[4, 9]",
                  "lcm": "[4, 9]"}


def _cast_methods():
    return {"float": D.float32, "double": D.float64, "half": D.float16, "bfloat16": D.bfloat16,
            "long": D.int64, "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
            "bool": D.bool}


def install() -> None:
    """Attach methods and operators to ``Tensor`` (called once at import)."""
    Tensor.__new__ = staticmethod(legacy_new)  # Tensor(data): the legacy constructor
    Tensor.backward = backward
    tensor_attributes.install()
    shape_inplace.install()
    for name, e in PUBLIC.items():  # Note [Exposure records]
        if e.method:
            setattr(Tensor, name, e.fn)
    for name, method in inplace_methods().items():
        setattr(Tensor, name, method)
    # Note [Tensor-only operands]: these methods name the bad operand as PyTorch's
    # method forms do (position 1, after self); the functions count self as position 1
    for name, e in PUBLIC.items():
        if e.tensor_operand:
            setattr(Tensor, name, tensor_operand_method(e.fn, name))
            if e.inplace:
                setattr(Tensor, name + "_",
                        tensor_operand_method(inplace_methods()[name + "_"], name + "_"))
    Tensor.lerp = lerp_method(namespace.lerp, "lerp")
    Tensor.lerp_ = lerp_method(inplace_methods()["lerp_"], "lerp_")
    for name, dt in _cast_methods().items():
        setattr(Tensor, name, _caster(dt))
    Tensor.type = type_
    Tensor.cpu = _cpu
    Tensor.cuda = _cuda
    # Note [Legacy value-first forms] (_functions/legacy_forms.py): the method forms' warnings
    for name, fn in (("addcmul", addcmul), ("addcdiv", addcdiv)):
        setattr(Tensor, name, value_first_method(name, fn, "value", _ADDC))
        # the scalar-first check runs off the fast path, in the function the method runs
        setattr(Tensor, name + "_", _make_inplace(
            value_first_method(name + "_", fn, "value", _ADDC, 4), name + "_"))
    Tensor.T = property(_all_dims_reversed, doc="All dims reversed.")
    Tensor.where = where
    for name in new_tensors.__all__ + ["pin_memory", "is_pinned"]:
        setattr(Tensor, name, getattr(new_tensors, name))
    Tensor.mT = property(_matrix_transpose, doc="Last two dims swapped.")
    Tensor.H = Tensor.T
    Tensor.mH = property(_matrix_adjoint, doc="Last two dims swapped (real tensors: no conjugate).")

    def op(opdef, reflected=False):
        if reflected:
            def fn(self, other: Tensor | Number) -> Tensor:
                return binary(opdef, other, self)
        else:
            def fn(self, other: Tensor | Number) -> Tensor:
                return binary(opdef, self, other)
        return fn

    for name, opdef in (("add", T.add), ("sub", T.sub), ("mul", T.mul), ("truediv", T.div)):
        setattr(Tensor, f"__{name}__", op(opdef))
        # 2 * b is b.mul(2) in PyTorch (self first, None in the scalar's slot of
        # next_functions): the commutative ops keep the tensor as self
        setattr(Tensor, f"__r{name}__", op(opdef, reflected=name not in ("add", "mul")))
    # Note [Scalar overloads] (ops/records/elementwise.py): an op per kind of operand, as PyTorch's
    # overloads (1.5 - x is rsub.Scalar, RsubBackward1)
    Tensor.__rsub__ = _overloaded(T.sub, T.rsub_scalar, reflected=True)
    for name, tt, ts, st in (("floordiv", T.floor_divide, T.floor_divide_scalar,
                              T.floor_divide_rscalar),
                             ("mod", T.remainder, T.remainder_scalar, T.remainder_rscalar),
                             ("pow", T.pow, T.pow_scalar, T.pow_rscalar)):
        setattr(Tensor, f"__{name}__", _overloaded(tt, ts))
        setattr(Tensor, f"__r{name}__", _overloaded(tt, st, reflected=True))

    def rtruediv(self, other: Tensor | Number) -> Tensor:
        # PyTorch: number / tensor is reciprocal(tensor) * number (MulBackward0 over
        # ReciprocalBackward0, which saves its result, not the tensor; rounded twice)
        return binary(T.mul, namespace.reciprocal(self), other)
    Tensor.__rtruediv__ = rtruediv
    for name in ("add", "sub", "mul", "truediv", "pow", "mod"):
        method = getattr(Tensor, {"truediv": "div", "mod": "remainder"}.get(name, name) + "_")
        setattr(Tensor, f"__i{name}__", method)
    Tensor.__ifloordiv__ = _make_inplace(namespace.floor_divide, "floor_divide_")
    Tensor.floor_divide_ = Tensor.__ifloordiv__
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(Tensor, f"__{name}__", op(T._CMP[name]))
    for name, key in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")):
        # (the functions: PyTorch's NotImplementedError for floats, not NumPy's TypeError)
        setattr(Tensor, f"__{name}__", getattr(namespace, key))
        setattr(Tensor, f"__r{name}__", _reflected(getattr(namespace, key)))
        setattr(Tensor, f"__i{name}__", _make_inplace(getattr(namespace, key), f"{key}_"))
    Tensor.__matmul__ = lambda self, other: namespace.matmul(self, other)
    Tensor.__rmatmul__ = lambda self, other: namespace.matmul(other, self)
    Tensor.__neg__ = namespace.neg
    Tensor.__pos__ = _pos
    Tensor.__abs__ = namespace.abs
    Tensor.__invert__ = namespace.bitwise_not
    Tensor.__getitem__ = namespace.getitem
    Tensor.__setitem__ = namespace.setitem
    # Note [NumPy argument names] (public.py): x.sum(axis=0, keepdims=True)
    methods = {name: getattr(Tensor, name) for name, e in PUBLIC.items() if e.method}
    for name, method in numpy_named(methods, method=True).items():
        setattr(Tensor, name, method)


def _reflected(fn):
    """``other <op> self`` of a binary function (``__rand__`` and the like)."""
    def method(self: Tensor, other: Tensor | Number) -> Tensor:
        return fn(other, self)
    return method


def numpy_named_functions() -> dict:
    """``{name: fn}``: the functions ``retrograd.<name>`` as users call them, taking
    NumPy's argument names where PyTorch does (Note [NumPy argument names] in public.py);
    the library's own calls use ``_functions/namespace.py``'s functions.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions.methods import numpy_named_functions
        >>> numpy_named_functions()["mean"](torch.ones(2, 3), axis=1, keepdims=True).shape
        torch.Size([2, 1])
    """
    return numpy_named({name: e.fn for name, e in PUBLIC.items() if e.function})


def _all_dims_reversed(self: Tensor) -> Tensor:
    return self.permute(tuple(reversed(range(self.ndim))))


def _matrix_transpose(self: Tensor) -> Tensor:
    """``Tensor.mT``: the last two dims swapped."""
    return _last_two_swapped(self, "mT")


def _matrix_adjoint(self: Tensor) -> Tensor:
    """``Tensor.mH``: the last two dims swapped (a real tensor has no conjugate)."""
    return _last_two_swapped(self, "mH")


def _last_two_swapped(self: Tensor, name: str) -> Tensor:
    if self._data.ndim == 0:  # PyTorch: the identity, with a deprecation warning
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. This function is the "
                      "identity in these cases.", UserWarning, stacklevel=3)
        return self
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor. (use .T for a 1-D tensor, which "
                           "returns it unchanged, or unsqueeze it to a matrix first)")
    return self.transpose(-2, -1)


def _pos(self: Tensor) -> Tensor:
    return self


def _overloaded(tensor_op, scalar_op, reflected: bool = False):
    """``self <op> other`` (``other <op> self`` if ``reflected``) with the Tensor or the
    Scalar overload, as ``other`` is a Tensor or not (Note [Scalar overloads])."""
    is_a, tensor, run = isinstance, Tensor, binary  # (closure cells: the operators' hot path)
    if reflected:  # other is a number but when a subclass's own operator defers here
        numbers = frozenset((int, float, bool))

        def fn(self, other: Tensor | Number) -> Tensor:
            return run(scalar_op if other.__class__ in numbers or not is_a(other, tensor)
                       else tensor_op, other, self)
    else:
        def fn(self, other: Tensor | Number) -> Tensor:
            return run(tensor_op if is_a(other, tensor) else scalar_op, self, other)
    return fn


_MADE: dict = {}


def inplace_methods() -> dict:
    """``{'sin_': method, ...}``: the in-place methods generated from the functions marked
    ``inplace`` (Note [In-place forms]); made once, aliases share their op's method.

    Example:
        >>> from retrograd._functions.methods import inplace_methods
        >>> m = inplace_methods()
        >>> m['divide_'] is m['div_'], m['sin_'].__name__
        (True, 'sin_')
    """
    if not _MADE:
        by_fn: dict = {}
        for name, e in PUBLIC.items():
            if not e.inplace:
                continue
            fn = _float_power_into_double if name == "float_power" else e.fn
            # a function whose in-place form is another overload of PyTorch's (asinh_:
            # AsinhBackward1, without a derivative) names it as ``inplace_variant``
            fn = getattr(fn, "inplace_variant", fn)
            method = by_fn.get(id(fn))
            if method is None:
                method = by_fn[id(fn)] = _make_inplace(fn, name + "_")
            _MADE[name + "_"] = method
    return _MADE


def inplace_functions() -> dict:
    """``{'sin_': fn, ...}``: the in-place forms PyTorch exposes as functions of the
    module (``torch.sin_(x)``); each is the Tensor method of that name.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([0.0, 1.0])
        >>> torch.exp_(x) is x, x
        (True, tensor([1.0000, 2.7183]))
    """
    out = {}
    names = [name for name, e in PUBLIC.items() if e.inplace_function] + list(_INPLACE_BY_NATURE)
    for name in names:
        fn = getattr(Tensor, name + "_")
        out[name + "_"] = fn
        if name + "_" in _MADE:  # a generated form: a doc with an example of its own
            __test__[name + "_"] = _example_doc(name)
    return out


__test__: dict = {}


def _example_doc(name: str) -> str:
    args = _EXAMPLE_ARGS.get(name)
    call = f"torch.{name}_(y{', ' + args if args else ''})"
    ref = f"x.{name}({args or ''})" if name != "index_put" else f"x.{name}({args})"
    return (f"``torch.{name}_(input, ...)``: ``input.{name}_(...)``, in place.\n\n"
            f"Example:\n    >>> import retrograd as torch\n"
            f"    >>> x = torch.tensor({_EXAMPLE_INPUT.get(name, '[0.25, 0.75]')})\n"
            f"    >>> y = x.clone()\n"
            f"    >>> {call} is y, torch.equal(y, {ref})\n    (True, True)\n")


def _float_power_into_double(input, exponent) -> Tensor:
    """``float_power`` for ``float_power_``: its result is float64, so (as in PyTorch)
    only a float64 tensor can take it in place.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, dtype=torch.float64).float_power_(2)
        tensor([1., 1.], dtype=torch.float64)
    """
    if input.dtype is not D.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_LEGACY[input.dtype.name]} but the operation's result requires "
                           "dtype Double")
    return namespace.float_power(input, exponent)


def _cpu(self, memory_format: layouts.memory_format | None = None) -> Tensor:
    """The tensor itself: retrograd tensors live on the CPU (a 'meta' tensor, which has
    no data to copy, raises as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2); x.cpu() is x
        True
    """
    if self.is_meta:
        raise NotImplementedError(NO_DATA)
    return self


def _cuda(self, device: DeviceLike | None = None, non_blocking: bool = False,
          memory_format: layouts.memory_format | None = None) -> Tensor:
    """Always raises what PyTorch's CPU-only build raises (AssertionError "Torch not compiled
    with CUDA enabled"; RuntimeError for an index): retrograd runs on the CPU (check
    ``torch.cuda.is_available()``; Note [Devices without a backend]).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).cuda()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        AssertionError: Torch not compiled with CUDA enabled
        (retrograd runs on the CPU only, ...)
    """
    from .._core.device import cuda_unavailable

    raise cuda_unavailable(device)


_ADDC = "Tensor tensor1, Tensor tensor2"  # the tensors of addcmul/addcdiv, as PyTorch names them


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *rest,
            value: Number | None = None) -> Tensor:
    """``input + value * tensor1 * tensor2`` (``value`` defaults to 1; the deprecated
    ``addcmul(input, value, tensor1, tensor2)`` order warns, as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.addcmul(torch.zeros(2), torch.ones(2), torch.ones(2), value=2)
        tensor([2., 2.])
    """
    if rest:  # Note [Legacy value-first forms] (_functions/legacy_forms.py)
        (tensor1, tensor2), value = value_first("addcmul", False, "value", _ADDC,
                                                (tensor1, tensor2, *rest), value is not None)
    elif value is None:
        value = 1
    # (value * t1) * t2, in PyTorch's kernel order, so results match bit for bit
    return input + ((tensor1 * value) * tensor2 if value != 1 else tensor1 * tensor2)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *rest,
            value: Number | None = None) -> Tensor:
    """``input + value * tensor1 / tensor2`` (``value`` defaults to 1; the deprecated
    ``addcdiv(input, value, tensor1, tensor2)`` order warns, as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.addcdiv(torch.zeros(2), torch.ones(2), torch.full((2,), 4.))
        tensor([0.2500, 0.2500])
    """
    if rest:  # Note [Legacy value-first forms] (_functions/legacy_forms.py)
        (tensor1, tensor2), value = value_first("addcdiv", False, "value", _ADDC,
                                                (tensor1, tensor2, *rest), value is not None)
    elif value is None:
        value = 1
    if (isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor)
            and not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return input + ((tensor1 * value) / tensor2 if value != 1 else tensor1 / tensor2)


def where(self, condition: Tensor, y: Tensor | Number) -> Tensor:
    """``self`` where ``condition``, else ``y`` (the method form of ``torch.where``).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([1., -2.])
        >>> x.where(x > 0, 0.)
        tensor([1., 0.])
    """
    return namespace.where(condition, self, y)


def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None
             ) -> None:
    """Accumulate d(self)/d(leaf), times ``gradient`` (the v of vᵀJ), into leaves' .grad.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        >>> (x ** 2).backward(torch.ones(2, 2)); x.grad
        tensor([[2., 4.],
                [6., 8.]])
    """
    autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)
