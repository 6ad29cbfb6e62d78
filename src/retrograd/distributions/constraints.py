"""The constraints of ``torch.distributions.constraints``: objects whose ``check(value)``
returns a bool tensor saying which events satisfy them (``event_dim`` rightmost dims
form one event). Distributions name them in ``arg_constraints`` and ``support``;
``constraint_registry`` maps them to transforms.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import constraints
    >>> constraints.positive.check(torch.tensor([-1., 2.]))
    tensor([False,  True])
    >>> constraints.interval(0., 1.)
    Interval(lower_bound=0.0, upper_bound=1.0)
"""

from __future__ import annotations

from .. import linalg
from . import _torch as torch
from .utils import finfo

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent",
    "dependent_property",
    "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
    "half_open_interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "multinomial", "nonnegative", "nonnegative_integer", "one_hot", "positive",
    "positive_definite", "positive_integer", "positive_semidefinite", "real", "real_vector",
    "simplex", "square", "stack", "symmetric",
    "unit_interval",
]


class Constraint:
    """A region over which a variable is valid; ``check`` says where a value lies in it.

    Example:
        >>> import retrograd as torch
        >>> real.check(torch.tensor([float('nan'), 1.]))
        tensor([False,  True])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A variable whose support depends on other variables (not checkable by itself)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """True for a dependent constraint (one validation skips).

    Example:
        >>> is_dependent(dependent), is_dependent(real)
        (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@property`` on instances, a dependent constraint on the class (``Uniform.support``)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A constraint whose ``reinterpreted_batch_ndims`` rightmost batch dims join the event:
    an event is valid when all its entries are."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        result = result.reshape(result.shape[:result.dim() - self.reinterpreted_batch_ndims]
                                + (-1,))
        return result.all(-1)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class MixtureSameFamilyConstraint(Constraint):
    """The component distribution's support, checked with the mixture dimension added
    back (the support of ``MixtureSameFamily``)."""

    def __init__(self, base_constraint: Constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        result = result.reshape(result.shape[:value.dim() - self.event_dim] + (-1,))
        return result.all(-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & value.sum(-1).eq(1)


def _bounds_repr(self, *names) -> str:
    inner = ", ".join(f"{n}={getattr(self, n)}" for n in names)
    return f"{self.__class__.__name__[1:]}({inner})"


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _IntegerLessThan(Constraint):
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return _bounds_repr(self, "upper_bound")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound")


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaNs


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound")


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return _bounds_repr(self, "upper_bound")


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return torch.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


def _all_of_matrix(mask):
    return mask.reshape(mask.shape[:-2] + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _all_of_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_of_matrix(value.tril() == value) & positive_diagonal


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10  # PyTorch's fudge factor
        row_norm = value.detach().square().sum(-1).sqrt()
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return torch.full(value.shape[:-2], value.shape[-2] == value.shape[-1],
                          dtype=torch.bool)


class _Symmetric(_Square):
    def check(self, value):
        square_check = super().check(value)
        if not square_check.all():
            return square_check
        return torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return linalg.cholesky_ex(value).info.eq(0)


class _Cat(Constraint):
    """Applies a sequence of constraints to consecutive slices of ``dim``."""

    def __init__(self, cseq, dim: int = 0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return torch.cat(checks, self.dim)


class _Stack(Constraint):
    """Applies a sequence of constraints to the slices of ``dim``."""

    def __init__(self, cseq, dim: int = 0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        if not -value.dim() <= self.dim < value.dim():
            raise IndexError(f"stack: dim {self.dim} out of range for a {value.dim()}-d value")
        slices = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return torch.stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


# the public constraint objects and factories
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
