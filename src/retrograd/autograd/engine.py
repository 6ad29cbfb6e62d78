"""The backward engine: a small iterative scheduler over the grad_fn graph.

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

from .._grad_mode import STATE
from ..ops import buffers as _buffers
from .node import AccumulateGrad, Kept, internal_slots, public_slots


class _Late:
    """A module bound on first use (it imports this module's package, so it can't be
    imported at the top): ``ops.functions`` and ``_tensor``."""

    def __init__(self, name: str, module: str):
        self._name, self._module = name, module

    def __getattr__(self, attr):
        import importlib

        mod = importlib.import_module(self._module, __package__)
        globals()[self._name] = mod
        return getattr(mod, attr)


_F = _Late("_F", "..ops.functions")
_T = _Late("_T", ".._tensor")
_C = _Late("_C", "..ops.creation")

__all__ = ["run_backward", "make_grads"]


class _GraphTasks(threading.local):
    """Per thread, one entry per running backward: True when it has no ``inputs=``."""

    def __init__(self):
        self.stack = []


# Note [Graph tasks]: reentrant checkpointing reruns a forward and calls backward()
# from inside a backward; PyTorch allows that only when the outer backward computes
# every leaf's gradient (no ``inputs=``, not ``autograd.grad``). TASKS records that for
# each running backward; ``is_checkpoint_valid()`` reads the innermost.
TASKS = _GraphTasks()


def is_checkpoint_valid() -> bool:
    """False while running a backward that was given ``inputs`` (``autograd.grad`` too)."""
    stack = TASKS.stack
    return not stack or stack[-1]


def make_grads(outputs: list, grads: list, create_graph: bool) -> list:
    """Check user-given output gradients; make the implicit ones for 1-element outputs."""
    Tensor = _T.Tensor
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
                g = _T._make(np.ones(o._data.shape, o._data.dtype))
            out.append(g)
            continue
        if not isinstance(g, Tensor):
            g = _C.tensor(g, dtype=o.dtype)
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


def _root_edge(t):
    if t.grad_fn is not None:
        return t.grad_fn, t._out_nr
    return t._grad_accumulator(), 0


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


# Note [Engine order]
# A node runs once every node that feeds it a gradient has run: dependencies are
# counted from the roots, and ready nodes are taken newest-first (a heap on the
# creation sequence number), as PyTorch's CPU engine does, so gradients reach a
# node only after they are fully summed. Only nodes on a path to what was asked
# are run; each rule is told which of its inputs need a gradient ("needs").
def run_backward(outputs, grad_outputs, retain_graph: bool, create_graph: bool,
                 inputs=None, allow_unused: bool = True, accumulate: bool = True,
                 materialize: bool = False, batched: bool = False):
    """Run the graph from ``outputs``; accumulate into leaves or return grads of ``inputs``."""
    sum_to = _F.sum_to
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
        grad_outputs = make_grads(outputs, grad_outputs, create_graph)

    taken = {memory_id(g._data) for g in grad_outputs}  # Note [Gradient accumulation]
    buffers: dict = {}
    roots = []
    for o, g in zip(outputs, grad_outputs):
        node, nr = _root_edge(o)
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._nout
            roots.append(node)
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    # What to capture (autograd.grad) or where to accumulate (backward(inputs=...)).
    captures: dict = {}  # (node, out_nr) -> index in inputs
    leaf_caps: dict = {}  # AccumulateGrad node -> index
    if inputs is not None:
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
    deps = _collect(roots)
    cap_nodes = {n for (n, _) in captures}
    if inputs is not None:
        targets = set(leaf_caps) | cap_nodes
        needed = _reaching(deps, targets)
    else:
        needed = None
    results = [None] * (len(inputs) if inputs is not None else 0)

    prev_mode, prev_batch = STATE.enabled, STATE.batch
    prev_watch = STATE.cut_watch
    STATE.enabled = create_graph
    STATE.cut_watch = None  # derivative rules leave no cut markers (autograd/provenance.py)
    STATE.batch = 1 if batched else 0
    TASKS.stack.append(inputs is None)  # Note [Graph tasks]
    try:
        pop, push = heapq.heappop, heapq.heappush
        heap = []
        first = _first_key()  # Note [Nodes PyTorch runs first]
        for n in roots:
            if deps.get(n, 0) == 0:
                push(heap, (first() if _runs_first(n) else -n._seq, n))  # keys are unique
        anomaly = STATE.anomaly
        # Note [Gradient donation] (ops/buffers.py): gradients this big may be donated; a
        # pass that starts with no pooled array (small tensors) skips the check per node
        donate = not create_graph and not batched and _buffers.in_use()
        donate_min = _buffers.pool_min()
        node = None
        while True:
            # Note [Chain fast path]: when a node made exactly one node ready and no other
            # is waiting, that node is next in the heap's order anyway: run it directly
            if node is None:
                if not heap:
                    break
                node = pop(heap)[1]
            grads = buffers.pop(node, None)
            if grads is not None:
                if node._hooked:
                    grads = _run_pre_hooks(node, grads, create_graph, taken)
                if captures and not accumulate:  # (backward(inputs=): retain_grad's hook)
                    for nr in range(node._nout):
                        ks = captures.get((node, nr))
                        if ks is not None and grads[nr] is not None:
                            for k in ks:
                                results[k] = grads[nr]
            edges = node._edges
            if node.__class__ is AccumulateGrad:
                if grads is not None and grads[0] is not None:
                    ks = leaf_caps.get(node)
                    if ks is not None and not accumulate:
                        for k in ks:
                            results[k] = grads[0]
                    elif inputs is None or ks is not None:
                        var = node._var()
                        if var is not None and var._gfn is not None:
                            raise RuntimeError(
                                "leaf variable has been moved into the graph interior (an "
                                f"in-place op gave the leaf of shape {tuple(var.shape)} a "
                                "grad_fn after this graph was built, e.g. requires_grad_"
                                "(False) then copy_ from a tensor that requires grad). Write "
                                "into a clone of the leaf instead.")
                        if var is not None and var._rg:  # requires_grad_(False) since: skip
                            _accumulate(var, grads[0], create_graph, taken,
                                        leaf_node=node)
                node = None
                continue
            if needed is None:
                needs = None
                runs = True
            else:
                needs = [e is not None and e[0] in needed for e in edges]
                # Note [Nodes that run]: with inputs=, a node runs (and frees what it saved)
                # only on a path to an input; backward(inputs=) also runs the grad_fn of a
                # non-leaf input, autograd.grad only captures there (PyTorch's exec_info)
                runs = True in needs or (accumulate and node in cap_nodes)
                if runs and node._saved is None:
                    node._unpack()  # raises the "backward a second time" error
            if grads is None or (needs is not None and not any(needs)) or (
                    node._nout > 1 and all(g is None for g in grads)):
                in_grads = None
            else:
                if anomaly:
                    in_grads = _apply_traced(node, grads, needs, nbatch if batched else None)
                else:
                    if node._saved is None:
                        node._unpack()  # raises the "backward a second time" error
                    if batched and not getattr(node._op, "batch_ok", False):
                        in_grads = _per_row(node, grads, needs, nbatch)
                    elif donate and grads[0] is not None and \
                            grads[0]._data.nbytes >= donate_min and _donates(node, needs):
                        g = gd = in_grads = None  # Note [Gradient donation] (ops/buffers.py)
                        _buffers.offer(grads)
                        try:
                            in_grads = node._op.backward(node, grads, needs)
                        finally:
                            _buffers.withdraw()
                    else:
                        in_grads = node._op.backward(node, grads, needs)
                if node._post_hooks:
                    _show(grads, taken)  # Note [Gradient accumulation]
                    for fn in list(node._post_hooks.values()):
                        _show(in_grads, taken)
                        # Note [Non-differentiable inputs] (node.py): the hook sees and
                        # returns one gradient per differentiable input
                        r = fn(tuple(public_slots(node, in_grads)), tuple(grads))
                        if r is not None:
                            in_grads = internal_slots(node, r)
                    _show(in_grads, taken)
                if anomaly and STATE.anomaly_check_nan:
                    _check_nan(node, in_grads, grads)
            # free what the node saved; a node that saved nothing may run again (PyTorch)
            if not retain_graph and node._saved and runs and node._saved.__class__ is not Kept:
                node._saved = None
                if node._out is not None:
                    node._out = None
            ready = None
            for i, e in enumerate(edges):
                if e is None or (needs is not None and not needs[i]):
                    continue
                child, nr, shape, dt = e
                g = None if in_grads is None else in_grads[i]
                if g is not None:
                    gd = g._data
                    if batched:
                        if gd.shape != (nbatch,) + shape:
                            g = sum_to(g, shape, node, i, batch=1)
                    elif gd.shape != shape:
                        g = sum_to(g, shape, node, i)
                    if gd.dtype is not dt and g._data.dtype != dt:
                        g = g.to(dt)
                    buf = buffers.get(child)
                    if buf is None:
                        if child._nout == 1:
                            buffers[child] = [g]
                        else:
                            buf = buffers[child] = [None] * child._nout
                            buf[nr] = g
                    else:
                        old = buf[nr]
                        buf[nr] = g if old is None else old + g
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    if ready is None:
                        ready = child
                    else:  # into the heap in the edges' order (Note [Nodes PyTorch runs first])
                        if ready is not False:
                            push(heap, (first() if ready._op.node_name in _FIRST_NAMES and
                                        _runs_first(ready) else -ready._seq, ready))
                            ready = False
                        push(heap, (first() if child._op.node_name in _FIRST_NAMES and
                                        _runs_first(child) else -child._seq, child))
            if ready is False:
                ready = None
            elif ready is not None and heap:
                push(heap, (first() if ready._op.node_name in _FIRST_NAMES and
                                        _runs_first(ready) else -ready._seq, ready))
                ready = None
            node = ready
    finally:
        STATE.enabled = prev_mode
        STATE.cut_watch = prev_watch
        STATE.batch = prev_batch
        TASKS.stack.pop()

    if inputs is not None and not accumulate:
        for k, t in enumerate(inputs):
            if results[k] is None:
                if materialize:
                    shape = ((nbatch,) if batched else ()) + t._data.shape
                    z = results[k] = _T._make(np.zeros(shape, t._data.dtype))
                    z._rg = create_graph  # torch.zeros_like(input, requires_grad=True) in grad mode
                elif not allow_unused:
                    raise RuntimeError(
                        f"The differentiated Tensor at index {k} appears to not have been used "
                        "in the graph. Set allow_unused=True if this is the desired behavior "
                        f"(its gradient is then None), or materialize_grads=True for zeros. "
                        f"(input shape {tuple(t.shape)})")
        return tuple(results)
    return None


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
_FIRST_NAMES = frozenset(("torch::autograd::AccumulateGrad", _NOT_IMPLEMENTED,
                          "RemainderBackward0"))


def _first_key():
    """Heap keys for the nodes PyTorch runs first, increasing with each call."""
    return itertools.count(_FIRST).__next__


def _runs_first(node) -> bool:
    """AccumulateGrad, or a node PyTorch records as NotImplemented."""
    if node.__class__ is AccumulateGrad:
        return True
    op = node._op
    if op.node_name == _NOT_IMPLEMENTED:
        return True
    # remainder(number, tensor): PyTorch's remainder.Scalar_Tensor has no derivative
    saved = node._saved
    return getattr(op, "name", None) == "remainder" and saved.__class__ is list and \
        not isinstance(saved[0], _T.Tensor)


def _donates(node, needs) -> bool:
    """The rules about to run read the gradient once, and no post hook sees it after."""
    once = getattr(node._op, "grad_once", None)
    return once is not None and node._nout == 1 and not node._post_hooks and once(node, needs)


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


def _per_row(node, grads, needs, nbatch):
    """Run a rule that is not batch-agnostic once per row and stack the results."""
    from ..ops.functions import stack, zeros

    STATE.batch = 0
    try:
        rows = []
        for b in range(nbatch):
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
        col = [zeros(ref.shape, dtype=ref.dtype) if c is None else c for c in col]
        out.append(stack(col, 0))
    return out


def _run_pre_hooks(node, grads: list, create_graph: bool, taken: set) -> list:
    """Tensor hooks, then retain_grad, then node pre-hooks (PyTorch's order)."""
    if node._tensor_hooks or node._pre_hooks:
        _show(grads, taken)  # Note [Gradient accumulation]
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
                _retain_into(t, g, create_graph)
    if node._pre_hooks:
        for fn in list(node._pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    if node._tensor_hooks or node._pre_hooks:
        _show(grads, taken)  # what the hooks returned is theirs too
    return grads


def _retain_into(t, g, create_graph: bool) -> None:
    if not create_graph:
        g = g.detach()
    if t._grad is None:  # as PyTorch: a contiguous clone (differentiable under create_graph)
        t._grad = g.clone()
    else:
        t._grad = t._grad + g


def memory_id(arr) -> int:
    """Identity of the memory under ``arr``: the object at the bottom of its view chain."""
    while isinstance(arr, np.ndarray) and arr.base is not None:
        arr = arr.base
    return id(arr)


def _show(grads, taken: set) -> None:
    """Gradients a hook sees may be kept by it: no leaf may take them as its .grad."""
    for g in grads:
        if g is not None:
            taken.add(memory_id(g._data))


def _accumulate(var, g, create_graph: bool, taken: set, leaf_node=None) -> None:
    """Add ``g`` into ``var.grad`` (Note [Gradient accumulation])."""
    # Note [Gradient accumulation]
    # A leaf's .grad is a buffer that leaf alone owns, as in PyTorch. The first gradient
    # is stored without a copy only when nothing else can see its memory. ``taken`` holds
    # the identities of memory others can see (``memory_id``: the array or pool block at
    # the bottom of a view chain): what the user passed in (gradient=), what a hook was
    # shown or returned, and what a leaf took earlier in this pass. One rule may hand the
    # same gradient to two inputs (add), and two leaves would then share one buffer, so
    # that an in-place change to one .grad (clip_grad_norm_, zero_grad(set_to_none=False)
    # + accumulation, a second backward) would corrupt the other; such a gradient is
    # copied instead. Later gradients are added in place (the .grad object keeps its
    # identity, as in PyTorch). Under create_graph the first gradient is copied with a
    # differentiable copy (PyTorch's CopyBackwards) and later ones are summed out of
    # place, so the sum stays differentiable. Without create_graph a later gradient is
    # added in place even into a .grad that has a graph (PyTorch's ``variable_grad +=
    # new_grad`` under no_grad): that .grad keeps its grad_fn and takes the new values.
    old = var._grad
    if old is None:
        if create_graph:
            new = _T._make(np.empty_like(g._data))
            var._grad = new.copy_(g)
        else:
            d = g._data
            key = id(d) if d.base is None else memory_id(d.base)
            flags = d.flags
            if g._rg or key in taken or not (flags.writeable and flags.c_contiguous):
                g = _T._make(d.copy())  # (a read-only broadcast, or a transposed layout)
            else:
                taken.add(key)
                if g._base is not None or g._vc[0]:  # a fresh tensor object, unshared
                    g = _T._make(d)
            var._grad = g
    elif create_graph or not old._data.flags.writeable:
        var._grad = old + g
    else:
        old._data += g._data
        old._vc[0] += 1
    if leaf_node is not None and leaf_node._post_acc_hooks:
        for fn in list(leaf_node._post_acc_hooks.values()):
            fn(var)


def _apply_traced(node, grads, needs, nbatch):
    """Anomaly mode: run ``node``; if it raises, warn with the forward traceback of the op
    that made it (as PyTorch does) before the error propagates."""
    from .anomaly_mode import warn_forward_trace

    try:
        if node._saved is None:
            node._unpack()  # raises the "backward a second time" error
        if nbatch is not None and not getattr(node._op, "batch_ok", False):
            return _per_row(node, grads, needs, nbatch)
        return node._op.backward(node, grads, needs)
    except Exception:
        warn_forward_trace(node)
        raise


def _check_nan(node, in_grads, grads=()) -> None:
    """Anomaly mode: the first node whose rule returns NaN raises (autograd/anomaly_mode.py)."""
    import numpy as np

    from .anomaly_mode import nan_error, warn_forward_trace

    def has_nan(g):
        return g is not None and g.dtype.is_floating_point and bool(np.isnan(g._data).any())

    for i, g in enumerate(public_slots(node, in_grads)):  # Note [Non-differentiable inputs]
        if has_nan(g):
            warn_forward_trace(node)
            raise nan_error(node, i, any(has_nan(x) for x in grads))
