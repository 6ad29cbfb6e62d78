"""Op records of torch.linalg: inverse, determinants, solves, Cholesky, eigh, SVD, QR, pinv,
the matrix exponential and the cross product. Part of the one table
(``ops/records/table.py`` gathers every record); the kernels are in
``ops/kernels/linalg.py``.

The rules are PyTorch's matrix-calculus forms (torch/csrc/autograd/FunctionsManual.cpp),
written in Tensor ops and in the records themselves (an inverse's rule takes inverses),
so second and higher derivatives come from the same rules (Note [Linear-algebra rules]).

Example:
    >>> import retrograd as torch
    >>> A = torch.tensor([[2., 1.], [1., 3.]], requires_grad=True)
    >>> torch.linalg.det(A).backward()
    >>> A.grad
    tensor([[ 3., -1.],
            [-1.,  2.]])
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import apply
from ..jvp_rules import jvp_by_double_vjp
from ..kernels import linalg as K
from ..op import Op
from .helpers import _not_implemented, rule_zeros, zeros_like_of
from .shape import _cat

# Note [Linear-algebra rules]
# Each decomposition is one record with several outputs (PyTorch's LinalgSvdBackward0
# and friends): its rule gets one gradient per output (None for an output that took
# none) and forms the input's gradient from PyTorch's formulas for real matrices:
#
# * inverse X = A^-1: gA = -X^T g X^T; det: g det(A) A^-T; slogdet: g_logabsdet A^-T
# * solve X = A^-1 B: gB = A^-T g, gA = -gB X^T (the transposed forms for X A = B)
# * cholesky A = L L^T: gA = L^-T Φ(L^T gL) L^-1 with Φ(P) = (P + tril(P, -1)^T) / 2 of
#   P = tril(L^T gL): symmetric, as PyTorch's
# * eigh A = V diag(w) V^T: gA = V (skew(V^T gV) / E + diag(gw)) V^T, skew(M) =
#   (M - M^T) / 2, E_ij = w_j - w_i (1 on the diagonal)
# * svd, qr, pinv, matrix_exp: PyTorch's svd_backward, linalg_qr_backward, pinv_backward
#   and the block-matrix form exp([[A^T, G], [0, A^T]])_12
#
# The rules call the records (``_inv``, ``_solve``, ``_tri``, ``_mexp``), so a backward
# with create_graph=True records them again and differentiates once more.
#
# Gauge: eigenvectors and singular vectors are defined up to sign for real inputs; the
# rules above give the gradient of any loss that does not depend on that sign. PyTorch
# checks the gauge only for complex inputs (the imaginary part of diag(V^H gV)); there is
# no complex dtype here, so there is nothing to check (a sign-dependent loss gets the
# gradient of the sign LAPACK chose, as in PyTorch).


def _eye(n: int, like):
    return _make(np.eye(n, dtype=like._data.dtype))


def _diag_embed(v):
    return v.unsqueeze(-1) * _eye(v.shape[-1], v)


def _inv(a):
    x, info = apply(linalg_inv_ex, (a,), None, nout=2)
    return x


def _solve(a, b, left: bool = True, vector: bool = False):
    return apply(linalg_solve_ex, (a, b), (left, vector), nout=2)[0]


def _tri(a, b, upper: bool, left: bool = True, unit: bool = False):
    return apply(linalg_solve_triangular, (a, b), (upper, left, unit))


def _inv_rule_checked(a, api: str):
    """A^-1 inside det's and slogdet's rules; a singular A has no such gradient form."""
    x, info = apply(linalg_inv_ex, (a,), None, nout=2)
    if np.any(info._data > 0):
        raise K.LinAlgError(
            f"{api}: the backward pass needs the inverse of A, and A is singular: log|det A| "
            "is -inf there and its gradient g * A^-T is not finite. (Differentiate "
            "linalg.det instead, whose gradient at a singular A is the cofactor matrix.)")
    return x


def _inv_vjp(g, s, n, needs):
    x = s[0]
    gx = g[0]
    if gx is None:
        return [None]
    xt = x.mT
    return [-(xt @ gx @ xt)]


linalg_inv_ex = Op("linalg_inv_ex", K.inv_ex, _inv_vjp, ("out",), jvp=jvp_by_double_vjp,
                   nondiff=())


def _det_fwd(a):
    return np.asarray(np.linalg.det(a), dtype=a.dtype)


def _det_rule(g, s, n):
    a, d = s
    x, info = apply(linalg_inv_ex, (a,), None, nout=2)
    if np.any(info._data > 0):
        return _det_rule_singular(g, a)
    return (g * d).unsqueeze(-1).unsqueeze(-1) * x.mT


def _det_rule_singular(g, a):
    """det's gradient where A may be singular: the cofactor matrix, from an SVD A = U S Vh,
    is det(U) det(Vh) U diag(prod_{j != i} s_j) Vh (PyTorch's singular path)."""
    u, sv, vh = apply(linalg_svd, (a,), False, nout=3)
    eye = _eye(sv.shape[-1], sv)
    others = (sv.unsqueeze(-2) * (1 - eye) + eye).prod(-1)  # prod_{j != i} s_j
    sign = _make(np.asarray(np.linalg.det(u._data) * np.linalg.det(vh._data),
                            dtype=a._data.dtype))
    return (g * sign).unsqueeze(-1).unsqueeze(-1) * ((u * others.unsqueeze(-2)) @ vh)


linalg_det = Op("linalg_det", _det_fwd, (_det_rule,), (0, "out"), jvp=jvp_by_double_vjp)


def _slogdet_fwd(a):
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)


