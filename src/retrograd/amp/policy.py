"""Autocast's policy table (which ops run in which dtype) and the casts it makes.

Note [Autocast policy table]
PyTorch's CPU autocast registers a kernel for a fixed list of ops; each op is in one
of three categories (torch 2.13, checked op by op against the AutocastCPU dispatch
key and the output dtypes real torch gives under ``torch.autocast('cpu')``):

* ``lower_precision_fp``: floating inputs (not float64) are cast to the autocast
  dtype (bfloat16 or float16): the matrix products and convolutions.
* ``fp32``: floating inputs (not float64) are cast to float32: losses, reductions
  that overflow easily (prod), linear algebra, 3-d pooling, some paddings.
* ``promote``: floating inputs are cast to the widest floating type among them,
  float64 ignored (cat, stack, index_copy); float16 meeting bfloat16 is an error.

Every other op runs in the dtype of its inputs, with the usual type promotion.
The category is part of each op's record (Note [Autocast records] in ops/public.py):
``Op(..., autocast=...)`` for table ops, ``@public(autocast=...)`` or
``@autocast_category(...)`` for public functions. This module reads the records into
``POLICY`` (PyTorch op name -> category, for the listed ops retrograd has),
``ENTRIES`` (public name -> category, or a function of the call's arguments: ``F.pad``
is float32 only in reflect/replicate modes; ``einsum`` is lower precision when it
contracts, as PyTorch runs that through bmm) and ``ALIASES`` (public and op-table names
whose PyTorch name differs: ``F.cross_entropy`` is ``cross_entropy_loss``). The test
suite holds the records against torch 2.13's own CPU list (tests/amp/test_amp.py).

Note [Autocast dispatch]
An op's category is applied where PyTorch's Autocast dispatch key acts: at the op the
program called, before that op checks its arguments (``F.linear`` refuses a bfloat16
input with a float32 weight unless autocast cast them first). retrograd has two
doors into an op, and both read the records:

1. ``ops/dispatch.py: apply()`` checks ``AMP.on`` (while Note [Optional modes]'s flag
   is set) and sends the call to ``autocast_apply`` while autocast is on (this module
   registers both with dispatch when imported: Note [Dispatch interceptors]): a table
   op's category is its record's ``autocast`` (``mm``, ``bmm``, ``matmul``, ``prod``,
   ``cat``, ``stack``, ``addmm``, ``conv``...). ``unary``/``binary`` (elementwise ops,
   none of which is on a list) have no check at all.
2. Public functions that are compositions (``addmm``, ``F.linear``'s checks, the
   losses, ``matmul``'s choice among mm/mv/dot) get an entry check when ``install()``
   runs (at the end of ``import retrograd``, and again on entering autocast while a
   namespace such as ``nn.functional`` was not yet covered): the attribute
   ``retrograd.addmm`` (and ``Tensor.addmm``, ``F.mse_loss``...) becomes a thin
   function that calls the original at once when ``AMP.on`` is False (``x @ y`` gets
   a two-argument one, as cheap as the operator was). Only the names in this table get
   one; calls between retrograd's own modules use the originals (module globals), so
   ``torch.mv`` stays float32 as in PyTorch while ``torch.matmul(matrix, vector)``
   runs in bfloat16. (A name imported with ``from retrograd.nn.functional import
   linear`` before ``install()`` ran keeps the unchecked function.)
   ``F.multi_head_attention_forward`` is treated as PyTorch's fused
   ``_native_multi_head_attention`` (all inputs cast, then run in the lower
   precision), because its inner ``linear`` calls are module-internal.

While an autocast-handled op runs, ``AMP.on`` is False, so its inner ops are not
cast again (PyTorch excludes the Autocast key in the same way). Inner ops of
composites that are *not* on a list stay autocast, as in PyTorch, where such ops
decompose above the Autocast key.

Note [Autocast weight cache]
As in PyTorch, a float32 leaf that requires grad (a weight) is cast to the
lower-precision dtype once per autocast region: the cast (a ``ToCopyBackward0``
node) is cached by tensor identity and reused by every later op in the region, so
the graph holds one cast per weight. The cache keeps a weak reference to the weight
(a dead or recycled id is a miss) and is cleared when the outermost region exits.
Views, non-leaves, and tensors that do not require grad are cast every time.

Example:
    >>> import retrograd as torch
    >>> from retrograd.amp.policy import category
    >>> category("mm"), category("mse_loss"), category("cat"), category("relu")
    ('lower_precision_fp', 'fp32', 'promote', None)
    >>> a = torch.ones(2, 2)
    >>> with torch.autocast("cpu", dtype=torch.bfloat16):
    ...     (a @ a).dtype, torch.prod(a.bfloat16()).dtype, (a + 1).dtype
    (torch.bfloat16, torch.float32, torch.float32)
"""

