"""The geometric distribution: the number of failures before the first success.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Geometric
    >>> Geometric(torch.tensor(0.25)).mean
    tensor(3.)
"""

from __future__ import annotations

from .._core.hints import Number, Shape
from . import _torch as torch
from . import constraints
from .distribution import Distribution
from .utils import (
    _probs_or_logits,
    broadcast_all,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric distribution with success probability ``probs`` (or ``logits``), on
    ``{0, 1, 2, ...}``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Geometric
        >>> Geometric(torch.tensor([0.5])).log_prob(torch.tensor([1.]))
        tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: torch.Tensor | Number | None = None,
                 logits: torch.Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        name, param, is_scalar = _probs_or_logits(probs, logits)
        setattr(self, name, param)
        super().__init__(torch.Size() if is_scalar else param.size(),
                         validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value[~valid]}\n(A geometric distribution needs a "
                    "success probability above 0; pass probs in (0, 1].)")

    def expand(self, batch_shape: Shape, _instance: Geometric | None = None) -> Geometric:
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self) -> torch.Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> torch.Tensor:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> torch.Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> torch.Tensor:
        return torch.F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                        reduction="none") / self.probs
