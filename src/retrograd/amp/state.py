"""Autocast's thread-local state: whether it is on, its dtype, the weight-cast cache.

Note [Autocast state]
Everything autocast knows lives in one ``threading.local`` (``AMP``), so a thread
sees only the regions it entered itself, as in PyTorch. ``AMP.on`` is True while CPU
autocast is enabled *and* we are not already inside an op that autocast handled
(PyTorch excludes its Autocast dispatch key while the cast op runs, so the ops an
autocast op is made of are not cast again). Every write of ``on`` sets the autocast
bit of Note [Optional modes] (_graph/modes.py), so ordinary ops pay the one test of
``MODES.bits`` when autocast and every other optional mode are off.
``nesting`` counts entered ``autocast`` regions; leaving the outermost one drops the
cache of weight casts (Note [Autocast weight cache] in policy.py).

Example:
    >>> import retrograd as torch
    >>> torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    (False, torch.bfloat16)
    >>> with torch.autocast("cpu"):
    ...     torch.is_autocast_enabled("cpu")
    True
"""

from __future__ import annotations

import threading
import warnings

from .._core import dtype as D
from .._core.device import DEVICE_TYPES
from .._graph.modes import AUTOCAST, set_mode

__all__ = ["AMP", "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "check_device_type"]


class _AutocastState(threading.local):
    """Per-thread autocast flags (Note [Autocast state])."""

    def __init__(self):
        self.on = False  # CPU autocast enabled and not inside an autocast-handled op
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": D.bfloat16, "cuda": D.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}  # id(leaf) -> (weakref to leaf, its lower-precision cast)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "on":  # Note [Optional modes]
            set_mode(AUTOCAST, value)


AMP = _AutocastState()

def check_device_type(device_type: str) -> str:
    """Validate an autocast ``device_type``; returns it ('cpu' or 'cuda').

    Example:
        >>> from retrograd.amp.state import check_device_type
        >>> check_device_type("cpu")
        'cpu'
    """
    if device_type in ("cpu", "cuda"):
        return device_type
    kind = str(device_type).split(":")[0]
    if kind not in DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device "
            f"string: {device_type}")
    raise RuntimeError(
        f"User specified an unsupported autocast device_type '{device_type}'. retrograd runs "
        "on the CPU only: use autocast('cpu', dtype=torch.bfloat16) or torch.float16.")


def _refresh() -> None:
    AMP.on = AMP.enabled["cpu"]


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is enabled for ``device_type`` (no argument: 'cuda', as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu")
        (False, False)
    """
    return AMP.enabled[check_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` (``set_autocast_enabled(flag)``: 'cuda').

    Example:
        >>> import retrograd as torch
        >>> torch.set_autocast_enabled("cpu", False)
    """
    if enabled is None:  # legacy one-argument form targets CUDA
        device_type, enabled = "cuda", device_type
    AMP.enabled[check_device_type(device_type)] = bool(enabled)
    _refresh()


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The lower-precision dtype autocast uses on ``device_type``.

    Example:
        >>> import retrograd as torch
        >>> torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda")
        (torch.bfloat16, torch.float16)
    """
    return AMP.dtype[check_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    """Set the lower-precision dtype of autocast on ``device_type``.

    Example:
        >>> import retrograd as torch
        >>> torch.set_autocast_dtype("cpu", torch.bfloat16)
    """
    AMP.dtype[check_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether casts of leaf weights are cached inside autocast regions.

    Example:
        >>> import retrograd as torch
        >>> torch.is_autocast_cache_enabled()
        True
    """
    return AMP.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Enable or disable the weight-cast cache.

    Example:
        >>> import retrograd as torch
        >>> torch.set_autocast_cache_enabled(True)
    """
    AMP.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached weight casts (done when the outermost autocast region exits).

    Example:
        >>> import retrograd as torch
        >>> torch.clear_autocast_cache()
    """
    AMP.cache.clear()


def autocast_increment_nesting() -> int:
    """Count one more entered autocast region; returns the new depth.

    Example:
        >>> from retrograd.amp.state import autocast_increment_nesting, autocast_decrement_nesting
        >>> autocast_increment_nesting(), autocast_decrement_nesting()
        (1, 0)
    """
    AMP.nesting += 1
    return AMP.nesting


def autocast_decrement_nesting() -> int:
    """Count one region fewer; returns the new depth (0: outside every region).

    Example:
        >>> from retrograd.amp.state import autocast_decrement_nesting
        >>> autocast_decrement_nesting() >= 0
        True
    """
    if AMP.nesting > 0:
        AMP.nesting -= 1
    return AMP.nesting


def _warn_deprecated(old: str, new: str) -> None:
    """PyTorch's FutureWarning for the ``torch.cpu.amp`` / ``torch.cuda.amp`` names, pointed
    at the code that called the deprecated name (the caller's caller)."""
    warnings.warn(f"`{old}` is deprecated. Please use `{new}` instead.", FutureWarning,
                  stacklevel=3)
