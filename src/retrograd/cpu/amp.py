"""``retrograd.cpu.amp``: PyTorch's deprecated CPU AMP names (they warn, then work).

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.cpu.amp.autocast():
    ...         y = torch.ones(2, 2) @ torch.ones(2, 2)
    >>> y.dtype
    torch.bfloat16
"""

from __future__ import annotations

from .._core import dtype as D
from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs
from ..amp.state import _warn_deprecated

__all__ = ["autocast", "GradScaler"]


class autocast(_ac.autocast):
    """Deprecated ``torch.cpu.amp.autocast``: ``torch.autocast('cpu', ...)`` after a warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     ac = torch.cpu.amp.autocast(dtype=torch.float16)
        >>> ac.fast_dtype, type(w[0].message).__name__
        (torch.float16, 'FutureWarning')
    """

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.bfloat16,
                 cache_enabled: bool = True):
        _warn_deprecated("torch.cpu.amp.autocast(args...)", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_gs._DeprecatedGradScaler):
    """Deprecated ``torch.cpu.amp.GradScaler``: ``torch.amp.GradScaler('cpu')`` after a warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.cpu.amp.GradScaler().is_enabled()
        True
    """

    _deprecated_device = "cpu"
