"""The half-normal distribution: ``|X|`` for a centred normal ``X``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import HalfNormal
    >>> HalfNormal(torch.tensor(1.)).cdf(torch.tensor(0.))
    tensor(0.)
"""

from __future__ import annotations

import math

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import HalfNormal
        >>> HalfNormal(torch.tensor([1.]), validate_args=False).log_prob(
        ...     torch.tensor([-1., 1.]))
        tensor([   -inf, -0.7258])
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: torch.Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: HalfNormal | None = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> torch.Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> torch.Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.scale)

    @property
    def variance(self) -> torch.Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: torch.Tensor | float) -> torch.Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> torch.Tensor:
        return self.base_dist.entropy() - math.log(2)
