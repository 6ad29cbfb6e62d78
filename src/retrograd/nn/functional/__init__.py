"""``retrograd.nn.functional``: layers, activations and losses as functions.

Everything is written with retrograd Tensor ops (the nn primitives are in
``ops/records/nn.py``), so every function supports ``create_graph`` and double backward.

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

from ..._core import dtype as D
from ..._core.grad_mode import is_grad_enabled, no_grad
from ..._core.hints import Shape
from ..._functions.matmul import einsum, matmul
from ..._functions.pointwise import where
from ..._functions.reductions import vector_norm
from ..._functions.shape import _check_expand
from ..._functions.softmax import log_softmax, softmax, softmin
from ..._functions.statistics import _mul_c
from ..._tensor.tensor import Tensor, _make
from ...ops.dispatch import apply, view_apply
from ...ops.op import FLOAT_NP
from ...ops.out_arg import write_out
from ...ops.public import LOWER_PRECISION_FP, autocast_category
from ...ops.records import attention as TAT
from ...ops.records import nn as TN
from ...ops.records import normalization as TNO
from ...ops.records import table as T
from .ctc import ctc_loss
from .embedding_bag import embedding_bag, embedding_renorm_
from .fractional_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from .grid_sample import affine_grid, grid_sample
from .names import *
from .pad import pad
from .resize import interpolate, upsample, upsample_bilinear, upsample_nearest
from .spatial import *
from .spatial import __all__ as _spatial_all

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "batch_norm", "instance_norm", "layer_norm", "group_norm",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "relu", "relu_", "relu6", "leaky_relu", "elu", "selu", "celu",
    "gelu", "silu", "mish", "softplus", "softsign", "tanh", "sigmoid", "hardtanh",
    "hardsigmoid", "hardswish", "logsigmoid", "tanhshrink", "threshold", "glu", "softmax",
    "softmin", "log_softmax", "mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss",
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "cosine_embedding_loss", "cosine_similarity", "pad", "one_hot", "normalize",
    "scaled_dot_product_attention", "interpolate", "multi_head_attention_forward",
    "max_pool3d_with_indices", "adaptive_avg_pool3d", "upsample", "upsample_nearest",
    "upsample_bilinear", "elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_", "threshold_",
    *_spatial_all,
]


from ..._functions.inplace import _inplace
from ..._functions.sampling import _laid_out
from ..._random.distributions import bernoulli
from ...ops.batch_rules import random_under_vmap
from .common import (
    _check_float,
    _check_normalized_shape,
    _legacy,
    _legacy_get_string,
    _log_sigmoid,
)
from .conv import (
    _adaptive_avg,
    _conv_transposend,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    conv1d,
    conv2d,
    conv3d,
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
)
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cosine_similarity,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)

# ---------------------------------------------------------------------------------
# linear layers


@autocast_category(LOWER_PRECISION_FP)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
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
    wt = view_apply(T.t_op, weight, None)  # weight.t(): a view, its node TBackward0
    if bias is not None:
        bd = bias._data
        if nd == 2:
            if bd.shape == wd.shape[:1] and wd.ndim == 2 and xd.strides[0] != xd.itemsize:
                # the common case: the layouts are known (Note [addmm gradient layouts])
                ws, item = wd.strides, wd.itemsize
                return apply(T.addmm, (bias, input, wt), _LINEAR_P[
                    ws[1] == item and ws[0] == item * wd.shape[1]])
            return _addmm_linear(bias, input, wt)
        if bd.ndim == 1 and xd.flags.c_contiguous:  # flattened to 2-D
            lead = xd.shape[:-1]
            x2 = view_apply(T.view, input, (math.prod(lead), xd.shape[-1]))
            out = _addmm_linear(bias, x2, wt)
            return view_apply(T.view, out, lead + out._data.shape[1:])
    out = matmul(input, wt)
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
    return apply(T.addmm, (bias, x, wt), (1, 1, T.addmm_layout(x._data, w)))


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
    out = einsum("ni,oij,nj->no", x1, weight, x2)
    if bias is not None:
        out = out + bias
    return out.reshape(tuple(lead) + (weight.shape[0],))


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


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
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
    n = input._data.size // c if c else 0
    if training and n <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm in evaluation mode needs running_mean and "
                           "running_var (or pass training=True to use batch statistics)")
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    x = input._data
    if not isinstance(x, np.ndarray):  # batched tensors inside vmap: composite ops
        return _batch_norm_by_ops(input, running_mean, running_var, weight, bias, training,
                                  momentum, eps)
    # Note [Normalization records] (ops/records/normalization.py)
    if training:
        mean, var_sum = TNO.batch_norm_stats(x)
        invstd = TNO.batch_norm_invstd(var_sum, n, eps)
        TNO.update_running_stats(None if running_mean is None else running_mean._data,
                                 None if running_var is None else running_var._data,
                                 mean, var_sum, n, momentum)
        p = (_make(mean), _make(invstd), running_mean, running_var, True, eps)
    else:
        p = (_make(np.empty((0,), x.dtype)), _make(np.empty((0,), x.dtype)), running_mean,
             running_var, False, eps)
    return apply(TNO.native_batch_norm, (input, weight, bias), p)


def _batch_norm_by_ops(input, running_mean, running_var, weight, bias, training, momentum,
                       eps):
    """batch_norm in composite ops, for batched tensors inside vmap (Note [Batched
    tensors] in _functorch/batched.py)."""
    c = input._data.shape[1]
    dims = (0,) + tuple(range(2, input._data.ndim))
    shape = (1, c) + (1,) * (input._data.ndim - 2)
    if training:
        mean = input.mean(dims)
        d = input - mean.reshape(shape)
        var = (d * d).mean(dims)
        _update_running_stats(running_mean, running_var, mean, var, momentum,
                              input._data.size // c)
        out = d * (var.reshape(shape) + eps).rsqrt()
    else:
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _scale_shift(out, weight, bias, shape)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
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
    if use_input_stats and math.prod(input._data.shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input "
                         f"size {input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    # as ATen's instance_norm: batch_norm of the input viewed as (1, N * C, *spatial), the
    # per-channel tensors repeated N times, the running statistics averaged back
    b, c = input._data.shape[:2]
    rep = [None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var)]
    x = input.contiguous().view((1, b * c) + tuple(input._data.shape[2:]))
    out = batch_norm(x, rep[2], rep[3], rep[0], rep[1], use_input_stats, momentum, eps)
    with no_grad():
        for t, r in ((running_mean, rep[2]), (running_var, rep[3])):
            if t is not None:
                t.copy_(r.view(b, c).mean(0))
    return out.view(input.shape)


def layer_norm(input: Tensor, normalized_shape: Shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.layer_norm(torch.tensor([[1., 3.]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    dims = _check_normalized_shape(input, normalized_shape)
    if _one_layer_norm(input, weight, bias, dims):
        return apply(TN.layer_norm, (input, weight, bias), (len(dims), float(eps)))
    mean = input.mean(dims, keepdim=True)
    d = input - mean
    var = (d * d).mean(dims, keepdim=True)
    out = d * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _one_layer_norm(x: Tensor, w: Tensor | None, b: Tensor | None, dims: tuple) -> bool:
    """Whether layer_norm is one record (Note [Layer norm kernels]): a float32/float64
    input with weight and bias absent or of its dtype and of the normalized shape (other
    dtypes compose the ops, with their promotion)."""
    dt = x._data.dtype
    if dt.char not in "fd" or not dims:
        return False
    shape = x._data.shape[x._data.ndim - len(dims):]
    return all(t is None or (isinstance(t, Tensor) and t._data.dtype == dt and
                             t._data.shape == shape) for t in (w, b))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
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
    if not input.is_contiguous():  # as ATen's group_norm: input.contiguous() (CloneBackward0)
        input = input.contiguous()
    if isinstance(input._data, np.ndarray):  # Note [Normalization records]
        mean, rstd = TNO.group_norm_stats(input._data, num_groups, eps)
        n_hw = input._data.size // (b * c) if b * c else 0
        return apply(TNO.native_group_norm, (input, weight, bias),
                     (_make(mean), _make(rstd), num_groups, eps, b, c, n_hw))
    x = input.reshape(b, num_groups, -1)  # batched tensors inside vmap: composite ops
    mean = x.mean(-1, keepdim=True)
    d = x - mean
    var = (d * d).mean(-1, keepdim=True)
    out = (d * (var + eps).rsqrt()).reshape(input.shape)
    shape = (1, c) + (1,) * (input._data.ndim - 2)
    return _scale_shift(out, weight, bias, shape)


# ---------------------------------------------------------------------------------
# dropout and embedding


# Note [Dropout masks]
# PyTorch's CPU dropouts (ATen's _dropout_impl) draw a noise tensor with bernoulli_(1 - p)
# from the default generator: laid out like the input (empty_like) for dropout and
# alpha_dropout, of shape (N, C, 1, ...) for the feature (channel) dropouts. Plain dropout
# divides the noise by 1 - p and multiplies; alpha dropout keeps selu's mean and variance:
# b = (noise - 1) * alpha*a + alpha*a*p, noise * a, then input * noise + b, with
# alpha = 1.7580993408473766 and a = 1 / sqrt((alpha^2 p + 1)(1 - p)). Each step is one
# tensor op in the input's dtype computed in its opmath type (float for float16 and
# bfloat16), which _noise_op repeats: mul and div take the scalar at opmath precision, add
# rounded to the tensor's dtype first (checked against PyTorch for bfloat16 and float16).
#
# Note [Dropout nodes]
# On CPU PyTorch's F.dropout, the feature dropouts and the alpha dropouts never reach the
# fused native_dropout (ATen's is_fused_kernel_acceptable wants a CUDA/XPU tensor): they
# multiply by the noise (``input * noise``, or ``input.mul_(noise)`` in place), so the
# graph holds a MulBackward0 whose second edge is None and which saves the noise as
# ``_saved_other``; alpha dropout then adds its shift in place (AddBackward0). p = 1
# multiplies by a 0-d zero. torch.native_dropout keeps its own NativeDropoutBackward0
# (TN.dropout). The random draws are unchanged.

_ALPHA = 1.7580993408473766


def _noise_op(x: np.ndarray, fn) -> np.ndarray:
    """One elementwise op with a scalar, computed in the opmath type, rounded to x's."""
    op = np.float64 if x.dtype == np.float64 else np.float32
    return fn(x.astype(op, copy=False), op).astype(x.dtype, copy=False)


