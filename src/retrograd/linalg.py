"""retrograd.linalg: norms, products, inverses, solves and decompositions, with gradients.

Example:
    >>> import retrograd as torch
    >>> torch.linalg.norm(torch.tensor([3., 4.]))
    tensor(5.)
"""

from __future__ import annotations

from ._core.dtype import dtype
from ._functions.linalg import (
    LinAlgError,
    cholesky,
    cholesky_ex,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    matrix_exp,
    matrix_power,
    multi_dot,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svd,
    svdvals,
    vander,
)
from ._functions.linalg_derived import (
    cond,
    eig,
    eigvals,
    householder_product,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_norm,
    matrix_rank,
    tensorinv,
    tensorsolve,
)
from ._functions.namespace import matmul, vector_norm
from ._functions.namespace import norm as _norm
from ._tensor.tensor import Tensor
from .ops.public import LOWER_PRECISION_FP, autocast_category

__all__ = ["vector_norm", "norm", "matrix_norm", "matmul", "vecdot", "LinAlgError", "inv",
           "inv_ex", "det", "slogdet", "solve", "solve_ex", "cholesky", "cholesky_ex",
           "solve_triangular", "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv",
           "matrix_power", "multi_dot", "cross", "diagonal", "matrix_exp", "vander", "lstsq",
           "matrix_rank", "cond", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "tensorinv",
           "tensorsolve", "householder_product", "eig", "eigvals", "ldl_factor",
           "ldl_factor_ex", "ldl_solve"]


def norm(A: Tensor, ord: float | str | None = None, dim: int | tuple[int, ...] | None = None,
         keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    """A vector norm (``ord`` a number, or 2 by default), or a matrix norm for a 2-D
    ``dim`` (or a 2-D A with ``dim=None``) and ``ord`` one of matrix_norm's.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.norm(torch.ones(2, 2))
        tensor(2.)
        >>> torch.linalg.norm(torch.tensor([[1., -2.], [3., 4.]]), 1)
        tensor(6.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                           f"{list(dim)} (one dim for a vector norm, two for a matrix norm; "
                           "linalg.vector_norm takes any number of dims)")
    if dim is None and ord is not None and A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D. (name the dims: dim=(-2, -1) for the "
                           "matrix norm of each matrix, or use linalg.vector_norm)")
    if dtype is not None:
        A = A.to(dtype)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim)
    if isinstance(ord, str) or (dim is None and A.ndim == 2) or (dim is not None and
                                                                  len(dim) == 2):
        return matrix_norm(A, ord, (-2, -1) if dim is None else tuple(dim), keepdim)
    return _norm(A, ord, dim, keepdim)


@autocast_category(LOWER_PRECISION_FP, name="linalg_vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """Dot product along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.vecdot(torch.ones(3), torch.ones(3))
        tensor(3.)
    """
    return (x * y).sum(dim)


matmul = matmul
