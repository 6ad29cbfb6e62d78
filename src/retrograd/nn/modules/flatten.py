"""Flatten and Unflatten.

Example:
    >>> import retrograd as torch
    >>> torch.nn.Flatten()(torch.ones(2, 3, 4)).shape
    torch.Size([2, 12])
"""

from __future__ import annotations

from ..._core.hints import Shape
from ..._tensor.tensor import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim`` through ``end_dim`` (by default all but the batch dim).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Flatten(0, -1)(torch.ones(2, 3)).shape
        torch.Size([6])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Unflatten(1, (2, 3))(torch.ones(4, 6)).shape
        torch.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size: Shape) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten with a named dim is not supported (no named "
                                      "tensors in retrograd)")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
