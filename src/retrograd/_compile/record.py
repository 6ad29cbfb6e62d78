"""Recording a call at the level of NumPy calls: the traced array and the recorder.

Note [Tracing]
retrograd.compile runs the function once, eagerly, while a ``Recorder`` writes down
every NumPy call that touches the arrays of tensors: the forward ops, the derivative
rules the engine runs for ``backward()``, the engine's own accumulation, optimizer
updates. The log is a flat list of events over *slots* (one per array); a replay runs
the same calls on the current arrays with no Tensor, dispatch or node in between.
Three things make the log complete:

1. Every op record's kernel (``Op.fwd``) is wrapped while the trace runs: the wrapper
   logs one event per kernel call, with the kernel as an opaque function (what it does
   inside, SciPy included, is replayed by calling it again).
2. Every array the trace follows is a ``TracedArray``, an ndarray subclass that logs
   the NumPy calls made on it outside kernels (the engine's ``+=``, the optimizers'
   ``np.add(..., out=)``, dispatch's casts): ufuncs and NumPy functions through NumPy's
   ``__array_ufunc__``/``__array_function__`` protocols, ndarray methods (``astype``,
   ``reshape``, indexing and writes) through overrides. The tensors the function
   reaches (arguments, closure, the globals it names, modules, optimizers) get traced
   arrays when the trace starts, and ``_make`` adopts every array a new tensor takes
   (Note [Tracing hook] in _tensor/tensor.py).
3. Random draws are events too (the generators' ``bits`` are wrapped), so a replay
   draws from the live generator as eager code would: dropout masks differ per call.

Note [Value reads]
User code that reads a traced value in Python (``.item()``, ``bool(t)``, ``.tolist()``,
printing, ``.numpy()``) is a graph break: the trace stops there, the call goes on
eagerly, and the function runs eagerly for those guards (Note [Graph breaks] in
trace.py). retrograd's own code reads values to check arguments (an index in range, a
target class valid): such a read is a *check event*, which a replay evaluates again and
compares with the traced value; if it differs, the replay stops and the call runs
eagerly (where the check raises its error, or the code takes its other branch). A
replay that stops first takes back what it changed: random draws and writes into
input arrays before the check (Note [Rewinding draws] in plan.py). Arrays
the trace cannot follow are constants, taken by reference (as jax.jit takes closed-over
arrays); a second trace checks that none of them changed between two calls (Note
[Second trace] in api.py).

Example:
    >>> import numpy as np
    >>> from retrograd._compile.record import Recorder
    >>> rec = Recorder()
    >>> with rec:
    ...     x = rec.external(np.arange(3.0), "x")
    ...     y = np.sin(x) + 1
    >>> [e.name for e in rec.events]
    ['sin', 'add']
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.array_utils import byte_bounds as _byte_bounds

from .._graph.modes import TRACING

_ndarray = np.ndarray
_generic = np.generic

_LIB = "/retrograd/"


class Slot:
    """A reference to slot ``n`` inside an event's arguments."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n

    def __repr__(self) -> str:
        return f"v{self.n}"

    def __eq__(self, other) -> bool:
        return other.__class__ is Slot and other.n == self.n

    def __hash__(self) -> int:
        return hash(("slot", self.n))


class TensorOf:
    """A tensor argument: replayed as a fresh tensor over the array ``spec`` gives."""

    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec

    def __repr__(self) -> str:
        return f"tensor({self.spec!r})"


#: the Tensor class (set by trace.py: this module sits below the tensor in no order)
_TENSOR: list = [None]


