"""Custom autograd Functions: a forward and a backward (and optionally a jvp) you write.

Example:
    >>> import retrograd as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> y = Square.apply(x)
    >>> y.grad_fn  # doctest: +ELLIPSIS
    <retrograd.autograd.function.SquareBackward object at 0x...>
    >>> y.backward(); x.grad
    tensor([6.])
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .._core.grad_mode import STATE, no_grad
from .._functions.creation import zeros_like
from .._functions.inplace import _rebase_view
from .._graph.forward_state import FW, get_tangent
from .._graph.modes import MODES, VMAP
from .._graph.node import OUT0, Node, _OutputSlot, call_unscoped, user_site
from .._graph.saved_hooks import HOOKS
from .._graph.transforms import LEVELS
from .._tensor.tensor import Tensor, _make, check_inference_saved
from ..ops.jvp_rules import attach
from ..ops.op import FLOAT_NP, _anomaly_trace, _edge, _next_seq
from ..ops.records import table as T

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction"]


# Note [Custom Function nodes]
# A custom Function's node is a ``Node`` like every built-in op's (same engine path,
# ``name()``, ``next_functions``, hooks, saved-tensor checks and anomaly traces). As
# in PyTorch the node *is* the ``ctx`` the user's forward and backward receive, so
# ``y.grad_fn.saved_tensors`` and attributes set on ctx are visible from the graph.
# Its ``_op`` is a ``_FunctionOp`` made once per Function class: it names the node
# ("MyFnBackward") and its ``backward`` calls the user's backward, then checks what
# came back (count, types) the way PyTorch does. Saved tensors use the same slots as
# ``record()`` fills for built-in ops (``_saved``/``_ver``/``_out``, outputs saved as
# ``_OutputSlot`` so no reference cycle), so version checks and saved-tensor hooks
# are shared. Forward runs under no_grad and with forward AD off; outputs are then
# attached to the node, and with forward AD on the user's ``jvp`` gives tangents.


class FunctionCtx:
    """The ``ctx`` methods: ``save_for_backward``, ``mark_dirty``, ``set_materialize_grads``...

    Example:
        >>> import retrograd as torch
        >>> class Double(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.set_materialize_grads(False)
        ...         return x * 2
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return None if g is None else g * 2
        >>> Double.apply(torch.ones(1, requires_grad=True)).grad_fn.materialize_grads
        False
    """

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``.

        Example:
            >>> import retrograd as torch
            >>> class Cube(torch.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.save_for_backward(x)
            ...         return x ** 3
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         x, = ctx.saved_tensors
            ...         return 3 * x ** 2 * g
            >>> x = torch.tensor([2.0], requires_grad=True)
            >>> Cube.apply(x).backward(); x.grad
            tensor([12.])
        """

        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}. Keep non-tensors as attributes "
                                "on ctx instead (ctx.k = k).")
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Save tensors (or None) for ``jvp``; in ``jvp`` they are ``ctx.saved_tensors``.

        Example:
            >>> import retrograd as torch
            >>> torch.autograd.function.FunctionCtx().save_for_forward(torch.ones(1))
        """

        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args) -> None:
        """Declare inputs that forward modified in place (they must be returned as outputs).

        Example:
            >>> import retrograd as torch
            >>> class AddOne_(torch.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         x.add_(1)
            ...         ctx.mark_dirty(x)
            ...         return x
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         return g
            >>> a = torch.zeros(2, requires_grad=True).clone()
            >>> AddOne_.apply(a) is a
            True
        """
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args) -> None:
        """Declare outputs that are not differentiable (they will not require grad).

        Example:
            >>> import retrograd as torch
            >>> class SortVals(torch.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         v, i = x.sort()
            ...         ctx.mark_non_differentiable(i)
            ...         ctx.save_for_backward(i)
            ...         return v, i
            ...     @staticmethod
            ...     def backward(ctx, gv, gi):
            ...         i, = ctx.saved_tensors
            ...         return torch.zeros_like(gv).scatter(0, i, gv)
            >>> v, i = SortVals.apply(torch.tensor([2.0, 1.0], requires_grad=True))
            >>> v.requires_grad, i.requires_grad
            (True, False)
        """
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient.

        Example:
            >>> import retrograd as torch
            >>> ctx = torch.autograd.function.FunctionCtx()
            >>> ctx.set_materialize_grads(False); ctx.materialize_grads
            False
        """
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node (and ctx) of one call of a custom Function: a ``Node`` plus ctx state.

    Example:
        >>> import retrograd as torch
        >>> class Id(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x.clone()
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g
        >>> y = Id.apply(torch.ones(1, requires_grad=True))
        >>> isinstance(y.grad_fn, torch.autograd.graph.Node), y.grad_fn.name()
        (True, 'IdBackward')
    """

    __slots__ = ("to_save", "saved_for_forward", "dirty_tensors", "non_differentiable",
                 "materialize_grads", "needs_input_grad", "_in_is_tensor", "_out_meta",
                 "_in_jvp")

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward`` (version-checked, through the
        saved-tensor hooks); in ``jvp``, those given to ``save_for_forward``."""
        if self._in_jvp:
            return tuple(self.saved_for_forward or ())
        if self._saved == () and self._ver is None and self.to_save:
            return tuple(self.to_save)  # still inside forward: nothing packed yet
        return tuple(self._unpack())

    saved_variables = saved_tensors

    def __repr__(self) -> str:  # PyTorch: <torch.autograd.function.CubeBackward object at 0x...>
        cls = type(self)
        return f"<{cls.__module__}.{cls.__qualname__} object at {id(self):#x}>"

    @property
    def _forward_cls(self):
        return self._op.cls


def _new_ctx(op) -> BackwardCFunction:

    ctx = BackwardCFunction.__new__(op.node_cls)  # <Name>Backward (Note [Node classes])
    ctx._op = op
    ctx._edges = ()
    ctx._saved = ()
    ctx._ver = None
    ctx._out = None
    ctx._p = None
    ctx._nout = 1
    ctx._seq = _next_seq()
    ctx._site = user_site()
    if STATE.anomaly:
        ctx._trace = _anomaly_trace()
    ctx.to_save = ctx.saved_for_forward = ctx.dirty_tensors = ctx.non_differentiable = None
    ctx.materialize_grads = True
    ctx.needs_input_grad = ()
    ctx._in_is_tensor = ()
    ctx._out_meta = ()
    ctx._in_jvp = False
    return ctx


class _FunctionOp:
    """The ``_op`` of every node a given Function class makes (Note [Custom Function nodes])."""

    __slots__ = ("cls", "node_name", "node_cls", "setup", "_sig", "__weakref__")
    runs_user_code = True  # what backward returns may be kept (Note [Gradient donation])

    def __init__(self, cls):
        self.cls = cls
        self.node_name = cls.__dict__.get("_node_name") or cls.__name__ + "Backward"
        # as PyTorch's FunctionMeta makes it: a class per Function, <Name>Backward, a subclass
        # of BackwardCFunction (Note [Node classes] in _graph/node.py)
        self.node_cls = type(self.node_name, (BackwardCFunction,), {
            "__slots__": (), "__module__": __name__, "__qualname__": self.node_name,
            "__doc__": f"The node of {cls.__name__}.apply (a BackwardCFunction)."})
        self.setup = cls.setup_context is not _SingleLevelFunction.setup_context
        self._sig = None

    def bind(self, args, kwargs):
        """Positional inputs of forward (PyTorch binds keywords; defaults with setup_context)."""
        if self._sig is None:
            self._sig = inspect.signature(self.cls.forward)
        try:
            if self.setup:
                b = self._sig.bind(*args, **kwargs)
                b.apply_defaults()
                return b.args, b.kwargs
            b = self._sig.bind(None, *args, **kwargs)
            return b.args[1:], b.kwargs
        except TypeError as e:
            raise TypeError(f"{self.cls.__name__}.apply: {e} (apply takes the arguments of "
                            f"{self.cls.__name__}.forward{'' if self.setup else ' after ctx'})"
                            ) from None

    def user_backward(self):
        cls = self.cls
        bw = cls.backward
        vjp = cls.vjp
        base = _SingleLevelFunction
        if bw is not base.backward and vjp is not base.vjp and bw is not vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp if vjp is not base.vjp else bw

    def backward(self, node, grads, needs):

        if node.materialize_grads:
            grads = [_zeros_meta(m) if g is None and m is not None else g
                     for g, m in zip(grads, node._out_meta)]
        res = call_unscoped(self.user_backward(), node, *grads)  # Note [Site scopes]
        if not isinstance(res, tuple):
            res = (res,)
        name = self.node_name
        n_in = len(node._in_is_tensor)
        if len(res) != n_in:
            if len(res) > n_in and all(r is None for r in res[n_in:]):
                res = res[:n_in]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected "
                    f"{n_in}, got {len(res)}). {self.cls.__name__}.forward takes {n_in} "
                    f"input{'s' if n_in != 1 else ''} (after ctx), so backward must return "
                    f"{n_in} value{'s' if n_in != 1 else ''}: one gradient per input, in "
                    "order, with None for inputs that are not tensors or need no gradient.")
        go_rg = STATE.enabled and any(isinstance(g, Tensor) and g._rg for g in grads)
        out = []  # one entry per tensor argument (the node's edges)
        for i, (r, is_t) in enumerate(zip(res, node._in_is_tensor)):
            if r is None:
                if is_t:
                    out.append(None)
                continue
            if not isinstance(r, Tensor):
                tn = type(r)
                tname = tn.__name__ if tn.__module__ == "builtins" else \
                    f"{tn.__module__}.{tn.__name__}"
                raise RuntimeError(
                    f"expected Variable or None (got {tname}). {name} (the backward of "
                    f"{self.cls.__name__}) returned a {tname} as the gradient of input {i}: "
                    "compute gradients with retrograd Tensor ops on grad_output and "
                    "ctx.saved_tensors (never NumPy), so that create_graph=True can "
                    "differentiate them again.")
            if not is_t:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable. "
                    f"Return None at position {i + 1} of {self.cls.__name__}.backward.")
            if go_rg and not r._rg and node._edges[len(out)] is not None and r._data.size \
                    and r._data.any():
                raise RuntimeError(
                    f"function {name} returned a gradient for input {i} that is not connected "
                    "to the graph, although create_graph=True and its grad_output requires "
                    f"grad. {self.cls.__name__}.backward probably computed it outside "
                    "retrograd (NumPy, .numpy(), .data, .detach(), torch.tensor(...)), so "
                    "higher derivatives would be silently wrong. Write backward with Tensor "
                    "ops on grad_output and ctx.saved_tensors, or decorate it with "
                    "@once_differentiable so that double backward raises instead.")
            out.append(r)  # the engine drops what is not needed (and sums/casts the rest)
        return out


def _zeros_meta(meta):
    from numpy import zeros

    shape, dt = meta
    return _make(zeros(shape, dtype=dt))


def _function_op(cls) -> _FunctionOp:
    op = cls.__dict__.get("_rg_op")
    if op is None:
        op = _FunctionOp(cls)
        type.__setattr__(cls, "_rg_op", op)
    return op


def _alias(t):
    """A new tensor object viewing ``t`` (same data and version counter), outside any graph."""

    a = _make(t._data)
    a._vc = t._vc
    a._base = t._base if t._base is not None else t
    a._vfn = (t._vfn, T.alias, None)  # Note [Views and in-place] (ops/dispatch.py)
    return a


class FnView:
    """Marks a Function's output that is a view: writing into it (or into a view of it) in
    place is refused, since the CopySlices history would bypass the custom backward, as
    in PyTorch."""

    __slots__ = ()

    def error(self, view) -> RuntimeError:
        import re

        fn = re.sub(r"Backward\d*$", "", view.grad_fn.name()) if view.grad_fn else "?"
        return RuntimeError(
            f"Output {view._out_nr} of {fn} is a view and is being modified inplace. This view "
            "was created inside a custom Function (or because an input was returned as-is) "
            "and the autograd logic to handle view+inplace would override the custom backward "
            "associated with the custom Function, leading to incorrect gradients. This "
            "behavior is forbidden. You can fix this by cloning the output of the custom "
            "Function.")


_FN_VIEW = FnView()


def _apply(op: _FunctionOp, args: tuple, kwargs: dict):

    cls = op.cls
    ctx = _new_ctx(op)
    is_t = tuple(isinstance(a, Tensor) for a in args)
    needs = tuple(t and a._rg for t, a in zip(is_t, args))
    ctx.needs_input_grad = needs
    ctx._in_is_tensor = is_t
    is_exec = STATE.enabled and any(needs)
    # one edge per *tensor* argument, as in PyTorch (next_functions, hooks' grad_inputs)
    ctx._edges = tuple(_edge(a) if n else None for a, n, t in zip(args, needs, is_t) if t) \
        if is_exec else (None,) * sum(is_t)
    fw_on = FW.active
    prev = STATE.enabled
    STATE.enabled = False
    FW.active = False
    try:
        if op.setup:
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    finally:
        STATE.enabled = prev
        FW.active = fw_on
    is_tuple = isinstance(raw, tuple)
    outs = _wrap_outputs(ctx, args, raw if is_tuple else (raw,), is_exec)
    if fw_on:
        _forward_ad(ctx, args, outs)
    return outs if is_tuple else outs[0]


def _wrap_outputs(ctx, args, outs, is_exec: bool) -> tuple:
    """Attach the outputs to ``ctx`` (Note [Custom Function nodes]); save what was asked."""
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty_ids = _bump_dirty(ctx, input_ids, {id(o) for o in outs})
    nondiff = {id(t) for t in (ctx.non_differentiable or ())}
    new = []
    attached = {}  # id of an output given ctx as its grad_fn -> its output number
    for k, o in enumerate(outs):
        if isinstance(o, Tensor):
            o = _wrap_output(ctx, o, k, is_exec, input_ids, dirty_ids, nondiff, attached)
        new.append(o)
    if len(outs) != 1:
        ctx._nout = len(outs)
    ctx._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None
                          for o in new)
    if is_exec and ctx.to_save:
        _save_for_backward(ctx, new, attached)
    return tuple(new)


