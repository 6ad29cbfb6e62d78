"""More shape functions, each composed as PyTorch composes it (so the ``grad_fn`` graph is
PyTorch's): ``rot90`` (one node), ``atleast_1d/2d/3d``, ``dstack``/``column_stack``/
``row_stack``, ``hsplit``/``vsplit``/``dsplit``, ``split_with_sizes``, ``ravel``.

Example:
    >>> import retrograd as torch
    >>> torch.atleast_2d(torch.tensor([1., 2.])).shape
    torch.Size([1, 2])
"""

from __future__ import annotations

from collections.abc import Sequence

from .._core.hints import Shape
from .._tensor.tensor import Tensor, _wrap_dim
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import table as T
from .shape import cat, split

__all__ = ["rot90", "atleast_1d", "atleast_2d", "atleast_3d", "dstack", "column_stack",
           "row_stack", "hsplit", "vsplit", "dsplit", "split_with_sizes", "ravel"]


@public
def rot90(input: Tensor, k: int = 1, dims: Shape = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first dim
    towards the second).

    Example:
        >>> import retrograd as torch
        >>> torch.rot90(torch.tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)} "
                           "(rot90 rotates in the plane of two dims)")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim} "
                           "(rot90 needs a tensor of at least two dims)")
    d0, d1 = (_wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return apply(T.rot90, (input,), (k % 4, (d0, d1)))


def _tensors(args) -> tuple:
    """atleast_*d's arguments: tensors, or one list/tuple of them."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0]), True
    return args, len(args) != 1


def _atleast(args, fn):
    ts, many = _tensors(args)
    out = tuple(fn(t) for t in ts)
    return out if many else out[0]


def _at_least_1d(t: Tensor) -> Tensor:
    return t.reshape(1) if t.ndim == 0 else t


def _at_least_2d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.ndim == 1 else t


def _at_least_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


@public(method=False)
def atleast_1d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least one dim (a 0-d tensor becomes shape ``(1,)``).

    Example:
        >>> import retrograd as torch
        >>> torch.atleast_1d(torch.tensor(2.))
        tensor([2.])
    """
    return _atleast(tensors, _at_least_1d)


@public(method=False)
def atleast_2d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least two dims (new leading dims of size 1).

    Example:
        >>> import retrograd as torch
        >>> [t.shape for t in torch.atleast_2d(torch.tensor(1.), torch.ones(3))]
        [torch.Size([1, 1]), torch.Size([1, 3])]
    """
    return _atleast(tensors, _at_least_2d)


@public(method=False)
def atleast_3d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least three dims (a vector ``(n,)`` becomes ``(1, n, 1)``, a
    matrix ``(m, n)`` becomes ``(m, n, 1)``).

    Example:
        >>> import retrograd as torch
        >>> torch.atleast_3d(torch.ones(3)).shape
        torch.Size([1, 3, 1])
    """
    return _atleast(tensors, _at_least_3d)


def _stack_args(name: str, tensors) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor (pass a list of tensors)")
    ts = list(tensors)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


@public(method=False)
def dstack(tensors: tuple[Tensor, ...] | list[Tensor]) -> Tensor:
    """Concatenate along the third dim (after ``atleast_3d``).

    Example:
        >>> import retrograd as torch
        >>> torch.dstack([torch.ones(2), torch.zeros(2)]).shape
        torch.Size([1, 2, 2])
    """
    return cat([_at_least_3d(t) for t in _stack_args("dstack", tensors)], 2)


@public(method=False)
def column_stack(tensors: tuple[Tensor, ...] | list[Tensor]) -> Tensor:
    """Stack vectors as columns (0-d and 1-d tensors become ``(n, 1)``), then
    concatenate along dim 1.

    Example:
        >>> import retrograd as torch
        >>> torch.column_stack([torch.tensor([1., 2.]), torch.tensor([3., 4.])])
        tensor([[1., 3.],
                [2., 4.]])
    """
    ts = _stack_args("column_stack", tensors)
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


@public(method=False)
def row_stack(tensors: tuple[Tensor, ...] | list[Tensor]) -> Tensor:
    """``vstack``: concatenate along dim 0 after ``atleast_2d``.

    Example:
        >>> import retrograd as torch
        >>> torch.row_stack([torch.ones(2), torch.zeros(2)])
        tensor([[1., 1.],
                [0., 0.]])
    """
    return cat([_at_least_2d(t) for t in _stack_args("row_stack", tensors)], 0)


def _split_along(name: str, input: Tensor, sections, dim: int, min_dims: int):
    """PyTorch's h/v/dsplit: tensor_split along ``dim``, an int must divide the dim; each
    piece a slice of input (SliceBackward0, as PyTorch's tensor_split)."""
    if input.ndim < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension"
            f"{'s' if min_dims > 1 else ''}, but got a tensor with {input.ndim} dimensions!")
    n = input.shape[dim]
    if isinstance(sections, int):
        if sections <= 0 or n % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {n} is not divisible by the split_size {sections}!")
        bounds = [n // sections * i for i in range(sections + 1)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in sections] + [n]
    lead = (slice(None),) * dim
    return tuple(input[lead + (slice(lo, max(lo, hi)),)] for lo, hi in zip(bounds, bounds[1:]))


@public
def hsplit(input: Tensor, indices_or_sections: Tensor | int | Sequence[int]) -> tuple[Tensor, ...]:
    """Split along dim 1 (dim 0 of a 1-D tensor): into equal sections (an int) or at the
    given indices.

    Example:
        >>> import retrograd as torch
        >>> [t.shape for t in torch.hsplit(torch.ones(2, 4), 2)]
        [torch.Size([2, 2]), torch.Size([2, 2])]
    """
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


@public
def vsplit(input: Tensor, indices_or_sections: Tensor | int | Sequence[int]) -> tuple[Tensor, ...]:
    """Split along dim 0 (a tensor of at least 2 dims).

    Example:
        >>> import retrograd as torch
        >>> [t.shape for t in torch.vsplit(torch.ones(4, 2), [1])]
        [torch.Size([1, 2]), torch.Size([3, 2])]
    """
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


@public
def dsplit(input: Tensor, indices_or_sections: Tensor | int | Sequence[int]) -> tuple[Tensor, ...]:
    """Split along dim 2 (a tensor of at least 3 dims).

    Example:
        >>> import retrograd as torch
        >>> len(torch.dsplit(torch.ones(1, 1, 4), 4))
        4
    """
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


@public
def split_with_sizes(input: Tensor, split_sizes: Shape, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into pieces of the given sizes (views, one SplitWithSizesBackward0 node).

    Example:
        >>> import retrograd as torch
        >>> [t.tolist() for t in torch.arange(3).split_with_sizes([1, 2])]
        [[0], [1, 2]]
    """
    return split(input, [int(s) for s in split_sizes], dim)


@public
def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (a view when the layout allows, else a copy).

    Example:
        >>> import retrograd as torch
        >>> torch.ravel(torch.tensor([[1, 2], [3, 4]]))
        tensor([1, 2, 3, 4])
    """
    return input.contiguous().view(-1)
