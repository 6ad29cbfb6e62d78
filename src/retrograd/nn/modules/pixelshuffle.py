"""Rearranging layers: PixelShuffle, PixelUnshuffle, ChannelShuffle.

Example:
    >>> import retrograd as torch
    >>> torch.nn.PixelShuffle(2)(torch.ones(1, 4, 2, 2)).shape
    torch.Size([1, 1, 4, 4])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """(*, C·r², H, W) -> (*, C, H·r, W·r).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.PixelShuffle(3)(torch.ones(9, 1, 1)).shape
        torch.Size([1, 3, 3])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Module):
    """(*, C, H·r, W·r) -> (*, C·r², H, W).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.PixelUnshuffle(3)(torch.ones(1, 3, 3)).shape
        torch.Size([9, 1, 1])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups (ShuffleNet).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ChannelShuffle(2)(torch.arange(4.).reshape(1, 4, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def extra_repr(self) -> str:
        return f"groups={self.groups}"

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)
