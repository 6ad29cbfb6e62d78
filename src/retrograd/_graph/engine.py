"""The backward engine: a small iterative scheduler over the grad_fn graph.

``run_backward`` makes one ``GraphTask`` per call: the task owns what the call asked for
(the inputs to capture or accumulate into), the per-node gradient buffers and dependency
counts, the state hooks share (Note [Gradient accumulation]) and the modes of the pass
(anomaly mode, batched gradients, donation); its scheduler runs the ready nodes.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([4., 6.])
"""

from __future__ import annotations

import heapq
import itertools
import threading

import numpy as np

from .._core.grad_mode import STATE
from .._core.layouts import contiguous_format, grad_array_like, grad_obeys_layout
from .anomaly import nan_error, warn_forward_trace
from .node import (
    SITE_SCOPE,
    AccumulateGrad,
    Kept,
    _nothing,
    call_unscoped,
    internal_slots,
    public_slots,
    user_site,
)

__all__ = ["run_backward", "make_grads", "GraphTask", "is_checkpoint_valid",
           "register_tensor_ops"]


# Note [Engine services]
# The engine sits below the op layer (imports point down only), yet makes a few tensors
# of its own: the implicit gradient of a scalar output and a ``gradient=`` given as a
# number or list, zeros for ``materialize_grads``, a gradient summed back to its input's
# shape (``sum_to``), and the stacked rows of a rule that is not batch-agnostic; and it
# offers gradients to the buffer pool (Note [Gradient donation] in ops/buffers.py). The
# op layer hands it these services (``_functions/engine_services.py``: its ``install()`` calls
# ``register_tensor_ops``), as the layers above dispatch register their interceptors;
# ``import retrograd`` does that before any backward can run.
def _unregistered(*args, **kwargs):
    raise RuntimeError("the op layer has not registered the engine's tensor functions "
                       "(Note [Engine services])")


class _Unregistered:
    """Stands for the Tensor class until the op layer registers it."""


class _NoPool:
    """Stands for the buffer pool until the op layer registers it: nothing is donated."""

    @staticmethod
    def in_use() -> bool:
        return False

    @staticmethod
    def pool_min() -> int:
        return 0


_Tensor = _Unregistered
_make = _as_tensor = _zeros = _sum_to = _stack = _track_view = _unregistered
_pool = _NoPool


def register_tensor_ops(*, tensor_type, make, as_tensor, zeros, sum_to, stack, pool,
                        track_view) -> None:
    """Give the engine the tensor functions it uses (Note [Engine services]).

    Args:
        tensor_type: the Tensor class.
        make: wraps an ndarray in a Tensor that needs no grad.
        as_tensor: ``retrograd.tensor``.
        zeros: ``retrograd.zeros``.
        sum_to: sums a gradient back to an input's shape (``_functions/namespace.py``).
        stack: ``retrograd.stack``.
        pool: the buffer pool (``ops.buffers``: ``in_use``, ``pool_min``, ``offer``,
            ``withdraw``), which gradients may be donated to.
        track_view: remembers a view on its base, so that the view comes to require grad
            when the base does (``_tensor.track_view``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._graph import engine
        >>> engine._Tensor is torch.Tensor  # registered by ``import retrograd``
        True
    """
    global _Tensor, _make, _as_tensor, _zeros, _sum_to, _stack, _pool, _track_view
    _Tensor, _make, _as_tensor, _zeros = tensor_type, make, as_tensor, zeros
    _sum_to, _stack, _pool, _track_view = sum_to, stack, pool, track_view


class _GraphTasks(threading.local):
    """Per thread, the graph tasks of the backward passes now running, innermost last."""

    def __init__(self):
        self.stack = []


# Note [Graph tasks]: reentrant checkpointing reruns a forward and calls backward()
# from inside a backward; PyTorch allows that only when the outer backward computes
# every leaf's gradient (no ``inputs=``, not ``autograd.grad``). TASKS holds the
# GraphTask of each running backward; ``is_checkpoint_valid()`` reads the innermost.
TASKS = _GraphTasks()


def is_checkpoint_valid() -> bool:
    """False while running a backward that was given ``inputs`` (``autograd.grad`` too).

    Example:
        >>> from retrograd._graph.engine import is_checkpoint_valid
        >>> is_checkpoint_valid()
        True
    """
    stack = TASKS.stack
    return not stack or stack[-1].inputs is None


