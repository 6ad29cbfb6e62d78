"""Pruning (``nn.utils.prune``): zero parts of a parameter through a mask.

Note [Pruning layout]
Pruning ``module.weight`` moves the parameter to ``weight_orig``, registers the mask as
the buffer ``weight_mask`` and keeps ``weight = weight_mask * weight_orig`` as a plain
attribute that a forward pre-hook (the pruning method itself) recomputes before every
call (Note [Legacy reparametrization hooks] in ``weight_norm.py``). Pruning the same
tensor again wraps the methods in a ``PruningContainer``, which prunes only what is
still unpruned (the entries, or for a structured method the channels, where the mask is
nonzero). ``remove`` makes the pruning permanent: ``weight`` is a parameter again,
holding the masked values. Random methods draw from retrograd's generator, whose
``rand`` stream is PyTorch's, so a seed gives PyTorch's masks.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.utils.prune as prune
    >>> m = prune.l1_unstructured(torch.nn.Linear(3, 2), "weight", amount=2)
    >>> sorted(n for n, _ in m.named_parameters()), int(m.weight_mask.sum())
    (['bias', 'weight_orig'], 4)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._functions.creation import ones_like, rand, zeros_like
from ..._functions.sampling import rand_like
from ..._tensor.tensor import Tensor
from ..modules.module import Module
from ._hooks import drop_forward_pre_hook
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask",
           "identity", "random_unstructured", "l1_unstructured", "random_structured",
           "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way to compute a pruning mask; its instances are the forward pre-hooks that
    apply the mask (Note [Pruning layout]).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> prune.L1Unstructured(amount=1).prune(torch.tensor([3., -1., 2.]))
        tensor([3., -0., 2.])
    """

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask already in force."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` in place with this method (Note [Pruning layout])."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as "
                                     f"parameter {name} of {module}, got "
                                     f"{importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes for it (``t`` itself is untouched)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is a parameter again (masked values)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module: Module, name: str, *args, **kwargs) -> BasePruningMethod:
    """A new ``cls(*args, **kwargs)`` for ``name``, joined in a PruningContainer with the
    method already pruning ``name`` if there is one (whose hook is removed)."""
    found = [(k, hook) for k, hook in module._forward_pre_hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for k, _ in found:
        drop_forward_pre_hook(module, k)
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if found:
        old = found[0][1]
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            return old
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after the other to one tensor; each new one
    prunes only what is still unpruned.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.l1_unstructured(torch.nn.Linear(4, 1), "weight", amount=1)
        >>> m = prune.l1_unstructured(m, "weight", amount=1)
        >>> type(m._forward_pre_hooks[next(iter(m._forward_pre_hooks))]).__name__
        'PruningContainer'
    """

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must prune the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask computed on the still-unpruned part of ``t``."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            slc = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones), but sets up the pruning layout.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> prune.identity(torch.nn.Linear(2, 1), "bias").bias_mask
        tensor([1.])
    """

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask already in force."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name)


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                         f"to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {len(t.shape)} dims")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t: Tensor, dim: int, channels) -> Tensor:
    """Ones on the ``channels`` (indices or a bool mask) of dimension ``dim``."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class _Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    @abstractmethod
    def _scores(self, t: Tensor) -> tuple[Tensor, bool]:
        """The scores whose top (``largest``) or bottom entries are pruned."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with ``amount`` more entries set to 0."""
        nparams_toprune = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(nparams_toprune, t.nelement())
        mask = default_mask.clone()
        if nparams_toprune != 0:
            scores, largest = self._scores(t)
            idx = scores.reshape(-1).topk(nparams_toprune, largest=largest).indices
            flat = mask.view(-1)
            flat[idx] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prune ``amount`` (a fraction, or a count) of the entries, chosen at random.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> int(prune.RandomUnstructured(amount=0.5).compute_mask(torch.ones(4),
        ...                                                       torch.ones(4)).sum())
        2
    """

    def _scores(self, t: Tensor) -> tuple[Tensor, bool]:
        return rand_like(t), True

    @classmethod
    def apply(cls, module: Module, name: str, amount):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prune ``amount`` of the entries with the smallest absolute values.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> prune.L1Unstructured(amount=2).compute_mask(torch.tensor([3., -1., 2., .5]),
        ...                                             torch.ones(4))
        tensor([1., 0., 1., 0.])
    """

    def _scores(self, t: Tensor) -> tuple[Tensor, bool]:
        return t.abs(), False

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores=None):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    @abstractmethod
    def _kept_channels(self, t: Tensor, nchannels: int, nprune: int):
        """The channels along ``dim`` to keep (indices or a bool mask)."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Ones on the kept channels along ``dim``, times ``default_mask``."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        dim = self.dim + t.dim() if self.dim < 0 else self.dim
        mask = _channel_mask(t, dim, self._kept_channels(t, tensor_size, nparams_toprune))
        mask *= default_mask.to(dtype=mask.dtype)
        return mask


class RandomStructured(_Structured):
    """Prune ``amount`` of the channels along ``dim``, chosen at random.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.random_structured(torch.nn.Linear(3, 4), "weight", amount=1, dim=0)
        >>> int((m.weight_mask.sum(1) == 0).sum())
        1
    """

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def _kept_channels(self, t: Tensor, nchannels: int, nprune: int):
        prob = rand(nchannels)
        return prob > prob.kthvalue(nprune).values

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prune ``amount`` of the channels along ``dim`` with the smallest ``n``-norms.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> w = torch.tensor([[1., 1.], [3., 0.], [0., .5]])
        >>> prune.LnStructured(amount=1, n=2, dim=0).compute_mask(w, torch.ones(3, 2))
        tensor([[1., 1.],
                [1., 1.],
                [0., 0.]])
    """

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def _kept_channels(self, t: Tensor, nchannels: int, nprune: int):
        dim = self.dim + t.dim() if self.dim < 0 else self.dim
        norm = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        return norm.topk(nchannels - nprune, largest=True).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim: int, importance_scores=None):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given mask (times the mask already in force).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.custom_from_mask(torch.nn.Linear(2, 1), "bias", torch.tensor([0.]))
        >>> m.bias.abs()
        tensor([0.], grad_fn=<AbsBackward0>)
    """

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask * mask``."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):
        """Prune ``module.<name>`` with this method (see the module function of the same name)."""
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Set up the pruning layout on ``module.<name>`` with an all-ones mask.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> sorted(prune.identity(torch.nn.Linear(2, 1), "weight").state_dict())
        ['bias', 'weight_mask', 'weight_orig']
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` of ``module.<name>``'s entries at random.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.random_unstructured(torch.nn.Linear(4, 2), "weight", amount=0.25)
        >>> int((m.weight_mask == 0).sum())
        2
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune ``amount`` of ``module.<name>``'s entries with the smallest magnitude (or
    the smallest ``importance_scores``).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = torch.nn.Linear(2, 1)
        >>> with torch.no_grad():
        ...     _ = m.weight.copy_(torch.tensor([[0.1, -3.]]))
        >>> prune.l1_unstructured(m, "weight", amount=1).weight
        tensor([[ 0., -3.]], grad_fn=<MulBackward0>)
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` at random.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.random_structured(torch.nn.Linear(4, 2), "weight", amount=2, dim=1)
        >>> int((m.weight_mask.sum(0) == 0).sum())
        2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: int, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune ``amount`` of ``module.<name>``'s channels along ``dim`` with the smallest
    ``n``-norm.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.ln_structured(torch.nn.Linear(3, 4), "weight", amount=0.5, n=2, dim=0)
        >>> int((m.weight_mask.sum(1) == 0).sum())
        2
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]],
                        pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None,
                        **kwargs) -> None:
    """Prune across several ``(module, name)`` pairs at once as if they were one tensor,
    with an unstructured method class (e.g. ``L1Unstructured``) and its ``**kwargs``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> a, b = torch.nn.Linear(4, 2), torch.nn.Linear(2, 2)
        >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
        ...                           prune.L1Unstructured, amount=6)
        >>> int((a.weight_mask == 0).sum() + (b.weight_mask == 0).sum())
        6
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector([
        getattr(m, n + "_mask") if hasattr(m, n + "_mask") else ones_like(getattr(m, n))
        for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + n].view_as(param))
        pointer += n


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` with ``mask`` (times any mask already in force).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.custom_from_mask(torch.nn.Linear(2, 1), "weight",
        ...                            torch.tensor([[1., 0.]]))
        >>> m.weight_mask
        tensor([[1., 0.]])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (Note [Pruning layout]).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> m = prune.l1_unstructured(torch.nn.Linear(2, 1), "weight", amount=1)
        >>> sorted(prune.remove(m, "weight").state_dict())
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            drop_forward_pre_hook(module, k)
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule has a pruning hook.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.nn.utils.prune as prune
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2))
        >>> prune.is_pruned(net), prune.is_pruned(prune.identity(net[0], "bias"))
        (False, True)
    """
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())
