"""The op machinery: an ``Op`` (table entry) and the calls that run and record one.

Every differentiable primitive is an ``Op`` in ``ops/records/`` (``table.py`` gathers them): a
NumPy forward kernel, one vector-Jacobian rule per input written with retrograd Tensor ops, and a
forward-mode (JVP) rule. ``unary``/``binary``/``apply`` run the kernel and, when grad
mode is on and an input requires grad, record a ``Node``.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.exp(x).grad_fn.name()
    'ExpBackward0'
"""

from __future__ import annotations

import builtins
import itertools

from .._core.dtype import CACHES, DEFAULTS, FROM_NP, float32
from .._core.grad_mode import INFERENCE_HOOKS, STATE
from .._graph.modes import MODES
from .._graph.node import _OUT_ONLY, OUT0, Kept, Node, _OutputSlot, sink, user_site
from .._graph.provenance import FORWARD_WATCHERS
from .._graph.saved_hooks import HOOKS
from .._tensor.tensor import InferenceVersion, Tensor, check_inference_saved
from .saved_attributes import class_for

_SEQ = itertools.count()
_next_seq = _SEQ.__next__
_new_node = Node.__new__

#: NumPy dtypes of floating tensors (the only ones that may require grad).
FLOAT_NP = frozenset(d.np for d in FROM_NP.values() if d.is_floating_point)
_LOW = frozenset(d.np for d in FROM_NP.values() if d.name in ("float16", "bfloat16"))
_F32 = float32.np


#: every Op ever defined (the op database's meta-test checks each has an entry)
REGISTRY: list = []

# Note [Direct kernels]
# Most NumPy work runs inside op records' kernels (``Op.fwd``), which retrograd.compile's
# tracer wraps while it records (Note [Tracing] in _compile/record.py). A few kernels are
# called on arrays directly by the code around an op (max pooling's argmax indices):
# ``direct_kernel`` lists them, by module and name, so that the tracer wraps them too.
# Callers reach them as module attributes (``TN.max_pool_indices``), which the tracer
# swaps; the decorator returns the function itself (no cost per call).
DIRECT_KERNELS: list = []


def direct_kernel(fn):
    """List ``fn`` as a kernel that code calls directly (Note [Direct kernels]).

    Example:
        >>> from retrograd.ops.op import DIRECT_KERNELS
        >>> ("retrograd.ops.records.nn", "max_pool_indices") in DIRECT_KERNELS
        True
    """
    DIRECT_KERNELS.append((fn.__module__, fn.__name__))
    return fn

# How a record's node keeps what its rules read (``Op.save_plan``, Note [Recording]):
SAVE_NOTHING = 0  # saves nothing (add, views)
SAVE_OUTPUT = 1  # the output alone (exp, tanh, sigmoid, relu, ...)
SAVE_INPUT0 = 2  # input 0 alone
SAVE_CROSSED = 3  # each of two operands only for the other's gradient (mul, mm)
SAVE_INPUTS = 4  # inputs by index
SAVE_CROSSED_12 = 5  # inputs 1 and 2 each for the other's gradient (addmm, linear)
SAVE_GENERAL = -1  # anything else: outputs, parameters, conditional saves


def _save_plan(save: tuple, save_if: tuple | None) -> int:
    """The SAVE_* plan of a record's ``save``/``save_if`` (Note [Recording]): the commonest
    save patterns get a straight path; any other pattern takes the general one."""
    if not save:
        return SAVE_NOTHING
    if save_if is None:
        plan = {("out",): SAVE_OUTPUT, (0,): SAVE_INPUT0}.get(save, SAVE_GENERAL)
        if plan == SAVE_GENERAL and all(s.__class__ is int for s in save):
            return SAVE_INPUTS
        return plan
    return {((0, 1), ((1,), (0,))): SAVE_CROSSED,
            ((1, 2), ((2,), (1,))): SAVE_CROSSED_12}.get((save, save_if), SAVE_GENERAL)


