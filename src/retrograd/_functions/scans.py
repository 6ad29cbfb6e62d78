"""Scans and differences along a dim: ``cummax``, ``cummin``, ``logcumsumexp``, ``diff``
and ``gradient``.

Example:
    >>> import retrograd as torch
    >>> torch.cummax(torch.tensor([1., 3., 2.]), 0)
    torch.return_types.cummax(
    values=tensor([1., 3., 3.]),
    indices=tensor([0, 1, 1]))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core.hints import Number, ShapeLike
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.op import FLOAT_NP
from ..ops.out_arg import with_out
from ..ops.public import public
from ..ops.records import scans as TSC
from .creation import empty_like
from .reductions import _rt
from .shape import cat
from .statistics import _div_c, _mul_c


def _running_indices(data: np.ndarray, dim: int, running) -> np.ndarray:
    """Index of the running max (``running`` = ``np.maximum``) or min along ``dim``, as
    PyTorch's CPU kernel picks it: the latest of equal values, and a nan sticks.

    A position takes over when its value equals the running extreme there (it is >= all
    before it) or is a nan; each index is the latest such position so far."""
    if not data.shape[dim]:
        return np.zeros(data.shape, np.int64)
    with np.errstate(invalid="ignore"):
        extreme = running.accumulate(data, axis=dim)
        take = data == extreme
    if data.dtype in FLOAT_NP:
        take |= np.isnan(data)
    shape = [1] * data.ndim
    shape[dim] = -1
    pos = np.where(take, np.arange(data.shape[dim]).reshape(shape), 0)
    return np.maximum.accumulate(pos, axis=dim).astype(np.int64)


def _cummaxmin(op, name: str, input: Tensor, dim: int, running, out):
    d = _wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        idx = np.zeros((), np.int64)
    else:
        idx = _running_indices(input._data, d, running)
    it = _make(idx)
    return with_out(name, _rt(name)(apply(op, (input,), (d, it)), it), out, (input,))


@public
@per_element_under_vmap
def cummax(input: Tensor, dim: int, *,
           out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """The running maximum along ``dim`` and the index where it was reached (the latest of
    equal values; a nan, once met, is the maximum from there on).

    Example:
        >>> import retrograd as torch
        >>> torch.cummax(torch.tensor([2., 1., 2.]), 0).indices
        tensor([0, 0, 2])
    """
    return _cummaxmin(TSC.cummax, "cummax", input, dim, np.maximum, out)


@public
@per_element_under_vmap
def cummin(input: Tensor, dim: int, *,
           out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """The running minimum along ``dim`` and the index where it was reached (the latest of
    equal values; a nan, once met, is the minimum from there on).

    Example:
        >>> import retrograd as torch
        >>> torch.cummin(torch.tensor([3., 1., 2.]), 0).values
        tensor([3., 1., 1.])
    """
    return _cummaxmin(TSC.cummin, "cummin", input, dim, np.minimum, out)


@public
@per_element_under_vmap
def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow.

    Example:
        >>> import retrograd as torch
        >>> torch.logcumsumexp(torch.tensor([0., 0., 1.]), 0)
        tensor([0.0000, 0.6931, 1.5514])
    """
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(
            f'"logcumsumexp_out_cpu" not implemented for '
            f"'{_LEGACY_NAMES[input.dtype.name]}' (logcumsumexp takes floating-point "
            "tensors: convert first, e.g. x.float())")
    return with_out("logcumsumexp", apply(TSC.logcumsumexp, (input,),
                                          (_wrap_dim(dim, input._data.ndim),)), out, (input,))


