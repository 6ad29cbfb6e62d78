"""``retrograd.nn.functional``: layers, activations and losses as functions.

Everything is written with retrograd Tensor ops (the nn primitives are in
``ops/table_nn.py``), so every function supports ``create_graph`` and double backward.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.relu(torch.tensor([-1., 2.]))
    tensor([0., 2.])
    >>> F.cross_entropy(torch.tensor([[1000., 0.]]), torch.tensor([1]))
    tensor(1000.)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import retrograd as R

from .. import _dtype as D
from .._grad_mode import no_grad
from .._tensor import Tensor, _make
from ..amp.state import AMP as _AMP
from ..autograd.node import _LEGACY
from ..ops import table as _T
from ..ops import table_nn as TN
from ..ops._core import FLOAT_NP
from ..ops.dispatch import apply, view_apply
from ..ops.out_arg import write_out
from ..ops.shape import _check_expand
from ..ops.softmax import log_softmax, softmax, softmin

_max_reduce = np.maximum.reduce
_TARGET_DTYPES = frozenset((np.dtype(np.int64), np.dtype(np.uint8)))
_UNSIGNED = {np.dtype(f"{k}{n}"): np.dtype(f"u{n}") for k in "iu" for n in (1, 2, 4, 8)}

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "batch_norm", "instance_norm", "layer_norm", "group_norm",
    "dropout", "embedding", "relu", "relu_", "relu6", "leaky_relu", "elu", "selu", "celu",
    "gelu", "silu", "mish", "softplus", "softsign", "tanh", "sigmoid", "hardtanh",
    "hardsigmoid", "hardswish", "logsigmoid", "tanhshrink", "threshold", "glu", "softmax",
    "softmin", "log_softmax", "mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss",
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "cosine_embedding_loss", "cosine_similarity", "pad", "one_hot", "normalize",
    "scaled_dot_product_attention", "interpolate", "multi_head_attention_forward",
]


# ---------------------------------------------------------------------------------
# helpers

def _ntuple(x, n: int, name: str = "argument") -> tuple:
    if isinstance(x, (list, tuple)):
        if len(x) == 1:
            return tuple(x) * n
        if len(x) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(x)}: {tuple(x)}")
        return tuple(int(v) for v in x)
    return (int(x),) * n


def _check_float(x: Tensor, fn: str) -> None:
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(f'"{fn}" not implemented for \'{_legacy(x.dtype)}\': convert the '
                           "input to a floating dtype first (x.float())")


def _legacy(dt) -> str:
    return _LEGACY[dt.name]


def _same_dtype(fn: str, x: Tensor, *others) -> None:
    if _AMP.on:  # under autocast the dispatcher casts input and weights to one dtype first
        return
    for o in others:
        if o is not None and o._data.dtype != x._data.dtype:
            raise RuntimeError(
                f"{fn}: expected the input and the weights to have the same dtype, but got "
                f"input of type {x.dtype} and weight of type {o.dtype}. Convert one of them "
                f"(model.to({x.dtype}) or input.to({o.dtype})).")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{_legacy_get_string(size_average, reduce)}' instead.", stacklevel=3)
    return _legacy_get_string(size_average, reduce)


def _legacy_get_string(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


def _const(arr, like: Tensor) -> Tensor:
    return _make(np.asarray(arr, dtype=like._data.dtype))


# ---------------------------------------------------------------------------------
# linear layers


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``, recorded as PyTorch records it (Note [linear's graph]).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.linear(torch.ones(1, 2), torch.ones(3, 2), torch.zeros(3))
        tensor([[2., 2., 2.]])
    """
    xd = input._data
    wd = weight._data
    nd = xd.ndim
    if nd == 0 or wd.ndim not in (1, 2):
        raise RuntimeError(
            f"linear: input must have at least 1 dim and weight 1 or 2 dims, got input "
            f"{tuple(input.shape)} and weight {tuple(weight.shape)}")
    if xd.shape[-1] != wd.shape[-1]:
        lead = math.prod(xd.shape[:-1]) if nd > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({lead}x{xd.shape[-1]} and "
            f"{wd.shape[-1]}x{wd.shape[0] if wd.ndim == 2 else 1}): the layer expects "
            f"{wd.shape[-1]} input features but the input's last dim is {xd.shape[-1]}; "
            "reshape the input (x.flatten(1)) or change in_features")
    if xd.dtype != wd.dtype or (bias is not None and bias._data.dtype != wd.dtype):
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_legacy(input.dtype)} and "
            f"{_legacy(weight.dtype)}: convert the input (x.to({weight.dtype})) or the "
            f"module (model.to({input.dtype}))")
    wt = view_apply(_T.t_op, weight, None)  # weight.t(): a view, its node TBackward0
    if bias is not None:
        bd = bias._data
        if nd == 2:
            if bd.shape == wd.shape[:1] and wd.ndim == 2 and xd.strides[0] != xd.itemsize:
                # the common case: the layouts are known (Note [addmm gradient layouts])
                ws, item = wd.strides, wd.itemsize
                return apply(_T.addmm, (bias, input, wt), _LINEAR_P[
                    ws[1] == item and ws[0] == item * wd.shape[1]])
            return _addmm_linear(bias, input, wt)
        if bd.ndim == 1 and xd.flags.c_contiguous:  # flattened to 2-D
            lead = xd.shape[:-1]
            x2 = view_apply(_T.view, input, (math.prod(lead), xd.shape[-1]))
            out = _addmm_linear(bias, x2, wt)
            return view_apply(_T.view, out, lead + out._data.shape[1:])
    out = R.matmul(input, wt)
    return out if bias is None else out.add_(bias)


