"""Activation layers.

Example:
    >>> import retrograd as torch
    >>> torch.nn.ReLU()(torch.tensor([-1., 1.]))
    tensor([0., 1.])
    >>> torch.nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
"""

from __future__ import annotations

from ..._core.dtype import dtype
from ..._core.hints import DeviceLike
from ..._functions.creation import empty
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish",
           "Softplus", "Softsign", "Tanh", "Sigmoid", "Hardtanh", "Hardsigmoid", "Hardswish",
           "LogSigmoid", "Tanhshrink", "Threshold", "GLU", "Softmax", "Softmin", "LogSoftmax",
           "PReLU"]


class ReLU(Module):
    """max(x, 0), optionally in place.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ReLU(inplace=True)
        ReLU(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """Clamp to [min_val, max_val] (zero gradient at and beyond the limits).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Hardtanh(-2., 2.)(torch.tensor([-3., 1.]))
        tensor([-2.,  1.])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError("max_val must be greater than min_val")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ReLU6()(torch.tensor([8.]))
        tensor([6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x for x > 0, ``negative_slope * x`` otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LeakyReLU(0.1)(torch.tensor([-10.]))
        tensor([-1.])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ELU(Module):
    """x for x > 0, alpha (exp(x) - 1) otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.ELU()
        ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class CELU(ELU):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.CELU(2.0)(torch.tensor([1.]))
        tensor([1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """Scaled ELU (self-normalizing constants).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.SELU()(torch.tensor([0.]))
        tensor([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x Φ(x); ``approximate='tanh'`` uses the tanh approximation.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.GELU(approximate='tanh')
        GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x sigmoid(x) (swish).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.SiLU()(torch.tensor([0.]))
        tensor([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(SiLU):
    """x tanh(softplus(x)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Mish()(torch.tensor([0.]))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softplus()
        Softplus(beta=1.0, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    """Hyperbolic tangent.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Tanh()(torch.tensor([0.]))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Sigmoid(Module):
    """Logistic sigmoid.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Sigmoid()(torch.tensor([0.]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Softsign(Module):
    """x / (1 + |x|).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softsign()(torch.tensor([1.]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Tanhshrink()(torch.tensor([0.]))
        tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class LogSigmoid(Module):
    """log(sigmoid(x)), stable for large |x|.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LogSigmoid()(torch.tensor([0.]))
        tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Hardsigmoid(Module):
    """relu6(x + 3) / 6.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Hardsigmoid()(torch.tensor([0.]))
        tensor([0.5000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Hardsigmoid):
    """x relu6(x + 3) / 6.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Hardswish()(torch.tensor([3.]))
        tensor([3.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Threshold(Module):
    """x where x > threshold, else ``value``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Threshold(0.5, 0.)(torch.tensor([0.2, 0.7]))
        tensor([0.0000, 0.7000])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class GLU(Module):
    """a sigmoid(b) for the halves a, b of the input along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.GLU()(torch.ones(2, 4)).shape
        torch.Size([2, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(Module):
    """softmax along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softmax(dim=1)(torch.zeros(1, 2))
        tensor([[0.5000, 0.5000]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Softmax):
    """softmax(-x) along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softmin(dim=0)(torch.zeros(2))
        tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(Softmax):
    """log_softmax along ``dim`` (stable).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LogSoftmax(dim=0)(torch.zeros(2))
        tensor([-0.6931, -0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


class PReLU(Module):
    """x for x >= 0, a x otherwise, with learnable a (one per channel or shared).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.PReLU()(torch.tensor([-4.]))
        tensor([-1.], grad_fn=<PreluKernelBackward0>)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slopes with ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
