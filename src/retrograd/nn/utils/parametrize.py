"""Parametrizations: a module attribute computed from other tensors on every access
(``nn.utils.parametrize``).

Note [Parametrized modules]
``register_parametrization(m, "weight", P())`` moves ``m.weight`` into
``m.parametrizations.weight.original`` (a ``ParametrizationList``, itself a ModuleList of
the parametrizations) and swaps ``m``'s class for a one-off subclass,
``Parametrized<Class>``, that carries a ``weight`` property: reading it runs the
parametrizations on the original, assigning to it runs their ``right_inverse`` in reverse
and writes the result into the original in place (the original keeps its identity, so
an optimizer holding it keeps working). A ``right_inverse`` may return several tensors;
they become ``original0``, ``original1``, ... and the first parametrization takes them
all. Removing the last parametrization restores the class. State-dict keys are
PyTorch's (``parametrizations.weight.original``), because the layout is.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.utils.parametrize as P
    >>> class Symmetric(torch.nn.Module):
    ...     def forward(self, X):
    ...         return X.triu() + X.triu(1).T
    >>> m = P.register_parametrization(torch.nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((m.weight == m.weight.T).all()), type(m).__name__
    (True, 'ParametrizedLinear')
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original']
"""

from __future__ import annotations

import contextlib
import copy
import copyreg
from collections.abc import Iterator, Sequence

from ..._core.grad_mode import no_grad
from ..._tensor.tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

# Note [Parametrization cache]: while a ``cached()`` block is open, each parametrized
# tensor is computed once per (module, name) and reused; leaving the outermost block
# drops the values. Module-level like PyTorch's (the cache lives for one block).
_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block and reuse it
    (Note [Parametrization cache]).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> m = P.register_parametrization(torch.nn.Linear(2, 2), "weight", torch.nn.Tanh())
        >>> with P.cached():
        ...     m.weight is m.weight
        True
    """
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dst: Tensor, src: Tensor) -> None:
    """PyTorch's ``dst.set_(src)`` under no_grad: ``dst`` keeps its identity (and its place
    in an optimizer) and takes ``src``'s values and storage."""
    with no_grad():
        dst.data = src.detach()
        dst._vc[0] += 1


def _check_same(head: str, new: Tensor, dtype, shape, old_label: str, new_label: str) -> None:
    """PyTorch's consistency checks of a parametrization: ``head`` then the two values
    under their labels, each with ``{}`` standing for "dtype" or "shape"."""
    for what, old, now in (("dtype", dtype, new.dtype), ("shape", shape, new.shape)):
        if (old != now) if what == "dtype" else (tuple(old) != tuple(now)):
            raise ValueError(f"{head.format(what)}\n{old_label.format(what)}: {old}\n"
                             f"{new_label.format(what)}: {now}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its ``original`` (or ``original0``,
    ``original1``, ... when a ``right_inverse`` returns several tensors); it is
    ``module.parametrizations[name]`` (Note [Parametrized modules]).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> m = P.register_parametrization(torch.nn.Linear(2, 2), "weight", torch.nn.ReLU())
        >>> type(m.parametrizations.weight).__name__, m.parametrizations.weight.original.shape
        ('ParametrizationList', torch.Size([2, 2]))
    """

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        modules = list(modules)
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if original.shape != new.shape:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the shape.\noriginal.shape: {original.shape}\n"
                                 f"right_inverse(original).shape: {new.shape}")
            if new is not original:
                _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, original_i in enumerate(new):
                if not isinstance(original_i, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(original_i).__name__}.")
                if isinstance(original, Parameter):
                    original_i = Parameter(original_i, original.requires_grad)
                original_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", original_i)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            _check_same("Registering a parametrization may not change the {} of the tensor, "
                        "unless `unsafe` flag is enabled.", z, original_dtype, original_shape,
                        "unparametrized {}", "parametrized {}")

    def right_inverse(self, value: Tensor) -> None:
        """Assigning ``value`` to the parametrized tensor: the ``right_inverse`` of every
        parametrization, last first, written into the original(s) in place.

        Example:
            >>> import retrograd as torch
            >>> import retrograd.nn.utils.parametrize as P
            >>> class Double(torch.nn.Module):
            ...     def forward(self, x): return 2 * x
            ...     def right_inverse(self, x): return x / 2
            >>> m = P.register_parametrization(torch.nn.Linear(1, 1), "weight", Double())
            >>> m.weight = torch.tensor([[3.]]); m.parametrizations.weight.original
            Parameter containing:
            tensor([[1.5000]], requires_grad=True)
        """
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError(f"`right_inverse` must return a sequence of tensors. Got "
                                     f"element {i} of type {type(tensor).__name__}")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{tensor.dtype} while `original{i}` has dtype "
                                     f"{original_i.dtype}")
                _set_in_place(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the parametrizations applied in order to the original(s)."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _deepcopy_parametrized(self, memo):
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate_refused(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    cls = module.__class__
    attrs = {"__getstate__": _getstate_refused}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = _deepcopy_parametrized
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the
    original parameter or buffer (Note [Parametrized modules]); several registrations on
    one tensor chain in order. ``unsafe=True`` skips the shape and dtype checks.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> m = torch.nn.Linear(2, 2)
        >>> P.register_parametrization(m, "bias", torch.nn.ReLU()).bias.min() >= 0
        tensor(True)
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            _check_same("Registering a parametrization may not change the {} of the tensor, "
                        "unless the `unsafe` flag is enabled.", x, y.dtype, y.shape,
                        f"module.{tensor_name}.{{}}", f"parametrization(module.{tensor_name}).{{}}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(z).__name__}")
                    _check_same("The tensor returned by parametrization.right_inverse must have "
                                "the same {} as module." + tensor_name + ", unless the `unsafe` "
                                "flag is enabled.", z, y.dtype, y.shape,
                                f"module.{tensor_name}.{{}}", "returned {}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its ``tensor_name``) has a parametrization.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.utils.parametrize.is_parametrized(torch.nn.Linear(1, 1))
        False
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo :func:`register_parametrization` on ``tensor_name``: the attribute becomes a
    plain parameter/buffer again, holding its current parametrized value
    (``leave_parametrized=True``) or the original.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> m = P.register_parametrization(torch.nn.Linear(1, 1), "weight", torch.nn.ReLU())
        >>> type(P.remove_parametrizations(m, "weight")).__name__
        'Linear'
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _set_in_place(original, t)
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before any parametrization.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> m = P.register_parametrization(torch.nn.Linear(1, 1), "weight", torch.nn.ReLU())
        >>> P.type_before_parametrizations(m).__name__
        'Linear'
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register the parametrizations of ``from_module`` (all, or ``tensor_name``'s) on
    ``to_module`` too, sharing the original tensors.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.parametrize as P
        >>> a = P.register_parametrization(torch.nn.Linear(2, 2), "weight", torch.nn.ReLU())
        >>> b = P.transfer_parametrizations_and_params(a, torch.nn.Linear(2, 2))
        >>> bool((a.weight == b.weight).all())
        True
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name,
                    Parameter(getattr(from_module, name).detach().clone()))
        src = from_module.parametrizations[name]
        for parametrization in src:
            register_parametrization(to_module, name, parametrization)
        dst = to_module.parametrizations[name]
        # the originals are shared, as PyTorch shares them
        if src.is_tensor:
            dst.original = src.original
        else:
            for i in range(src.ntensors):
                setattr(dst, f"original{i}", getattr(src, f"original{i}"))
    return to_module
