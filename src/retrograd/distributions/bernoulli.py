"""The Bernoulli distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Bernoulli
    >>> Bernoulli(torch.tensor(0.25)).variance
    tensor(0.1875)
"""

from __future__ import annotations

from .._core.hints import Number, Shape
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """Bernoulli distribution parameterized by ``probs`` or ``logits`` (not both).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Bernoulli
        >>> Bernoulli(logits=torch.tensor([0.])).log_prob(torch.tensor([1.]))
        tensor([-0.6931])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: torch.Tensor | Number | None = None,
                 logits: torch.Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        name, param, is_scalar = _probs_or_logits(probs, logits)
        setattr(self, name, param)
        self._param = param
        batch_shape = torch.Size() if is_scalar else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Bernoulli | None = None) -> Bernoulli:
        new = self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.probs

    @property
    def mode(self) -> torch.Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self) -> torch.Tensor:
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -torch.F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> torch.Tensor:
        return torch.F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                        reduction="none")

    @property
    def _natural_params(self):
        return (torch.log(self.probs / (1 - self.probs)),)  # logit(probs)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))

    @property
    def _mean_carrier_measure(self):
        return 0

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        values = torch.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
