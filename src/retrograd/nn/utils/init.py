"""``skip_init``: build a module without running its parameter initialization.

Example:
    >>> import retrograd as torch
    >>> torch.nn.utils.skip_init(torch.nn.Linear, 5, 1).weight.shape
    torch.Size([1, 5])
"""

from __future__ import annotations

import inspect

from ..._core.grad_mode import no_grad
from ..._functions.creation import empty_like
from ..._random.rng import get_rng_state, set_rng_state
from ..modules.module import Module

__all__ = ["skip_init"]

# Note [skip_init without a meta device]
# PyTorch builds the module on the meta device (no memory, no random draws) and then
# allocates uninitialized storage with ``to_empty``. retrograd has no meta device, so the
# module is built normally between a save and a restore of the generator state, and every
# parameter and buffer then gets uninitialized memory of its shape and dtype: what the
# caller sees (the random stream untouched, no initial values) is PyTorch's; the cost is
# one wasted initialization.


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left
    uninitialized (their values are arbitrary) and the random stream untouched, as after
    PyTorch's meta-device construction and ``to_empty``. The class must take ``device``.

    Example:
        >>> import retrograd as torch
        >>> _ = torch.manual_seed(0); a = torch.rand(1)
        >>> _ = torch.manual_seed(0); m = torch.nn.utils.skip_init(torch.nn.Linear, 2, 2)
        >>> bool(torch.rand(1) == a)
        True
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    # Note [skip_init without a meta device]
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
    with no_grad():
        for sub in module.modules():
            for store in (sub._parameters, sub._buffers):
                for t in store.values():
                    if t is not None:
                        t.data = empty_like(t)
    return module
