"""``Module``: the base class of every layer and network.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn as nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> net = Net()
    >>> [name for name, _ in net.named_parameters()]
    ['fc.weight', 'fc.bias']
    >>> net
    Net(
      (fc): Linear(in_features=2, out_features=1, bias=True)
    )
"""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..._core.device import CPU, META, cuda_unavailable
from ..._core.dtype import dtype
from ..._core.grad_mode import STATE, no_grad
from ..._core.hints import DeviceLike
from ..._core.meta import NO_DATA
from ..._functions.conversion import parse_to
from ..._functions.creation import empty_like, tensor
from ..._graph.node import SITE_SCOPE, RemovableHandle, call_unscoped, is_library_file, user_site
from ..._tensor.tensor import Tensor, _make
from ...ops.op import record
from ...ops.records.nn import backward_hook
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "typename"]

#: ``hook(module, grad_output)``: may return a replacement ``grad_output``
BackwardPreHook = Callable[["Module", tuple[Tensor, ...]], tuple[Tensor, ...] | None]
#: ``hook(module, grad_input, grad_output)``: may return a replacement ``grad_input``
BackwardHook = Callable[["Module", tuple[Tensor, ...], tuple[Tensor, ...]],
                        tuple[Tensor, ...] | None]


def typename(obj) -> str:
    """PyTorch's ``torch.typename``: 'torch.FloatTensor' for tensors, else module.qualname.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.modules.module import typename
        >>> typename(torch.ones(1)), typename(3)
        ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_INIT_HINT = ("; call super().__init__() at the top of your module's __init__, before "
              "assigning parameters, buffers or submodules")


# Note [Module call fast path]
# ``__call__`` is on the hot path of every network: with no hooks registered it is a
# test of one counter (``_hook_count``, kept up to date by every register/remove), the
# site scope of Note [Site scopes] (one dict lookup says whether the class's forward is
# retrograd's own) and a call to ``forward``.
_LIBRARY_FORWARD: dict = {}


def _library_forward(cls) -> bool:
    """Whether ``cls.forward`` is retrograd's own code (cached per class)."""
    code = getattr(cls.forward, "__code__", None)
    lib = _LIBRARY_FORWARD[cls] = code is not None and is_library_file(code.co_filename)
    return lib


