"""retrograd.linalg: norms, products, inverses, solves and decompositions, with gradients.

Example:
    >>> import retrograd as torch
    >>> torch.linalg.norm(torch.tensor([3., 4.]))
    tensor(5.)
"""

from __future__ import annotations

from .ops.functions import matmul, vector_norm
from .ops.functions import norm as _norm
from .ops.linalg_functions import (  # noqa: F401  (re-exported: the namespace)
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
from .ops.public import LOWER_PRECISION_FP, autocast_category

__all__ = ["vector_norm", "norm", "matrix_norm", "matmul", "vecdot", "LinAlgError", "inv",
           "inv_ex", "det", "slogdet", "solve", "solve_ex", "cholesky", "cholesky_ex",
           "solve_triangular", "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv",
           "matrix_power", "multi_dot", "cross", "diagonal", "matrix_exp", "vander"]


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002
    """Vector 2-norm by default; Frobenius for 2-D input with ``ord='fro'`` or None.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.norm(torch.ones(2, 2))
        tensor(2.)
    """
    if ord is None or ord == "fro":
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise NotImplementedError(f"retrograd.linalg.norm: ord={ord!r} is not supported")
    if A.ndim == 2 and dim is None:
        raise NotImplementedError("retrograd.linalg.norm: matrix norms other than 'fro' are not "
                                  "supported; use vector_norm on the flattened matrix")
    return _norm(A, ord, dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False):
    """Frobenius norm over the last two dims.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.matrix_norm(torch.ones(2, 2))
        tensor(2.)
    """
    if ord != "fro":
        raise NotImplementedError(f"retrograd.linalg.matrix_norm: ord={ord!r} is not supported")
    return vector_norm(A, 2, dim, keepdim)


@autocast_category(LOWER_PRECISION_FP, name="linalg_vecdot")
def vecdot(x, y, *, dim: int = -1):
    """Dot product along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.vecdot(torch.ones(3), torch.ones(3))
        tensor(3.)
    """
    return (x * y).sum(dim)


matmul = matmul
