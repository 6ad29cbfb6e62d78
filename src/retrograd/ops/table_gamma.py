"""The derivative table of the gamma-family samplers: ``_standard_gamma`` (a Gamma(alpha, 1)
draw whose gradient w.r.t. alpha is the implicit reparameterization gradient),
``_standard_gamma_grad`` (that gradient, PyTorch's approximation) and ``poisson``.

Example:
    >>> import retrograd as torch
    >>> a = torch.tensor([2.0], requires_grad=True)
    >>> torch._standard_gamma(a).grad_fn.name()
    'StandardGammaBackward0'
"""

from __future__ import annotations

import numpy as np

from .. import _random_gamma
from ._core import Op
from .dispatch import apply
from .table import _zeros_rule
from .table_special import _scipy

__all__ = ["standard_gamma", "standard_gamma_grad", "poisson"]


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


standard_gamma = Op("_standard_gamma", lambda a, gen=None: _random_gamma.standard_gamma(gen, a),
                    (_standard_gamma_rule,), save=(0, "out"),
                    node_name="StandardGammaBackward0")
poisson = Op("poisson", lambda a, gen=None: _random_gamma.poisson(gen, a), (_zeros_rule,),
             node_name="PoissonBackward0")
