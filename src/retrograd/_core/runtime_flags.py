"""The process-level switches and facts at the top of real scripts: thread counts, what
this build was compiled with, the warn-always flag, flush-denormal, and the exception
classes PyTorch raises for accelerator failures.

Example:
    >>> import retrograd as torch
    >>> torch.get_num_interop_threads() >= 1, torch.has_lapack
    (True, True)
"""

from __future__ import annotations

from typing import Protocol

from .grad_mode import STATE

__all__ = [
    "get_num_interop_threads", "set_num_interop_threads", "init_num_threads", "has_lapack",
    "has_mkl", "has_openmp", "has_spectral", "set_flush_denormal", "is_warn_always_enabled",
    "set_warn_always", "get_device", "OutOfMemoryError", "AcceleratorError", "FatalError",
    "thread_safe_generator", "set_anomaly_enabled",
]

# Note [Build facts]
# ``has_*`` say what this build can do, as PyTorch's flags do for its own build: LAPACK
# (linalg runs on NumPy's LAPACK) and spectral ops (NumPy's FFT) are here; MKL and
# OpenMP are not (NumPy's kernels are single-threaded per call, and retrograd links no
# MKL of its own). retrograd has no inter-op thread pool: ops run one after another on
# the calling thread, so the inter-op thread count is 1 unless a script sets it, and
# setting it changes nothing but the value read back.
has_lapack = True
has_mkl = False
has_openmp = False
has_spectral = True

_INTEROP = {"threads": 1, "set": False}
_WARN_ALWAYS = [False]


def get_num_interop_threads() -> int:
    """Number of threads for inter-op parallelism (1: retrograd runs ops one at a time).

    Example:
        >>> import retrograd as torch
        >>> torch.get_num_interop_threads()
        1
    """
    return _INTEROP["threads"]


def set_num_interop_threads(n: int) -> None:
    """Record the inter-op thread count (Note [Build facts]: it changes no scheduling).
    As in PyTorch it may be set once, with a positive number.

    Example:
        >>> import retrograd as torch
        >>> torch.get_num_interop_threads()
        1
    """
    if int(n) <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _INTEROP["set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called (retrograd, like "
                           "PyTorch, takes the value once per process: set it at start-up)")
    _INTEROP["threads"], _INTEROP["set"] = int(n), True


def init_num_threads() -> None:
    """Initialise the intra-op thread settings of the calling thread (nothing to do here).

    Example:
        >>> import retrograd as torch
        >>> torch.init_num_threads()
    """


# Note [Flush denormal]
# PyTorch's ``set_flush_denormal(mode)`` sets the CPU's FTZ/DAZ bits and returns True
# where the CPU supports them. NumPy's kernels cannot be told to flush denormals, so
# retrograd honours only ``mode=False`` (denormals kept: True, as PyTorch answers) and
# answers False to ``mode=True``: PyTorch's own answer on a CPU without the feature,
# which scripts already handle, rather than a True that would claim a flush never done.
def set_flush_denormal(mode: bool) -> bool:
    """Whether the request was honoured: True for ``False``, False for ``True``
    (Note [Flush denormal]).

    Example:
        >>> import retrograd as torch
        >>> torch.set_flush_denormal(False), torch.set_flush_denormal(True)
        (True, False)
    """
    return not mode


def is_warn_always_enabled() -> bool:
    """Whether warn-once warnings are shown every time (see ``set_warn_always``).

    Example:
        >>> import retrograd as torch
        >>> torch.is_warn_always_enabled()
        False
    """
    return _WARN_ALWAYS[0]


def set_warn_always(b: bool) -> None:
    """Set the flag ``is_warn_always_enabled`` reads. retrograd's warnings go through
    Python's ``warnings`` module, whose filters decide how often one is shown.

    Example:
        >>> import retrograd as torch
        >>> torch.set_warn_always(False)
    """
    _WARN_ALWAYS[0] = bool(b)


class OnADevice(Protocol):
    """What ``get_device`` takes: a tensor (the core layer names it by what it uses, Note
    [Type hints] in hints.py)."""

    def get_device(self) -> int: ...


def get_device(input: OnADevice) -> int:
    """The device index of ``input``: -1 for a CPU tensor, as PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.get_device(torch.ones(1))
        -1
    """
    return input.get_device()


class OutOfMemoryError(RuntimeError):
    """Raised when an accelerator runs out of memory (never by retrograd's CPU kernels)."""


class AcceleratorError(RuntimeError):
    """Raised for an error reported by an accelerator back end."""


class FatalError(Exception):
    """PyTorch's unrecoverable internal error."""


def thread_safe_generator() -> None:
    """The generator of the calling DataLoader thread worker, or None. retrograd's
    DataLoader workers are processes, so this is None, which makes random functions use
    the default generator, as in PyTorch's main process.

    Example:
        >>> import retrograd as torch
        >>> torch.thread_safe_generator() is None
        True
    """
    return None


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly mode on or off globally (``detect_anomaly`` as a switch).

    Example:
        >>> import retrograd as torch
        >>> torch.set_anomaly_enabled(False); torch.is_anomaly_enabled()
        False
    """
    STATE.anomaly = bool(enabled)
    STATE.anomaly_check_nan = bool(check_nan)
