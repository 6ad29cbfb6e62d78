"""The torch.linalg functions built on the factorizations: ``lstsq``, ``matrix_rank``,
``cond``, the LU family (``lu``, ``lu_factor``, ``lu_factor_ex``, ``lu_solve``,
``torch.lu_unpack``), ``tensorinv``, ``tensorsolve``, ``householder_product``, and
``eig``/``eigvals``, which need a complex dtype retrograd does not have
(Note [No complex eigenvalues]).

Example:
    >>> import retrograd as torch
    >>> torch.linalg.matrix_rank(torch.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
"""

from __future__ import annotations

import math
from typing import NoReturn

import numpy as np

from .._core.hints import Shape
from .._tensor.tensor import Tensor, _make
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply, view_apply
from ..ops.kernels import linalg as K
from ..ops.public import FP32, autocast_category, public
from ..ops.records import linalg as TL
from ..ops.records import table as T
from .linalg import _check, _tol, _vector_rhs, inv, solve, svdvals
from .reductions import _rt, vector_norm

__all__ = ["lstsq", "matrix_norm", "matrix_rank", "cond", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "lu_unpack", "tensorinv", "tensorsolve", "householder_product", "eig",
           "eigvals", "ldl_factor", "ldl_factor_ex", "ldl_solve"]

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@autocast_category(FP32, name="linalg_lstsq")
@per_element_under_vmap
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None
          ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Least squares ``min ||A X - B||``: (solution, residuals, rank, singular_values), as
    PyTorch fills them per driver ('gelsy' by default on the CPU).

    Example:
        >>> import retrograd as torch
        >>> A = torch.tensor([[1., 0.], [0., 1.], [0., 0.]])
        >>> torch.linalg.lstsq(A, torch.tensor([[1.], [2.], [3.]])).solution
        tensor([[1.],
                [2.]])
    """
    _check(A, "linalg.lstsq", square=False)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss) (got {driver!r})")
    vector = _vector_rhs(A, B)
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2) "
                           f"(A is {tuple(A.shape)}, B is {tuple(B.shape)})")
    x, residuals, rank, sv = apply(TL.linalg_lstsq, (A, B), (driver, rcond, vector), nout=4)
    dt = A._data.dtype
    rank_t = _make(np.zeros((0,), np.int64)) if driver == "gels" else rank.detach()
    sv_t = sv.detach() if driver in ("gelsd", "gelss") else _make(np.zeros((0,), dt))
    return _rt("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))(
        x, residuals, rank_t, sv_t)


@autocast_category(FP32, name="linalg_matrix_rank")
@per_element_under_vmap
def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.matrix_rank(torch.eye(3))
        tensor(3)
    """
    _check(A, "linalg.matrix_rank", square=hermitian)
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(A._data))
    else:
        s = np.linalg.svd(A._data, compute_uv=False)
    nonzero = K.kept(s, _tol(atol), _tol(rtol), *A.shape[-2:])
    return _make(np.asarray(nonzero.sum(-1), np.int64))


_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)


@per_element_under_vmap
def matrix_norm(A: Tensor, ord: str | float = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False) -> Tensor:
    """A matrix norm over the two dims ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column sum of |A|), inf / -inf
    (max / min row sum).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.matrix_norm(torch.ones(2, 2))
        tensor(2.)
        >>> torch.linalg.matrix_norm(torch.tensor([[1., -2.], [3., 4.]]), float('inf'))
        tensor(7.)
    """
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions. (Got shape {tuple(A.shape)}: use linalg.vector_norm "
                           "for a vector.)")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{', '.join(map(str, dim))} (a matrix norm runs over two dims)")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = (d % A.ndim for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in (1, -1, math.inf, -math.inf):  # as PyTorch composes them
        summed, picked = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = vector_norm(A, 1, (summed,), keepdim)
        if not keepdim and summed < picked:
            picked -= 1
        return sums.amax(picked, keepdim) if ord > 0 else sums.amin(picked, keepdim)
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    s = svdvals(A.permute(rest + [d0, d1]))
    if ord == "nuc":
        res = s.sum(-1)
    else:
        res = s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        res = res.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return res


@autocast_category(FP32, name="linalg_cond")
@per_element_under_vmap
def cond(A: Tensor, p: str | float | None = None) -> Tensor:
    """The condition number: ``s_max / s_min`` for ``p`` None, 2 (-2: the inverse ratio);
    ``norm(A, p) * norm(inv(A), p)`` for 'fro', 'nuc', 1, -1, inf, -inf (inf where A is
    singular).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.cond(torch.tensor([[2., 0.], [0., 1.]]))
        tensor(2.)
    """
    if p in (None, 2, -2):
        _check(A, "linalg.cond", square=False)
        s = svdvals(A)
        k = s.shape[-1]
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, k - 1, 1)
        return (big / small if p != -2 else small / big).squeeze(-1)
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _check(A, f"linalg.cond(ord={p})")
    if p == "nuc":  # sum(s) * sum(1 / s), as PyTorch composes it
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    x, info = apply(TL.linalg_inv_ex, (A,), None, nout=2)
    x = x.masked_fill(_make(info._data > 0)[..., None, None], math.inf)
    return (matrix_norm(A, p) * matrix_norm(x, p)).nan_to_num(math.inf)