def _slogdet_vjp(g, s, n, needs):
    a = s[0]
    gl = g[1]
    if gl is None:  # the sign is piecewise constant: no gradient, as PyTorch
        return [None]
    return [gl.unsqueeze(-1).unsqueeze(-1) * _inv_rule_checked(a, "linalg.slogdet").mT]


linalg_slogdet = Op("linalg_slogdet", _slogdet_fwd, _slogdet_vjp, (0,), jvp=jvp_by_double_vjp,
                    nondiff=())


def _solve_vjp(g, s, n, needs):
    a, x = s
    gx = g[0]
    if gx is None:
        return [None, None]
    left, vector = n._p
    gb = _solve(a.mT, gx, left, vector)
    ga = None
    if needs[0]:
        if vector:
            ga = -(gb.unsqueeze(-1) @ x.unsqueeze(-2))
        else:
            ga = -(gb @ x.mT) if left else -(x.mT @ gb)
    return [ga, gb if needs[1] else None]


linalg_solve_ex = Op("linalg_solve_ex", lambda a, b, p: K.solve_ex(a, b, *p), _solve_vjp,
                     (0, "out"), jvp=jvp_by_double_vjp, nondiff=())


def _cholesky_vjp(g, s, n, needs):
    lo = s[0]
    gl = g[0]
    if gl is None:
        return [None]
    if n._p:  # upper: A = U^T U with L = U^T
        lo, gl = lo.mT, gl.mT
    p = (lo.mT @ gl).tril()
    p = 0.5 * (p + p.tril(-1).mT)
    p = _tri(lo.mT, p, upper=True, left=True)
    return [_tri(lo, p, upper=False, left=False)]


linalg_cholesky_ex = Op("linalg_cholesky_ex", K.cholesky_ex, _cholesky_vjp, ("out",),
                        jvp=jvp_by_double_vjp, nondiff=())


def _tri_vjp(g, s, n, needs):
    a, x = s
    upper, left, unit = n._p
    gb = _tri(a.mT, g, not upper, left, unit)
    ga = None
    if needs[0]:
        ga = -(gb @ x.mT) if left else -(x.mT @ gb)
        ga = ga.triu(int(unit)) if upper else ga.tril(-int(unit))
    return [ga, gb if needs[1] else None]


linalg_solve_triangular = Op("linalg_solve_triangular",
                             lambda a, b, p: K.solve_triangular(a, b, *p), _tri_vjp,
                             (0, "out"), jvp=jvp_by_double_vjp, nondiff=())


def _eigh_vjp(g, s, n, needs):
    w, v = s
    gw, gv = g
    if gv is None:
        return [(v * gw.unsqueeze(-2)) @ v.mT]
    m = v.mT @ gv
    m = 0.5 * (m - m.mT)
    e = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(w.shape[-1], w)
    inner = m / e
    if gw is not None:
        inner = inner + _diag_embed(gw)
    return [v @ inner @ v.mT]


linalg_eigh = Op("linalg_eigh", K.eigh, _eigh_vjp, ("out", "out1"), jvp=jvp_by_double_vjp,
                 nondiff=())