def _dropout(input: Tensor, p: float, training: bool, inplace: bool,
             feature: bool = False, alpha: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    data = input._data
    if feature and data.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0 or data.size == 0:
        return input
    shift = None
    if p == 1.0:
        noise = np.zeros((), data.dtype)
    else:

        if feature:
            shape = data.shape[:2] + (1,) * (data.ndim - 2)
            keep = bernoulli(None, data.shape[0] * data.shape[1], 1.0 - p).reshape(shape)
        else:
            keep = _laid_out(np.empty_like(data), bernoulli(None, data.size, 1.0 - p))
        noise = keep.astype(data.dtype)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
            shift = _noise_op(noise, lambda x, op: x + op(-1))
            shift = _noise_op(shift, lambda x, op: x * op(_ALPHA * a))
            # add's kernel takes its scalar in the tensor's dtype (mul's and div's in opmath)
            offset = float(np.asarray(_ALPHA * a * p, data.dtype))
            shift = _noise_op(shift, lambda x, op: x + op(offset))
            noise = _noise_op(noise, lambda x, op: x * op(a))
        else:
            noise = _noise_op(noise, lambda x, op: x / op(1.0 - p))
    # Note [Dropout nodes]: PyTorch's CPU dropout multiplies (MulBackward0 saving the
    # noise), in place for the in-place forms, and alpha dropout adds its shift in place
    noise = _make(noise)
    out = input.mul_(noise) if inplace else input * noise
    if shift is not None:
        out = out.add_(_make(shift))
    return out


@random_under_vmap
def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` (training),
    with PyTorch's mask after the same seed (Note [Dropout masks]).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.dropout(torch.ones(3), 0.5, training=False)
        tensor([1., 1., 1.])
    """
    return _dropout(input, p, training, inplace)


@random_under_vmap
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps a SELU network's mean and variance (dropped values go to selu's
    negative saturation, then an affine correction), PyTorch's mask after the same seed.

    Example:
        >>> import retrograd as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.nn.functional.alpha_dropout(torch.ones(4), 0.5, training=True)
        tensor([-0.7792, -0.7792,  1.6656, -0.7792])
    """
    return _dropout(input, p, training, inplace, alpha=True)


@random_under_vmap
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (``input[n, c]``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.feature_alpha_dropout(torch.ones(2, 3), 0.5).shape
        torch.Size([2, 3])
    """
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def _channel_dropout(name: str, input: Tensor, p: float, training: bool,
                     inplace: bool, batched_dim: int) -> Tensor:
    """dropout1d/2d/3d: zero whole channels of an (N, C, *spatial) or (C, *spatial) input."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    dim = input.dim()
    spatial = batched_dim - 2
    if dim not in (batched_dim - 1, batched_dim):
        if name == "dropout1d":
            raise RuntimeError(
                f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. Note that "
                "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
                "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or "
                "3D inputs).")
        warnings.warn(
            f"{name}: Received a {dim}-D input to {name}, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this "
            f"warning, please use dropout instead. Note that {name} exists to provide "
            f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {batched_dim - 1}D or "
            f"{batched_dim}D inputs).", stacklevel=3)
    if name == "dropout2d":  # PyTorch keeps treating a 3-D input as batched (N, C, L)
        if dim == 3:
            warnings.warn(
                "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                "where C is the channel dim. This behavior will change in a future release to "
                "interpret the input as one without a batch dimension, i.e. shape (C, H, W). "
                "To maintain the 1D channel-wise dropout behavior, please switch to using "
                "dropout1d instead.", stacklevel=3)
        return _dropout(input, p, training, inplace, feature=True)
    if dim == batched_dim:
        return _dropout(input, p, training, inplace, feature=True)
    out = _dropout(input.unsqueeze(0), p, training, False, feature=True).squeeze(0)
    return input.copy_(out) if inplace else out


@random_under_vmap
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.dropout1d(torch.ones(2, 3, 4), training=False).shape
        torch.Size([2, 3, 4])
    """
    return _channel_dropout("dropout1d", input, p, training, inplace, 3)


@random_under_vmap
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, H, W) input with probability ``p``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.dropout2d(torch.ones(2, 3, 4, 4), training=False).shape
        torch.Size([2, 3, 4, 4])
    """
    return _channel_dropout("dropout2d", input, p, training, inplace, 4)


@random_under_vmap
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability
    ``p``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.dropout3d(torch.ones(1, 2, 2, 2, 2), training=False).shape
        torch.Size([1, 2, 2, 2, 2])
    """
    return _channel_dropout("dropout3d", input, p, training, inplace, 5)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
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
        embedding_renorm_(weight, idx, max_norm, norm_type)
    return apply(TN.embedding, (weight, _make(idx.astype(np.int64, copy=False))), padding_idx)


# ---------------------------------------------------------------------------------
# activations

def _inplace_result(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    return input.copy_(out) if inplace else out


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.relu(torch.tensor([-1., 0., 2.]))
        tensor([0., 0., 2.])
    """
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``."""
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
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


def _mask_activation(input, op, op_result, p, inplace: bool) -> Tensor:
    """leaky_relu / hardtanh: the in-place form's node saves the output, as PyTorch's."""
    if inplace:  # the input is overwritten: the rule reads the output (LeakyReluBackward1)
        return _write_result(input, apply(op_result, (input,), p))
    return apply(op, (input,), p)


def _write_result(input: Tensor, out: Tensor) -> Tensor:
    """The in-place form of a one-node activation whose node saved its output: ``input``
    takes ``out``'s values and its node (EluBackward1, LeakyReluBackward1, ...), as
    PyTorch's elu_ / leaky_relu_ / hardtanh_, through the in-place machinery."""

    return _inplace(input, out)


def _own_node_activation(op, input: Tensor, inplace: bool) -> Tensor:
    """silu/mish (Note [SiLU and Mish]); in place, the node reads a copy of the input it
    overwrites (PyTorch's silu_ and mish_ save the original input so)."""
    if inplace:
        return _write_result(input, apply(op, (input.clone(),)))
    return apply(op, (input,))


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.relu6(torch.tensor([-1., 7.]))
        tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,
               inplace: bool = False) -> Tensor:
    """x for x > 0, ``negative_slope * x`` otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.leaky_relu(torch.tensor([-2., 2.]), 0.5)
        tensor([-1.,  2.])
    """
    return _mask_activation(input, TN.leaky_relu, TN.leaky_relu_result, (negative_slope,),
                            inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.elu(torch.tensor([-1., 1.]))
        tensor([-0.6321,  1.0000])
    """
    return _elu(input, (alpha, 1.0, 1.0), inplace, "elu")


def _elu(input: Tensor, p: tuple, inplace: bool, name: str) -> Tensor:
    """ELU, SELU, CELU: PyTorch's elu(x, alpha, scale, input_scale), one table entry with
    its own double backward (TN.elu: the second derivative at 0 is 0, as in PyTorch)."""
    _check_float(input, f"{name}_cpu")
    if inplace:  # the input is overwritten: the rule reads the output (PyTorch's elu_)
        return _write_result(input, apply(TN.elu_result, (input,), p))
    return apply(TN.elu, (input,), p)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalizing constants.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.selu(torch.tensor([1.]))
        tensor([1.0507])
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return _elu(input, (alpha, scale, 1.0), inplace, "elu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
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


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
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


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.silu(torch.tensor([1.]))
        tensor([0.7311])
    """
    return _own_node_activation(TN.silu, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear above ``threshold`` (no overflow).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softplus(torch.tensor([0., 100.]))
        tensor([  0.6931, 100.0000])
    """
    _check_float(input, "softplus_cpu")
    return apply(TN.softplus, (input,), (beta, threshold))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.mish(torch.tensor([1.]))
        tensor([0.8651])
    """
    return _own_node_activation(TN.mish, input, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.logsigmoid(torch.tensor([-1000., 0.]))
        tensor([-1.0000e+03, -6.9315e-01])
    """
    _check_float(input, "log_sigmoid_cpu")
    return _log_sigmoid(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softsign(torch.tensor([1.]))
        tensor([0.5000])
    """
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.tanhshrink(torch.tensor([0.]))
        tensor([0.])
    """
    return input - input.tanh()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6 (gradient zero outside (-3, 3)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardsigmoid(torch.tensor([0., 4.]))
        tensor([0.5000, 1.0000])
    """
    return _own_node_activation(TN.hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardswish(torch.tensor([1.]))
        tensor([0.6667])
    """
    return _own_node_activation(TN.hardswish, input, inplace)


def threshold(input: Tensor, threshold: float, value: float,
              inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.threshold(torch.tensor([0.5, 2.]), 1., -1.)
        tensor([-1.,  2.])
    """
    # PyTorch's threshold kernel: x <= threshold ? value : x (a NaN input stays NaN and
    # passes its gradient on); the input in where's first branch: its backward is faster
    keep = (input <= threshold).logical_not()
    return _inplace_result(input, where(keep, input, float(value)), inplace)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.glu(torch.tensor([2., 0.]))
        tensor([1.])
    """
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.tanh(torch.tensor([0.]))
        tensor([0.])
    """
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    """Logistic sigmoid.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.sigmoid(torch.tensor([0.]))
        tensor([0.5000])
    """
    return input.sigmoid()


# ---------------------------------------------------------------------------------
# utilities


# the in-place functional forms PyTorch has for these activations
_threshold = threshold


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.elu_(torch.tensor([-1., 1.]))
        tensor([-0.6321,  1.0000])
    """
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.celu_(torch.tensor([-1., 1.]))
        tensor([-0.6321,  1.0000])
    """
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.selu_(torch.tensor([1.]))
        tensor([1.0507])
    """
    return selu(input, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hardtanh_(torch.tensor([-2., 0.5]))
        tensor([-1.0000,  0.5000])
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.leaky_relu_(torch.tensor([-2., 2.]), 0.5)
        tensor([-1.,  2.])
    """
    return leaky_relu(input, negative_slope, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.threshold_(torch.tensor([0.5, 2.]), 1., -1.)
        tensor([-1.,  2.])
    """
    return _threshold(input, threshold, value, inplace=True)  # (the argument hides the name)


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


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.normalize(torch.tensor([[3., 4.]]))
        tensor([[0.6000, 0.8000]])
    """
    if out is not None:  # Note [out= arguments] (ops/out_arg.py)
        return write_out("normalize", out, normalize(input, p, dim, eps), (input,))
    denom = vector_norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


@autocast_category(LOWER_PRECISION_FP)
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
    e = query.shape[-1]
    sc = 1.0 / math.sqrt(e) if scale is None else scale
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if _flash_attention_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _flash_attention(query, key, value, attn_mask, is_causal, sc, scale)
    return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, sc,
                           scale is not None and scale < 0, enable_gqa)


def _attention_math(query, key, value, attn_mask, dropout_p, is_causal, sc, negative,
                    enable_gqa):
    """ATen's _scaled_dot_product_attention_math, op for op (its graph): query and key
    each scaled by sqrt(scale) (mul.Scalar), the boolean or causal mask made additive,
    key/value heads repeated for grouped-query attention, softmax that gives a row
    masked entirely zeros (SafeSoftmaxBackward0), then dropout (training) and the
    product with value."""
    sf = math.sqrt(abs(sc))
    q = _mul_c(query, -sf if negative else sf)
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = _make(np.tril(np.ones((L, S), dtype=bool)))
    if attn_mask is not None and attn_mask.dtype == D.bool:  # (ops: it may be batched)
        attn_mask = where(attn_mask, 0.0, float("-inf")).to(query.dtype)
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    attn = q.matmul(_mul_c(key.transpose(-2, -1), sf))
    if attn_mask is not None:
        attn = attn + attn_mask
    attn = apply(TAT.safe_softmax, (attn,), -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, training=True)
    return attn.matmul(value)


def _flash_attention_applies(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """Whether PyTorch's CPU dispatch picks its flash kernel (Note [Attention record] in
    ops/records/attention.py): 4-D floating inputs of one head dim and batch, key and
    value heads equal (or a divisor of the query's with enable_gqa), no dropout, a mask
    that does not require grad."""
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4 or dropout_p > 0.0:
        return False
    if not isinstance(query._data, np.ndarray) or query._data.dtype not in FLOAT_NP:
        return False
    if not (query.shape[-1] == key.shape[-1] == value.shape[-1]) or \
            not (query.shape[0] == key.shape[0] == value.shape[0]) or \
            key.shape[1] != value.shape[1] or min(query.shape[-2], key.shape[-2]) == 0:
        return False
    hq, hk = query.shape[1], key.shape[1]
    if hq != hk and not (enable_gqa and hk and hq % hk == 0):
        return False
    # (a mask with a forward-mode tangent takes the composite too: the record's mask is a
    # parameter, not a differentiable input)
    return attn_mask is None or not ((attn_mask.requires_grad and is_grad_enabled())
                                     or attn_mask._fw_grad is not None)


def _flash_attention(query, key, value, attn_mask, is_causal, sc, scale):
    if attn_mask is not None and attn_mask._data.dtype == np.bool_:  # PyTorch converts it
        attn_mask = _make(np.where(attn_mask._data, 0.0, -np.inf).astype(query._data.dtype))
    rep = query.shape[1] // key.shape[1]
    probs = TAT.attention_probs(query._data, key._data,
                                None if attn_mask is None else attn_mask._data, bool(is_causal),
                                sc, rep)
    return apply(TAT.scaled_dot_product_flash_attention, (query, key, value),
                 (attn_mask, bool(is_causal), sc, rep, scale, 0.0, _make(probs)))


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


@autocast_category(LOWER_PRECISION_FP, op="_native_multi_head_attention")
def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Tensor | None,
                                 in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
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


# Note [Functional submodules]: the newer functional families live in modules by job
# that call back into this one (pad, leaky_relu, avg_pool...), so they load last.
from . import activations as _act
from . import distance as _dist
from . import margin_losses as _loss
from . import normalization as _norm
from .activations import *
from .distance import *
from .grouped_mm import grouped_mm, scaled_grouped_mm, scaled_mm
from .linear_cross_entropy import _linear_cross_entropy
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .margin_losses import *
from .normalization import *

__all__ += _act.__all__ + _dist.__all__ + _loss.__all__ + _norm.__all__
__all__ += ["linear_cross_entropy", "grouped_mm", "scaled_mm", "scaled_grouped_mm"]


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` with the
    logits shaped ``(N, C, *out_features)`` for a ``(C, *out_features, in_features)``
    weight; ``ignore_index=None`` means -100 for class indices; ``options`` computes it in
    chunks of batch rows (Note [Chunked linear cross entropy] in
    nn/functional/linear_cross_entropy.py).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.functional as F
        >>> F.linear_cross_entropy(torch.ones(2, 3), torch.eye(4, 3), torch.tensor([0, 3]))
        tensor(1.7143)
    """
    return _linear_cross_entropy(linear, input, linear_weight, target, linear_bias, weight,
                                 reduction, ignore_index, label_smoothing, options)