def make_grads(outputs: list, grads: list, create_graph: bool) -> list:
    """Check user-given output gradients; make the implicit ones for 1-element outputs.

    Example:
        >>> import retrograd as torch
        >>> y = torch.tensor([2.0], requires_grad=True) * 3
        >>> make_grads([y], [None], False)
        [tensor([1.])]
    """
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._rg:
                if o._data.size != 1:
                    raise RuntimeError(
                        "grad can be implicitly created only for scalar outputs. The output "
                        f"has shape {tuple(o.shape)} ({o._data.size} elements), so backward() "
                        "needs the vector v of the vector-Jacobian product: pass gradient= a "
                        f"tensor of shape {tuple(o.shape)} (for example "
                        f"torch.ones_like(out)), or reduce the output first (out.sum()).")
                if not o.dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {o.dtype}")
                d = np.empty(o._data.shape, o._data.dtype)  # (np.ones: two Python calls)
                d.fill(1)
                g = _make(d)
            out.append(g)
            continue
        if not isinstance(g, _Tensor):
            g = _as_tensor(g, dtype=o.dtype)
        if g._data.shape != o._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {o.shape}. The gradient= tensor is the v in the "
                "vector-Jacobian product vᵀJ and must have the output's shape; pass a tensor of "
                f"shape {tuple(o.shape)} (or reduce the output to a scalar first).")
        if g._data.dtype != o._data.dtype and o.dtype.is_floating_point:
            g = g.to(o.dtype)  # as PyTorch's validate_outputs: cast to the output's dtype
        out.append(g)
    return out


def _batched_grads(outputs, grads):
    """Check the stacked output gradients of ``is_grads_batched=True``."""
    if any(g is None for g in grads):
        raise RuntimeError("is_grads_batched=True needs grad_outputs for every output, each "
                           "with a leading batch dimension")
    n = grads[0]._data.shape[0] if grads[0]._data.ndim else None
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g._data.shape[1:] != o._data.shape or g._data.shape[0] != n:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {o.shape}. With is_grads_batched=True each grad_output is a "
                f"stack of gradients: shape (batch, *output.shape), the same batch for all.")
    return list(grads), n


# Note [Engine order]
# A node runs once every node that feeds it a gradient has run: dependencies are
# counted from the roots, and ready nodes are taken newest-first (a heap on the
# creation sequence number), as PyTorch's CPU engine does, so gradients reach a
# node only after they are fully summed. Only nodes on a path to what was asked
# are run; each rule is told which of its inputs need a gradient ("needs").
def run_backward(outputs: list | tuple, grad_outputs: list | tuple, retain_graph: bool,
                 create_graph: bool, inputs: list | tuple | None = None,
                 allow_unused: bool = True, accumulate: bool = True,
                 materialize: bool = False, batched: bool = False) -> tuple | None:
    """Run the graph from ``outputs``; accumulate into leaves or return grads of ``inputs``.

    ``accumulate=False`` is ``autograd.grad`` (the gradients of ``inputs`` are returned),
    ``accumulate=True`` is ``backward`` (into ``.grad``, of ``inputs`` only when given).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> run_backward([(x * x).sum()], [None], False, False, inputs=[x], accumulate=False)
        (tensor([2., 4.]),)
    """
    for i, o in enumerate(outputs):
        if not o._rg or (o._base is not None and o._inherits and o.grad_fn is None):  # (sink)
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn. "
                "Nothing on the path to this output requires grad: it was computed under "
                "no_grad(), from a .detach()ed tensor, or from tensors made without "
                "requires_grad=True. Set requires_grad=True on the leaves you want gradients "
                "for (retrograd.explain_grad(t) shows where the path was cut).")
    if batched:
        grad_outputs, nbatch = _batched_grads(outputs, grad_outputs)
    else:
        grad_outputs, nbatch = make_grads(outputs, grad_outputs, create_graph), None
    # (grad_outputs stays referenced until the pass ends: the roots' gradients are never
    # donated, Note [Gradient donation] in ops/buffers.py)
    task = GraphTask(outputs, grad_outputs, inputs, retain_graph, create_graph, accumulate,
                     nbatch)
    _execute(task)
    if inputs is not None and not accumulate:
        return _gathered(task, allow_unused, materialize)
    return None


_NO_RESULTS = ()  # (results and cap_nodes of a backward() of every leaf)


