"""PyTorch's older top-level linear-algebra functions, kept for the code that calls them:
``torch.cholesky``, ``cholesky_solve``, ``cholesky_inverse``, ``torch.svd`` (returns V, not
Vh), ``torch.qr`` (``some=``), ``triangular_solve`` and ``kron``, with their Tensor methods.

Example:
    >>> import retrograd as torch
    >>> torch.svd(torch.tensor([[3., 0.], [0., 2.]])).S
    tensor([3., 2.])
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor.tensor import Tensor, _make
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.public import FP32, public
from ..ops.records import table as T
from .linalg import _check, _differentiable
from .linalg import qr as _linalg_qr
from .linalg import svd as _linalg_svd
from .reductions import _rt

__all__ = ["cholesky", "cholesky_solve", "cholesky_inverse", "svd", "qr", "triangular_solve",
           "kron"]


@public(autocast=FP32)
@per_element_under_vmap
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in PyTorch): ``linalg.cholesky``, or its transpose
    with ``upper=True``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[4., 2.], [2., 2.]]).cholesky()
        tensor([[2., 0.],
                [1., 1.]])
    """
    _check(input, "cholesky")
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    return apply(T.cholesky, (input,), bool(upper))


@public(autocast=FP32)
@per_element_under_vmap
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """X with ``A X = B`` for A = L L^T given its Cholesky factor ``input2`` (U^T U with
    ``upper``); ``input`` is B.

    Example:
        >>> import retrograd as torch
        >>> L = torch.tensor([[2., 0.], [1., 1.]])
        >>> torch.cholesky_solve(torch.tensor([[4.], [2.]]), L)
        tensor([[1.],
                [0.]])
    """
    _check(input2, "cholesky_solve")
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} "
                           "dimensions instead (use B.unsqueeze(-1))")
    return apply(T.cholesky_solve, (input, input2), bool(upper))


@public(autocast=FP32)
@per_element_under_vmap
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """The inverse of A = L L^T (U^T U with ``upper``) from its Cholesky factor.

    Example:
        >>> import retrograd as torch
        >>> torch.cholesky_inverse(torch.tensor([[2., 0.], [0., 1.]]))
        tensor([[0.2500, 0.0000],
                [0.0000, 1.0000]])
    """
    _check(input, "cholesky_inverse")
    return apply(T.cholesky_inverse, (input,), bool(upper))


@public(autocast=FP32)
@per_element_under_vmap
def svd(input: Tensor, some: bool = True, compute_uv: bool = True
        ) -> tuple[Tensor, Tensor, Tensor]:
    """``torch.svd``: (U, S, V) with A = U diag(S) V^T (V, not Vh); ``some=False``: full
    U and V; ``compute_uv=False``: U and V are zero matrices, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.svd(torch.tensor([[0., 2.], [1., 0.]])).V.abs()
        tensor([[0., 1.],
                [1., 0.]])
    """
    rt = _rt("svd", ("U", "S", "V"))
    if not compute_uv:
        _check(input, "svd", square=False)
        m, n = input.shape[-2:]
        bt = tuple(input.shape[:-2])
        s = _linalg_svd(input, False).S if _differentiable(input) else \
            _make(np.linalg.svd(input._data, compute_uv=False))
        z = input._data.dtype
        return rt(_make(np.zeros(bt + (m, m), z)), s, _make(np.zeros(bt + (n, n), z)))
    u, s, vh = _linalg_svd(input, not some)
    return rt(u, s, vh.mT)


@public(autocast=FP32)
@per_element_under_vmap
def qr(input: Tensor, some: bool = True) -> tuple[Tensor, Tensor]:
    """``torch.qr`` (deprecated in PyTorch): ``linalg.qr`` with mode 'reduced' if ``some``,
    else 'complete'.

    Example:
        >>> import retrograd as torch
        >>> torch.qr(torch.tensor([[2., 0.], [0., 3.]])).R.abs()
        tensor([[2., 0.],
                [0., 3.]])
    """
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                  "future PyTorch release.", UserWarning, stacklevel=2)
    q, r = _linalg_qr(input, "reduced" if some else "complete")
    return _rt("qr", ("Q", "R"))(q, r)


@public(autocast=FP32)
@per_element_under_vmap
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> tuple[Tensor, Tensor]:
    """(X, A's copy) with ``A X = input`` (``A^T X = input`` with ``transpose``), A
    triangular (deprecated in PyTorch for ``linalg.solve_triangular``).

    Example:
        >>> import retrograd as torch
        >>> A = torch.tensor([[2., 1.], [0., 1.]])
        >>> torch.triangular_solve(torch.tensor([[3.], [1.]]), A).solution
        tensor([[1.],
                [1.]])
    """
    _check(A, "triangular_solve")
    if input.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {input.ndim} dimensions instead (use b.unsqueeze(-1))")
    x, m = apply(T.triangular_solve, (input, A), (bool(upper), bool(transpose),
                                                  bool(unitriangular)), nout=2)
    return _rt("triangular_solve", ("solution", "cloned_coefficient"))(x, m)


@public
@per_element_under_vmap
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (operands padded with leading 1s to the same rank).

    Example:
        >>> import retrograd as torch
        >>> torch.kron(torch.eye(2), torch.ones(1, 2))
        tensor([[1., 1., 0., 0.],
                [0., 0., 1., 1.]])
    """
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    # PyTorch's graph: each operand _unsafe_view'ed to the interleaved shape, one product
    a_view = apply(T.unsafe_view, (input.contiguous(),), tuple(x for s in sa for x in (s, 1)))
    b_view = apply(T.unsafe_view, (other.contiguous(),), tuple(x for s in sb for x in (1, s)))
    # PyTorch's last step is an _unsafe_view of the product (UnsafeViewBackward0)
    return apply(T.unsafe_view, (a_view * b_view,), tuple(x * y for x, y in zip(sa, sb)))
