"""Op-database entries of torch.linalg and its top-level forms (loaded by opdb.py).

Samples are well conditioned, as PyTorch's own OpInfos for linalg are: square matrices
are a random matrix plus a multiple of the identity; symmetric positive-definite ones are
built inside the call (``x @ x.mT + n * I``) so that the gradient flows through the
construction; eigenvectors and singular vectors are compared after fixing their sign
(a gauge-invariant output: ``V * sign(V[..., :1, :])``).
"""

from __future__ import annotations

import numpy as np

from opdb import A, S, vals
from opdb import op as _op


def op(*args, **kw):
    """opdb's ``op`` with LAPACK's tolerances: NumPy's and PyTorch's LAPACK builds order
    their sums differently (float32: a few ULPs of a condition number near 10)."""
    kw.setdefault("f32_tol", (2e-5, 2e-5))
    kw.setdefault("f64_tol", (1e-10, 1e-11))
    return _op(*args, **kw)


def _sq(rng, shape, shift=4.0, layout=None):
    """A square matrix (batch) away from singular: entries in (-1, 1) plus ``shift * I``
    (diagonally dominant for n < 5)."""
    a = vals(rng, shape, "small") + shift * np.eye(shape[-1])
    if layout == "T":
        a = np.swapaxes(a, -1, -2)
    return A(a, layout=layout)


def _squares(rng):
    return [S(_sq(rng, (3, 3))), S(_sq(rng, (2, 3, 3)), desc="batched"),
            S(_sq(rng, (1, 1))), S(_sq(rng, (3, 3), layout="T"), desc="non-contiguous")]


def _spd(m, x):
    n = x.shape[-1]
    return x @ x.mT + n * m.eye(n, dtype=x.dtype)


def _sym(m, x):
    return x + x.mT


def _fix_cols(v, *others):
    """Flip column signs so row 0 is non-negative (and the matching rows of others)."""
    s = v[..., :1, :].sign()
    return (v * s,) + tuple(o * s.mT for o in others)


def _gen(samples):
    return lambda rng: samples(rng)


def _rect(rng):
    return [S(A(vals(rng, (3, 3)) + 2 * np.eye(3))), S(A(vals(rng, (4, 2)))),
            S(A(vals(rng, (2, 4)))), S(A(vals(rng, (2, 3, 2))), desc="batched")]


op("linalg.inv", lambda m, x: m.linalg.inv(x), _squares, ("linalg_inv_ex",))
op("linalg.inv_ex", lambda m, x: m.linalg.inv_ex(x), _squares, ("linalg_inv_ex",))
op("inverse", lambda m, x: x.inverse(), _squares, ("linalg_inv_ex",))
op("linalg.det", lambda m, x: m.linalg.det(x), _squares, ("linalg_det",))
op("det", lambda m, x: x.det(), _squares, ("linalg_det",))
op("linalg.slogdet", lambda m, x: m.linalg.slogdet(x), _squares, ("linalg_slogdet",))
op("logdet", lambda m, x: m.logdet(_spd(m, x)), _squares, ("linalg_slogdet",))
op("linalg.solve", lambda m, a, b, **kw: m.linalg.solve(a, b, **kw), lambda rng: [
    S(_sq(rng, (3, 3)), A(vals(rng, (3, 2)))),
    S(_sq(rng, (3, 3)), A(vals(rng, (3,))), desc="vector B"),
    S(_sq(rng, (2, 3, 3)), A(vals(rng, (2, 3))), desc="batch of vectors"),
    S(_sq(rng, (2, 3, 3)), A(vals(rng, (3, 2))), desc="B broadcast"),
    S(_sq(rng, (3, 3)), A(vals(rng, (2, 3))), left=False, desc="X A = B")],
    ("linalg_solve_ex",))
op("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b),
   lambda rng: [S(_sq(rng, (2, 3, 3)), A(vals(rng, (2, 3, 2))))], ("linalg_solve_ex",))
op("linalg.cholesky", lambda m, x, **kw: m.linalg.cholesky(_spd(m, x), **kw), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3))), desc="batched"),
    S(A(vals(rng, (3, 3))), upper=True)], ("linalg_cholesky_ex",))
op("linalg.cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_spd(m, x)),
   lambda rng: [S(A(vals(rng, (2, 3, 3))))], ("linalg_cholesky_ex",))