class Module:
    """Base class for all neural network modules.

    Subclasses call ``super().__init__()`` and then assign parameters, buffers and
    submodules as attributes; ``forward`` defines the computation.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Linear(3, 2)
        >>> m(torch.ones(4, 3)).shape
        torch.Size([4, 2])
    """

    training: bool
    _version: int = 1
    call_super_init: bool = False
    dump_patches: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_hook_count"] = 0

    def forward(self, *input: Any) -> Any:
        """The computation; every subclass overrides it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # -- calling --------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._hook_count:
            return self._call_with_hooks(args, kwargs)
        # Note [Site scopes] (_graph/node.py): a forward of ours runs under the user's
        # line, found once; a forward of the user's runs unscoped (its ops find their line)
        lib = _LIBRARY_FORWARD.get(self.__class__)
        if lib is None:
            lib = _library_forward(self.__class__)
        scope = SITE_SCOPE
        prev = scope.site
        if lib:
            if prev is not None:
                return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
            scope.site = user_site()
        elif prev is None:
            return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
        else:
            scope.site = None
        try:
            return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
        finally:
            scope.site = prev

    def _call_with_hooks(self, args, kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:  # Note [Compiled modules]
            return compiled(*args, **kwargs)
        # hooks are the user's code: no site scope (Note [Site scopes])
        return call_unscoped(self._call_hooked, args, kwargs)

    # Note [Compiled modules]
    # ``Module.compile()`` (as PyTorch's) makes the module's own calls compiled. So that
    # the call fast path (Note [Module call fast path]) pays nothing for it, compiling
    # counts as one hook: ``__call__`` then takes the hooked path, which hands the call
    # to the compiled function; that function traces ``_call_uncompiled`` (the module's
    # hooks and forward, as an uncompiled call runs them). ``Module.compile`` itself is
    # installed by retrograd.compiler, the layer that owns the compiler.
    def _call_uncompiled(self, *args, **kwargs):
        return call_unscoped(self._call_hooked, args, kwargs)

    def _call_hooked(self, args, kwargs):
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {r}.")
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = bool(self._backward_hooks or self._backward_pre_hooks)
        state = None
        if bw:
            state = _BackwardHookState(self)
            args = state.wrap_inputs(args)
        called = set()
        try:
            result = self.forward(*args, **kwargs)
            for hid, hook in list(self._forward_hooks.items()):
                called.add(hid)
                if hid in self._forward_hooks_with_kwargs:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
        except Exception:
            for hid, hook in list(self._forward_hooks.items()):
                if hid in self._forward_hooks_always_called and hid not in called:
                    try:
                        if hid in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:
                        pass
            raise
        if bw:
            result = state.wrap_outputs(result)
        return result

    # -- registration -----------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. BatchNorm's running mean).

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Module()
            >>> m.register_buffer("count", torch.zeros(1))
            >>> m.count
            tensor([0.])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call" +
                                 _INIT_HINT)
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = getattr(tensor, "persistent", persistent)
            t = _make(tensor._data)
            t._vc = tensor._vc
            t._rg = tensor._rg
            tensor = t
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (``None`` is allowed and skipped by ``parameters()``).

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Module()
            >>> m.register_parameter("w", torch.nn.Parameter(torch.ones(1)))
            >>> [n for n, _ in m.named_parameters()]
            ['w']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call" +
                                 _INIT_HINT)
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Module()
            >>> m.add_module("act", torch.nn.ReLU())
            >>> m
            Module(
              (act): ReLU()
            )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("" is the module itself).

        Example:
            >>> import retrograd as torch
            >>> net = torch.nn.Sequential(torch.nn.Linear(1, 1))
            >>> net.get_submodule("0")
            Linear(in_features=1, out_features=1, bias=True)
        """
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path, e.g. ``'fc.weight'``.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(2, 1).get_parameter("bias").shape
            torch.Size([1])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path, e.g. ``'bn.running_mean'``.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.BatchNorm1d(2).get_buffer("running_var")
            tensor([1., 1.])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- attribute protocol -------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
        if "_buffers" in d:
            b = d["_buffers"]
            if name in b:
                return b[name]
        if "_modules" in d:
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*dicts_or_sets):
            for ds in dicts_or_sets:
                if name in ds:
                    if isinstance(ds, dict):
                        del ds[name]
                    else:
                        ds.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call" +
                                     _INIT_HINT)
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call" +
                                     _INIT_HINT)
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call" +
                                     _INIT_HINT)
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            remove_from(d, self._parameters, self._modules)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(self.__class__)) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # -- iteration ------------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                name = module_prefix + ("." if module_prefix else "") + k
                yield name, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (of submodules too, unless ``recurse=False``), each once.

        Example:
            >>> import retrograd as torch
            >>> sum(p.numel() for p in torch.nn.Linear(3, 2).parameters())
            8
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs.

        Example:
            >>> import retrograd as torch
            >>> [n for n, _ in torch.nn.Linear(3, 2).named_parameters(prefix="fc")]
            ['fc.weight', 'fc.bias']
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """All buffers (of submodules too, unless ``recurse=False``).

        Example:
            >>> import retrograd as torch
            >>> len(list(torch.nn.BatchNorm1d(3).buffers()))
            3
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs.

        Example:
            >>> import retrograd as torch
            >>> [n for n, _ in torch.nn.BatchNorm1d(3).named_buffers()]
            ['running_mean', 'running_var', 'num_batches_tracked']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """Immediate child modules.

        Example:
            >>> import retrograd as torch
            >>> len(list(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh()).children()))
            2
        """
        for _, m in self.named_children():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child module) pairs, each module once.

        Example:
            >>> import retrograd as torch
            >>> [n for n, _ in torch.nn.Sequential(torch.nn.ReLU()).named_children()]
            ['0']
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self) -> Iterator[Module]:
        """This module and all modules below it, each once.

        Example:
            >>> import retrograd as torch
            >>> len(list(torch.nn.Sequential(torch.nn.ReLU()).modules()))
            2
        """
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) pairs, this module first (name ``prefix``).

        Example:
            >>> import retrograd as torch
            >>> [n for n, _ in torch.nn.Sequential(torch.nn.ReLU()).named_modules()]
            ['', '0']
        """
        if memo is None:
            memo = set()
        # iterative pre-order walk (no recursion, so very deep nests work)
        stack = [(prefix, self)]
        while stack:
            pfx, mod = stack.pop()
            if mod in memo:
                continue
            if remove_duplicate:
                memo.add(mod)
            yield pfx, mod
            kids = [(pfx + ("." if pfx else "") + name, m) for name, m in mod._modules.items()
                    if m is not None]
            stack.extend(reversed(kids))

    # -- modes -------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=True``) or evaluation mode, recursively.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Dropout().train(False).training
            False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        """Evaluation mode (``train(False)``): dropout off, batch norm uses running stats.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.BatchNorm1d(2).eval().training
            False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Linear(2, 2).requires_grad_(False)
            >>> m.weight.requires_grad
            False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default).

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Linear(2, 1); m(torch.ones(1, 2)).sum().backward()
            >>> m.zero_grad(); m.weight.grad is None
            True
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g = g.detach()
                        p.grad = g
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def share_memory(self) -> Module:
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``:
        processes forked afterwards see the writes, as in Hogwild training).

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(2, 2).share_memory().weight.is_shared()
            True
        """
        for t in itertools.chain(self.parameters(), self.buffers()):
            t.share_memory_()
        return self

    # -- conversion ---------------------------------------------------------------------------
    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module.

        Example:
            >>> import retrograd as torch
            >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
            >>> def init(m):
            ...     if isinstance(m, torch.nn.Linear):
            ...         torch.nn.init.ones_(m.weight)
            >>> net.apply(init)[0].weight.sum().item()
            4.0
        """
        # children first (post-order), iteratively
        order = []
        stack = [(self, False)]
        seen = set()
        while stack:
            mod, expanded = stack.pop()
            if expanded:
                order.append(mod)
                continue
            stack.append((mod, True))
            for child in reversed(list(mod.children())):
                if child not in seen:
                    seen.add(child)
                    stack.append((child, False))
        for m in order:
            fn(m)
        return self

    def _apply(self, fn, recurse: bool = True) -> Module:
        mods = self.modules() if recurse else [self]
        for m in mods:
            for _key, param in m._parameters.items():
                if param is None:
                    continue
                with no_grad():
                    new = fn(param)
                if new is not param:
                    param.data = new
                    param._vc[0] += 1
                g = param._grad
                if g is not None:
                    with no_grad():
                        ng = fn(g)
                    if ng is not g:
                        param._grad = ng.detach().requires_grad_(g.requires_grad)
            for key, buf in m._buffers.items():
                if buf is not None:
                    m._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Convert floating parameters and buffers to a dtype, and/or move all of them to
        the 'meta' device (shapes and dtypes, no data: the ensembling recipe's
        ``copy.deepcopy(model).to('meta')``); devices other than the CPU raise. With
        ``memory_format``, the 4-D (5-D) ones take that format (``channels_last``).

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(2, 1).to(torch.float64).weight.dtype
            torch.float64
            >>> torch.nn.Linear(2, 1).to("meta").weight
            Parameter containing:
            tensor(..., device='meta', size=(1, 2), requires_grad=True)
        """

        dtype, _, dev, fmt = parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        if dev is CPU and self._has_meta():
            raise NotImplementedError(
                NO_DATA + " Please use torch.nn.Module.to_empty() instead of "
                "torch.nn.Module.to() when moving module from meta to a different device.")
        if dtype is None and dev is not META and fmt is None:
            return self

        def convert(t):
            dt = dtype if dtype is not None and t.is_floating_point() else None
            if dev is META:
                return t.to(META, dt)
            if fmt is not None and t.dim() in (4, 5):
                return t.to(dt, memory_format=fmt)
            return t.to(dt) if dt is not None else t
        return self._apply(convert)

    def _has_meta(self) -> bool:
        return any(t.is_meta for t in itertools.chain(self.parameters(), self.buffers()))

    def to_empty(self, *, device: DeviceLike | None, recurse: bool = True) -> Module:
        """Give every parameter and buffer new, uninitialized storage on ``device``, of
        its shape and dtype: how a module on the 'meta' device gets real tensors (then
        initialize them, or ``load_state_dict``).

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Linear(2, 3).to("meta").to_empty(device="cpu")
            >>> m.weight.device, m.weight.shape
            (device(type='cpu'), torch.Size([3, 2]))
        """
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self) -> Module:
        """The CPU is the only device with data: returns ``self`` (a module on the 'meta'
        device raises, as in PyTorch: use ``to_empty``)."""
        if self._has_meta():
            raise NotImplementedError(NO_DATA)
        return self

    def cuda(self, device: DeviceLike | None = None) -> Module:
        """Raises what ``Tensor.cuda`` raises when the module has a parameter or a buffer
        (retrograd runs on the CPU only); a module with neither is returned, as in PyTorch.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.ReLU().cuda()
            ReLU()
        """
        if next(itertools.chain(self.parameters(), self.buffers()), None) is not None:
            raise cuda_unavailable(device)
        return self

    def type(self, dst_type: dtype | str) -> Module:
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        """Floating parameters and buffers to float32.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(1, 1).double().float().weight.dtype
            torch.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Floating parameters and buffers to float64.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(1, 1).double().bias.dtype
            torch.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Floating parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Floating parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- state dict ---------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ordered dict of parameters and persistent buffers by dotted name (detached).

        Example:
            >>> import retrograd as torch
            >>> list(torch.nn.Linear(2, 1).state_dict())
            ['weight', 'bias']
        """
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        stack = [(self, prefix)]
        while stack:
            mod, pfx = stack.pop()
            meta = getattr(destination, "_metadata", None)
            local_metadata = {"version": mod._version}
            if meta is not None:
                meta[pfx[:-1]] = local_metadata
            for hook in mod._state_dict_pre_hooks.values():
                hook(mod, pfx, keep_vars)
            mod._save_to_state_dict(destination, pfx, keep_vars)
            for hook in mod._state_dict_hooks.values():
                r = hook(mod, destination, pfx, local_metadata)
                if r is not None:
                    destination = r
            kids = [(m, pfx + name + ".") for name, m in mod._modules.items() if m is not None]
            stack.extend(reversed(kids))
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign: bool = False) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                input_param = _as_tensor(input_param)
                if input_param is None:
                    error_msgs.append(
                        f'While copying the parameter named "{key}", expected torch.Tensor or '
                        f"Tensor-like object from checkpoint but received "
                        f"{type(state_dict[key])}")
                    continue
            if is_lazy(param):  # both uninitialized (Note [Lazy modules]): nothing to copy
                continue
            if len(param.shape) == 0 and len(input_param.shape) == 1 and \
                    input_param.shape[0] == 1:
                input_param = input_param[0]
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                    f"from checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    elif param.is_meta and not input_param.is_meta:
                        warnings.warn(
                            f"for {key}: copying from a non-meta parameter in the checkpoint to "
                            "a meta parameter in the current model, which is a no-op. (Did you "
                            "mean to pass `assign=True` to assign items in the state dictionary "
                            "to their corresponding key in the module instead of copying them "
                            "in place?)", UserWarning, stacklevel=3)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are "
                    f"{input_param.shape}, an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module.

        With ``strict=True`` (the default) missing or unexpected keys raise PyTorch's
        "Error(s) in loading state_dict for ..." error; otherwise they are returned as
        ``(missing_keys, unexpected_keys)``. Shape mismatches always raise. Values may be
        retrograd tensors or NumPy arrays.

        Example:
            >>> import retrograd as torch
            >>> a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
            >>> bool(torch.equal(a.weight, b.weight))
            True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        stack = [(self, "")]
        while stack:
            module, prefix = stack.pop()
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs, assign)
            kids = [(child, prefix + name + ".") for name, child in module._modules.items()
                    if child is not None]
            stack.extend(reversed(kids))
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in self._load_state_dict_post_hooks.values():
            hook(self, incompatible)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            hint = _load_hint(missing_keys if strict else [], unexpected_keys if strict else [],
                              error_msgs)
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)) + hint)
        return incompatible

    def register_state_dict_pre_hook(self, hook: Callable[[Module, str, bool], None]
                                     ) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before this module's entries are saved."""
        return _add_hook(self._state_dict_pre_hooks, hook, self, count=False)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module's
        entries are saved and may return a new dict (PyTorch's private form, which
        ``nn.utils.spectral_norm`` uses)."""
        return _add_hook(self._state_dict_hooks, hook, self, count=False)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` (``module`` first with ``with_module=True``) runs
        before this module's entries are loaded; it may rename keys in ``state_dict``."""
        if with_module:
            hook = functools.partial(hook, self)
        return _add_hook(self._load_state_dict_pre_hooks, hook, self, count=False)

    def register_load_state_dict_post_hook(
            self, hook: Callable[[Module, _IncompatibleKeys], None]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``."""
        return _add_hook(self._load_state_dict_post_hooks, hook, self, count=False)

    # -- hooks -----------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; it may return new args.

        With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and may return
        ``(args, kwargs)``.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Identity()
            >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
            >>> m(torch.ones(1))
            tensor([2.])
        """
        extra = (self._forward_pre_hooks_with_kwargs,) if with_kwargs else ()
        h = _add_hook(self._forward_pre_hooks, hook, self, prepend=prepend, extra=extra)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        return h

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; it may return a new output.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Identity()
            >>> seen = []
            >>> h = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
            >>> _ = m(torch.ones(3)); seen
            [torch.Size([3])]
        """
        extra = []
        if with_kwargs:
            extra.append(self._forward_hooks_with_kwargs)
        if always_call:
            extra.append(self._forward_hooks_always_called)
        h = _add_hook(self._forward_hooks, hook, self, prepend=prepend, extra=tuple(extra))
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        return h

    def register_full_backward_pre_hook(self, hook: BackwardPreHook,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the outputs are known;
        it may return a replacement ``grad_output``.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Linear(2, 1)
            >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
            >>> m(torch.ones(1, 2)).sum().backward(); m.weight.grad
            tensor([[0., 0.]])
        """
        return _add_hook(self._backward_pre_hooks, hook, self, prepend=prepend)

    def register_full_backward_hook(self, hook: BackwardHook,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        tensor inputs are computed; it may return a replacement ``grad_input``.

        Example:
            >>> import retrograd as torch
            >>> m = torch.nn.Linear(2, 1)
            >>> seen = []
            >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].shape))
            >>> m(torch.ones(3, 2, requires_grad=True)).sum().backward(); seen
            [torch.Size([3, 1])]
        """
        return _add_hook(self._backward_hooks, hook, self, prepend=prepend)

    def register_backward_hook(self, hook: BackwardHook) -> RemovableHandle:
        """Legacy name; behaves as ``register_full_backward_hook``."""
        return self.register_full_backward_hook(hook)

    # -- printing -------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """Extra text inside this module's repr (layers show their settings).

        Example:
            >>> import retrograd as torch
            >>> torch.nn.Linear(2, 3).extra_repr()
            'in_features=2, out_features=3, bias=True'
        """
        return ""

    def _get_name(self) -> str:
        return self.__class__.__name__

    def __repr__(self) -> str:
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str


def _as_tensor(v):
    import numpy as np

    if isinstance(v, np.ndarray) or isinstance(v, np.generic):

        return tensor(np.asarray(v))
    if hasattr(v, "__array__") and not isinstance(v, (str, bytes)):

        return tensor(np.asarray(v))
    return None


def _load_hint(missing, unexpected, error_msgs) -> str:
    tips = []
    if missing or unexpected:
        tips.append("the checkpoint's keys do not match this model's (compare "
                    "model.state_dict().keys() with the checkpoint's); if the names differ only "
                    "by a prefix such as 'module.', strip it; pass strict=False to load the "
                    "matching keys and get the rest back as missing_keys/unexpected_keys")
    if any(m.startswith("size mismatch") for m in error_msgs):
        tips.append("a layer in the checkpoint has a different size than in this model: build "
                    "the model with the sizes the checkpoint was saved with")
    return ("\n\tHint: " + "; ".join(tips) + ".") if tips else ""


def _add_hook(store, hook, module, prepend=False, extra=(), count=True) -> RemovableHandle:
    h = _ModuleHookHandle(store, module if count else None, extra)
    store[h.id] = hook
    if prepend:
        store.move_to_end(h.id, last=False)
    if count:
        module.__dict__["_hook_count"] += 1
    return h


class _ModuleHookHandle(RemovableHandle):
    """A handle that also keeps the module's hook counter (Note [Module call fast path])."""

    def __init__(self, store, module, extra=()):
        super().__init__(store)
        self._module = None if module is None else weakref.ref(module)
        self._extra = list(extra)

    # a lazy module keeps its hook handles as attributes, so they pickle and deepcopy with
    # it: the weak references travel as strong ones, and ids stay ahead of the restored
    # ones (as PyTorch's RemovableHandle)
    def __getstate__(self):
        mod = self._module() if self._module is not None else None
        return self.id, self._store(), mod, self._extra

    def __setstate__(self, state) -> None:
        self.id, store, mod, self._extra = state
        self._store = weakref.ref(store) if store is not None else lambda: None
        self._module = weakref.ref(mod) if mod is not None else None
        nxt = next(RemovableHandle._ids)
        RemovableHandle._ids = itertools.count(max(nxt, self.id + 1))

    def remove(self) -> None:
        store = self._store()
        if store is not None and self.id in store:
            del store[self.id]
            mod = self._module() if self._module is not None else None
            if mod is not None:
                mod.__dict__["_hook_count"] -= 1
        for d in self._extra:
            d.pop(self.id, None)


