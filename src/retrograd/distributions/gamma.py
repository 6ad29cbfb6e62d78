"""The gamma distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Gamma
    >>> Gamma(torch.tensor(2.), torch.tensor(4.)).mean
    tensor(0.5000)
"""

from __future__ import annotations

from .._core.hints import Shape
from ..special import gammainc
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and inverse scale ``rate``;
    ``rsample`` is pathwise (Note [Implicit gamma gradient] in ops/records/gamma.py).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Gamma
        >>> Gamma(torch.tensor([1.]), torch.tensor([1.])).log_prob(torch.tensor([2.]))
        tensor([-2.])
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: torch.Tensor | float, rate: torch.Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Gamma | None = None) -> Gamma:
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> torch.Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> torch.Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> torch.Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # do not record in autograd graph
        return value

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self) -> torch.Tensor:
        c = self.concentration
        return c - torch.log(self.rate) + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)
