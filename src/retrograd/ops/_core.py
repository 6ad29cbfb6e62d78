"""The op machinery: an ``Op`` (table entry) and the calls that run and record one.

Every differentiable primitive is an ``Op`` in ``ops/table.py``: a NumPy forward
kernel, one vector-Jacobian rule per input written with retrograd Tensor ops, and a
forward-mode (JVP) rule. ``unary``/``binary``/``apply`` run the kernel and, when grad
mode is on and an input requires grad, record a ``Node``.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.exp(x).grad_fn.name()
    'ExpBackward0'
"""

from __future__ import annotations

import itertools

from .._dtype import CACHES, DEFAULTS, FROM_NP, float32
from .._grad_mode import STATE
from .._tensor import Tensor
from ..autograd.node import OUT0, Node, _OutputSlot, user_site
from ..autograd.provenance import FORWARD_WATCHERS
from ..autograd.saved_hooks import HOOKS

_SEQ = itertools.count()
_next_seq = _SEQ.__next__
_new_node = Node.__new__

#: NumPy dtypes of floating tensors (the only ones that may require grad).
FLOAT_NP = frozenset(d.np for d in FROM_NP.values() if d.is_floating_point)
_LOW = frozenset(d.np for d in FROM_NP.values() if d.name in ("float16", "bfloat16"))
_F32 = float32.np


#: every Op ever defined (the op database's meta-test checks each has an entry)
REGISTRY: list = []

#: Note [Batched rules] (ops/table.py): ops whose rules are batch-agnostic
BATCH_OK = frozenset({
    "neg", "abs", "sign", "floor", "ceil", "round", "trunc", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "erf",
    "tanh_backward", "sigmoid_backward", "threshold_backward", "add", "sub", "mul",
    "div", "pow", "atan2",
    "maximum", "minimum", "remainder", "fmod", "where", "clamp", "clamp_tensor", "lerp",
    "to_copy", "clone", "sum", "mean", "prod", "amax", "amin", "max_all", "min_all",
    "logsumexp", "vector_norm", "matmul", "mm", "bmm", "mv", "dot", "view",
    "unsafe_view", "squeeze", "unsqueeze", "expand", "permute", "transpose", "t",
    "alias", "split", "unbind", "cat", "stack", "select", "slice"})


class Op:
    """One entry of the derivative table.

    ``vjp`` is a tuple with one rule per input, ``rule(g, saved, node) -> Tensor``,
    or a single callable ``rule(g, saved, node, needs) -> list`` for ops with a
    variable number of inputs. ``save`` names what the rules read: input indices
    and/or ``"out"``. ``jvp(tangents, saved, node, out) -> Tensor`` is the forward
    rule (tangents of inputs, None where zero).
    """

    __slots__ = ("name", "node_name", "fwd", "vjp", "jvp", "save", "view", "per_input", "kind",
                 "save_if", "batch_ok", "save_plan", "grad_once")

    def __init__(self, name, fwd, vjp=None, save=(), jvp=None, node_name=None, view=False,
                 kind=None, save_if=None):
        # save_if[j]: input indices; save entry j only if one of them requires grad
        # (x.mul_(2) must not save x, or the in-place write would invalidate it)
        self.save_if = save_if
        # grad_once(node, needs): the rules about to run read g once in all (Note
        # [Gradient donation] in buffers.py); None: never assumed
        self.grad_once = None
        self.batch_ok = name in BATCH_OK
        self.name = name
        self.kind = kind  # None: result has the promoted dtype; "float": ints become float;
        # "bool": comparisons
        self.node_name = node_name or (
            "".join(p.capitalize() for p in name.split("_")) + "Backward0")
        self.fwd = fwd
        self.vjp = vjp
        self.per_input = isinstance(vjp, tuple)
        self.jvp = jvp
        self.save = tuple(save)
        # the two commonest patterns get a straight path in record(): "out" alone, or
        # input 0 alone (checked again there, since save_if may be set after creation)
        self.save_plan = {("out",): 1, (0,): 2}.get(self.save, 0)
        self.view = view
        REGISTRY.append(self)

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def backward(self, node, grads, needs):
        """Input gradients; ``needs`` None means "every input with an edge"."""
        s = node._saved
        if s is None or node._ver is not None:  # saved tensors to check (or freed)
            s = node._unpack()
        g = grads[0] if node._nout == 1 else grads
        if self.per_input:
            vjp = self.vjp
            if needs is None:
                if len(vjp) == 1:  # one input: it has an edge, or there'd be no node
                    return [vjp[0](g, s, node)]
                return [r(g, s, node) if e is not None else None
                        for r, e in zip(vjp, node._edges)]
            return [rule(g, s, node) if need else None for rule, need in zip(vjp, needs)]
        if needs is None:
            needs = [e is not None for e in node._edges]
        return self.vjp(g, s, node, needs)


