"""The negative binomial distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import NegativeBinomial
    >>> NegativeBinomial(3., torch.tensor([0.5])).mean
    tensor([3.])
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .binomial import _CountAndProbs
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_CountAndProbs):
    """The number of successes before ``total_count`` failures of Bernoulli trials with
    success probability ``probs`` (or ``logits``); ``sample`` is a Poisson of a Gamma, as
    PyTorch draws it.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import NegativeBinomial
        >>> NegativeBinomial(1., torch.tensor([0.5])).log_prob(torch.tensor([0.]))
        tensor([-0.6931])
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> torch.Tensor:
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self) -> torch.Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> torch.Tensor:
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * torch.F.logsigmoid(-self.logits) + value * torch.F.logsigmoid(
            self.logits)
        log_normalization = (-torch.lgamma(n + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(n))
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
