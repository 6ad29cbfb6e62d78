"""Memory overlap in in-place ops: PyTorch's rules for refusing a write, and writes into
memory NumPy holds read-only (expanded and overlapping views).

Example:
    >>> import numpy as np
    >>> from retrograd.ops import overlap
    >>> a = np.arange(6.)
    >>> overlap.status(a[:3], a[1:4]) == overlap.PARTIAL, overlap.status(a[:3], a[3:]) == overlap.NO
    (True, True)
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core.layouts import ti_permutation

# Note [Memory overlap in in-place ops]
# PyTorch refuses some in-place writes whose memory overlaps (aten/src/ATen/MemoryOverlap.cpp):
# * internal overlap of the written tensor: refused only when it is certain, i.e. a dim of
#   size > 1 has stride 0 (an expanded tensor) and the tensor is not empty. Every other
#   layout is fine, even one whose elements provably share memory (an overlapping unfold
#   or as_strided view: "too hard" to tell, so allowed).
# * overlap of the written tensor with an input: the two are compared only when both are
#   non-empty and "non-overlapping and dense" (their strides a permutation of contiguous
#   strides); then the same first and last byte with the same strides is "full" overlap
#   (x.add_(x.view(...)) is elementwise, fine), any other shared byte range is "partial"
#   and refused. A non-dense input or output (x[::2], an expanded value) is again "too hard":
#   allowed.
# TensorIterator ops (unary, binary, clamp_, lerp_, copy_, ...) check both, skipping an input
# that is the output tensor itself; fill_(scalar) and zero_ check nothing; index_put_ and
# masked_fill_ only warn about an expanded output, and check their value/mask; scatter_,
# index_add_, index_copy_ refuse full overlap too. ``policy`` names each op's checks.
#
# What torch then computes, when it allows a write into overlapping memory, is its kernel's
# loop: one element after the other in TensorIterator's order (dims sorted by the operands'
# strides, smallest innermost), each reading the memory as the earlier ones left it (an
# element of an overlapping unfold is updated once per window holding it; copy_ leaves the
# last value written to a location). ``sequential`` reproduces that order exactly with
# whole-array NumPy steps ("levels"). Except when an operand is of a wider dtype than the
# output (a float32 view times a float64 tensor): on CPU, TensorIterator then reads a
# promoted copy of self and copies a temporary result back, so every value comes from the
# memory as it was, and only the copy's order (last write wins) remains. Where PyTorch's
# result is not defined by that order we do not model it: (1) from 32768 elements
# TensorIterator splits the loop across threads; (2) on a contiguous innermost run it loads
# a SIMD block (16 floats with AVX2) before storing it, so an *input* that overlaps the
# output in another layout and reads, within one block, a location an earlier element of the
# block writes, sees the old value (the output itself never does: its elements in one run
# are distinct). fill_, zero_, masked_fill_ and index_put_ write values that do not depend
# on the order (index_put_: the last index wins, as NumPy's). Retrograd keeps every array
# whose elements share memory read-only in NumPy, so a write into one goes through
# ``writable``, an alias of the same memory.

NO, FULL, PARTIAL, TOO_HARD = range(4)

#: the in-place ops that do not check like TensorIterator (see the Note)
_POLICY = {"masked_fill_": "masked_fill", "index_put_": "index_put", "scatter_": "no_overlap",
           "scatter_add_": "no_overlap", "index_add_": "no_overlap",
           "index_copy_": "no_overlap", "put_": "no_overlap", "index_fill_": "index_fill",
           "tril_": "none",
           "triu_": "none"}

INTERNAL_MSG = ("unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.")
PARTIAL_MSG = ("unsupported operation: some elements of the input tensor and the written-to "
               "tensor refer to a single memory location. Please clone() the tensor before "
               "performing the operation.")
_WARN = ("Use of {op} on expanded tensors is deprecated. Please clone() the tensor before "
         "performing this operation. This also applies to advanced indexing e.g. {example}")


def policy(name: str) -> str:
    """Which overlap checks the in-place op ``name`` makes: "ti" (TensorIterator: internal
    and partial overlap), "masked_fill", "index_put", "index_fill" (a warning for an expanded
    tensor, and the mask, the value or nothing checked), "no_overlap" (internal overlap, and
    any overlap with an input) or "none".

    Example:
        >>> from retrograd.ops.overlap import policy
        >>> policy("add_"), policy("masked_fill_")
        ('ti', 'masked_fill')
    """
    return _POLICY.get(name, "ti")


def internal(d: np.ndarray) -> bool:
    """PyTorch's ``has_internal_overlap(t) == MemOverlap::Yes``: ``d`` is not empty and a
    dim of size > 1 has stride 0.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.overlap import internal
        >>> internal(np.broadcast_to(np.ones(3), (2, 3))), internal(np.ones((2, 3)))
        (True, False)
    """
    if d.size == 0:
        return False
    for n, st in zip(d.shape, d.strides):
        if st == 0 and n > 1:
            return True
    return False


def dense(d: np.ndarray) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the dims of size > 1, sorted by stride,
    have contiguous strides (empty tensors count as dense).

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.overlap import dense
        >>> a = np.ones((2, 3))
        >>> dense(a.T), dense(a[:, ::2]), dense(a[:, :0])
        (True, False, True)
    """
    if d.size <= 1 or d.flags.c_contiguous or d.flags.f_contiguous:
        return True
    need = d.itemsize
    for st, n in sorted((st, n) for n, st in zip(d.shape, d.strides) if n > 1):
        if st != need:
            return False
        need *= n
    return True


