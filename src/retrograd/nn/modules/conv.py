"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d.

Example:
    >>> import retrograd as torch
    >>> conv = torch.nn.Conv2d(3, 8, kernel_size=3, padding=1)
    >>> conv(torch.ones(2, 3, 5, 5)).shape
    torch.Size([2, 8, 5, 5])
"""

from __future__ import annotations

from ..._core.dtype import dtype
from ..._core.hints import DeviceLike, Shape, ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from .linear import _reset_kaiming, _weight_and_bias
from .module import Module
from .utils import _tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    _nsp = 2
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        n = self._nsp
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _tuple(kernel_size, n, True)
        stride = _tuple(stride, n, True)
        dilation = _tuple(dilation, n, True)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n, True)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _tuple(output_padding, n, True)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            rev = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
        else:
            rev = []
            for p in reversed(padding):
                rev += [p, p]
        self._reversed_padding_repeated_twice = rev
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        _weight_and_bias(self, shape, (out_channels,), bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: kaiming_uniform_(a=sqrt(5)); bias U(-1/sqrt(fan_in), ...)."""
        _reset_kaiming(self.weight, self.bias, draw_bias_without_fan_in=False)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice,
                            mode=self.padding_mode),
                      weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Conv1d(2, 4, 3)(torch.ones(1, 2, 10)).shape
        torch.Size([1, 4, 8])
    """

    _nsp = 1
    _fn = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: ShapeLike,
                 stride: ShapeLike = 1, padding: str | ShapeLike = 0, dilation: ShapeLike = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W): stride, padding (int, pair, 'same', 'valid'),
    dilation, groups, bias and padding_mode.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Conv2d(1, 1, 3, dilation=2)
        Conv2d(1, 1, kernel_size=(3, 3), stride=(1, 1), dilation=(2, 2))
    """

    _nsp = 2
    _fn = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | str | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Conv3d(1, 2, 2)(torch.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 2, 2, 2, 2])
    """

    _nsp = 3
    _fn = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1,
                 padding: int | str | tuple[int, int, int] = 0,
                 dilation: int | tuple[int, int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    _tfn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding,
                 output_padding, groups, bias, dilation, padding_mode, device, dtype):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Shape | None = None) -> Tensor:
        fn = type(self)._tfn
        if output_size is not None:
            from ..functional import _conv_transposend

            return _conv_transposend(self._nsp, input, self.weight, self.bias, self.stride,
                                     self.padding, 0, self.groups, self.dilation,
                                     type(self).__name__, output_size=output_size)
        return fn(input, self.weight, self.bias, self.stride, self.padding,
                  self.output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d with respect to its input).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ConvTranspose1d(2, 1, 3, stride=2)(torch.ones(1, 2, 4)).shape
        torch.Size([1, 1, 9])
    """

    _nsp = 1
    _tfn = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: ShapeLike,
                 stride: ShapeLike = 1, padding: ShapeLike = 0, output_padding: ShapeLike = 0,
                 groups: int = 1, bias: bool = True, dilation: ShapeLike = 1,
                 padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; weight is (in_channels, out_channels/groups, kH, kW).

    Example:
        >>> import retrograd as torch
        >>> up = torch.nn.ConvTranspose2d(4, 2, 2, stride=2)
        >>> up(torch.ones(1, 4, 3, 3)).shape
        torch.Size([1, 2, 6, 6])
    """

    _nsp = 2
    _tfn = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                 output_padding: int | tuple[int, int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, int] = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ConvTranspose3d(1, 1, 2)(torch.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 3, 3, 3])
    """

    _nsp = 3
    _tfn = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1, padding: int | tuple[int, int, int] = 0,
                 output_padding: int | tuple[int, int, int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, int, int] = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)
