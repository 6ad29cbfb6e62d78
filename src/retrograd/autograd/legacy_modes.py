"""Legacy and engine-tuning names of ``torch.autograd`` that have nothing to tune here:
``NestedIOFunction``, ``set_multithreading_enabled``, ``enforce_grad_layout_policy``.

Example:
    >>> import retrograd as torch
    >>> with torch.autograd.set_multithreading_enabled(False):
    ...     torch.autograd.grad((torch.ones(2, requires_grad=True) * 3).sum(),
    ...                         torch.ones(1, requires_grad=True), allow_unused=True)
    (None,)
"""

from __future__ import annotations

import threading
from typing import Any

from .._core.grad_mode import _DecoratorContextManager
from .function import Function

__all__ = ["NestedIOFunction", "enforce_grad_layout_policy", "set_multithreading_enabled"]


# Note [Engine flags without an effect]
# PyTorch's engine runs backward on per-device worker threads and can steal or re-stride
# accumulated gradients; both switches tune that. retrograd's engine runs every backward
# on the calling thread and its gradients are NumPy arrays laid out as the engine made
# them, so there is nothing to switch: the flags are kept (thread-local, restored on exit,
# usable as decorators, as PyTorch's) so code that sets them runs unchanged, and
# ``_is_multithreading_enabled()`` / ``_is_grad_layout_enforcement_enabled()`` report them.
class _Flags(threading.local):
    def __init__(self) -> None:
        self.multithreading = True
        self.grad_layout = True


_FLAGS = _Flags()


def _is_multithreading_enabled() -> bool:
    return _FLAGS.multithreading


def _is_grad_layout_enforcement_enabled() -> bool:
    return _FLAGS.grad_layout


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward (Note [Engine flags without an effect]:
    retrograd's backward always runs on the calling thread). Takes effect at construction,
    as PyTorch's; restored on exit.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.legacy_modes import _is_multithreading_enabled
        >>> with torch.autograd.set_multithreading_enabled(False):
        ...     _is_multithreading_enabled()
        False
        >>> _is_multithreading_enabled()
        True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _FLAGS.multithreading
        _FLAGS.multithreading = mode
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _FLAGS.multithreading = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Enforce (default) or relax the gradient layout contract (Note [Engine flags without
    an effect]: retrograd never steals a mis-strided gradient, so relaxing changes nothing).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.legacy_modes import _is_grad_layout_enforcement_enabled
        >>> with torch.autograd.enforce_grad_layout_policy(False):
        ...     _is_grad_layout_enforcement_enabled()
        False
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = _FLAGS.grad_layout
        _FLAGS.grad_layout = enable
        self.mode = enable

    def __call__(self, func=None):
        _FLAGS.grad_layout = self.prev  # as a decorator, the flag applies per call only
        return super().__call__(func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _FLAGS.grad_layout = self.prev

    def clone(self) -> enforce_grad_layout_policy:
        return self.__class__(self.mode)


class NestedIOFunction(Function):
    """The pre-1.0 autograd function with nested inputs (``forward_extended`` /
    ``backward_extended`` instance methods), kept for backward compatibility only.

    PyTorch 2.13 still exports it but neither way of calling it works any more (the engine
    methods it builds on are gone): an instance call and ``apply`` raise
    ``AttributeError``. retrograd raises the same, saying what to use instead.

    Example:
        >>> import retrograd as torch
        >>> class Legacy(torch.autograd.NestedIOFunction):
        ...     def forward_extended(self, x):
        ...         return x * 2
        >>> Legacy.apply(torch.ones(1))
        Traceback (most recent call last):
        AttributeError: 'LegacyBackward' object has no attribute '_nested_input' (...)
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError("'super' object has no attribute '_do_forward' (NestedIOFunction "
                             "is a legacy API that PyTorch no longer runs: subclass "
                             "autograd.Function with static forward/backward and call .apply)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(f"'{cls.__name__}Backward' object has no attribute "
                             "'_nested_input' (NestedIOFunction is a legacy API that PyTorch "
                             "no longer runs: subclass autograd.Function with static "
                             "forward/backward and call .apply)")

    def forward_extended(self, *input: Any) -> None:
        """User defined forward (legacy)."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        """User defined backward (legacy)."""
        raise NotImplementedError
