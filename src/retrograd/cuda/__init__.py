"""retrograd.cuda: there is no GPU backend; these answer as a CPU-only PyTorch build does.

Example:
    >>> import retrograd as torch
    >>> torch.cuda.is_available(), torch.cuda.device_count()
    (False, 0)
"""

from __future__ import annotations


def is_available() -> bool:
    """Always False: retrograd computes with NumPy on the CPU."""
    return False


def device_count() -> int:
    """Always 0."""
    return 0


def is_bf16_supported() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored (no GPU generators), as on a CPU-only PyTorch."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored."""


def synchronize(device=None) -> None:
    """Nothing to wait for on the CPU."""


def empty_cache() -> None:
    """Nothing to free."""


def current_device() -> int:
    raise RuntimeError("retrograd runs on the CPU only; there is no current CUDA device. "
                       "Check torch.cuda.is_available() before using CUDA.")


from . import amp  # noqa: E402,F401  (torch.cuda.amp: deprecated names that warn, no GPU)