def _bump_dirty(ctx, input_ids: set, out_ids: set) -> set:
    """Check ``mark_dirty``'s tensors (inputs, returned as outputs) and bump their versions;
    returns their ids."""
    dirty = ctx.dirty_tensors or ()
    for i, t in enumerate(dirty):
        if id(t) not in input_ids:
            raise RuntimeError(f"mark_dirty only accepts input tensors, but argument {i} isn't "
                               "one")
        if id(t) not in out_ids:
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
        t._vc[0] += 1
    return {id(t) for t in dirty}


def _wrap_output(ctx, o, k: int, is_exec: bool, input_ids: set, dirty_ids: set,
                 nondiff: set, attached: dict):
    """Output ``k`` of a Function's forward as the caller gets it: an input returned as is
    becomes an alias of it, and a differentiable output takes ``ctx`` as its grad_fn (a
    dirty input is rebased onto it); an output marked non-differentiable stops requiring
    grad."""
    oid = id(o)
    is_dirty = oid in dirty_ids
    if oid in input_ids and not is_dirty:
        o = _alias(o)
    if is_exec and o._data.dtype in FLOAT_NP and oid not in nondiff:
        if is_dirty:
            _rebase_dirty(ctx, o, k)
        else:
            o._rg = True
            o.grad_fn = ctx
            o._out_nr = k
            if o._base is not None:  # an input returned as-is, or a view made in forward
                o._vfn = (o._vfn, T.alias, _FN_VIEW)
        attached[oid] = k
    elif oid in nondiff and o.grad_fn is None and o._rg and oid not in input_ids:
        o._rg = False
    return o


