"""More elementwise functions and the tensor predicates: ``fix``, ``positive``, ``rsub``,
``sgn``, ``signbit``, ``gcd``/``lcm``, the bit shifts, the conjugation
functions of real tensors (``conj``, ``resolve_conj``, ``resolve_neg``, ``conj_physical``:
the tensor itself, as PyTorch), ``is_nonzero``/``is_same_size``/``is_signed``/``is_conj``/
``is_neg`` and ``can_cast``.

Example:
    >>> import retrograd as torch
    >>> torch.rsub(torch.tensor([1., 2.]), 5)
    tensor([4., 3.])
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as D
from .._core.hints import Number
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import binary, unary
from ..ops.op import _LOW, FLOAT_NP
from ..ops.public import alias, public
from ..ops.records import table as T
from .pointwise import trunc

__all__ = ["fix", "positive", "rsub", "sgn", "signbit", "gcd", "lcm",
           "bitwise_left_shift", "bitwise_right_shift", "conj", "resolve_conj", "resolve_neg",
           "conj_physical", "is_nonzero", "is_same_size", "is_signed", "is_conj", "is_neg",
           "is_complex", "is_inference", "can_cast"]

fix = alias("fix", trunc, inplace=True, inplace_function=True)


@public
@per_element_under_vmap
def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors refused, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([1., -1.]); torch.positive(x) is x
        True
    """
    if input.dtype == D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported. (use the "
                           "tensor itself, or convert it first: x.int())")
    return input


@public(method=False)
@per_element_under_vmap
def rsub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``other - alpha * input`` (the reversed ``sub``).

    Example:
        >>> import retrograd as torch
        >>> torch.rsub(torch.tensor([1., 2.]), torch.tensor([5., 5.]), alpha=2)
        tensor([3., 1.])
    """
    if not isinstance(other, Tensor):
        if alpha == 1:  # one RsubBackward1 node, as PyTorch's rsub.Scalar
            return binary(T.rsub_scalar, other, input)
        return binary(T.rsub_scalar_alpha, input, other, alpha)
    if input.dtype == D.bool and other.dtype == D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    return binary(T.rsub, input, other, alpha)


@public(inplace=True)
@per_element_under_vmap
def sgn(input: Tensor) -> Tensor:
    """``input / |input|`` (0 at 0): the sign of a real tensor, its own SgnBackward0 node.

    Example:
        >>> import retrograd as torch
        >>> torch.sgn(torch.tensor([-2., 0., 3.]))
        tensor([-1.,  0.,  1.])
    """
    return unary(T.sgn, input)


@public
@per_element_under_vmap
def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (negative numbers, ``-0.0``, negative nans).

    Example:
        >>> import retrograd as torch
        >>> torch.signbit(torch.tensor([-0., 1., -2.]))
        tensor([ True, False,  True])
    """
    a = input._data
    if a.dtype == np.bool_:
        return _make(np.zeros(a.shape, np.bool_))
    return _make(np.asarray(np.signbit(a.astype(np.float32) if a.dtype in _LOW else a)))


def _integer_only(name: str, kernel: str, *ts) -> None:
    for t in ts:
        if isinstance(t, Tensor) and t._data.dtype in FLOAT_NP:
            raise NotImplementedError(
                f'"{kernel}" not implemented for \'{_LEGACY_NAMES[t.dtype.name]}\' ({name} '
                "takes integer tensors: convert first, e.g. x.long())")


