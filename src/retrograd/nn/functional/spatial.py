"""Spatial rearrangements and pooling in ``retrograd.nn.functional`` (re-exported there):
pixel and channel shuffles, fold/unfold, adaptive max pooling, max unpooling, LP pooling.

The records behind them are in ``ops/records/spatial.py`` (Note [Spatial records come in
adjoint pairs]); LP pooling is PyTorch's composition of ``avg_pool`` and ``pow``.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.adaptive_max_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
    tensor([[[3., 2.]]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._core.hints import Shape, ShapeLike
from ..._tensor.tensor import Tensor, _make
from ...ops.batch_rules import per_element_under_vmap
from ...ops.dispatch import apply
from ...ops.public import FP32, autocast_category
from ...ops.records import spatial as TSP
from .common import _adaptive_output_size, _legacy, _ntuple
from .conv import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d

# ---------------------------------------------------------------------------------
# shuffles


def _need_dims(name: str, input: Tensor) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) -> (*, C, H·r, W·r): sub-pixel convolution's rearrangement.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pixel_shuffle(torch.ones(1, 8, 2, 3), 2).shape
        torch.Size([1, 2, 4, 6])
    """
    _need_dims("pixel_shuffle", input)
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    return apply(TSP.pixel_shuffle, (input,), (r,))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) -> (*, C·r², H, W): the inverse of :func:`pixel_shuffle`.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pixel_unshuffle(torch.ones(1, 2, 4, 6), 2).shape
        torch.Size([1, 8, 2, 3])
    """
    _need_dims("pixel_unshuffle", input)
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for what, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return apply(TSP.pixel_unshuffle, (input,), (r,))


def _check_channel_shuffle(input: Tensor, groups: int) -> int:
    g = int(groups)
    if g <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    c = input.shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    return g


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups: (N, g·k, *) viewed as (N, g, k, *),
    transposed to (N, k, g, *).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.channel_shuffle(torch.arange(4.).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    return apply(TSP.channel_shuffle, (input,), (_check_channel_shuffle(input, groups),))


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """:func:`channel_shuffle` without a gradient (PyTorch's ``native_channel_shuffle`` has
    no derivative formula: its result's ``grad_fn`` refuses to run).

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(4.).reshape(1, 4, 1)
        >>> torch.nn.functional.native_channel_shuffle(x, 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    g = _check_channel_shuffle(input, groups)
    return _make(TSP._channel_shuffle_fwd(input._data, (g,)))


# ---------------------------------------------------------------------------------
# fold / unfold (im2col / col2im)


def _im2col_params(xsp, kernel_size, dilation, padding, stride):
    k = _ntuple(kernel_size, 2, "kernel_size")
    d = _ntuple(dilation, 2, "dilation")
    p = _ntuple(padding, 2, "padding")
    s = _ntuple(stride, 2, "stride")
    for what, v, a, b in (("kernel size", k, "kernel_height", "kernel_width"),
                          ("dilation", d, "dilation_height", "dilation_width"),
                          ("stride", s, "stride_height", "stride_width")):
        if v[0] <= 0 or v[1] <= 0:
            raise RuntimeError(f"{what} should be greater than zero, but got {a}: {v[0]} "
                               f"{b}: {v[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    osp = tuple((xsp[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))
    return k, d, ((p[0], p[0]), (p[1], p[1])), s, tuple(xsp), osp


def unfold(input: Tensor, kernel_size: ShapeLike, dilation: ShapeLike = 1,
           padding: ShapeLike = 0, stride: ShapeLike = 1) -> Tensor:
    """Sliding local blocks as columns (im2col): (N, C, H, W) -> (N, C·kh·kw, L).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.unfold(torch.arange(9.).reshape(1, 1, 3, 3), 2)
        tensor([[[0., 1., 3., 4.],
                 [1., 2., 4., 5.],
                 [3., 4., 6., 7.],
                 [4., 5., 7., 8.]]])
    """
    if input.ndim not in (3, 4):
        if input.ndim < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 2)")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got: {list(input.shape)}")
    p = _im2col_params(input.shape[-2:], kernel_size, dilation, padding, stride)
    if p[5][0] < 1 or p[5][1] < 1:
        k, d, pads, _, xsp, osp = p
        raise RuntimeError(f"Given input with spatial size {xsp}, kernel_size={k}, dilation={d}, "
                           f"padding={(pads[0][0], pads[1][0])}, calculated shape of the array "
                           f"of sliding blocks as {osp}, but its components must be at least one.")
    return apply(TSP.im2col, (input,), p)


def fold(input: Tensor, output_size: ShapeLike, kernel_size: ShapeLike,
         dilation: ShapeLike = 1, padding: ShapeLike = 0,
         stride: ShapeLike = 1) -> Tensor:
    """Sum sliding local blocks back into an image (col2im), the adjoint of :func:`unfold`.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    x = input.unsqueeze(0) if input.ndim == 2 else input  # for the checks
    osz = _ntuple(output_size, 2, "output_size")
    p = _im2col_params(osz, kernel_size, dilation, padding, stride)
    k, d, pads, s, _, blocks = p
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}.")
    if blocks[0] * blocks[1] != x.shape[2] or blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(f"Given output_size={osz}, kernel_size={k}, dilation={d}, "
                           f"padding={(pads[0][0], pads[1][0])}, stride={s}, expected size of "
                           f"input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but "
                           f"got input.size(2)={x.shape[2]}.")
    return apply(TSP.col2im, (input,), p)


# ---------------------------------------------------------------------------------
# adaptive max pooling


def _adaptive_max(name, record, input, output_size, nsp, return_indices):
    osz = _adaptive_output_size(input, output_size, nsp, name, "max")
    idx = _make(TSP.adaptive_max_indices(input._data, osz))
    out = apply(record, (input, idx), (nsp, False))
    return (out, idx) if return_indices else out


@per_element_under_vmap
def adaptive_max_pool1d(input: Tensor, output_size: ShapeLike,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling to a fixed output length (PyTorch's adaptive windows); with
    ``return_indices=True`` also each maximum's index.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool1d(torch.tensor([[1., 3., 2.]]), 2)
        tensor([[3., 3.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: "
                           f"{list(input.shape)}")
    o = _ntuple(output_size, 1, "output_size")
    out, idx = _adaptive_max("adaptive_max_pool2d", TSP.adaptive_max_pool2d,
                             input.unsqueeze(-2), (1, o[0]), 2, True)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


@per_element_under_vmap
def adaptive_max_pool2d(input: Tensor, output_size: int | Sequence[int | None],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-D adaptive max pooling over (N, C, H, W) or (C, H, W); None in ``output_size``
    keeps that dim.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool2d(torch.arange(16.).reshape(1, 4, 4), 2)
        tensor([[[ 5.,  7.],
                 [13., 15.]]])
    """
    return _adaptive_max("adaptive_max_pool2d", TSP.adaptive_max_pool2d, input, output_size, 2,
                         return_indices)


@autocast_category(FP32)
@per_element_under_vmap
def adaptive_max_pool3d(input: Tensor, output_size: int | Sequence[int | None],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-D adaptive max pooling over (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool3d(torch.ones(1, 1, 4, 4, 4), 2).shape
        torch.Size([1, 1, 2, 2, 2])
    """
    return _adaptive_max("adaptive_max_pool3d", TSP.adaptive_max_pool3d, input, output_size, 3,
                         return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: ShapeLike,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d(..., return_indices=True)``: (values, indices).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool1d_with_indices(torch.tensor([[1., 3.]]), 1)
        (tensor([[3.]]), tensor([[1]]))
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: int | Sequence[int | None],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d(..., return_indices=True)``: (values, indices).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool2d_with_indices(torch.ones(1, 2, 2), 1)[1]
        tensor([[[0]]])
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: int | Sequence[int | None],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d(..., return_indices=True)``: (values, indices).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_max_pool3d_with_indices(torch.ones(1, 2, 2, 2), 1)[1]
        tensor([[[[0]]]])
    """
    return adaptive_max_pool3d(input, output_size, True)


# ---------------------------------------------------------------------------------
# max unpooling


def _unpool_size(input, kernel_size, stride, padding, output_size, nsp):
    k = _ntuple(kernel_size, nsp, "kernel_size")
    s = k if stride is None else _ntuple(stride, nsp, "stride")
    p = _ntuple(padding, nsp, "padding")
    default = [(input.shape[-nsp + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nsp)]
    if output_size is None:
        return tuple(default)
    osz = list(output_size)
    if len(osz) == nsp + 2:
        osz = osz[2:]
    if len(osz) != nsp:
        raise ValueError(f"output_size should be a sequence containing {nsp} or {nsp + 2} "
                         f"elements, but it has a length of '{len(osz)}'")
    for d in range(nsp):
        lo, hi = default[d] - s[d], default[d] + s[d]
        if not lo < osz[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')
    return tuple(int(o) for o in osz)


def _max_unpool(input, indices, osz, nsp):
    """Scatter ``input`` into zeros of spatial size ``osz`` at ``indices`` (the 2-D or 3-D
    record; 1-D runs as 2-D with a trailing 1, as in PyTorch)."""
    record = TSP.max_unpool2d if nsp == 2 else TSP.max_unpool3d
    name = f"max_unpool{nsp}d"
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_legacy(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    total = int(np.prod(osz))
    bad = indices._data[(indices._data < 0) | (indices._data >= total)]
    if bad.size:
        raise RuntimeError(f"Found an invalid max index: {int(bad.flat[0])} (output volumes are "
                           f"of size {'x'.join(map(str, osz))})")
    return apply(record, (input, indices), (nsp, tuple(osz), True))


@per_element_under_vmap
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: ShapeLike,
                 stride: ShapeLike | None = None, padding: ShapeLike = 0,
                 output_size: Shape | None = None) -> Tensor:
    """Partial inverse of ``max_pool1d``: each value goes back to its index, zeros elsewhere.

    Example:
        >>> import retrograd as torch
        >>> F = torch.nn.functional
        >>> y, i = F.max_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2, return_indices=True)
        >>> F.max_unpool1d(y, i, 2)
        tensor([[[0., 3., 2., 0.]]])
    """
    osz = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), osz + (1,), 2).squeeze(-1)


@autocast_category(FP32)
@per_element_under_vmap
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: ShapeLike,
                 stride: ShapeLike | None = None, padding: ShapeLike = 0,
                 output_size: Shape | None = None) -> Tensor:
    """Partial inverse of ``max_pool2d``.

    Example:
        >>> import retrograd as torch
        >>> F = torch.nn.functional
        >>> y, i = F.max_pool2d(torch.arange(4.).reshape(1, 1, 2, 2), 2, return_indices=True)
        >>> F.max_unpool2d(y, i, 2)
        tensor([[[[0., 0.],
                  [0., 3.]]]])
    """
    osz = _unpool_size(input, kernel_size, stride, padding, output_size, 2)
    return _max_unpool(input, indices, osz, 2)


@autocast_category(FP32)
@per_element_under_vmap
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: ShapeLike,
                 stride: ShapeLike | None = None, padding: ShapeLike = 0,
                 output_size: Shape | None = None) -> Tensor:
    """Partial inverse of ``max_pool3d``.

    Example:
        >>> import retrograd as torch
        >>> F = torch.nn.functional
        >>> y, i = F.max_pool3d(torch.arange(8.).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> F.max_unpool3d(y, i, 2).flatten()
        tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    osz = _unpool_size(input, kernel_size, stride, padding, output_size, 3)
    return _max_unpool(input, indices, osz, 3)


# ---------------------------------------------------------------------------------
# LP pooling (PyTorch's composition: (sum over the window of x^p)^(1/p))


def _lp_pool(nsp, avg, mx, input, norm_type, kernel_size, stride, ceil_mode):
    k = _ntuple(kernel_size, nsp, "kernel_size")
    if norm_type == float("inf"):
        return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    area = int(np.prod(k))
    return (out.sign() * out.abs().relu()).mul(area).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: ShapeLike,
              stride: ShapeLike | None = None, ceil_mode: bool = False) -> Tensor:
    """1-D power-average pooling: ``(sum over the window of x^p)^(1/p)``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.lp_pool1d(torch.tensor([[[3., 4.]]]), 2, 2)
        tensor([[[5.]]])
    """
    return _lp_pool(1, avg_pool1d, max_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: ShapeLike,
              stride: ShapeLike | None = None, ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.lp_pool2d(torch.ones(1, 1, 2, 2), 1, 2)
        tensor([[[[4.]]]])
    """
    return _lp_pool(2, avg_pool2d, max_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: ShapeLike,
              stride: ShapeLike | None = None, ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.lp_pool3d(torch.ones(1, 1, 2, 2, 2), 1, 2).flatten()
        tensor([8.])
    """
    return _lp_pool(3, avg_pool3d, max_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


__all__ = ["adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "channel_shuffle", "fold", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle", "unfold"]
