"""retrograd.special: PyTorch's ``torch.special`` namespace (the special functions, their
kernels from SciPy, imported on first use: Note [Lazy SciPy] in ops/records/special.py).

Example:
    >>> import retrograd as torch
    >>> torch.special.gammaln(torch.tensor([3.]))
    tensor([0.6931])
"""

from __future__ import annotations

from ._functions.namespace import (
    digamma,
    erf,
    erfc,
    erfinv,
    exp2,
    expm1,
    i0,
    log1p,
    log_softmax,
    logit,
    logsumexp,
    polygamma,
    sigmoid,
    sinc,
    softmax,
    xlogy,
)
from ._functions.namespace import lgamma as gammaln
from ._functions.namespace import mvlgamma as multigammaln
from ._functions.polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from ._functions.special import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    entr,
    erfcx,
    gammainc,
    gammaincc,
    i0e,
    i1,
    i1e,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    ndtr,
    ndtri,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)
from ._functions.special import special_round as round

expit = sigmoid
psi = digamma

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr",
           "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1",
           "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit",
           "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
