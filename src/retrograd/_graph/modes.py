"""The one flag the op path tests for every optional mode (Note [Optional modes]).

Example:
    >>> import retrograd as torch
    >>> from retrograd._graph.modes import MODES
    >>> MODES.bits
    0
    >>> with torch.autograd.detect_anomaly(check_nan=False):
    ...     MODES.bits == ANOMALY
    True
"""

from __future__ import annotations

import threading

from .._core.grad_mode import STATE

__all__ = ["MODES", "AUTOCAST", "FORWARD_AD", "ANOMALY", "SAVED_HOOKS", "VMAP", "set_mode",
           "set_anomaly"]

# Note [Optional modes]
# Four features change what an op call does, and all are off in an ordinary training
# step: autocast (amp/state.py), forward-mode AD (Note [Forward AD interceptor]),
# anomaly mode (a traceback per node, NaN checks) and saved-tensor hooks. Each keeps its
# own thread-local state, and each sets its bit here whenever it turns on or off
# (``set_mode``). Every op call (``unary``, ``binary``, ``view_apply``, ``apply``) and
# ``record`` test ``MODES.bits``, one thread-local read, and look at the features
# themselves only when it is set: a feature that is off costs that one test, whichever
# of them it is (Note [Optional modes at dispatch] in ops/dispatch.py). (The markers
# explain_grad reads, Note [Cut markers], are made only on the paths that record
# nothing: they cost the recording path nothing.) vmap (retrograd._functorch) is a
# fifth: while a vmap is open, every op call is offered to vmap's handler first.
AUTOCAST, FORWARD_AD, ANOMALY, SAVED_HOOKS, VMAP = 1, 2, 4, 8, 16


class _Modes(threading.local):
    """Per thread: which optional modes are on (``bits``, 0 when none is)."""

    def __init__(self):
        self.bits = 0


MODES = _Modes()

#: set while retrograd.compile records a call (Note [Tracing] in _compile/record.py):
#: library code that would read a value into Python may keep it a tensor instead
TRACING: list = [False]


def set_mode(bit: int, on: bool) -> None:
    """Turn the optional mode ``bit`` on or off for this thread.

    Example:
        >>> set_mode(SAVED_HOOKS, True); MODES.bits == SAVED_HOOKS
        True
        >>> set_mode(SAVED_HOOKS, False); MODES.bits
        0
    """
    MODES.bits = MODES.bits | bit if on else MODES.bits & ~bit


def set_anomaly(mode: bool, check_nan: bool) -> None:
    """Anomaly mode on or off for this thread (``STATE.anomaly``), with its mode bit.

    Example:
        >>> set_anomaly(True, False); MODES.bits == ANOMALY
        True
        >>> set_anomaly(False, True); MODES.bits
        0
    """
    STATE.anomaly = bool(mode)
    STATE.anomaly_check_nan = bool(check_nan)
    set_mode(ANOMALY, STATE.anomaly)
