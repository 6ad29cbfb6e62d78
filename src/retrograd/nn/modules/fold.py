"""Fold and Unfold: sliding local blocks to columns and back (``F.unfold``/``F.fold``).

Example:
    >>> import retrograd as torch
    >>> torch.nn.Unfold(2)(torch.ones(1, 3, 4, 4)).shape
    torch.Size([1, 12, 9])
"""

from __future__ import annotations

from ..._core.hints import ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum columns (N, C·kh·kw, L) into an image (N, C, *output_size) (col2im).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Fold((3, 3), 2)(torch.ones(1, 4, 4))[0, 0, 1]
        tensor([2., 4., 2.])
    """

    def __init__(self, output_size: ShapeLike, kernel_size: ShapeLike, dilation: ShapeLike = 1,
                 padding: ShapeLike = 0, stride: ShapeLike = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)


class Unfold(Module):
    """Sliding local blocks of (N, C, H, W) as columns (N, C·kh·kw, L) (im2col).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Unfold(2, padding=1)(torch.ones(3, 2, 2)).shape
        torch.Size([12, 9])
    """

    def __init__(self, kernel_size: ShapeLike, dilation: ShapeLike = 1, padding: ShapeLike = 0,
                 stride: ShapeLike = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)
