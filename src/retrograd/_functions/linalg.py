"""The public linear-algebra functions: ``retrograd.linalg.*`` (re-exported by
``retrograd/linalg.py``) and PyTorch's top-level forms (``torch.det``, ``torch.inverse``,
``torch.svd``, ``Tensor.slogdet``, ...). Each checks PyTorch's arguments and calls one
record of ``ops/records/linalg.py``, or composes records as PyTorch composes them.

Example:
    >>> import retrograd as torch
    >>> torch.linalg.inv(torch.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .._graph.forward_state import FW
from .._tensor.tensor import _LEGACY_NAMES as _LEGACY
from .._tensor.tensor import Tensor, _make, _wrap_dim
from ..ops.argcheck import broadcast_checked
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.kernels.linalg import LinAlgError, raise_info
from ..ops.public import FP32, autocast_category, public
from ..ops.records import linalg as TL
from .pointwise import where
from .reductions import _rt
from .shape import cat

__all__ = ["LinAlgError", "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex", "cholesky",
           "cholesky_ex", "solve_triangular", "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv",
           "matrix_power", "multi_dot", "cross", "diagonal", "matrix_exp", "vander"]

def _differentiable(a: Tensor) -> bool:
    """Whether ``a`` takes part in a derivative (requires grad, or forward mode is on): the
    eigenvalue and singular-value functions skip the vectors otherwise."""
    return a.requires_grad or FW.active


def _check(a, api: str, square: bool = True) -> None:
    """PyTorch's checks of a (batch of) matrices: a float32/float64 tensor, at least 2-D,
    square where the function needs it."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{api}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(a).__name__}")
    name = a.dtype.name if hasattr(a.dtype, "name") else str(a.dtype)
    if name in ("float16", "bfloat16"):
        raise RuntimeError(f"{api}: Low precision dtypes not supported. Got {_LEGACY[name]} "
                           "(LAPACK works in float32/float64: convert first, e.g. A.float())")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{api}: Expected a floating point or complex tensor as input. Got "
                           f"{_LEGACY.get(name, name)} (convert first, e.g. A.double())")
    if a.ndim < 2:
        raise RuntimeError(f"{api}: The input tensor A must have at least 2 dimensions. (Got "
                           f"shape {tuple(a.shape)}: a matrix or a batch of matrices is needed.)")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{api}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


# ----------------------------------------------------------------------------------
# inverses and determinants


@autocast_category(FP32, name="linalg_inv_ex")
@per_element_under_vmap
def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """(inverse, info) of a square matrix (batch); info > 0 names a zero pivot.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.inv_ex(torch.eye(2) * 2).inverse
        tensor([[0.5000, 0.0000],
                [0.0000, 0.5000]])
    """
    _check(A, "linalg.inv_ex")
    x, info = apply(TL.linalg_inv_ex, (A,), None, nout=2)  # (info: int32, as PyTorch's)
    if check_errors:
        raise_info("linalg.inv_ex", info._data, "inv")
    return _rt("linalg_inv_ex", ("inverse", "info"))(x, info)


@autocast_category(FP32, name="linalg_inv")
@per_element_under_vmap
def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (batch); LinAlgError when singular.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.inv(torch.tensor([[1., 1.], [0., 1.]]))
        tensor([[ 1., -1.],
                [ 0.,  1.]])
    """
    _check(A, "linalg.inv")
    x, info = apply(TL.linalg_inv_ex, (A,), None, nout=2)
    raise_info("linalg.inv", info._data, "inv")
    return x


@public(name="inverse", autocast=FP32)
@per_element_under_vmap
def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[2., 0.], [0., 4.]]).inverse()
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return inv(input)


@public
@per_element_under_vmap
def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (batch).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.det(torch.tensor([[1., 2.], [3., 4.]]))
        tensor(-2.)
    """
    _check(A, "linalg.det")
    return apply(TL.linalg_det, (A,))


@public
@per_element_under_vmap
def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    """(sign, log|det|) of a square matrix (batch).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.slogdet(torch.tensor([[1., 2.], [3., 4.]])).sign
        tensor(-1.)
    """
    _check(A, "linalg.slogdet")
    sign, logabs = apply(TL.linalg_slogdet, (A,), None, nout=2)
    return _rt("linalg_slogdet", ("sign", "logabsdet"))(sign, logabs)


