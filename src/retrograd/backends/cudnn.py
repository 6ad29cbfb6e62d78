"""``torch.backends.cudnn``: cuDNN's flags, settable and read back, with no effect here
(retrograd has no cuDNN; every op runs with NumPy on the CPU, Note [Backend flags]).

Example:
    >>> import retrograd as torch
    >>> torch.backends.cudnn.benchmark = True
    >>> torch.backends.cudnn.benchmark, torch.backends.cudnn.is_available()
    (True, False)
    >>> torch.backends.cudnn.benchmark = False
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from ._flags import bool_flag, flag_module, set_temporarily

_state = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
#: cuDNN's benchmark limit: None, as PyTorch reports it without cuDNN (a plain attribute)
benchmark_limit = None


def is_available() -> bool:
    """False: retrograd has no cuDNN (PyTorch's CPU build says the same).

    Example:
        >>> import retrograd as torch
        >>> torch.backends.cudnn.is_available()
        False
    """
    return False


def version() -> None:
    """None: no cuDNN library is loaded (PyTorch's CPU build says the same).

    Example:
        >>> import retrograd as torch
        >>> torch.backends.cudnn.version() is None
        True
    """
    return None


def is_acceptable(tensor) -> bool:
    """False: no tensor is ever handed to cuDNN here.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.cudnn.is_acceptable(torch.ones(1))
        False
    """
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Iterator[None]:
    """Set cuDNN's flags for a ``with`` block (PyTorch's defaults: every flag given is set,
    so ``flags()`` alone turns cuDNN off); restored after. No effect on the CPU.

    Example:
        >>> import retrograd as torch
        >>> with torch.backends.cudnn.flags(enabled=True, benchmark=True):
        ...     torch.backends.cudnn.benchmark
        True
        >>> torch.backends.cudnn.benchmark
        False
    """
    with set_temporarily(sys.modules[__name__], {
            "enabled": enabled, "benchmark": benchmark, "deterministic": deterministic,
            "allow_tf32": allow_tf32}):
        yield


flag_module(__name__,
            enabled=bool_flag("enabled", "set_enabled_cudnn"),
            benchmark=bool_flag("benchmark", "set_benchmark_cudnn"),
            deterministic=bool_flag("deterministic", "set_deterministic_cudnn"),
            allow_tf32=bool_flag("allow_tf32", "set_allow_tf32_cublas"))
