"""PyTorch's argument-parser errors, for functions that take only tensors in some slots.

PyTorch's Python binding checks each argument against the function's signatures before
any kernel runs: ``torch.maximum(2.0, x)`` is a ``TypeError`` ("argument 'input'
(position 1) must be Tensor, not float"), and a function with several overloads
(``torch.lerp``, ``torch.fmod``) reports "received an invalid combination of arguments".
These helpers build those messages, then add retrograd's sentence with the fix. They are
called only once a cheap ``isinstance`` test has failed: the common call pays nothing.

Example:
    >>> from retrograd.ops.argcheck import not_tensor
    >>> str(not_tensor("maximum", "input", 1, 2.0)).split(" (")[0]
    "maximum(): argument 'input'"
"""

from __future__ import annotations

import numpy as np

from .._tensor.tensor import Tensor
from .dispatch import _mismatch

__all__ = ["type_name", "not_tensor", "invalid_combination"]


def type_name(x) -> str:
    """The name PyTorch's parser gives the type of ``x``: ``float``, ``Tensor``,
    ``numpy.float64``.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.argcheck import type_name
        >>> type_name(1.5), type_name(np.float32(1)), type_name(None)
        ('float', 'numpy.float32', 'NoneType')
    """
    if isinstance(x, Tensor):
        return "Tensor"
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def not_tensor(fn: str, arg: str, pos: int, value) -> TypeError:
    """``fn(): argument 'arg' (position pos) must be Tensor, not <type>``, and the fix.

    Example:
        >>> from retrograd.ops.argcheck import not_tensor
        >>> print(not_tensor("atan2", "other", 2, 3))  # doctest: +ELLIPSIS
        atan2(): argument 'other' (position 2) must be Tensor, not int (...torch.tensor(3)...)
    """
    if isinstance(value, (int, float, bool)):
        fix = (f"{fn} takes no Python numbers: wrap it, e.g. torch.tensor({value!r}), or "
               f"torch.full_like(x, {value!r}) for an operand of x's dtype")
    else:
        fix = f"pass a tensor as {arg}"
    return TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type_name(value)} ({fix})")


def invalid_combination(fn: str, args: tuple, signatures: tuple) -> TypeError:
    """PyTorch's "received an invalid combination of arguments" for the positional
    ``args``, listing the accepted ``signatures``, then the fix.

    Example:
        >>> from retrograd.ops.argcheck import invalid_combination
        >>> e = invalid_combination("fmod", (2.0, None), ("Tensor input, Tensor other",))
        >>> print(str(e).splitlines()[0].split(" - ")[1])
        got (float, NoneType), but expected one of:
    """
    got = ", ".join(type_name(a) for a in args)
    lines = "".join(f" * ({s})\n" for s in signatures)
    return TypeError(
        f"{fn}() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n{lines}(each argument named Tensor must be a tensor: wrap a Python number "
        "with torch.tensor(v), or use torch.full_like(x, v))")


def values_to_check(a):
    """The values an argument check must look at: ``a`` itself, or for the phantom ``_data``
    of a batched tensor inside vmap, every batch element's values (Note [Batched tensors]
    in _functorch/batched.py).

    Example:
        >>> import numpy as np
        >>> values_to_check(np.arange(3)).tolist()
        [0, 1, 2]
    """
    src = getattr(a, "_src", None)
    return a if src is None else np.asarray(src._value._data)


def broadcast_checked(fn: str, names: tuple, shapes: tuple) -> tuple:
    """The shape ``shapes`` broadcast to, or PyTorch's broadcasting error (RuntimeError,
    "The size of tensor a (m) must match the size of tensor b (n) at non-singleton
    dimension k"), never NumPy's, naming ``fn``, the arguments and their shapes.

    Example:
        >>> broadcast_checked("f", ("a", "b"), ((3, 1), (4,)))
        (3, 4)
    """
    shape: tuple = ()
    for ts in shapes:
        try:
            shape = np.broadcast_shapes(shape, tuple(ts))
        except ValueError:
            a, b, k = _mismatch(shape, tuple(ts))
            desc = ", ".join(f"{nm} {tuple(x)}" for nm, x in zip(names, shapes))
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {k}. {fn} got shapes {desc}, which do not broadcast: "
                "line the dimensions up from the right; each pair must be equal or one of them "
                "1 (use unsqueeze/reshape/expand).") from None
    return shape