# Note [linear's graph]
# F.linear records what PyTorch's at::linear records: the weight's transpose (W.t(), a
# view: TBackward0), then addmm(b, x, W.t()) for a 2-D input with a bias, the same on the
# input flattened to 2-D (views before and after) when it is contiguous and the bias 1-D
# (torch 2.13), and otherwise matmul(x, W.t()) with the bias added in place. addmm gives
# W.t() its gradient column-major (Note [addmm gradient layouts]), so TBackward0's
# transpose hands the weight a contiguous gradient, which becomes its .grad uncopied.
_LINEAR_P = ((1, 1, 0), (1, 1, 2))  # addmm's p: W.t() row- or column-major (x row-major)


def _addmm_linear(bias: Tensor, x: Tensor, wt: Tensor) -> Tensor:
    w = wt._data
    if w.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {w.ndim}-D tensor (a 1-D weight "
                           "takes no bias here: add the bias to the result)")
    bd = bias._data
    if bd.shape != w.shape[1:]:  # PyTorch's error where the bias does not fit the result
        _check_expand(bias, bd.shape, (x._data.shape[0], w.shape[1]))
    return apply(_T.addmm, (bias, x, wt), (1, 1, _T.addmm_layout(x._data, w)))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y = x1ᵀ A x2 + b`` for each output feature.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.bilinear(torch.ones(1, 2), torch.ones(1, 3),
        ...                              torch.ones(4, 2, 3)).shape
        torch.Size([1, 4])
    """
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = R.einsum("ni,oij,nj->no", x1, weight, x2)
    if bias is not None:
        out = out + bias
    return out.reshape(tuple(lead) + (weight.shape[0],))


# ---------------------------------------------------------------------------------
# convolution (Note [Convolution as one matrix product] in ops/table_nn.py)


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


def _add_batch_dim(nsp, input, expected):  # noqa: A002
    """``(input with a leading batch dim, whether it had none)``; raises ``"{expected}, but got
    input of size: [...]"`` unless ``input`` has ``nsp + 1`` or ``nsp + 2`` dims."""
    unbatched = input._data.ndim == nsp + 1
    if unbatched:
        input = input.unsqueeze(0)  # noqa: A001
    if input._data.ndim != nsp + 2:
        raise RuntimeError(f"{expected}, but got input of size: {list(input.shape)}")
    return input, unbatched