def _save_for_backward(ctx, new: list, attached: dict) -> None:
    """Save ``ctx.to_save`` on the node with their versions (its own outputs as output
    slots: no reference cycle), then through saved-tensor hooks."""
    saved, vers = [], []
    has_out = False
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
            vers.append(None)
        elif id(t) in attached and t.grad_fn is ctx:
            k = attached[id(t)]
            saved.append(OUT0 if k == 0 else _OutputSlot(k))
            vers.append(t._vc[0])
            has_out = True
        else:
            if t._vc.__class__ is not list and not STATE.inference:
                check_inference_saved(t)  # Note [Inference tensors] (_tensor/tensor.py)
            saved.append(t)
            vers.append(t._vc[0])
    ctx._saved = tuple(saved)
    ctx._ver = tuple(vers)
    if has_out:
        ctx._out = [(o._data, o._vc, o._vc[0]) if isinstance(o, Tensor) and
                    o.grad_fn is ctx else None for o in new]
    if HOOKS.stack:
        HOOKS.pack_all(ctx, new[0] if len(new) == 1 else tuple(new))


def _rebase_dirty(ctx, o, k: int) -> None:
    """A dirty (modified in place) input becomes output ``k`` of ``ctx``."""

    if o.grad_fn is None and o._rg:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation. Clone it first (x = leaf.clone()) before passing it to a "
                           "Function that modifies its input (mark_dirty).")
    base = o._base
    if base is not None and base._rg:
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation. Clone the leaf first.")
        res = _make(o._data)
        res._vc = o._vc
        res._rg = True
        res.grad_fn = ctx
        res._out_nr = k
        _rebase_view(o, res)
        return
    o._rg = True
    o.grad_fn = ctx
    o._out_nr = k


