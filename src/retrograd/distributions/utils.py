"""Helpers shared by the distributions: broadcasting parameters, converting between
probabilities and logits, machine limits of a dtype, and ``lazy_property``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.distributions.utils import broadcast_all, probs_to_logits
    >>> loc, scale = broadcast_all(torch.zeros(2), 1.0)
    >>> scale
    tensor([1., 1.])
    >>> probs_to_logits(torch.tensor([0.5]), is_binary=True)
    tensor([0.])
"""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

from .._core.dtype import machine_limits
from . import _torch as torch

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


class _Finfo:
    """The machine limits PyTorch's ``torch.finfo`` gives (eps, tiny, min, max)."""

    def __init__(self, dtype):
        self.eps, self.tiny, self.max = machine_limits(dtype)
        self.min = -self.max


def finfo(dtype) -> _Finfo:
    """eps/tiny/min/max of a floating dtype (``torch.finfo``'s numbers).

    Example:
        >>> import retrograd as torch
        >>> finfo(torch.float32).eps
        1.1920928955078125e-07
    """
    return _Finfo(dtype)


def broadcast_all(*values):
    """Broadcast tensors and numbers to one shape; numbers become tensors of the first
    tensor's dtype (the default dtype when all are numbers).

    Example:
        >>> import retrograd as torch
        >>> [v.shape for v in broadcast_all(torch.zeros(3, 1), torch.zeros(2), 1.0)]
        [torch.Size([3, 2]), torch.Size([3, 2]), torch.Size([3, 2])]
    """
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor "
                         "or objects implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, torch.Tensor)),
                     torch.get_default_dtype())
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype)
                  for v in values]
    return torch.broadcast_tensors(*values)


def _probs_or_logits(probs, logits):
    """The one parameter given (``probs`` or ``logits``), as a tensor, and its name."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    return name, broadcast_all(value)[0], isinstance(value, Number)


def _standard_normal(shape, dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: sigmoid when binary, else softmax over the last dim.

    Example:
        >>> import retrograd as torch
        >>> logits_to_probs(torch.tensor([0., 0.]))
        tensor([0.5000, 0.5000])
    """
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into ``[eps, 1 - eps]`` of their dtype.

    Example:
        >>> import retrograd as torch
        >>> clamp_probs(torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist()
        [2.220446049250313e-16, 0.9999999999999998]
    """
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped first): log-odds when binary, else log.

    Example:
        >>> import retrograd as torch
        >>> probs_to_logits(torch.tensor([0.5, 0.5]))
        tensor([-0.6931, -0.6931])
    """
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


def _tril_mask(n: int, diag: int):
    arange = torch.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (below diagonal ``diag``) of the trailing ``D x D``
    matrices of ``mat``, in row order.

    Example:
        >>> import retrograd as torch
        >>> tril_matrix_to_vec(torch.arange(9.).reshape(3, 3), diag=-1)
        tensor([3., 6., 7.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The ``D x D`` lower-triangular matrices whose entries (below diagonal ``diag``, in
    row order) are the last dimension of ``vec``.

    Example:
        >>> import retrograd as torch
        >>> vec_to_tril_matrix(torch.tensor([1., 2., 3.]))
        tensor([[1., 0.],
                [2., 3.]])
    """
    # the positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = torch.zeros(vec.shape[:-1] + (n, n), dtype=vec.dtype)
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class lazy_property:
    """A property computed once per instance (with grad enabled) and then stored on it.

    Example:
        >>> class A:
        ...     @lazy_property
        ...     def x(self):
        ...         return 2
        >>> a = A(); a.x, 'x' in a.__dict__
        (2, True)
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