class Const:
    """A constant argument (an array or another object), kept by reference."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        v = self.value
        if isinstance(v, _ndarray):
            return f"const{tuple(v.shape)}:{v.dtype}"
        return f"const:{type(v).__name__}"


@dataclass
class SlotInfo:
    """What a slot holds: ``origin`` is "ext" (a tensor's array the function reaches),
    "event" (an event's result), "fresh" (an array made outside the trace's view, a
    snapshot of its value at first use), "view" (a view of another slot) or "draw"."""

    origin: str
    shape: tuple
    dtype: object
    event: int = -1  # the event that makes it (origin event/view/draw)
    alias: int = -1  # the slot whose memory it shares (views), or -1
    snapshot: object = None  # origin "fresh": its value at first use
    array: object = None  # origin "fresh": the array (until the snapshot is taken)
    label: str = ""  # origin "ext": where it came from (for listings)
    order: tuple = ()  # origin "event": its axes in memory order, () for C order


def memory_order(a) -> tuple:
    """The axes of ``a`` from the largest stride to the smallest, () for C order (a plan
    allocates its buffers in the layout eager code got: Note [Buffer layouts] in plan.py).

    Example:
        >>> memory_order(np.ones((2, 3)).T)
        (1, 0)
    """
    if a.ndim < 2 or a.flags.c_contiguous:
        return ()
    st = a.strides
    order = tuple(sorted(range(a.ndim), key=lambda k: -st[k]))  # (stable: ties stay in order)
    return () if order == tuple(range(a.ndim)) else order


@dataclass
class Event:
    """One recorded call: ``fn(*args, **kwargs)`` with slots in the arguments; ``outs``:
    the result's slots (a list, or None for a call whose result is not an array),
    ``writes``: the slots it writes into."""

    fn: object
    name: str
    args: tuple
    kwargs: dict
    outs: list
    writes: tuple = ()
    shape: str = "one"  # "one", "tuple", "list", "none", "scalar"
    pure: bool = True
    meta: dict = field(default_factory=dict)


class BreakRead(Exception):
    """Raised inside the tracer only with fullgraph=True (the first graph break)."""


def library_site() -> str:
    """``file:line`` of the innermost frame inside retrograd but outside the tracer."""
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename.replace("\\", "/")
        if _LIB in name and "/_compile/" not in name:
            return f"{name.rsplit(_LIB, 1)[1]}:{f.f_lineno}"
        f = f.f_back
    return ""


def _front_door() -> bool:
    """Whether a value read comes from the user's code: through a Tensor method
    (``.item()``, ``bool(t)``, printing) or directly."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.replace("\\", "/").endswith(
            ("/_compile/record.py", "/retrograd/_tensor/tensor.py",
            "/retrograd/_tensor/printing.py")):
        f = f.f_back  # (the Tensor method's caller decides: the user's code or ours)
    if f is None:
        return True
    return _LIB not in f.f_code.co_filename.replace("\\", "/")


def user_site() -> str:
    """``file:line`` of the innermost frame outside retrograd (the user's line)."""
    f = sys._getframe(1)
    while f is not None and (_LIB in f.f_code.co_filename.replace("\\", "/") or
                             f.f_code.co_filename.startswith("<")):
        f = f.f_back
    if f is None:
        return "?"
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def _plain(x):
    """The plain ndarray view of a traced array (anything else as it is)."""
    return _ndarray.view(x, _ndarray) if isinstance(x, TracedArray) else x


def _plain_tree(x):
    c = x.__class__
    if c is TracedArray:
        return _ndarray.view(x, _ndarray)
    if c is tuple or c is list:
        return c(_plain_tree(v) for v in x)
    if c is dict:
        return {k: _plain_tree(v) for k, v in x.items()}
    return x


# ----------------------------------------------------------------------------------
# the recorder


