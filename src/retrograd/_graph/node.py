"""Backward-graph nodes: one class for built-in ops and custom Functions.

A node is what ``tensor.grad_fn`` returns. It knows its op (which names it and
holds its derivative rules), the edges to the nodes of its inputs, the tensors its
rules need (saved, version-checked), and its hooks.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([2.0], requires_grad=True)
    >>> y = x * 3
    >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
    ('MulBackward0', 'torch::autograd::AccumulateGrad')
"""

from __future__ import annotations

import itertools
import os
import re
import sys
import threading
import weakref

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "user_site", "site_line", "format_site",
           "SITE_SCOPE", "call_unscoped", "is_library_file", "node_class", "named"]

_SEQ = itertools.count()
_ACC_SEQ = itertools.count()
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_IS_OURS: dict = {}  # filename -> is_library_file(filename), filled on first sight


# Note [User sites]
# Errors and the graph tools name the line of *user* code that created a node. At
# record time we walk up from the op to the first frame outside the retrograd
# package, frame by frame, by module: whatever path led to the op (a Tensor method, a
# public function, an nn layer, a helper calling a helper), the walk stops at the
# first frame whose file is not retrograd's own, so no caller counts its frames. It
# starts at the caller of the function that asks (``record``, an op's dispatch, a
# module's __call__: retrograd's own code by definition), and each frame it visits
# costs a frame object, so the ops ask from as close to the user as they can (Note
# [Optional modes at dispatch] in ops/dispatch.py: the plain paths ask themselves). We
# keep only (code object, instruction offset, _RAW): code objects hold no locals, so
# nothing the user made is kept alive. The line number is worked out from the offset
# only when a site is shown (``site_line``): reading ``f_lineno`` decodes the code's
# line table, which costs more than the rest of the walk. A per-filename dict makes each
# frame's check one lookup.
_RAW = object()


# Note [Site scopes]
# Most ops that record nodes in a training step run inside retrograd's own code: an
# nn layer's forward (Sequential -> Linear -> F.linear -> addmm), or a derivative rule
# under create_graph=True. From there the walk of Note [User sites] climbs every library
# frame to reach the same user line each time (W3: 10 walks of 4-5 frames a step; W5's
# Hessian: walks of up to 17 frames). A *site scope* computes that line once: a library
# nn.Module's __call__ (one whose forward is ours) and a create_graph pass of the engine
# set SITE_SCOPE.site to the user's line for their duration, and user_site returns it
# without walking. Code that calls back into the user's code from inside a scope (a
# Module whose forward is the user's, module and tensor hooks, a custom Function's
# backward) clears the scope around that call (call_unscoped), so its ops walk to their
# own line as before. The scope is per thread, like grad mode.
class _SiteScope(threading.local):
    site = None


SITE_SCOPE = _SiteScope()


def call_unscoped(fn, *args):
    """``fn(*args)`` with no site scope open: user code called from inside one."""
    scope = SITE_SCOPE
    prev = scope.site
    if prev is None:
        return fn(*args)
    scope.site = None
    try:
        return fn(*args)
    finally:
        scope.site = prev


def user_site():
    """(code, offset, _RAW) of the first frame outside retrograd above the function that
    asks (retrograd's own code: Note [User sites]); None when there is none. Inside a
    site scope (Note [Site scopes]), the scope's site.

    Example:
        >>> import retrograd as torch
        >>> def op():  # (standing for an op of retrograd's that asks for its caller's line)
        ...     return user_site()
        >>> op()[0].co_name  # this doctest's own frame is outside retrograd
        '<module>'
    """
    s = SITE_SCOPE.site
    if s is not None:
        return s
    try:
        f = sys._getframe(2)  # the caller of the function that asks
    except ValueError:
        return None
    ours = _IS_OURS
    code = f.f_code
    try:
        while ours[code.co_filename]:
            f = f.f_back
            if f is None:
                return None
            code = f.f_code
    except KeyError:  # a file met for the first time
        return _first_outside(f)
    return (code, f.f_lasti, _RAW)


