"""Reach and swap the tensors of a module by dotted name (``"layer1.conv1.weight"``),
as PyTorch's ``torch.nn.utils._named_member_accessor``.

Example:
    >>> import retrograd as torch
    >>> from retrograd._functorch.member_accessor import NamedMemberAccessor
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    >>> NamedMemberAccessor(net).get_tensor("0.bias").shape
    torch.Size([2])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .._tensor.tensor import Tensor

__all__ = ["NamedMemberAccessor", "MISSING"]

MISSING: Any = object()  # the value of a name the module does not have (swapped in = delete)


def _is_module(obj) -> bool:
    # Note [Modules by duck typing]
    # The func layer sits below nn (tests/project/test_layout.py), so it may not import
    # nn.Module; a module is anything with the three registries Module.__init__ makes.
    d = getattr(obj, "__dict__", {})
    return "_parameters" in d and "_buffers" in d and "_modules" in d


def _check_module(module) -> None:
    if not _is_module(module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")


def _check_name(name: str, what: str = "tensor") -> None:
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def swap_tensor(module, name: str, tensor, allow_missing: bool = False):
    """Put ``tensor`` at ``module.<name>`` (``MISSING`` deletes it); return what was there.

    A parameter or buffer slot keeps its kind: the new tensor goes into the same registry
    whatever its class, so a plain tensor may stand in for a Parameter during a call.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functorch.member_accessor import swap_tensor
        >>> m = torch.nn.Linear(1, 1)
        >>> old = swap_tensor(m, "bias", torch.zeros(1))
        >>> m.bias, type(old).__name__
        (tensor([0.]), 'Parameter')
    """
    _check_module(module)
    if tensor is not MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    for registry in (module._parameters, module._buffers):
        if name in registry:
            orig = registry[name]
            if tensor is MISSING:
                del registry[name]
            else:
                registry[name] = tensor
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    elif not allow_missing:
        raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
    else:
        orig = MISSING
    if orig is not MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


class NamedMemberAccessor:
    """Get, set and swap a module's tensors by dotted name, caching submodule lookups.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functorch.member_accessor import NamedMemberAccessor
        >>> net = torch.nn.Sequential(torch.nn.Linear(1, 1))
        >>> acc = NamedMemberAccessor(net)
        >>> old, missing = acc.swap_tensors_dict({"0.bias": torch.ones(1)})
        >>> net[0].bias, missing
        (tensor([1.]), [])
    """

    def __init__(self, module) -> None:
        self.module = module
        self.memo: dict = {}

    def get_submodule(self, name: str):
        """The submodule at dotted path ``name`` (``""`` is the module itself)."""
        if not name:
            return self.module
        if name in self.memo:
            return self.memo[name]
        prefix, dot, attr = name.rpartition(".")
        parent = self.get_submodule(prefix) if dot else self.module
        try:
            sub = getattr(parent, attr)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
        if not _is_module(sub):
            raise TypeError(f"submodule `{name}`: {sub} is not an instance of torch.nn.Module")
        self.memo[name] = sub
        return sub

    def get_tensor(self, name: str) -> Tensor:
        """The tensor at dotted path ``name``."""
        prefix, _, attr = name.rpartition(".")
        sub = self.get_submodule(prefix)
        try:
            t = getattr(sub, attr)
        except AttributeError as ex:
            raise AttributeError(f"{sub._get_name()} has no attribute `{name}`") from ex
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{t} is not an instance of torch.Tensor")
        return t

    def swap_tensor(self, name: str, value, allow_missing: bool = False):
        """Swap the tensor at dotted path ``name`` for ``value``; return the old one."""
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing)

    def swap_tensors_dict(self, named_tensors: dict, allow_missing: bool = False) -> tuple:
        """Swap every (name, tensor) in; return ({name: old tensor}, names that were absent).

        All or nothing: if one swap fails, those already made are undone before raising.
        """
        orig: dict = {}
        missing: list = []
        try:
            for name, tensor in named_tensors.items():
                old = self.swap_tensor(name, tensor, allow_missing=True)
                if old is MISSING:
                    missing.append(name)
                orig[name] = old
        except Exception:
            for name, old in orig.items():
                self.swap_tensor(name, old, allow_missing=True)
            raise
        if missing and not allow_missing:
            for name, old in orig.items():
                self.swap_tensor(name, old, allow_missing=True)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return orig, missing

    def check_keys(self, keys: Iterable[str]) -> tuple[list, list]:
        """(missing, unexpected): the module's tensor names not in ``keys``, and the reverse."""
        keys = set(keys)
        valid = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)

    def named_tensors(self, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """The module's parameters, then its buffers, by dotted name."""
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)