def ptr(d: np.ndarray) -> int:
    """The address of ``d``'s first element."""
    return d.__array_interface__["data"][0]


def status(out: np.ndarray, inp: np.ndarray) -> int:
    """PyTorch's ``get_overlap_status`` of two distinct tensors: NO, FULL (same bytes, same
    strides), PARTIAL, or TOO_HARD (one of them is not dense: not compared)."""
    if out.size == 0 or inp.size == 0:
        return NO
    if not dense(out) or not dense(inp):
        return TOO_HARD
    a0, b0 = ptr(out), ptr(inp)
    a1, b1 = a0 + out.nbytes, b0 + inp.nbytes
    if a0 == b0 and a1 == b1:
        same = out.strides == inp.strides and out.itemsize == inp.itemsize
        return FULL if same else PARTIAL
    return PARTIAL if a0 < b1 and b0 < a1 else NO


def same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Same elements, layout and dtype: copying one onto the other is a no-op (PyTorch's
    copy_ returns before any check)."""
    return a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and \
        ptr(a) == ptr(b)


def may_alias(d: np.ndarray, od: np.ndarray) -> bool:
    """A cheap test that can only err towards True: do two distinct arrays share memory?
    (Two arrays that both own their memory never do; otherwise compare byte bounds.)"""
    return od is not d and (d.base is not None or od.base is not None) and \
        np.may_share_memory(d, od)


def check(out: np.ndarray, inputs, kind: str = "ti", op: str = "") -> None:
    """Raise (or warn) as PyTorch does before writing into ``out`` with ``inputs`` (arrays,
    none of them the written tensor itself), by ``kind`` (see ``policy``)."""
    if kind == "none":
        return
    if not out.flags.writeable and internal(out):
        if kind == "ti" or kind == "no_overlap":
            raise RuntimeError(INTERNAL_MSG + " (the tensor written to is expanded: stride 0 "
                               "along a dim of size > 1; write into x.clone() instead)")
        warn_expanded(op or kind + "_")
    if kind == "index_fill":
        return
    for a in inputs:
        if a is None or not (a is out or may_alias(out, a)):
            continue
        st = FULL if a is out else status(out, a)
        if st == PARTIAL or (st == FULL and kind in ("no_overlap", "index_put")):
            raise RuntimeError(PARTIAL_MSG + " (an input is a view overlapping the tensor "
                               "written to: pass input.clone() instead)")


def warn_expanded(op: str) -> None:
    """PyTorch's deprecation warning for index_put_/masked_fill_ on an expanded tensor."""
    example = "tensor[indices] = tensor" if op == "index_put_" else "tensor[mask] = scalar"
    warnings.warn(_WARN.format(op=op, example=example), UserWarning, stacklevel=4)


# ----------------------------------------------------------------------------------
# writing into read-only memory

class _Memory:
    """An ``__array_interface__`` with a writable flag, holding the array that owns the
    memory so it outlives the alias."""

    __slots__ = ("__array_interface__", "base")

    def __init__(self, iface: dict, owner: np.ndarray):
        self.__array_interface__ = iface
        self.base = owner


def _owner(d: np.ndarray) -> np.ndarray:
    """The array at the bottom of ``d``'s view chain (through as_strided's holders too)."""
    while True:
        b = d.base
        if isinstance(b, np.ndarray):
            d = b
            continue
        inner = getattr(b, "base", None) if b is not None else None
        if isinstance(inner, np.ndarray):
            d = inner
            continue
        return d


def writable(d: np.ndarray) -> np.ndarray | None:
    """A writable array with ``d``'s memory, shape and strides (``d`` itself if it is
    writable), or None when the memory is not ours to write (a read-only constant).

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.overlap import writable
        >>> a = np.zeros(3); e = np.broadcast_to(a, (2, 3))
        >>> writable(e)[1, 2] = 5; a
        array([0., 0., 5.])
    """
    if d.flags.writeable:
        return d
    owner = _owner(d)
    if not owner.flags.writeable:
        return None
    iface = dict(d.__array_interface__)
    iface["data"] = (iface["data"][0], False)
    return np.asarray(_Memory(iface, owner))


