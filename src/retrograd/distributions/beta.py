"""The beta distribution, a Dirichlet over two coordinates.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Beta
    >>> Beta(torch.tensor(2.), torch.tensor(2.)).mean
    tensor(0.5000)
"""

from __future__ import annotations

from numbers import Number, Real

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta distribution with ``concentration1`` (alpha) and ``concentration0`` (beta);
    ``rsample`` is the first coordinate of a pathwise Dirichlet sample.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Beta
        >>> Beta(torch.tensor([1.]), torch.tensor([1.])).log_prob(torch.tensor([0.3]))
        tensor([0.])
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: torch.Tensor | float, concentration0: torch.Tensor | float,
                 validate_args: bool | None = None) -> None:
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            both = torch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Beta | None = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = torch.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> torch.Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> torch.Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> torch.Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Shape = ()) -> torch.Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = torch.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> torch.Tensor:
        return self._dirichlet.entropy()

    def _concentration(self, i: int):
        result = self._dirichlet.concentration[..., i]
        return torch.tensor([result]) if isinstance(result, Number) else result

    @property
    def concentration1(self) -> torch.Tensor:
        return self._concentration(0)

    @property
    def concentration0(self) -> torch.Tensor:
        return self._concentration(1)

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)