class Recorder:
    """The log of one traced call (Note [Tracing]). ``active`` while recording; ``depth``
    counts kernel calls in progress (their inner NumPy calls are not logged)."""

    def __init__(self, fullgraph: bool = False):
        self.slots: list[SlotInfo] = []
        self.events: list[Event] = []
        self.active = False
        self.depth = 0
        self.drew = False
        self.drawn: list = []  # (event index, generator) of each draw
        self.breaks: list = []  # (reason, user line)
        self.fullgraph = fullgraph
        # the arrays of slots, by geometry and under the array owning their memory (kept
        # alive, so that no address is reused while the trace runs)
        self.geom: dict = {}
        self.owners: dict = {}

    # -- context: the recorder the hooks report to --------------------------------
    def __enter__(self):
        REC[0] = self
        self.active = True
        TRACING[0] = True
        return self

    def __exit__(self, *exc):
        self.active = False
        TRACING[0] = False
        REC[0] = _IDLE
        return False

    # -- slots ------------------------------------------------------------------------
    def _new_slot(self, info: SlotInfo, arr) -> TracedArray:
        n = len(self.slots)
        self.slots.append(info)
        return self._as_slot(arr, n)

    def _register(self, arr, n: int) -> None:
        """Remember that ``arr`` (plain) is slot ``n``'s array: by its geometry, and under
        the array that owns its memory (views of views name the owner as their base)."""
        p = _ndarray.view(arr, _ndarray) if arr.__class__ is not _ndarray else arr
        self.geom[_geom(p)] = n
        owner = _owner(p)
        hit = self.owners.get(id(owner))
        if hit is None:
            self.owners[id(owner)] = (owner, [(n, p)])
        else:
            hit[1].append((n, p))

    def external(self, arr: np.ndarray, label: str) -> TracedArray:
        """A traced array for an input array (a tensor the function reaches)."""
        return self._new_slot(SlotInfo("ext", arr.shape, arr.dtype, label=label), arr)

    def adopt(self, arr: np.ndarray):
        """The traced array a new tensor takes in place of ``arr`` (Note [Tracing hook])."""
        if not self.active:
            return arr
        s = self._resolve(arr)
        if s is not None:
            return self._as_slot(arr, s)
        return self._fresh(arr)

    def _fresh(self, arr) -> TracedArray:
        return self._new_slot(SlotInfo("fresh", arr.shape, arr.dtype, array=arr), arr)

    def follow(self, targets) -> None:
        """Follow the plain arrays a call is about to write into (their value now is
        their value in every replay, Note [Tracing])."""
        for x in targets:
            if x.__class__ is _ndarray and self._resolve(x) is None:
                self._fresh(x)

    def _as_slot(self, arr, n: int) -> TracedArray:
        t = _ndarray.view(arr, TracedArray)
        t._slot = n
        self._register(arr, n)
        return t

    def _resolve(self, arr):
        """The slot whose array ``arr`` is, or is a view of (a derived view slot made on
        the way); None for an array the trace does not follow."""
        if arr.__class__ is TracedArray and arr._slot is not None:
            return arr._slot
        p = _ndarray.view(arr, _ndarray) if arr.__class__ is not _ndarray else arr
        n = self.geom.get(_geom(p))
        if n is not None:
            return n
        hit = self.owners.get(id(_owner(p)))
        if hit is None:
            return None
        lo, hi = _byte_bounds(p)
        for m, q in hit[1]:
            qlo, qhi = _byte_bounds(q)
            if qlo <= lo and hi <= qhi:
                return self._view_slot(p, m, q)
        return None

    def _view_slot(self, arr, n: int, owner) -> int:
        """A slot for ``arr``, a view of slot ``n``'s array ``owner`` (same geometry:
        slot ``n`` itself)."""
        if arr.__array_interface__["data"][0] == owner.__array_interface__["data"][0] and \
                arr.shape == owner.shape and arr.strides == owner.strides and \
                arr.dtype == owner.dtype:
            return n
        off = arr.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        info = SlotInfo("view", arr.shape, arr.dtype, event=len(self.events), alias=n)
        m = len(self.slots)
        self.slots.append(info)
        self.events.append(Event(view_of, "view_of",
                                 (Slot(n), off, arr.shape, arr.strides, arr.dtype), {}, [m]))
        self._register(arr, m)
        return m

    def spec(self, x):
        """The template of an argument: slots for followed arrays, constants else."""
        c = x.__class__
        if c is TracedArray:
            n = x._slot
            if n is None:
                n = self._resolve(x)
                if n is None:  # a view the tracer did not see made: follow its base
                    return Const(_ndarray.view(x, _ndarray))
            info = self.slots[n]
            if info.origin == "fresh" and info.snapshot is None:
                info.snapshot = np.array(info.array, copy=True)
                info.array = None
            return Slot(n)
        if c is _ndarray:
            n = self._resolve(x)
            if n is not None:
                return self.spec(self._as_slot(x, n))
            return Const(x)
        if c is tuple or c is list:
            return c(self.spec(v) for v in x)
        if c is dict:
            return {k: self.spec(v) for k, v in x.items()}
        if c is slice:
            return slice(self.spec(x.start), self.spec(x.stop), self.spec(x.step))
        if isinstance(x, _ndarray):  # another subclass (a masked array...): a constant
            return Const(x)
        if c is _TENSOR[0]:  # a tensor among a kernel's parameters: its array
            return TensorOf(self.spec(x._data))
        return x

    # -- events ---------------------------------------------------------------------
    def call(self, fn, name: str, args, kwargs, run, writes=(), pure=True):
        """Run ``run()`` (the call on plain arrays) and log it as ``fn(*args, **kwargs)``
        (the arguments as the call saw them, traced arrays included); return the result
        with traced arrays for its arrays. Calls on constants alone are not logged
        (constant folding)."""
        if writes:
            self.follow(writes)
        a = self.spec(args)  # (before the call: a followed array's snapshot is its
        k = self.spec(kwargs)  # value before any write)
        wspec = self.spec(tuple(writes)) if writes else ()
        self.drew = False
        result = run()
        if self.drew:  # a kernel that draws random numbers: never folded, never removed
            pure = False
        elif not (_has_slot(a) or _has_slot(k)):
            return _plain_tree(result)
        ev = Event(fn, name, a, k, [], pure=pure)
        ev.writes = tuple(s.n for s in _slots_in(wspec))
        idx = len(self.events)
        self.events.append(ev)
        ins = [s.n for s in _slots_in(a)] + [s.n for s in _slots_in(k)]
        return self._wrap_result(ev, idx, result, ins, args, kwargs)

    def _wrap_result(self, ev, idx, result, ins, args, kwargs):
        c = result.__class__
        if c is _ndarray or c is TracedArray:
            out = self._out_slot(ev, idx, result, ins, args)
            ev.shape = "one"
            return out
        if isinstance(result, _generic) and not isinstance(result, (np.str_, np.bytes_)):
            ev.shape = "scalar"  # a 0-d result NumPy gives as a scalar: followed as 0-d
            arr = np.asarray(result)
            return self._out_slot(ev, idx, arr, ins, args)
        if (c is tuple or c is list) and result and all(
                isinstance(r, _ndarray) for r in result):
            ev.shape = "tuple" if c is tuple else "list"
            outs = [self._out_slot(ev, idx, r, ins, args) for r in result]
            return c(outs)
        ev.shape = "none"
        ev.meta["result"] = result
        return _plain_tree(result)

    def _out_slot(self, ev, idx, r, ins, args) -> TracedArray:
        r = _plain(r)
        # the output of a writing call (out=, a method that returns self) is that slot
        for n in ev.writes:
            if _same_array(self, n, r, args):
                ev.outs.append(n)
                return self._as_slot(r, n)
        alias = -1
        for n in ins:
            info = self.slots[n]
            if info.shape and r.size and np.may_share_memory(r, _arr_of(args, n, self)):
                alias = n
                break
        m = len(self.slots)
        self.slots.append(SlotInfo("event", r.shape, r.dtype, event=idx, alias=alias,
                                   order=memory_order(r)))
        ev.outs.append(m)
        return self._as_slot(r, m)

    def draw(self, gen, n, words):
        """A random draw of ``n`` words from ``gen`` (Note [Tracing], 3)."""
        self.drawn.append((len(self.events), gen))  # (the event that draws, or will)
        if self.depth:  # inside a kernel: the kernel's event replays the draw
            self.drew = True
            return words
        idx = len(self.events)
        ev = Event(draw_words, "draw", (Const(gen), n), {}, [], pure=False)
        self.events.append(ev)
        m = len(self.slots)
        self.slots.append(SlotInfo("draw", words.shape, words.dtype, event=idx))
        ev.outs.append(m)
        return self._as_slot(words, m)

    def read(self, arr, conv, what: str):
        """A traced value read from Python (Note [Value reads]): a check event when
        retrograd's own code reads it, a graph break when the user's code does."""
        value = conv(_ndarray.view(arr, _ndarray))
        if not self.active or self.depth:
            return value
        if _front_door():
            self.value_read(what)
            return value
        n = self._resolve(arr)
        if n is None:
            return value
        self.events.append(Event(conv, "check", (Slot(n),), {}, [], shape="check",
                                 pure=False, meta={"expect": value, "what": what,
                                                   "site": library_site()}))
        return value

    def value_read(self, what: str) -> None:
        """A traced value read from Python: a graph break (Note [Graph breaks])."""
        if not self.active:
            return
        site = user_site()
        lib = library_site()
        if lib and what[0] != "N":  # (NumPy conversion: the user's own call)
            what = f"{what}, in retrograd/{lib}"
        self.breaks.append((what, site))
        self.active = False  # the rest of the call runs eagerly, unrecorded
        if self.fullgraph:
            raise BreakRead(f"{what} at {site}")