class GraphTask:
    """One call of the engine (PyTorch's GraphTask): what it was asked and what it keeps.

    * what to compute: ``inputs`` (None: every leaf), ``accumulate`` (into ``.grad``, or
      into ``results`` for ``autograd.grad``), ``captures``/``leaf_caps`` (where each
      input's gradient is found), ``needed`` (Note [Nodes that run]);
    * the schedule: ``roots``, ``buffers`` (each waiting node's summed output gradients),
      ``deps`` (Note [Engine order]), ``first`` (Note [Nodes PyTorch runs first]);
    * what hooks share: ``taken`` (Note [Gradient accumulation]);
    * the modes of the pass: ``create_graph``, ``retain_graph``, ``anomaly``, ``nbatch``
      (the batch of ``is_grads_batched``, else None), ``donate`` (Note [Gradient
      donation] in ops/buffers.py).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([3.0], requires_grad=True)
        >>> y = x * x
        >>> task = GraphTask([y], make_grads([y], [None], False), [x], False, False, False, None)
        >>> len(task.deps), task.results
        (2, [None])
    """

    __slots__ = ("retain_graph", "create_graph", "inputs", "accumulate", "nbatch", "roots",
                 "buffers", "deps", "taken", "captures", "leaf_caps", "cap_nodes", "needed",
                 "results", "first", "anomaly", "donate", "donate_min", "__weakref__")

    def __init__(self, outputs, grads, inputs, retain_graph: bool, create_graph: bool,
                 accumulate: bool, nbatch):
        self.retain_graph, self.create_graph = retain_graph, create_graph
        self.inputs, self.accumulate, self.nbatch = inputs, accumulate, nbatch
        self.first = _next_first  # Note [Nodes PyTorch runs first]
        self.anomaly = self.donate = False
        self.donate_min = 0
        self.taken = taken = set()  # Note [Gradient accumulation]
        for g in grads:
            d = g._data
            taken.add(id(d) if d.base is None else memory_id(d.base))
        self.buffers = buffers = {}
        self.roots = roots = []
        for o, g in zip(outputs, grads):
            node = o.grad_fn  # (the property: a view's grad_fn is regenerated if stale)
            if node is None:
                node, nr = o._grad_accumulator(), 0
            else:
                nr = o._out_nr
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node._nout
                roots.append(node)
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        # what to capture (autograd.grad) or where to accumulate (backward(inputs=...))
        self.captures = captures = {}  # (node, out_nr) -> indices in inputs
        self.leaf_caps = leaf_caps = {}  # AccumulateGrad node -> indices in inputs
        self.needed = None  # nodes on a path to an input; None: all
        if inputs is None:  # backward() of every leaf
            self.results = _NO_RESULTS
            self.deps = _collect(roots)
            self.cap_nodes = _NO_RESULTS
            return
        self.results = [None] * len(inputs)
        for k, t in enumerate(inputs):
            if not t._rg:
                raise RuntimeError(
                    f"One of the differentiated Tensors does not require grad (input {k}, shape "
                    f"{tuple(t.shape)}). Set requires_grad=True on it before the forward pass.")
            # lists: the same tensor may be asked for twice (grad(y, [x, x.flatten(0)]))
            if t.grad_fn is None:
                leaf_caps.setdefault(t._grad_accumulator(), []).append(k)
            else:
                captures.setdefault((t.grad_fn, t._out_nr), []).append(k)
        self.deps = _collect(roots)
        self.cap_nodes = {n for (n, _) in captures}
        self.needed = _reaching(self.deps, set(leaf_caps) | self.cap_nodes)

    def show(self, grads) -> None:
        """Gradients a hook sees may be kept by it: no leaf may take them as its .grad."""
        taken = self.taken
        for g in grads:
            if g is not None:
                taken.add(memory_id(g._data))


def _collect(roots: list) -> dict:
    """Dependency count of every node reachable from the roots (iterative)."""
    deps: dict = {r: 0 for r in roots}
    seen = set(roots)
    stack = list(roots)
    pop, push, add, get = stack.pop, stack.append, seen.add, deps.get
    while stack:
        for e in pop()._edges:
            if e is not None:
                child = e[0]
                deps[child] = get(child, 0) + 1
                if child not in seen:
                    add(child)
                    push(child)
    return deps


def _reaching(deps: dict, targets: set) -> set:
    """Nodes from which some target is reachable (reverse propagation, no recursion)."""
    parents: dict = {}
    for node in deps:
        for e in node._edges:
            if e is not None:
                parents.setdefault(e[0], []).append(node)
    out = set()
    stack = [t for t in targets if t in deps]
    while stack:
        n = stack.pop()
        if n in out:
            continue
        out.add(n)
        stack.extend(parents.get(n, ()))
    return out


