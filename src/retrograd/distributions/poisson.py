"""The Poisson distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Poisson
    >>> Poisson(torch.tensor([2.])).log_prob(torch.tensor([0.]))
    tensor([-2.])
"""

from __future__ import annotations

from .._core.hints import Number, Shape
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson distribution with ``rate``; ``sample`` draws PyTorch's numbers.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Poisson
        >>> _ = torch.manual_seed(0)
        >>> Poisson(torch.tensor([0.])).sample()
        tensor([0.])
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: torch.Tensor | Number, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Poisson | None = None) -> Poisson:
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> torch.Tensor:
        return self.rate

    @property
    def mode(self) -> torch.Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> torch.Tensor:
        return self.rate

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (torch.log(self.rate),)

    def _log_normalizer(self, x):
        return torch.exp(x)