def _geom(a) -> tuple:
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def _owner(a):
    """The array at the bottom of ``a``'s chain of bases (the owner of its memory); the
    chain goes through the objects ``as_strided`` puts between a view and its array."""
    while True:
        b = a.base
        if isinstance(b, _ndarray):
            a = b
        elif b is not None and isinstance(getattr(b, "base", None), _ndarray):
            a = b.base
        else:
            return a


def _same_array(rec, n, r, args) -> bool:
    a = _arr_of(args, n, rec)
    return a is not None and a.__array_interface__["data"][0] == \
        r.__array_interface__["data"][0] and a.shape == r.shape and a.strides == r.strides


def _arr_of(args, n: int, rec):
    """The array of slot ``n`` among a call's arguments (as the call saw them)."""
    stack = [args]
    while stack:
        x = stack.pop()
        c = x.__class__
        if c is TracedArray and x._slot == n:
            return _ndarray.view(x, _ndarray)
        if c is tuple or c is list:
            stack.extend(x)
        elif c is dict:
            stack.extend(x.values())
        elif c is _ndarray or c is TracedArray:
            s = rec._resolve(x)
            if s == n:
                return x
    return None


def walk_tree(x, cls):
    """The objects of class ``cls`` inside ``x`` and its tuples, lists, dicts, slices and
    tensor specs (one walk serves every template and argument tree of the tracer)."""
    c = x.__class__
    if c is cls:
        yield x
    elif c is tuple or c is list:
        for v in x:
            yield from walk_tree(v, cls)
    elif c is dict:
        for v in x.values():
            yield from walk_tree(v, cls)
    elif c is slice:
        for v in (x.start, x.stop, x.step):
            yield from walk_tree(v, cls)
    elif c is TensorOf:
        yield from walk_tree(x.spec, cls)


