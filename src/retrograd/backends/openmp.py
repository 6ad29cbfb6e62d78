"""``torch.backends.openmp``: whether OpenMP is built in.

Example:
    >>> import retrograd as torch
    >>> torch.backends.openmp.is_available()
    True
"""

from __future__ import annotations


def is_available() -> bool:
    """True, as PyTorch's CPU build reports; retrograd's threads are NumPy's BLAS threads
    (set with ``OPENBLAS_NUM_THREADS``), so this changes nothing here.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.openmp.is_available()
        True
    """
    return True