def private_copy(d: np.ndarray) -> np.ndarray:
    """``d`` (same layout, stride-0 dims included) over a private copy of the memory it
    views, read-only as ``d`` is: for a write into memory NumPy must not write."""
    owner = _owner(d)
    mine = owner.copy(order="A")
    iface = dict(d.__array_interface__)
    iface["data"] = (ptr(mine) + (ptr(d) - ptr(owner)), True)
    return np.asarray(_Memory(iface, mine))


def aliases_itself(d: np.ndarray) -> bool:
    """Do two elements of ``d`` share memory? (Only read-only arrays can, in retrograd.)"""
    if d.flags.writeable or d.size <= 1:
        return False
    if internal(d):
        return True
    return np.unique(_offsets(d)).size < d.size


def _offsets(d: np.ndarray, shape=None) -> np.ndarray:
    """The byte offset of each element of ``d`` (broadcast to ``shape``) from ``d``'s first
    element, in C order."""
    shape = d.shape if shape is None else shape
    if d.shape != shape:
        d = np.broadcast_to(d, shape)
    off = np.zeros(shape, dtype=np.int64)
    for k, (n, st) in enumerate(zip(shape, d.strides)):
        if st and n > 1:
            ix = [1] * len(shape)
            ix[k] = n
            off = off + (np.arange(n, dtype=np.int64) * st).reshape(ix)
    return off.reshape(-1)


def ti_order(shape, strides) -> np.ndarray:
    """The flat (C-order) indices of a tensor of ``shape`` in the order TensorIterator
    visits them: dims sorted by the operands' strides (``strides``: one tuple per operand,
    the output first), smallest innermost, ties to the smaller dim, else C order."""
    perm = ti_permutation(shape, strides)  # perm[0] is the innermost dim
    n = int(np.prod(shape, dtype=np.int64))
    return np.arange(n, dtype=np.int64).reshape(shape).transpose(perm[::-1]).reshape(-1)


def _levels(writes: np.ndarray, reads: list) -> np.ndarray:
    """Group the elements (in visiting order) into levels that can each run as one NumPy
    step with PyTorch's element-by-element result: an element comes after every earlier
    element that wrote what it reads or writes, and no earlier than one that read what it
    writes (within a level all reads precede all writes)."""
    n = writes.size
    if not reads:  # the k-th write to a location is level k
        order = np.argsort(writes, kind="stable")
        w = writes[order]
        start = np.r_[0, np.flatnonzero(w[1:] != w[:-1]) + 1]
        lv = np.empty(n, dtype=np.int64)
        lv[order] = np.arange(n) - np.repeat(start, np.diff(np.r_[start, n]))
        return lv
    last_w: dict = {}
    last_r: dict = {}
    lv = np.empty(n, dtype=np.int64)
    wl = writes.tolist()
    rl = [r.tolist() for r in reads]
    for i in range(n):
        w = wl[i]
        level = _max(last_w.get(w, -1) + 1, last_r.get(w, 0))
        for r in rl:
            level = _max(level, last_w.get(r[i], -1) + 1)
        lv[i] = level
        last_w[w] = level
        for loc in [w] + [r[i] for r in rl]:
            if last_r.get(loc, -1) < level:
                last_r[loc] = level
    return lv


_max = max


def needs_sequential(out: np.ndarray, inputs) -> bool:
    """Would writing ``f(out, inputs)`` into ``out`` element by element differ from
    computing it first and then writing it? (``out`` aliases itself, or an input shares
    some of its memory in a different layout.)"""
    if aliases_itself(out):
        return True
    for a in inputs:
        if a is not None and may_alias(out, a) and status(out, a) not in (NO, FULL) and \
                not same_memory(out, a):
            return True
    return False


def sequential(out: np.ndarray, compute, inputs) -> None:
    """Write ``compute()`` (an array of ``out``'s shape, computed from the memory as it is
    now) into the read-only or aliased ``out`` as PyTorch's elementwise kernels do: element
    by element in TensorIterator's order (Note [Memory overlap in in-place ops]). ``inputs``
    are the arrays ``compute`` reads besides ``out``."""
    w = writable(out)
    shape = out.shape
    base = ptr(out)
    every = [np.broadcast_to(a, shape) for a in inputs if a is not None]
    ins = [b for a, b in zip([a for a in inputs if a is not None], every) if may_alias(out, a)]
    order = ti_order(shape, [tuple(out.strides)] + [tuple(a.strides) for a in every])
    writes = _offsets(out)[order]
    reads = [(_offsets(a) + (ptr(a) - base))[order] for a in ins]
    lv = _levels(writes, reads)
    flat_w = w.reshape(-1) if w.flags.c_contiguous else None
    for k in range(int(lv.max()) + 1 if lv.size else 0):
        pos = order[lv == k]
        vals = np.asarray(compute()).reshape(-1)
        if flat_w is not None:
            flat_w[pos] = vals[pos]
        else:
            w[np.unravel_index(pos, shape)] = vals[pos]
