"""RMS and local response normalization layers: RMSNorm, LocalResponseNorm, CrossMapLRN2d.

Example:
    >>> import retrograd as torch
    >>> torch.nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
"""

from __future__ import annotations

from ..._core.dtype import dtype
from ..._core.hints import DeviceLike, ShapeLike
from ..._functions.creation import empty
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from ..functional.normalization import CrossMapLRN2dFunction
from ..parameter import Parameter
from .module import Module

__all__ = ["RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


class RMSNorm(Module):
    """x / rms(x) over the trailing ``normalized_shape`` dims, times a weight.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.RMSNorm(2, eps=0.)(torch.tensor([[3., 4.]]))
        tensor([[0.8485, 1.1314]], grad_fn=<MulBackward0>)
    """

    def __init__(self, normalized_shape: ShapeLike, eps: float | None = None,
                 elementwise_affine: bool = True, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return ("{normalized_shape}, eps={eps}, "
                "elementwise_affine={elementwise_affine}".format(**self.__dict__))


class LocalResponseNorm(Module):
    """x / (k + alpha * mean of x² over ``size`` neighbouring channels) ** beta.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(LocalResponseNorm):
    """The legacy (Lua Torch) cross-channel LRN of 4-D inputs, with its own backward.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.CrossMapLRN2d(3)
        CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)