# Note [Complete records]
# An op record is complete when constructed: every field is a constructor argument, and
# nothing is assigned onto a record afterwards (``Op.__setattr__`` refuses), so the line
# that makes a record is all there is to read about it. A variant of a record (the folded
# CopySlices of an op with other non-differentiable inputs) is a record of its own, made
# by its records module (``register=False``: no table entry of its own). Code never tests
# a record by its name either: what the engine or dispatch must know is a field
# (``bool_error``, ``grad_once``, ``unsaved``), a batching rule its own rule. One
# field stays writable: ``fwd``, the kernel, which retrograd.compile's tracer wraps while
# it records and puts back (Note [Tracing] in _compile/record.py), as tests that count
# kernel calls do. tests/ops/test_op_records_complete.py holds the source to this.
_init = object.__setattr__


class Op:
    """One entry of the derivative table, complete when constructed (Note [Complete records]).

    ``fwd`` is the NumPy kernel. ``vjp`` is a tuple with one rule per input,
    ``rule(g, saved, node) -> Tensor``, or a single callable ``rule(g, saved, node, needs)
    -> list`` for ops with a variable number of inputs. ``save`` names what the rules
    read: input indices, ``"out"`` (``"out1"``... for further outputs) and/or ``"p0"``,
    ``"p1"``... (the Tensor ``node._p[k]``: Note [Tensors saved from parameters]).
    ``jvp(tangents, saved, node, out) -> Tensor`` is the forward rule (tangents of
    inputs, None where zero). The other fields are described where ``__init__`` sets them.

    Example:
        >>> from retrograd.ops.records import table as T
        >>> T.mul.save, T.mul.save_if, T.div.kind
        ((0, 1), ((1,), (0,)), 'float')
        >>> T.mul.kind = "float"  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        AttributeError: Op(mul).kind: an op record is complete when constructed ...
    """

    __slots__ = ("name", "node_name", "fwd", "vjp", "jvp", "save", "view", "per_input", "kind",
                 "save_if", "batch_ok", "save_plan", "grad_once", "unsaved", "nondiff",
                 "autocast", "batch", "bool_error", "node_cls")

    def __init__(self, name: str, fwd, vjp=None, save=(), jvp=None, node_name: str | None = None,
                 view: bool = False, kind: str | None = None, save_if: tuple | None = None,
                 nondiff: tuple | None = None, batch_ok: bool = False, autocast=None,
                 batch=None, grad_once=None, unsaved: tuple = (), bool_error: str | None = None,
                 register: bool = True):
        _init(self, "name", name)
        _init(self, "node_name", node_name or (
            "".join(p.capitalize() for p in name.split("_")) + "Backward0"))
        # the class of this record's nodes, with PyTorch's name and saved attributes (Note
        # [Node classes] in _graph/node.py): made once per name
        _init(self, "node_cls", class_for(self.node_name))
        _init(self, "fwd", fwd)
        _init(self, "vjp", vjp)
        _init(self, "per_input", isinstance(vjp, tuple))
        _init(self, "jvp", jvp)
        _init(self, "save", tuple(save))
        # save_if[j]: input indices; save entry j only if one of them requires grad
        # (x.mul_(2) must not save x, or the in-place write would invalidate it)
        _init(self, "save_if", save_if)
        _init(self, "save_plan", _save_plan(self.save, save_if))
        _init(self, "view", view)
        # None: the result has the promoted dtype; "float": ints become float; "bool":
        # comparisons
        _init(self, "kind", kind)
        # Note [Non-differentiable inputs] (_graph/node.py): the input positions that
        # never get a gradient (an index, a condition, a number operand of a Scalar
        # overload): the None rules of a per-input vjp, or given for a callable one
        if nondiff is None:
            nondiff = tuple(i for i, r in enumerate(vjp) if r is None) if self.per_input else ()
        _init(self, "nondiff", tuple(nondiff))
        # Note [Batched rules] (ops/records/reductions.py): True when the rules are
        # batch-agnostic
        _init(self, "batch_ok", batch_ok)
        # Note [Batching rules] (ops/batch_rules.py): how vmap runs the op on a whole
        # batch in one call (None: once per batch element, the slow fallback)
        _init(self, "batch", batch)
        # Note [Autocast records] (ops/public.py): the category autocast casts inputs to
        _init(self, "autocast", autocast)
        # grad_once(node, needs): the rules about to run read g once in all (Note
        # [Gradient donation] in buffers.py); None: never assumed
        _init(self, "grad_once", grad_once)
        # what a node that saves nothing holds: () (it may run again), or RELEASED for
        # the nodes PyTorch frees all the same (Note [Nodes that saved nothing], node.py)
        _init(self, "unsaved", unsaved)
        # PyTorch's error when the kernel refuses two bool operands (``a - b``: "use the
        # ^ operator"); None: NumPy's TypeError stands
        _init(self, "bool_error", bool_error)
        # register=False: a variant of a registered record (the folded CopySlices for one
        # set of non-differentiable inputs), no entry of the table of its own
        if register:
            REGISTRY.append(self)

    def __setattr__(self, name: str, value) -> None:
        if name != "fwd":  # Note [Complete records]: the kernel alone may be wrapped
            raise AttributeError(f"{self!r}.{name}: an op record is complete when constructed "
                                 f"(Note [Complete records]); give {name}= to Op(...) instead")
        _init(self, name, value)

    def __copy__(self) -> Op:  # a record is a constant, as a function is
        return self

    def __deepcopy__(self, memo) -> Op:
        return self

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
                n = len(vjp)
                if n == 1:  # one input: it has an edge, or there'd be no node
                    return [vjp[0](g, s, node)]
                if n == 2:  # binary ops, written out (the commonest case after unary)
                    e0, e1 = node._edges
                    return [None if e0 is None else vjp[0](g, s, node),
                            None if e1 is None else vjp[1](g, s, node)]
                return [r(g, s, node) if e is not None else None
                        for r, e in zip(vjp, node._edges)]
            return [rule(g, s, node) if need else None for rule, need in zip(vjp, needs)]
        if needs is None:
            edges = node._edges
            if len(edges) == 2:
                needs = [edges[0] is not None, edges[1] is not None]
            else:
                needs = [e is not None for e in edges]
        return self.vjp(g, s, node, needs)