def _forward_ad(ctx, args, outs) -> None:
    """Tangents of a Function's outputs from its ``jvp`` (forward-mode AD)."""

    tans = [get_tangent(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tans):
        return
    if ctx.materialize_grads:
        tans = [zeros_like(a) if t is None and isinstance(a, Tensor) and a.is_floating_point()
                else t for t, a in zip(tans, args)]
    cls = ctx._op.cls
    ctx._in_jvp = True
    FW.active = False
    try:
        res = cls.jvp(ctx, *tans)
    finally:
        FW.active = True
        ctx._in_jvp = False
    if not isinstance(res, tuple):
        res = (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"function {ctx.name()} returned an incorrect number of forward "
                           f"gradients (expected {len(outs)}, got {len(res)}): "
                           f"{cls.__name__}.jvp must return one tangent per output of forward.")
    for i, r in enumerate(res):
        if r is not None and not isinstance(r, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(r).__name__}) as tangent "
                               f"{i} from {cls.__name__}.jvp")
    attach(outs, res, ctx.name())


class _SingleLevelFunction(FunctionCtx):
    """The static methods every Function may define (see ``Function``)."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Compute the outputs (runs under no_grad). Override it."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Fill ``ctx`` from the inputs and output when forward takes no ctx. Optional."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients of the inputs from those of the outputs. Override it (or ``vjp``)."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Tangents of the outputs from those of the inputs (forward-mode AD). Optional."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of custom differentiable operations: subclass it with static
    ``forward(ctx, *args)`` (or ``forward(*args)`` plus ``setup_context(ctx, inputs,
    output)``) and ``backward(ctx, *grad_outputs)``, then call ``MyFn.apply(*args)``.

    Example:
        >>> import retrograd as torch
        >>> class MulConst(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(x, k):
        ...         return x * k
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.k = inputs[1]
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * ctx.k, None
        >>> x = torch.ones(2, requires_grad=True)
        >>> MulConst.apply(x, 3.0).sum().backward(); x.grad
        tensor([3., 3.])
    """

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on ``args`` and record the node whose backward is ``cls.backward``."""
        op = _function_op(cls)
        if kwargs or op.setup:
            args, kwargs = op.bind(args, kwargs)
        if LEVELS.depth and not op.setup:  # Note [Transform depth]
            raise RuntimeError(
                "In order to use an autograd.Function with functorch transforms (vmap, grad, "
                "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
                "details, please see https://pytorch.org/docs/main/notes/extending.func.html "
                f"({cls.__name__}.forward takes ctx; move what it does with ctx into "
                f"{cls.__name__}.setup_context(ctx, inputs, output) and drop ctx from forward)")
        if MODES.bits & VMAP:  # Note [Functions inside vmap] (_functorch/function_vmap.py)
            r = VMAP_APPLY[0](cls, args, kwargs)
            if r is not NotImplemented:
                return r
        return _apply(op, args, kwargs)

    @staticmethod
    def vmap(info, in_dims, *args):
        """How this Function batches inside vmap (Note [Functions inside vmap]): override it,
        or set ``generate_vmap_rule = True``; this default says so."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")