def _has_slot(x) -> bool:
    return next(walk_tree(x, Slot), None) is not None


def _slots_in(x):
    return walk_tree(x, Slot)


def view_of(base, offset: int, shape, strides, dtype):
    """The view of ``base`` at byte ``offset`` with ``shape``/``strides``/``dtype``."""
    iface = dict(base.__array_interface__)
    iface["data"] = (iface["data"][0] + offset, iface["data"][1])
    iface["shape"] = tuple(shape)
    iface["strides"] = tuple(strides)
    iface["typestr"] = np.dtype(dtype).str
    iface.pop("descr", None)
    iface.pop("mask", None)
    return np.asarray(_Interface(iface, base))


class _Interface:
    __slots__ = ("__array_interface__", "base")

    def __init__(self, iface, base):
        self.__array_interface__ = iface
        self.base = base


def draw_words(gen, n):
    """A replayed random draw: ``n`` words from ``gen``'s current bit generator."""
    return gen.bits.random_raw(n)


class _Idle:
    active = False
    depth = 0

    def value_read(self, what):
        return None

    def read(self, arr, conv, what):
        return conv(_ndarray.view(arr, _ndarray))


_IDLE = _Idle()
#: the recorder of the trace running now (one at a time: traces do not nest)
REC: list = [_IDLE]


# ----------------------------------------------------------------------------------
# the traced array