# ----------------------------------------------------------------------------------
# LU


@per_element_under_vmap
def lu(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """(P, L, U) with A = P L U (partial pivoting).

    Example:
        >>> import retrograd as torch
        >>> P, L, U = torch.linalg.lu(torch.tensor([[1., 2.], [3., 4.]]))
        >>> U
        tensor([[3.0000, 4.0000],
                [0.0000, 0.6667]])
    """
    _check(A, "linalg.lu", square=False)
    _no_unpivoted(pivot, "linalg.lu_factor")
    p, lo, up = apply(TL.linalg_lu, (A,), True, nout=3)
    return _rt("linalg_lu", ("P", "L", "U"))(p.detach(), lo, up)


def _no_unpivoted(pivot: bool, api: str) -> None:
    if not pivot:
        raise RuntimeError(f"{api}: LU without pivoting is not implemented on the CPU")


@per_element_under_vmap
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False
                 ) -> tuple[Tensor, Tensor, Tensor]:
    """(LU, pivots, info): L and U packed in one matrix, LAPACK's 1-based row interchanges,
    and info > 0 where U has an exact zero on its diagonal.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.lu_factor_ex(torch.tensor([[1., 2.], [3., 4.]])).pivots
        tensor([2, 2], dtype=torch.int32)
    """
    _check(A, "linalg.lu_factor_ex", square=False)
    _no_unpivoted(pivot, "linalg.lu_factor")
    lu_, piv, info = apply(TL.linalg_lu_factor_ex, (A,), None, nout=3)
    if check_errors:
        K.raise_info("torch.linalg.lu_factor_ex", info._data, "lu")
    return _rt("linalg_lu_factor_ex", ("LU", "pivots", "info"))(lu_, piv, info)


@per_element_under_vmap
def lu_factor(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor]:
    """(LU, pivots) of ``lu_factor_ex``; PyTorch's RuntimeError when U has a zero pivot.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.lu_factor(torch.tensor([[1., 2.], [3., 4.]])).LU
        tensor([[3.0000, 4.0000],
                [0.3333, 0.6667]])
    """
    _check(A, "linalg.lu_factor", square=False)
    lu_, piv, info = lu_factor_ex(A, pivot=pivot)
    K.raise_info("torch.linalg.lu_factor", info._data, "lu")  # (a RuntimeError, as PyTorch's)
    return _rt("linalg_lu_factor", ("LU", "pivots"))(lu_, piv)


@per_element_under_vmap
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """X with ``A X = B`` from ``lu_factor``'s (LU, pivots) (``X A = B`` if not ``left``;
    A^T with ``adjoint``).

    Example:
        >>> import retrograd as torch
        >>> A = torch.tensor([[1., 2.], [3., 4.]])
        >>> LU, piv = torch.linalg.lu_factor(A)
        >>> torch.linalg.lu_solve(LU, piv, torch.tensor([[5.], [11.]]))
        tensor([[1.],
                [2.]])
    """
    _check(LU, "linalg.lu_solve")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           f"dimensions. (Got shape {tuple(B.shape)}: use B.unsqueeze(-1).)")
    return apply(TL.linalg_lu_solve, (LU, pivots, B), (bool(left), bool(adjoint)))


@public(method=False)
@per_element_under_vmap
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """(P, L, U) from ``lu_factor``'s packed (LU, pivots).

    Example:
        >>> import retrograd as torch
        >>> LU, piv = torch.linalg.lu_factor(torch.tensor([[1., 2.], [3., 4.]]))
        >>> torch.lu_unpack(LU, piv).L
        tensor([[1.0000, 0.0000],
                [0.3333, 1.0000]])
    """
    m = LU_data.shape[-2]
    dt = LU_data._data.dtype
    empty = _make(np.zeros((0,), dt))
    p = _make(K.perm_from_pivots(LU_pivots._data, m, dt)) if unpack_pivots else empty
    lo = up = empty
    if unpack_data:
        lo, up = apply(TL.lu_unpack, (LU_data,), None, nout=2)
    return _rt("lu_unpack", ("P", "L", "U"))(p, lo, up)


@per_element_under_vmap
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False
                  ) -> tuple[Tensor, Tensor, Tensor]:
    """(LD, pivots, info): the LDL^T factorization of a symmetric A (its lower triangle),
    LAPACK's Bunch-Kaufman pivots; no derivative, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.ldl_factor_ex(torch.tensor([[4., 2.], [2., 3.]])).LD
        tensor([[4.0000, 0.0000],
                [0.5000, 2.0000]])
    """
    _check(A, "torch.linalg.ldl_factor_ex")
    ld, piv, info = apply(TL.linalg_ldl_factor_ex, (A,), None, nout=3)
    if check_errors:
        K.raise_info("torch.linalg.ldl_factor_ex", info._data, "ldl")
    return _rt("linalg_ldl_factor_ex", ("LD", "pivots", "info"))(ld, piv, info)


