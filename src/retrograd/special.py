"""retrograd.special: PyTorch's ``torch.special`` namespace (the special functions, their
kernels from SciPy, imported on first use: Note [Lazy SciPy] in ops/table_special.py).

Example:
    >>> import retrograd as torch
    >>> torch.special.gammaln(torch.tensor([3.]))
    tensor([0.6931])
"""

from __future__ import annotations

from .ops.functions import (
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
from .ops.functions import lgamma as gammaln
from .ops.functions import mvlgamma as multigammaln
from .ops.special_math import (
    bessel_j0,
    bessel_j1,
    entr,
    erfcx,
    i0e,
    i1,
    i1e,
    log_ndtr,
    ndtr,
    ndtri,
    xlog1py,
    zeta,
)
from .ops.special_math import special_round as round  # noqa: A004

expit = sigmoid
psi = digamma

__all__ = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]