def _convnd(nsp, input, weight, bias, stride, padding, dilation, groups, name):  # noqa: A002
    input, unbatched = _add_batch_dim(  # noqa: A001
        nsp, input, f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}")
    if weight._data.ndim != nsp + 2:
        raise RuntimeError(f"{name}: expected a weight of {nsp + 2} dims (out_channels, "
                           f"in_channels/groups, kernel...), got {list(weight.shape)}")
    _check_float(input, name)
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


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution over (N, C, L) or (C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2))
        tensor([[[2., 2., 2.]]])
    """
    return _convnd(1, input, weight, bias, stride, padding, dilation, groups, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution over (N, C, H, W) or (C, H, W) input; ``padding`` may be an int,
    a pair, ``'same'`` or ``'valid'``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 3, 3),
        ...                            padding=1)[0, 0, 0]
        tensor([4., 6., 4.])
    """
    return _convnd(2, input, weight, bias, stride, padding, dilation, groups, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,  # noqa: A002
           padding=0, dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv3d(torch.ones(1, 1, 2, 2, 2), torch.ones(1, 1, 2, 2, 2))
        tensor([[[[[8.]]]]])
    """
    return _convnd(3, input, weight, bias, stride, padding, dilation, groups, "conv3d")


def _conv_transposend(nsp, input, weight, bias, stride, padding, output_padding,  # noqa: A002
                      groups, dilation, name, output_size=None):
    input, unbatched = _add_batch_dim(  # noqa: A001
        nsp, input, f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {name}")
    _check_float(input, name)
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


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
    """1-D transposed convolution (the gradient of ``conv1d`` with respect to its input).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    return _conv_transposend(1, input, weight, bias, stride, padding, output_padding, groups,
                             dilation, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
    """2-D transposed convolution; weight is (in_channels, out_channels/groups, kH, kW).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.conv_transpose2d(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 2, 2),
        ...                                      stride=2).shape
        torch.Size([1, 1, 2, 2])
    """
    return _conv_transposend(2, input, weight, bias, stride, padding, output_padding, groups,
                             dilation, "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1) -> Tensor:
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
    for i in range(nsp):
        if p[i] > k[i] // 2:
            also = "" if d is None else f" and dilation={d[i]}"
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, "
                               f"but got pad={p[i]}, kernel_size={k[i]}{also}")
    return k, s, p, d


def _max_poolnd(nsp, input, kernel_size, stride, padding, dilation, ceil_mode,  # noqa: A002
                return_indices, name):
    input, unbatched = _add_batch_dim(  # noqa: A001
        nsp, input, f"{name}: Expected {nsp + 1}D or {nsp + 2}D input")
    k, s, p, d = _pool_window(nsp, kernel_size, stride, padding, dilation, name)
    xsp = tuple(input._data.shape[2:])
    osp = tuple(_pool_out(xsp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nsp))
    if any(o <= 0 for o in osp):
        given = "x".join(map(str, input.shape[1:]))
        calc = "x".join(map(str, (input.shape[1],) + osp))
        raise RuntimeError(f"{name}: Given input size: ({given}). Calculated output size: "
                           f"({calc}). Output size is too small")
    idx = TN.max_pool_indices(input._data, k, s, tuple((q, q) for q in p), d, osp)
    idx_t = _make(idx)
    unique = all(s[i] >= d[i] * (k[i] - 1) + 1 for i in range(nsp))  # windows don't overlap
    out = apply(TN.take_flat, (input, idx_t), (nsp, unique))
    if unbatched:
        out, idx_t = out.squeeze(0), idx_t.squeeze(0)
    return (out, idx_t) if return_indices else out


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """1-D max pooling (with ``return_indices=True`` also the flat argmax indices).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
        tensor([[[3., 2.]]])
    """
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool1d")


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """2-D max pooling over (N, C, H, W) or (C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool2d")


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """3-D max pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.max_pool3d(torch.ones(1, 1, 2, 2, 2), 2).shape
        torch.Size([1, 1, 1, 1, 1])
    """
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, "max_pool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=True):
    """``max_pool1d(..., return_indices=True)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=True):
    """``max_pool2d(..., return_indices=True)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_poolnd(nsp, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
                count_include_pad, divisor_override, name):
    input, unbatched = _add_batch_dim(  # noqa: A001
        nsp, input, f"{name}: Expected {nsp + 1}D or {nsp + 2}D input")
    _check_float(input, name)
    k, s, p, _ = _pool_window(nsp, kernel_size, stride, padding, None, name)
    xsp = tuple(input._data.shape[2:])
    osp = tuple(_pool_out(xsp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(nsp))
    if any(o <= 0 for o in osp):
        raise RuntimeError(f"{name}: Output size is too small (input {list(input.shape)}, "
                           f"kernel {k}, stride {s}, padding {p})")
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


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.avg_pool1d(torch.tensor([[[1., 3., 2., 0.]]]), 2)
        tensor([[[2., 1.]]])
    """
    return _avg_poolnd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       None, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
    """2-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.avg_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, "avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None) -> Tensor:
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


def _adaptive_avg(input, output_size, nsp, name):  # noqa: A002
    if input._data.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{name}: Expected {nsp + 1}D or {nsp + 2}D tensor, but got "
                           f"{list(input.shape)}")
    _check_float(input, name)
    osz = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * nsp
    xsp = input._data.shape[-nsp:]
    osz = tuple(xsp[i] if osz[i] is None else int(osz[i]) for i in range(nsp))
    out = input
    for i in range(nsp):
        dim = input._data.ndim - nsp + i
        if osz[i] == xsp[i]:
            continue
        a = _adaptive_matrix(xsp[i], osz[i], input._data.dtype)
        out = out.movedim(dim, -1).matmul(a.t()).movedim(-1, dim)
    return out if out is not input else input.clone()


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed output length (PyTorch's adaptive windows).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_avg_pool1d(torch.tensor([[[1., 2., 3.]]]), 2)
        tensor([[[1.5000, 2.5000]]])
    """
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:  # noqa: A002
    """Average pooling to a fixed output size (an int, or a pair with None for "keep").

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.adaptive_avg_pool2d(torch.ones(1, 2, 5, 7), 1).shape
        torch.Size([1, 2, 1, 1])
    """
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


# ---------------------------------------------------------------------------------
# normalization


def _update_running_stats(running_mean, running_var, mean, var, momentum, n) -> None:
    """Blend the per-channel batch ``mean``/``var`` (biased, over ``n`` values) into the
    running statistics that are given, with the unbiased variance, as PyTorch."""
    if running_mean is None and running_var is None:
        return
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))


