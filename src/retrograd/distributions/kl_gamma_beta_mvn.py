"""PyTorch's KL divergences that involve Gamma (and so Chi2), Beta, Dirichlet, Poisson,
Binomial or the multivariate normals, registered with ``kl_divergence`` when the package is
imported (kl.py holds the rest of the table).

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions import Gamma, kl_divergence
    >>> kl_divergence(Gamma(torch.tensor(2.), 1.), Gamma(torch.tensor(2.), 1.))
    tensor(0.)
"""

from __future__ import annotations

import math

from .. import linalg
from . import _torch as torch
from . import kl
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
    _diag_embed,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

__all__: list = []

register_kl = kl.register_kl


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = torch.lgamma(q.concentration) - torch.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * torch.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return kl._infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * torch.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return kl._infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c = p.concentration
    beta_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = beta_scale.log() + c / beta_scale
    t3 = torch.exp(loc_scale) * (1 + beta_scale.reciprocal()).pow(-c) - loc_scale
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    c = p.concentration
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * torch.log(beta_sqr * var_normal * 2 * math.pi) - c - c.lgamma()
    t2 = 0.5 * (c.pow(2) + c) / beta_sqr
    t3 = q.loc * c / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (c - 1) * c.digamma() + (t2 - t3 + t4) / var_normal


# the pairs whose p has unbounded support and q lives on [0, inf): infinite, as in kl.py
# and the pairs whose q lives on [0, 1]
for _q in (Gamma, Beta):
    for _p in (Gumbel, Laplace, Normal):
        register_kl(_p, _q)(kl._kl_loc_infinity)
register_kl(Exponential, Beta)(kl._kl_exponential_infinity)
register_kl(Pareto, Beta)(kl._kl_pareto_infinity)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = t1 + t2 + t3 + t4 - 1
    result[p.alpha <= 1] = math.inf
    return result


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (kl._x_log_x(p.high) - kl._x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    result[p.low < q.support.lower_bound] = math.inf
    return result


def _same_event_shape(p, q, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         f"cannot be computed ({p.event_shape} and {q.event_shape}: compare "
                         "distributions over vectors of one size)")


def _batch_trace_xxt(bmat):
    """The trace of ``X X^T`` over a batch of matrices: the sum of their squares."""
    return bmat.pow(2).reshape(bmat.shape[:-2] + (-1,)).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _same_event_shape(p, q, "Multivariate Normals")
    half_term1 = q._half_log_det() - p._half_log_det()
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    shape = torch.broadcast_shapes(q_tril.shape[:-2], p_tril.shape[:-2]) + (n, n)
    term2 = _batch_trace_xxt(linalg.solve_triangular(q_tril.expand(shape), p_tril.expand(shape),
                                                     upper=False))
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * torch.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * torch.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * torch.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - torch.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return kl._infinite_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return (-p.entropy() - q.rate.log()
            + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0)))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    total = p.concentration1 + p.concentration0
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())
    t4 = q.rate * p.concentration1 / total
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (total + 1) + mean.pow(2)) * 0.5
    t4 = q.loc * mean
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = math.inf
    return result


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = torch.log(width)
    t2 = ((q.concentration1 - 1) * (kl._x_log_x(p.high) - kl._x_log_x(p.low) - width)
          / width)
    t3 = ((q.concentration0 - 1)
          * (kl._x_log_x(1 - p.high) - kl._x_log_x(1 - p.low) + width) / width)
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = math.inf
    return result


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    result = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                              - (-q.probs).log1p())
    more_trials = p.total_count > q.total_count
    result[more_trials] = kl._infinite_like(result[more_trials])
    return result


def _lowrank_parts(q, p_loc):
    """log|Sigma_q|, the Mahalanobis term of ``q.loc - p_loc`` and ``C^-1 W^T D^-1`` of a
    low-rank q."""
    w, d = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    logdet = _batch_lowrank_logdet(w, d, q._capacitance_tril)
    maha = _batch_lowrank_mahalanobis(w, d, q.loc - p_loc, q._capacitance_tril)
    a = linalg.solve_triangular(q._capacitance_tril, w.mT / d.unsqueeze(-2), upper=False)
    return logdet, maha, a


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event_shape(p, q, "Low Rank Multivariate Normals")
    q_logdet, term3, a = _lowrank_parts(q, p.loc)
    term1 = q_logdet - p._logdet()
    p_w, p_d, q_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, \
        q._unbroadcasted_cov_diag
    term2 = ((p_d / q_d).sum(-1) + _batch_trace_xxt(p_w * q_d.rsqrt().unsqueeze(-1))
             - _batch_trace_xxt(a * p_d.sqrt().unsqueeze(-2))
             - _batch_trace_xxt(a.matmul(p_w)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    q_logdet, term3, a = _lowrank_parts(q, p.loc)
    term1 = q_logdet - 2 * p._half_log_det()
    p_tril = p._unbroadcasted_scale_tril
    term2 = (_batch_trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _batch_trace_xxt(a.matmul(p_tril)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _same_event_shape(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * q._half_log_det() - p._logdet()
    q_tril = q._unbroadcasted_scale_tril
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    n = p.event_shape[0]
    batch = torch.broadcast_shapes(q_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2])
    q_tril = q_tril.expand(batch + (n, n))
    p_w = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_d = _diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term2 = (_batch_trace_xxt(linalg.solve_triangular(q_tril, p_w, upper=False))
             + _batch_trace_xxt(linalg.solve_triangular(q_tril, p_d, upper=False)))
    return 0.5 * (term1 + term2 + term3 - n)