def _execute(task: GraphTask) -> None:
    """Run the task's graph in the modes of its pass (grad mode = create_graph)."""
    create_graph, nbatch, state = task.create_graph, task.nbatch, STATE
    prev = state.enabled, state.cut_watch, state.batch
    if create_graph:  # nodes recorded by the rules: the user's backward/grad line
        prev_site = SITE_SCOPE.site
        SITE_SCOPE.site = user_site()  # (Note [Site scopes] in node.py)
    state.enabled = create_graph
    if prev[1] is not None:
        state.cut_watch = None  # derivative rules leave no cut markers (_graph/provenance.py)
    state.batch = 0 if nbatch is None else 1
    stack = TASKS.stack
    stack.append(task)  # Note [Graph tasks]
    try:
        heap: list = []
        deps, first = task.deps, task.first
        for n in task.roots:
            if deps.get(n, 0) == 0:
                heap.append((_heap_key(n, first), n))
        heapq.heapify(heap)
        task.anomaly = state.anomaly
        # Note [Gradient donation] (ops/buffers.py): gradients this big may be donated; a
        # pass that starts with no pooled array (small tensors) skips the check per node
        task.donate = donate = not create_graph and nbatch is None and _pool.in_use()
        if donate:
            task.donate_min = _pool.pool_min()
        _schedule(task, heap)
    finally:
        state.enabled, state.cut_watch, state.batch = prev
        if create_graph:
            SITE_SCOPE.site = prev_site
        stack.pop()


# Note [Chain fast path]: when a node made exactly one node ready and no other is
# waiting, that node is next in the heap's order anyway: the loop runs it directly.
# Note [Nodes that run]: with inputs=, a node runs (and frees what it saved) only on a
# path to an input; backward(inputs=) also runs the grad_fn of a non-leaf input,
# autograd.grad only captures there (PyTorch's exec_info).
# What a node saved is freed once it has run (unless retain_graph); a node that saved
# nothing (Note [Nodes that saved nothing] in node.py) may run again, as in PyTorch.
def _schedule(task: GraphTask, heap: list) -> None:
    """Run nodes until none is ready (Note [Engine order]): the per-node hot loop. Each
    node takes its summed output gradients (after its pre hooks), runs its rule for the
    inputs that need a gradient, frees what it saved, and passes the input gradients on
    (``_pass_on``)."""
    buffers, needed = task.buffers, task.needed
    free = not task.retain_graph
    capture = bool(task.captures) and not task.accumulate
    plain = not (task.anomaly or task.donate or task.nbatch is not None)
    pop = heapq.heappop
    node = needs = None
    runs = True
    while True:
        if node is None:  # (else: Note [Chain fast path])
            if not heap:
                return
            node = pop(heap)[1]
        grads = buffers.pop(node, None)
        if grads is not None and (node._hooked or capture):
            grads = _received(task, node, grads, capture)
        if node.__class__ is AccumulateGrad:
            if grads is not None and grads[0] is not None:
                _accumulate(task, node, grads[0])
            node = None
            continue
        if needed is not None:  # Note [Nodes that run]
            needs, runs = _needs_of(task, node)
        if grads is None or (needs is not None and True not in needs) or (
                node._nout > 1 and all(x is None for x in grads)) or (
                node._saved is None and _leads_nowhere(node)):
            in_grads = None
        elif plain:
            if node._saved is None:
                node._unpack()  # raises the "backward a second time" error
            in_grads = node._op.backward(node, grads, needs)
            if node._post_hooks:
                in_grads = _run_post_hooks(task, node, grads, in_grads)
        else:
            in_grads = _run_rule(task, node, grads, needs)
        if free and runs and node._saved and node._saved.__class__ is not Kept:
            node._saved = node._out = None
        node = _pass_on(task, node, in_grads, needs, heap)


def _received(task: GraphTask, node, grads: list, capture: bool) -> list:
    """A node's summed output gradients after its pre hooks; autograd.grad captures a
    non-leaf input's gradient there."""
    if node._hooked:
        grads = _run_pre_hooks(task, node, grads)
    if capture:
        _capture_grads(task, node, grads)
    return grads


def _needs_of(task: GraphTask, node) -> tuple:
    """(which inputs of ``node`` need a gradient, whether it runs): Note [Nodes that run]."""
    needed = task.needed
    needs = [e is not None and e[0] in needed for e in node._edges]
    runs = True in needs or (task.accumulate and node in task.cap_nodes)
    if runs and node._saved is None:
        node._unpack()  # raises the "backward a second time" error
    return needs, runs