def _scale_shift(out, weight, bias, shape):
    """``out * weight + bias`` with the per-channel affine parameters viewed as ``shape``
    (either may be None)."""
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization over dim 1; in training the batch statistics are used and the
    running statistics (if given) updated in place (unbiased variance).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[1.], [3.]])
        >>> torch.nn.functional.batch_norm(x, None, None, training=True)
        tensor([[-1.0000],
                [ 1.0000]])
    """
    if input._data.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2D input (got {input._data.ndim}D)")
    c = input._data.shape[1]
    dims = (0,) + tuple(range(2, input._data.ndim))
    shape = (1, c) + (1,) * (input._data.ndim - 2)
    if training:
        n = input._data.size // c
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
        mean = input.mean(dims)
        d = input - mean.reshape(shape)
        var = (d * d).mean(dims)
        _update_running_stats(running_mean, running_var, mean, var, momentum, n)
        out = d * (var.reshape(shape) + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm in evaluation mode needs running_mean and "
                               "running_var (or pass training=True to use batch statistics)")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _scale_shift(out, weight, bias, shape)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) over its spatial dims.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.instance_norm(torch.tensor([[[1., 3.]]]))
        tensor([[[-1.0000,  1.0000]]])
    """
    if input._data.ndim < 3:
        raise ValueError(f"instance_norm: expected at least 3D input (got {input._data.ndim}D)")
    b, c = input._data.shape[:2]
    dims = tuple(range(2, input._data.ndim))
    shape = (1, c) + (1,) * (input._data.ndim - 2)
    if use_input_stats:
        n = math.prod(input._data.shape[2:])
        if n <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
        mean = input.mean(dims, keepdim=True)
        d = input - mean
        var = (d * d).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            _update_running_stats(running_mean, running_var, mean.detach().reshape(b, c).mean(0),
                                  var.detach().reshape(b, c).mean(0), momentum, n)
        out = d * (var + eps).rsqrt()
    else:
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _scale_shift(out, weight, bias, shape)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.layer_norm(torch.tensor([[1., 3.]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if tuple(input._data.shape[input._data.ndim - k:]) != ns or input._data.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape [*, "
            f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    dims = tuple(range(input._data.ndim - k, input._data.ndim))
    mean = input.mean(dims, keepdim=True)
    d = input - mean
    var = (d * d).mean(dims, keepdim=True)
    out = d * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize groups of channels per sample.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.group_norm(torch.tensor([[[1.], [3.]]]), 1)
        tensor([[[-1.0000],
                 [ 1.0000]]])
    """
    if input._data.ndim < 2:
        raise RuntimeError(f"group_norm: expected at least 2D input, got {list(input.shape)}")
    b, c = input._data.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(input.shape)} and num_groups="
                           f"{num_groups}")
    x = input.reshape(b, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    d = x - mean
    var = (d * d).mean(-1, keepdim=True)
    out = (d * (var + eps).rsqrt()).reshape(input.shape)
    shape = (1, c) + (1,) * (input._data.ndim - 2)
    return _scale_shift(out, weight, bias, shape)


# ---------------------------------------------------------------------------------
# dropout and embedding


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` (training).

    The mask comes from retrograd's global generator (``torch.manual_seed``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.dropout(torch.ones(3), 0.5, training=False)
        tensor([1., 1., 1.])
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from .._random import gen

    keep = gen(None).random(input._data.shape) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    mask = keep.astype(input._data.dtype) * np.asarray(scale, dtype=input._data.dtype)
    out = apply(TN.dropout, (input,), mask)
    if inplace:
        return input.copy_(out)
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input``; the ``padding_idx`` row gets no
    gradient.

    Example:
        >>> import retrograd as torch
        >>> w = torch.arange(6.).reshape(3, 2)
        >>> torch.nn.functional.embedding(torch.tensor([2, 0]), w)
        tensor([[4., 5.],
                [0., 1.]])
    """
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_legacy(input.dtype)}Tensor instead (while "
            "checking arguments for embedding)")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not "
                                  "supported in retrograd; use the defaults")
    num = weight._data.shape[0]
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += num
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self: embedding indices must be in [0, "
                         f"{num}) but got values from {int(idx.min())} to {int(idx.max())}")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            w = weight._data[rows]
            norms = np.linalg.norm(w.astype(np.float64), ord=norm_type, axis=1)
            scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
            weight._data[rows] = (w * scale[:, None]).astype(weight._data.dtype)
            weight._vc[0] += 1
    return apply(TN.embedding, (weight, _make(idx.astype(np.int64, copy=False))), padding_idx)


# ---------------------------------------------------------------------------------
# activations

def _inplace_result(input: Tensor, out: Tensor, inplace: bool) -> Tensor:  # noqa: A002
    return input.copy_(out) if inplace else out


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.relu(torch.tensor([-1., 0., 2.]))
        tensor([0., 0., 2.])
    """
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place ``relu``."""
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """Clamp to [min_val, max_val]; the gradient is zero at and beyond the limits.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardtanh(torch.tensor([-2., 0.5, 3.]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _mask_activation(input, TN.hardtanh, TN.hardtanh_result, (min_val, max_val),
                            inplace)


def _mask_activation(input, op, op_result, p, inplace: bool) -> Tensor:  # noqa: A002
    """leaky_relu / hardtanh: the in-place form's node saves the output, as PyTorch's."""
    if inplace:  # the input is overwritten: the rule reads the output (LeakyReluBackward1)
        return _write_result(input, apply(op_result, (input,), p))
    return apply(op, (input,), p)


def _write_result(input: Tensor, out: Tensor) -> Tensor:  # noqa: A002
    """The in-place form of a one-node activation whose node saved its output: ``input``
    takes ``out``'s values and its node (EluBackward1, LeakyReluBackward1, ...), as
    PyTorch's elu_ / leaky_relu_ / hardtanh_, through the in-place machinery."""
    from ..ops.inplace import _inplace

    return _inplace(input, out)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.relu6(torch.tensor([-1., 7.]))
        tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.leaky_relu(torch.tensor([-2., 2.]), 0.5)
        tensor([-1.,  2.])
    """
    return _mask_activation(input, TN.leaky_relu, TN.leaky_relu_result, (negative_slope,),
                            inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.elu(torch.tensor([-1., 1.]))
        tensor([-0.6321,  1.0000])
    """
    return _elu(input, (alpha, 1.0, 1.0), inplace, "elu")


def _elu(input: Tensor, p: tuple, inplace: bool, name: str) -> Tensor:  # noqa: A002
    """ELU, SELU, CELU: PyTorch's elu(x, alpha, scale, input_scale), one table entry with
    its own double backward (TN.elu: the second derivative at 0 is 0, as in PyTorch)."""
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{_legacy(input.dtype)}': convert the input to a floating "
                                  "dtype first (x.float())")
    if inplace:  # the input is overwritten: the rule reads the output (PyTorch's elu_)
        return _write_result(input, apply(TN.elu_result, (input,), p))
    return apply(TN.elu, (input,), p)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """Scaled ELU with the self-normalizing constants.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.selu(torch.tensor([1.]))
        tensor([1.0507])
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return _elu(input, (alpha, scale, 1.0), inplace, "elu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.celu(torch.tensor([-1., 1.]))
        tensor([-0.6321,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU (celu computes "
                           "exp(x / alpha); use a non-zero alpha, or relu for the alpha -> 0 "
                           "limit)")
    return _elu(input, (alpha, 1.0, 1.0 / alpha), inplace, "elu")


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Φ(x) (``approximate='tanh'``: the tanh approximation).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.gelu(torch.tensor([1.]))
        tensor([0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"'{approximate}'")
    _check_float(input, "GeluKernelImpl")
    return apply(TN.gelu, (input,), approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.silu(torch.tensor([1.]))
        tensor([0.7311])
    """
    return _inplace_result(input, input * input.sigmoid(), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta * x)) / beta, linear above ``threshold`` (no overflow).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softplus(torch.tensor([0., 100.]))
        tensor([  0.6931, 100.0000])
    """
    _check_float(input, "softplus")
    return apply(TN.softplus, (input,), (beta, threshold))


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.mish(torch.tensor([1.]))
        tensor([0.8651])
    """
    return _inplace_result(input, input * softplus(input).tanh(), inplace)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.logsigmoid(torch.tensor([-1000., 0.]))
        tensor([-1.0000e+03, -6.9315e-01])
    """
    _check_float(input, "log_sigmoid")
    return -apply(TN.softplus, (-input,), (1.0, math.inf))


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softsign(torch.tensor([1.]))
        tensor([0.5000])
    """
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.tanhshrink(torch.tensor([0.]))
        tensor([0.])
    """
    return input - input.tanh()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6 (gradient zero outside (-3, 3)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardsigmoid(torch.tensor([0., 4.]))
        tensor([0.5000, 1.0000])
    """
    return _inplace_result(input, hardtanh(input / 6 + 0.5, 0.0, 1.0), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * relu6(x + 3) / 6.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardswish(torch.tensor([1.]))
        tensor([0.6667])
    """
    x = input._data
    m = np.where(x <= -3, 0.0, np.where(x >= 3, 1.0, 0.0)).astype(x.dtype)
    inside = _make((x > -3) & (x < 3))
    out = R.where(inside, input * (input + 3) / 6, input * _make(m))
    return _inplace_result(input, out, inplace)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.threshold(torch.tensor([0.5, 2.]), 1., -1.)
        tensor([-1.,  2.])
    """
    return _inplace_result(input, R.where(input > threshold, input, float(value)), inplace)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.glu(torch.tensor([2., 0.]))
        tensor([1.])
    """
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.tanh(torch.tensor([0.]))
        tensor([0.])
    """
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """Logistic sigmoid.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.sigmoid(torch.tensor([0.]))
        tensor([0.5000])
    """
    return input.sigmoid()


# ---------------------------------------------------------------------------------
# losses


def _check_same_size(input, target, stacklevel=3):  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=stacklevel)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.mse_loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
        tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target)
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.l1_loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """0.5 d² for |d| < delta, delta (|d| - delta / 2) beyond.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.huber_loss(torch.tensor([0., 3.]), torch.zeros(2))
        tensor(1.2500)
    """
    _check_same_size(input, target)
    d = input - target
    ad = d.abs()
    loss = R.where(ad < delta, 0.5 * d * d, (ad - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d² / beta for |d| < beta, |d| - beta / 2 beyond (L1 when beta = 0).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0., 3.]), torch.zeros(2))
        tensor(1.2500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target)
    d = input - target
    ad = d.abs()
    if beta == 0:
        return _reduce(ad, reduction)
    loss = R.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    return _reduce(loss, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the target classes (input holds log-probabilities).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.nll_loss(torch.tensor([[-1., -2.]]), torch.tensor([1]))
        tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input._data.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input._data.ndim})")
    cdim = 1 if input._data.ndim >= 2 else 0
    if input._data.ndim >= 2 and target._data.ndim >= 1 and \
            input._data.shape[0] != target._data.shape[0]:
        raise ValueError(f"Expected input batch_size ({input._data.shape[0]}) to match target "
                         f"batch_size ({target._data.shape[0]}).")
    expected = input._data.shape[:cdim] + input._data.shape[cdim + 1:]
    if tuple(target._data.shape) != tuple(expected):
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if target._data.dtype not in _TARGET_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_legacy(target.dtype)}: class indices are int64 (target.long())")
    nc = input._data.shape[cdim]
    t = target._data
    if t.size and (ignore_index < 0 or ignore_index >= nc) and \
            _max_reduce(t.view(_UNSIGNED[t.dtype]), axis=None) < nc:
        valid = None  # the common case: every target in [0, nc), checked with one reduction
        # over the targets viewed as unsigned (negative ones become huge)
        safe = t.astype(np.int64, copy=False)
    else:
        valid = t != ignore_index
        bad = valid & ((t < 0) | (t >= nc))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
        safe = np.where(valid, t, 0).astype(np.int64)
    if input._data.ndim == 2 and reduction in ("none", "sum", "mean") and (
            weight is None or not weight._rg):  # Note [Fused NLL] in ops/table_nn.py
        if weight is None:
            w = None if valid is None else _make(valid.astype(input._data.dtype))
        else:
            w = weight._data[safe]
            w = _make(w if valid is None else w * valid.astype(weight._data.dtype))
        return apply(TN.nll, (input, w), (safe, reduction))
    if valid is None:
        valid = np.ones(t.shape, bool)
    picked = input.gather(cdim, _make(np.expand_dims(safe, cdim))).squeeze(cdim)
    if weight is not None:
        w = weight.index_select(0, _make(safe.reshape(-1))).reshape(safe.shape)
        w = w * _make(valid.astype(weight._data.dtype))
    else:
        w = _make(valid.astype(input._data.dtype))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax + nll_loss (class indices), or the cross entropy with class
    probabilities when ``target`` is floating and has the input's shape.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cross_entropy(torch.tensor([[0., 0.]]), torch.tensor([0]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 1 if input._data.ndim >= 2 else 0
    logp = log_softmax(input, cdim)
    nc = input._data.shape[cdim]
    wshape = [1] * input._data.ndim
    wshape[cdim] = nc
    if target._data.dtype in FLOAT_NP and target._data.shape == input._data.shape:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / nc
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        if reduction == "mean":
            return -prod.sum() / (input._data.size / nc)
        raise ValueError(f"{reduction} is not a valid value for reduction")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    ignore = target._data == ignore_index
    if weight is not None:
        smooth = -(logp * weight.reshape(wshape)).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth = smooth.masked_fill(_make(ignore), 0.0)
    if reduction == "mean":
        if weight is not None:
            tw = weight._data[target._data[~ignore]]
            ret = smooth.sum() / _const(tw.sum(), smooth)
        else:
            ret = smooth.sum() / float((~ignore).sum())
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / nc)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), logs clamped at -100 as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    x = input._data
    if x.size and ((x < 0).any() or (x > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1: binary_cross_"
                           "entropy takes probabilities; for logits use "
                           "binary_cross_entropy_with_logits (BCEWithLogitsLoss)")
    logx = input.log().clamp(min=-100)
    log1mx = (1 - input).log().clamp(min=-100)
    loss = -(target * logx + (1 - target) * log1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable expression (log-sigmoid form).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([1000.]),
        ...                                                      torch.tensor([0.]))
        tensor(1000.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        log_sig = log_sig * log_weight
    loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence with ``input`` as log-probabilities; ``reduction='batchmean'`` is the
    mathematical definition.

    Example:
        >>> import retrograd as torch
        >>> p = torch.tensor([[0.5, 0.5]])
        >>> torch.nn.functional.kl_div(p.log(), p, reduction='batchmean')
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        pos = target > 0
        safe = R.where(pos, target, 1.0)
        loss = R.where(pos, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input._data.ndim > 0 else 1)
    return _reduce(loss, reduction)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cosine_similarity(torch.tensor([[1., 0.]]),
        ...                                       torch.tensor([[1., 1.]]))
        tensor([0.7071])
    """
    w12 = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return w12 / (n1 * n2).clamp(min=eps * eps).sqrt()


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, size_average=None, reduce=None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cosine_embedding_loss(torch.tensor([[1., 0.]]),
        ...                                           torch.tensor([[1., 0.]]), torch.tensor([1]))
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    tdim = input1._data.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(tdim)
    m1 = (input1 * input1).sum(tdim) + eps
    m2 = (input2 * input2).sum(tdim) + eps
    cos = prod / (m1 * m2).sqrt()
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    zeros = R.zeros_like(cos)
    out = R.where(target == 1, pos, zeros) + R.where(target == -1, neg, zeros)
    return _reduce(out, reduction)


# ---------------------------------------------------------------------------------
# utilities


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``.
    Modes: constant (negative pads crop), reflect, replicate, circular.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.pad(torch.tensor([[1., 2.]]), (1, 1))
        tensor([[0., 1., 2., 0.]])
        >>> torch.nn.functional.pad(torch.tensor([[[1., 2., 3.]]]), (2, 0), mode='reflect')
        tensor([[[3., 2., 1., 2., 3.]]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    nd = input._data.ndim
    if k > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # last dim first
    if mode == "constant":
        v = 0.0 if value is None else value
        out = input
        if any(lo < 0 or hi < 0 for lo, hi in pairs):
            key = [slice(None)] * nd
            for i, (lo, hi) in enumerate(pairs):
                d = nd - 1 - i
                size = input._data.shape[d]
                key[d] = slice(max(-lo, 0), size - max(-hi, 0))
            out = out[tuple(key)]
            pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
        if all(lo == 0 and hi == 0 for lo, hi in pairs):
            return out if out is not input else input.clone()
        from ..ops import table as T

        widths = [(0, 0)] * nd
        for i, (lo, hi) in enumerate(pairs):
            widths[nd - 1 - i] = (lo, hi)
        return apply(T.constant_pad, (out,), (tuple(widths), v))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    out = input
    for i, (lo, hi) in enumerate(pairs):
        d = nd - 1 - i
        size = input._data.shape[d]
        pos = np.arange(-lo, size + hi)
        if mode == "reflect":
            if lo >= size or hi >= size:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(input.shape)}")
            period = 2 * (size - 1) if size > 1 else 1
            m = np.mod(pos, period)
            idx = np.where(m >= size, period - m, m)
        elif mode == "replicate":
            idx = np.clip(pos, 0, size - 1)
        else:
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            idx = np.mod(pos, size)
        out = out.index_select(d, _make(idx.astype(np.int64)))
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.one_hot(torch.tensor([0, 2]))
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    t = tensor._data
    if t.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and (t.min() < 0):
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (t[..., None] == np.arange(num_classes)).astype(np.int64)
    return _make(out)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out=None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.normalize(torch.tensor([[3., 4.]]))
        tensor([[0.6000, 0.8000]])
    """
    if out is not None:  # Note [out= arguments] (ops/out_arg.py)
        return write_out("normalize", out, normalize(input, p, dim, eps), (input,))
    denom = R.vector_norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(Q Kᵀ · scale + mask) V; a boolean mask marks the positions that may attend.

    Example:
        >>> import retrograd as torch
        >>> q = k = v = torch.ones(1, 2, 4)
        >>> torch.nn.functional.scaled_dot_product_attention(q, k, v).shape
        torch.Size([1, 2, 4])
    """
    L, S = query.shape[-2], key.shape[-2]
    e = query.shape[-1]
    sc = 1.0 / math.sqrt(e) if scale is None else scale
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    attn = query.matmul(key.transpose(-2, -1)) * sc
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        causal = np.tril(np.ones((L, S), dtype=bool))
        attn = attn.masked_fill(_make(~causal), float("-inf"))
    if attn_mask is not None:
        if attn_mask._data.dtype == np.bool_:
            attn = attn.masked_fill(_make(~attn_mask._data), float("-inf"))
        else:
            attn = attn + attn_mask
    attn = softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, training=True)
    return attn.matmul(value)


def _interp_matrix(n_in, n_out, align_corners, scale, dtype):
    a = np.zeros((n_out, n_in), dtype=np.float64)
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = dst * s
    else:
        s = (1.0 / scale) if (scale is not None and scale > 0) else n_in / n_out
        src = np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = src - i0
    l0 = 1.0 - l1
    rows = np.arange(n_out)
    np.add.at(a, (rows, i0), l0)
    np.add.at(a, (rows, i1), l1)
    return _make(a.astype(dtype))


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims: modes 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'area'.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    nsp = input._data.ndim - 2
    if nsp < 1:
        raise ValueError(f"interpolate: expected a 3D, 4D or 5D input (N, C, spatial...), got "
                         f"{list(input.shape)}")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode in ("linear", "bilinear") and align_corners is None:
        align_corners = False
    xsp = input._data.shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None else
                         "only one of size or scale_factor should be defined")
    if size is not None:
        osz = tuple(size) if isinstance(size, (list, tuple)) else (size,) * nsp
        scales = (None,) * nsp
    else:
        sf = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else \
            (scale_factor,) * nsp
        osz = tuple(int(math.floor(float(xsp[i]) * sf[i])) for i in range(nsp))
        scales = (None,) * nsp if recompute_scale_factor else tuple(float(s) for s in sf)
    if len(osz) != nsp:
        raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(xsp)} and output size "
                         f"of {list(osz)}.")
    if mode == "area":
        return _adaptive_avg(input, osz, nsp, "interpolate")
    out = input
    if mode in ("nearest", "nearest-exact"):
        for i in range(nsp):
            n_in, n_out = xsp[i], osz[i]
            if n_in == n_out:
                continue
            sc = np.float32(1.0 / scales[i]) if scales[i] is not None and scales[i] > 0 else \
                np.float32(n_in) / np.float32(n_out)
            dst = np.arange(n_out, dtype=np.float32)
            if mode == "nearest":
                src = np.floor(dst * sc)
            else:
                src = np.floor((dst + np.float32(0.5)) * sc)
            idx = np.minimum(src.astype(np.int64), n_in - 1)
            out = out.index_select(2 + i, _make(idx))
        return out if out is not input else input.clone()
    if mode in ("linear", "bilinear", "trilinear"):
        expected = {"linear": 1, "bilinear": 2, "trilinear": 3}[mode]
        if nsp != expected:
            raise NotImplementedError(f"Got {input._data.ndim}D input, but {mode} mode needs "
                                      f"{expected + 2}D input")
        _check_float(input, "upsample")
        for i in range(nsp):
            if xsp[i] == osz[i] and (scales[i] is None or scales[i] == 1.0):
                continue
            a = _interp_matrix(xsp[i], osz[i], align_corners, scales[i], input._data.dtype)
            out = out.movedim(2 + i, -1).matmul(a.t()).movedim(-1, 2 + i)
        return out if out is not input else input.clone()
    raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, "
                              "nearest-exact, linear, bilinear, trilinear, area are)")


# ---------------------------------------------------------------------------------
# multi-head attention (PyTorch's multi_head_attention_forward, sequence-first layout)


def _canonical_mask(mask, dtype):
    if mask is None:
        return None
    if mask._data.dtype == np.bool_:
        return _make(np.where(mask._data, -np.inf, 0.0).astype(dtype))
    if mask._data.dtype not in FLOAT_NP:
        raise AssertionError(f"only bool and floating types of masks are supported, got "
                             f"{mask.dtype}")
    return mask


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor,
                                 embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                                 bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None,
                                 static_k=None, static_v=None,
                                 average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention on (L, N, E) inputs (or unbatched (L, E)); returns
    ``(output, attention weights or None)``.

    Example:
        >>> import retrograd as torch
        >>> mha = torch.nn.MultiheadAttention(4, 2)
        >>> x = torch.ones(3, 1, 4)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (torch.Size([3, 1, 4]), torch.Size([1, 3, 3]))
    """
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None \
            or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: add_bias_kv, add_zero_attn and "
                                  "static_k/static_v are not supported in retrograd")
    batched = query._data.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    key_padding_mask = _canonical_mask(key_padding_mask, query._data.dtype)
    attn_mask = _canonical_mask(attn_mask, query._data.dtype)
    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    else:
        b_q = b_k = b_v = None
    q = linear(query, w_q, b_q)
    k = linear(key, w_k, b_k)
    v = linear(value, w_v, b_v)
    if attn_mask is not None:
        if attn_mask._data.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(src_len, bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(src_len, bsz * num_heads, head_dim).transpose(0, 1)
    if key_padding_mask is not None:
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    q_scaled = q * math.sqrt(1.0 / float(head_dim))
    scores = q_scaled.matmul(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    out = weights.matmul(v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if need_weights:
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights
    return out, None

