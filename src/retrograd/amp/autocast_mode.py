"""``autocast``: regions where matrix products run in bfloat16/float16 and losses in float32.

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(3, 3, requires_grad=True)
    >>> with torch.autocast("cpu", dtype=torch.bfloat16):
    ...     y = torch.ones(2, 3) @ w
    ...     loss = torch.nn.functional.mse_loss(y, torch.zeros(2, 3))
    >>> y.dtype, loss.dtype
    (torch.bfloat16, torch.float32)
    >>> loss.backward(); w.grad.dtype
    torch.float32
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

from .._core import dtype as D
from .._tensor.tensor import Tensor
from . import policy
from .state import (
    AMP,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    check_device_type,
    clear_autocast_cache,
)

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_SUPPORTED = (D.bfloat16, D.float16)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast exists for ``device_type``: 'cpu' (and 'cuda', which then warns).

    Example:
        >>> import retrograd as torch
        >>> torch.amp.is_autocast_available("cpu")
        True
    """
    return device_type in ("cpu", "cuda")


class autocast:
    """Context manager (and decorator) running the ops of a region in mixed precision.

    Inside, matrix products and convolutions run in ``dtype`` (default bfloat16 on the
    CPU), losses and other precision-sensitive ops in float32, everything else in the
    dtype of its inputs (Note [Autocast policy table]). Regions nest; the state is
    thread-local. ``device_type='cuda'`` warns and disables itself, as PyTorch does
    without a GPU.

    Example:
        >>> import retrograd as torch
        >>> a = torch.ones(2, 2)
        >>> with torch.autocast("cpu"):
        ...     b = a @ a
        ...     with torch.autocast("cpu", enabled=False):
        ...         c = a @ a
        >>> b.dtype, c.dtype
        (torch.bfloat16, torch.float32)
    """

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = check_device_type(device_type)
        self.fast_dtype = AMP.dtype[self.device] if dtype is None else dtype
        self._cache_enabled = AMP.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == "cuda":
                warnings.warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast. "
                    "(retrograd runs on the CPU: use torch.autocast('cpu', "
                    "dtype=torch.bfloat16) for mixed precision.)", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling "
                    "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                    "torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        self._prev: list = []

    def __enter__(self) -> autocast:
        if not policy.installed_everywhere():
            policy.install()
        dev = self.device
        self._prev.append((AMP.cache_enabled, AMP.enabled[dev], AMP.dtype[dev], AMP.on))
        AMP.enabled[dev] = self._enabled
        AMP.dtype[dev] = self.fast_dtype
        autocast_increment_nesting()
        AMP.cache_enabled = self._cache_enabled
        AMP.on = AMP.enabled["cpu"]
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        dev = self.device
        AMP.cache_enabled, AMP.enabled[dev], AMP.dtype[dev], AMP.on = self._prev.pop()
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled}, cache_enabled={self._cache_enabled})")


def _cast(value, device_type: str, dtype: D.dtype):
    """Cast floating tensors (not float64) inside ``value`` (nested containers too)."""
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.dtype is not D.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: D.dtype | None = None) -> Callable:
    """Decorator for a custom Function's ``forward`` (PyTorch's ``torch.amp.custom_fwd``).

    With ``cast_inputs``, inside an autocast region the floating tensor arguments are
    cast to it and ``forward`` runs with autocast off; without it, ``forward`` runs
    under the surrounding autocast state, which ``custom_bwd`` restores for backward.

    Example:
        >>> import retrograd as torch
        >>> class Sq(torch.autograd.Function):
        ...     @staticmethod
        ...     @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        ...     def forward(ctx, x):
        ...         return x * x
        ...     @staticmethod
        ...     @torch.amp.custom_bwd(device_type="cpu")
        ...     def backward(ctx, g):
        ...         return g
        >>> with torch.autocast("cpu"):
        ...     Sq.apply(torch.ones(2, dtype=torch.bfloat16)).dtype
        torch.float32
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = AMP.dtype[device_type]
        if cast_inputs is None:
            args[0]._fwd_used_autocast = AMP.enabled[device_type]
            return fwd(*args, **kwargs)
        on = AMP.enabled[device_type]
        args[0]._fwd_used_autocast = False
        if on:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorator for a custom Function's ``backward``: runs it under forward's autocast state.

    Example:
        >>> import retrograd as torch
        >>> deco = torch.amp.custom_bwd(device_type="cpu")
        >>> callable(deco)
        True
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
