"""The optimizer base class: parameter groups, per-parameter state, hooks, state dicts.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.5)
    >>> (w ** 2).sum().backward()
    >>> opt.step(); opt.zero_grad()
    >>> w, w.grad
    (tensor([0., 0.], requires_grad=True), None)
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from copy import deepcopy
from itertools import chain
from typing import Any, ClassVar, TypeVar

from .._core import dtype as D
from .._core.grad_mode import STATE, enable_grad
from .._functions.creation import tensor, zeros, zeros_like
from .._graph.modes import TRACING
from .._graph.node import RemovableHandle
from .._tensor.tensor import Tensor

__all__ = ["Optimizer", "ParamsT", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]

#: what an optimizer is given: parameters, parameter groups (dicts with a ``params`` key)
#: or named parameters (``model.named_parameters()``), as PyTorch's ``ParamsT``
ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
#: the loss a ``step(closure)`` returns: whatever the closure returned (a tensor, a float)
LossT = TypeVar("LossT")

# Note [Matching PyTorch's updates]
# Every optimizer replays PyTorch's single-tensor (foreach=False, the CPU default)
# update operation by operation: the same in-place ops, the same Python-float scalar
# math (bias corrections, step sizes), state['step'] as a 0-d float32 tensor (float64
# when that is the default dtype) read back with .item(). Results agree with torch to
# the last bit or two, not always exactly: torch's CPU kernels fuse multiply-adds
# (add with alpha, lerp and addcmul are single-rounding FMAs in its vectorized loops)
# and its vectorized float32 sqrt is not always correctly rounded, while NumPy rounds
# each multiply and add and computes sqrt exactly. Measured on 20 steps: float64
# parameters agree to ~1e-15, float32 to ~1 ulp per step.

_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


class _RequiredParameter:
    """Marks an optimizer option that has no default and must be given."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``.

    The hook may return ``(new_args, new_kwargs)`` to replace the step's arguments.

    Example:
        >>> import retrograd as torch
        >>> seen = []
        >>> h = torch.optim.optimizer.register_optimizer_step_pre_hook(
        ...     lambda opt, args, kwargs: seen.append(type(opt).__name__))
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> torch.optim.SGD([w], lr=0.1).step(); h.remove(); seen
        ['SGD']
    """
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``.

    Example:
        >>> import retrograd as torch
        >>> seen = []
        >>> h = torch.optim.optimizer.register_optimizer_step_post_hook(
        ...     lambda opt, args, kwargs: seen.append('done'))
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> torch.optim.SGD([w], lr=0.1).step(); h.remove(); seen
        ['done']
    """
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        from .._graph.node import legacy_type_name

        return legacy_type_name(obj)
    cls = type(obj)
    mod = cls.__module__
    return cls.__qualname__ if mod in (None, "builtins") else f"{mod}.{cls.__qualname__}"


