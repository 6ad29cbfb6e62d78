"""Convolution and pooling in ``retrograd.nn.functional`` (re-exported there).

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.max_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
    tensor([[[3., 2.]]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._core import dtype as D
from ..._core.hints import ShapeLike
from ..._tensor.tensor import _LEGACY_NAMES, Tensor, _make
from ...ops.dispatch import apply
from ...ops.public import FP32, LOWER_PRECISION_FP, autocast_category
from ...ops.records import nn as TN
from ...ops.records import resize as TRS
from ...ops.records import spatial as TSP
from .common import _adaptive_output_size, _check_float, _ntuple, _same_dtype
from .pool_checks import check_window, rank_error, too_small

# ---------------------------------------------------------------------------------
# convolution (Note [Convolution as one matrix product] in ops/records/nn.py)


def _conv_params(nsp, x, weight, stride, padding, dilation, groups, name):
    stride = _ntuple(stride, nsp, "stride")
    dilation = _ntuple(dilation, nsp, "dilation")
    ksp = tuple(weight._data.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = []
            for i in range(nsp):
                total = dilation[i] * (ksp[i] - 1)
                lo = total // 2
                pads.append((lo, total - lo))
            pads = tuple(pads)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             "{'valid', 'same'}")
    else:
        pads = tuple((p, p) for p in _ntuple(padding, nsp, "padding"))
    return stride, pads, dilation, ksp


def _add_batch_dim(nsp, input, expected):
    """``(input with a leading batch dim, whether it had none)``; raises ``"{expected}, but got
    input of size: [...]"`` unless ``input`` has ``nsp + 1`` or ``nsp + 2`` dims."""
    unbatched = input._data.ndim == nsp + 1
    if unbatched:
        input = input.unsqueeze(0)
    if input._data.ndim != nsp + 2:
        raise RuntimeError(f"{expected}, but got input of size: {list(input.shape)}")
    return input, unbatched


def _convnd(nsp, input, weight, bias, stride, padding, dilation, groups, name):
    input, unbatched = _add_batch_dim(
        nsp, input, f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}")
    if weight._data.ndim != nsp + 2:
        raise RuntimeError(f"{name}: expected a weight of {nsp + 2} dims (out_channels, "
                           f"in_channels/groups, kernel...), got {list(weight.shape)}")
    _check_float(input, name, RuntimeError)  # (PyTorch's CPU kernel takes integers)
    _same_dtype(name, input, weight, bias)
    stride, pads, dilation, ksp = _conv_params(nsp, input, weight, stride, padding, dilation,
                                               groups, name)
    c = input._data.shape[1]
    if c != weight._data.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight._data.shape[1] * groups} channels, but got "
            f"{c} channels instead")
    if weight._data.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {list(weight.shape)} instead")
    xsp = tuple(input._data.shape[2:])
    for i in range(nsp):
        if xsp[i] + pads[i][0] + pads[i][1] < dilation[i] * (ksp[i] - 1) + 1:
            padded = " x ".join(str(xsp[j] + pads[j][0] + pads[j][1]) for j in range(nsp))
            kern = " x ".join(str(dilation[j] * (ksp[j] - 1) + 1) for j in range(nsp))
            raise RuntimeError(
                f"Calculated padded input size per channel: ({padded}). Kernel size: ({kern}). "
                "Kernel size can't be greater than actual input size")
    out = apply(TN.conv, (input, weight, bias), (stride, pads, dilation, groups, xsp, ksp))
    return out.squeeze(0) if unbatched else out


@autocast_category(LOWER_PRECISION_FP)
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: ShapeLike = 1,
           padding: str | ShapeLike = 0, dilation: ShapeLike = 1, groups: int = 1) -> Tensor:
    """1-D convolution over (N, C, L) or (C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2))
        tensor([[[2., 2., 2.]]])
    """
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups, "conv1d")