op("linalg.solve_triangular",
   lambda m, a, b, **kw: m.linalg.solve_triangular(a, b, **kw), lambda rng: [
       S(_sq(rng, (3, 3)), A(vals(rng, (3, 2))), upper=True),
       S(_sq(rng, (3, 3)), A(vals(rng, (3, 2))), upper=False),
       S(_sq(rng, (2, 3, 3)), A(vals(rng, (2, 4, 3))), upper=False, left=False),
       S(_sq(rng, (3, 3)), A(vals(rng, (2, 3, 2))), upper=True, unitriangular=True,
         desc="B batched")],
   ("linalg_solve_triangular",))
op("linalg.eigh", lambda m, x, *a: (lambda r: _fix_cols(r.eigenvectors) + (r.eigenvalues,))(
       m.linalg.eigh(_sym(m, x), *a)),
   lambda rng: [S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3)))),
                S(A(vals(rng, (3, 3))), "U")], ("linalg_eigh",),
   skips={"test_grad_fn_name": "the outputs are sign-fixed (MulBackward0); the node is "
                               "checked in test_linalg.py"})
op("linalg.eigvalsh", lambda m, x: m.linalg.eigvalsh(_sym(m, x)),
   lambda rng: [S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3))))], ("linalg_eigh",))
op("linalg.svd", lambda m, x, *a: (lambda r: _fix_cols(r.U, r.Vh) + (r.S,))(
    m.linalg.svd(x, *a)), lambda rng: _rect(rng) + [S(A(vals(rng, (3, 2))), True),
                                                   S(A(vals(rng, (2, 3))), False)],
   ("linalg_svd",),
   skips={"test_grad_fn_name": "the outputs are sign-fixed (MulBackward0); the node is "
                               "checked in test_linalg.py"})
op("linalg.svdvals", lambda m, x: m.linalg.svdvals(x), _rect, ("linalg_svd",))
op("linalg.qr", lambda m, x, *a: m.linalg.qr(x, *a),
   lambda rng: _rect(rng) + [S(A(vals(rng, (2, 3))), "complete")], ("linalg_qr",))
op("linalg.pinv", lambda m, x, **kw: m.linalg.pinv(x, **kw), lambda rng: _rect(rng) + [
    S(A(vals(rng, (3, 3))), rtol=0.1)], ("linalg_pinv",))
op("linalg.pinv_rank_deficient", lambda m, x, y: m.linalg.pinv(x @ y),
   lambda rng: [S(A(vals(rng, (3, 2))), A(vals(rng, (2, 4))), desc="rank 2 of 3")],
   ("linalg_pinv",))
op("linalg.pinv_hermitian", lambda m, x: m.linalg.pinv(_spd(m, x), hermitian=True),
   lambda rng: [S(A(vals(rng, (3, 3))))], ("linalg_pinv",))
op("pinverse", lambda m, x: x.pinverse(), _rect, ("linalg_pinv",))
op("linalg.matrix_exp", lambda m, x: m.linalg.matrix_exp(x), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3)))), S(A(vals(rng, (1, 1))))],
   ("linalg_matrix_exp",))
op("matrix_exp", lambda m, x: x.matrix_exp(), lambda rng: [S(A(vals(rng, (2, 2))))],
   ("linalg_matrix_exp",))
op("linalg.matrix_power", lambda m, x, n: m.linalg.matrix_power(x, n), lambda rng: [
    S(_sq(rng, (3, 3)), n) for n in (2, 3, 5, -1, -2)] + [S(_sq(rng, (2, 3, 3)), 6)],
   ("linalg_inv_ex",))
op("linalg.multi_dot", lambda m, *ts: m.linalg.multi_dot(ts), lambda rng: [
    S(A(vals(rng, (2, 3))), A(vals(rng, (3, 4)))),
    S(A(vals(rng, (3,))), A(vals(rng, (3, 4))), A(vals(rng, (4, 2))), A(vals(rng, (2,)))),
    S(A(vals(rng, (5, 2))), A(vals(rng, (2, 4))), A(vals(rng, (4, 1))))], ())
op("linalg.cross", lambda m, a, b, **kw: m.linalg.cross(a, b, **kw), lambda rng: [
    S(A(vals(rng, (4, 3))), A(vals(rng, (4, 3)))),
    S(A(vals(rng, (2, 1, 3))), A(vals(rng, (4, 3))), desc="broadcast"),
    S(A(vals(rng, (3, 2))), A(vals(rng, (3, 2))), dim=0)], ("linalg_cross",))
