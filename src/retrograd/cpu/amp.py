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

import warnings

from .. import _dtype as D
from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs

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
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_gs.GradScaler):
    """Deprecated ``torch.cpu.amp.GradScaler``: ``torch.amp.GradScaler('cpu')`` after a warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.cpu.amp.GradScaler().is_enabled()
        True
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
