"""The exponential distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Exponential
    >>> Exponential(torch.tensor(2.)).mean
    tensor(0.5000)
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential distribution with rate ``rate``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Exponential
        >>> Exponential(torch.tensor([1.])).log_prob(torch.tensor([2.]))
        tensor([-2.])
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: torch.Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Exponential | None = None) -> Exponential:
        return self._expand_params(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> torch.Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> torch.Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> torch.Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        return torch.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        return -torch.log1p(-value) / self.rate

    def entropy(self) -> torch.Tensor:
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)

    @property
    def _mean_carrier_measure(self):
        return 0
