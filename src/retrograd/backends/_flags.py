"""Settable backend flags with PyTorch's checks, shared by the ``retrograd.backends``
modules.

Example:
    >>> import retrograd as torch
    >>> with torch.backends.cudnn.flags(enabled=False):
    ...     torch.backends.cudnn.enabled
    False
    >>> torch.backends.cudnn.enabled
    True
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator

# Note [Backend flags]
# PyTorch's backend flags (torch.backends.cudnn.benchmark, mkldnn.enabled,
# cuda.matmul.allow_tf32, ...) are process-wide switches for its CUDA, cuDNN and oneDNN
# kernels. retrograd runs every op with NumPy on the CPU, so no flag changes a result:
# they exist so that the lines real scripts start with (``cudnn.benchmark = True``) run,
# read back what was set, and refuse what PyTorch refuses (a non-bool, with PyTorch's
# message). Each backend is a real submodule (``import retrograd.backends.cudnn as
# cudnn`` works) whose class is swapped for one with a property per flag, as PyTorch's
# PropModule does; the values live in the module's ``_state`` dict.


def bool_flag(name: str, setter: str) -> property:
    """A module property holding a bool, refusing other types as PyTorch's ``setter``.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.backends.cudnn.benchmark = 1
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[0])
        set_benchmark_cudnn expects a bool, but got int
    """
    def get(module: types.ModuleType) -> bool:
        return module._state[name]

    def set_(module: types.ModuleType, value: bool) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}\n"
                               f"(retrograd: set {module.__name__}.{name} to True or False; "
                               "the flag has no effect on retrograd's CPU kernels)")
        module._state[name] = value
    return property(get, set_, doc=f"``{name}``: a bool flag with no effect on the CPU.")


def flag_module(module_name: str, **props: property) -> None:
    """Give the module ``module_name`` the flag properties ``props`` (Note [Backend flags]).

    Example:
        >>> import sys, types
        >>> from retrograd.backends._flags import bool_flag, flag_module
        >>> m = sys.modules["demo_flags"] = types.ModuleType("demo_flags")
        >>> m._state = {"on": True}
        >>> flag_module("demo_flags", on=bool_flag("on", "set_on"))
        >>> m.on = False; m.on
        False
    """
    cls = type(module_name.rsplit(".", 1)[-1] + "_module", (types.ModuleType,), props)
    sys.modules[module_name].__class__ = cls


@contextlib.contextmanager
def set_temporarily(module: types.ModuleType, values: dict) -> Iterator[None]:
    """Set the flags in ``values`` (a ``None`` leaves one as it is) for a ``with`` block,
    then restore every flag: the body of each backend's ``flags()``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.backends._flags import set_temporarily
        >>> with set_temporarily(torch.backends.mkldnn, {"enabled": False}):
        ...     torch.backends.mkldnn.enabled
        False
    """
    saved = {k: getattr(module, k) for k in values}
    try:
        for k, v in values.items():
            if v is not None:
                setattr(module, k, v)
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)
