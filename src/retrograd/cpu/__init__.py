"""``retrograd.cpu``: the one device retrograd runs on (``torch.cpu`` and ``torch.cpu.amp``).

Example:
    >>> import retrograd as torch
    >>> torch.cpu.is_available(), torch.cpu.device_count(), torch.cpu.current_device()
    (True, 1, 'cpu')
"""

from __future__ import annotations

from ..ops import buffers as _buffers
from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize",
           "empty_cache"]


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


def empty_cache() -> None:
    """Hand the free blocks of retrograd's buffer pool back to the system.

    Large kernel results (1 MiB and up) come from a pool that keeps freed blocks for
    reuse (Note [Buffer pool] in retrograd/ops/buffers.py), as PyTorch's CUDA caching
    allocator does; this is the CPU counterpart of ``torch.cuda.empty_cache()`` (PyTorch's
    CPU allocator keeps no cache, so ``torch.cpu`` has no such function). Blocks still
    used by a tensor or array are not touched. Set ``RETROGRAD_CPU_POOL=0`` in the
    environment before import to turn the pool off.

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(1 << 20) * 2  # a 4 MiB result, from the pool
        >>> del y
        >>> torch.cpu.empty_cache()
    """
    _buffers.empty_cache()