def _svd_vjp(g, s, n, needs):
    u, sv, vh = s
    gu, gs, gvh = g
    m, k, ncols = u.shape[-2], sv.shape[-1], vh.shape[-1]
    if gu is None and gvh is None:
        if n._p and m != ncols:
            u, vh = u.narrow(-1, 0, k), vh.narrow(-2, 0, k)
        return [(u * gs.unsqueeze(-2)) @ vh]
    if n._p:  # full_matrices: only the first k columns of U and rows of Vh are determined
        u, vh = u.narrow(-1, 0, k), vh.narrow(-2, 0, k)
        gu = gu.narrow(-1, 0, k) if gu is not None else None
        gvh = gvh.narrow(-2, 0, k) if gvh is not None else None
    v = vh.mT
    s2 = sv * sv
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(k, sv)
    if gu is not None:
        uhgu = u.mT @ gu
        uhgu = uhgu - uhgu.mT
    if gvh is not None:
        gv = gvh.mT
        vhgv = v.mT @ gv
        vhgv = vhgv - vhgv.mT
    if gu is not None and gvh is not None:
        ga = (uhgu * sv.unsqueeze(-2) + sv.unsqueeze(-1) * vhgv) / e
    elif gu is not None:
        ga = (uhgu / e) * sv.unsqueeze(-2)
    else:
        ga = sv.unsqueeze(-1) * (vhgv / e)
    if gs is not None:
        ga = ga + _diag_embed(gs)
    if m > ncols and gu is not None:
        ga = u @ ga
        gus = gu / sv.unsqueeze(-2)
        ga = ga + gus - u @ (u.mT @ gus)
        return [ga @ vh]
    if m < ncols and gvh is not None:
        ga = ga @ vh
        sgvh = gvh / sv.unsqueeze(-1)
        ga = ga + sgvh - (sgvh @ v) @ vh
        return [u @ ga]
    return [u @ ga @ vh]


linalg_svd = Op("linalg_svd", K.svd, _svd_vjp, ("out", "out1", "out2"), jvp=jvp_by_double_vjp,
                nondiff=())


def _qr_vjp(g, s, n, needs):
    q, r = s
    gq, gr = g
    mode = n._p
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr.")
    m, ncols = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > ncols:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > "
            "ncols. (The last m - n columns of Q are not determined by A: use "
            "mode='reduced'.)")
    if m >= ncols:
        return [_qr_tall(gq, gr, q, r)]
    # wide: A = Q [R1 R2] is the square QR A1 = Q R1 and R2 = Q^T A2, so A2's gradient is
    # Q gR2 and Q's gradient gains A2 gR2^T before the square case's rule
    r1, r2 = r.narrow(-1, 0, m), r.narrow(-1, m, ncols - m)
    gr1 = gr2 = None
    if gr is not None:
        gr1, gr2 = gr.narrow(-1, 0, m), gr.narrow(-1, m, ncols - m)
        extra = (q @ r2) @ gr2.mT
        gq = extra if gq is None else gq + extra
    ga1 = _qr_tall(gq, gr1, q, r1)
    ga2 = q @ gr2 if gr2 is not None else zeros_like_of(r2)
    return [_cat([ga1, ga2], -1)]


def _qr_tall(gq, gr, q, r):
    """QR's rule for m >= n: gA = (gQ + Q sym(triu(gR R^T - Q^T gQ))) R^-T, ``sym``
    mirroring the upper triangle (diagonal once)."""
    if gq is not None:
        b = -(q.mT @ gq) if gr is None else gr @ r.mT - q.mT @ gq
    else:
        b = gr @ r.mT
    t = b.triu()
    t = t + t.mT - _diag_embed(t.diagonal(0, -2, -1))  # the diagonal once
    ga = q @ t
    if gq is not None:
        ga = ga + gq
    return _tri(r.mT, ga, upper=False, left=False)


linalg_qr = Op("linalg_qr", K.qr, _qr_vjp, ("out", "out1"), jvp=jvp_by_double_vjp, nondiff=())


def _pinv_fwd(a, p):
    atol, rtol, hermitian = p
    return K.pinv(a, atol, rtol, hermitian)


def _pinv_rule(g, s, n):
    a, x = s  # x = pinv(A)
    m, ncols = a.shape[-2:]
    xt, gt = x.mT, g.mT
    if m <= ncols:
        k = gt @ x
        kxt = k @ xt
        return -(x @ k).mT + kxt - (a @ x) @ kxt + (xt @ x) @ (gt - k @ a)
    k = x @ gt
    xtk = xt @ k
    return -(k @ x).mT + (gt - a @ k) @ x @ xt + xtk - xtk @ x @ a


