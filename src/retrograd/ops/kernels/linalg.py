"""NumPy/SciPy kernels of the linear-algebra records (``ops/records/linalg.py``) and
``LinAlgError``, PyTorch's error for singular and non-positive-definite inputs.

Every kernel takes arrays batched over leading dims and returns arrays (LAPACK through
``numpy.linalg``; SciPy, imported lazily, where NumPy has no routine: triangular solves,
the matrix exponential, the LU factor whose pivots name a singular input's zero).

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.linalg import inv_ex
    >>> inv_ex(np.array([[2., 0.], [0., 4.]]))[0]
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
"""

from __future__ import annotations

import numpy as np

from ..argcheck import broadcast_checked

__all__ = ["LinAlgError", "default_rtol", "kept", "inv_ex", "solve_ex", "cholesky_ex",
           "solve_triangular", "eigh", "svd", "qr", "pinv", "matrix_exp", "cross", "raise_info",
           "lstsq", "lu", "lu_factor", "perm_from_pivots", "lu_solve", "ldl_factor_ex", "ldl_solve"]


class LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError``: a singular or non-positive-definite input.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.linalg.inv(torch.zeros(2, 2))
        ... except torch.linalg.LinAlgError as e:
        ...     print(isinstance(e, RuntimeError), str(e)[:42])
        True linalg.inv: The diagonal element 1 is zero
    """


_EXPLAIN = {
    "singular": " (A has no inverse: check the input, or use linalg.pinv / linalg.lstsq for a "
                "least-squares answer, or the _ex form to get info instead of an error.)",
    "pd": " (Cholesky needs a symmetric positive-definite matrix: add a multiple of the "
          "identity, or use the _ex form to get info instead of an error.)",
}


# Note [LDL info]
# sytrf's info k > 0 says D[k-1, k-1] is exactly zero: the factorization is complete but
# D is singular. PyTorch's linalg.ldl_factor (and ldl_factor_ex with check_errors=True)
# raises a RuntimeError for it from an internal assert, "false INTERNAL ASSERT FAILED at
# ... torch.linalg.ldl_factor: Unknown error code: k." (no batch element named); we raise
# the same RuntimeError with the part after the assert boilerplate, then the cause and
# the fix.

def batch_of(a: np.ndarray, b: np.ndarray) -> tuple:
    """The broadcast batch (all dims but the last two) of two stacks of matrices, or
    PyTorch's broadcasting error (RuntimeError, "The size of tensor a ..."), not NumPy's.

    Example:
        >>> batch_of(np.zeros((2, 1, 3, 3)), np.zeros((4, 3, 1)))
        (2, 4)
    """
    return broadcast_checked("a linalg solve", ("B's batch", "A's batch"),  # (PyTorch's
                             (b.shape[:-2], a.shape[:-2]))  # solvers: tensor a is B's)

def raise_info(api: str, info: np.ndarray, kind: str) -> None:
    """Raise PyTorch's LinAlgError for the first batch element with ``info > 0``.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.kernels.linalg import raise_info
        >>> raise_info("linalg.inv", np.zeros(3, np.int32), "inv")  # all fine: returns
    """
    bad = np.argwhere(info > 0)
    if not len(bad):
        return
    idx = bad[0]
    code = int(info[tuple(idx)])
    where = ""
    if info.ndim:
        where = f"(Batch element {int(np.ravel_multi_index(tuple(idx), info.shape))}): "
    if kind == "ldl":  # Note [LDL info]
        raise RuntimeError(
            f"{api}: Unknown error code: {code}. ({where}LAPACK's sytrf found D[{code - 1},"
            f"{code - 1}] exactly zero: A is singular, so ldl_solve would divide by zero. Check "
            "the input, or call linalg.ldl_factor_ex to get info instead of an error.)")
    if kind == "lu":  # PyTorch raises a plain RuntimeError here, its text says the fix
        raise RuntimeError(
            f"{api}: {where}U[{code},{code}] is zero and using it on lu_solve would result in "
            "a division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    if kind == "inv":
        msg = (f"{api}: {where}The diagonal element {code} is zero, the inversion could not be "
               "completed because the input matrix is singular.")
        msg += _EXPLAIN["singular"]
    elif kind == "solve":
        msg = f"{api}: {where}The solver failed because the input matrix is singular."
        msg += _EXPLAIN["singular"]
    else:
        msg = (f"{api}: {where}The factorization could not be completed because the input is "
               f"not positive-definite (the leading minor of order {code} is not "
               "positive-definite).")
        msg += _EXPLAIN["pd"]
    raise LinAlgError(msg)


def _lapack(name: str, a: np.ndarray):
    from scipy.linalg import lapack  # lazily: `import retrograd` stays fast
    return lapack.get_lapack_funcs((name,), (a,))[0]


def _lu_info(a: np.ndarray) -> np.ndarray:
    """getrf's info per matrix: k > 0 when U[k-1, k-1] is exactly zero."""
    return lu_factor(a)[2]


