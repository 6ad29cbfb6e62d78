"""Result buffers for large kernels: a pool that reuses freed memory (Note [Buffer pool]).

Example:
    >>> import numpy as np
    >>> from retrograd.ops import buffers
    >>> a = buffers.empty((4,), np.float32)
    >>> a.shape, a.dtype
    ((4,), dtype('float32'))
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref

import numpy as np

from .._core.grad_mode import STATE
from .._graph.forward_state import FW

# Note [Buffer pool]
# A kernel over a large array is a few passes over memory, and a fresh result array
# costs one more: glibc hands blocks this big back to the OS when they are freed, so the
# next 16 MB result is page-faulted in again, 4 KB at a time (W7, ten elementwise ops on
# 4M float32 elements, spent a quarter of its time in those faults). PyTorch's CUDA
# caching allocator solves the same problem; this is its CPU counterpart, kept small.
#
# * What is pooled: only results that the kernels write themselves (``empty`` is called
#   by dispatch.unary/binary for float NumPy ufuncs with ``out=``, so also for the
#   engine's gradient sums, and by the fused kernels in ops/kernels/activations.py), and
#   only requests of at least ``threshold`` bytes (1 MiB): below it malloc's own free
#   lists serve well and one size check is all the small-tensor path pays. Dispatch pools
#   only when the operands are C-contiguous: a ufunc gives a transposed input a
#   Fortran-order result, and a later reduction over it adds in another order, so a
#   pooled (C-order) result there would change the last bits of a sum.
# * A block starts on a 64-byte cache line (malloc puts large blocks 16 bytes past a
#   page); a SIMD loop over cache-resident data stores up to a third faster.
# * How a block is known to be free: a block is an ``np.empty`` uint8 array (``mem``,
#   owned by the pool). The array handed out is ``np.frombuffer(memoryview(mem))``,
#   reshaped; its ``.base`` is a memoryview. NumPy collapses view chains only through
#   arrays, so every view, reshape or ``.numpy()`` of the result keeps that flat array
#   alive, and it keeps the memoryview alive. A weak reference on the memoryview calls
#   ``_release`` when the last user is gone: the block goes back on the free list at the
#   exact moment it becomes free, not at the next request. Anything holding the memory
#   through Python references (a tensor, a view, a NumPy array from ``.numpy()``, a
#   memoryview a user took) keeps it busy. As a last guard, ``_release`` drops (rather
#   than reuses) a block that something other than the pool still references.
#   (The alternative, polling ``sys.getrefcount`` of each block at every request, finds
#   blocks free only when asked, so it can neither reuse the most recent one nor keep
#   the free bytes under the cap between requests.)
# * Reuse: most recently freed first, among blocks of the request's size class (sizes
#   are rounded up to 1/8 of their power of two, so at most 12.5% is wasted and a
#   smaller last batch still finds a block). A block freed a moment ago may still be in
#   the L3 cache.
# * Bounded: at most ``max_free`` bytes (256 MiB) are held while free; past that the
#   oldest free blocks are dropped when a block is released. ``retrograd.cpu.empty_cache()``
#   drops every free block (as torch.cuda.empty_cache does for CUDA).
# * Off switch: ``RETROGRAD_CPU_POOL=0`` in the environment at import turns the pool
#   off (``empty`` is then ``np.empty``); ``RETROGRAD_CPU_POOL_MIN=<bytes>`` sets the
#   threshold (``=1`` pools every array: the test suite runs that way too, to exercise
#   the pool and Note [Gradient donation] on small tensors). ``configure(...)`` changes
#   the threshold, the cap or the switch at run time.
# * Threads: one re-entrant lock (a release can run inside another pool call, from a
#   garbage collection on the same thread). After ``fork`` (DataLoader workers) the
#   child gets a fresh lock; blocks the parent had are the child's copy-on-write copies.
# * Values: a pooled result is computed by the same ufunc, in the same order, as the
#   ``np.empty`` result was, so results are bit-identical with the pool on or off.

_MIB = 1 << 20
_enabled = os.environ.get("RETROGRAD_CPU_POOL", "1") != "0"
_threshold = int(os.environ.get("RETROGRAD_CPU_POOL_MIN", _MIB))
_max_free = 256 * _MIB

_lock = threading.RLock()
_free: list = []  # [(size class in bytes, mem)], oldest first
_free_bytes = 0
_leases: dict = {}  # id(memoryview) -> lease, for every block handed out and not yet back


class _Lease(weakref.ref):
    """A weak reference to a handed-out block's memoryview; holds the block itself."""

    __slots__ = ("mem", "key")