linalg_pinv = Op("linalg_pinv", _pinv_fwd, (_pinv_rule,), (0, "out"), jvp=jvp_by_double_vjp)


def _mexp(a):
    return apply(linalg_matrix_exp, (a,))


def _mexp_rule(g, s, n):
    a = s[0]
    nn = a.shape[-1]
    at = a.mT
    top = _cat([at, g], -1)
    bottom = _cat([zeros_like_of(at), at], -1)
    big = _mexp(_cat([top, bottom], -2))
    return big.narrow(-2, 0, nn).narrow(-1, nn, nn)


linalg_matrix_exp = Op("linalg_matrix_exp", K.matrix_exp, (_mexp_rule,), (0,),
                       jvp=jvp_by_double_vjp)


def _cross(a, b, dim):
    return apply(linalg_cross, (a, b), dim)


linalg_cross = Op("linalg_cross", K.cross,
                  (lambda g, s, n: _cross(s[1], g, n._p), lambda g, s, n: _cross(g, s[0], n._p)),
                  (0, 1), save_if=((1,), (0,)), jvp=jvp_by_double_vjp)

#: the records, gathered by ops/records/table.py (the one table)
__all__ = ["linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_solve_ex",
           "linalg_cholesky_ex", "linalg_solve_triangular", "linalg_eigh", "linalg_svd",
           "linalg_qr", "linalg_pinv", "linalg_matrix_exp", "linalg_cross"]


# ---------------------------------------------------------------------------------
# PyTorch's older top-level forms, with their own nodes (CholeskyBackward0, ...)

def _cholesky_fwd(a, upper):
    lo, info = K.cholesky_ex(a, upper)
    K.raise_info("cholesky", info, "pd")
    return lo


cholesky = Op("cholesky", _cholesky_fwd,
              (lambda g, s, n: _cholesky_vjp([g], s, n, None)[0],), ("out",),
              jvp=jvp_by_double_vjp)


def _cholesky_solve_fwd(b, lo, upper):
    # A = L L^T (U^T U): two triangular solves
    y = K.solve_triangular(lo, b, upper, True, False) if not upper else \
        K.solve_triangular(np.swapaxes(lo, -1, -2), b, False, True, False)
    if upper:
        return K.solve_triangular(lo, y, True, True, False)
    return K.solve_triangular(np.swapaxes(lo, -1, -2), y, True, True, False)


def _cholesky_solve_vjp(g, s, n, needs):
    lo, x = s
    upper = n._p
    gb = apply(cholesky_solve, (g, lo), upper)
    gl = None
    if needs[1]:
        c = gb @ x.mT
        c = c + c.mT
        gl = -(lo @ c) if upper else -(c @ lo)
    return [gb if needs[0] else None, gl]


cholesky_solve = Op("cholesky_solve", _cholesky_solve_fwd, _cholesky_solve_vjp, (1, "out"),
                    jvp=jvp_by_double_vjp, nondiff=())


def _cholesky_inverse_fwd(lo, upper):
    eye = np.broadcast_to(np.eye(lo.shape[-1], dtype=lo.dtype), lo.shape)
    return _cholesky_solve_fwd(eye, lo, upper)


def _cholesky_inverse_rule(g, s, n):
    lo, x = s
    c = x @ (g + g.mT) @ x
    return -(lo @ c) if n._p else -(c @ lo)


cholesky_inverse = Op("cholesky_inverse", _cholesky_inverse_fwd, (_cholesky_inverse_rule,),
                      (0, "out"), jvp=jvp_by_double_vjp)


def _triangular_solve_fwd(b, a, p):
    upper, transpose, unit = p
    if transpose:
        x = K.solve_triangular(np.swapaxes(a, -1, -2), b, not upper, True, unit)
    else:
        x = K.solve_triangular(a, b, upper, True, unit)
    return x, np.array(np.broadcast_to(a, x.shape[:-2] + a.shape[-2:]))


