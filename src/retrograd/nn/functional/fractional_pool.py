"""Fractional max pooling (Graham, 2014): ``F.fractional_max_pool2d`` / ``3d``.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> samples = torch.full((1, 1, 2), 0.5)
    >>> torch.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=samples)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
"""

from __future__ import annotations

import numpy as np

from ..._core.hints import FloatOrFloats, ShapeLike
from ..._functions.creation import rand
from ..._tensor.tensor import Tensor, _make
from ...ops.batch_rules import random_under_vmap
from ...ops.public import FP32, autocast_category
from .common import _ntuple

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


# Note [Fractional pooling windows]
# Each (sample, channel) plane gets its own pseudo-random window starts per spatial dim,
# drawn from one uniform u in [0, 1) (``_random_samples``, shape (N, C, dims), the last
# axis in the kernel's order: width, height for 2-D; time, height, width for 3-D) as
# PyTorch's generate_intervals computes them, in the input's floating dtype:
# alpha = (in - k) / (out - 1), start_i = int((i + u) alpha) - int(u alpha), and the last
# window ends at the input's end. The windows are gathered for all planes at once (one
# fancy index), their argmax (the first maximum; a NaN wins, the last NaN in scan order,
# as the kernel's "val > max || isnan(val)" does) gives PyTorch's indices into each
# plane, and the output is one gather at those indices, so the gradient goes to each
# window's argmax (summed where windows share it), as PyTorch's backward does.

def _starts(u: np.ndarray, n_in: int, n_out: int, k: int) -> np.ndarray:
    """Window starts (..., n_out) from samples ``u`` (...), in u's dtype's arithmetic."""
    dt = u.dtype.type
    seq = np.empty(u.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = dt(n_in - k) / dt(n_out - 1)
        i = np.arange(n_out - 1, dtype=u.dtype)
        seq[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - \
            (u * alpha).astype(np.int64)[..., None]
    seq[..., -1] = n_in - k
    return seq


def _fractional(input: Tensor, kernel_size, output_size, output_ratio,
                samples, nsp: int, name: str):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    batched = input.dim() == nsp + 2
    if input.dim() not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    ksz = _ntuple(kernel_size, nsp, "kernel_size")
    insz = tuple(x.shape[2:])
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else \
            (output_ratio,) * nsp
        output_size = [int(insz[d] * ratio[d]) for d in range(nsp)]
    osz = _ntuple(output_size, nsp, "output_size")
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = rand(1 if not batched else n, c, nsp, dtype=input.dtype)
    if samples._data.dtype != input._data.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3 or samples.shape[2] != nsp:
        raise RuntimeError(f"Expect _random_samples to be of shape (N, C, {nsp}), got "
                           f"{list(samples.shape)}")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less than input batch size.")
    for d in range(nsp):
        if osz[d] + ksz[d] - 1 > insz[d]:
            word = _DIM_WORDS[nsp][d]
            raise RuntimeError(f"{name}(): pool {word} {ksz[d]} too large relative to input "
                               f"{word} {insz[d]}")
    u = samples._data[:n]
    order = [1, 0] if nsp == 2 else [0, 1, 2]  # samples' axis per spatial dim
    windows = []  # per dim: (N, C, out, k) input positions
    for d in range(nsp):
        st = _starts(u[..., order[d]], insz[d], osz[d], ksz[d])
        windows.append(st[..., None] + np.arange(ksz[d]))
    # flat position in the plane of every (out..., k...) tap, shape (N, C, *out, *k)
    flat = np.zeros((n, c) + tuple(osz) + tuple(ksz), dtype=np.int64)
    for d in range(nsp):
        shape = [n, c] + [1] * nsp + [1] * nsp
        shape[2 + d] = osz[d]
        shape[2 + nsp + d] = ksz[d]
        stride = int(np.prod(insz[d + 1:]))
        flat = flat + windows[d].reshape(shape) * stride
    planes = x._data.reshape(n, c, -1)
    taps = flat.reshape(n, c, -1)
    vals = np.take_along_axis(planes, taps, axis=2).reshape(n, c, *osz, -1)
    nan = np.isnan(vals)
    best = np.argmax(vals, axis=-1)
    last_nan = vals.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    best = np.where(nan.any(axis=-1), last_nan, best)
    idx = np.take_along_axis(flat.reshape(n, c, *osz, -1), best[..., None], axis=-1)[..., 0]
    out = x.reshape(n, c, -1).gather(2, _make(idx.reshape(n, c, -1))).reshape(n, c, *osz)
    indices = _make(idx)
    if not batched:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return out, indices


@autocast_category(FP32, op="fractional_max_pool2d", name="fractional_max_pool2d_with_indices")
@random_under_vmap
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: ShapeLike,
                                       output_size: ShapeLike | None = None,
                                       output_ratio: FloatOrFloats | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                      ) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of 2-D fractional max pooling (see fractional_max_pool2d).

    Example:
        >>> import retrograd as torch
        >>> out, idx = torch.nn.functional.fractional_max_pool2d_with_indices(
        ...     torch.ones(1, 1, 4, 4), 2, output_size=2)
        >>> idx.shape
        torch.Size([1, 1, 2, 2])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2,
                       "fractional_max_pool2d")


@autocast_category(FP32, op="fractional_max_pool2d")
@random_under_vmap
def fractional_max_pool2d(input: Tensor, kernel_size: ShapeLike,
                          output_size: ShapeLike | None = None,
                          output_ratio: FloatOrFloats | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W): pseudo-random windows of
    ``kernel_size`` giving ``output_size`` (or ``output_ratio`` of the input size); with
    ``return_indices=True`` also the argmax positions in each plane
    (Note [Fractional pooling windows]).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.fractional_max_pool2d(torch.ones(2, 3, 9, 9), 3,
        ...                                           output_ratio=0.5).shape
        torch.Size([2, 3, 4, 4])
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2,
                           "fractional_max_pool2d")
    return (out, idx) if return_indices else out


@autocast_category(FP32, op="fractional_max_pool3d", name="fractional_max_pool3d_with_indices")
@random_under_vmap
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: ShapeLike,
                                       output_size: ShapeLike | None = None,
                                       output_ratio: FloatOrFloats | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                      ) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of 3-D fractional max pooling (see fractional_max_pool3d).

    Example:
        >>> import retrograd as torch
        >>> out, idx = torch.nn.functional.fractional_max_pool3d_with_indices(
        ...     torch.ones(1, 1, 4, 4, 4), 2, output_size=2)
        >>> idx.shape
        torch.Size([1, 1, 2, 2, 2])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3,
                       "fractional_max_pool3d")


@autocast_category(FP32, op="fractional_max_pool3d")
@random_under_vmap
def fractional_max_pool3d(input: Tensor, kernel_size: ShapeLike,
                          output_size: ShapeLike | None = None,
                          output_ratio: FloatOrFloats | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W) (see
    fractional_max_pool2d).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.fractional_max_pool3d(torch.ones(1, 2, 6, 6, 6), 2,
        ...                                           output_size=(3, 4, 5)).shape
        torch.Size([1, 2, 3, 4, 5])
    """
    out, idx = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3,
                           "fractional_max_pool3d")
    return (out, idx) if return_indices else out
