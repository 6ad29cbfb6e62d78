"""The continuous Bernoulli distribution on ``[0, 1]`` (Loaiza-Ganem and Cunningham, 2019).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import ContinuousBernoulli
    >>> ContinuousBernoulli(torch.tensor(0.2)).mean
    tensor(0.3880)
"""

from __future__ import annotations

import math

from .._core.hints import Number, Shape
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _probs_or_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Continuous Bernoulli distribution with shape ``probs`` (or ``logits``); near
    ``probs = 0.5`` (inside ``lims``) Taylor expansions replace the unstable closed forms.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import ContinuousBernoulli
        >>> ContinuousBernoulli(torch.tensor([0.5])).log_prob(torch.tensor([0.3]))
        tensor([0.])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs: torch.Tensor | Number | None = None,
                 logits: torch.Tensor | Number | None = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        name, param, is_scalar = _probs_or_logits(probs, logits)
        if name == "probs":
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(param).all()):
                raise ValueError("The parameter probs has invalid values"
                                 "\n(ContinuousBernoulli needs probs in [0, 1].)")
            param = clamp_probs(param)
        setattr(self, name, param)
        self._param = param
        self._lims = lims
        super().__init__(torch.Size() if is_scalar else param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: ContinuousBernoulli | None = None) -> ContinuousBernoulli:
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance,
                                  ("probs", "logits"))
        new._lims = self._lims
        return new

    def _outside_unstable_region(self):
        return torch.max(torch.le(self.probs, self._lims[0]),
                         torch.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return torch.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * torch.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log of the normalizing constant, as a function of the probs."""
        cut = self._cut_probs()
        below_half = torch.where(torch.le(cut, 0.5), cut, torch.zeros_like(cut))
        above_half = torch.where(torch.ge(cut, 0.5), cut, torch.ones_like(cut))
        log_norm = torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut))) - torch.where(
            torch.le(cut, 0.5), torch.log1p(-2.0 * below_half),
            torch.log(2.0 * above_half - 1.0))
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> torch.Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (torch.log1p(-cut) - torch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> torch.Tensor:
        return torch.sqrt(self.variance)

    @property
    def variance(self) -> torch.Tensor:
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / torch.pow(1.0 - 2.0 * cut, 2) + 1.0 / torch.pow(
            torch.log1p(-cut) - torch.log(cut), 2)
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with torch.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-torch.F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (torch.pow(cut, value) * torch.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (
            2.0 * cut - 1.0)
        unbounded = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(torch.le(value, 0.0), torch.zeros_like(value),
                           torch.where(torch.ge(value, 1.0), torch.ones_like(value), unbounded))

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        cut = self._cut_probs()
        return torch.where(
            self._outside_unstable_region(),
            (torch.log1p(-cut + value * (2.0 * cut - 1.0)) - torch.log1p(-cut))
            / (torch.log(cut) - torch.log1p(-cut)),
            value)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizer as a function of the logits (Taylor expansion near 0)."""
        outside = torch.max(torch.le(x, self._lims[0] - 0.5), torch.gt(x, self._lims[1] - 0.5))
        cut = torch.where(outside, x, (self._lims[0] - 0.5) * torch.ones_like(x))
        log_norm = torch.log(torch.abs(torch.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(outside, log_norm, taylor)

    def entropy(self) -> torch.Tensor:
        log_probs0 = torch.log1p(-self.probs)
        log_probs1 = torch.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0