def _triangular_solve_vjp(g, s, n, needs):
    a, x = s
    gx, gm = g
    upper, transpose, unit = n._p
    gb = ga = None
    if gx is not None:
        gb = apply(triangular_solve, (gx, a), (upper, not transpose, unit), nout=2)[0]
        if needs[1]:
            ga = -(x @ gb.mT) if transpose else -(gb @ x.mT)
            ga = ga.triu(int(unit)) if upper else ga.tril(-int(unit))
    if gm is not None and needs[1]:
        ga = gm if ga is None else ga + gm
    if gb is None and needs[0]:  # PyTorch's node gives b zeros when only the copy of A
        gb = rule_zeros(n.input_shape(0), n.input_dtype(0))  # took a gradient
    return [gb if needs[0] else None, ga]


triangular_solve = Op("triangular_solve", _triangular_solve_fwd, _triangular_solve_vjp,
                      (1, "out"), jvp=jvp_by_double_vjp, nondiff=())

__all__ += ["cholesky", "cholesky_solve", "cholesky_inverse", "triangular_solve"]


# ---------------------------------------------------------------------------------
# least squares and LU

def _lstsq_fwd(a, b, p):
    # (solution, residuals, rank, singular values) from one LAPACK run; the last two are
    # not differentiable (linalg.lstsq detaches them, as PyTorch's outputs 2 and 3)
    driver, rcond, vector = p
    x, rank, sv = K.lstsq(a, b, driver, rcond, vector)
    m, n = a.shape[-2:]
    if driver != "gelsy" and m > n and np.all(rank == n):  # PyTorch's residuals: squared
        bm = b[..., None] if vector else b  # column norms of A X - B (full-rank, tall A)
        r = a @ (x[..., None] if vector else x) - bm
        return x, (r * r).sum(-2), rank, sv
    return x, np.zeros((0,), a.dtype), rank, sv  # no residuals computed: empty, as PyTorch's


def _lstsq_vjp(g, s, n, needs):
    # PyTorch's linalg_lstsq_backward: X = pinv(A) B, differentiated through pinv
    a, b, x = s
    g, gres = g[0], g[1]
    vector = n._p[2]
    if vector:
        b, x = b.unsqueeze(-1), x.unsqueeze(-1)
        g = g.unsqueeze(-1) if g is not None else None
    ga = gb = None
    if g is not None:
        pa = apply(linalg_pinv, (a,), (None, None, False))
        ga = _pinv_rule(g @ b.mT, (a, pa), n) if needs[0] else None
        gb = pa.mT @ g if needs[1] else None
    if gres is not None and gres.shape[-1] != 0:  # residuals = |A X - B|^2 per column, at
        w = 2 * (a @ x - b) * gres.unsqueeze(-2)  # the optimum (A^T (A X - B) = 0)
        ga = w @ x.mT if ga is None else ga + w @ x.mT
        gb = -w if gb is None else gb - w
    if vector and gb is not None:
        gb = gb.squeeze(-1)
    return [ga if needs[0] else None, gb if needs[1] else None]


linalg_lstsq = Op("linalg_lstsq", _lstsq_fwd, _lstsq_vjp, (0, 1, "out"), jvp=jvp_by_double_vjp,
                  nondiff=())


def _lu_square_rule(gl, gu, lo, up):
    """A = L U (square, L unit lower): gA = L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T."""
    ga = None
    if gl is not None:
        ga = (lo.mT @ gl).tril(-1)
    if gu is not None:
        t = (gu @ up.mT).triu()
        ga = t if ga is None else ga + t
    ga = _tri(up.mT, ga, upper=False, left=False)
    return _tri(lo.mT, ga, upper=True, left=True, unit=True)


