"""Folding an eval-mode batch norm into the convolution or linear layer before it
(``nn.utils.fuse_conv_bn_eval`` and friends).

Example:
    >>> import retrograd as torch
    >>> conv, bn = torch.nn.Conv2d(2, 3, 1).eval(), torch.nn.BatchNorm2d(3).eval()
    >>> fused = torch.nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> x = torch.randn(1, 2, 4, 4)
    >>> bool(torch.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
"""

from __future__ import annotations

import copy

from ..._functions.creation import ones_like, zeros_like
from ..._tensor.tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_stats(bn: Module) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` computing ``bn(conv(x))`` of the eval-mode ``bn``
    (``transpose=True`` for a transposed convolution).

    Example:
        >>> import retrograd as torch
        >>> conv = torch.nn.ConvTranspose1d(2, 3, 2).eval()
        >>> bn = torch.nn.BatchNorm1d(3).eval()
        >>> torch.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=True).weight.shape
        torch.Size([2, 3, 2])
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The convolution weight and bias with the batch norm folded in (new Parameters,
    in the convolution's dtypes).

    Example:
        >>> import retrograd as torch
        >>> w, b = torch.nn.utils.fuse_conv_bn_weights(
        ...     torch.ones(1, 1, 1), None, torch.zeros(1), torch.ones(1), 0., None, None)
        >>> w.flatten().tolist(), b.tolist()
        ([1.0], [0.0])
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    bn_var_rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` computing ``bn(linear(x))`` of the eval-mode ``bn`` (its
    features equal ``out_features``, or 1).

    Example:
        >>> import retrograd as torch
        >>> lin, bn = torch.nn.Linear(2, 3).eval(), torch.nn.BatchNorm1d(3).eval()
        >>> x = torch.randn(4, 2)
        >>> fused = torch.nn.utils.fuse_linear_bn_eval(lin, bn)
        >>> bool(torch.allclose(fused(x), bn(lin(x)), atol=1e-6))
        True
    """
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             f"bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    _check_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The linear weight and bias with the batch norm folded in (new Parameters).

    Example:
        >>> import retrograd as torch
        >>> w, b = torch.nn.utils.fuse_linear_bn_weights(
        ...     torch.ones(1, 2), None, torch.ones(1), torch.ones(1), 0., torch.ones(1) * 2,
        ...     torch.zeros(1))
        >>> w.data, b.data
        (tensor([[2., 2.]]), tensor([-2.]))
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    bn_scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=b_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
