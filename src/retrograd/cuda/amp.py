"""``retrograd.cuda.amp``: PyTorch's deprecated CUDA AMP names, answering as a CPU-only build.

``torch.cuda.amp.autocast()`` and ``torch.cuda.amp.GradScaler()`` warn that they are
deprecated, then warn that CUDA is not available and disable themselves (so a seed
written for a GPU runs unscaled, in float32). Use ``torch.autocast('cpu',
dtype=torch.bfloat16)`` and ``torch.amp.GradScaler('cpu')`` for mixed precision here.

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.cuda.amp.GradScaler().is_enabled()
    False
"""

from __future__ import annotations

import functools

from .._core import dtype as D
from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs
from ..amp.state import _warn_deprecated

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "amp_definitely_not_available"]


def amp_definitely_not_available() -> bool:
    """Always True: there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.amp.amp_definitely_not_available()
        True
    """
    return True


class autocast(_ac.autocast):
    """Deprecated ``torch.cuda.amp.autocast``: warns, then disables itself (no GPU).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     with torch.cuda.amp.autocast():
        ...         (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
        torch.float32
        >>> [type(x.message).__name__ for x in w]
        ['FutureWarning', 'UserWarning']
    """

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.float16,
                 cache_enabled: bool = True):
        _warn_deprecated("torch.cuda.amp.autocast(args...)",
                         "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_gs._DeprecatedGradScaler):
    """Deprecated ``torch.cuda.amp.GradScaler``: warns, then disables itself (no GPU).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     s = torch.cuda.amp.GradScaler()
        >>> s.scale(torch.tensor(3.0)), s.get_scale()
        (tensor(3.), 1.0)
    """

    _deprecated_device = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated ``torch.cuda.amp.custom_fwd``: ``torch.amp.custom_fwd(device_type='cuda')``.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     f = torch.cuda.amp.custom_fwd(lambda ctx, x: x)
        >>> callable(f)
        True
    """
    _warn_deprecated("torch.cuda.amp.custom_fwd(args...)",
                     "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(_ac.custom_fwd, device_type="cuda")(fwd=fwd,
                                                                  cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated ``torch.cuda.amp.custom_bwd``: ``torch.amp.custom_bwd(device_type='cuda')``.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     f = torch.cuda.amp.custom_bwd(lambda ctx, g: g)
        >>> callable(f)
        True
    """
    _warn_deprecated("torch.cuda.amp.custom_bwd(args...)",
                     "torch.amp.custom_bwd(args..., device_type='cuda')")
    return functools.partial(_ac.custom_bwd, device_type="cuda")(bwd)
