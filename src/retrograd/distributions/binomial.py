"""The binomial distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Binomial
    >>> Binomial(10, torch.tensor([0.5])).mean
    tensor([5.])
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """``clamp(x, min=0)`` whose gradient at 0 is 0.5 (PyTorch's choice)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class _CountAndProbs(Distribution):
    """The shared part of Binomial and NegativeBinomial: a ``total_count`` broadcast with
    ``probs`` or ``logits`` (not both) and cast to its dtype."""

    def __init__(self, total_count: torch.Tensor | float, probs: torch.Tensor | None = None,
                 logits: torch.Tensor | None = None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, param = ("probs", probs) if probs is not None else ("logits", logits)
        total_count, param = broadcast_all(total_count, param)
        self.total_count = total_count.type_as(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: _CountAndProbs | None = None) -> _CountAndProbs:
        new = self._expand_params(type(self), batch_shape, _instance,
                                  ("total_count", "probs", "logits"))
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)


class Binomial(_CountAndProbs):
    """Binomial distribution of ``total_count`` trials with ``probs`` or ``logits``;
    ``sample`` draws PyTorch's numbers (``torch.binomial``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Binomial
        >>> Binomial(2, torch.tensor([0.5])).log_prob(torch.tensor([1.]))
        tensor([-0.6931])
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: torch.Tensor | float = 1, probs: torch.Tensor | None = None,
                 logits: torch.Tensor | None = None, validate_args: bool | None = None) -> None:
        super().__init__(total_count, probs, logits, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> torch.Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> torch.Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> torch.Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalize_term = (n * _clamp_by_zero(logits)
                          + n * torch.log1p(torch.exp(-torch.abs(logits)))
                          - torch.lgamma(n + 1))
        return (value * logits - torch.lgamma(value + 1) - torch.lgamma(n - value + 1)
                - normalize_term)

    def _homogeneous_count(self, what: str) -> int:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self) -> torch.Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        total_count = self._homogeneous_count("enumerate_support")
        values = torch.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
