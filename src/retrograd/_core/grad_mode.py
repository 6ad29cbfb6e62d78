"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 3
    >>> y.requires_grad
    False
"""

from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]


class _State(threading.local):
    """Per-thread modes read on every op call (Note [Thread-local modes])."""

    def __init__(self):
        self.enabled = True
        self.inference = False
        self.anomaly = False
        self.batch = 0  # leading batch dims of gradients (Note [Batched rules])
        self.anomaly_check_nan = True
        self.cut_watch = False  # a user's no_grad block: mark cut paths (Note [Cut markers])


# Note [Thread-local modes]
# Grad mode is the only mutable global the hot path reads. It lives in one
# threading.local so a DataLoader worker thread or a user thread sees its own mode,
# as in PyTorch. Every op reads STATE.enabled once.
STATE = _State()


def is_grad_enabled() -> bool:
    """True when operations are recorded for backward.

    Example:
        >>> import retrograd as torch
        >>> torch.is_grad_enabled()
        True
    """
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``.

    Example:
        >>> import retrograd as torch
        >>> torch.is_inference_mode_enabled()
        False
    """
    return STATE.inference


class _DecoratorContextManager:
    """Context manager usable as a decorator (``@no_grad()`` and ``@no_grad``)."""

    def __call__(self, func=None):
        if func is None:
            return self
        if isinstance(func, type):
            raise TypeError("retrograd grad-mode decorators apply to functions, not classes")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block (or the decorated function).

    Example:
        >>> import retrograd as torch
        >>> @torch.no_grad()
        ... def f(x):
        ...     return x * 2
        >>> f(torch.ones(1, requires_grad=True)).requires_grad
        False
    """

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if func is not None and callable(func):
            self.__init__()
            return self(func)
        return self

    def __init__(self, func=None):
        self.prev = False
        self.prev_watch = False

    def __enter__(self):
        self.prev = STATE.enabled
        self.prev_watch = STATE.cut_watch
        STATE.enabled = False
        STATE.cut_watch = True

    def __exit__(self, *exc):
        STATE.enabled = self.prev
        STATE.cut_watch = self.prev_watch
        return False


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block, even within ``no_grad``.

    Example:
        >>> import retrograd as torch
        >>> with torch.no_grad():
        ...     with torch.enable_grad():
        ...         y = torch.ones(1, requires_grad=True) * 2
        >>> y.requires_grad
        True
    """

    def __new__(cls, func=None):
        self = super().__new__(cls)
        if func is not None and callable(func):
            self.__init__()
            return self(func)
        return self

    def __init__(self, func=None):
        self.prev = False

    def __enter__(self):
        self.prev = STATE.enabled
        STATE.enabled = True

    def __exit__(self, *exc):
        STATE.enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; works as a function call, context manager or decorator.

    Example:
        >>> import retrograd as torch
        >>> with torch.set_grad_enabled(False):
        ...     torch.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool):
        self.prev = STATE.enabled
        self.prev_watch = STATE.cut_watch
        self.mode = bool(mode)
        STATE.enabled = self.mode
        STATE.cut_watch = self.prev_watch or not self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.enabled = self.prev
        STATE.cut_watch = self.prev_watch
        return False

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        STATE.enabled = self.prev
        STATE.cut_watch = self.prev_watch
        return super().__call__(func)


#: called with True / False as a thread enters / leaves inference mode: _tensor/tensor.py's
#: marking of new tensors and ops/op.py's saved-tensor check (Note [Inference tensors])
INFERENCE_HOOKS: list = []


def _inference_hooks(entering: bool) -> None:
    for fn in INFERENCE_HOOKS:
        fn(entering)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside are marked as inference tensors.

    Example:
        >>> import retrograd as torch
        >>> with torch.inference_mode():
        ...     y = torch.ones(2, requires_grad=True) * 2
        >>> y.requires_grad, torch.is_inference_mode_enabled()
        (False, False)
    """

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self.prev = (True, False, False)

    def __enter__(self):
        self.prev = (STATE.enabled, STATE.inference, STATE.cut_watch)
        if self.mode:
            STATE.enabled = False
            STATE.inference = True
            STATE.cut_watch = True
            if not self.prev[1]:  # this thread enters: new tensors are marked
                _inference_hooks(True)  # (Note [Inference tensors] in _tensor/tensor.py)
        else:  # inference_mode(False): normal mode, grad mode on (PyTorch's InferenceMode(false))
            STATE.enabled = True
            if self.prev[1]:
                STATE.inference = False
                _inference_hooks(False)

    def __exit__(self, *exc):
        was = STATE.inference
        STATE.enabled, STATE.inference, STATE.cut_watch = self.prev
        if was != self.prev[1]:
            _inference_hooks(self.prev[1])
        return False

    def clone(self):
        return inference_mode(self.mode)
