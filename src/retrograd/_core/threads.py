"""``torch.set_num_threads`` / ``get_num_threads``: how many threads the kernels under
retrograd may use.

Note [Threads]
PyTorch runs its own kernels on an intra-op thread pool whose size defaults to the
number of physical cores (``OMP_NUM_THREADS`` overrides it) and which
``set_num_threads(n)`` bounds. retrograd's kernels are NumPy's: elementwise ufuncs and
reductions run on one thread; matrix products, convolutions (as products) and the
linear-algebra factorizations run in NumPy's BLAS/LAPACK (OpenBLAS in the wheels), which
has a thread pool of its own, as do the kernels Numba compiles for
``retrograd.compile(mode="max-autotune")``. So ``set_num_threads(n)`` bounds those pools
through threadpoolctl (the well-kept library for this; the ``threads`` extra), and
Numba's when Numba is loaded. Without threadpoolctl the number is kept and reported but
the BLAS pool keeps its own size (set ``OPENBLAS_NUM_THREADS`` before starting Python),
and the first call says so in a warning. ``get_num_threads()`` is what was set, or
PyTorch's default: ``MKL_NUM_THREADS`` if set (PyTorch's x86 builds have MKL), else
``OMP_NUM_THREADS``, else the physical cores; at most the CPUs this process may run on
(measured against torch 2.13 with each combination).

Example:
    >>> import retrograd as torch
    >>> n = torch.get_num_threads()
    >>> torch.set_num_threads(1)
    >>> torch.get_num_threads()
    1
    >>> torch.set_num_threads(n)
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

_SET: list = [None]  # the number set by set_num_threads, None before the first call
_WARNED: list = [False]


@functools.cache
def physical_cores() -> int:
    """The physical cores of this machine (each core counted once however many hardware
    threads it runs), as PyTorch counts them for its default; the logical CPUs where the
    topology cannot be read.

    Example:
        >>> physical_cores() >= 1
        True
    """
    try:
        with open("/proc/cpuinfo") as f:
            cores = set()
            phys = core = None
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    phys = value.strip()
                elif key == "core id":
                    core = value.strip()
                elif not key and phys is not None:
                    cores.add((phys, core))
                    phys = core = None
            if phys is not None:
                cores.add((phys, core))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def _env_threads(name: str) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else 0


def default_num_threads() -> int:
    """PyTorch's default intra-op thread count: ``MKL_NUM_THREADS``, else
    ``OMP_NUM_THREADS`` (each when a positive integer), else the physical cores; capped
    at the CPUs this process may run on.

    Example:
        >>> default_num_threads() >= 1
        True
    """
    n = _env_threads("MKL_NUM_THREADS") or _env_threads("OMP_NUM_THREADS") or physical_cores()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(n, usable))


def get_num_threads() -> int:
    """The number of threads retrograd's kernels may use (Note [Threads]).

    Example:
        >>> import retrograd as torch
        >>> torch.get_num_threads() >= 1
        True
    """
    return _SET[0] if _SET[0] is not None else default_num_threads()


def set_num_threads(n: int) -> None:
    """Bound the thread pools of the BLAS (and Numba) kernels to ``n`` threads, as
    PyTorch bounds its intra-op pool (Note [Threads]).

    Example:
        >>> import retrograd as torch
        >>> before = torch.get_num_threads()
        >>> torch.set_num_threads(1)
        >>> torch.get_num_threads()
        1
        >>> torch.set_num_threads(before)
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _SET[0] = n
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        if not _WARNED[0]:
            _WARNED[0] = True
            warnings.warn("set_num_threads: threadpoolctl is not installed, so NumPy's BLAS "
                          "keeps its own thread count (pip install threadpoolctl, or "
                          "'retrograd[threads]'; or set OPENBLAS_NUM_THREADS before "
                          "starting Python)", RuntimeWarning, stacklevel=2)
    else:
        threadpool_limits(limits=n)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