def _lu_solve_each(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a^-1 b`` matrix by matrix through getrf/getrs, whatever the pivots (inf/nan for a
    singular ``a``, as LAPACK gives them to PyTorch)."""
    lu_, piv, _ = lu_factor(a)
    return lu_solve(lu_, piv, b, left=True, adjoint=False)


def inv_ex(a: np.ndarray):
    """(inverse, info): info[k] > 0 names the zero diagonal element of U (1-based)."""
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return _lu_solve_each(a, eye), _lu_info(a)


def solve_ex(a: np.ndarray, b: np.ndarray, left: bool, vector: bool):
    """(X, info) for ``A X = B`` (``X A = B`` if not ``left``); ``vector``: B is a
    (batch of) vector(s)."""
    if vector:
        b = b[..., None]
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = batch_of(a, b)
    try:
        x = np.linalg.solve(a, b)
        info = np.zeros(batch, np.int32)
    except np.linalg.LinAlgError:
        x = _lu_solve_each(np.broadcast_to(a, batch + a.shape[-2:]),
                           np.broadcast_to(b, batch + b.shape[-2:]))
        info = _lu_info(np.broadcast_to(a, batch + a.shape[-2:]))
    if not left:
        x = np.swapaxes(x, -1, -2)
    return (x[..., 0] if vector else x), info


def cholesky_ex(a: np.ndarray, upper: bool):
    """(L, info), or (U, info) with ``upper`` (read from A's upper triangle, as LAPACK's
    'U'); info[k] > 0: the order of the first leading minor that is not positive."""
    src = np.swapaxes(a, -1, -2) if upper else a
    try:
        lo = np.linalg.cholesky(src)
        info = np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        potrf = _lapack("potrf", a)
        lo = np.empty_like(src)
        info = np.zeros(a.shape[:-2], np.int32)
        for idx in np.ndindex(*a.shape[:-2]):
            c, k = potrf(src[idx], lower=1, clean=1)
            lo[idx], info[idx] = c, k
    return (np.ascontiguousarray(np.swapaxes(lo, -1, -2)) if upper else lo), info


def solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, left: bool, unit: bool):
    """``A^-1 B`` (``B A^-1`` if not ``left``) for a triangular A, broadcast over batches;
    a zero on the diagonal gives inf/nan, as in PyTorch (no error)."""
    import scipy.linalg as sl

    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b, upper = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    batch = batch_of(a, b)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    try:
        x = sl.solve_triangular(a, b, lower=not upper, unit_diagonal=unit, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        from scipy.linalg import blas

        trsm = blas.get_blas_funcs("trsm", (a, b))
        x = np.empty(b.shape, dtype=np.result_type(a, b))
        for idx in np.ndindex(*batch):
            with np.errstate(all="ignore"):
                x[idx] = trsm(1.0, a[idx], b[idx], lower=int(not upper), diag=int(unit))
    x = np.asarray(x, dtype=np.result_type(a, b))
    return np.swapaxes(x, -1, -2) if not left else x


def eigh(a: np.ndarray, uplo: str):
    """(eigenvalues ascending, eigenvectors) of a symmetric matrix (one triangle read)."""
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, v


def svd(a: np.ndarray, full_matrices: bool):
    """(U, S, Vh), singular values descending."""
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


def qr(a: np.ndarray, mode: str):
    """(Q, R); ``mode='r'``: Q is empty, as in PyTorch."""
    if mode == "r":
        return np.empty((0,), a.dtype), np.linalg.qr(a, mode="r")
    q, r = np.linalg.qr(a, mode=mode)
    return q, r


# Note [Singular-value tolerances]
# pinv, matrix_rank and lstsq treat a singular value as zero when it is at most
# max(atol, rtol * s_max), as PyTorch's get_atol_rtol: atol defaults to 0; rtol to
# eps(dtype) * max(m, n) (lstsq's rcond too), except where a given atol is positive, where
# it is 0 (elementwise over a batch of tolerances); the comparison runs in float64.
def default_rtol(dtype, m: int, n: int) -> float:
    """eps(dtype) * max(m, n): the default rtol / rcond (Note [Singular-value tolerances]).

    Example:
        >>> import numpy as np
        >>> default_rtol(np.float64, 3, 2) / float(np.finfo(np.float64).eps)
        3.0
    """
    return float(np.finfo(dtype).eps * max(m, n))


def kept(s: np.ndarray, atol, rtol, m: int, n: int) -> np.ndarray:
    """Which singular values (|eigenvalues|) ``s`` count as nonzero for an m x n matrix
    (``atol``/``rtol``: None, numbers or arrays broadcast against the batch).

    Example:
        >>> import numpy as np
        >>> kept(np.array([2.0, 1e-20]), None, None, 2, 2)
        array([ True, False])
    """
    a = np.asarray(0.0 if atol is None else atol, np.float64)
    if rtol is None:
        r = default_rtol(s.dtype, m, n)
        r = np.asarray(r if atol is None else np.where(a > 0, 0.0, r), np.float64)
    else:
        r = np.asarray(rtol, np.float64)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    return s > np.maximum(a[..., None], r[..., None] * smax)


def pinv(a: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    """Moore-Penrose inverse: singular values at most ``max(atol, rtol * s_max)`` count as
    zero (Note [Singular-value tolerances])."""
    m, n = a.shape[-2:]
    if hermitian:
        w, v = np.linalg.eigh(a)
        with np.errstate(divide="ignore"):
            inv = np.where(kept(np.abs(w), atol, rtol, m, n), 1.0 / w, 0.0).astype(a.dtype)
        return (v * inv[..., None, :]) @ np.swapaxes(v, -1, -2)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    with np.errstate(divide="ignore"):
        inv = np.where(kept(s, atol, rtol, m, n), 1.0 / s, 0.0).astype(a.dtype)
    return (np.swapaxes(vh, -1, -2) * inv[..., None, :]) @ np.swapaxes(u, -1, -2)


def matrix_exp(a: np.ndarray) -> np.ndarray:
    """``exp(A)`` (SciPy's scaling and squaring Padé approximant), batched."""
    import scipy.linalg as sl

    if a.size == 0:
        return a.copy()
    return np.asarray(sl.expm(a), dtype=a.dtype)


def cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    """The cross product of 3-vectors along ``dim``, operands broadcast."""
    a, b = np.broadcast_arrays(a, b)
    return np.cross(a, b, axis=dim)


def lstsq(a: np.ndarray, b: np.ndarray, driver: str, rcond, vector: bool):
    """(solution, rank, singular values) of min ||A X - B|| matrix by matrix (SciPy's
    LAPACK drivers; 'gels' through NumPy's QR-free gelsd, equal for full-rank A)."""
    import scipy.linalg as sl

    if vector:
        b = b[..., None]
    m, n = a.shape[-2:]
    batch = batch_of(a, b)
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if rcond is None:
        rcond = default_rtol(a.dtype, m, n)
    x = np.empty(batch + (n, b.shape[-1]), a.dtype)
    rank = np.zeros(batch, np.int64)
    sv = np.zeros(batch + (min(m, n),), a.dtype)
    for idx in np.ndindex(*batch):
        if driver == "gels":
            sol, _, r, s = np.linalg.lstsq(a[idx], b[idx], rcond=None)
        else:
            sol, _, r, s = sl.lstsq(a[idx], b[idx], cond=rcond, lapack_driver=driver,
                                    check_finite=False)
        x[idx], rank[idx] = sol, r
        if s is not None:
            sv[idx] = s
    return (x[..., 0] if vector else x), rank, sv


def lu(a: np.ndarray):
    """(P, L, U) with A = P L U (partial pivoting, LAPACK's getrf), batched."""
    import scipy.linalg as sl

    if a.size == 0:
        m, n = a.shape[-2:]
        k = min(m, n)
        bt = a.shape[:-2]
        return (np.broadcast_to(np.eye(m, dtype=a.dtype), bt + (m, m)).copy(),
                np.zeros(bt + (m, k), a.dtype), np.zeros(bt + (k, n), a.dtype))
    p, lo, up = sl.lu(a, check_finite=False)
    return p.astype(a.dtype), lo, up


def lu_factor(a: np.ndarray):
    """(LU, pivots (1-based, int32), info) matrix by matrix, as LAPACK's getrf."""
    getrf = _lapack("getrf", a)
    m, n = a.shape[-2:]
    out = np.empty(a.shape, a.dtype)
    piv = np.zeros(a.shape[:-2] + (min(m, n),), np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        lu_, p, k = getrf(a[idx])
        out[idx], piv[idx], info[idx] = lu_, p + 1, k
    return out, piv, info


def perm_from_pivots(piv: np.ndarray, m: int, dtype) -> np.ndarray:
    """The permutation matrix P (A = P L U) of LAPACK's 1-based row interchanges."""
    p = np.empty(piv.shape[:-1] + (m, m), dtype)
    for idx in np.ndindex(*piv.shape[:-1]):
        order = np.arange(m)
        for i, j in enumerate(piv[idx] - 1):
            order[i], order[j] = order[j], order[i]
        p[idx] = np.eye(m, dtype=dtype)[:, order]
    return p


def lu_solve(lu_: np.ndarray, piv: np.ndarray, b: np.ndarray, left: bool, adjoint: bool):
    """X with op(A) X = B (X op(A) = B if not ``left``), A = P L U given as getrf's
    (LU, pivots); op(A) = A^T with ``adjoint``."""
    getrs = _lapack("getrs", lu_)
    if not left:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        b, adjoint = np.swapaxes(b, -1, -2), not adjoint
    batch = batch_of(lu_, b)
    lu_ = np.broadcast_to(lu_, batch + lu_.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.empty(b.shape, np.result_type(lu_, b))
    for idx in np.ndindex(*batch):
        with np.errstate(all="ignore"):
            x[idx] = getrs(lu_[idx], piv[idx] - 1, b[idx], trans=int(adjoint))[0]
    return np.swapaxes(x, -1, -2) if not left else x


def ldl_factor_ex(a: np.ndarray):
    """(LD, pivots, info) of a symmetric A read from its lower triangle (LAPACK's sytrf:
    Bunch-Kaufman pivots, 1-based, negative for 2 x 2 blocks)."""
    sytrf = _lapack("sytrf", a)
    ld = np.zeros(a.shape, a.dtype)
    piv = np.zeros(a.shape[:-1], np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    for idx in np.ndindex(*a.shape[:-2]):
        f, p, k = sytrf(a[idx], lower=1)
        ld[idx], piv[idx], info[idx] = np.tril(f), p, k
    return ld, piv, info


def ldl_solve(ld: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B from ``ldl_factor``'s (LD, pivots) (LAPACK's sytrs)."""
    sytrs = _lapack("sytrs", ld)
    batch = batch_of(ld, b)
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.empty(b.shape, np.result_type(ld, b))
    for idx in np.ndindex(*batch):
        x[idx] = sytrs(ld[idx], piv[idx], b[idx], lower=1)[0]
    return x
