"""Functions that write a tensor into a view of a copy, and the diagonal builders:
``diagonal_scatter``, ``select_scatter``, ``slice_scatter``, ``as_strided_scatter``
(Note [Scatter into a view] in ops/records/construction.py), ``diag_embed`` and ``diagflat``.

Example:
    >>> import retrograd as torch
    >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 0)
    tensor([[1., 1.],
            [0., 0.]])
"""

from __future__ import annotations

from .._core.hints import Shape
from .._tensor.tensor import Tensor, _wrap_dim
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import table as T

__all__ = ["diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter",
           "diag_embed", "diagflat"]


def _scatter(op, input: Tensor, src: Tensor, p, slice_shape: tuple) -> Tensor:
    if tuple(src.shape) != tuple(slice_shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(slice_shape)} (src must have the shape "
            f"of the part of input it replaces)")
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    return apply(op, (input, src), p)


@public
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    Example:
        >>> import retrograd as torch
        >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 1, -1)
        tensor([[0., 1.],
                [0., 1.]])
    """
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d} (valid: {-n} to {n - 1})")
    key = (slice(None),) * d + (index % n,)
    return _scatter(T.select_scatter, input, src, key, input.shape[:d] + input.shape[d + 1:])


@public
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``input[..., start:end:step, ...]`` (along ``dim``) replaced
    by ``src``.

    Example:
        >>> import retrograd as torch
        >>> torch.slice_scatter(torch.zeros(4), torch.ones(2), start=0, step=2)
        tensor([1., 0., 1., 0.])
    """
    d = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError(f"slice step must be positive, but got {step} (reverse with "
                           "flip instead)")
    lo, hi, st = slice(start, end, step).indices(input.shape[d])
    key = (slice(None),) * d + (slice(lo, hi, st),)
    shape = tuple(input.shape)
    count = len(range(lo, hi, st))
    return _scatter(T.slice_scatter, input, src, key, shape[:d] + (count,) + shape[d + 1:])


def _diag_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2} (pass "
                           "two different dims)")
    return d1, d2


@public
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``.

    Example:
        >>> import retrograd as torch
        >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.ones(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    shape = tuple(input.shape)
    r0, c0 = max(0, -offset), max(0, offset)
    n = max(0, min(shape[d1] - r0, shape[d2] - c0))
    rest = tuple(s for i, s in enumerate(shape) if i not in (d1, d2))
    return _scatter(T.diagonal_scatter, input, src, (offset, d1, d2), rest + (n,))


@public
def as_strided_scatter(input: Tensor, src: Tensor, size: Shape, stride: Shape,
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` (contiguous) with ``as_strided(size, stride, storage_offset)``
    replaced by ``src``.

    Example:
        >>> import retrograd as torch
        >>> torch.as_strided_scatter(torch.zeros(2, 2), torch.ones(2), (2,), (3,))
        tensor([[1., 0.],
                [0., 1.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape (size {list(size)}, "
                           f"stride {list(stride)}: give one stride per dim)")
    last = offset + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else -1
    if last >= input.numel() or any(st < 0 for st in stride) or offset < 0:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset} are out of bounds for a storage of {input.numel()} elements (the "
            "strided view must lie inside input)")
    return _scatter(T.as_strided_scatter, input, src, (size, stride, offset), size)


@public
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2,
               dim2: int = -1) -> Tensor:
    """A tensor whose ``(dim1, dim2)`` diagonals (at ``offset``) are the last dim of
    ``input``, zeros elsewhere.

    Example:
        >>> import retrograd as torch
        >>> torch.diag_embed(torch.tensor([[1., 2.]]))
        tensor([[[1., 0.],
                 [0., 2.]]])
    """
    d1, d2 = _diag_dims(input.ndim + 1, dim1, dim2)
    return apply(T.diag_embed, (input,), (offset, d1, d2))


@public
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D tensor with the flattened ``input`` on its ``offset`` diagonal.

    Example:
        >>> import retrograd as torch
        >>> torch.diagflat(torch.tensor([[1., 2.]]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    flat = input.contiguous().view(-1)
    return apply(T.diag_embed, (flat,), (offset, 0, 1))