def _edge(t):
    """(node, input_nr, shape, dtype) of where a gradient for ``t`` must go."""
    fn = t._gfn
    if t._base is not None:  # a view's node may be stale (Note [View grad_fn regeneration])
        fn = t.grad_fn
        if fn is None and t._inherits:  # requires grad through its base only: no edge
            return (sink(), 0, t._data.shape, t._data.dtype)  # (PyTorch's invalid edge)
    if fn is None:
        acc = t._acc
        if acc is None:
            acc = t._grad_accumulator()
        return (acc, 0, t._data.shape, t._data.dtype)
    return (fn, t._out_nr, t._data.shape, t._data.dtype)


# Note [Recording]
# Recording is most of what an op costs on small tensors. ``make_node`` is the one body
# that builds a node and sets every slot of it (no instance dict is made): one edge per
# input (the commonest arities, one and two inputs, without a loop), the sequence
# number, the user's line (Note [User sites]), what the rules read (``_save``: the
# commonest save patterns have a straight path, ``Op.save_plan``) and the outputs'
# grad_fn. What is rare is left to ``finish_record``: anomaly mode's trace and
# saved-tensor hooks, wanted only while an optional mode is on (Note [Optional modes]).
# ``record`` does both, for code outside dispatch: it finds the user's line and tests
# the mode bits itself. Dispatch's plain paths run only while no mode is on (Note [Optional
# modes at dispatch] in dispatch.py): they call ``make_node`` with the line they found,
# and the modal path calls ``finish_record`` after them. The refusal to save an inference
# tensor waits behind one test of a module global, set once any thread has entered
# inference mode (Note [Inference tensors]).
def record(op: Op, outs, inputs, p=None, nout: int = 1) -> Node:
    """Make the node for ``outs`` (a Tensor, or a tuple of ``nout`` of them) computed by
    ``op`` from ``inputs`` (Tensors or numbers), one of which requires grad, with the op's
    parameters ``p`` (Note [Recording]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> x = torch.ones(2, requires_grad=True)
        >>> y = torch.ones(2)
        >>> record(T.neg, y, (x,)).name(), y.requires_grad
        ('NegBackward0', True)
    """
    node = make_node(op, outs, inputs, p, nout, user_site())
    if nout == 1 and outs._base is not None:  # a view (split into one piece): the grad_fn
        outs._vver = outs._vc[0]  # setter's version stamp (Note [View grad_fn regeneration])
    if MODES.bits:
        finish_record(node, outs, inputs)
    return node


