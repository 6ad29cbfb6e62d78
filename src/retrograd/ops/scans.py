"""Scans along a dim: ``cummax``, ``cummin``, ``logcumsumexp``, and ``diff``.

Example:
    >>> import retrograd as torch
    >>> torch.cummax(torch.tensor([1., 3., 2.]), 0)
    torch.return_types.cummax(
    values=tensor([1., 3., 3.]),
    indices=tensor([0, 1, 1]))
"""

from __future__ import annotations

import numpy as np

from .._tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim
from . import table_scan as TS
from ._core import FLOAT_NP
from .dispatch import apply
from .public import public
from .reductions import _rt
from .shape import cat


def _running_indices(data: np.ndarray, dim: int, keep) -> np.ndarray:
    """Index of the running max (``keep`` = ``np.greater_equal``) or min along ``dim``, as
    PyTorch's CPU kernel picks it: the latest of equal values, and a nan sticks."""
    x = np.moveaxis(data, dim, -1)
    idx = np.zeros(x.shape, np.int64)
    if x.shape[-1]:
        best, at = x[..., 0], np.zeros(x.shape[:-1], np.int64)
        floating = data.dtype in FLOAT_NP
        for i in range(x.shape[-1]):
            cur = x[..., i]
            take = keep(cur, best)
            if floating:
                take = np.isnan(cur) | (~np.isnan(best) & take)
            best = np.where(take, cur, best)
            at = np.where(take, i, at)
            idx[..., i] = at
    return np.moveaxis(idx, -1, dim)


def _cummaxmin(op, name: str, input: Tensor, dim: int, keep):  # noqa: A002
    d = _wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        idx = np.zeros((), np.int64)
    else:
        idx = _running_indices(input._data, d, keep)
    it = _make(idx)
    return _rt(name)(apply(op, (input,), (d, it)), it)


@public
def cummax(input: Tensor, dim: int):  # noqa: A002
    """The running maximum along ``dim`` and the index where it was reached (the latest of
    equal values; a nan, once met, is the maximum from there on).

    Example:
        >>> import retrograd as torch
        >>> torch.cummax(torch.tensor([2., 1., 2.]), 0).indices
        tensor([0, 0, 2])
    """
    return _cummaxmin(TS.cummax, "cummax", input, dim, np.greater_equal)


@public
def cummin(input: Tensor, dim: int):  # noqa: A002
    """The running minimum along ``dim`` and the index where it was reached (the latest of
    equal values; a nan, once met, is the minimum from there on).

    Example:
        >>> import retrograd as torch
        >>> torch.cummin(torch.tensor([3., 1., 2.]), 0).values
        tensor([3., 1., 1.])
    """
    return _cummaxmin(TS.cummin, "cummin", input, dim, np.less_equal)


@public
def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
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
    return apply(TS.logcumsumexp, (input,), (_wrap_dim(dim, input._data.ndim),))


@public
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
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
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi.logical_xor(lo) if x._data.dtype == np.bool_ else hi - lo
    return x