# ---------------------------------------------------------------------------------------
# Note [Module backward hooks]
# Full backward hooks are built on node hooks, as in PyTorch's BackwardHook: the tensor
# inputs of ``forward`` pass through one identity node and its outputs through another.
# A pre-hook on the output node sees grad_output (and runs the backward pre-hooks, which
# may replace it); a pre-hook on the input node sees grad_input once it is fully summed
# and runs the backward hooks, which may replace it. When no input requires grad the
# backward hooks run from the output node with grad_input all None.


class _BackwardHookState:
    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_node = None

    def _identity(self, tensors):

        outs = []
        for t in tensors:
            o = _make(t._data)
            o._vc = t._vc
            outs.append(o)
        n = len(outs)
        node = record(backward_hook, outs[0] if n == 1 else tuple(outs), tuple(tensors), None,
                      nout=n)
        return outs, node

    def wrap_inputs(self, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(idx)
        need = [i for i in idx if args[i]._rg]
        if not need or not STATE.enabled:
            return args
        outs, node = self._identity([args[i] for i in need])
        self.input_node = node
        self.need_pos = [idx.index(i) for i in need]
        args = list(args)
        for i, o in zip(need, outs):
            args[i] = o
        node.register_prehook(self._on_grad_inputs)
        return tuple(args)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        items = [result] if single else list(result) if isinstance(result, (tuple, list)) \
            else None
        if items is None or not STATE.enabled:
            return result
        pos = [i for i, t in enumerate(items) if isinstance(t, Tensor) and t._rg]
        if not pos:
            return result
        outs, node = self._identity([items[i] for i in pos])
        self.n_outputs = len(items)
        self.out_pos = pos
        node.register_prehook(self._on_grad_outputs)
        for i, o in zip(pos, outs):
            items[i] = o
        if single:
            return items[0]
        return type(result)(items) if isinstance(result, tuple) else items

    def _on_grad_outputs(self, grads):
        full = [None] * self.n_outputs
        for k, i in enumerate(self.out_pos):
            full[i] = grads[k]
        full = tuple(full)
        for hook in list(self.module._backward_pre_hooks.values()):
            r = hook(self.module, full)
            if r is not None:
                full = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = full
        if self.input_node is None:
            gi = (None,) * max(self.n_inputs, 1)
            for hook in list(self.module._backward_hooks.values()):
                hook(self.module, gi, full)
        return [full[i] for i in self.out_pos]

    def _on_grad_inputs(self, grads):
        gi = [None] * self.n_inputs
        for k, i in enumerate(self.need_pos):
            gi[i] = grads[k]
        gi = tuple(gi)
        for hook in list(self.module._backward_hooks.values()):
            r = hook(self.module, gi, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(gi):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(r)}, but expected {len(gi)}")
                gi = r
        return [gi[i] for i in self.need_pos]