op("cross", lambda m, a, b: m.cross(a, b, dim=1),
   lambda rng: [S(A(vals(rng, (2, 3))), A(vals(rng, (2, 3))))], ("linalg_cross",))
op("linalg.diagonal", lambda m, x, **kw: m.linalg.diagonal(x, **kw), lambda rng: [
    S(A(vals(rng, (3, 4)))), S(A(vals(rng, (2, 3, 4))), offset=1)], ())
op("linalg.vander", lambda m, x, **kw: m.linalg.vander(x, **kw), lambda rng: [
    S(A(vals(rng, (3,)))), S(A(vals(rng, (2, 3))), N=4)], ())


# ----------------------------------------------------------------------------------
# PyTorch's older top-level forms

def _chol(m, x, upper=False):
    lo = m.linalg.cholesky(_spd(m, x))
    return lo.mT if upper else lo


op("cholesky", lambda m, x, *a: _spd(m, x).cholesky(*a), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3)))), S(A(vals(rng, (3, 3))), True)],
   ("cholesky",))
op("cholesky_solve", lambda m, b, x, *a: m.cholesky_solve(b, _chol(m, x, *a), *a),
   lambda rng: [S(A(vals(rng, (3, 2))), A(vals(rng, (3, 3)))),
                S(A(vals(rng, (2, 3, 2))), A(vals(rng, (3, 3))), True, desc="upper, batched B")],
   ("cholesky_solve", "linalg_cholesky_ex"))
op("cholesky_inverse", lambda m, x, *a: _chol(m, x, *a).cholesky_inverse(*a),
   lambda rng: [S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 3, 3))), True)],
   ("cholesky_inverse", "linalg_cholesky_ex"))
op("svd", lambda m, x, *a: (lambda r: _fix_cols(r.U, r.V.mT) + (r.S,))(m.svd(x, *a)),
   lambda rng: _rect(rng) + [S(A(vals(rng, (3, 2))), False)], ("linalg_svd",),
   skips={"test_grad_fn_name": "the outputs are sign-fixed (MulBackward0); the node is "
                               "checked in test_linalg.py"})
op("svd_no_uv", lambda m, x: x.svd(compute_uv=False), _rect, ("linalg_svd",))
op("qr", lambda m, x, *a: m.qr(x, *a), lambda rng: [
    S(A(vals(rng, (4, 3)))), S(A(vals(rng, (3, 3))), False)], ("linalg_qr",))
op("triangular_solve", lambda m, b, a, *f: b.triangular_solve(a, *f), lambda rng: [
    S(A(vals(rng, (3, 2))), _sq(rng, (3, 3))),
    S(A(vals(rng, (3, 2))), _sq(rng, (2, 3, 3)), False, True, desc="lower, transposed"),
    S(A(vals(rng, (3, 2))), _sq(rng, (3, 3)), True, False, True, desc="unitriangular")],
   ("triangular_solve",))
op("kron", lambda m, a, b: m.kron(a, b), lambda rng: [
    S(A(vals(rng, (2, 3))), A(vals(rng, (2, 2)))), S(A(vals(rng, (3,))), A(vals(rng, (2, 2))))],
   ("unsafe_view",))


# ----------------------------------------------------------------------------------
# least squares, LU, norms, tensor forms


def _tall(rng, shape):
    a = vals(rng, shape, "small")
    k = min(shape[-2:])
    a[..., :k, :k] += 3 * np.eye(k)
    return A(a)


def _lstsq_samples(rng):
    return [S(_tall(rng, (4, 3)), A(vals(rng, (4, 2)))),
            S(_tall(rng, (4, 3)), A(vals(rng, (4,))), desc="vector B"),
            S(_tall(rng, (2, 4, 3)), A(vals(rng, (2, 4, 2))), driver="gelsd"),
            S(_tall(rng, (4, 3)), A(vals(rng, (4, 2))), driver="gelss"),
            S(_tall(rng, (3, 3)), A(vals(rng, (3, 2))), driver="gels")]


# (the singular values have no gradient in PyTorch: compared on their own)
op("linalg.lstsq", lambda m, a, b, **kw: tuple(m.linalg.lstsq(a, b, **kw))[:3], _lstsq_samples,
   ("linalg_lstsq",))