_heappush = heapq.heappush


def _pass_on(task: GraphTask, node, in_grads, needs, heap: list):
    """Send ``node``'s input gradients along its edges: each is conformed to its input
    (``_conform``), then accumulated at once into a leaf (Note [Leaves accumulate at
    once]) or added into the child's buffer; children with no dependency left become
    ready. Returns the one child to run next when it alone became ready and nothing
    else waits (Note [Chain fast path]); the others go into the heap in edge order."""
    buffers, deps, nbatch, first = task.buffers, task.deps, task.nbatch, task.first
    push = _heappush
    ready = None
    for i, e in enumerate(node._edges):
        if e is None or (needs is not None and not needs[i]):
            continue
        child, nr, shape, dt = e
        g = None if in_grads is None else in_grads[i]
        if g is not None:
            gd = g._data
            if nbatch is not None or gd.shape != shape or gd.dtype is not dt:
                g = _conform(g, node, i, shape, dt, nbatch)
        d = deps[child] - 1
        deps[child] = d
        if d == 0 and child.__class__ is AccumulateGrad and not child._hooked and (
                not heap or heap[0][0] > _LAST_FIRST) and (not ready or not _is_first(ready)):
            _accumulate_now(task, child, g)  # (Note [Leaves accumulate at once])
            continue
        if g is not None:
            buf = buffers.get(child)
            if buf is None:
                buffers[child] = [g] if child._nout == 1 else _one_slot(child._nout, nr, g)
            else:
                old = buf[nr]
                buf[nr] = g if old is None else old + g
        if d == 0:
            if ready is None:
                ready = child
                continue
            if ready:  # (a node, not False) into the heap in the edges' order
                push(heap, (_heap_key(ready, first), ready))
                ready = False
            push(heap, (_heap_key(child, first), child))
    if ready and heap:  # (nodes define no __bool__ or __len__: a node is true)
        push(heap, (_heap_key(ready, first), ready))
        ready = None
    return ready or None


def _leads_nowhere(node) -> bool:
    """Every edge of ``node`` is invalid (a view that required grad only through its
    base): PyTorch computes none of its input gradients, so it never reads what it saved
    and a second backward through it does not raise (Note [Nodes that saved nothing])."""
    for e in node._edges:
        if e is not None and not (e[0].__class__ is AccumulateGrad and e[0]._var is _nothing):
            return False
    return True


def _accumulate_now(task: GraphTask, leaf, g) -> None:
    """A leaf made ready by the edge that brings ``g``: its buffered gradient (if any)
    and ``g`` accumulate at once, without a buffer for ``g``."""
    buf = task.buffers.pop(leaf, None)
    if buf is not None and buf[0] is not None:
        g = buf[0] if g is None else buf[0] + g
    if g is not None:
        _accumulate(task, leaf, g)


def _one_slot(nout: int, nr: int, g) -> list:
    """The gradient buffer of a node with ``nout`` outputs holding ``g`` at ``nr``."""
    buf = [None] * nout
    buf[nr] = g
    return buf


def _conform(g, node, i: int, shape: tuple, dt, nbatch):
    """Undo broadcasting: the gradient ``g`` of input ``i`` of ``node``, summed back to
    the input's shape (after the batch dim of batched gradients) and cast to its dtype."""
    gd = g._data
    if nbatch is not None:
        if gd.shape != (nbatch,) + shape:
            g = _sum_to(g, shape, node, i, batch=1)
    elif gd.shape != shape:
        g = _sum_to(g, shape, node, i)
    if gd.dtype is not dt and g._data.dtype != dt:
        g = g.to(dt)
    return g


def _run_rule(task: GraphTask, node, grads: list, needs) -> list:
    """Run ``node``'s rule in anomaly mode, on batched gradients or with donation, then
    its post hooks and anomaly mode's NaN check."""
    if task.anomaly:
        in_grads = _apply_traced(task, node, grads, needs)
    else:
        if node._saved is None:
            node._unpack()  # raises the "backward a second time" error
        if task.nbatch is not None and not getattr(node._op, "batch_ok", False):
            in_grads = _per_row(task, node, grads, needs)
        elif task.donate and grads[0] is not None and \
                grads[0]._data.nbytes >= task.donate_min and _donates(node, needs) and \
                _owned(task, grads[0]._data):
            _pool.offer(grads[0]._data)  # Note [Gradient donation] (ops/buffers.py)
            try:
                in_grads = node._op.backward(node, grads, needs)
            finally:
                _pool.withdraw()
        else:
            in_grads = node._op.backward(node, grads, needs)
        if task.donate and getattr(node._op, "runs_user_code", False):
            task.show(in_grads)  # the user's code may keep what it returned
    if node._post_hooks:
        in_grads = _run_post_hooks(task, node, grads, in_grads)
    if task.anomaly and STATE.anomaly_check_nan:
        _check_nan(node, in_grads, grads)
    return in_grads


