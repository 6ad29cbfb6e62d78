"""The Dirichlet distribution.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Dirichlet
    >>> Dirichlet(torch.tensor([1., 3.])).mean
    tensor([0.2500, 0.7500])
"""

from __future__ import annotations

from .._core.hints import Shape
from ..autograd import Function
from ..autograd.function import once_differentiable
from . import _torch as torch
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = torch._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """A Dirichlet sample whose gradient w.r.t. the concentration is PyTorch's implicit
    one (Note [Implicit beta gradient] in ops/records/gamma.py), differentiable once."""

    @staticmethod
    def forward(ctx, concentration):
        x = torch._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex of the last dim of ``concentration``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Dirichlet
        >>> Dirichlet(torch.ones(3)).log_prob(torch.tensor([0.2, 0.3, 0.5]))
        tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: torch.Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Shape, _instance: Dirichlet | None = None) -> Dirichlet:
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",),
                                   torch.Size(batch_shape) + self.event_shape)

    def rsample(self, sample_shape: Shape = ()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (torch.xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1))
                - torch.lgamma(c).sum(-1))

    @property
    def mean(self) -> torch.Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> torch.Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = torch.F.one_hot(mode[mask].argmax(dim=-1), shifted.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> torch.Tensor:
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self) -> torch.Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (torch.lgamma(c).sum(-1) - torch.lgamma(a0) - (k - a0) * torch.digamma(a0)
                - ((c - 1.0) * torch.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))
