"""Upsampling layers: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (on
``F.interpolate``).

Example:
    >>> import retrograd as torch
    >>> torch.nn.Upsample(scale_factor=2)(torch.tensor([[[1., 2.]]]))
    tensor([[[1., 1., 2., 2.]]])
"""

from __future__ import annotations

from ..._core.hints import ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize the spatial dims to ``size`` or by ``scale_factor`` (``F.interpolate``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Upsample(size=3, mode='linear')(torch.tensor([[[1., 2.]]]))
        tensor([[[1.0000, 1.5000, 2.0000]]])
    """

    def __init__(self, size: ShapeLike | None = None,
                 scale_factor: float | tuple[float, ...] | None = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(..., mode='nearest')`` for (N, C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.ones(1, 1, 2, 2)).shape
        torch.Size([1, 1, 4, 4])
    """

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(..., mode='bilinear', align_corners=True)`` for (N, C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.UpsamplingBilinear2d(size=3)(torch.tensor([[[[0., 2.]]]]))[0, 0, 0]
        tensor([0., 1., 2.])
    """

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
