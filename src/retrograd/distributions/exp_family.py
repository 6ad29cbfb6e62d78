"""``ExponentialFamily``: distributions of the form
``p(x; θ) = exp(<t(x), θ> - F(θ) + k(x))``, whose entropy and same-family KL divergence
follow from the log normalizer ``F`` by automatic differentiation (a Bregman divergence).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Exponential, ExponentialFamily
    >>> d = Exponential(torch.tensor([2.0]))
    >>> isinstance(d, ExponentialFamily), ExponentialFamily.entropy(d)
    (True, tensor([0.3069], grad_fn=<SubBackward0>))
"""

from __future__ import annotations

from .._tensor.tensor import Tensor
from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions: subclasses give
    ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.distributions import Normal
        >>> ExponentialFamily.entropy(Normal(torch.tensor([0.]), torch.tensor([1.])))
        tensor([1.4189], grad_fn=<SubBackward0>)
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy from the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for param, g in zip(nparams, gradients):
            result = result - (param * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