def lu_rule(gl, gu, p, lo, up):
    """The gradient of A = P L U (PyTorch's linalg_lu_backward): the square case, and a
    wide (tall) A split into a square LU and the part the extra columns (rows) add."""
    m, ncols = lo.shape[-2], up.shape[-1]
    if m == ncols:
        ga = _lu_square_rule(gl, gu, lo, up)
    elif m < ncols:  # A = L [U1 U2]: U2 = L^-1 P^T A2
        u1, u2 = up.narrow(-1, 0, m), up.narrow(-1, m, ncols - m)
        gu1 = gu2 = None
        if gu is not None:
            gu1, gu2 = gu.narrow(-1, 0, m), gu.narrow(-1, m, ncols - m)
            extra = -(_tri(lo.mT, gu2, upper=True, unit=True) @ u2.mT).tril(-1)
            gl = extra if gl is None else gl + extra
        ga1 = _lu_square_rule(gl, gu1, lo, u1)
        ga2 = _tri(lo.mT, gu2, upper=True, unit=True) if gu2 is not None else \
            zeros_like_of(u2)
        ga = _cat([ga1, ga2], -1)
    else:  # A = [L1; L2] U: L2 = (P^T A)_2 U^-1
        l1, l2 = lo.narrow(-2, 0, ncols), lo.narrow(-2, ncols, m - ncols)
        gl1 = gl2 = None
        if gl is not None:
            gl1, gl2 = gl.narrow(-2, 0, ncols), gl.narrow(-2, ncols, m - ncols)
            extra = -(l2.mT @ _tri(up.mT, gl2, upper=False, left=False)).triu()
            gu = extra if gu is None else gu + extra
        ga1 = _lu_square_rule(gl1, gu, l1, up)
        ga2 = _tri(up.mT, gl2, upper=False, left=False) if gl2 is not None else \
            zeros_like_of(l2)
        ga = _cat([ga1, ga2], -2)
    return p @ ga


def _lu_vjp(g, s, n, needs):
    p, lo, up = s
    return [lu_rule(g[1], g[2], p, lo, up)]


linalg_lu = Op("linalg_lu", lambda a, pivot: K.lu(a), _lu_vjp, ("out", "out1", "out2"),
               jvp=jvp_by_double_vjp, nondiff=())


def lu_unpack_tensors(lu_, p):
    """(L, U) of a packed LU (Tensor ops: the gradient flows to LU)."""
    m, ncols = lu_.shape[-2:]
    k = min(m, ncols)
    lo = lu_.narrow(-1, 0, k).tril(-1) + _make(np.eye(m, k, dtype=lu_._data.dtype))
    up = lu_.narrow(-2, 0, k).triu()
    return lo, up


def _lu_factor_fwd(a):
    lu_, piv, info = K.lu_factor(a)
    return lu_, piv, info


def _lu_factor_vjp(g, s, n, needs):
    lu_, piv = s
    gl = g[0]
    if gl is None:
        return [None]
    p = _make(K.perm_from_pivots(piv._data, lu_.shape[-2], lu_._data.dtype))
    lo, up = lu_unpack_tensors(lu_, p)
    m, ncols = lu_.shape[-2:]
    k = min(m, ncols)
    return [lu_rule(gl.tril(-1).narrow(-1, 0, k), gl.triu().narrow(-2, 0, k), p, lo, up)]


linalg_lu_factor_ex = Op("linalg_lu_factor_ex", _lu_factor_fwd, _lu_factor_vjp,
                         ("out", "out1"), jvp=jvp_by_double_vjp, nondiff=())


def _lu_solve_vjp(g, s, n, needs):
    lu_, piv, x = s
    left, adjoint = n._p
    gb = apply(linalg_lu_solve, (lu_, piv, g), (left, not adjoint))
    glu = None
    if needs[0]:
        # the gradient of op(A) (X = op(A)^-1 B, or B op(A)^-1), then through A = P L U
        gop = -(gb @ x.mT) if left else -(x.mT @ gb)
        ga = gop.mT if adjoint else gop
        p = _make(K.perm_from_pivots(piv._data, lu_.shape[-2], lu_._data.dtype))
        lo, up = lu_unpack_tensors(lu_, p)
        pga = p.mT @ ga
        glu = (pga @ up.mT).tril(-1) + (lo.mT @ pga).triu()
    return [glu, None, gb if needs[2] else None]


linalg_lu_solve = Op("linalg_lu_solve", lambda lu_, piv, b, p: K.lu_solve(lu_, piv, b, *p),
                     _lu_solve_vjp, (0, 1, "out"), jvp=jvp_by_double_vjp, nondiff=(1,))



def _lu_unpack_fwd(lu_, p):
    m, ncols = lu_.shape[-2:]
    k = min(m, ncols)
    lo = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=lu_.dtype)
    return lo, np.triu(lu_[..., :k, :])


def _lu_unpack_vjp(g, s, n, needs):
    gl, gu = g
    m, ncols = n.input_shape(0)[-2:]
    parts = []
    if gl is not None:
        gl = gl.tril(-1)
        if ncols > m:  # L is m x m: pad the columns
            gl = _cat([gl, _make(np.zeros(gl.shape[:-1] + (ncols - m,), gl._data.dtype))], -1)
        parts.append(gl)
    if gu is not None:
        gu = gu.triu()
        if m > ncols:  # U is n x n: pad the rows
            gu = _cat([gu, _make(np.zeros(gu.shape[:-2] + (m - ncols, ncols),
                                          gu._data.dtype))], -2)
        parts.append(gu)
    return [parts[0] if len(parts) == 1 else parts[0] + parts[1]]