def _tensor_other(name: str, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


@public(inplace=True, inplace_function=True, tensor_operand=True)
@per_element_under_vmap
def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor, elementwise (integer tensors; always non-negative).

    Example:
        >>> import retrograd as torch
        >>> torch.gcd(torch.tensor([4, -6, 0]), torch.tensor([6, 4, 0]))
        tensor([2, 2, 0])
    """
    _tensor_other("gcd", other)
    _integer_only("gcd", "gcd_cpu", input, other)
    return binary(T.gcd, input, other)


@public(inplace=True, inplace_function=True, tensor_operand=True)
@per_element_under_vmap
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple, elementwise (integer tensors; always non-negative).

    Example:
        >>> import retrograd as torch
        >>> torch.lcm(torch.tensor([4, -6]), torch.tensor([6, 4]))
        tensor([12, 12])
    """
    _tensor_other("lcm", other)
    _integer_only("lcm", "lcm_cpu", input, other)
    return binary(T.lcm, input, other)


@public(inplace=True)
@per_element_under_vmap
def bitwise_left_shift(input: Tensor, other: Tensor | Number) -> Tensor:
    """``input << other`` elementwise (integer tensors; a shift by a negative amount or by
    the width or more gives 0).

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_left_shift(torch.tensor([1, 2]), 3)
        tensor([ 8, 16])
    """
    _integer_only("bitwise_left_shift", "lshift_cpu", input, other)
    return binary(T.bitwise_left_shift, input, other)


@public(inplace=True)
@per_element_under_vmap
def bitwise_right_shift(input: Tensor, other: Tensor | Number) -> Tensor:
    """``input >> other`` elementwise, arithmetic for signed integers.

    Example:
        >>> import retrograd as torch
        >>> torch.bitwise_right_shift(torch.tensor([-16, 16]), 2)
        tensor([-4,  4])
    """
    _integer_only("bitwise_right_shift", "rshift_cpu", input, other)
    return binary(T.bitwise_right_shift, input, other)


# Note [Conjugation of real tensors]
# retrograd has no complex dtypes, so conj, resolve_conj, resolve_neg and conj_physical
# see only real tensors, for which PyTorch returns the input itself (``torch.conj(x) is
# x``), and is_conj/is_neg are always False.
def _itself(name: str, what: str):
    def fn(input: Tensor) -> Tensor:
        return input
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{what}; of a real tensor, the tensor itself\n    "
                  "(Note [Conjugation of real tensors]).\n\n    Example:\n"
                  "        >>> import retrograd as torch\n"
                  f"        >>> x = torch.ones(2); torch.{name}(x) is x\n        True\n")
    return fn


conj = public(_itself("conj", "The complex conjugate (a lazy view)"), name="conj")
resolve_conj = public(_itself("resolve_conj", "Materialises a lazy conjugation"),
                      name="resolve_conj")
resolve_neg = public(_itself("resolve_neg", "Materialises a lazy negation"),
                     name="resolve_neg")
conj_physical = public(_itself("conj_physical", "The complex conjugate, computed"),
                       name="conj_physical", inplace=True, inplace_function=True)


@public
@per_element_under_vmap
def is_conj(input: Tensor) -> bool:
    """Whether the conjugate bit is set (never, for real tensors).

    Example:
        >>> import retrograd as torch
        >>> torch.is_conj(torch.ones(1))
        False
    """
    return False


@public
@per_element_under_vmap
def is_neg(input: Tensor) -> bool:
    """Whether the negative bit is set (never, for real tensors).

    Example:
        >>> import retrograd as torch
        >>> torch.is_neg(torch.ones(1))
        False
    """
    return False


@public(method=False)
@per_element_under_vmap
def is_complex(input: Tensor) -> bool:
    """Whether the dtype is complex (never: retrograd has real dtypes only).

    Example:
        >>> import retrograd as torch
        >>> torch.is_complex(torch.ones(1))
        False
    """
    return input.is_complex()


@public(method=False)
@per_element_under_vmap
def is_inference(input: Tensor) -> bool:
    """Whether the tensor was made under ``inference_mode``.

    Example:
        >>> import retrograd as torch
        >>> with torch.inference_mode():
        ...     x = torch.ones(1)
        >>> torch.is_inference(x)
        True
    """
    return input.is_inference()


@public
@per_element_under_vmap
def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.is_nonzero(torch.tensor([0.5]))
        True
    """
    n = input.numel()
    if n != 1:
        raise RuntimeError(
            f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
            f"is ambiguous (is_nonzero takes a one-element tensor; use .any() or .all())")
    return bool(input._data.reshape(()))


@public
@per_element_under_vmap
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape.

    Example:
        >>> import retrograd as torch
        >>> torch.is_same_size(torch.ones(2), torch.zeros(2))
        True
    """
    return tuple(input.shape) == tuple(other.shape)


@public
@per_element_under_vmap
def is_signed(input: Tensor) -> bool:
    """Whether the dtype is signed (floats and signed integers).

    Example:
        >>> import retrograd as torch
        >>> torch.is_signed(torch.tensor([1], dtype=torch.uint8))
        False
    """
    return input.dtype.is_signed


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2}  # bool < integer < floating


@public(method=False)
@per_element_under_vmap
def can_cast(from_: D.dtype, to: D.dtype) -> bool:
    """Whether PyTorch's type promotion allows casting ``from_`` to ``to`` (never from a
    higher category, floating > integral > bool, to a lower one).

    Example:
        >>> import retrograd as torch
        >>> torch.can_cast(torch.double, torch.float), torch.can_cast(torch.float, torch.int)
        (True, False)
    """
    for pos, (name, v) in enumerate((("from_", from_), ("to", to)), 1):
        if not isinstance(v, D.dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {pos}) must be "
                            f"torch.dtype, not {type(v).__name__}")
    return _CATEGORY[from_.np.kind] <= _CATEGORY[to.np.kind]
