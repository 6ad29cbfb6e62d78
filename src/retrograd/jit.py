"""``torch.jit``: the TorchScript decorators that model code carries run as plain Python;
scripting and tracing (``script``, ``trace``) raise and point to ``retrograd.compile``,
which traces a call and replays it as a plan of NumPy calls (torch.compile's role).

Example:
    >>> import retrograd as torch
    >>> @torch.jit.ignore
    ... def helper(x):
    ...     return x + 1
    >>> helper(torch.tensor(1.)), torch.jit.is_scripting()
    (tensor(2.), False)
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Attribute", "Final", "annotate", "export", "fork", "freeze", "ignore",
           "interface", "is_scripting", "is_tracing", "load", "optimize_for_inference",
           "save", "script", "script_if_tracing", "trace", "trace_module", "unused", "wait"]

_F = TypeVar("_F")

#: ``torch.jit.Final``: ``typing.Final``, as in PyTorch (a class attribute annotation)
Final = typing.Final


def _no_torchscript(what: str) -> RuntimeError:
    """The error of every TorchScript entry point: no TorchScript, and what to use instead
    (the model itself, or retrograd.compile: Note [What compile does here] in compiler.py)."""
    return RuntimeError(
        f"torch.jit.{what} is not supported: retrograd has no TorchScript (no script "
        "compiler, tracer or TorchScript archives). Call the model directly (it runs eagerly, "
        "in Python on NumPy), or use retrograd.compile(model), torch.compile's counterpart: "
        "it returns a compiled module or function whose calls are traced once and replayed as "
        "a plan of NumPy calls, running eagerly what the plan cannot express "
        "(retrograd.compiler.explain(model)(*inputs) says what). Save weights with "
        "torch.save(model.state_dict(), path).")


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb=None,
           example_inputs=None) -> Any:
    """Raises RuntimeError: no TorchScript here; use the model itself or ``retrograd.compile``.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.jit.script(torch.nn.Linear(2, 2))
        ... except RuntimeError as e:
        ...     print(str(e)[:40])
        torch.jit.script is not supported: retro
    """
    raise _no_torchscript("script")


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Raises RuntimeError: no tracer here; use the function itself or ``retrograd.compile``.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2))
        ... except RuntimeError as e:
        ...     print(type(e).__name__)
        RuntimeError
    """
    raise _no_torchscript("trace")


def trace_module(mod: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """Raises RuntimeError, as ``trace``.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.trace_module is not None
        True
    """
    raise _no_torchscript("trace_module")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Raises RuntimeError: there are no ScriptModules to save (use ``torch.save``).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.jit.save(torch.nn.Linear(1, 1), "m.pt")
        ... except RuntimeError:
        ...     print("use torch.save(model.state_dict(), path)")
        use torch.save(model.state_dict(), path)
    """
    raise _no_torchscript("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """Raises RuntimeError: TorchScript archives cannot be run here (use ``torch.load``
    for state dicts).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.jit.load("model.pt")
        ... except RuntimeError:
        ...     print("no TorchScript")
        no TorchScript
    """
    raise _no_torchscript("load")


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """Raises RuntimeError: only ScriptModules can be frozen.

    Example:
        >>> import retrograd as torch
        >>> callable(torch.jit.freeze)
        True
    """
    raise _no_torchscript("freeze")


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    """Raises RuntimeError: only ScriptModules can be optimised for inference.

    Example:
        >>> import retrograd as torch
        >>> callable(torch.jit.optimize_for_inference)
        True
    """
    raise _no_torchscript("optimize_for_inference")


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@torch.jit.ignore`` / ``@torch.jit.ignore(drop=...)``: the function, unchanged.

    Example:
        >>> import retrograd as torch
        >>> @torch.jit.ignore()
        ... def f(x):
        ...     return 2 * x
        >>> f(3)
        6
    """
    if callable(drop):
        return drop
    if drop:  # PyTorch's deprecation of ignore(True)
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)
    return _identity


def _identity(fn: _F) -> _F:
    return fn


def unused(fn: _F) -> _F:
    """``@torch.jit.unused``: the function (or property), unchanged.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.unused(len)([1, 2])
        2
    """
    return fn


def export(fn: _F) -> _F:
    """``@torch.jit.export``: the method, unchanged.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.export(abs)(-1)
        1
    """
    return fn


def interface(obj: _F) -> _F:
    """``@torch.jit.interface``: the class, unchanged.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.interface(int) is int
        True
    """
    return obj


def script_if_tracing(fn: _F) -> _F:
    """``@torch.jit.script_if_tracing``: the function, unchanged (nothing is traced here).

    Example:
        >>> import retrograd as torch
        >>> torch.jit.script_if_tracing(abs)(-2)
        2
    """
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript here.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.is_scripting()
        False
    """
    return False


def is_tracing() -> bool:
    """False: code never runs under the tracer here.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.is_tracing()
        False
    """
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """``the_value``, unchanged (the type is for TorchScript's compiler).

    Example:
        >>> import retrograd as torch
        >>> torch.jit.annotate(list[int], [])
        []
    """
    return the_value


def Attribute(value: Any, type: Any) -> Any:
    """``value``, unchanged: outside TorchScript an Attribute is its value.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.Attribute(3, int)
        3
    """
    return value


class Future:
    """The result of ``torch.jit.fork``: the call already ran; ``wait()`` returns it.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.fork(pow, 2, 3).wait()
        8
    """

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value

    def value(self) -> Any:
        return self._value

    def done(self) -> bool:
        return True


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now (as PyTorch does outside TorchScript) and return
    its completed ``Future``.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.wait(torch.jit.fork(max, 1, 5))
        5
    """
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """The value of a ``Future`` from ``fork``.

    Example:
        >>> import retrograd as torch
        >>> torch.jit.wait(torch.jit.fork(min, 1, 5))
        1
    """
    return future.wait()