def _hook_step(fn: Callable) -> Callable:
    """Wrap a class's ``step`` so it runs the step pre/post hooks (cheap when none)."""

    @functools.wraps(fn)
    def step(self, *args, **kwargs):
        if _global_pre_hooks or self._optimizer_step_pre_hooks:
            for hook in chain(_global_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{fn} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
        out = fn(self, *args, **kwargs)
        if _global_post_hooks or self._optimizer_step_post_hooks:
            for hook in chain(self._optimizer_step_post_hooks.values(),
                              _global_post_hooks.values()):
                hook(self, args, kwargs)
        return out

    step.hooked = True
    return step


def _use_grad(fn: Callable) -> Callable:
    """Run an optimizer's ``step`` with grad mode off (the update is not recorded)."""

    @functools.wraps(fn)
    def step(self, *args, **kwargs):
        prev = STATE.enabled
        STATE.enabled = False
        try:
            return fn(self, *args, **kwargs)
        finally:
            STATE.enabled = prev

    return step


def _call_closure(closure):
    """Evaluate a step closure with grad mode on (it usually calls backward)."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _to_scalar(x):
    """A 1-element hyper-parameter tensor as a 0-d tensor; anything else unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_value(x):
    """A Python number from a 0-d tensor (the step counter), or ``x`` itself."""
    return x.item() if isinstance(x, Tensor) else x


def _step_value(x):
    """The step counter for the bias corrections: a Python number, or, while
    retrograd.compile records the step, the counter as a float64 0-d tensor (PyTorch's
    ``_get_value`` returns the tensor while compiling), so that the corrections are
    computed in the plan at every replay. In float64 they are the Python numbers' bits.

    Example:
        >>> import retrograd as torch
        >>> _step_value(torch.tensor(3.0))
        3.0
    """
    if TRACING[0] and isinstance(x, Tensor):
        return x.double()
    return _get_value(x)


def _scalar_dtype():
    """The dtype of ``state['step']``: float64 when that is the default, else float32."""
    return D.float64 if D.DEFAULTS.float is D.float64 else D.float32


def _check_unsupported(name: str, foreach=None, fused=None, capturable: bool = False,
                       differentiable: bool = False) -> None:
    """Refuse the implementation switches retrograd has no separate path for."""
    if fused:
        raise RuntimeError(f"{name}: fused=True is not supported by retrograd (there is no fused "
                           "kernel on NumPy); leave fused=None, the for-loop implementation "
                           "gives the same update")
    if capturable:
        raise RuntimeError(f"{name}: capturable=True needs CUDA graphs, which retrograd does not "
                           "have; leave capturable=False")
    if differentiable:
        raise RuntimeError(f"{name}: differentiable=True (autograd through the optimizer step) "
                           "is not supported by retrograd; write the update with out-of-place "
                           "tensor ops if you need its gradient")


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _validate(lr, **options) -> None:
    """Check an optimizer's hyper-parameters in the given order, with PyTorch's messages.

    ``lr`` first; then each keyword: ``betas`` must lie in ``[0, 1)``, ``rho`` in
    ``[0, 1]``, anything else (named as in the message: ``epsilon``, ``weight_decay``,
    ...) must be ``>= 0``.

    Example:
        >>> from retrograd.optim.optimizer import _validate
        >>> _validate(0.1, epsilon=1e-8, betas=(0.9, 1.5))
        Traceback (most recent call last):
        ...
        ValueError: Invalid beta parameter at index 1: 1.5
    """
    _check_lr(lr)
    for name, value in options.items():
        if name == "betas":
            for i in (0, 1):
                if not 0.0 <= value[i] < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {value[i]}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


class Optimizer:
    """Base class for all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts
    (parameter groups, each with its own options); ``defaults`` holds the options a
    group does not set. Subclasses implement ``step``.

    Example:
        >>> import retrograd as torch
        >>> a, b = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
        >>> opt = torch.optim.SGD([{'params': [a]}, {'params': [b], 'lr': 0.5}], lr=0.1)
        >>> [g['lr'] for g in opt.param_groups]
        [0.1, 0.5]
    """

    # Note [Shared optimizer skeleton]
    # What every single-tensor optimizer repeats lives here, driven by class attributes:
    # ``_setstate_defaults`` are the group options older state dicts may lack (set in
    # ``__setstate__``); ``_scalar_state`` names the per-parameter state that older state
    # dicts stored as Python numbers (made 0-d tensors again on load); ``_counts_steps``
    # says that the state holds a ``step`` counter, created first (PyTorch's key order)
    # and incremented before the update; ``_zero_state`` names the buffers ``_init_state``
    # creates as zeros shaped like the parameter. ``__init__`` refuses the fused / capturable /
    # differentiable switches found in ``defaults``. In ``step``, ``_params_with_grads``
    # does the common preamble per parameter; each subclass keeps its update formula.
    _setstate_defaults: ClassVar[dict[str, Any]] = {}
    _scalar_state: ClassVar[tuple[str, ...]] = ()
    _counts_steps: ClassVar[bool] = False
    _zero_state: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        _check_unsupported(type(self).__name__, defaults.get("foreach"), defaults.get("fused"),
                           defaults.get("capturable", False),
                           defaults.get("differentiable", False))
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # Note [Step hooks]
    # As in PyTorch, the most-derived class's ``step`` is wrapped once (on first
    # construction) by a function that runs the global and per-instance step hooks.
    # When no hook is registered the wrapper costs two dict truth tests.
    def _patch_step_function(self) -> None:
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _hook_step(cls.step)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        options = self._setstate_defaults
        scalar_keys = self._scalar_state
        for group in self.param_groups:
            for name, default in options.items():
                group.setdefault(name, default)
            if scalar_keys:
                for p in group["params"]:
                    st = self.state.get(p, {})
                    for key in scalar_keys:
                        if key in st and not isinstance(st[key], Tensor):
                            st[key] = tensor(float(st[key]), dtype=_scalar_dtype())

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- hooks --------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)``.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.SGD([w], lr=1.0)
            >>> h = opt.register_step_pre_hook(lambda o, a, k: print('before'))
            >>> opt.step()
            before
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.SGD([w], lr=1.0)
            >>> h = opt.register_step_post_hook(lambda o, a, k: print(w.detach()))
            >>> opt.step()
            tensor([0.])
        """
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, store: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(store)
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                     ) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict()`` builds its result.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0)
            >>> h = opt.register_state_dict_pre_hook(lambda o: print('saving'))
            >>> _ = opt.state_dict()
            saving
        """
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                      ) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the result of ``state_dict()``; it may
        return a replacement.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0)
            >>> h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, 'extra': 1})
            >>> opt.state_dict()['extra']
            1
        """
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                          ) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` before ``load_state_dict``; it may return a
        replacement state dict.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0)
            >>> h = opt.register_load_state_dict_pre_hook(lambda o, sd: print('loading'))
            >>> opt.load_state_dict(opt.state_dict())
            loading
        """
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                           ) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict``.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0)
            >>> h = opt.register_load_state_dict_post_hook(lambda o: print('loaded'))
            >>> opt.load_state_dict(opt.state_dict())
            loaded
        """
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state: ``state`` (per parameter, keyed by the parameter's index
        across groups) and ``param_groups`` (options, with ``params`` as indices).

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)
            >>> opt.state_dict()['param_groups'][0]['params']
            [0]
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                if id(p) not in mapping:
                    mapping[id(p)] = i
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        sd = {"state": packed_state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, sd)
            if result is not None:
                sd = result
        return sd

    def _cast_state(self, param, value, groups, param_id=None, key=None):
        """A loaded state value moved to ``param``'s dtype and device as PyTorch's
        load_state_dict does, through dicts, lists and tuples (a method, not a closure
        calling itself: that cycle would keep the loaded state dict until the cyclic
        collector runs)."""
        if isinstance(value, Tensor):
            return self._process_value_according_to_param_policy(
                param, value, param_id, groups, key)
        if isinstance(value, dict):
            return {k: self._cast_state(param, v, groups, param_id, k)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._cast_state(param, v, groups, param_id) for v in value)
        return value

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id,
                                                 param_groups, key=None) -> Tensor:
        # Floating state follows the parameter's dtype; the step counter keeps its own.
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load state made by ``state_dict()`` (of an optimizer with the same groups).

        Training resumed this way continues exactly as if it had never stopped.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(2, requires_grad=True); w.grad = torch.ones(2)
            >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9); opt.step()
            >>> opt2 = torch.optim.SGD([w], lr=0.1, momentum=0.9)
            >>> opt2.load_state_dict(opt.state_dict())
            >>> opt2.state[w]['momentum_buffer']
            tensor([1., 1.])
        """
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v, state_dict["param_groups"], k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # -- gradients and groups -------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default) or to zeros.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(2, requires_grad=True); w.grad = torch.ones(2)
            >>> opt = torch.optim.SGD([w], lr=0.1)
            >>> opt.zero_grad(set_to_none=False); w.grad
            tensor([0., 0.])
            >>> opt.zero_grad(); print(w.grad)
            None
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """Update the parameters once (implemented by each optimizer).

        Example:
            >>> import retrograd as torch
            >>> torch.optim.Optimizer([torch.ones(1, requires_grad=True)], {}).step()
            Traceback (most recent call last):
            ...
            NotImplementedError
        """
        raise NotImplementedError

    def _init_state(self, p: Tensor, st: dict[str, Any], group: dict[str, Any]) -> None:
        """Fill the empty state ``st`` of ``p`` (after ``step``) with the zero buffers named
        in ``_zero_state``; subclasses with other state extend this."""
        for name in self._zero_state:
            st[name] = zeros_like(p)

    def _create_state(self, p: Tensor, st: dict[str, Any], group: dict[str, Any]) -> None:
        """Initialise the state of ``p``: the ``step`` counter first, then ``_init_state``."""
        if self._counts_steps:
            st["step"] = zeros((), dtype=_scalar_dtype())
        self._init_state(p, st, group)

    def _params_with_grads(self, group: dict[str, Any], stateful: bool = True
                           ) -> Iterator[tuple[Tensor, Tensor, dict[str, Any] | None]]:
        """Yield ``(p, grad, state)`` for each parameter of ``group`` that has a gradient.

        The common part of PyTorch's single-tensor step, in its order: the state is
        created when empty and its ``step`` counter incremented; ``grad`` is negated under
        ``maximize`` and gets ``weight_decay * p`` added (or, with
        ``decoupled_weight_decay``, ``p`` is first scaled by ``1 - lr * weight_decay``).
        With ``stateful=False`` the state is neither touched nor created (``None``).

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(2, requires_grad=True); w.grad = torch.ones(2)
            >>> opt = torch.optim.SGD([w, torch.ones(1, requires_grad=True)], maximize=True)
            >>> [(tuple(p.shape), g) for p, g, _ in opt._params_with_grads(opt.param_groups[0])]
            [((2,), tensor([-1., -1.]))]
        """
        state = self.state
        create = self._create_state
        counts_steps = self._counts_steps
        maximize = group.get("maximize", False)
        weight_decay = group.get("weight_decay", 0)
        decoupled = weight_decay != 0 and group.get("decoupled_weight_decay", False)
        if decoupled:
            shrink = 1 - _to_scalar(group["lr"]) * weight_decay
        st = None
        for p in group["params"]:
            grad = p._grad
            if grad is None:
                continue
            if stateful:
                st = state[p]
                if len(st) == 0:
                    create(p, st, group)
                if counts_steps:
                    st["step"] += 1
            if maximize:
                grad = -grad
            if weight_decay != 0:
                if decoupled:
                    p.mul_(shrink)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            yield p, grad, st

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with its own options) to optimize from now on.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)
            >>> opt.add_param_group({'params': torch.zeros(2, requires_grad=True), 'lr': 1.0})
            >>> len(opt.param_groups), opt.param_groups[1]['momentum']
            (2, 0)
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

