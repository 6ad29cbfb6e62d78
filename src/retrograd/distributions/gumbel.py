"""The Gumbel (type-1 extreme value) distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Gumbel
    >>> Gumbel(torch.tensor(0.), torch.tensor(1.)).mean
    tensor(0.5772)
"""

from __future__ import annotations

import math
from numbers import Number

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant, finfo

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel distribution with location ``loc`` and scale ``scale``, sampled as
    ``loc - scale * log(-log(U))``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Gumbel
        >>> Gumbel(torch.tensor([0.]), torch.tensor([1.])).log_prob(torch.tensor([0.]))
        tensor([-1.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: torch.Tensor | float, scale: torch.Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(torch.full_like(self.loc, info.tiny),
                                torch.full_like(self.loc, 1 - info.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv,
                      AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Gumbel | None = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> torch.Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @property
    def stddev(self) -> torch.Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> torch.Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> torch.Tensor:
        return self.scale.log() + (1 + euler_constant)