from __future__ import annotations

import functools
import sys
import weakref

import numpy as np

from .._core import dtype as D
from .._functions.namespace import matmul, to
from .._tensor.tensor import Tensor
from ..ops import dispatch as _dispatch
from ..ops.op import REGISTRY
from ..ops.public import AUTOCAST, FP32, LOWER_PRECISION_FP, PROMOTE
from .state import AMP

__all__ = ["LOWER_PRECISION_FP", "FP32", "PROMOTE", "ENTRIES", "POLICY", "ALIASES", "category",
           "cast_arguments", "autocast_apply", "install", "installed_everywhere"]

# Note [Autocast records] (ops/public.py): each op and public function carries its
# category; the tables below are read from those records
#: public name ("linalg_" + name for retrograd.linalg) -> category (or a function of the
#: call's arguments), and -> PyTorch's op name
ENTRIES: dict = {}
ALIASES: dict = {"__matmul__": "matmul", "__rmatmul__": "matmul"}
#: PyTorch op name -> category, for every listed op retrograd has
POLICY: dict = {}


def _read_records() -> None:
    """(Re)build the tables from the records (public functions register at import)."""
    for name, entry in AUTOCAST.items():
        ENTRIES[name] = entry.category
        if entry.op != name:
            ALIASES[name] = entry.op
        if entry.category.__class__ is str:
            POLICY[entry.op] = entry.category
    for op in REGISTRY:
        if op.autocast is not None:
            torch_name = _TABLE_OP_NAMES.get(op.name, op.name)
            POLICY[torch_name] = op.autocast
            if torch_name != op.name:
                ALIASES[op.name] = torch_name


#: table ops whose PyTorch name differs (what the record computes, as at::_convolution)
_TABLE_OP_NAMES = {"conv": "_convolution", "conv_transpose": "_convolution"}


def category(name: str):
    """The autocast category of an op or public function name (None: not on a list).

    Example:
        >>> from retrograd.amp.policy import category
        >>> category("linear"), category("cross_entropy"), category("softmax")
        ('lower_precision_fp', 'fp32', None)
    """
    cat = ENTRIES.get(name)
    if cat.__class__ is str:
        return cat
    return POLICY.get(ALIASES.get(name, name))


# -------------------------------------------------------------------------------
# casting

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_FLOAT_NP = frozenset(d.np for d in D.ALL if d.is_floating_point)


def _to(t, dt):
    return to(t, dt)


def _cast(t, dt):
    """``t`` in ``dt`` if it is an eligible floating tensor (not float64), else ``t``."""
    nd = t._data.dtype
    if nd is dt.np or nd == dt.np or nd not in _FLOAT_NP or nd == _F64:
        return t
    if (AMP.cache_enabled and nd == _F32 and t._rg and t.grad_fn is None and t._base is None
            and dt is AMP.dtype["cpu"]):
        key = id(t)
        hit = AMP.cache.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        c = _to(t, dt)
        AMP.cache[key] = (weakref.ref(t), c)
        return c
    return _to(t, dt)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            for b in a:
                if _is_tensor(b):
                    yield b
        elif _is_tensor(a):
            yield a


def _promote_dtype(args, kwargs):
    """PyTorch's ``at::autocast::prioritize`` over the floating tensor arguments."""
    low = AMP.dtype["cpu"]
    cur = low
    for t in _tensors(args, kwargs):
        nd = t._data.dtype
        if nd not in _FLOAT_NP or nd == _F64:
            continue
        if cur is D.float32 or nd == _F32:
            cur = D.float32
        elif nd == low.np:
            cur = low
        else:
            raise RuntimeError(
                "Unexpected floating ScalarType in at::autocast::prioritize: a "
                f"{D.FROM_NP[nd]} tensor meets {low} autocast in an op that promotes its "
                f"inputs (cat/stack/index_copy). Convert it first (x.to({low})) or use "
                f"autocast(dtype={D.FROM_NP[nd]}).")
    return cur


def _cast_value(v, dt):
    if isinstance(v, (list, tuple)):
        if any(_is_tensor(b) for b in v):
            return type(v)(_cast(b, dt) if _is_tensor(b) else b for b in v)
        return v
    return _cast(v, dt) if _is_tensor(v) else v


def cast_arguments(cat: str, args: tuple, kwargs: dict):
    """Cast the tensor arguments of an op of category ``cat``; returns (args, kwargs).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.amp.policy import cast_arguments
        >>> (a,), _ = cast_arguments("fp32", (torch.ones(1, dtype=torch.bfloat16),), {})
        >>> a.dtype
        torch.float32
    """
    if cat == LOWER_PRECISION_FP:
        dt = AMP.dtype["cpu"]
    elif cat == FP32:
        dt = D.float32
    else:
        dt = _promote_dtype(args, kwargs)
    args = tuple(_cast_value(a, dt) for a in args)
    if kwargs:
        kwargs = {k: _cast_value(v, dt) for k, v in kwargs.items()}
    return args, kwargs