def _per_row(task: GraphTask, node, grads: list, needs) -> list:
    """Run a rule that is not batch-agnostic once per row and stack the results."""
    STATE.batch = 0
    try:
        rows = []
        for b in range(task.nbatch):
            gb = [None if g is None else g[b] for g in grads]
            rows.append(node._op.backward(node, gb, needs))
    finally:
        STATE.batch = 1
    out = []
    for i in range(len(rows[0])):
        col = [r[i] for r in rows]
        if all(c is None for c in col):
            out.append(None)
            continue
        ref = next(c for c in col if c is not None)
        col = [_zeros(ref.shape, dtype=ref.dtype) if c is None else c for c in col]
        out.append(_stack(col, 0))
    return out


def _capture_grads(task: GraphTask, node, grads: list) -> None:
    """autograd.grad of a non-leaf input: its node's output gradient, after pre hooks."""
    captures, results = task.captures, task.results
    for nr in range(node._nout):
        ks = captures.get((node, nr))
        if ks is not None and grads[nr] is not None:
            task.show((grads[nr],))  # the caller's now (Note [Gradient donation])
            for k in ks:
                results[k] = grads[nr]


# Note [Views of gradients]
# A derivative rule's views (a reshape, a squeeze of a gradient) are not remembered on
# their bases, as views made by user code are (``track_view``: a weak reference each, on
# the hot path of every rule), since nothing can make an engine-made base require grad.
# Nothing but the caller of autograd.grad: it gets the gradients, and may call
# ``requires_grad_()`` on one that is the base of another (the gradient of ``x.unsqueeze``
# and of ``x``: the second is a view of the first). In PyTorch the view then requires
# grad, and ops on it record. So the views among autograd.grad's results are remembered
# there, once, when they are handed out (seed 628505).
def _gathered(task: GraphTask, allow_unused: bool, materialize: bool) -> tuple:
    """autograd.grad's answer: one gradient per input (zeros or an error for unused)."""
    results = task.results
    for k, t in enumerate(task.inputs):
        r = results[k]
        if r is not None and r._base is not None and not r._rg:
            # Note [Views of gradients] (the caller may make the base require grad)
            _track_view(r._base, r)
        if r is None:
            if materialize:
                shape = (() if task.nbatch is None else (task.nbatch,)) + t._data.shape
                z = results[k] = _make(np.zeros(shape, t._data.dtype))
                z._rg = task.create_graph  # zeros_like(input, requires_grad=True) in grad mode
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior "
                    f"(its gradient is then None), or materialize_grads=True for zeros. "
                    f"(input shape {tuple(t.shape)})")
    return tuple(results)


def _run_pre_hooks(task: GraphTask, node, grads: list) -> list:
    """Tensor hooks, then retain_grad, then node pre-hooks (PyTorch's order)."""
    return call_unscoped(_pre_hooks, task, node, grads)


def _pre_hooks(task: GraphTask, node, grads: list) -> list:
    if node._tensor_hooks or node._pre_hooks:
        task.show(grads)  # Note [Gradient accumulation]
    if node._tensor_hooks:
        for out_nr, fn in list(node._tensor_hooks.values()):
            g = grads[out_nr]
            if g is not None:
                r = fn(g)
                if r is not None:
                    grads[out_nr] = r
    if node._retain:
        for out_nr, ref in node._retain.items():
            t = ref()
            g = grads[out_nr]
            if t is not None and g is not None:
                _retain_into(t, g, task.create_graph)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    if node._tensor_hooks or node._pre_hooks:
        task.show(grads)  # what the hooks returned is theirs too
    return grads


def _run_post_hooks(task: GraphTask, node, grads: list, in_grads):
    """Node hooks: each sees (and may replace) the input gradients."""
    return call_unscoped(_post_hooks, task, node, grads, in_grads)


def _post_hooks(task: GraphTask, node, grads: list, in_grads):
    task.show(grads)  # Note [Gradient accumulation]
    for fn in list(node._post_hooks.values()):
        task.show(in_grads)
        # Note [Non-differentiable inputs] (node.py): the hook sees and returns one
        # gradient per differentiable input
        r = fn(tuple(public_slots(node, in_grads)), tuple(grads))
        if r is not None:
            in_grads = internal_slots(node, r)
    task.show(in_grads)
    return in_grads