def _size_class(nbytes: int) -> int:
    step = 1 << max((nbytes - 1).bit_length() - 3, 12)
    return -(-nbytes // step) * step


def empty(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array, from the pool when it is large.

    Args:
        shape: a tuple of ints.
        dtype: a NumPy dtype.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops import buffers
        >>> buffers.empty((2, 3), np.float64).shape
        (2, 3)
    """
    dtype = np.dtype(dtype)
    n = dtype.itemsize
    for s in shape:
        n *= s
    if n < _threshold or not _enabled:
        return np.empty(shape, dtype)
    return _take(shape, dtype, n)


def _take(shape, dtype, nbytes: int) -> np.ndarray:
    global _free_bytes
    cls = _size_class(nbytes)
    mem = None
    with _lock:
        for i in range(len(_free) - 1, -1, -1):  # newest first
            if _free[i][0] == cls:
                mem = _free.pop(i)[1]
                _free_bytes -= cls
                break
    if mem is None:
        mem = _aligned(cls)
    flat = np.frombuffer(memoryview(mem), dtype, nbytes // dtype.itemsize)
    view = flat.base  # the memoryview NumPy made (Note [Buffer pool])
    lease = _Lease(view, _release)
    lease.mem = mem
    lease.key = id(view)
    with _lock:
        _leases[lease.key] = lease
    return flat.reshape(shape)


def _aligned(nbytes: int) -> np.ndarray:
    """``nbytes`` uninitialised bytes starting on a cache line (Note [Buffer pool])."""
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    off = -raw.ctypes.data % _ALIGN
    return raw[off:off + nbytes]


_ALIGN = 64


def _refs_when_free() -> int:
    """sys.getrefcount(mem) inside _release when only the pool holds the block."""
    mem = np.empty(1, np.uint8)
    probe = _Lease(memoryview(np.empty(1)), None)
    probe.mem = mem
    del mem
    return _count(probe)


def _count(lease) -> int:
    mem = lease.mem
    return sys.getrefcount(mem)


_FREE_REFS = _refs_when_free()


def _release(lease) -> None:
    global _free_bytes
    with _lock:
        _leases.pop(lease.key, None)
        if not _enabled or _count(lease) != _FREE_REFS:
            return  # pool off, or a memoryview derived from ours still exports the block
        mem = lease.mem
        _free.append((mem.nbytes, mem))
        _free_bytes += mem.nbytes
        while _free_bytes > _max_free and _free:
            _free_bytes -= _free.pop(0)[0]


def empty_cache() -> None:
    """Drop every free block, handing its memory back to the system.

    Example:
        >>> from retrograd.ops import buffers
        >>> buffers.empty_cache()
        >>> buffers.stats()["free_bytes"]
        0
    """
    global _free_bytes
    with _lock:
        _free.clear()
        _free_bytes = 0


def stats() -> dict:
    """Counts for tests and tuning: blocks in use and free, and the bytes they hold.

    Example:
        >>> from retrograd.ops import buffers
        >>> sorted(buffers.stats())
        ['free_blocks', 'free_bytes', 'used_blocks', 'used_bytes']
    """
    with _lock:
        return {"free_blocks": len(_free), "free_bytes": _free_bytes,
                "used_blocks": len(_leases),
                "used_bytes": sum(x.mem.nbytes for x in _leases.values())}


def configure(enabled: bool | None = None, threshold: int | None = None,
              max_free: int | None = None) -> dict:
    """Change the pool's settings; returns the previous ones (pass them back to restore).

    Args:
        enabled: False turns the pool off (and drops its free blocks).
        threshold: the smallest request, in bytes, served from the pool.
        max_free: the most bytes held in free blocks.

    Example:
        >>> from retrograd.ops import buffers
        >>> old = buffers.configure(threshold=4096)
        >>> _ = buffers.configure(**old)
    """
    global _enabled, _threshold, _max_free, _free_bytes
    with _lock:
        old = {"enabled": _enabled, "threshold": _threshold, "max_free": _max_free}
        if enabled is not None:
            _enabled = bool(enabled)
        if threshold is not None:
            _threshold = int(threshold)
        if max_free is not None:
            _max_free = int(max_free)
        limit = _max_free if _enabled else 0
        while _free_bytes > limit and _free:
            _free_bytes -= _free.pop(0)[0]
        _publish()
    return old


def in_use() -> bool:
    """Whether the pool is on and has handed out blocks that are still in use.

    Example:
        >>> from retrograd.ops import buffers
        >>> isinstance(buffers.in_use(), bool)
        True
    """
    return _enabled and len(_leases) > 0


def pool_min() -> int:
    """The smallest request, in bytes, that the pool serves (huge when it is off).

    Example:
        >>> from retrograd.ops import buffers
        >>> buffers.pool_min() >= 1
        True
    """
    return _threshold if _enabled else sys.maxsize


def _publish() -> None:
    # dispatch keeps pool_min() in a module global: one int comparison on the hot path
    m = sys.modules.get("retrograd.ops.dispatch")
    if m is not None:
        m._POOL_MIN = pool_min()


# Note [Gradient donation]
# A backward pass (without create_graph) makes one gradient per node, hands it to the
# node's rule and then drops it. When the rule's first use of that gradient ``g`` is an
# elementwise kernel whose result has g's shape and dtype, the result may be written
# into g's memory: an in-place pass reads and writes each element once, where a fresh
# output must also be fetched into the cache before it is written (a third of the memory
# traffic of a two-operand op; W7 runs about 10% faster). The engine offers g's array
# (``offer``) just before a rule runs and withdraws it right after; dispatch and the fused
# kernels take it (``result_for``) when one of their operands *is* the offered array.
# That is safe only if
# * the engine owns g's memory, by explicit ownership (``_owned`` in _graph/engine.py):
#   a rule of this pass made it (rules return fresh arrays or views of their incoming
#   gradient, the same fact a leaf's first .grad relies on, Note [Gradient accumulation]),
#   it is writeable, no one was shown it or took it (the user's ``gradient=``, what hooks
#   saw or returned, what a custom Function's backward returned, a leaf's ``.grad``,
#   autograd.grad's answers: the pass's ``taken`` set), and no other node waiting in the
#   pass holds the same memory (one rule may hand g, or views of it, to several inputs);
# * no node records the kernel's inputs and no forward-mode tangent reads them after the
#   kernel ran: grad mode is off and no dual level is open (hvp's forward-over-reverse
#   runs backward with tangents); ``result_for`` checks both;
# * the rule reads g once: ops whose every rule uses g at most once carry
#   ``Op.grad_once``, and the engine offers only when one rule runs (one input needs a
#   gradient); a node with post hooks (which see g after the rule) never offers.
# The offer is thread-local (a rule runs on the thread of its backward pass); a nested
# backward (checkpointing) replaces it and leaves none when it returns.
class _Donation(threading.local):
    array = None  # the array a rule may overwrite, or None


_DONATION = _Donation()


def offer(array) -> None:
    """Engine: let the rule about to run write into ``array``, a gradient the engine owns
    (Note [Gradient donation])."""
    _DONATION.array = array


def withdraw() -> None:
    """Engine: the rule has run; nothing is offered any more."""
    _DONATION.array = None


def result_for(x, y, shape, dtype):
    """The output buffer for an elementwise kernel over ``x`` (and ``y``): the offered
    gradient if it is one of them and has the result's shape and dtype, else ``empty``."""
    d = _DONATION.array
    if d is not None and (d is x or d is y) and d.shape == shape and d.dtype == dtype and \
            not STATE.enabled and not FW.active:  # nothing reads the inputs after the kernel
        _DONATION.array = None  # taken once
        return d
    return empty(shape, dtype)


def _after_fork() -> None:
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


# Note [Heap top padding]
# Below the pool's threshold, arrays come from malloc. glibc gives memory at the top of
# its heap back to the OS whenever more than 128 KiB there is free, and takes it again
# (page faults, 4 KiB at a time) when the next allocation needs it. A training step
# frees and makes the same arrays every step, so whether some of them sit at the heap
# top decides whether a step takes no page fault or hundreds: W4 (WGAN-GP, 64x256
# gradients) ran at 0.93x torch or 1.2x depending on where an unrelated 672-byte frame
# object landed. ``M_TOP_PAD`` makes glibc keep 16 MiB free at the top when it trims or
# grows the heap, so the step's arrays stay mapped; the cost is at most that much
# resident memory. Setting any of these parameters turns off glibc's dynamic mmap
# threshold, which otherwise rises to the size of the largest array freed (up to 32 MiB)
# so that such arrays are reused from the heap: without it, every array over 128 KiB
# outside the pool (``ones_like`` of a 16 MB gradient) is a fresh mapping, faulted in
# page by page (4x slower; W7 lost 8%). So the threshold is set where the dynamic one
# ends (``M_MMAP_THRESHOLD`` 32 MiB, ``M_TRIM_THRESHOLD`` twice that, as glibc pairs
# them). Only glibc has mallopt; ``RETROGRAD_MALLOC_TOP_PAD=<bytes>`` sets the pad (0:
# leave malloc as it is). It is set once, when retrograd is imported.
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # glibc's malloc.h
_MMAP_MAX = 32 * _MIB  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems


def pad_heap_top(nbytes: int) -> bool:
    """Ask glibc to keep ``nbytes`` free at the top of its heap, with the mmap threshold
    where its dynamic one would end (Note [Heap top padding]); False where there is no
    glibc mallopt (other C libraries, other systems).

    Example:
        >>> from retrograd.ops import buffers
        >>> buffers.pad_heap_top(16 << 20) in (True, False)
        True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_TOP_PAD, int(nbytes)) and mallopt(_M_MMAP_THRESHOLD, _MMAP_MAX)
                and mallopt(_M_TRIM_THRESHOLD, 2 * _MMAP_MAX))


_TOP_PAD = int(os.environ.get("RETROGRAD_MALLOC_TOP_PAD", 16 * _MIB))
if _TOP_PAD > 0:
    pad_heap_top(_TOP_PAD)