@autocast_category(LOWER_PRECISION_FP, op="conv_tbc")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of a (time, batch, channels) sequence with a (kernel width,
    in_channels, out_channels) weight, ``pad`` steps padded (or, negative, cut) at both
    ends; the result is (time, batch, out_channels). Computed as ``conv1d`` on the
    permuted tensors (PyTorch's one ConvTbcBackward0 node is several nodes here).

    Example:
        >>> import retrograd as torch
        >>> torch.conv_tbc(torch.ones(3, 1, 1), torch.ones(2, 1, 1), torch.zeros(1))[:, 0, 0]
        tensor([2., 2.])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_LEGACY_NAMES[input.dtype.name]} and "
                           f"{_LEGACY_NAMES[weight.dtype.name]} (conv_tbc multiplies the "
                           "two: convert one, e.g. weight.to(input.dtype))")
    time, batch, _ = input.shape
    width, _, out_channels = weight.shape
    out_len = time + 2 * pad - width + 1
    if out_len < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_len}: "
                           f"[{out_len}, {batch}, {out_channels}] (the sequence is shorter "
                           "than the kernel after padding)")
    if out_len == 0:  # nothing to convolve; still a result connected to the inputs
        return input[:0].matmul(weight[0]) + bias
    if pad < 0:  # negative padding trims the sequence
        input, pad = input[-pad:time + pad], 0
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


@autocast_category(LOWER_PRECISION_FP)
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: ShapeLike = 1,
           padding: str | ShapeLike = 0, dilation: ShapeLike = 1, groups: int = 1) -> Tensor:
    """2-D convolution over (N, C, H, W) or (C, H, W) input; ``padding`` may be an int,
    a pair, ``'same'`` or ``'valid'``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3, 3),
        ...                            padding=1)[0, 0, 0]
        tensor([4., 6., 4.])
    """
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups, "conv2d")


@autocast_category(LOWER_PRECISION_FP)
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: ShapeLike = 1,
           padding: str | ShapeLike = 0, dilation: ShapeLike = 1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv3d(torch.ones(1, 1, 2, 2, 2), torch.ones(1, 1, 2, 2, 2))
        tensor([[[[[8.]]]]])
    """
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups, "conv3d")


def _conv_transposend(nsp, input, weight, bias, stride, padding, output_padding,
                      groups, dilation, name, output_size=None):
    input, unbatched = _add_batch_dim(
        nsp, input, f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}")
    _check_float(input, name, RuntimeError)  # (PyTorch's CPU kernel takes integers)
    _same_dtype(name, input, weight, bias)
    stride = _ntuple(stride, nsp, "stride")
    dilation = _ntuple(dilation, nsp, "dilation")
    pad = _ntuple(padding, nsp, "padding")
    ksp = tuple(weight._data.shape[2:])
    if input._data.shape[1] != weight._data.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight._data.shape[0]} channels, but got "
            f"{input._data.shape[1]} channels instead")
    osp = tuple(input._data.shape[2:])
    base = tuple((osp[i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (ksp[i] - 1) + 1
                 for i in range(nsp))
    if output_size is not None:
        size = tuple(output_size)[-nsp:]
        opad = tuple(size[i] - base[i] for i in range(nsp))
        for i in range(nsp):
            if not 0 <= opad[i] < max(stride[i], dilation[i]):
                raise ValueError(
                    f"requested an output size of {list(size)}, but valid sizes range from "
                    f"{list(base)} to "
                    f"{[base[j] + max(stride[j], dilation[j]) - 1 for j in range(nsp)]} "
                    f"(for an input of {list(osp)})")
    else:
        opad = _ntuple(output_padding, nsp, "output_padding")
        for i in range(nsp):
            if opad[i] >= stride[i] and opad[i] >= dilation[i]:
                raise RuntimeError("output padding must be smaller than either stride or "
                                   f"dilation, but got output_padding={opad} stride={stride} "
                                   f"dilation={dilation}")
    xsp = tuple(base[i] + opad[i] for i in range(nsp))
    pads = tuple((p, p) for p in pad)
    out = apply(TN.conv_transpose, (input, weight, bias),
                (stride, pads, dilation, groups, xsp, ksp))
    return out.squeeze(0) if unbatched else out


@autocast_category(LOWER_PRECISION_FP)
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: ShapeLike = 1, padding: ShapeLike = 0, output_padding: ShapeLike = 0,
                     groups: int = 1, dilation: ShapeLike = 1) -> Tensor:
    """1-D transposed convolution (the gradient of ``conv1d`` with respect to its input).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups,
                             dilation, "conv_transpose1d")


@autocast_category(LOWER_PRECISION_FP)
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: ShapeLike = 1, padding: ShapeLike = 0, output_padding: ShapeLike = 0,
                     groups: int = 1, dilation: ShapeLike = 1) -> Tensor:
    """2-D transposed convolution; weight is (in_channels, out_channels/groups, kH, kW).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv_transpose2d(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 2, 2),
        ...                                      stride=2).shape
        torch.Size([1, 1, 2, 2])
    """
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups,
                             dilation, "conv_transpose2d")


