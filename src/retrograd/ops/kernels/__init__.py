"""NumPy kernels of the records that need more than one line: the sum with PyTorch's
low-precision rule (``sum.py``), var/std with Welford's exact zeros (``var.py``), pow's
special cases (``pow.py``) and the linear-algebra factorizations (``linalg.py``).

Example:
    >>> from retrograd.ops.kernels.sum import reduced_count
    >>> reduced_count((2, 3), (1,))
    3
"""
