"""LAPACK's Householder form of QR at ``torch`` level: ``geqrf`` (the compact
factorisation, from SciPy's LAPACK), ``orgqr`` (its Q, as linalg.householder_product)
and ``ormqr`` (a product with that Q without forming it in PyTorch; formed here, m x m,
and multiplied, so the gradients are those of the composition).

Example:
    >>> import retrograd as torch
    >>> A = torch.tensor([[3., 1.], [4., 2.]], dtype=torch.float64)
    >>> a, tau = torch.geqrf(A)
    >>> torch.dist(torch.orgqr(a, tau) @ a.triu(), A) < 1e-12
    tensor(True)
"""

from __future__ import annotations

from .._core import dtype as D
from .._tensor.tensor import _LEGACY_NAMES, Tensor
from ..ops.dispatch import apply
from ..ops.public import FP32, public
from ..ops.records import table as T
from .creation import zeros
from .linalg_derived import householder_product
from .shape import cat

__all__ = ["geqrf", "orgqr", "ormqr"]


def _need_float(name: str, t: Tensor) -> None:
    if t.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{_LEGACY_NAMES[t.dtype.name]}' (LAPACK works in float32 "
                                  "and float64: convert first, e.g. A.double())")


@public(autocast=FP32)
def geqrf(input: Tensor) -> tuple:
    """``(a, tau)``: R on and above ``a``'s diagonal, the Householder vectors below it and
    their scales in ``tau`` (LAPACK's geqrf). Not differentiable, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> a, tau = torch.geqrf(torch.tensor([[3., 0.], [4., 5.]]))
        >>> a.diagonal().abs()
        tensor([5., 3.])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions. (geqrf "
                           "factors a matrix or a batch of them)")
    _need_float("geqrf", input)
    return apply(T.geqrf, (input,), None, nout=2)


@public(autocast=FP32)
def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """The Q of geqrf's ``(input, tau)``: ``linalg.householder_product(input, tau)``.

    Example:
        >>> import retrograd as torch
        >>> a, tau = torch.geqrf(torch.eye(2, dtype=torch.float64))
        >>> torch.orgqr(a, tau).abs()
        tensor([[1., 0.],
                [0., 1.]], dtype=torch.float64)
    """
    return householder_product(input, tau)


@public(autocast=FP32)
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``Q @ other`` (``left``) or ``other @ Q``, with ``Q.mT`` for ``transpose``, Q the
    full m x m orthogonal matrix of geqrf's ``(input, tau)``.

    Example:
        >>> import retrograd as torch
        >>> A = torch.tensor([[3., 1.], [4., 2.]], dtype=torch.float64)
        >>> a, tau = torch.geqrf(A)
        >>> torch.dist(torch.ormqr(a, tau, a.triu()), A) < 1e-12
        tensor(True)
    """
    m = input.shape[-2]
    side = -2 if left else -1
    if other.shape[side] != m:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to "
                           f"input.shape[-2] (Q is {m} x {m})")
    extra = m - input.shape[-1]
    square = input if extra <= 0 else cat(
        [input, zeros(input.shape[:-1] + (extra,), dtype=input.dtype)], -1)
    q = householder_product(square[..., :m], tau)
    if transpose:
        q = q.mT
    return q @ other if left else other @ q
