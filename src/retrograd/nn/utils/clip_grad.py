"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``.

Example:
    >>> import retrograd as torch
    >>> w = torch.nn.Parameter(torch.ones(4))
    >>> (w * 3).sum().backward()
    >>> torch.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(6.)
    >>> round(w.grad.norm().item(), 4)
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..._core.grad_mode import no_grad
from ..._tensor.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float | str = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (as if concatenated).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.utils.get_total_norm([torch.tensor([3.]), torch.tensor([4.])])
        tensor(5.)
    """
    from ... import _functions

    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _functions.creation.tensor(0.0)
    with no_grad():
        norms = [_functions.namespace.vector_norm(t, norm_type) for t in tensors]
        if len(norms) == 1:
            total = norms[0]
        else:
            dt = norms[0].dtype
            total = _functions.namespace.vector_norm(
                _functions.namespace.stack([n.to(dt) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale gradients by ``max_norm / (total_norm + 1e-6)`` when that is below 1.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.Parameter(torch.ones(1)); w.grad = torch.tensor([4.])
        >>> torch.nn.utils.clip_grads_with_norm_([w], 2.0, torch.tensor(4.)); w.grad
        tensor([2.0000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.dtype))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Rescale the gradients so their total norm is at most ``max_norm``; returns the total
    norm before clipping. ``norm_type`` may be ``inf``; ``foreach`` is accepted.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.Parameter(torch.zeros(2)); w.grad = torch.tensor([3., 4.])
        >>> torch.nn.utils.clip_grad_norm_(w, 1.0, norm_type=float('inf'))
        tensor(4.)
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value] in place.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.Parameter(torch.zeros(2)); w.grad = torch.tensor([-3., 0.5])
        >>> torch.nn.utils.clip_grad_value_(w, 1.0); w.grad
        tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