def make_node(op: Op, outs, inputs, p, nout: int, site) -> Node:
    """The node for ``outs`` computed by ``op`` from ``inputs`` at the user's ``site``
    (``user_site()``), without what optional modes add (Note [Recording]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> x = torch.ones(2, requires_grad=True)
        >>> make_node(T.neg, torch.ones(2), (x,), None, 1, None).next_functions[0][0].name()
        'torch::autograd::AccumulateGrad'
    """
    node = _new_node(Node)  # its own class when user code sees it: Note [Node classes]
    node._op = op
    n = len(inputs)
    if n == 1:
        x = inputs[0]
        node._edges = (_edge(x) if x.__class__ is Tensor and x._rg else _operand_edge(node, 0, x),)
    elif n == 2:
        node._edges = (_operand_edge(node, 0, inputs[0]), _operand_edge(node, 1, inputs[1]))
    else:
        node._edges = _operand_edges(node, inputs)
    node._p = p
    node._nout = nout
    node._seq = _next_seq()
    node._site = site
    plan = op.save_plan
    if plan == SAVE_OUTPUT and nout == 1:  # the commonest plan, written out
        vc = outs._vc
        node._saved = _OUT_ONLY
        node._ver = [vc[0]]
        node._out = [(outs._data, vc, vc[0])]
    elif plan:
        _save(node, op, outs, inputs, nout)
        if _INFERENCE_SEEN:  # Note [Inference tensors] (_tensor/tensor.py)
            _refuse_inference_saved(node, inputs)
    else:
        node._saved = op.unsaved
        node._ver = node._out = None
    if nout == 1:
        outs._rg = True
        outs._gfn = node
    else:
        _attach_outputs(node, outs)
    return node


def _operand_edges(node, inputs) -> list:
    """The edges of ``node``'s inputs, for three or more of them (``_operand_edge``)."""
    edges = []  # (a loop: a comprehension is one more call per op)
    for i, x in enumerate(inputs):
        edges.append(_operand_edge(node, i, x))
    return edges


def _attach_outputs(node, outs) -> None:
    """The floating outputs of a multi-output op take ``node`` as their grad_fn."""
    for k, o in enumerate(outs):
        if o is not None and o._data.dtype in FLOAT_NP:
            o._rg = True
            o.grad_fn = node
            o._out_nr = k


# Note [Tensors saved from parameters]
# A mask or an index tensor that PyTorch's op takes as a non-differentiable argument
# (masked_fill's mask, masked_select's mask) is no input of ours: an input would be a
# slot of next_functions, and PyTorch's node has none for it. The op takes it in its
# parameters ``p`` and names it in ``save`` as ``"pK"`` (``p[K]``), so the node saves it
# as PyTorch does: version-checked, freed after backward, seen by saved-tensor hooks.


def _operand_edge(node, i: int, x):
    """The edge of operand ``i`` (a Tensor or a number) of ``node``, or None."""
    if x.__class__ is Tensor or isinstance(x, Tensor):
        if x._rg:
            return _edge(x)
        if x._cut is not None:  # Note [Cut markers] (_graph/provenance.py)
            _cut_in(node, i, x)
    return None


def _cut_in(node, i: int, x) -> None:
    """Note [Cut markers] (_graph/provenance.py): input ``i`` carries a cut marker."""
    node.__dict__.setdefault("_cut_in", []).append((i, x._cut))


