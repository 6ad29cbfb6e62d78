"""The relaxed one-hot categorical (Concrete / Gumbel-softmax) distribution and its
log-space form.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import RelaxedOneHotCategorical
    >>> d = RelaxedOneHotCategorical(torch.tensor(0.5), logits=torch.zeros(3))
    >>> bool((d.rsample().sum() - 1).abs() < 1e-6)  # on the simplex, up to rounding
    True
"""

from __future__ import annotations

import math

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a relaxed one-hot categorical sample at ``temperature``
    (Jang et al., 2017; Maddison et al., 2017).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import ExpRelaxedCategorical
        >>> ExpRelaxedCategorical(torch.tensor(1.), logits=torch.zeros(2)).event_shape
        torch.Size([2])
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: torch.Tensor, probs: torch.Tensor | None = None,
                 logits: torch.Tensor | None = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: ExpRelaxedCategorical | None = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> torch.Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> torch.Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> torch.Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(torch.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # lgamma(K) of PyTorch's formula is a constant of the integer K
        log_scale = (torch.full_like(self.temperature, math.lgamma(k))
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Gumbel-softmax samples on the simplex: ``exp`` of an ``ExpRelaxedCategorical``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import RelaxedOneHotCategorical
        >>> RelaxedOneHotCategorical(torch.tensor(2.), probs=torch.tensor([0.1, 0.9])).probs
        tensor([0.1000, 0.9000])
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: torch.Tensor, probs: torch.Tensor | None = None,
                 logits: torch.Tensor | None = None, validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: RelaxedOneHotCategorical | None = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self) -> torch.Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> torch.Tensor:
        return self.base_dist._categorical.logits

    @property
    def probs(self) -> torch.Tensor:
        return self.base_dist._categorical.probs