lu_unpack = Op("lu_unpack", lambda lu_: _lu_unpack_fwd(lu_, None), _lu_unpack_vjp, (),
               jvp=jvp_by_double_vjp, nondiff=())



# ---------------------------------------------------------------------------------
# Householder products: Q = H_1 ... H_k (first n columns), H_i = I - tau_i v_i v_i^T

def _householder_fwd(a, tau):
    m, ncols = a.shape[-2:]
    v = np.tril(a, -1) + np.eye(m, ncols, dtype=a.dtype)
    q = np.broadcast_to(np.eye(m, dtype=a.dtype), a.shape[:-2] + (m, m)).copy()
    for i in range(tau.shape[-1]):
        vi = v[..., :, i:i + 1]
        q = q - ((q @ vi) * tau[..., i, None, None]) @ np.swapaxes(vi, -1, -2)
    return np.ascontiguousarray(q[..., :, :ncols])


def _householder_vjp(g, s, n, needs):
    """Reverse mode through Q_i = Q_{i-1} H_i, written in Tensor ops (so it differentiates
    again): gQ_{i-1} = G_i H_i, gH_i = Q_{i-1}^T G_i, g_tau_i = -v_i^T gH_i v_i,
    g_v_i = -tau_i (gH_i + gH_i^T) v_i; A's gradient is the strictly lower part of g_v."""
    a, tau = s
    m, ncols = a.shape[-2:]
    k = tau.shape[-1]
    v = a.tril(-1) + _make(np.eye(m, ncols, dtype=a._data.dtype))
    qs = [_make(np.broadcast_to(np.eye(m, dtype=a._data.dtype),
                                tuple(a.shape[:-2]) + (m, m)).copy())]
    vs = [v.narrow(-1, i, 1) for i in range(k)]
    taus = [tau.narrow(-1, i, 1).unsqueeze(-1) for i in range(k)]
    for i in range(k - 1):  # Q_0 .. Q_{k-1}
        qs.append(qs[-1] - ((qs[-1] @ vs[i]) * taus[i]) @ vs[i].mT)
    gq = g if m == ncols else _cat([g, _make(np.zeros(tuple(g.shape[:-1]) + (m - ncols,),
                                                      g._data.dtype))], -1)
    gv, gt = [None] * k, [None] * k
    for i in range(k - 1, -1, -1):
        vi, ti = vs[i], taus[i]
        gh = qs[i].mT @ gq
        gt[i] = -(vi.mT @ gh @ vi).squeeze(-1)
        gv[i] = -ti * ((gh + gh.mT) @ vi)
        gq = gq - ((gq @ vi) * ti) @ vi.mT
    ga = gtau = None
    if needs[0]:
        cols = gv + ([_make(np.zeros(tuple(a.shape[:-1]) + (ncols - k,), a._data.dtype))]
                     if ncols > k else [])
        ga = _cat(cols, -1).tril(-1)
    if needs[1]:
        gtau = _cat(gt, -1)
    return [ga, gtau]


linalg_householder_product = Op("linalg_householder_product", _householder_fwd,
                                _householder_vjp, (0, 1), jvp=jvp_by_double_vjp, nondiff=())

__all__ += ["linalg_lstsq", "linalg_lu", "linalg_lu_factor_ex", "linalg_lu_solve", "lu_unpack",
            "linalg_householder_product"]


# ---------------------------------------------------------------------------------
# LDL^T: no derivative in PyTorch (its NotImplemented node, its error on backward)

_LDL_HINT = ("PyTorch has no derivative for the LDL factorization either; differentiate "
             "through linalg.solve or linalg.cholesky instead.")
linalg_ldl_factor_ex = _not_implemented("linalg_ldl_factor_ex", K.ldl_factor_ex, (True,),
                                        _LDL_HINT)
linalg_ldl_solve = _not_implemented("linalg_ldl_solve", K.ldl_solve, (True, None, True),
                                    _LDL_HINT)
__all__ += ["linalg_ldl_factor_ex", "linalg_ldl_solve"]
