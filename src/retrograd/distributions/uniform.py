"""The continuous uniform distribution on ``[low, high)``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Uniform
    >>> Uniform(0., 4.).cdf(torch.tensor(1.))
    tensor(0.2500)
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniformly distributed samples from the half-open interval ``[low, high)``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Uniform
        >>> Uniform(torch.tensor([0.]), torch.tensor([2.])).entropy()
        tensor([0.6931])
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low: torch.Tensor | float, high: torch.Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Uniform | None = None) -> Uniform:
        return self._expand_params(Uniform, batch_shape, _instance, ("low", "high"))

    @property
    def mean(self) -> torch.Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> torch.Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> torch.Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> torch.Tensor:
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        rand = torch.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torch.log(lb.mul(ub)) - torch.log(self.high - self.low)

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> torch.Tensor:
        return torch.log(self.high - self.low)
