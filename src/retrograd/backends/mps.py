"""``torch.backends.mps``: Apple's Metal backend, never available in retrograd.

Example:
    >>> import retrograd as torch
    >>> torch.backends.mps.is_available(), torch.backends.mps.is_built()
    (False, False)
"""

from __future__ import annotations


def is_available() -> bool:
    """False: retrograd runs on the CPU only (``device("mps")`` is refused).

    Example:
        >>> import retrograd as torch
        >>> torch.backends.mps.is_available()
        False
    """
    return False


def is_built() -> bool:
    """False: retrograd is not built with MPS support.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.mps.is_built()
        False
    """
    return False