# Note [Gradient accumulation]
# A leaf's .grad is a buffer that leaf alone owns, as in PyTorch. The first gradient
# is stored without a copy only when nothing else can see its memory. ``taken`` (one
# set per GraphTask) holds the identities of memory others can see (``memory_id``:
# the array or pool block at the bottom of a view chain): what the user passed in
# (gradient=), what a hook was shown or returned, and what a leaf took earlier in this
# pass. One rule may hand the same gradient to two inputs (add), and two leaves would
# then share one buffer, so that an in-place change to one .grad (clip_grad_norm_,
# zero_grad(set_to_none=False) + accumulation, a second backward) would corrupt the
# other; such a gradient is copied instead. Later gradients are added in place (the
# .grad object keeps its identity, as in PyTorch). Under create_graph the first
# gradient is copied with a differentiable copy (PyTorch's CopyBackwards) and later
# ones are summed out of place, so the sum stays differentiable. Without create_graph
# a later gradient is added in place even into a .grad that has a graph (PyTorch's
# ``variable_grad += new_grad`` under no_grad): that .grad keeps its grad_fn and
# takes the new values.
# The first gradient takes the leaf's layout (Note [Gradient layout contract] in
# _core/layouts.py).
def _accumulate(task: GraphTask, node, g) -> None:
    """A leaf's gradient ``g`` (``node`` is its AccumulateGrad): captured for
    autograd.grad, or added into the leaf's ``.grad`` (Note [Gradient accumulation])."""
    if task.inputs is not None:  # (backward() of every leaf skips the lookups)
        ks = task.leaf_caps.get(node)
        if ks is None:
            return
        if not task.accumulate:
            task.show((g,))  # the caller's now (Note [Gradient donation])
            for k in ks:
                task.results[k] = g
            return
    var = node._var()
    if var is not None and var._gfn is not None:
        raise RuntimeError(
            "leaf variable has been moved into the graph interior (an in-place op gave the "
            f"leaf of shape {tuple(var.shape)} a grad_fn after this graph was built, e.g. "
            "requires_grad_(False) then copy_ from a tensor that requires grad). Write into "
            "a clone of the leaf instead.")
    if var is None or not var._rg:  # requires_grad_(False) since: skip
        return
    old = var._grad
    if old is None:
        var._grad = _first_grad(task, var, g)
    elif task.create_graph or not old._data.flags.writeable:
        var._grad = old + g
    else:
        old._data += g._data
        old._vc[0] += 1
    if node._post_acc_hooks:
        for fn in list(node._post_acc_hooks.values()):
            call_unscoped(fn, var)


def _first_grad(task: GraphTask, var, g):
    """The ``.grad`` a leaf takes from its first gradient ``g``: ``g`` itself when no one
    else can see its memory, else a copy in the leaf's layout (Note [Gradient
    accumulation])."""
    if task.create_graph:
        new = _make(grad_array_like(var._data, g._data))
        return new.copy_(g)
    d = g._data
    key = id(d) if d.base is None else memory_id(d.base)
    flags = d.flags
    if g._rg or key in task.taken or not flags.writeable or not (
            (flags.c_contiguous and var._data.flags.c_contiguous)
            or grad_obeys_layout(var._data, d)):
        return _make(grad_array_like(var._data, d))  # (read-only, or another layout)
    task.taken.add(key)
    if g._base is not None or g._vc[0]:  # a fresh tensor object, unshared
        g = _make(d)
    return g


# Note [Nodes PyTorch runs first]
# PyTorch gives two kinds of node the highest sequence number (UINT64_MAX), so that its
# ready queue runs them as soon as they are ready: AccumulateGrad, and NotImplemented,
# the node of an op without a derivative (``x // 2``, ``torch.remainder(2.0, x)``),
# whose backward raises. Among such nodes the queue's heap (std::priority_queue) keeps
# the order they were pushed in, which is the order of the edges of the node that made
# them ready. So in ``(torch.remainder(2.0, x) * w).sum().backward()`` the error comes
# before ``w`` gets its gradient (w.grad stays None), while ``(w * ...)`` accumulates
# into ``w`` first. Here such nodes get heap keys below every other node's, in the order
# they are pushed; a pass pushes its ready nodes in edge order.
_FIRST = -(1 << 63)
_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
#: the names of the nodes that may run first (a set lookup before the exact test)
_FIRST_NAMES = frozenset(("torch::autograd::AccumulateGrad", _NOT_IMPLEMENTED))


