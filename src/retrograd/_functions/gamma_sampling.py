"""``torch._standard_gamma``, ``torch._standard_gamma_grad``, ``torch.poisson``,
``torch.binomial``, ``torch._sample_dirichlet`` and ``torch._dirichlet_grad``: the
samplers under Gamma, Chi2, StudentT, Beta, Dirichlet, Poisson, Binomial and
NegativeBinomial, with PyTorch's numbers after a seed (``retrograd._random.gamma``), and
the reparameterized gradients of gamma and Dirichlet samples (Notes [Implicit gamma
gradient] and [Implicit beta gradient] in ``ops/records/gamma.py``).

Example:
    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.poisson(torch.tensor([0.0, 0.0]))
    tensor([0., 0.])
"""

from __future__ import annotations

from .._random.rng import Generator
from .._tensor.tensor import _LEGACY_NAMES, Tensor
from ..ops.batch_rules import random_under_vmap
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import gamma as TG

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad",
           "poisson", "binomial"]


def _floating(kernel: str, t: Tensor) -> None:
    if not t.dtype.is_floating_point:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{_LEGACY_NAMES[t.dtype.name]}\' (the sampler '
            "takes floating-point parameters: convert first, e.g. x.double())")


@public(method=False)
@random_under_vmap(by_values=True)
def _standard_gamma(input: Tensor, generator=None) -> Tensor:
    """Gamma(input, 1) samples, pathwise differentiable w.r.t. ``input``.

    Example:
        >>> import retrograd as torch
        >>> a = torch.tensor([1.5, 3.0], requires_grad=True)
        >>> torch._standard_gamma(a).sum().backward()
        >>> a.grad.shape
        torch.Size([2])
    """
    _floating("gamma_cpu", input)
    return apply(TG.standard_gamma, (input,), generator)


@public(method=False)
def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """d output / d input for Gamma(input, 1) samples ``output`` at a fixed uniform
    (PyTorch's approximation of the implicit derivative).

    Example:
        >>> import retrograd as torch
        >>> torch._standard_gamma_grad(torch.tensor([2.0]), torch.tensor([2.0]))
        tensor([1.0862])
    """
    return apply(TG.standard_gamma_grad, (input, output))


@public(method=False)
@random_under_vmap(by_values=True)
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson samples with rates ``input`` (PyTorch's numbers after a seed).

    Example:
        >>> import retrograd as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.poisson(torch.tensor([4.0])).shape
        torch.Size([1])
    """
    _floating("poisson_cpu", input)
    if input.numel() and not bool((input._data >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative (a rate is "
                           "negative or nan: clamp the rates to [0, inf) first)")
    return apply(TG.poisson, (input,), generator)


@public(method=False)
@random_under_vmap(by_values=True)
def _sample_dirichlet(input: Tensor, generator=None) -> Tensor:
    """Dirichlet samples with concentrations ``input`` (last dim), PyTorch's numbers after a
    seed; no gradient (``Dirichlet.rsample`` differentiates through ``_dirichlet_grad``).

    Example:
        >>> import retrograd as torch
        >>> torch._sample_dirichlet(torch.ones(2, 3)).sum(-1)
        tensor([1., 1.])
    """
    _floating("dirichlet", input)
    return apply(TG.sample_dirichlet, (input,), generator)


@public(method=False)
def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """d x / d alpha of Dirichlet samples ``x`` through their Beta(alpha, total - alpha)
    marginals (PyTorch's approximation; Note [Implicit beta gradient]).

    Example:
        >>> import retrograd as torch
        >>> torch._dirichlet_grad(torch.tensor([0.5]), torch.tensor([1.0]), torch.tensor([2.0]))
        tensor([0.6931])
    """
    return apply(TG.dirichlet_grad, (x, alpha, total))


@public(method=False)
@random_under_vmap(by_values=True)
def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Binomial samples of ``count`` trials with success probability ``prob`` (broadcast),
    PyTorch's numbers after a seed.

    Example:
        >>> import retrograd as torch
        >>> torch.binomial(torch.tensor([3.0, 4.0]), torch.tensor([1.0, 0.0]))
        tensor([3., 0.])
    """
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_LEGACY_NAMES[t.dtype.name]}")
    return apply(TG.binomial, (count, prob), generator)
