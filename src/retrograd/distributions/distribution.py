"""``Distribution``: the base class of every distribution (shapes, sampling, scoring,
argument validation).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Normal
    >>> d = Normal(torch.zeros(3), 1.0)
    >>> d.batch_shape, d.sample((2,)).shape
    (torch.Size([3]), torch.Size([2, 3]))
"""

from __future__ import annotations

import warnings

from .._core.hints import Shape
from . import _torch as torch
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_FIX = ("\n(Fix the values or the distribution's parameters, or pass validate_args=False "
        "to turn this check off.)")


class Distribution:
    """The abstract base class of probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of one sample (without batching).
        validate_args: check parameters and values (default: ``__debug__``, settable with
            ``Distribution.set_default_validate_args``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Bernoulli
        >>> Bernoulli(torch.tensor([0.2, 0.7])).mean
        tensor([0.2000, 0.7000])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created afterwards.

        Example:
            >>> Distribution.set_default_validate_args(True)
        """
        if value not in [True, False]:
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Shape = torch.Size(), event_shape: Shape = torch.Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()
        super().__init__()

    def _validate_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # a lazily computed parameter (probs given, logits not yet built)
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}" + _FIX)

    def expand(self, batch_shape: Shape, _instance: Distribution | None = None) -> Distribution:
        """A new distribution with batch dimensions expanded to ``batch_shape`` (parameters
        are expanded views; no validation or broadcasting is repeated).

        Example:
            >>> from retrograd.distributions import Normal
            >>> Normal(0., 1.).expand((2, 3)).batch_shape
            torch.Size([2, 3])
        """
        raise NotImplementedError(f"{self.__class__.__name__} does not implement expand")

    @property
    def batch_shape(self) -> torch.Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> torch.Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint each tensor parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint:
        """The constraint describing the distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> torch.Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> torch.Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> torch.Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> torch.Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        """A ``sample_shape`` batch of samples, without gradients.

        Example:
            >>> import retrograd as torch
            >>> from retrograd.distributions import Normal
            >>> Normal(torch.zeros(2), 1.).sample((4,)).shape
            torch.Size([4, 2])
        """
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Shape = torch.Size()) -> torch.Tensor:
        """A reparameterized sample: gradients flow to the parameters."""
        raise NotImplementedError(
            f"{self.__class__.__name__} has no reparameterized sampler (has_rsample is "
            "False); use .sample() and a score-function estimator instead")

    def sample_n(self, n: int) -> torch.Tensor:
        """Deprecated: ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """The log of the density / mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value: torch.Tensor) -> torch.Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: torch.Tensor) -> torch.Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> torch.Tensor:
        """All values of a discrete distribution's support, along dim 0."""
        raise NotImplementedError

    def entropy(self) -> torch.Tensor:
        """The entropy, batched over ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> torch.Tensor:
        """``exp(entropy())``.

        Example:
            >>> import retrograd as torch
            >>> from retrograd.distributions import Categorical
            >>> Categorical(torch.ones(4)).perplexity()
            tensor(4.)
        """
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=torch.Size()):
        return torch.Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value) -> None:
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {torch.Size(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}" + _FIX)

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, names, param_shape=None):
        """The shared body of ``expand``: a new instance of ``cls`` whose parameters
        ``names`` (those set on ``self``) are expanded to ``param_shape``."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        shape = batch_shape if param_shape is None else torch.Size(param_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(shape))
        if "_param" in self.__dict__:  # probs or logits, whichever the instance was given
            new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return self.__class__.__name__ + "(" + args + ")"
