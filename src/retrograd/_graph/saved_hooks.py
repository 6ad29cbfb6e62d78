"""Saved-tensor hooks: every tensor a node saves for backward can pass through them.

Example:
    >>> import retrograd as torch
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t
    >>> x = torch.ones(3, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = (x * x).sum()
    >>> len(packed)
    2
"""

from __future__ import annotations

import threading

from . import node as _node
from .modes import SAVED_HOOKS, set_mode
from .node import _OutputSlot, _Packed

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "HOOKS"]


class _Hooks(threading.local):
    def __init__(self):
        self.stack = []
        self.disabled_msg = None
        # record watchers: ``watch(node, outs, inputs)`` for every node recorded while a
        # pack hook is on (before its tensors are packed); the innermost one is called.
        # Selective checkpointing asks its policy here (utils/checkpoint_selective.py).
        self.watchers = []

    def pack_all(self, node, outs) -> None:
        """Send each saved tensor of ``node`` through the innermost pack hook."""
        if self.disabled_msg is not None:
            raise RuntimeError(self.disabled_msg)
        pack, unpack = self.stack[-1]
        new = []
        for s in node._saved:
            if s.__class__ is _OutputSlot:
                o = outs if node._nout == 1 else outs[s.k]
                t = o._detached()
                new.append(_Packed(pack(t), unpack, True, s.k))
            elif isinstance(s, _node._Tensor):
                src = None
                if s._rg:
                    fn = s.grad_fn
                    src = (fn, s._out_nr, s._grad_accumulator() if fn is None else None)
                new.append(_Packed(pack(s), unpack, False, 0, src))
            else:
                new.append(s)
        node._saved = new
        node._ver = [0 if isinstance(x, _Packed) else None for x in new]
        node._out = None


HOOKS = _Hooks()


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> obj`` when saved, ``unpack_hook(obj) -> tensor``.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        ...     y = x.pow(2).sum()
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if HOOKS.disabled_msg is not None:
            raise RuntimeError(HOOKS.disabled_msg)
        HOOKS.stack.append((self.pack_hook, self.unpack_hook))
        set_mode(SAVED_HOOKS, True)  # Note [Optional modes]
        return self

    def __exit__(self, *exc):
        HOOKS.stack.pop()
        set_mode(SAVED_HOOKS, bool(HOOKS.stack))
        return False


class save_on_cpu(saved_tensors_hooks):
    """Save tensors "on the CPU": a copy through the hooks (retrograd is CPU-only already).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.autograd.graph.save_on_cpu(pin_memory=False):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cpu"):
        def pack(t):
            c = _node._make(t._data.copy())
            return (t, c) if t._rg else (None, c)

        def unpack(p):
            orig, c = p
            return c if orig is None else orig

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Within this block, registering or using saved-tensor hooks raises ``error_message``.

    Example:
        >>> import retrograd as torch
        >>> with torch.autograd.graph.disable_saved_tensors_hooks("not here"):
        ...     pass
    """

    def __init__(self, error_message: str):
        self.msg = error_message
        self.prev = None

    def __enter__(self):
        self.prev = HOOKS.disabled_msg
        HOOKS.disabled_msg = self.msg

    def __exit__(self, *exc):
        HOOKS.disabled_msg = self.prev
        return False
