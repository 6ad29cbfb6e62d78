"""Shrink, randomized and 2-D softmax activation layers: Hardshrink, Softshrink, RReLU,
Softmax2d.

Example:
    >>> import retrograd as torch
    >>> torch.nn.Hardshrink(0.5)(torch.tensor([-1., 0.2]))
    tensor([-1.,  0.])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Hardshrink", "Softshrink", "RReLU", "Softmax2d"]


class Hardshrink(Module):
    """x where |x| > lambd, else 0.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Hardshrink(1.)
        Hardshrink(1.0)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x - lambd above lambd, x + lambd below -lambd, else 0.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softshrink()(torch.tensor([1.]))
        tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class RReLU(Module):
    """Leaky ReLU with a random slope in [lower, upper] when training, the mean in eval.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor([-1., 1.]))
        tensor([-0.2000,  1.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class Softmax2d(Module):
    """softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Softmax2d()(torch.zeros(2, 1, 1))
        tensor([[[0.5000]],
        <BLANKLINE>
                [[0.5000]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