@public
@per_element_under_vmap
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``, after ``prepend`` and ``append`` are
    concatenated to ``input`` (bool tensors: ``!=``, as in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.diff(torch.tensor([1., 4., 9., 16.]))
        tensor([3., 5., 7.])
        >>> torch.diff(torch.tensor([1., 4., 9., 16.]), n=2)
        tensor([2., 2.])
    """
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional (a 0-d tensor "
                           "has no dim to difference along: reshape it, e.g. x.reshape(1))")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n} (n is how many times "
                           "the difference is taken: pass n >= 0)")
    d = _wrap_dim(dim, input._data.ndim)
    if n == 0:  # PyTorch copies the input (prepend and append unused): CopyBackwards
        return with_out("diff", empty_like(input).copy_(input), out, (input,))
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi.logical_xor(lo) if x._data.dtype == np.bool_ else hi - lo
    return with_out("diff", x, out, parts)


def _edge_slices(x: Tensor, d: int, edge_order: int):
    """The slices of ``x`` along ``d`` the one-sided differences read: (first, second,
    third, third-last, second-last, last); the third ones only for ``edge_order`` 2."""
    n = x.shape[d]
    at = [0, 1, 2, n - 3, n - 2, n - 1] if edge_order == 2 else [0, 1, None, None, n - 2, n - 1]
    return [None if k is None else x.narrow(d, k, 1) for k in at]


def _gradient_uniform(x: Tensor, d: int, h, edge_order: int) -> Tensor:
    """PyTorch's gradient_helper_float along ``d``: central differences inside, one-sided
    ones of order ``edge_order`` at the ends, samples ``h`` apart."""
    n = x.shape[d]
    center = _div_c(x.narrow(d, 2, n - 2) - x.narrow(d, 0, n - 2), h)
    first, second, third, third_last, second_last, last = _edge_slices(x, d, edge_order)
    if edge_order == 1:
        before = _div_c(second - first, h)
        after = _div_c(last - second_last, h)
    else:
        before = _div_c(_mul_c(first, -1.5) + _mul_c(second, 2) - _mul_c(third, 0.5), h)
        after = _div_c(_mul_c(third_last, 0.5) - _mul_c(second_last, 2) + _mul_c(last, 1.5), h)
    return cat([before, _div_c(center, 2), after], d)


def _gradient_coordinates(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    """PyTorch's gradient_helper along ``d`` for samples at the 1-D ``coords``."""
    if coords.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.ndim} dimensions!")
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = -1
    h = coords.diff()
    h1, h2 = h.narrow(0, 0, h.shape[0] - 1), h.narrow(0, 1, h.shape[0] - 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * x.narrow(d, 0, n - 2) + b * x.narrow(d, 1, n - 2) + c * x.narrow(d, 2, n - 2)
    first, second, third, third_last, second_last, last = _edge_slices(x, d, edge_order)
    if edge_order == 1:
        before = (second - first) / h[0]
        after = (last - second_last) / h[-1]
    else:
        s0, s1, e1, e2 = h[0], h[1], h[-1], h[-2]
        before = (-(2.0 * s0 + s1) / (s0 * (s0 + s1)) * first + (s0 + s1) / (s0 * s1) * second
                  + (-s0) / (s1 * (s0 + s1)) * third)
        after = (e1 / (e2 * (e1 + e2)) * third_last + (-(e1 + e2)) / (e1 * e2) * second_last
                 + (2 * e1 + e2) / (e1 * (e1 + e2)) * last)
    return cat([before, center, after], d)


@public(method=False)
@per_element_under_vmap
def gradient(input: Tensor, *,
             spacing: Number | Sequence[Number] | tuple[Tensor, ...] | list[Tensor] | None = 1,
             dim: ShapeLike | None = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimates of the derivatives of the function sampled by ``input``, one tensor per
    dim of ``dim`` (all dims by default): second-order central differences inside,
    one-sided ones of order ``edge_order`` (1 or 2) at the ends. ``spacing`` is the
    distance between samples (a number, or one per dim) or their coordinates (one 1-D
    tensor per dim).

    Example:
        >>> import retrograd as torch
        >>> torch.gradient(torch.tensor([1., 4., 9., 16.]))
        (tensor([3., 4., 6., 7.]),)
        >>> torch.gradient(torch.tensor([1., 4., 9., 16.]), spacing=2.0, edge_order=2)
        (tensor([1., 2., 3., 4.]),)
    """
    if input._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = (list(range(input.ndim)) if dim is None
            else [dim] if isinstance(dim, int) else list(dim))
    listed = isinstance(spacing, (list, tuple))
    if listed and dim is None and len(spacing) != input.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
            f"a list of length {len(spacing)}")
    if listed and dim is not None and len(spacing) != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            "dim arguments to have the same length, but got a spacing argument of length "
            f"{len(spacing)} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [_wrap_dim(k, input.ndim) for k in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    if any(input.shape[k] < edge_order + 1 for k in wrapped):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    steps = list(spacing) if listed else [spacing] * len(wrapped)
    return tuple(
        _gradient_coordinates(input, k, h, edge_order) if isinstance(h, Tensor)
        else _gradient_uniform(input, k, h, edge_order) for k, h in zip(wrapped, steps))
