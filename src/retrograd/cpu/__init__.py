"""``retrograd.cpu``: the one device retrograd runs on (``torch.cpu`` and ``torch.cpu.amp``).

Example:
    >>> import retrograd as torch
    >>> torch.cpu.is_available(), torch.cpu.device_count(), torch.cpu.current_device()
    (True, 1, 'cpu')
"""

from __future__ import annotations

from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    """Always True.

    Example:
        >>> import retrograd as torch
        >>> torch.cpu.is_available()
        True
    """
    return True


def device_count() -> int:
    """Always 1, as PyTorch answers.

    Example:
        >>> import retrograd as torch
        >>> torch.cpu.device_count()
        1
    """
    return 1


def current_device() -> str:
    """'cpu', as PyTorch answers.

    Example:
        >>> import retrograd as torch
        >>> torch.cpu.current_device()
        'cpu'
    """
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: NumPy returns when the work is done.

    Example:
        >>> import retrograd as torch
        >>> torch.cpu.synchronize()
    """
