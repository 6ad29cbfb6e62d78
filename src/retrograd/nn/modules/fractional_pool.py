"""``FractionalMaxPool2d`` and ``FractionalMaxPool3d``: max pooling over pseudo-random
windows that shrink the input by a fractional ratio (Graham, 2014).

Example:
    >>> import retrograd as torch
    >>> pool = torch.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    >>> pool(torch.ones(1, 2, 10, 10)).shape
    torch.Size([1, 2, 5, 5])
"""

from __future__ import annotations

from ..._core.hints import FloatOrFloats, ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(x, n: int):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,) * n


class _FractionalMaxPoolNd(Module):
    _nsp = 2

    def __init__(self, kernel_size: ShapeLike, output_size: ShapeLike | None = None,
                 output_ratio: FloatOrFloats | None = None, return_indices: bool = False,
                 _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._nsp
        self.kernel_size = _tuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, n) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, n) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        fn = F.fractional_max_pool2d if self._nsp == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (see ``F.fractional_max_pool2d``); ``_random_samples``
    (N, C, 2) fixes the windows, otherwise each call draws them.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.FractionalMaxPool2d(2, output_size=3)(torch.ones(3, 7, 7)).shape
        torch.Size([3, 3, 3])
    """

    _nsp = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (see ``F.fractional_max_pool3d``); ``_random_samples``
    (N, C, 3) fixes the windows, otherwise each call draws them.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.FractionalMaxPool3d(2, output_ratio=0.5)(torch.ones(1, 1, 6, 6, 6)).shape
        torch.Size([1, 1, 3, 3, 3])
    """

    _nsp = 3
