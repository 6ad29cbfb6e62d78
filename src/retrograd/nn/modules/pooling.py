"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d, LPPool1d/2d/3d.

Example:
    >>> import retrograd as torch
    >>> torch.nn.MaxPool2d(2)(torch.ones(1, 3, 4, 4)).shape
    torch.Size([1, 3, 2, 2])
"""

from __future__ import annotations

from ..._core.hints import Shape, ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _tuple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d"]


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size: ShapeLike, stride: ShapeLike | None = None,
                 padding: ShapeLike = 0, dilation: ShapeLike = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of (N, C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.MaxPool1d(2)(torch.tensor([[[1., 5., 2., 0.]]]))
        tensor([[[5., 2.]]])
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of (N, C, H, W) input; ``return_indices`` also gives the
    flat argmax positions.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.MaxPool2d(2, return_indices=True)(torch.arange(4.).reshape(1, 1, 2, 2))
        (tensor([[[[3.]]]]), tensor([[[[3]]]]))
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of (N, C, D, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.MaxPool3d(2)(torch.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 1, 1, 1])
    """

    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """Average over sliding windows of (N, C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AvgPool1d(2)
        AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size: ShapeLike, stride: ShapeLike | None = None,
                 padding: ShapeLike = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if (stride is not None) else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(Module):
    """Average over sliding windows of (N, C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AvgPool2d(2)(torch.ones(1, 1, 4, 4)).shape
        torch.Size([1, 1, 2, 2])
    """

    _nsp = 2

    def __init__(self, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        fn = F.avg_pool2d if self._nsp == 2 else F.avg_pool3d
        return fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                  self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    """Average over sliding windows of (N, C, D, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AvgPool3d(2)(torch.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 1, 1, 1])
    """

    _nsp = 3


class AdaptiveAvgPool1d(Module):
    """Average pooling to a fixed output length.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveAvgPool1d(1)(torch.tensor([[[1., 2., 3.]]]))
        tensor([[[2.]]])
    """

    def __init__(self, output_size: int | tuple[int | None, ...] | None) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (e.g. 1 for global average pooling).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveAvgPool2d((1, 1))(torch.ones(2, 3, 5, 5)).shape
        torch.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size: int | tuple[int | None, ...] | None) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """3-D average pooling to a fixed output size.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveAvgPool3d(1)(torch.ones(2, 3, 4, 4, 4)).shape
        torch.Size([2, 3, 1, 1, 1])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size: int | tuple[int | None, ...] | None,
                 return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output length (``return_indices=True``: also the argmaxes).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveMaxPool1d(1)(torch.tensor([[[1., 3., 2.]]]))
        tensor([[[3.]]])
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D max pooling to a fixed output size (None keeps a dim).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveMaxPool2d((1, None))(torch.ones(1, 3, 5)).shape
        torch.Size([1, 1, 5])
    """

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D max pooling to a fixed output size.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.AdaptiveMaxPool3d(1)(torch.ones(1, 2, 3, 3, 3)).shape
        torch.Size([1, 2, 1, 1, 1])
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    _fn = None
    _n = 1

    def __init__(self, kernel_size: ShapeLike, stride: ShapeLike | None = None,
                 padding: ShapeLike = 0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _tuple(padding, self._n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size: Shape | None = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of MaxPool1d: values back at their argmax, zeros elsewhere.

    Example:
        >>> import retrograd as torch
        >>> y, i = torch.nn.MaxPool1d(2, return_indices=True)(torch.tensor([[[1., 3.]]]))
        >>> torch.nn.MaxUnpool1d(2)(y, i)
        tensor([[[0., 3.]]])
    """

    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of MaxPool2d.

    Example:
        >>> import retrograd as torch
        >>> y, i = torch.nn.MaxPool2d(2, return_indices=True)(torch.ones(1, 1, 2, 2))
        >>> torch.nn.MaxUnpool2d(2)(y, i).flatten()
        tensor([1., 0., 0., 0.])
    """

    _fn = staticmethod(F.max_unpool2d)
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of MaxPool3d.

    Example:
        >>> import retrograd as torch
        >>> y, i = torch.nn.MaxPool3d(2, return_indices=True)(torch.ones(1, 1, 2, 2, 2))
        >>> torch.nn.MaxUnpool3d(2)(y, i).shape
        torch.Size([1, 1, 2, 2, 2])
    """

    _fn = staticmethod(F.max_unpool3d)
    _n = 3


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type: float, kernel_size: ShapeLike, stride: ShapeLike | None = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling, ``(sum over the window of x^p)^(1/p)``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LPPool1d(2, 2)(torch.tensor([[[3., 4.]]]))
        tensor([[[5.]]])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LPPool2d(1, 2)(torch.ones(1, 1, 2, 2)).flatten()
        tensor([4.])
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LPPool3d(1, 2)(torch.ones(1, 1, 2, 2, 2)).flatten()
        tensor([8.])
    """

    _fn = staticmethod(F.lp_pool3d)
