"""The per-device autocast accessors PyTorch keeps for old code
(``torch.is_autocast_cpu_enabled`` & co), each warning as PyTorch does and forwarding to
the device-type form in ``amp.state``.

Example:
    >>> import warnings, retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.get_autocast_cpu_dtype()
    torch.bfloat16
"""

from __future__ import annotations

import warnings

from .._core import dtype as D
from . import state

__all__ = ["is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
           "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
           "autocast_increment_nesting", "autocast_decrement_nesting"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled('cpu')``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.is_autocast_cpu_enabled()
        False
    """
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return state.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled('cpu', enabled)``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.set_autocast_cpu_enabled(False)
    """
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    state.set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> D.dtype:
    """Deprecated: ``get_autocast_dtype('cpu')``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.get_autocast_cpu_dtype()
        torch.bfloat16
    """
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return state.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: D.dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cpu', dtype)``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.set_autocast_cpu_dtype(torch.bfloat16)
    """
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    state.set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> D.dtype:
    """Deprecated: ``get_autocast_dtype('cuda')``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.get_autocast_gpu_dtype()
        torch.float16
    """
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return state.get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: D.dtype) -> None:
    """Deprecated: ``set_autocast_dtype('cuda', dtype)``.

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.set_autocast_gpu_dtype(torch.float16)
    """
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    state.set_autocast_dtype("cuda", dtype)


autocast_increment_nesting = state.autocast_increment_nesting
autocast_decrement_nesting = state.autocast_decrement_nesting