def _first_outside(f):
    """``user_site``'s walk from frame ``f``, classifying the files it meets."""
    while f is not None:
        if not is_library_file(f.f_code.co_filename):
            return (f.f_code, f.f_lasti, _RAW)
        f = f.f_back
    return None


def is_library_file(filename: str) -> bool:
    """Whether code in ``filename`` is retrograd's own (a user site is never there).

    Example:
        >>> import retrograd as torch
        >>> is_library_file(torch.nn.Linear.forward.__code__.co_filename)
        True
    """
    r = _IS_OURS.get(filename)
    if r is None:
        r = _IS_OURS[filename] = filename.startswith(_PKG_DIR + os.sep)
    return r


def site_line(site):
    """A site as (code, line number); None stays None.

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(1, requires_grad=True) * 2
        >>> code, line = site_line(y.grad_fn._site)
        >>> line > 0
        True
    """
    if site is None or len(site) == 2:
        return site
    code, lasti, _ = site
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return (code, line if line is not None else code.co_firstlineno)
    return (code, code.co_firstlineno)


def format_site(site) -> str:
    if site is None:
        return "an unknown location"
    code, line = site_line(site)
    return f'File "{code.co_filename}", line {line}, in {code.co_name}'


# Note [Node classes]
# As in PyTorch, each kind of node is a class of its own, named after the node:
# ``type(t.grad_fn).__name__`` is 'MulBackward0', the repr is ``<MulBackward0 object at
# 0x...>``, and ``isinstance(n, torch.autograd.graph.Node)`` holds. A class is made once
# per node name (``node_class``) when the first op record with that name is constructed,
# and the record holds it (``Op.node_cls``). The classes add no slots, only the properties
# that read what the node saved under PyTorch's names (``_saved_self``...: Note [Saved
# attributes] in ops/saved_attributes.py). Their module is 'builtins' and their qualified
# name the node's name, as PyTorch's generated classes have.
# A node is *made* as a plain ``Node`` and takes its own class (``named``: an assignment to
# ``__class__``, the layouts being the same) when code outside the engine first reaches it:
# ``Tensor.grad_fn`` and ``next_functions``. CPython specializes an attribute read for one
# class at each place in the code, so the engine's and the records' reads of nodes of five
# classes in one step kept missing: made with their classes, W1's step took 9% longer
# (1,162 -> 1,272 us, timeit on the process-time clock, best of 9).
_NODE_CLASSES: dict = {}


def node_class(name: str, namespace: dict | None = None) -> type:
    """The class of the nodes named ``name`` (a subclass of ``Node``, made once: Note [Node
    classes]); ``namespace`` gives the attributes of a class made by this call.

    Example:
        >>> import retrograd as torch
        >>> cls = node_class("MulBackward0")
        >>> cls.__name__, cls.__module__, issubclass(cls, Node)
        ('MulBackward0', 'builtins', True)
        >>> type(torch.ones(1, requires_grad=True).mul(2).grad_fn) is cls
        True
    """
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        short = name.rpartition("::")[2]
        body = {"__slots__": (), "__module__": "builtins", "__qualname__": short,
                "__doc__": f"The node PyTorch names {short} (Note [Node classes])."}
        body.update(namespace or {})
        cls = _NODE_CLASSES[name] = type(short, (Node,), body)
    return cls


def named(node):
    """``node`` as an object of its own class, the one named after it (Note [Node
    classes]); the engine makes nodes as plain ``Node``.

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(1, requires_grad=True) * 2
        >>> type(named(y._gfn)).__name__
        'MulBackward0'
    """
    if node.__class__ is Node:
        cls = getattr(node._op, "node_cls", None)
        if cls is not None:
            node.__class__ = cls
    return node


