"""torch.special's orthogonal polynomials: ``chebyshev_polynomial_t/u/v/w``, their
``shifted_`` forms, ``hermite_polynomial_h/he``, ``laguerre_polynomial_l`` and
``legendre_polynomial_p``, each ``f(x, n)`` with x and n tensors or one of them a
number; no gradient, as in PyTorch (Note [Polynomial kernels] in
ops/records/polynomials.py).

Example:
    >>> import retrograd as torch
    >>> torch.special.chebyshev_polynomial_t(torch.tensor([0.5]), 2)
    tensor([-0.5000])
"""

from __future__ import annotations

from .._core.hints import Number
from .._tensor.tensor import _LEGACY_NAMES, Tensor
from ..ops.argcheck import invalid_combination
from ..ops.records import polynomials as TP
from .pointwise import _binary_overload
from .special import _out

__all__ = list(TP.__all__)

_SIGNATURES = ("Tensor x, Tensor n, *, Tensor out = None",
               "Number x, Tensor n, *, Tensor out = None",
               "Tensor x, Number n, *, Tensor out = None")


def _polynomial(op, summary: str, example: str, shown: str):
    name = "special_" + op.name

    def fn(x: Tensor | Number, n: Tensor | Number) -> Tensor:
        for t in (x, n):
            if isinstance(t, Tensor) and t.dtype.name in ("float16", "bfloat16"):
                raise NotImplementedError(
                    f"\"{op.name}_cpu\" not implemented for '{_LEGACY_NAMES[t.dtype.name]}' "
                    "(PyTorch's CPU kernel has float32/float64 loops: convert first, e.g. "
                    "x.float())")
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise invalid_combination(name, (x, n), _SIGNATURES)
        return _binary_overload(op, op, op, x, n)

    fn.__name__ = fn.__qualname__ = op.name
    fn = _out(name)(fn)
    fn.__doc__ = (f"{summary} (no gradient, as in PyTorch).\n\n    Example:\n"
                  "        >>> import retrograd as torch\n"
                  f"        >>> torch.special.{op.name}({example})\n        {shown}\n")
    return fn


_X = "torch.tensor([0.5, 2.]), 3"
chebyshev_polynomial_t = _polynomial(
    TP.chebyshev_polynomial_t, "The Chebyshev polynomial of the first kind T_n(x)", _X,
    "tensor([-1., 26.])")
chebyshev_polynomial_u = _polynomial(
    TP.chebyshev_polynomial_u, "The Chebyshev polynomial of the second kind U_n(x)", _X,
    "tensor([-1., 56.])")
chebyshev_polynomial_v = _polynomial(
    TP.chebyshev_polynomial_v, "The Chebyshev polynomial of the third kind V_n(x)", _X,
    "tensor([-1., 41.])")
chebyshev_polynomial_w = _polynomial(
    TP.chebyshev_polynomial_w, "The Chebyshev polynomial of the fourth kind W_n(x)", _X,
    "tensor([-1., 71.])")
shifted_chebyshev_polynomial_t = _polynomial(
    TP.shifted_chebyshev_polynomial_t, "T_n(2x - 1), the first kind shifted to [0, 1]", _X,
    "tensor([-0., 99.])")
shifted_chebyshev_polynomial_u = _polynomial(
    TP.shifted_chebyshev_polynomial_u, "U_n(2x - 1), the second kind shifted to [0, 1]", _X,
    "tensor([ -0., 204.])")
shifted_chebyshev_polynomial_v = _polynomial(
    TP.shifted_chebyshev_polynomial_v, "V_n(2x - 1), the third kind shifted to [0, 1]", _X,
    "tensor([  1., 169.])")
shifted_chebyshev_polynomial_w = _polynomial(
    TP.shifted_chebyshev_polynomial_w, "W_n(2x - 1), the fourth kind shifted to [0, 1]", _X,
    "tensor([ -1., 239.])")
hermite_polynomial_h = _polynomial(
    TP.hermite_polynomial_h, "The physicists' Hermite polynomial H_n(x)", _X,
    "tensor([-5., 40.])")
hermite_polynomial_he = _polynomial(
    TP.hermite_polynomial_he, "The probabilists' Hermite polynomial He_n(x)", _X,
    "tensor([-1.3750,  2.0000])")
laguerre_polynomial_l = _polynomial(
    TP.laguerre_polynomial_l, "The Laguerre polynomial L_n(x)", _X,
    "tensor([-0.1458, -0.3333])")
legendre_polynomial_p = _polynomial(
    TP.legendre_polynomial_p, "The Legendre polynomial P_n(x)", _X,
    "tensor([-0.4375, 17.0000])")