def _save(node, op: Op, outs, inputs, nout: int) -> None:
    """Fill ``node._saved``/``_ver``/``_out`` from ``op.save`` (Note [Saved tensor versions]);
    the commonest plans (Note [Recording]) first."""
    plan = op.save_plan
    if plan == SAVE_CROSSED or plan == SAVE_CROSSED_12:
        a, b = inputs if plan == SAVE_CROSSED else inputs[1:]
        xa = a if isinstance(b, Tensor) and b._rg else None
        xb = b if isinstance(a, Tensor) and a._rg else None
        # (addmm of a bias alone that requires grad saves nothing: the node may run again)
        node._saved = [xa, xb] if xa is not None or xb is not None else Kept([None, None])
        va = xa._vc[0] if isinstance(xa, Tensor) else None
        vb = xb._vc[0] if isinstance(xb, Tensor) else None
        # no tensor saved (``x * 2.0`` keeps the number): nothing to check at unpacking
        node._ver = None if va is None and vb is None else [va, vb]
        node._out = None
        return
    if plan == SAVE_INPUT0 or plan == SAVE_INPUTS:
        saved = []
        vers = []
        for i in op.save:
            x = inputs[i]
            saved.append(x)
            vers.append(x._vc[0] if isinstance(x, Tensor) else None)
        node._saved = saved
        node._ver = vers
        node._out = None
        return
    saved = []
    vers = []
    has_out = has_value = False
    save_if = op.save_if
    for j, s in enumerate(op.save):
        if save_if is not None and not _any_rg_at(inputs, save_if[j]):
            saved.append(None)
            vers.append(None)
        elif s.__class__ is str and s[0] == "p":  # Note [Tensors saved from parameters]
            x = node._p[int(s[1:])]  # (None: an optional tensor left out, saved as None)
            saved.append(x)
            vers.append(None if x is None else x._vc[0])
            has_value = True
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
            has_value = True  # a tensor, or a number (PyTorch saves it as a wrapped tensor)
    node._saved = saved if has_out or has_value else Kept(saved)
    node._ver = vers
    if has_out:
        seq = outs if nout > 1 else (outs,)
        node._out = [None if o is None else (o._data, o._vc, o._vc[0]) for o in seq]
    else:
        node._out = None


def finish_record(node, outs, inputs) -> None:
    """The rare parts of recording (Note [Recording]), each while its mode is on: anomaly
    mode's trace and NaN watchers, selective checkpointing's per-op policy, and sending the
    saved tensors through saved-tensor hooks.

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(1, requires_grad=True) * 2
        >>> finish_record(y.grad_fn, y, ())  # no mode on: nothing to add
    """
    if STATE.anomaly:
        node._trace = _anomaly_trace()
        if FORWARD_WATCHERS:  # viz.nan_provenance (Note [Non-finite provenance])
            FORWARD_WATCHERS[-1](node, outs, inputs)
    if HOOKS.watchers and HOOKS.stack:  # selective checkpointing's per-op policy
        HOOKS.watchers[-1](node, outs, inputs)
    if HOOKS.stack and node._saved:
        HOOKS.pack_all(node, outs)


#: whether any thread has entered inference mode: from then on every record checks that
#: it saves no inference tensor (Note [Inference tensors] in _tensor/tensor.py)
_INFERENCE_SEEN = False


def _refuse_inference_saved(node, inputs) -> None:
    """PyTorch's refusal to save an inference tensor for backward outside inference mode."""
    if STATE.inference:
        return
    saved = node._saved or ()
    for x in inputs:
        if isinstance(x, Tensor) and x._vc.__class__ is InferenceVersion and \
                builtins.any(s is x for s in saved):
            check_inference_saved(x)


def _note_inference(entering: bool) -> None:
    """Inference mode was entered (or left) by some thread: see ``_INFERENCE_SEEN``."""
    global _INFERENCE_SEEN
    if entering:
        _INFERENCE_SEEN = True


INFERENCE_HOOKS.append(_note_inference)


def _any_rg_at(inputs, idx) -> bool:
    for k in idx:
        x = inputs[k]
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def _anomaly_trace() -> str:
    """Anomaly mode's forward traceback of the op being recorded (retrograd's own frames
    are left out when it is shown: ``user_trace`` in _graph/anomaly.py)."""
    import traceback

    return "".join(traceback.format_stack())


def any_requires_grad(values) -> bool:
    """True when some value is a Tensor that requires grad (others are skipped)."""
    for x in values:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def needs_grad(inputs) -> bool:
    """True when grad mode is on and some Tensor input requires grad."""
    return STATE.enabled and any_requires_grad(inputs)


# ----------------------------------------------------------------------------------
# dtype handling on the hot path (Note [Type promotion] in _core/dtype.py)

_BIN_CACHE: dict = {}
_SCALAR_CACHE: dict = {}
CACHES.extend((_BIN_CACHE, _SCALAR_CACHE))


def binary_dtype(ad, bd, a0: bool, b0: bool):
    """Result NumPy dtype of two tensors' NumPy dtypes and whether each is 0-d."""
    key = (ad, bd, a0, b0)
    r = _BIN_CACHE.get(key)
    if r is None:
        from .._core.dtype import result_type_of

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
        from .._core.dtype import result_type_of

        r = _SCALAR_CACHE[key] = result_type_of([FROM_NP[ad]], [], [s]).np
    return r
