"""The derivative table of the gamma-family samplers: ``_standard_gamma`` (a Gamma(alpha, 1)
draw whose gradient w.r.t. alpha is the implicit reparameterization gradient),
``_standard_gamma_grad`` (that gradient, PyTorch's approximation), ``_sample_dirichlet``
and ``_dirichlet_grad`` (the same for Dirichlet samples), ``poisson`` and ``binomial``.

Example:
    >>> import retrograd as torch
    >>> a = torch.tensor([2.0], requires_grad=True)
    >>> torch._standard_gamma(a).grad_fn.name()
    'StandardGammaBackward0'
"""

from __future__ import annotations

import numpy as np

from ..._random import gamma
from ..dispatch import apply
from ..op import Op
from .elementwise import _zeros_rule
from .helpers import _not_implemented
from .special import _scipy

__all__ = ["standard_gamma", "standard_gamma_grad", "poisson", "sample_dirichlet",
           "dirichlet_grad", "binomial"]


# Note [Implicit gamma gradient]
# A gamma sample x = F^-1(u; alpha) moves with alpha at fixed u by
# dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha) (implicit differentiation of
# F(x; alpha) = u). PyTorch does not compute dF/dalpha exactly; its
# standard_gamma_grad_one (aten/src/ATen/native/Distributions.h) takes one of three
# approximations, by region, and so do we, vectorized:
# - x < 0.8: the series of the lower incomplete gamma function, six terms, for F and
#   dF/dalpha (a nan result becomes 0);
# - alpha > 8: Rice's saddle-point expansion (its own polynomial near x = alpha);
# - otherwise: a bivariate rational fit exp(p/q) in u = log(x/alpha), v = log(alpha).
_RATIONAL = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


def _small_x(alpha, x):
    numer, denom = np.ones_like(x), alpha.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    pdf = x ** (alpha - 1) * np.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (np.log(x) - _scipy("psi")(alpha)) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return np.where(np.isnan(result), 0.0, result)


def _large_alpha(alpha, x):
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x))
    polynomial = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / (alpha - x) ** 2
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return np.where(near, polynomial, -stirling * x * term1 / denom)


def _rational(alpha, x):
    u, v = np.log(x / alpha), np.log(alpha)
    c = _RATIONAL[0][:, None] + u.ravel() * (_RATIONAL[1][:, None] + u.ravel()
                                              * _RATIONAL[2][:, None])
    v = v.ravel()
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q).reshape(x.shape)


def _standard_gamma_grad_fwd(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha of Gamma(alpha, 1) samples x (Note [Implicit gamma gradient])."""
    dt = np.result_type(alpha, x)
    a, xs = np.broadcast_arrays(alpha.astype(np.float64), x.astype(np.float64))
    a, xs = np.array(a), np.array(xs)
    with np.errstate(all="ignore"):
        out = np.where(xs < 0.8, _small_x(a, xs),
                       np.where(a > 8.0, _large_alpha(a, xs), _rational(a, xs)))
    return out.astype(dt)


def _standard_gamma_grad_rule(g, s, n):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented. "
                              "(PyTorch has none either: the gradient of a gamma sample is "
                              "differentiated once)")


standard_gamma_grad = Op("_standard_gamma_grad", _standard_gamma_grad_fwd,
                         (_standard_gamma_grad_rule, _standard_gamma_grad_rule),
                         node_name="StandardGammaGradBackward0")


def _standard_gamma_rule(g, s, n):
    return g * apply(standard_gamma_grad, (s[0], s[1]))


standard_gamma = Op("_standard_gamma", lambda a, gen=None: gamma.standard_gamma(gen, a),
                    (_standard_gamma_rule,), save=(0, "out"),
                    node_name="StandardGammaBackward0")
poisson = Op("poisson", lambda a, gen=None: gamma.poisson(gen, a), (_zeros_rule,),
             node_name="PoissonBackward0")


# Note [Implicit beta gradient]
# Dirichlet (and Beta, a Dirichlet of two) samples are normalized gamma draws; PyTorch
# differentiates them implicitly through each coordinate's Beta(alpha, total - alpha)
# marginal: _dirichlet_grad(x, alpha, total) is -(dF/dalpha)(x) / f(x) / (1 - x) of that
# Beta, approximated by region as dirichlet_grad_one does (Distributions.h):
# - x <= 0.5 and total x (1 - x) < 2.5: a Taylor series at x = 0 (ten terms);
# - x >= 0.5 and total x (1 - x) < 0.75: the mirrored series for beta at 1 - x (eight);
# - alpha > 6 and beta > 6: Rice's saddle point (a polynomial within 0.1 std of the mean);
# - otherwise: a rational correction p/q (cubic in b, quadratic in u and a) of the
#   analytic x (digamma(total) - digamma(alpha)) / beta.
# We compute every region in double (PyTorch computes the two series in the element type,
# so float32 results may differ in the last bits).
_BETA_RATIONAL = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _beta_alpha_small(x, alpha, beta):
    psi = _scipy("psi")
    factor = psi(alpha) - psi(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_beta_small(x, alpha, beta):
    psi = _scipy("psi")
    factor = psi(alpha + beta) - psi(beta)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    pre_den = 12960 * alpha * alpha * alpha * b2 * (1 + 12 * total)
    at_mean = pre_num / (1 - x) * poly / pre_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * b2)
             / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x)))
             + alpha * np.log(alpha / (total * x))) ** -1.5
    away = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where(near, at_mean, away)


def _beta_rational(x, alpha, total):
    psi = _scipy("psi")
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    p, q = np.zeros_like(x), np.zeros_like(x)
    for i, pu in enumerate((1.0, u, u * u)):
        for j, pa in enumerate((1.0, a, a * a)):
            cp, cq = _BETA_RATIONAL[0, i, j], _BETA_RATIONAL[1, i, j]
            p = p + pu * pa * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + pu * pa * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    return p / q * (x * (psi(total) - psi(alpha)) / (total - alpha))


def _dirichlet_grad_fwd(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """PyTorch's ``_dirichlet_grad`` (Note [Implicit beta gradient])."""
    dt = np.result_type(x, alpha, total)
    xs, a, t = (np.array(v, dtype=np.float64) for v in np.broadcast_arrays(x, alpha, total))
    beta = t - a
    boundary = t * xs * (1 - xs)
    with np.errstate(all="ignore"):
        out = np.where(
            (xs <= 0.5) & (boundary < 2.5), _beta_alpha_small(xs, a, beta),
            np.where((xs >= 0.5) & (boundary < 0.75), -_beta_beta_small(1 - xs, beta, a),
                     np.where((a > 6) & (beta > 6), _beta_alpha_mid(xs, a, beta),
                              _beta_rational(xs, a, t))))
    return out.astype(dt)


_NO_RULE = ("(PyTorch has none: Dirichlet.rsample differentiates the sample through "
            "_dirichlet_grad instead)")
sample_dirichlet = _not_implemented(
    "_sample_dirichlet", lambda a, gen=None: gamma.dirichlet(gen, a), (True,), _NO_RULE)
dirichlet_grad = _not_implemented("_dirichlet_grad", _dirichlet_grad_fwd, (True, True, True),
                                  "(PyTorch's gradient of a Dirichlet sample is differentiated "
                                  "once)")
binomial = _not_implemented(
    "binomial", lambda n, p, gen=None: gamma.binomial(gen, n, p), (True, True),
    "(a binomial count has no gradient w.r.t. its count or probability)")