# -------------------------------------------------------------------------------
# door 1: table ops (Note [Autocast dispatch])


def autocast_apply(op, inputs, p, nout, differentiable):
    """``dispatch.apply`` while autocast is on: cast per the table, run with AMP.on off.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records import table as T
        >>> from retrograd.amp.policy import autocast_apply
        >>> with torch.autocast("cpu"):
        ...     out = autocast_apply(T.mm_ops["mm"], (torch.ones(2, 2),) * 2, None, 1, True)
        >>> out.dtype
        torch.bfloat16
    """
    cat = op.autocast  # Note [Autocast records]
    AMP.on = False
    try:
        if cat is not None:
            inputs, _ = cast_arguments(cat, tuple(inputs), {})
        return _dispatch.apply(op, inputs, p, nout, differentiable)
    finally:
        AMP.on = True


_dispatch.intercept_autocast(AMP, autocast_apply)  # Note [Dispatch interceptors]


# -------------------------------------------------------------------------------
# door 2: public composite functions (Note [Autocast dispatch])


def _entry(fn, name: str):
    cat = ENTRIES.get(name) or category(name)

    def autocast_entry(*args, **kwargs):
        if not AMP.on:
            return fn(*args, **kwargs)
        c = cat if cat.__class__ is str else cat(args, kwargs)
        if c is None:
            return fn(*args, **kwargs)
        AMP.on = False
        try:
            args, kwargs = cast_arguments(c, args, kwargs)
            return fn(*args, **kwargs)
        finally:
            AMP.on = True

    functools.update_wrapper(autocast_entry, fn)
    autocast_entry._autocast_op = name
    return autocast_entry


def _public_names(prefix: str = "") -> set:
    names = set()
    for k in (*ENTRIES, *ALIASES):
        if prefix:
            if k.startswith(prefix):
                names.add(k[len(prefix):])
        elif not k.startswith(("linalg_", "fft_")):
            names.add(k)
    return names


def _matmul_operators() -> dict:
    # ``x @ y``: a two-argument entry (cheaper than *args) around F.matmul itself
    full = _entry(matmul, "matmul")

    def __matmul__(self, other: Tensor) -> Tensor:
        if not AMP.on:
            return matmul(self, other)
        return full(self, other)

    def __rmatmul__(self, other: Tensor) -> Tensor:
        if not AMP.on:
            return matmul(other, self)
        return full(other, self)

    for f in (__matmul__, __rmatmul__):
        f._autocast_op = "matmul"
    return {"__matmul__": __matmul__, "__rmatmul__": __rmatmul__}


def _wrap_namespace(ns, prefix: str = "") -> None:
    d = ns.__dict__ if isinstance(ns, type) else vars(ns)
    special = _matmul_operators() if isinstance(ns, type) else {}
    for name in _public_names(prefix):
        fn = d.get(name)
        if fn is not None and name in special and getattr(fn, "_autocast_op", None) is None:
            setattr(ns, name, special[name])
            continue
        if fn is None or not callable(fn) or isinstance(fn, (type, property)):
            continue
        if getattr(fn, "_autocast_op", None) is not None:
            continue
        setattr(ns, name, _entry(fn, prefix + name if prefix else name))


_INSTALLED: set = set()  # names of the namespaces that have their entry checks


def install() -> None:
    """Give the public functions in the table their autocast entry check (idempotent).

    Runs at import and on entering autocast (cheap once everything is installed), so a
    namespace imported later (``retrograd.nn.functional``) is covered too.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.amp.policy import install
        >>> install(); torch.addmm._autocast_op
        'addmm'
    """
    _read_records()
    mods = sys.modules
    for key, ns, prefix in (("retrograd", mods.get("retrograd"), ""), ("Tensor", Tensor, ""),
                            ("linalg", mods.get("retrograd.linalg"), "linalg_"),
                            ("fft", mods.get("retrograd.fft"), "fft_"),
                            ("nn.functional", mods.get("retrograd.nn.functional"), "")):
        if ns is not None:  # already-wrapped functions are skipped
            _wrap_namespace(ns, prefix)
            _INSTALLED.add(key)


def installed_everywhere() -> bool:
    """True once the namespaces that hold listed ops all have their entry checks.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.amp.policy import installed_everywhere
        >>> installed_everywhere()
        True
    """
    return "nn.functional" in _INSTALLED