_LAST_FIRST = -(1 << 62)  # (above every key of a node that runs first)


# Note [Leaves accumulate at once]
# An AccumulateGrad node that becomes ready would be pushed with a first key and popped
# right after its parent's loop over edges, before every normal node and after the
# nodes that run first pushed before it: when none of those waits in the heap and the
# leaf has no hooks (nothing that could observe the moment), it accumulates at once,
# in edge order, without a trip through the buffers and the heap (~0.5 us per leaf).
# (A node made ready earlier in the loop and held for the chain fast path counts too.)
# Heap keys for the nodes PyTorch runs first, increasing with each call: below every
# other key (-seq) for 2**62 calls; one counter serves every task (a heap needs only
# that its keys are unique and ordered).
_next_first = itertools.count(_FIRST).__next__


def _heap_key(node, first):
    """A ready node's key in the heap: newest first, after the nodes PyTorch runs first
    (their key is ``first()``)."""
    return first() if _is_first(node) else -node._seq  # keys are unique


def _is_first(node) -> bool:
    """Whether PyTorch runs ``node`` as soon as it is ready (the set lookup first)."""
    return node.__class__ is AccumulateGrad or (
        node._op.node_name in _FIRST_NAMES and _runs_first(node))


def _runs_first(node) -> bool:
    """AccumulateGrad, or a node PyTorch records as NotImplemented."""
    if node.__class__ is AccumulateGrad:
        return True
    # (remainder(number, tensor), PyTorch's remainder.Scalar_Tensor, is a NotImplemented
    # node of its own record: Note [Scalar overloads] in ops/records/elementwise.py)
    return node._op.node_name == _NOT_IMPLEMENTED


def _donates(node, needs) -> bool:
    """The rules about to run read the gradient once, and no post hook sees it after."""
    once = getattr(node._op, "grad_once", None)
    return once is not None and node._nout == 1 and not node._post_hooks and once(node, needs)


def _owned(task: GraphTask, arr) -> bool:
    """Whether the engine alone holds ``arr``'s memory (Note [Gradient donation]): a
    gradient a rule made in this pass, writeable, that no one was shown or took (the
    user's ``gradient=``, hooks, custom Functions, a leaf's ``.grad``, autograd.grad's
    answers: ``task.taken``) and that no other node's buffer holds, itself or a view."""
    if not arr.flags.writeable:
        return False
    mid = memory_id(arr)
    if mid in task.taken:
        return False
    for buf in task.buffers.values():
        for g in buf:
            if g is not None and memory_id(g._data) == mid:
                return False
    return True


def _retain_into(t, g, create_graph: bool) -> None:
    if not create_graph:
        g = g.detach()
    if t._grad is None:  # as PyTorch: a contiguous clone (differentiable under create_graph)
        t._grad = g.clone(memory_format=contiguous_format)
    else:
        t._grad = t._grad + g


def memory_id(arr) -> int:
    """Identity of the memory under ``arr``: the object at the bottom of its view chain.

    Example:
        >>> import numpy as np
        >>> a = np.zeros(4)
        >>> memory_id(a[1:].reshape(3, 1)) == id(a)
        True
    """
    while isinstance(arr, np.ndarray) and arr.base is not None:
        arr = arr.base
    return id(arr)


def _apply_traced(task: GraphTask, node, grads, needs):
    """Anomaly mode: run ``node``; if it raises, warn with the forward traceback of the op
    that made it (as PyTorch does) before the error propagates."""
    try:
        if node._saved is None:
            node._unpack()  # raises the "backward a second time" error
        if task.nbatch is not None and not getattr(node._op, "batch_ok", False):
            return _per_row(task, node, grads, needs)
        return node._op.backward(node, grads, needs)
    except Exception:
        warn_forward_trace(node)
        raise


def _has_nan(g) -> bool:
    return g is not None and g.dtype.is_floating_point and bool(np.isnan(g._data).any())


def _check_nan(node, in_grads, grads=()) -> None:
    """Anomaly mode: the first node whose rule returns NaN raises (_graph/anomaly.py)."""
    for i, g in enumerate(public_slots(node, in_grads)):  # Note [Non-differentiable inputs]
        if _has_nan(g):
            warn_forward_trace(node)
            raise nan_error(node, i, any(_has_nan(x) for x in grads))