@public
@per_element_under_vmap
def logdet(input: Tensor) -> Tensor:
    """``log(det(A))``: nan for a negative determinant, -inf for a zero one.

    Example:
        >>> import retrograd as torch
        >>> torch.logdet(torch.eye(2) * 3)
        tensor(2.1972)
    """
    _check(input, "logdet")
    sign, logabs = slogdet(input)
    return where(sign == -1, float("nan"), logabs)


# ----------------------------------------------------------------------------------
# solves


def _vector_rhs(A: Tensor, B: Tensor) -> bool:
    # PyTorch's rule: B is a vector (batch) if it is 1-D, or one dim short of A with A's
    # batch shape
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@per_element_under_vmap
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
             ) -> tuple[Tensor, Tensor]:
    """(X, info) with ``A X = B`` (``X A = B`` if not ``left``).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.solve_ex(torch.eye(2) * 2, torch.ones(2)).result
        tensor([0.5000, 0.5000])
    """
    _check(A, "linalg.solve_ex")
    x, info = _solve(A, B, left, "linalg.solve_ex")
    if check_errors:
        raise_info("torch.linalg.solve_ex", info._data, "solve")
    return _rt("linalg_solve_ex", ("result", "info"))(x, info)


def _solve(A, B, left, api):
    if B.dtype != A.dtype:
        raise RuntimeError(f"{api}: Expected A and B to have the same dtype, but found A of "
                           f"type {A.dtype} and B of type {B.dtype} instead (convert one)")
    vector = left and _vector_rhs(A, B)
    n = A.shape[-1]
    k = B.shape[-1] if vector else (B.shape[-2] if left else B.shape[-1])
    if B.ndim < (1 if vector else 2) or k != n:
        rows = B.shape[-1] if vector else B.shape[-2]
        cols = 1 if vector else B.shape[-1]
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({A.shape[-2]}x{n} and {rows}x{cols})")
    x, info = apply(TL.linalg_solve_ex, (A, B), (left, vector), nout=2)
    return x, info


@autocast_category(FP32, name="linalg_solve")
@per_element_under_vmap
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``X A = B`` if not ``left``); LinAlgError when A is singular.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.solve(torch.tensor([[2., 0.], [0., 4.]]), torch.tensor([2., 2.]))
        tensor([1.0000, 0.5000])
    """
    _check(A, "linalg.solve")
    x, info = _solve(A, B, left, "linalg.solve")
    raise_info("torch.linalg.solve", info._data, "solve")
    return x


@per_element_under_vmap
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with ``A X = B`` (``X A = B`` if not ``left``) for a triangular A (only the triangle
    named by ``upper`` is read; ``unitriangular``: ones on the diagonal assumed).

    Example:
        >>> import retrograd as torch
        >>> A = torch.tensor([[2., 1.], [0., 1.]])
        >>> torch.linalg.solve_triangular(A, torch.tensor([[3.], [1.]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    _check(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           f"dimensions. (Got shape {tuple(B.shape)}: use B.unsqueeze(-1).)")
    return apply(TL.linalg_solve_triangular, (A, B), (bool(upper), bool(left),
                                                     bool(unitriangular)))


# ----------------------------------------------------------------------------------
# factorizations


@autocast_category(FP32, name="linalg_cholesky_ex")
@per_element_under_vmap
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False
                ) -> tuple[Tensor, Tensor]:
    """(L, info): the Cholesky factor (``upper``: U = L^T) and the order of the first
    leading minor that is not positive-definite (0 if none).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.cholesky_ex(torch.eye(2) * 4).L
        tensor([[2., 0.],
                [0., 2.]])
    """
    _check(A, "linalg.cholesky_ex")
    lo, info = apply(TL.linalg_cholesky_ex, (A,), bool(upper), nout=2)
    if check_errors:
        raise_info("linalg.cholesky_ex", info._data, "pd")
    return _rt("linalg_cholesky_ex", ("L", "info"))(lo, info)


@autocast_category(FP32, name="linalg_cholesky")
@per_element_under_vmap
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (A = L L^T), or U (A = U^T U) with ``upper``; LinAlgError when
    A is not positive-definite.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.cholesky(torch.tensor([[4., 2.], [2., 2.]]))
        tensor([[2., 0.],
                [1., 1.]])
    """
    _check(A, "linalg.cholesky")
    lo, info = apply(TL.linalg_cholesky_ex, (A,), bool(upper), nout=2)
    raise_info("linalg.cholesky", info._data, "pd")
    return lo


def _uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


