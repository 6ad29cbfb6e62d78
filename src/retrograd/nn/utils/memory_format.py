"""``convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``.

Converting a convolution's weight gives it a copy in that memory format, with
PyTorch's strides (Note [Memory formats] in retrograd/_core/layouts.py); its gradients take
the same layout (Note [Gradient layout contract]). The values are unchanged, and so are
the numbers a model computes.

Example:
    >>> import retrograd as torch
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3))
    >>> net = torch.nn.utils.convert_conv2d_weight_memory_format(net, torch.channels_last)
    >>> net[0].weight.shape, net[0].weight.stride()
    (torch.Size([4, 3, 3, 3]), (27, 1, 9, 3))
"""

from __future__ import annotations

from ..._core.layouts import memory_format
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format, kinds: tuple) -> Module:
    for sub in module.modules():
        if isinstance(sub, kinds):
            sub.weight.data = sub.weight.detach().clone(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format: memory_format) -> Module:
    """Give every Conv2d/ConvTranspose2d weight in ``module`` the ``memory_format``
    (a copy with the same values here: one layout).

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Conv2d(1, 1, 1)
        >>> torch.nn.utils.convert_conv2d_weight_memory_format(m, torch.channels_last) is m
        True
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format: memory_format) -> Module:
    """Give every Conv3d/ConvTranspose3d weight in ``module`` the ``memory_format``.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Conv3d(1, 1, 1)
        >>> torch.nn.utils.convert_conv3d_weight_memory_format(m, torch.contiguous_format) is m
        True
    """
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
