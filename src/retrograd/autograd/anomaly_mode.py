"""Anomaly mode: record where each node was created, and stop at the first NaN gradient.

Inside ``detect_anomaly()`` (or after ``set_detect_anomaly(True)``) every node keeps
the forward traceback of the op that made it. During backward, a node whose rule
returns NaN raises PyTorch's "Function 'XBackward0' returned nan values in its 0th
output." and the message shows where that op ran in the forward pass, and whether
the node *created* the NaN (its incoming gradient was finite) or only *passed on* a
NaN it received. Any other error raised while running a node also reports the
node's forward traceback (as a warning, like PyTorch).

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> x = torch.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with torch.autograd.detect_anomaly():
    ...         y = x.sqrt() * 0.0
    ...         try:
    ...             y.backward()
    ...         except RuntimeError as e:
    ...             print(str(e).splitlines()[0])
    Function 'SqrtBackward0' returned nan values in its 0th output.
"""

from __future__ import annotations

import warnings

from .._core.grad_mode import STATE
from .._graph.modes import set_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on.

    Example:
        >>> import retrograd as torch
        >>> torch.is_anomaly_enabled()
        False
    """
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """True while anomaly detection also checks backward outputs for NaN.

    Example:
        >>> import retrograd as torch
        >>> torch.is_anomaly_check_nan_enabled()
        True
    """
    return STATE.anomaly_check_nan


def _set(mode: bool, check_nan: bool) -> None:
    set_anomaly(mode, check_nan)


class detect_anomaly:
    """Context manager turning anomaly detection on for its block (not a decorator,
    as in PyTorch).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with torch.autograd.detect_anomaly():
        ...         print(torch.is_anomaly_enabled())
        True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.check_nan = check_nan
        self.prev_check_nan = STATE.anomaly_check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.prev = STATE.anomaly
        self.prev_check_nan = STATE.anomaly_check_nan
        _set(True, self.check_nan)

    def __exit__(self, *exc) -> bool:
        _set(self.prev, self.prev_check_nan)
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a call, or as a context manager that restores.

    Example:
        >>> import retrograd as torch
        >>> with torch.autograd.set_detect_anomaly(True):
        ...     print(torch.is_anomaly_enabled())
        True
        >>> torch.is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.prev_check_nan = STATE.anomaly_check_nan
        _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> bool:
        _set(self.prev, self.prev_check_nan)
        return False