@autocast_category(FP32, name="linalg_eigh")
@per_element_under_vmap
def eigh(A: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    """(eigenvalues ascending, eigenvectors) of a symmetric matrix (batch); only the
    triangle ``UPLO`` is read. Eigenvectors are defined up to sign (Note [Linear-algebra
    rules] in ops/records/linalg.py).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.eigh(torch.tensor([[2., 1.], [1., 2.]])).eigenvalues
        tensor([1., 3.])
    """
    _check(A, "linalg.eigh")
    w, v = apply(TL.linalg_eigh, (A,), _uplo(UPLO), nout=2)
    return _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))(w, v)


@autocast_category(FP32, name="linalg_eigvalsh")
@per_element_under_vmap
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric matrix (batch), ascending.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.eigvalsh(torch.tensor([[2., 1.], [1., 2.]]))
        tensor([1., 3.])
    """
    _check(A, "linalg.eigvalsh")
    if not _differentiable(A):
        return _make(np.linalg.eigvalsh(A._data, UPLO=_uplo(UPLO)))
    return eigh(A, UPLO).eigenvalues


@autocast_category(FP32, name="linalg_svd")
@per_element_under_vmap
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None
        ) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, Vh) with A = U diag(S) Vh, S descending. Singular vectors are defined up to
    sign (Note [Linear-algebra rules] in ops/records/linalg.py).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.svd(torch.tensor([[3., 0.], [0., -2.]])).S
        tensor([3., 2.])
    """
    _check(A, "linalg.svd", square=False)
    _no_driver(driver)
    u, s, vh = apply(TL.linalg_svd, (A,), bool(full_matrices), nout=3)
    return _rt("linalg_svd", ("U", "S", "Vh"))(u, s, vh)


def _no_driver(driver) -> None:
    """svd's and svdvals' ``driver=``: PyTorch takes it for CUDA inputs only."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend. (Leave it out on the CPU.)")


@autocast_category(FP32, name="linalg_svdvals")
@per_element_under_vmap
def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of A (batch), descending.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.svdvals(torch.tensor([[3., 0.], [0., -2.]]))
        tensor([3., 2.])
    """
    _check(A, "linalg.svdvals", square=False)
    _no_driver(driver)
    if not _differentiable(A):
        return _make(np.linalg.svd(A._data, compute_uv=False))
    return svd(A, False, driver=driver).S


