"""The ``*_copy`` forms of the view functions (``view_copy``, ``t_copy``, ``expand_copy``,
...): the view's values in a new tensor, one node named as PyTorch's (Note [Copies of
views] in ops/records/construction.py).

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(6.).reshape(2, 3).requires_grad_()
    >>> y = torch.t_copy(x)
    >>> y.is_contiguous(), y.grad_fn.name()
    (True, 'TBackward0_copy')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.hints import Shape, ShapeLike
from .._tensor.tensor import Tensor, _make
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import table as T
from .shape import (
    as_strided,
    diagonal,
    expand,
    narrow,
    permute,
    select,
    split,
    squeeze,
    t,
    transpose,
    unbind,
    unfold,
    unsqueeze,
    view,
)

__all__ = ["view_copy", "t_copy", "permute_copy", "diagonal_copy", "expand_copy",
           "narrow_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "squeeze_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
           "alias_copy", "as_strided_copy"]


def _copy(name: str, input: Tensor, view_fn: Callable, *args):
    """``view_fn(input, *args)`` as a copy: the view is taken of the input's positions."""
    positions = _make(np.arange(input.numel(), dtype=np.int64).reshape(tuple(input.shape)))
    picked = view_fn(positions, *args)
    if isinstance(picked, tuple):  # one node, an output per piece
        pieces = tuple(p._data for p in picked)
        if len(pieces) <= 1:
            return tuple(apply(T.copy_ops[name], (input,), pieces) for _ in pieces)
        return tuple(apply(T.copy_ops[name], (input,), pieces, nout=len(pieces)))
    return apply(T.copy_ops[name], (input,), picked._data)


@public(method=False)
def view_copy(input: Tensor, size: Shape) -> Tensor:
    """``input.view(size)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.view_copy(torch.arange(4), (2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    return _copy("view_copy", input, view, size)


@public(method=False)
def t_copy(input: Tensor) -> Tensor:
    """``input.t()`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.t_copy(torch.tensor([[1, 2]]))
        tensor([[1],
                [2]])
    """
    return _copy("t_copy", input, t)


@public(method=False)
def permute_copy(input: Tensor, dims: Shape) -> Tensor:
    """``input.permute(dims)`` as a new (contiguous) tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.permute_copy(torch.ones(1, 2, 3), (2, 0, 1)).shape
        torch.Size([3, 1, 2])
    """
    return _copy("permute_copy", input, permute, tuple(dims))


@public(method=False)
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0,
                  dim2: int = 1) -> Tensor:
    """``input.diagonal(offset, dim1, dim2)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.diagonal_copy(torch.eye(2))
        tensor([1., 1.])
    """
    return _copy("diagonal_copy", input, diagonal, offset, dim1, dim2)


@public(method=False)
def expand_copy(input: Tensor, size: Shape, *, implicit: bool = False) -> Tensor:
    """``input.expand(size)`` as a new tensor (the repeats are real copies).

    Example:
        >>> import retrograd as torch
        >>> torch.expand_copy(torch.tensor([1, 2]), (2, 2))
        tensor([[1, 2],
                [1, 2]])
    """
    return _copy("expand_copy", input, expand, tuple(size))


@public
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``input.narrow(dim, start, length)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.narrow_copy(torch.arange(5), 0, 1, 2)
        tensor([1, 2])
    """
    return _copy("narrow_copy", input, narrow, dim, start, length)


@public(method=False)
def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    """``input.select(dim, index)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.select_copy(torch.tensor([[1, 2], [3, 4]]), 1, 0)
        tensor([1, 3])
    """
    return _copy("select_copy", input, select, dim, index)


def _slice(x: Tensor, dim: int, start, end, step) -> Tensor:
    return x[(slice(None),) * (dim % max(x.ndim, 1)) + (slice(start, end, step),)]


@public(method=False)
def slice_copy(input: Tensor, dim: int = 0, start: int | None = None,
               end: int | None = None, step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` (along ``dim``) as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.slice_copy(torch.arange(5), 0, 1, None, 2)
        tensor([1, 3])
    """
    return _copy("slice_copy", input, _slice, dim, start, end, step)


@public(method=False)
def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple:
    """``input.split(split_size, dim)``, each piece a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.split_copy(torch.arange(3), 2)
        (tensor([0, 1]), tensor([2]))
    """
    return _copy("split_copy", input, split, int(split_size), dim)


@public(method=False)
def split_with_sizes_copy(input: Tensor, split_sizes: Shape, dim: int = 0
                          ) -> tuple[Tensor, ...]:
    """``input.split_with_sizes(split_sizes, dim)``, each piece a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.split_with_sizes_copy(torch.arange(3), [1, 2])
        (tensor([0]), tensor([1, 2]))
    """
    return _copy("split_with_sizes_copy", input, split, [int(s) for s in split_sizes], dim)


@public(method=False)
def squeeze_copy(input: Tensor, dim: ShapeLike | None = None) -> Tensor:
    """``input.squeeze(dim)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.squeeze_copy(torch.ones(1, 2, 1)).shape
        torch.Size([2])
    """
    name = "squeeze_copy" if dim is None else "squeeze_copy_dims" if isinstance(
        dim, (tuple, list)) else "squeeze_copy_dim"
    return _copy(name, input, squeeze, dim)


@public(method=False)
def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``input.transpose(dim0, dim1)`` as a new (contiguous) tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.transpose_copy(torch.tensor([[1, 2]]), 0, 1)
        tensor([[1],
                [2]])
    """
    return _copy("transpose_copy", input, transpose, dim0, dim1)


@public(method=False)
def unbind_copy(input: Tensor, dim: int = 0) -> tuple:
    """``input.unbind(dim)``, each slice a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.unbind_copy(torch.tensor([[1, 2], [3, 4]]), 1)
        (tensor([1, 3]), tensor([2, 4]))
    """
    return _copy("unbind_copy", input, unbind, dim)


@public(method=False)
def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``input.unfold(dimension, size, step)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.unfold_copy(torch.arange(4), 0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
    """
    return _copy("unfold_copy", input, unfold, dimension, size, step)


@public(method=False)
def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """``input.unsqueeze(dim)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.unsqueeze_copy(torch.ones(2), 0).shape
        torch.Size([1, 2])
    """
    return _copy("unsqueeze_copy", input, unsqueeze, dim)


@public(method=False)
def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (the copy form of its alias view).

    Example:
        >>> import retrograd as torch
        >>> torch.alias_copy(torch.tensor([1, 2]))
        tensor([1, 2])
    """
    return _copy("alias_copy", input, lambda x: x)


@public(method=False)
def as_strided_copy(input: Tensor, size: Shape, stride: Shape,
                    storage_offset: int | None = None) -> Tensor:
    """``input.as_strided(size, stride, storage_offset)`` as a new tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.as_strided_copy(torch.arange(4), (2,), (2,))
        tensor([0, 2])
    """
    return _copy("as_strided_copy", input, as_strided, size, stride, storage_offset)
