"""The relaxed Bernoulli (binary Concrete) distribution and its logit form.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import RelaxedBernoulli
    >>> d = RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([0.3]))
    >>> d.rsample((2,)).shape
    torch.Size([2, 1])
"""

from __future__ import annotations

from .._core.hints import Number, Shape
from . import _torch as torch
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    _probs_or_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a relaxed Bernoulli sample (Maddison et al., 2017), at ``temperature``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import LogitRelaxedBernoulli
        >>> LogitRelaxedBernoulli(torch.tensor(1.), logits=torch.tensor([0.])).log_prob(
        ...     torch.tensor([0.]))
        tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: torch.Tensor, probs: torch.Tensor | Number | None = None,
                 logits: torch.Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        name, param, is_scalar = _probs_or_logits(probs, logits)
        setattr(self, name, param)
        self._param = param
        super().__init__(torch.Size() if is_scalar else param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: LogitRelaxedBernoulli | None = None) -> LogitRelaxedBernoulli:
        new = self._expand_params(LogitRelaxedBernoulli, batch_shape, _instance,
                                  ("probs", "logits"))
        new.temperature = self.temperature
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

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(torch.rand(shape, dtype=probs.dtype))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A relaxed Bernoulli on ``(0, 1)``: the sigmoid of a ``LogitRelaxedBernoulli``;
    reparameterizable, approaching a Bernoulli as the temperature goes to 0.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import RelaxedBernoulli
        >>> RelaxedBernoulli(torch.tensor(1.), logits=torch.tensor([0.])).log_prob(
        ...     torch.tensor([0.5]))
        tensor([0.])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: torch.Tensor, probs: torch.Tensor | Number | None = None,
                 logits: torch.Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: RelaxedBernoulli | None = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self) -> torch.Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> torch.Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> torch.Tensor:
        return self.base_dist.probs
