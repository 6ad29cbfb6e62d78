"""Op-database entries of torch.cdist and of torch.special's orthogonal polynomials,
loaded by tests/support/opdb.py:

* torch.cdist (ops/records/distance.py, Note [cdist records]): the direct kernel for every
  p branch (CdistBackward0, no double backward, as PyTorch) and the matrix-product path
  for p = 2 (EuclideanDistBackward0, twice differentiable);
* torch.special's orthogonal polynomials (ops/records/polynomials.py, Note [Polynomial
  kernels]): every branch (negative, 0, 1, recurrence and trigonometric degrees, the
  ends of the interval), integer-tensor and Python-number degrees; no gradient.
"""

from __future__ import annotations

import numpy as np

from opdb import A, S, _i64, op, vals

_MM = "use_mm_for_euclid_dist"
_DIRECT = "donot_use_mm_for_euclid_dist"


def _direct_samples(rng):
    out = [S(A(vals(rng, (3, 4))), A(vals(rng, (5, 4))), p)
           for p in (2.0, 1.0, 0.0, 3.0, 0.5, 1.5, float("inf"))]
    out += [
        S(A(vals(rng, (2, 3, 4))), A(vals(rng, (1, 5, 4))), 2.0, desc="broadcast batch dims"),
        S(A(vals(rng, (2, 1, 3, 2))), A(vals(rng, (3, 4, 2))), 1.5, compute_mode=_DIRECT),
        S(A(vals(rng, (4, 3)), layout="T"), A(vals(rng, (4, 2)), layout="T"), 3.0,
          desc="non-contiguous"),
        S(A(vals(rng, (3, 2))), A(vals(rng, (5, 2))), 2, compute_mode=_MM,
          desc="an int p of 2 with mm: the matrix-product path"),
        S(A(vals(rng, (0, 3))), A(vals(rng, (2, 3))), 2.0, desc="no rows"),
        S(A(vals(rng, (3, 0))), A(vals(rng, (2, 0))), 1.0, desc="no columns: zeros"),
        S(A([[0.0, 1.0], [2.0, 3.0]]), A([[0.0, 1.0], [1.0, 3.0]]), 2.0, check_grad=False,
          desc="a repeated row: distance 0, gradient 0"),
        S(A([[0.0, 1.0], [2.0, 3.0]]), A([[1.0, 0.0], [1.0, 3.0]]), float("inf"),
          check_grad=False, desc="ties of the max: each gets the gradient"),
    ]
    return out


def _mm_samples(rng):
    return [
        S(A(vals(rng, (3, 4))), A(vals(rng, (5, 4))), compute_mode=_MM),
        S(A(vals(rng, (2, 3, 2))), A(vals(rng, (2, 4, 2))), compute_mode=_MM),
        S(A(vals(rng, (2, 1, 3, 2))), A(vals(rng, (3, 4, 2))), compute_mode=_MM,
          desc="broadcast batch dims: expanded copies"),
        S(A(vals(rng, (1, 3, 2))), A(vals(rng, (4, 2))), compute_mode=_MM,
          desc="a batch of one: no expansion"),
        S(A(vals(rng, (26, 2))), A(vals(rng, (2, 2))), desc="the default, 26 rows: mm"),
    ]


op("cdist", lambda m, x, y, p, **k: m.cdist(x, y, p, **k), _direct_samples, ("cdist",),
   twice=False, f32_tol=(2e-5, 2e-5))
op("cdist.euclidean", lambda m, x, y, **k: m.cdist(x, y, **k), _mm_samples,
   ("euclidean_dist",), f32_tol=(2e-4, 2e-4), f64_tol=(1e-10, 1e-10))


# --- orthogonal polynomials ---------------------------------------------------------------
_DEGREES = np.array([-1, 0, 1, 2, 3, 5, 7, 9, 12])


def _poly_samples(lo: float, hi: float, ends: tuple):
    def gen(rng):
        x = np.concatenate([rng.uniform(lo, hi, 7), ends])
        out = [S(A(x[:, None], grad=False), _i64(_DEGREES[None, :]), desc="x by n"),
               S(A(vals(rng, (2, 3)) * (hi - lo) / 4 + (hi + lo) / 2, grad=False), 4),
               S(A(vals(rng, (3,)) * (hi - lo) / 4 + (hi + lo) / 2, grad=False), 11,
                 desc="a Python degree above the trigonometric threshold"),
               S(float(ends[0]) / 2 + float(ends[-1]) / 2, _i64(_DEGREES),
                 desc="a Python x"),
               S(A(vals(rng, (3, 1)), grad=False), A(np.array([2.0, 3.7, 6.0]), grad=False),
                 desc="a floating degree, truncated")]
        return out
    return gen


_CHEB = (-1.0, 1.0, (-1.0, 1.0, 1.5, -2.0))
_SHIFTED = (0.0, 1.0, (0.0, 1.0, 1.25, -0.5))
_WIDE = (-3.0, 3.0, (0.0, 1.0, -1.0))
for _name, (_lo, _hi, _ends) in {
        "chebyshev_polynomial_t": _CHEB, "chebyshev_polynomial_u": _CHEB,
        "chebyshev_polynomial_v": _CHEB, "chebyshev_polynomial_w": _CHEB,
        "shifted_chebyshev_polynomial_t": _SHIFTED, "shifted_chebyshev_polynomial_u": _SHIFTED,
        "shifted_chebyshev_polynomial_v": _SHIFTED, "shifted_chebyshev_polynomial_w": _SHIFTED,
        "hermite_polynomial_h": _WIDE, "hermite_polynomial_he": _WIDE,
        "laguerre_polynomial_l": (0.0, 4.0, (0.0, -1.0)), "legendre_polynomial_p": _CHEB,
}.items():
    op(f"special_{_name}", lambda m, x, n, _name=_name: getattr(m.special, _name)(x, n),
       _poly_samples(_lo, _hi, _ends), (_name,), differentiable=False, int_ok=True,
       f32_tol=(1e-4, 1e-4), f64_tol=(1e-10, 1e-11))