class HookDict(dict):
    """A dict of hooks by handle id (a dict subclass, so handles can hold a weakref)."""

    __slots__ = ("__weakref__",)


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> h.remove()
    """

    _ids = itertools.count()

    def __init__(self, store: dict):
        self.id = next(RemovableHandle._ids)
        self._store = weakref.ref(store)

    def remove(self) -> None:
        store = self._store()
        if store is not None:
            store.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Packed:
    """A saved value that went through a pack hook; ``unpack`` runs the paired hook."""

    __slots__ = ("packed", "unpack_fn", "is_output", "k", "src")

    def __init__(self, packed, unpack_fn, is_output: bool, k: int, src=None):
        self.packed = packed
        self.unpack_fn = unpack_fn
        self.is_output = is_output
        self.k = k
        self.src = src  # (grad_fn, output_nr, accumulator) of a saved input that requires grad

    def unpack(self, node):
        t = self.unpack_fn(self.packed)
        if not isinstance(t, _Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if self.is_output and t.grad_fn is None and node is not None:
            # Note [Saved outputs]: an output is saved without its grad_fn (no cycle);
            # on unpack it is re-attached to the node that made it.
            r = _make(t._data)
            r._vc = t._vc
            r._rg = True
            r.grad_fn = node
            r._out_nr = self.k
            return r
        src = self.src
        if src is not None and (t.grad_fn is not src[0] or not t._rg):
            # Note [Saved inputs through hooks]: as PyTorch's SavedVariable does, the
            # unpacked data gets the saved input's place in the graph back (its grad_fn,
            # or the leaf's accumulator), so create_graph through the rule still reaches
            # the original graph (non-reentrant checkpoint hands back recomputed data).
            r = _make(t._data)
            r._vc = t._vc
            r._rg = True
            r.grad_fn = src[0]
            r._out_nr = src[1]
            if src[0] is None:
                r._acc = src[2]
            return r
        return t


class _OutputSlot:
    """Marker inside ``Node._saved`` for "this node's own output number k"."""

    __slots__ = ("k",)

    def __init__(self, k: int):
        self.k = k


OUT0 = _OutputSlot(0)
# Note [Nodes that saved nothing]
# An op whose entries to save were all skipped (``save_if``: remainder(x, y) saves its
# operands only for the divisor's gradient) holds a list of Nones: PyTorch's node saved
# nothing, so backward may run through it again without retain_graph. ``Kept`` marks
# such a list; the engine frees only the others. A saved Python number is freed like a
# tensor: PyTorch saves ``x / 3``'s 3 as a wrapped-number tensor (DivBackward0), and
# the ops that keep a number as a plain attribute (lerp's weight, add's alpha) take it
# as a parameter (``node._p``), not as a saved value.
class Kept(list):
    """A saved list that holds nothing: never freed (Note [Nodes that saved nothing])."""

    __slots__ = ()


# The reverse case: nodes that save no tensor of ours yet hold what PyTorch frees after
# a backward without retain_graph (CopySlices drops the node of the in-place op it
# wraps, IndexPutBackward0 its index tensors), so running them twice raises there too.
RELEASED = (None,)


_OUT_ONLY = (OUT0,)  # the saved list of ops that save only their output (never mutated)
_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class RuleInputs:
    """What a derivative rule reads of its node's inputs (Note [Rule accessors]); a node
    and forward AD's stand-in for one (ops/jvp_rules.py) both have it.

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(2, 3, requires_grad=True).sum()
        >>> y.grad_fn.input_shape(0), y.grad_fn.input_dtype(0)
        ((2, 3), dtype('float32'))
    """

    __slots__ = ()

    # Note [Rule accessors]
    # A rule sees an input only through what its node recorded of it when the op ran:
    # its shape (a gradient is summed or reshaped back to it) and its NumPy dtype. The
    # rules ask these two methods rather than unpacking the engine's edge tuples, whose
    # layout (node, input_nr, shape, dtype) is the engine's business.
    def input_shape(self, i: int = 0) -> tuple:
        """The shape input ``i`` had when the op ran."""
        return self._edges[i][2]

    def input_dtype(self, i: int = 0):
        """The NumPy dtype input ``i`` had when the op ran."""
        return self._edges[i][3]


class Node(RuleInputs):
    """A node of the backward graph (PyTorch's ``torch.autograd.graph.Node``).

    Example:
        >>> import retrograd as torch
        >>> y = torch.ones(2, requires_grad=True).exp()
        >>> y.grad_fn  # doctest: +ELLIPSIS
        <ExpBackward0 object at 0x...>
        >>> type(y.grad_fn).__name__, isinstance(y.grad_fn, torch.autograd.graph.Node)
        ('ExpBackward0', True)
    """

    # Every node sets all the slots when it is made (ops/op.py ``record``): params,
    # saved versions and saved outputs (None when absent), the number of outputs.
    __slots__ = ("_op", "_edges", "_saved", "_seq", "_site", "_p", "_ver", "_out", "_nout",
                 "__weakref__", "__dict__")
    # Rare fields default at class level (Note [Tensor fields] in _tensor/tensor.py explains why):
    # ``_hooked`` is True once any hook or retain_grad is attached, so the engine checks
    # one flag per node.
    _pre_hooks = _post_hooks = _tensor_hooks = _retain = _trace = metadata_ = None
    _hooked = False
    _fw_out = None  # tangents of saved outputs (Note [Forward grads of saved outputs])
    _out_fn = None  # Note [Saved outputs of in-place ops on views]

    def name(self) -> str:
        """The class-like name PyTorch uses, e.g. ``'MulBackward0'``."""
        return self._op.node_name

    def __repr__(self) -> str:
        return f"<{self.name().rpartition('::')[2]} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        """((node, input_nr), ...) for each differentiable input; (None, 0) where no
        gradient flows (Note [Non-differentiable inputs]: an index has no slot at all)."""
        return tuple((None, 0) if e is None or getattr(e[0], "_var", None) is _nothing
                     else (named(e[0]), e[1]) for e in public_slots(self, self._edges))

    @property
    def metadata(self) -> dict:
        if self.metadata_ is None:
            self.metadata_ = {}
        return self.metadata_

    @property
    def site(self):
        """(code, line) of the user code that created this node, or None."""
        return site_line(self._site)

    # Note [Saved tensor versions]
    # Recording keeps, next to each saved tensor, the value of its version counter then
    # (``_ver``; outputs in ``_out`` with their counter). Every in-place write bumps the
    # counter that a tensor shares with its views, so when the rule asks for its saved
    # values a changed count means the value the rule needs was overwritten: PyTorch's
    # "modified by an inplace operation" error, raised here with the node, the tensor's
    # shape, both versions and the line that made the node.
    def _unpack(self) -> tuple:
        """Saved values for the rules, each tensor checked against its saved version."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(f"{_FREED}\n  node: {self.name()}, created at "
                               f"{format_site(self._site)}")
        vers = self._ver
        if vers is None:
            return saved
        if saved is _OUT_ONLY:  # the output alone (Note [Recording] in ops/op.py)
            return [self._out_tensor(0)]
        out = list(saved)
        for i, v in enumerate(vers):
            if v is None:
                continue
            t = saved[i]
            cls = t.__class__
            if cls is _OutputSlot:
                out[i] = self._out_tensor(t.k)
            elif cls is _Packed:
                out[i] = t.unpack(self)
            elif t._vc[0] != v:
                raise _version_error(self, t, i, t._vc[0], v)
        return out

    def _read_saved(self, j: int):
        """Saved value ``j`` alone, checked and unpacked as ``_unpack`` does for all of them
        (what ``grad_fn._saved_<name>`` reads: Note [Saved attributes] in
        ops/saved_attributes.py)."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        t = saved[j]
        vers = self._ver
        if vers is None or vers[j] is None:
            return t
        cls = t.__class__
        if cls is _OutputSlot:
            return self._out_tensor(t.k)
        if cls is _Packed:
            return t.unpack(self)
        if t._vc[0] != vers[j]:
            raise _version_error(self, t, j, t._vc[0], vers[j])
        return t

    def _out_tensor(self, k: int):
        data, vc, ver = self._out[k]
        if vc[0] != ver:
            t = _make(data)
            t.grad_fn = self
            t._out_nr = k
            raise _version_error(self, t, "output", vc[0], ver)
        t = _make(data)
        t._vc = vc
        t._rg = True
        t._gfn = self  # a fresh tensor, not a view: the grad_fn setter's check is moot
        if k:  # 0 is the class default: no instance dict for the common case
            t._out_nr = k
        if self._fw_out is not None:  # Note [Forward grads of saved outputs] (ops/jvp_rules.py)
            t._fw_grad = self._fw_out.get(k)
        if self._out_fn is not None:
            # Note [Saved outputs of in-place ops on views]
            # An op applied in place to a view saved its output, which is the view: like
            # PyTorch's SavedVariable (is_inplace_on_view), unpacking gives it the grad_fn
            # the view had after the write (its view node over the base's CopySlices), so
            # a double backward through the saved value reaches the base's history and
            # its hooks (a retained grad of the base fills there, as in PyTorch). The
            # reference is weak, as PyTorch's: that grad_fn reaches this node through
            # CopySlices; once it is gone (the view died), the node itself stands in.
            ref = self._out_fn.get(k)
            gfn = ref[0]() if ref is not None else None
            if gfn is not None:
                t._gfn = gfn
                t._out_nr = ref[1]
        return t

    # hooks --------------------------------------------------------------------
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs.

        Example:
            >>> import retrograd as torch
            >>> y = torch.ones(2, requires_grad=True) * 2
            >>> h = y.grad_fn.register_hook(lambda gi, go: None)
        """
        self._hooked = True
        if self._post_hooks is None:
            self._post_hooks = HookDict()
        h = RemovableHandle(self._post_hooks)
        self._post_hooks[h.id] = fn
        return h

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs.

        Example:
            >>> import retrograd as torch
            >>> y = torch.ones(2, requires_grad=True) * 2
            >>> h = y.grad_fn.register_prehook(lambda go: None)
        """
        self._hooked = True
        if self._pre_hooks is None:
            self._pre_hooks = HookDict()
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def _add_tensor_hook(self, out_nr: int, fn):
        self._hooked = True
        if self._tensor_hooks is None:
            self._tensor_hooks = HookDict()
        h = RemovableHandle(self._tensor_hooks)
        self._tensor_hooks[h.id] = (out_nr, fn)
        return h

    # the rule -----------------------------------------------------------------
    def apply(self, grads: list, needs: tuple) -> list:
        """Input gradients for output gradients ``grads``; only where ``needs[i]``."""
        return self._op.backward(self, grads, needs)

    def __call__(self, *grads):
        r = public_slots(self, self.apply(list(grads), None))
        return r[0] if len(r) == 1 else tuple(r)


# Note [Non-differentiable inputs]
# A PyTorch node has edges for its differentiable inputs only: gather's index, where's
# condition, sort's and max(dim)'s indices, the number of ``x ** 2`` (pow.Tensor_Scalar)
# have no slot in next_functions, while the wrapped number of ``2 * x`` (mul.Tensor)
# keeps its (None, 0) slot. Our derivative rules index a node's inputs by position
# (``node._edges[i]``, ``needs[i]``, the saved values), so the engine keeps one internal
# edge per input; an op declares instead which positions are never differentiable
# (``Op.nondiff``: the None rules of a per-input vjp, or given by hand), and every public
# view of the per-input slots drops them: ``next_functions``, the ``grad_inputs`` a
# node's post hook sees (and gives back), calling a node, anomaly mode's "its Nth output".
# Recording pays nothing: the positions are read from the op when the slots are shown.
def public_slots(node, seq):
    """``seq`` (one item per input of ``node``) without the non-differentiable positions.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, 3, requires_grad=True)
        >>> node = x.gather(1, torch.tensor([[0], [2]])).grad_fn
        >>> len(node._edges), len(public_slots(node, node._edges))
        (2, 1)
    """
    nd = getattr(node._op, "nondiff", None)
    if not nd:
        return seq
    return tuple(x for i, x in enumerate(seq) if i not in nd)


def internal_slots(node, seq) -> list:
    """The inverse of ``public_slots``: None put back at the non-differentiable positions.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> internal_slots((2 ** x).grad_fn, ["g"])
        [None, 'g']
    """
    nd = getattr(node._op, "nondiff", None)
    if not nd:
        return list(seq)
    it = iter(seq)
    return [None if i in nd else next(it, None) for i in range(len(node._edges))]


_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
           "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
           "bool": "Bool"}


# Note [Graph services]
# The graph layer sits below the Tensor class (``_tensor/tensor.py`` imports it: a tensor holds
# its grad_fn, hooks and accumulator), yet a node makes tensors of its own: a saved
# output handed back to a rule, a saved tensor unpacked through saved-tensor hooks. As
# the op layer hands the engine its services (Note [Engine services] in engine.py),
# ``_tensor/tensor.py`` registers the Tensor class and its ``_make`` here once it is defined,
# before any op can run; imports point down only.
class _Unregistered:
    """Stands for the Tensor class until ``_tensor/tensor.py`` registers it."""


_Tensor = _Unregistered


def _make(data):
    raise RuntimeError("the Tensor class has not been registered with the graph layer "
                       "(Note [Graph services])")


def register_tensor_type(tensor_type, make) -> None:
    """Give the graph layer the Tensor class and its constructor from an ndarray (Note
    [Graph services]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._graph import node
        >>> node._Tensor is torch.Tensor
        True
    """
    global _Tensor, _make
    _Tensor, _make = tensor_type, make


def legacy_type_name(t) -> str:
    """'torch.FloatTensor' and friends, as PyTorch names tensors in messages."""
    return f"torch.{_LEGACY[t.dtype.name]}Tensor"


def _version_error(node, t, idx, cur, expected) -> RuntimeError:
    shape = ", ".join(str(s) for s in t._data.shape)
    made_by = ""
    if t.grad_fn is not None:  # PyTorch names the forward op: "output 0 of Exp"
        fwd_name = re.sub(r"Backward\d*$", "", t.grad_fn.name())
        made_by = f", which is output {t._out_nr} of {fwd_name}"
    which = "its output" if idx == "output" else f"its input {idx}"
    # a saved bool tensor (a mask) has no legacy type name there: PyTorch prints CPUBoolType
    kind = "CPUBoolType" if t._data.dtype == bool else legacy_type_name(t)
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{kind} [{shape}]]{made_by}, is at version {cur}; expected "
        f"version {expected} instead. Hint: {node.name()} (created at {format_site(node._site)}) "
        f"saved {which} for backward, and an in-place op changed it afterwards. Use the "
        "out-of-place form (x = x.mul(2) instead of x.mul_(2)) or .clone() the tensor before "
        "modifying it.")


class _AccumulateOp:
    node_name = "torch::autograd::AccumulateGrad"  # PyTorch's name(); repr drops the prefix


class AccumulateGrad(Node):
    """The node that adds an incoming gradient into a leaf's ``.grad``.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(1, requires_grad=True)
        >>> (x * 2).grad_fn.next_functions[0][0].variable is x
        True
    """

    __slots__ = ("_var", "_post_acc_hooks")

    def __init__(self, var):
        self._op = _AccumulateOp
        self._edges = ()
        self._saved = ()
        self._ver = None
        self._out = None
        self._p = None
        self._nout = 1
        # runs as soon as it is ready, as in PyTorch; unique, so heap entries never tie
        self._seq = sys.maxsize - next(_ACC_SEQ)
        self._site = None
        self._var = weakref.ref(var)
        self._post_acc_hooks = None

    @property
    def variable(self):
        return self._var()


def _nothing():
    return None


def sink() -> AccumulateGrad:
    """Where the gradient of a view that requires grad only through its base goes:
    nowhere (PyTorch's invalid edge; shown as None in next_functions). A node of its own
    keeps the edge's shape for the rules of the op that read it."""
    node = AccumulateGrad(sink)  # (any weak-referenceable object; replaced just below)
    node._var = _nothing
    return node
