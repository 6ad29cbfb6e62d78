"""``Independent``: reinterpret batch dimensions of a distribution as event dimensions.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Independent, Normal
    >>> d = Independent(Normal(torch.zeros(3, 2), 1.), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(torch.zeros(3, 2)).shape
    (torch.Size([3]), torch.Size([2]), torch.Size([3]))
"""

from __future__ import annotations

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .distribution import Distribution
from .utils import _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims
    treated as event dims (log_prob and entropy sum over them).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Independent, Normal
        >>> Independent(Normal(torch.zeros(2), 1.), 1).entropy()
        tensor(2.8379)
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[:len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim:]
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Independent | None = None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = torch.Size(batch_shape)
        new.base_dist = self.base_dist.expand(
            batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> torch.Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> torch.Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> torch.Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> torch.Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented"
                                      "\n(Enumerate the base distribution's support instead.)")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
