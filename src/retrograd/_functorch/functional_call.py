"""Call a module with other tensors in place of its parameters and buffers
(``torch.func.functional_call``), and stack the state of an ensemble of modules
(``torch.func.stack_module_state``).

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import functional_call, grad
    >>> model = torch.nn.Linear(2, 1)
    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> loss = lambda p, x: functional_call(model, p, (x,)).sum()
    >>> grad(loss)(params, torch.tensor([[1., 2.]]))["weight"]
    tensor([[1., 2.]])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from .._functions.namespace import stack
from .._tensor.tensor import Tensor
from .member_accessor import NamedMemberAccessor


class ModuleLike(Protocol):
    """An ``nn.Module`` as the layers below nn see one (they may not import it, not even
    for a hint: Note [Type hints] in ``_core/hints.py``): its tensors by name, its
    submodules, and a call."""

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]: ...

    def named_buffers(self) -> Iterator[tuple[str, Tensor]]: ...

    def modules(self) -> Iterator[Any]: ...

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

__all__ = ["functional_call", "stack_module_state", "reparametrize_module",
           "untie_named_tensors_map", "call_module"]


def untie_named_tensors_map(module, parameters_and_buffers: dict) -> dict:
    """A copy of ``parameters_and_buffers`` in which a value given for one of several
    tied names (the same tensor registered twice) is given for all of them.

    Raises ValueError when different values are given for names of one tied tensor.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functorch.functional_call import untie_named_tensors_map
        >>> m = torch.nn.Module()
        >>> m.a = m.b = torch.nn.Parameter(torch.ones(1))
        >>> sorted(untie_named_tensors_map(m, {"a": torch.zeros(1)}))
        ['a', 'b']
    """
    by_tensor: dict = {}  # tensor (by identity) -> all its names
    for name, t in NamedMemberAccessor(module).named_tensors(remove_duplicate=False):
        by_tensor.setdefault(t, set()).add(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    given = {name for name in parameters_and_buffers if name in tied}
    for name in given:
        names = tied[name]
        given_here = names & given
        if len(given_here) > 1 and \
                len({id(parameters_and_buffers[n]) for n in given_here}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def reparametrize_module(module, parameters_and_buffers: dict, tie_weights: bool = False,
                         strict: bool = False, stack_weights: bool = False) -> Iterator[None]:
    """Within the block, ``module``'s tensors named in ``parameters_and_buffers`` are
    those values; on leaving (even by an exception) the module gets its own back, and
    tensors the module replaced in place during the block are written back to the dict.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functorch.functional_call import reparametrize_module
        >>> m = torch.nn.Linear(1, 1)
        >>> with reparametrize_module(m, {"bias": torch.zeros(1)}):
        ...     print(m.bias)
        tensor([0.])
        >>> type(m.bias).__name__
        'Parameter'
    """
    untied = untie_named_tensors_map(module, parameters_and_buffers) if tie_weights \
        else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        missing, unexpected = accessor.check_keys(untied)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    orig: dict = {}
    try:
        orig, _ = accessor.swap_tensors_dict(untied, allow_missing=True)
        yield
    finally:
        if stack_weights:  # restore in LIFO order
            orig = dict(reversed(orig.items()))
        new, _ = accessor.swap_tensors_dict(orig, allow_missing=True)
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def call_module(module, parameters_and_buffers: dict, args: Any = None,
                kwargs: dict | None = None, *, tie_weights: bool = True,
                strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` swapped in (one dict);
    what ``functional_call`` and ``nn.utils.stateless.functional_call`` share.

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functorch.functional_call import call_module
        >>> call_module(torch.nn.Linear(1, 1), {"weight": torch.ones(1, 1),
        ...             "bias": torch.zeros(1)}, torch.tensor([[2.]]))
        tensor([[2.]])
    """
    if any(c.__name__ == "DataParallel" for c in type(module).__mro__):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                              strict=strict):
        return module(*args, **kwargs)


def functional_call(module: ModuleLike, parameter_and_buffer_dicts: dict | Sequence[dict],
                    args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module`` with the given tensors in place of its parameters and buffers.

    Args:
        module: the ``nn.Module`` to call; its own tensors are back in place afterwards,
            even when forward raises.
        parameter_and_buffer_dicts: ``{dotted name: tensor}``, or a tuple/list of such
            dicts with distinct keys. Names not given keep the module's own tensors.
        args: the positional argument, or a tuple of them.
        kwargs: keyword arguments of the call.
        tie_weights: a value given for one of two tied names (the same tensor registered
            twice) is used for both; different values for tied names raise ValueError.
        strict: the names given must be exactly the module's parameters and buffers.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import functional_call
        >>> m = torch.nn.Linear(2, 1)
        >>> w = {"weight": torch.tensor([[1., 1.]])}, {"bias": torch.tensor([0.5])}
        >>> functional_call(m, w, torch.tensor([[1., 2.]]))
        tensor([[3.5000]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    return call_module(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors: tuple, name: str) -> Tensor:
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if grads == {True} else out


def stack_module_state(models: Sequence) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers) of ``M`` modules of one class, each stacked along a new dim 0:
    the stacked parameters are new leaves (optimizable, unrelated to the models'), ready
    for ``functional_call`` over an ensemble.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import stack_module_state
        >>> params, buffers = stack_module_state([torch.nn.Linear(3, 2) for _ in range(4)])
        >>> params["weight"].shape, params["weight"].is_leaf, buffers
        (torch.Size([4, 2, 3]), True, {})
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    out = []
    for named in ("named_parameters", "named_buffers"):
        each = [dict(getattr(m, named)()) for m in models]
        out.append({k: _stacked_leaf(tuple(d[k] for d in each), k) for k in each[0]})
    return out[0], out[1]