op("linalg.lstsq_singular_values",
   lambda m, a, b, **kw: m.linalg.lstsq(a, b, **kw).singular_values, _lstsq_samples,
   ("linalg_lstsq",), differentiable=False)
op("linalg.matrix_rank", lambda m, x, **kw: m.linalg.matrix_rank(x, **kw), lambda rng: [
    S(A(vals(rng, (3, 4)))), S(A(np.ones((2, 3, 3)))), S(A(np.diag([3.0, 0.2, 1e-3])), atol=0.1),
    S(A(np.diag([3.0, 0.2, 1e-3])), rtol=0.1, hermitian=True)], (), differentiable=False)
op("linalg.cond", lambda m, x, *p: m.linalg.cond(x, *p), lambda rng: [
    S(_sq(rng, (3, 3))), S(_sq(rng, (2, 3, 3)), -2), S(A(vals(rng, (4, 3)))),
    *(S(_sq(rng, (3, 3)), p, torch_grad=False,
        desc="PyTorch's backward fails here (an in-place write to its saved inverse): "
             "checked numerically")
      for p in ("fro", "nuc", 1, float("-inf")))], ("linalg_svd", "linalg_inv_ex"))
op("linalg.matrix_norm", lambda m, x, *a: m.linalg.matrix_norm(x, *a), lambda rng: [
    S(A(vals(rng, (3, 4))), o) for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"))] + [
    S(A(vals(rng, (2, 3, 4))), 1, (0, 2), True)], ("linalg_svd",))
op("linalg.lu", lambda m, x: m.linalg.lu(x), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 4, 3)))), S(A(vals(rng, (3, 5))))],
   ("linalg_lu",))
op("linalg.lu_factor", lambda m, x: m.linalg.lu_factor(x), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 4, 3)))), S(A(vals(rng, (3, 5))))],
   ("linalg_lu_factor_ex",))
op("linalg.lu_factor_ex", lambda m, x: m.linalg.lu_factor_ex(x),
   lambda rng: [S(A(vals(rng, (2, 3, 3))))], ("linalg_lu_factor_ex",))


def _lu_solve(m, x, b, **kw):
    lu, piv = m.linalg.lu_factor(x)
    return m.linalg.lu_solve(lu, piv, b, **kw)


op("linalg.lu_solve", _lu_solve, lambda rng: [
    S(_sq(rng, (3, 3)), A(vals(rng, (3, 2)))),
    S(_sq(rng, (2, 3, 3)), A(vals(rng, (2, 3, 2))), adjoint=True),
    S(_sq(rng, (3, 3)), A(vals(rng, (2, 3))), left=False),
    S(_sq(rng, (3, 3)), A(vals(rng, (2, 3))), left=False, adjoint=True)],
   ("linalg_lu_solve", "linalg_lu_factor_ex"))
op("lu_unpack", lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x)), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (4, 3)))), S(A(vals(rng, (2, 3, 4))))],
   ("linalg_lu_factor_ex",))
op("linalg.tensorinv", lambda m, x, **kw: m.linalg.tensorinv(x, **kw), lambda rng: [
    S(A(vals(rng, (4, 2, 2), "small") + 3 * np.eye(4).reshape(4, 2, 2)), ind=1)],
   ("linalg_inv_ex",))
op("linalg.tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b), lambda rng: [
    S(A(vals(rng, (2, 3, 6), "small") + 3 * np.eye(6).reshape(2, 3, 6)),
      A(vals(rng, (2, 3))))], ("linalg_solve_ex",))
op("linalg.householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
   lambda rng: [S(A(vals(rng, (4, 3))), A(vals(rng, (2,)))),
                S(A(vals(rng, (2, 3, 3))), A(vals(rng, (2, 3))))], ())
op("linalg.ldl_factor", lambda m, x: m.linalg.ldl_factor(_sym(m, x)), lambda rng: [
    S(A(vals(rng, (3, 3)))), S(A(vals(rng, (2, 4, 4))))], ("linalg_ldl_factor_ex",),
   differentiable=False)
op("linalg.ldl_solve", lambda m, x, b: m.linalg.ldl_solve(*m.linalg.ldl_factor(_sym(m, x)), b),
   lambda rng: [S(A(vals(rng, (3, 3))), A(vals(rng, (3, 2)))),
                S(A(vals(rng, (2, 3, 3))), A(vals(rng, (2, 3, 1))))],
   ("linalg_ldl_solve", "linalg_ldl_factor_ex"), differentiable=False)