@autocast_category(LOWER_PRECISION_FP)
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: ShapeLike = 1, padding: ShapeLike = 0, output_padding: ShapeLike = 0,
                     groups: int = 1, dilation: ShapeLike = 1) -> Tensor:
    """3-D transposed convolution.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv_transpose3d(torch.ones(1, 1, 1, 1, 1),
        ...                                      torch.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 2, 2, 2])
    """
    return _conv_transposend(3, input, weight, bias, stride, padding, output_padding, groups,
                             dilation, "conv_transpose3d")


# ---------------------------------------------------------------------------------
# pooling


def _pool_out(size, k, s, lo, d, ceil_mode):
    eff = d * (k - 1) + 1
    if ceil_mode:
        o = -(-(size + 2 * lo - eff) // s) + 1
        if (o - 1) * s >= size + lo:
            o -= 1
    else:
        o = (size + 2 * lo - eff) // s + 1
    return o


def _pool_window(nsp, kernel_size, stride, padding, dilation, name):
    """Kernel, stride (default: the kernel), padding and dilation (None when the pooling
    has none) as ``nsp``-tuples; padding may be at most half the kernel."""
    k = _ntuple(kernel_size, nsp, "kernel_size")
    s = _ntuple(stride if (stride is not None and stride != []) else kernel_size, nsp,
                "stride")
    p = _ntuple(padding, nsp, "padding")
    d = None if dilation is None else _ntuple(dilation, nsp, "dilation")
    check_window(name, k, s, p, d)  # (Note [Pooling errors])
    return k, s, p, d


def _max_poolnd(nsp, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices, name):
    if input._data.__class__ is not np.ndarray and hasattr(input._data, "_src"):
        from ..._functorch.batched import fold_batch  # a batched tensor inside vmap

        return fold_batch(lambda t: _max_poolnd(nsp, t, kernel_size, stride, padding, dilation,
                                                ceil_mode, return_indices, name),
                          input, input.dim() == nsp + 2)
    given = input
    if input._data.ndim not in (nsp + 1, nsp + 2):
        raise rank_error(name, nsp, input._data.shape)
    input, unbatched = _add_batch_dim(
        nsp, input, f"{name}: Expected {nsp + 1}D or {nsp + 2}D input")
    k, s, p, d = _pool_window(nsp, kernel_size, stride, padding, dilation, name)
    xsp = tuple(input._data.shape[2:])
    osp = tuple(_pool_out(xsp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nsp))
    if any(o <= 0 for o in osp):
        raise too_small(name, input._data.shape, k, osp)
    idx = TN.max_pool_indices(input._data, k, s, tuple((q, q) for q in p), d, osp)
    unique = all(s[i] >= d[i] * (k[i] - 1) + 1 for i in range(nsp))  # windows don't overlap
    if unbatched:  # one node on the unbatched input, as PyTorch's
        input, idx = given, idx[0]
    idx_t = _make(idx)
    record = TSP.max_pool3d if nsp == 3 else TN.take_flat  # PyTorch's node names
    out = apply(record, (input, idx_t), (nsp, unique))
    return (out, idx_t) if return_indices else out


def max_pool1d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-D max pooling (with ``return_indices=True`` also the flat argmax indices).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
        tensor([[[3., 2.]]])
    """
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool1d")


def max_pool2d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-D max pooling over (N, C, H, W) or (C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool2d")


@autocast_category(FP32)
def max_pool3d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-D max pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool3d(torch.ones(1, 1, 2, 2, 2), 2).shape
        torch.Size([1, 1, 1, 1, 1])
    """
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool3d")


def max_pool1d_with_indices(input: Tensor, kernel_size: ShapeLike,
                            stride: ShapeLike | None = None, padding: ShapeLike = 0,
                            dilation: ShapeLike = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """``max_pool1d(..., return_indices=True)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: ShapeLike,
                            stride: ShapeLike | None = None, padding: ShapeLike = 0,
                            dilation: ShapeLike = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """``max_pool2d(..., return_indices=True)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: ShapeLike,
                            stride: ShapeLike | None = None, padding: ShapeLike = 0,
                            dilation: ShapeLike = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """``max_pool3d(..., return_indices=True)``: (values, flat indices per D·H·W volume).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool3d_with_indices(torch.ones(1, 2, 2, 2), 2)[1].shape
        torch.Size([1, 1, 1, 1])
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_poolnd(nsp, input, kernel_size, stride, padding, ceil_mode,
                count_include_pad, divisor_override, name):
    if input._data.ndim not in (nsp + 1, nsp + 2):
        raise rank_error(name, nsp, input._data.shape)
    input, unbatched = _add_batch_dim(
        nsp, input, f"{name}: Expected {nsp + 1}D or {nsp + 2}D input")
    _check_float(input, name, RuntimeError)  # (PyTorch's CPU kernel takes integers)
    k, s, p, _ = _pool_window(nsp, kernel_size, stride, padding, None, name)
    xsp = tuple(input._data.shape[2:])
    osp = tuple(_pool_out(xsp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(nsp))
    if any(o <= 0 for o in osp):
        raise too_small(name, input._data.shape, k, osp)
    # divisor per output position (separable per dim), as PyTorch computes it
    div = np.ones(osp, dtype=np.float64)
    pads = []
    for i in range(nsp):
        o = np.arange(osp[i])
        start = o * s[i] - p[i]
        end = np.minimum(start + k[i], xsp[i] + p[i])
        if divisor_override:
            cnt = None
        elif count_include_pad:
            cnt = end - start
        else:
            cnt = np.minimum(end, xsp[i]) - np.maximum(start, 0)
        if cnt is not None:
            shape = [1] * nsp
            shape[i] = osp[i]
            div = div * cnt.reshape(shape)
        need = (osp[i] - 1) * s[i] + k[i]
        pads.append((p[i], max(p[i], need - xsp[i] - p[i])))
    if divisor_override:
        div = np.full(osp, float(divisor_override))
    div = div.astype(input._data.dtype if input._data.dtype != D.bfloat16.np else np.float32)
    out = apply(TN.avg_pool, (input,), (k, s, tuple(pads), div, xsp))
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.avg_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
        tensor([[[2., 1.]]])
    """
    return _avg_poolnd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       None, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.avg_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, "avg_pool2d")


@autocast_category(FP32)
def avg_pool3d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike | None = None,
               padding: ShapeLike = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.avg_pool3d(torch.ones(1, 1, 2, 2, 2), 2).item()
        1.0
    """
    return _avg_poolnd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, "avg_pool3d")


def _adaptive_matrix(n_in: int, n_out: int, dtype) -> Tensor:
    """(n_out, n_in) averaging matrix with PyTorch's adaptive windows."""
    a = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -((-(i + 1) * n_in) // n_out)
        a[i, start:end] = 1.0 / (end - start)
    return _make(a.astype(dtype))


def _adaptive_avg(input, output_size, nsp, name):
    osz = _adaptive_output_size(input, output_size, nsp, name, "avg")
    _check_float(input, name)
    if nsp == 1:  # as ATen: the 2-D pooling of the input with a height of 1
        return _adaptive_avg(input.unsqueeze(-2), (1,) + osz, 2, name).squeeze(-2)
    if all(o == 1 for o in osz):
        # PyTorch's adaptive_avg_pool2d/3d to 1 (x 1 x 1) is a mean over the spatial dims
        # (MeanBackward1), as ATen computes it
        return input.mean(tuple(range(-1, -nsp - 1, -1)), keepdim=True)
    # one AdaptiveAvgPool{2,3}DBackward0 node (Note [Resize records] in ops/records/resize.py)
    xsp = input._data.shape[-nsp:]
    dt = input._data.dtype
    axes = tuple(("mat", _adaptive_matrix(xsp[i], osz[i], dt)._data) for i in range(nsp))
    meta = (osz, None, (None,) * nsp, tuple(xsp))
    return apply(TRS.ADAPTIVE_AVG[nsp], (input,), (axes, meta))


def adaptive_avg_pool1d(input: Tensor, output_size: ShapeLike) -> Tensor:
    """Average pooling to a fixed output length (PyTorch's adaptive windows).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_avg_pool1d(torch.tensor([[[1., 2., 3.]]]), 2)
        tensor([[[1.5000, 2.5000]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    size = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    # PyTorch pools 1-D as 2-D (a height of 1) and reports the rest under that name
    _adaptive_output_size(input.unsqueeze(-2), (1, size), 2, "adaptive_avg_pool2d", "avg")
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling to a fixed output size (an int, or a pair with None for "keep").

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_avg_pool2d(torch.ones(1, 2, 5, 7), 1).shape
        torch.Size([1, 2, 1, 1])
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")




@autocast_category(FP32)
def adaptive_avg_pool3d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """3-D adaptive average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_avg_pool3d(torch.ones(1, 2, 4, 4, 4), 1).shape
        torch.Size([1, 2, 1, 1, 1])
    """
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")