class TracedArray(_ndarray):
    """An ndarray the tracer follows (Note [Tracing]); outside a trace it computes as a
    plain array and its results are plain."""

    _slot = None

    def __array_finalize__(self, obj) -> None:
        self._slot = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        pin = _plain_tree(inputs)
        pkw = _plain_tree(kwargs) if kwargs else kwargs
        rec = REC[0]
        if not rec.active or rec.depth:
            return getattr(ufunc, method)(*pin, **pkw)
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        out = kwargs.get("out")
        writes = ()
        if out is not None:
            writes = out if out.__class__ is tuple else (out,)
        if method == "at":
            writes = (inputs[0],)
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        r = rec.call(fn, name, inputs, kwargs, lambda: getattr(ufunc, method)(*pin, **pkw),
                     writes=writes, pure=not writes)
        if out is not None and method != "at":
            return out[0] if out.__class__ is tuple and len(out) == 1 else out
        return r

    def __array_function__(self, func, types, args, kwargs):
        rec = REC[0]
        if not rec.active or rec.depth:
            return func(*_plain_tree(args), **_plain_tree(kwargs))
        writes = ()
        name = func.__name__
        if name in _WRITING_FUNCS:
            writes = (args[0],)
        elif kwargs.get("out") is not None:
            writes = (kwargs["out"],)
        if not writes and name in _METADATA_FUNCS:
            return func(*_plain_tree(args), **_plain_tree(kwargs))
        if name in _DYNAMIC_FUNCS:
            rec.value_read(_dynamic_what(name))
            return func(*_plain_tree(args), **_plain_tree(kwargs))
        r = rec.call(func, name, args, kwargs,
                     lambda: func(*_plain_tree(args), **_plain_tree(kwargs)),
                     writes=writes, pure=not writes)
        if writes and name in _WRITING_FUNCS:
            return None
        if kwargs.get("out") is not None:
            return kwargs["out"]
        return r

    # -- value reads: checks or graph breaks (Note [Value reads]) -------------------
    def __bool__(self):
        return REC[0].read(self, bool, "bool() of a traced value (data-dependent control "
                           "flow)")

    def __float__(self):
        return REC[0].read(self, float, "float() of a traced value")

    def __int__(self):
        return REC[0].read(self, int, "int() of a traced value")

    def __index__(self):
        return REC[0].read(self, _ndarray.__index__, "a traced value used as an index")

    def __complex__(self):
        return REC[0].read(self, complex, "complex() of a traced value")

    def item(self, *args):
        return REC[0].read(self, _item_of(args), ".item() of a traced value")

    def tolist(self):
        return REC[0].read(self, _ndarray.tolist, ".tolist() of a traced value")

    def tobytes(self, order="C"):
        return REC[0].read(self, _ndarray.tobytes, "the bytes of a traced value")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        REC[0].value_read("printing a traced value")
        return repr(_ndarray.view(self, _ndarray))

    def __str__(self) -> str:
        REC[0].value_read("printing a traced value")
        return str(_ndarray.view(self, _ndarray))

    def __format__(self, spec) -> str:
        REC[0].value_read("formatting a traced value")
        return format(_ndarray.view(self, _ndarray), spec)

    def __reduce__(self):
        REC[0].value_read("pickling a traced value")
        return _ndarray.view(self, _ndarray).__reduce__()

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        return _method_call("real", _real, self, (), {}, False)

    @property
    def imag(self):
        return _method_call("imag", _imag, self, (), {}, False)


def _item_of(args):
    if not args:
        return _ndarray.item
    return lambda a: _ndarray.item(a, *args)


def _real(a):
    return a.real


def _imag(a):
    return a.imag


#: NumPy functions that write into their first argument
_WRITING_FUNCS = frozenset(("copyto", "put", "place", "putmask", "put_along_axis",
                            "fill_diagonal"))


#: NumPy functions whose results' shapes depend on the values (graph breaks)
_DYNAMIC_FUNCS = frozenset(("nonzero", "argwhere", "flatnonzero", "unique", "unique_all",
                            "unique_counts", "unique_inverse", "unique_values", "compress",
                            "extract", "bincount", "trim_zeros", "histogram",
                            "histogram_bin_edges", "histogramdd", "histogram2d"))
_DYNAMIC_METHODS = frozenset(("nonzero", "compress"))

#: NumPy functions that read metadata only (no event)
_METADATA_FUNCS = frozenset(("shape", "ndim", "size", "result_type", "may_share_memory",
                             "shares_memory", "broadcast_shapes", "iscomplexobj",
                             "isrealobj", "min_scalar_type", "can_cast", "isscalar"))


def _dynamic_what(name: str) -> str:
    return (f"{name} of a traced value (its result's shape depends on the values; "
            "torch.compile breaks there too)")


def _bool_index(index) -> bool:
    """Whether an index holds a traced boolean mask (a result shaped by the values)."""
    if index.__class__ is TracedArray:
        return index.dtype == np.bool_ and index.ndim > 0
    if index.__class__ is tuple or index.__class__ is list:
        return any(_bool_index(i) for i in index)
    return False


def _method_call(name, base, self, args, kwargs, writes_self):
    plain = _ndarray.view(self, _ndarray)
    rec = REC[0]
    if rec.active and not rec.depth and (
            name in _DYNAMIC_METHODS or
            (name == "__getitem__" and args and _bool_index(args[0]))):
        rec.value_read(_dynamic_what("indexing with a boolean mask" if name == "__getitem__"
                                     else f".{name}()"))
    if not rec.active or rec.depth:
        result = base(plain, *_plain_tree(args), **(_plain_tree(kwargs) if kwargs else {}))
        return self if result is plain else result
    if name == "view" and args and isinstance(args[0], type):  # .view(SomeClass)
        return base(plain, *args, **kwargs)
    r = rec.call(base, name, (self,) + tuple(args), kwargs,
                 lambda: base(plain, *_plain_tree(args), **(_plain_tree(kwargs) if kwargs
                                                             else {})),
                 writes=(self,) if writes_self else (), pure=not writes_self)
    if writes_self:
        return None
    return r


