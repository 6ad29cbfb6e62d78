"""Identity, Linear and Bilinear layers.

Example:
    >>> import retrograd as torch
    >>> fc = torch.nn.Linear(3, 2)
    >>> fc.weight.shape, fc.bias.shape
    (torch.Size([2, 3]), torch.Size([2]))
"""

from __future__ import annotations

import math

from ..._core import dtype as D
from ..._core.hints import DeviceLike
from ..._functions.creation import empty
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


def _empty(shape, dtype):
    return empty(*shape, dtype=dtype if dtype is not None else D.DEFAULTS.float)


def _weight_and_bias(module: Module, weight_shape: tuple, bias_shape: tuple, bias: bool,
                     dtype) -> None:
    """Register ``module.weight`` (uninitialised) and ``module.bias`` (None unless ``bias``)."""
    module.weight = Parameter(_empty(weight_shape, dtype))
    if bias:
        module.bias = Parameter(_empty(bias_shape, dtype))
    else:
        module.register_parameter("bias", None)


def _reset_kaiming(weight, bias, *, draw_bias_without_fan_in: bool) -> None:
    """PyTorch's default for Linear and ConvNd: weight ``kaiming_uniform_(a=sqrt(5))``,
    bias ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``. With no fan-in, Linear still draws the bias
    from ``U(0, 0)`` (consuming random numbers) where ConvNd leaves it alone."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is None:
        return
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    if fan_in == 0 and not draw_bias_without_fan_in:
        return
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Identity(54, unused='x')(torch.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x Wᵀ + b, with W of shape (out_features, in_features).

    Initialised as PyTorch: W ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform_ with
    a=sqrt(5)), and the same bound for b, from retrograd's global generator.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Linear(4, 3)(torch.ones(2, 4)).shape
        torch.Size([2, 3])
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), (out_features,), bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights with PyTorch's default initialisation."""
        _reset_kaiming(self.weight, self.bias, draw_bias_without_fan_in=True)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear that MultiheadAttention uses for its output projection."""


class Bilinear(Module):
    """y = x1ᵀ A x2 + b, with A of shape (out_features, in1_features, in2_features).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Bilinear(2, 3, 4)(torch.ones(5, 2), torch.ones(5, 3)).shape
        torch.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), (out_features,),
                         bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias, as PyTorch."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
