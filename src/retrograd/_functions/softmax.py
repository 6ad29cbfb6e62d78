"""Softmax along a dim (max-shifted: no overflow), its ``-x`` and log forms: the kernels
behind ``torch.softmax``, ``Tensor.softmax`` and ``torch.nn.functional.softmax`` (which
re-exports them), with PyTorch's implicit-dim warning and dtype checks.

Example:
    >>> import retrograd as torch
    >>> from retrograd._functions.softmax import softmax
    >>> softmax(torch.tensor([1000., 1000.]), dim=0)
    tensor([0.5000, 0.5000])
"""

from __future__ import annotations

import warnings

from .._core.dtype import dtype
from .._graph.node import _LEGACY
from .._tensor.tensor import Tensor
from ..ops.dispatch import apply
from ..ops.op import FLOAT_NP
from ..ops.records import nn as TN

__all__ = ["softmax", "softmin", "log_softmax"]


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dim, dtype, name, stacklevel):
    if dim is None:
        dim = _softmax_dim(name, input._data.ndim, stacklevel + 1)
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype not in FLOAT_NP:
        raise RuntimeError(f'"{name}_lastdim_kernel_impl" not implemented for '
                           f"'{_LEGACY[input.dtype.name]}': convert to a floating dtype first")
    nd = input._data.ndim
    n = nd if nd > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return input, (dim + n if dim < 0 else dim) if nd > 0 else 0


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtype | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (max-shifted: no overflow).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softmax(torch.tensor([1000., 1000.]), dim=0)
        tensor([0.5000, 0.5000])
    """
    x, d = _softmax_input(input, dim, dtype, "softmax", _stacklevel)
    return apply(TN.softmax, (x,), d)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtype | None = None) -> Tensor:
    """softmax(-x).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.softmin(torch.tensor([0., 0.]), dim=0)
        tensor([0.5000, 0.5000])
    """
    x, d = _softmax_input(input, dim, dtype, "softmin", _stacklevel)
    return softmax(-x, d)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: dtype | None = None) -> Tensor:
    """x - logsumexp(x) along ``dim`` (stable for large inputs).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.log_softmax(torch.tensor([1000., 0.]), dim=0)
        tensor([    0., -1000.])
    """
    x, d = _softmax_input(input, dim, dtype, "log_softmax", _stacklevel)
    return apply(TN.log_softmax, (x,), d)