def _make_method(name: str, writes_self: bool):
    base = getattr(_ndarray, name)

    def method(self, *args, **kwargs):
        return _method_call(name, base, self, args, kwargs, writes_self)

    method.__name__ = name
    method.__qualname__ = f"TracedArray.{name}"
    return method


_PURE_METHODS = ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype",
                 "choose", "clip", "compress", "conj", "conjugate", "copy", "cumprod",
                 "cumsum", "diagonal", "dot", "flatten", "getfield", "max", "mean", "min",
                 "nonzero", "prod", "ravel", "repeat", "reshape", "round", "searchsorted",
                 "squeeze", "std", "sum", "swapaxes", "take", "trace", "transpose", "var",
                 "view", "__getitem__")
_WRITING_METHODS = ("fill", "partition", "put", "sort", "setfield", "__setitem__",
                    "__delitem__", "resize", "byteswap")
for _name in _PURE_METHODS:
    setattr(TracedArray, _name, _make_method(_name, False))
for _name in _WRITING_METHODS:
    setattr(TracedArray, _name, _make_method(_name, True))
del _name


class BitsProxy:
    """A generator's bit generator while a trace runs: draws are events (Note [Tracing])."""

    __slots__ = ("_gen", "_bits")

    def __init__(self, gen, bits):
        self._gen = gen
        self._bits = bits

    def random_raw(self, size=None, output=True):
        words = self._bits.random_raw(size, output)
        rec = REC[0]
        if rec.active and size is not None and output:
            return rec.draw(self._gen, size, words)
        return words

    def __getattr__(self, name):
        return getattr(self._bits, name)

    def __setattr__(self, name, value):  # (``bits.state = ...`` rewinds the real one)
        if name in BitsProxy.__slots__:
            object.__setattr__(self, name, value)
        else:
            setattr(self._bits, name, value)


#: NumPy's conversion functions: C functions that no array protocol reports
CONVERSIONS = ("asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "array",
               "require")


def _holds_traced(x) -> bool:
    return next(walk_tree(x, TracedArray), None) is not None


def conversion_wrapper(name: str, fn):
    """The function that stands for NumPy's ``name`` (``np.asarray``, ``np.array``...)
    while a trace runs: a conversion of a traced array is an event, so that what code
    computes from its result stays followed (Note [Tracing], 2)."""

    def convert(a, *args, **kwargs):
        rec = REC[0]
        if not rec.active or rec.depth:
            return fn(a, *args, **kwargs)
        if not _holds_traced(a):
            # a plain array over followed memory (as_strided's views are made so) is
            # followed from here on, as a view of its slot
            out = fn(a, *args, **kwargs)
            if out.__class__ is _ndarray and out.size:
                n = rec._resolve(out)
                if n is not None:
                    return rec._as_slot(out, n)
            return out
        return rec.call(fn, name, (a,) + args, kwargs,
                        lambda: fn(_plain_tree(a), *args, **kwargs))

    convert.__wrapped__ = fn
    return convert


#: op records whose results' shapes depend on the values (graph breaks, as in
#: torch.compile without capture_dynamic_output_shape_ops); ``index`` with a mask too
DYNAMIC_KERNELS = frozenset(("masked_select", "unique2", "unique_consecutive", "unique_dim"))


def kernel_wrapper(name: str, fwd):
    """The function that stands for an op's kernel while a trace runs: one event per
    call, the kernel itself opaque (Note [Tracing], 1)."""

    dynamic = name in DYNAMIC_KERNELS

    def kernel(*args, **kwargs):
        rec = REC[0]
        if not rec.active or rec.depth:
            return fwd(*_plain_tree(args), **_plain_tree(kwargs))
        if dynamic or (name == "index" and _bool_index(tuple(args))):
            rec.value_read(_dynamic_what(name if dynamic else "indexing with a boolean mask"))
            return fwd(*_plain_tree(args), **_plain_tree(kwargs))

        def run():
            rec.depth += 1
            try:
                return fwd(*_plain_tree(args), **_plain_tree(kwargs))
            finally:
                rec.depth -= 1
        return rec.call(fwd, name, args, kwargs, run)

    kernel.__wrapped__ = fwd
    return kernel
