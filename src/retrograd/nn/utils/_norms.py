"""The weight-norm and spectral-norm math that the parametrizations and the legacy hook
forms (``nn.utils.weight_norm``, ``nn.utils.spectral_norm``) share.

Example:
    >>> import retrograd as torch
    >>> from retrograd.nn.utils._norms import norm_except_dim
    >>> norm_except_dim(torch.tensor([[3., 4.], [0., 1.]]), 2, 0)
    tensor([[5.],
            [1.]])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F


def norm_except_dim(v: Tensor, pow: float, dim: int) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1
    dimensions (``dim=-1``: the norm of the whole tensor, 0-d), as PyTorch's.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.utils._norms import norm_except_dim
        >>> norm_except_dim(torch.tensor([[3., 4.]]), 2, -1)
        tensor(5.)
    """
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.reshape(v.size(0), -1).norm(pow, 1).view(v.size(0), *([1] * (v.dim() - 1)))
    if dim == v.dim() - 1:
        return v.reshape(-1, v.size(-1)).norm(pow, 0).view(*([1] * (v.dim() - 1)), v.size(-1))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm over every dimension but ``dim`` (PyTorch's
    ``torch._weight_norm``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.utils._norms import weight_norm
        >>> weight_norm(torch.tensor([[3., 4.]]), torch.tensor([[10.]]))
        tensor([[6., 8.]])
    """
    return v * (g / norm_except_dim(v, 2, dim))


def weight_to_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix with dimension ``dim`` as its rows (spectral norm's view).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.utils._norms import weight_to_matrix
        >>> weight_to_matrix(torch.ones(2, 3, 4), 1).shape
        torch.Size([3, 8])
    """
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)


def power_iteration(weight_mat: Tensor, u: Tensor, v: Tensor, n: int, eps: float) -> None:
    """``n`` steps of the power method, updating the singular-vector estimates ``u`` and
    ``v`` in place (no gradient), as PyTorch's spectral norm does.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.utils._norms import power_iteration
        >>> u, v = torch.tensor([1., 0.]), torch.tensor([1., 1.])
        >>> with torch.no_grad():
        ...     power_iteration(torch.tensor([[2., 0.], [0., 1.]]), u, v, 20, 1e-12)
        >>> u.round(decimals=3)
        tensor([1., 0.])
    """
    for _ in range(n):
        u.copy_(F.normalize(weight_mat.mv(v), dim=0, eps=eps))
        v.copy_(F.normalize(weight_mat.mH.mv(u), dim=0, eps=eps))
