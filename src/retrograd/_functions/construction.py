"""Tensors built from others or from sizes: ``block_diag`` (one node), ``meshgrid``,
``cartesian_prod`` and ``combinations`` (composed as PyTorch composes them, so the
``grad_fn`` graph is PyTorch's), ``tril_indices``/``triu_indices``, the window functions
(``hann``/``hamming``/``blackman``/``bartlett``/``kaiser_window``) and the deprecated
``range``.

Example:
    >>> import retrograd as torch
    >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from .._core import dtype as D
from .._core.hints import DeviceLike, Number
from .._core.layouts import layout
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import table as T
from .creation import _finish
from .indexing import masked_select
from .shape import stack

__all__ = ["block_diag", "meshgrid", "cartesian_prod", "combinations", "tril_indices",
           "triu_indices", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window", "range"]


@public(method=False)
def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the tensors (0-d: 1x1, 1-D: a row), one
    ``BlockDiagBackward0`` node; the dtype is the promoted one.

    Example:
        >>> import retrograd as torch
        >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor(3))
        tensor([[1, 2, 0],
                [0, 0, 3]])
    """
    shapes = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions (flatten or "
                               "split it into matrices first)")
        shp = tuple(t.shape)
        shapes.append((1, 1) if not shp else (1, shp[0]) if len(shp) == 1 else shp)
    if not tensors:
        return _make(np.zeros((1, 0), D.DEFAULTS.float.np))
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = D.promote_types(dt, t.dtype)
    return apply(T.block_diag, tuple(tensors), (tuple(shapes), dt.np))


def _tensor_list(name: str, tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    ts = list(tensors)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


@public(method=False)
def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str | None = None
             ) -> tuple[Tensor, ...]:
    """Coordinate grids of 0-d or 1-D tensors: with ``indexing='ij'`` output ``i`` varies
    along dim ``i``; ``'xy'`` swaps the first two dims (``None`` warns and takes 'ij').

    Example:
        >>> import retrograd as torch
        >>> x, y = torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]),
        ...                       indexing="ij")
        >>> x.shape, y[0]
        (torch.Size([2, 3]), tensor([3, 4, 5]))
    """
    ts = _tensor_list("meshgrid", tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a {t.ndim}-D tensor of shape {tuple(t.shape)} "
                               "(flatten it first)")
        if t.dtype != ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype (got "
                               f"{ts[0].dtype} and {t.dtype}; convert them to one dtype)")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:  # PyTorch's xy: the ij grids of the first two swapped, then their outputs
        ts[0], ts[1] = ts[1], ts[0]
    sizes = [t.numel() for t in ts]
    outs = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        outs.append(t.view(view).expand(sizes))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


def _vector(t: Tensor) -> None:
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


@public(method=False)
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors, one row per combination (one tensor: itself).

    Example:
        >>> import retrograd as torch
        >>> torch.cartesian_prod(torch.tensor([1., 2.]), torch.tensor([3.])).shape
        torch.Size([2, 2])
    """
    ts = _tensor_list("meshgrid", tensors)
    for t in ts:
        _vector(t)
    if len(ts) == 1:
        return ts[0]
    return stack([g.flatten() for g in meshgrid(*ts, indexing="ij")], 1)


@public(method=False)
def combinations(input: Tensor, r: int = 2,
                 with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-D tensor, one per row, in
    lexicographic order of positions (as ``itertools.combinations``).

    Example:
        >>> import retrograd as torch
        >>> torch.combinations(torch.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _make(np.empty((0,), input._data.dtype))
    n = input.shape[0]
    grids = meshgrid(*([input] * r), indexing="ij")
    idx = np.indices((n,) * r) if n else np.zeros((r,) + (0,) * r, np.int64)
    keep = np.ones((n,) * r, bool)
    for a, b in zip(idx, idx[1:]):
        keep &= (a <= b) if with_replacement else (a < b)
    mask = _make(keep)
    return stack([masked_select(g, mask) for g in grids], 1)


def _index_dtype(name: str, dtype) -> D.dtype:
    dt = D.int64 if dtype is None else D.as_dtype(dtype)
    if dt.is_floating_point or dt is D.bool:
        raise NotImplementedError(f'"{name}" not implemented for \'{_LEGACY_NAMES[dt.name]}\' '
                                  "(the indices are integers: pass an integer dtype)")
    return dt


def _tri_indices(name: str, np_fn, row: int, col: int, offset: int, dtype) -> Tensor:
    dt = _index_dtype(name, dtype)
    for what, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{what} must be non-negative, got{v}")
    r, c = np_fn(row, offset, col) if row and col else (np.zeros(0, np.int64),) * 2
    return _make(np.stack([r, c]).astype(dt.np).reshape(2, -1))


@public(method=False)
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: D.dtype | None = None,
                 device: DeviceLike | None = None, layout: layout | None = None) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row x col`` matrix (from
    diagonal ``offset`` down), as a 2 x N tensor in row-major order.

    Example:
        >>> import retrograd as torch
        >>> torch.tril_indices(2, 2)
        tensor([[0, 1, 1],
                [0, 0, 1]])
    """
    return _tri_indices("tril_indices", np.tril_indices, row, col, offset, dtype)


@public(method=False)
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: D.dtype | None = None,
                 device: DeviceLike | None = None, layout: layout | None = None) -> Tensor:
    """The (row, column) indices of the upper triangle of a ``row x col`` matrix (from
    diagonal ``offset`` up), as a 2 x N tensor in row-major order.

    Example:
        >>> import retrograd as torch
        >>> torch.triu_indices(2, 2)
        tensor([[0, 0, 1],
                [0, 1, 1]])
    """
    return _tri_indices("triu_indices", np.triu_indices, row, col, offset, dtype)


