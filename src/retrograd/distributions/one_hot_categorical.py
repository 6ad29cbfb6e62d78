"""The one-hot categorical distribution (and its straight-through variant).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import OneHotCategorical
    >>> OneHotCategorical(torch.tensor([0., 1.])).sample()
    tensor([0., 1.])
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A categorical distribution whose samples are one-hot vectors of size K.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import OneHotCategorical
        >>> OneHotCategorical(torch.tensor([1., 3.])).log_prob(torch.tensor([0., 1.]))
        tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: torch.Tensor | None = None, logits: torch.Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Shape,
               _instance: OneHotCategorical | None = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self) -> torch.Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> torch.Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> torch.Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> torch.Tensor:
        probs = self._categorical.probs
        return torch.F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self) -> torch.Tensor:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> torch.Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        probs = self._categorical.probs
        indices = self._categorical.sample(torch.Size(sample_shape))
        return torch.F.one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> torch.Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        n = self.event_shape[0]
        values = torch.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes gradients straight through to ``probs``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import OneHotCategoricalStraightThrough
        >>> OneHotCategoricalStraightThrough(torch.tensor([0., 1.])).has_rsample
        True
    """

    has_rsample = True

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
