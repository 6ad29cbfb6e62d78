"""``retrograd.distributions``: PyTorch's ``torch.distributions``, written in retrograd
Tensor ops, so log-probabilities, entropies, KL divergences and reparameterized samples
(``rsample``) carry gradients to every parameter, and samples drawn after
``manual_seed(s)`` are PyTorch's numbers where PyTorch draws them with a shared primitive
(``normal``, ``rand``, ``bernoulli``, ``multinomial``, ``exponential_``, ``uniform_``,
``cauchy_``).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Normal
    >>> loc = torch.tensor(0.5, requires_grad=True)
    >>> Normal(loc, 1.).log_prob(torch.tensor(1.)).backward()
    >>> loc.grad
    tensor(0.5000)
"""

from __future__ import annotations

from . import constraints, kl, kl_gamma_beta_mvn, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Gamma", "LowRankMultivariateNormal", "Multinomial",
    "MultivariateNormal", "NegativeBinomial", "Poisson", "StudentT",
    "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "Geometric", "Gumbel",
    "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
    "MixtureSameFamily", "Normal", "Pareto",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "TransformedDistribution", "Uniform", "VonMises", "Weibull",
    "biject_to",
    "constraints", "kl", "kl_divergence", "register_kl", "transform_to", "transforms",
]
__all__.extend(transforms.__all__)