#: vmap's handler for Function.apply with batched arguments, registered at its import
VMAP_APPLY: list = [None]


class InplaceFunction(Function):
    """Kept for backward compatibility (PyTorch's ``InplaceFunction``): use ``Function``.

    Example:
        >>> import retrograd as torch
        >>> issubclass(torch.autograd.function.InplaceFunction, torch.autograd.Function)
        True
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a ``backward`` that is not itself differentiable: it runs under no_grad,
    and differentiating its result (double backward) raises a clear error.

    Example:
        >>> import retrograd as torch
        >>> class Exp(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = x.exp()
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     @torch.autograd.function.once_differentiable
        ...     def backward(ctx, g):
        ...         y, = ctx.saved_tensors
        ...         return g * y
        >>> x = torch.zeros(1, requires_grad=True)
        >>> v = torch.ones(1, requires_grad=True)
        >>> g, = torch.autograd.grad(Exp.apply(x), x, v, create_graph=True)
        >>> try:
        ...     g.backward()
        ... except RuntimeError as e:
        ...     print(str(e)[:60])
        trying to differentiate twice a function that was marked wit
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):

        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not STATE.enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)

        def fake_requires_grad(v):
            if v is not None:
                v = v.detach()
                v.requires_grad = True
            return v

        res = _DelayedError.apply(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable", *[fake_requires_grad(v) for v in outs])
        if not isinstance(res, tuple):
            res = (res,)
        return res if isinstance(outputs, tuple) else res[0]

    return wrapper


class _DelayedError(Function):
    """Identity whose backward raises ``msg`` (what once_differentiable wraps outputs in)."""

    _node_name = "torch::autograd::Error"  # what PyTorch names its DelayedError node

    # (setup_context form, so func transforms accept it: Note [Transform depth])
    @staticmethod
    def forward(msg, *xs):
        return xs

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.msg = inputs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


class _UndefinedGrad(Function):
    """Identity whose backward sends no gradient (gradcheck's undefined-grad test)."""

    _node_name = "UndefinedGrad"

    @staticmethod
    def forward(x):
        return x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return None