def _edge(t):
    """(node, input_nr, shape, dtype) of where a gradient for ``t`` must go."""
    fn = t.grad_fn
    if fn is None:
        return (t._grad_accumulator(), 0, t._data.shape, t._data.dtype)
    return (fn, t._out_nr, t._data.shape, t._data.dtype)


def record(op: Op, outs, inputs, p=None, nout: int = 1):
    """Make the node for ``outs`` (a Tensor or a tuple) computed by ``op`` from ``inputs``."""
    node = _new_node(Node)
    node._op = op
    edges = []
    for x in inputs:
        if x.__class__ is Tensor or isinstance(x, Tensor):
            if x._rg:
                fn = x.grad_fn
                if fn is None:
                    edges.append((x._grad_accumulator(), 0, x._data.shape, x._data.dtype))
                else:
                    edges.append((fn, x._out_nr, x._data.shape, x._data.dtype))
                continue
            if x._cut is not None:  # Note [Cut markers] (autograd/provenance.py)
                node.__dict__.setdefault("_cut_in", []).append((len(edges), x._cut))
        edges.append(None)
    node._edges = edges
    if p is not None:
        node._p = p
    node._seq = _next_seq()
    node._site = user_site()
    if STATE.anomaly:
        node._trace = _anomaly_trace()
        if FORWARD_WATCHERS:  # viz.nan_provenance (Note [Non-finite provenance])
            FORWARD_WATCHERS[-1](node, outs, inputs)
    if nout != 1:
        node._nout = nout
    save = op.save
    plan = op.save_plan
    if plan == 1 and nout == 1:  # the output alone (exp, tanh, sigmoid, relu, sqrt, ...)
        vc = outs._vc
        node._saved = [OUT0]
        node._ver = [vc[0]]
        node._out = [(outs._data, vc, vc[0])]
        if HOOKS.stack:
            HOOKS.pack_all(node, outs)
    elif plan == 2 and op.save_if is None and inputs[0].__class__ is Tensor:  # input 0 alone
        x = inputs[0]
        node._saved = [x]
        node._ver = [x._vc[0]]
        if HOOKS.stack:
            HOOKS.pack_all(node, outs)
    elif save:
        saved = []
        vers = []
        has_out = False
        save_if = op.save_if
        for j, s in enumerate(save):
            if save_if is not None and not _any_rg(inputs, save_if[j]):
                saved.append(None)
                vers.append(None)
            elif s.__class__ is str:  # "out", or "out1", "out2", ... for multi-output ops
                k = 0 if s == "out" else int(s[3:])
                o = outs if nout == 1 else outs[k]
                saved.append(OUT0 if k == 0 else _OutputSlot(k))
                vers.append(o._vc[0])
                has_out = True
            else:
                x = inputs[s]
                saved.append(x)
                vers.append(x._vc[0] if isinstance(x, Tensor) else None)
        node._saved = saved
        node._ver = vers
        if has_out:
            seq = outs if nout > 1 else (outs,)
            node._out = [None if o is None else (o._data, o._vc, o._vc[0]) for o in seq]
        if HOOKS.stack:
            HOOKS.pack_all(node, outs)
    else:
        node._saved = ()
    if nout == 1:
        outs._rg = True
        outs.grad_fn = node
    else:
        for k, o in enumerate(outs):
            if o is not None and o._data.dtype in FLOAT_NP:
                o._rg = True
                o.grad_fn = node
                o._out_nr = k
    return node


def _any_rg(inputs, idx) -> bool:
    for k in idx:
        x = inputs[k]
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def _anomaly_trace() -> str:
    import traceback

    return "".join(traceback.format_stack()[:-3])


def needs_grad(inputs) -> bool:
    """True when grad mode is on and some Tensor input requires grad."""
    if not STATE.enabled:
        return False
    from .._tensor import Tensor

    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


# ----------------------------------------------------------------------------------
# dtype handling on the hot path (Note [Type promotion] in _dtype.py)

_BIN_CACHE: dict = {}
_SCALAR_CACHE: dict = {}
CACHES.extend((_BIN_CACHE, _SCALAR_CACHE))


def binary_dtype(ad, bd, a0: bool, b0: bool):
    """Result NumPy dtype of two tensors' NumPy dtypes and whether each is 0-d."""
    key = (ad, bd, a0, b0)
    r = _BIN_CACHE.get(key)
    if r is None:
        from .._dtype import result_type_of

        da, db = FROM_NP[ad], FROM_NP[bd]
        dims = [d for d, z in ((da, a0), (db, b0)) if not z]
        zero = [d for d, z in ((da, a0), (db, b0)) if z]
        r = _BIN_CACHE[key] = result_type_of(dims, zero, []).np
    return r


def scalar_dtype(ad, s):
    """Result NumPy dtype of a tensor dtype with a Python scalar."""
    cls = s.__class__
    key = (ad, cls, DEFAULTS.float)
    r = _SCALAR_CACHE.get(key)
    if r is None:
        from .._dtype import result_type_of

        r = _SCALAR_CACHE[key] = result_type_of([FROM_NP[ad]], [], [s]).np
    return r
