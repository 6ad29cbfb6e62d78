"""RMS and local response normalizations of ``retrograd.nn.functional`` (re-exported
there) and the legacy cross-map LRN Function behind ``nn.CrossMapLRN2d``.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.rms_norm(torch.tensor([[3., 4.]]), (2,), eps=0.)
    tensor([[0.8485, 1.1314]])
"""

from __future__ import annotations

import numpy as np

from ..._core.hints import Shape
from ..._tensor.tensor import Tensor, _make
from ...autograd.function import Function
from .common import _check_normalized_shape
from .conv import avg_pool2d, avg_pool3d
from .pad import pad

__all__ = ["rms_norm", "local_response_norm"]

_UPCAST = ("float16", "bfloat16")


def rms_norm(input: Tensor, normalized_shape: Shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x², trailing dims) + eps) * weight; ``eps=None`` is the machine
    epsilon of the computation dtype (float32 for half inputs, as PyTorch's opmath).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.rms_norm(torch.tensor([[1., 1.]]), [2])
        tensor([[1., 1.]])
    """
    dims = _check_normalized_shape(input, normalized_shape, star="*")
    x = input.float() if input.dtype.name in _UPCAST else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    out = out.type_as(input)
    return out * weight if weight is not None else out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x² over ``size`` neighbouring channels) ** beta.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.local_response_norm(torch.ones(1, 2, 1), 2, alpha=1.,
        ...                                         beta=1., k=0.)
        tensor([[[2.],
                 [1.]]])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")  # PyTorch's spaces
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / (div * alpha + k).pow(beta)


# Note [CrossMapLRN2d]: PyTorch's CrossMapLRN2d is a legacy autograd Function with its own
# loops. Its forward sums squares over a running channel window whose first update skips
# one subtraction (``c > pre_pad``), so channel ``pre_pad`` sums one square more than a
# centred window; its backward uses the centred window. Both windows are 0/1 channel
# matrices here, built by replaying the loops' index arithmetic once, so the numbers and
# the (not exactly the forward's) gradient are PyTorch's.
def _forward_window(channels: int, size: int) -> np.ndarray:
    pre_pad = int((size - 1) / 2 + 1)
    win = np.zeros((channels, channels))
    win[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        win[c] = win[c - 1]
        if c < channels - pre_pad + 1:
            win[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            win[c, c - pre_pad] -= 1
    return win


def _backward_window(channels: int, size: int) -> np.ndarray:
    inverse_pre_pad = int(size - (size - 1) / 2)
    win = np.zeros((channels, channels))
    for c in range(channels):  # padded rows c .. c + size - 1, channel = row - inverse_pre_pad
        for row in range(c, c + size):
            src = row - inverse_pre_pad
            if 0 <= src < channels:
                win[c, src] = 1
    return win


def _mix(win: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("dc,nc...->nd...", win.astype(x.dtype), x)


class CrossMapLRN2dFunction(Function):
    """The cross-map LRN of ``nn.CrossMapLRN2d`` (Note [CrossMapLRN2d]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.functional.normalization import CrossMapLRN2dFunction
        >>> CrossMapLRN2dFunction.apply(torch.ones(1, 1, 1, 1), 1, 1., 1., 0.)
        tensor([[[[1.]]]])
    """

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        x = input._data
        scale = _mix(_forward_window(x.shape[1], size), x * x) * (alpha / size) + k
        out = (scale ** -beta * x).astype(x.dtype)
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale.astype(x.dtype)
        result = _make(out)
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        x, g, y, scale = input._data, grad_output._data, output._data, ctx.scale
        ratio = _mix(_backward_window(x.shape[1], ctx.size), g * y / scale)
        cache = 2 * ctx.alpha * ctx.beta / ctx.size
        grad = scale ** -ctx.beta * g - cache * x * ratio
        return _make(grad.astype(x.dtype)), None, None, None, None