# ---------------------------------------------------------------------------------
# Note [Window functions]
# PyTorch computes a window in its dtype, step by step, from ``arange(N)`` (N = length + 1
# for a periodic window, whose last value is then dropped): hamming is
# ``alpha - beta * cos(2 pi n / (N - 1))`` (hann: alpha = beta = 0.5), blackman
# ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``, bartlett the triangle
# ``2n / (N - 1)`` folded at the middle, kaiser ``I0(beta sqrt(1 - ((n - a) / a)^2)) /
# I0(beta)`` with a = (N - 1) / 2. Each step here is one NumPy op in the window's dtype
# (half types in float32, rounded once at the end); length 0 is empty and length 1 is [1].

def _window(name: str, length: int, periodic: bool, dtype, requires_grad: bool, device,
            body) -> Tensor:
    dt = D.DEFAULTS.float if dtype is None else D.as_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt} (pass "
                           "dtype=torch.float32 or torch.float64)")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={length}")
    if length <= 1:
        return _finish(np.ones(length, dt.np), requires_grad, device)
    n = length + 1 if periodic else length
    work = np.float64 if dt is D.float64 else np.float32
    w = body(np.arange(n, dtype=work), n, work)
    return _finish(np.asarray(w[:length], dtype=work).astype(dt.np), requires_grad, device)


def _scalar(v, work):
    return np.asarray(v, dtype=work)


@public(method=False)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: D.dtype | None = None,
                   layout: layout | None = None, device: DeviceLike | None = None,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta * cos(2 pi n / (N - 1))`` (Note [Window
    functions]).

    Example:
        >>> import retrograd as torch
        >>> torch.hamming_window(3, periodic=False)
        tensor([0.0800, 1.0000, 0.0800])
    """
    def body(n, size, work):
        w = np.cos(n * _scalar(2 * math.pi / (size - 1), work))
        return w * _scalar(-beta, work) + _scalar(alpha, work)
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, device,
                   body)


@public(method=False)
def hann_window(window_length: int, periodic: bool = True, *, dtype: D.dtype | None = None,
                layout: layout | None = None, device: DeviceLike | None = None,
                requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))`` (Note [Window functions]).

    Example:
        >>> import retrograd as torch
        >>> torch.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    def body(n, size, work):
        w = np.cos(n * _scalar(2 * math.pi / (size - 1), work))
        return w * _scalar(-0.5, work) + _scalar(0.5, work)
    return _window("hann_window", window_length, periodic, dtype, requires_grad, device, body)


@public(method=False)
def blackman_window(window_length: int, periodic: bool = True, *, dtype: D.dtype | None = None,
                    layout: layout | None = None, device: DeviceLike | None = None,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window (Note [Window functions]).

    Example:
        >>> import retrograd as torch
        >>> torch.blackman_window(3, periodic=False)
        tensor([-2.9802e-08,  1.0000e+00, -2.9802e-08])
    """
    def body(n, size, work):
        t = n * _scalar(math.pi / (size - 1), work)
        w = np.cos(t * _scalar(4, work)) * _scalar(0.08, work)
        return w - np.cos(t * _scalar(2, work)) * _scalar(0.5, work) + _scalar(0.42, work)
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, device,
                   body)


@public(method=False)
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: D.dtype | None = None,
                    layout: layout | None = None, device: DeviceLike | None = None,
                    requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window (Note [Window functions]).

    Example:
        >>> import retrograd as torch
        >>> torch.bartlett_window(5, periodic=False)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    def body(n, size, work):
        w = n * _scalar(2.0 / (size - 1), work)
        half = ((size - 1) >> 1) + 1
        w[half:] = _scalar(2, work) - w[half:]
        return w
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, device,
                   body)


@public(method=False)
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: D.dtype | None = None, layout: layout | None = None,
                  device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` (Note [Window
    functions]).

    Example:
        >>> import retrograd as torch
        >>> torch.kaiser_window(3, periodic=False, beta=0.0)
        tensor([1., 1., 1.])
    """
    def body(n, size, work):
        a = _scalar((size - 1) / 2.0, work)
        r = (n - a) / a
        arg = _scalar(beta, work) * np.sqrt(np.maximum(_scalar(1, work) - r * r, 0))
        return (np.i0(arg.astype(np.float64)) / np.i0(float(beta))).astype(work)
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, device,
                   body)


@public(method=False)
def range(start: Number = 0, end: Number | None = None, step: Number = 1, *,
          dtype: D.dtype | None = None, layout: layout | None = None,
          device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` *inclusive* by ``step`` (deprecated: use
    ``arange``, which excludes ``end``); the default dtype is the default float dtype.

    Example:
        >>> import retrograd as torch, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.range(1, 3)
        tensor([1., 2., 3.])
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    dt = D.DEFAULTS.float if dtype is None else D.as_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign "
                           f"(range({start}, {end}, {step}) counts away from its end)")
    size = int(math.floor((end - start) / step)) + 1
    if dt.is_floating_point:
        vals = np.float64(start) + np.arange(size, dtype=np.float64) * np.float64(step)
    else:
        vals = int(start) + np.arange(size, dtype=np.int64) * int(step)
    return _finish(vals.astype(dt.np), requires_grad, device)