@autocast_category(FP32, name="linalg_qr")
@per_element_under_vmap
def qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """(Q, R) with A = Q R; ``mode``: 'reduced', 'complete' or 'r' (Q empty).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.qr(torch.tensor([[2., 0.], [0., 3.]])).R.abs()
        tensor([[2., 0.],
                [0., 3.]])
    """
    _check(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    q, r = apply(TL.linalg_qr, (A,), mode, nout=2)
    return _rt("linalg_qr", ("Q", "R"))(q, r)


def _tol(x):
    """A tolerance argument (None, a number or a Tensor) as the kernels take it (Note
    [Singular-value tolerances] in ops/kernels/linalg.py)."""
    if x is None:
        return None
    return np.asarray(x._data if isinstance(x, Tensor) else x, dtype=np.float64)


@per_element_under_vmap
def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
         hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudoinverse: singular values at most ``max(atol, rtol * s_max)``
    are treated as zero (``hermitian``: A symmetric, through eigh).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.pinv(torch.tensor([[2., 0.], [0., 0.]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    _check(A, "linalg.pinv", square=hermitian)
    return apply(TL.linalg_pinv, (A,), (_tol(atol), _tol(rtol), bool(hermitian)))


@public(autocast=FP32)
@per_element_under_vmap
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[2., 0.], [0., 4.]]).pinverse()
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return pinv(input, rtol=rcond)


# ----------------------------------------------------------------------------------
# functions of matrices


@public
@per_element_under_vmap
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential (batch).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _check(A, "linalg.matrix_exp")
    return apply(TL.linalg_matrix_exp, (A,))


@public
@per_element_under_vmap
def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` to the integer power ``n`` (negative: of the inverse), by repeated squaring.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.matrix_power(torch.tensor([[1., 1.], [0., 1.]]), -2)
        tensor([[ 1., -2.],
                [ 0.,  1.]])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2] if A.ndim >= 2 else A.shape} by "
                           f"{A.shape[-1] if A.ndim else ''} matrices")
    if n == 0:
        # the identity, still recorded on A (zero gradient), as PyTorch's copy is
        # (masked_fill, not A * 0: an inf in A must not give nan)
        full = _make(np.ones((), dtype=bool))
        return A.masked_fill(full, 0) + _make(np.eye(A.shape[-1], dtype=A._data.dtype))
    if n < 0:
        A, n = inv(A), -n
        if n == 1:  # the inverse itself, as PyTorch
            return A
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    z = result = None
    while n > 0:  # PyTorch's order of products (binary decomposition of n)
        bit, n = n % 2, n // 2
        z = A if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result


@per_element_under_vmap
def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices in the cheapest order (the first may be a row
    vector, the last a column vector).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.multi_dot([torch.ones(2), torch.ones(2, 3), torch.ones(3)])
        tensor(6.)
    """
    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first1, last1 = ts[0].ndim == 1, ts[-1].ndim == 1
    for i, t in enumerate(ts):
        want = 1 if (i == 0 and first1) or (i == n - 1 and last1) else 2
        if t.ndim != want and not (t.ndim == 2 and want == 1):
            which = "first" if i == 0 else ("last" if i == n - 1 else None)
            if which:
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{t.ndim}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    if first1:
        ts[0] = ts[0].unsqueeze(0)
    if last1:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i in range(n - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(ts[i].shape)} and "
                f"{tuple(ts[i + 1].shape)} cannot be multiplied")
    out = _chain(ts)
    shape = ([] if first1 else [ts[0].shape[0]]) + ([] if last1 else [ts[-1].shape[1]])
    return out.view(shape)


def _chain(ts):
    """The matrix chain product in the order of least scalar multiplications."""
    n = len(ts)
    if n == 2:
        return ts[0] @ ts[1]
    p = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    if n == 3:  # PyTorch compares the two orders directly
        a, b, c = ts
        cost_ab = p[0] * p[1] * p[2] + p[0] * p[2] * p[3]
        cost_bc = p[1] * p[2] * p[3] + p[0] * p[1] * p[3]
        return (a @ b) @ c if cost_ab <= cost_bc else a @ (b @ c)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    todo = [(0, n - 1)]
    results = {}
    while todo:  # no recursion (DESIGN.md): a post-order walk of the split tree
        i, j = todo[-1]
        if i == j:
            results[(i, j)] = ts[i]
            todo.pop()
            continue
        k = split[i][j]
        left, right = (i, k), (k + 1, j)
        if left in results and right in results:
            results[(i, j)] = results.pop(left) @ results.pop(right)
            todo.pop()
        else:
            todo.extend(x for x in (right, left) if x not in results)
    return results[(0, n - 1)]


@per_element_under_vmap
def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (operands broadcast).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.cross(torch.tensor([1., 0., 0.]), torch.tensor([0., 1., 0.]))
        tensor([0., 0., 1.])
    """
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions. "
                           f"Got {input.ndim} and {other.ndim} (unsqueeze one)")
    d = _wrap_dim(dim, input._data.ndim)  # (PyTorch's IndexError for a dim out of range)
    sa, sb = input._data.shape, other._data.shape
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[d]} and {sb[d]}")
    broadcast_checked("linalg.cross", ("input", "other"), (sa, sb))
    return apply(TL.linalg_cross, (input, other), d)


@public(name="cross")
@per_element_under_vmap
def cross_(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross``: as ``linalg.cross``, but ``dim=None`` takes the first dim of size 3
    (with PyTorch's deprecation warning).

    Example:
        >>> import retrograd as torch
        >>> torch.cross(torch.tensor([[1., 0., 0.]]), torch.tensor([[0., 1., 0.]]), dim=1)
        tensor([[0., 0., 1.]])
    """
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross."
                      "\nThe default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(input.shape) if s == 3), -1)
    return cross(input, other, dim=dim)


@per_element_under_vmap
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix (a view): ``torch.diagonal`` over the last two dims.

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.diagonal(torch.eye(2) * 3)
        tensor([3., 3.])
    """
    return A.diagonal(offset, dim1, dim2)


@per_element_under_vmap
def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix: columns ``x**0, x**1, ..., x**(N-1)`` (batched over x's
    leading dims).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.vander(torch.tensor([1., 2., 3.]))
        tensor([[1., 1., 1.],
                [1., 2., 4.],
                [1., 3., 9.]])
    """
    n = (x.shape[-1] if x.ndim else 0) if N is None else N
    if x.ndim < 1 or n <= 1:
        raise RuntimeError(f"N must be greater than 1. (x has shape {tuple(x.shape)}, N is {n}: "
                           "pass a 1-D x with two or more points, or N >= 2)")
    ones = (x.unsqueeze(-1) * 0 + 1) if x.dtype.is_floating_point else x.unsqueeze(-1) ** 0
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return cat([ones.detach(), powers], -1)
