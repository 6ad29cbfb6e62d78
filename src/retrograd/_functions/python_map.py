"""``Tensor.apply_``, ``Tensor.map_`` and ``Tensor.map2_``: a Python callable run on each
element, in place.

Note [Python element maps]
As PyTorch's CPU-only ``apply_``/``map_``: the callable sees each element as a Python
number and its result is written back in the tensor's dtype (truncated for integers); the
tensor must not require grad (nothing here is differentiable), and, as in PyTorch, the
version counter is not bumped. ``map_``'s ``tensor`` is broadcast to ``self``'s shape and
must have its dtype.

Example:
    >>> import retrograd as torch
    >>> torch.tensor([1., 2.]).apply_(lambda v: v * 10)
    tensor([10., 20.])
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from .._tensor.tensor import Tensor
from ..ops.public import public
from .conversion import _legacy_type_str

__all__ = ["apply_", "map_", "map2_"]


def _check(name: str, *ts: Tensor) -> None:
    if any(t.requires_grad for t in ts):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _python(x):
    """An element as the Python number PyTorch hands the callable."""
    k = x.dtype.kind
    return bool(x) if k == "b" else int(x) if k in "iu" else float(x)


def _write(data: np.ndarray, idx, value) -> None:
    if not isinstance(value, numbers.Number):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    data[idx] = value


@public(function=False)
def apply_(input: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``x`` by ``callable(x)`` (Note [Python element maps]).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1, 2, 3]).apply_(lambda v: v % 2)
        tensor([1, 0, 1])
    """
    _check("apply_", input)
    data = input._data
    for idx in np.ndindex(data.shape):
        _write(data, idx, callable(_python(data[idx])))
    return input


@public(function=False)
def map_(input: Tensor, tensor: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``x`` by ``callable(x, y)``, ``y`` the matching element of
    ``tensor`` broadcast to this shape (Note [Python element maps]).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 2).map_(torch.tensor([1., 2.]), lambda a, b: a + b)
        tensor([[2., 3.],
                [2., 3.]])
    """
    _check("map_", input, tensor)
    if tensor.dtype != input.dtype:
        raise TypeError(f"map_: expected {_legacy_type_str(input)} for 'other' (got "
                        f"{_legacy_type_str(tensor)})")
    data = input._data
    other = tensor.expand(tuple(input.shape))._data
    for idx in np.ndindex(data.shape):
        _write(data, idx, callable(_python(data[idx]), _python(other[idx])))
    return input


@public(function=False)
def map2_(input: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:
    """Replace each element ``a`` by ``callable(a, b, c)``, ``b`` and ``c`` the matching
    elements of ``x`` and ``y`` broadcast to this shape (Note [Python element maps]).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2).map2_(torch.ones(2), torch.tensor([2., 3.]), lambda a, b, c: b * c)
        tensor([2., 3.])
    """
    _check("map2_", input, x, y)
    for name, t in (("x", x), ("y", y)):
        if t.dtype != input.dtype:
            raise TypeError(f"map2_: expected {_legacy_type_str(input)} for argument '{name}' "
                            f"(got {_legacy_type_str(t)})")
    data = input._data
    shape = tuple(input.shape)
    bx, by = x.expand(shape)._data, y.expand(shape)._data
    for idx in np.ndindex(data.shape):
        _write(data, idx, callable(_python(data[idx]), _python(bx[idx]), _python(by[idx])))
    return input