@per_element_under_vmap
def ldl_factor(A: Tensor, *, hermitian: bool = False) -> tuple[Tensor, Tensor]:
    """(LD, pivots) of ``ldl_factor_ex``; PyTorch's RuntimeError where D is singular
    (Note [LDL info]).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.ldl_factor(torch.tensor([[4., 2.], [2., 3.]])).pivots
        tensor([1, 2], dtype=torch.int32)
    """
    _check(A, "torch.linalg.ldl_factor")
    ld, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    K.raise_info("torch.linalg.ldl_factor", info._data, "ldl")
    return _rt("linalg_ldl_factor", ("LD", "pivots"))(ld, piv)


@per_element_under_vmap
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """X with A X = B from ``ldl_factor``'s (LD, pivots).

    Example:
        >>> import retrograd as torch
        >>> LD, piv = torch.linalg.ldl_factor(torch.tensor([[4., 2.], [2., 3.]]))
        >>> torch.linalg.ldl_solve(LD, piv, torch.tensor([[6.], [5.]]))
        tensor([[1.],
                [1.]])
    """
    _check(LD, "torch.linalg.ldl_solve")
    if B.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, "
                           f"but it has {B.ndim} dimensions instead (use B.unsqueeze(-1))")
    return apply(TL.linalg_ldl_solve, (LD, pivots, B))


# ----------------------------------------------------------------------------------
# tensor forms, Householder products, eig


@autocast_category(FP32, name="linalg_tensorinv")
@per_element_under_vmap
def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A for ``tensordot(.., ind)``: A viewed as a matrix of the first
    ``ind`` dims by the rest, inverted, and shaped ``A.shape[ind:] + A.shape[:ind]``.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.tensorinv(torch.eye(4).reshape(4, 2, 2), ind=1).shape
        torch.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    outer, inner = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(outer) != math.prod(inner):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {math.prod(inner)} != "
                           f"{math.prod(outer)}")
    n = math.prod(outer)
    # (PyTorch reshapes the inverse through _reshape_alias)
    return view_apply(T.reshape_alias, inv(A.reshape(n, n)), inner + outer)


@autocast_category(FP32, name="linalg_tensorsolve")
@per_element_under_vmap
def tensorsolve(A: Tensor, B: Tensor, dims: Shape | None = None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) = B``; ``dims``: A's dims moved to the end first.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.tensorsolve(torch.eye(4).reshape(2, 2, 4), torch.ones(2, 2)).shape
        torch.Size([4])
    """
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        rest = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(rest + dims)
    rows = math.prod(B.shape)
    out_shape = tuple(A.shape[B.ndim:])
    cols = math.prod(out_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other."
                           f"ndim:]) == prod(self.shape[:other.ndim]), but got {cols} != "
                           f"{rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(out_shape)


@autocast_category(FP32, name="linalg_householder_product")
@per_element_under_vmap
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i column i of
    A below the diagonal and 1 on it (LAPACK's orgqr).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.householder_product(torch.zeros(2, 2), torch.zeros(1))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _check(A, "torch.linalg.householder_product", square=False)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if not m >= n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if not n >= k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    return apply(TL.linalg_householder_product, (A, tau))


# Note [No complex eigenvalues]
# linalg.eig and linalg.eigvals return complex tensors in PyTorch (complex64/complex128)
# for every input, even when each eigenvalue is real. retrograd has no complex dtype, so
# a real result would differ from PyTorch's in dtype and, for a rotation, in value; they
# raise instead, naming the real alternatives (eigh/eigvalsh for symmetric matrices,
# whose results PyTorch also gives as real tensors).
def _no_complex(api: str):
    raise NotImplementedError(
        f"{api}: retrograd has no complex dtypes, and PyTorch's {api} returns complex "
        "eigenvalues and eigenvectors for every input (Note [No complex eigenvalues]). For "
        "a symmetric matrix use linalg.eigh / linalg.eigvalsh (real results); otherwise "
        "compute in PyTorch or NumPy.")


@autocast_category(FP32, name="linalg_eig")
@per_element_under_vmap
def eig(A: Tensor) -> NoReturn:
    """Not available: PyTorch's result is complex (Note [No complex eigenvalues]).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.eig(torch.eye(2))
        Traceback (most recent call last):
        NotImplementedError: linalg.eig: retrograd has no complex dtypes, ...
    """
    _no_complex("linalg.eig")


@autocast_category(FP32, name="linalg_eigvals")
@per_element_under_vmap
def eigvals(A: Tensor) -> NoReturn:
    """Not available: PyTorch's result is complex (Note [No complex eigenvalues]).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.eigvals(torch.eye(2))
        Traceback (most recent call last):
        NotImplementedError: linalg.eigvals: retrograd has no complex dtypes, ...
    """
    _no_complex("linalg.eigvals")
