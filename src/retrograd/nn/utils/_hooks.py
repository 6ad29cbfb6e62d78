"""Removing a module's forward pre-hook found by iterating its hooks (the legacy
reparametrizations and pruning look their hook up by class and name).

Example:
    >>> import retrograd as torch
    >>> from retrograd.nn.utils._hooks import drop_forward_pre_hook
    >>> m = torch.nn.Identity()
    >>> h = m.register_forward_pre_hook(lambda mod, args: None)
    >>> drop_forward_pre_hook(m, next(iter(m._forward_pre_hooks)))
    >>> m._hook_count
    0
"""

from __future__ import annotations

from ..modules.module import Module


def drop_forward_pre_hook(module: Module, key: int) -> None:
    """Remove forward pre-hook ``key`` as its handle's ``remove()`` would (the module's
    hook count included, Note [Module call fast path])."""
    if key in module._forward_pre_hooks:
        del module._forward_pre_hooks[key]
        module._forward_pre_hooks_with_kwargs.pop(key, None)
        module.__dict__["_hook_count"] -= 1
