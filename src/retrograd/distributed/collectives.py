"""Collectives and point-to-point messages on tensors, as ``torch.distributed`` has them.

Every operation writes its result into the tensors it was given (in place, with PyTorch's
version counts: Note [Collectives and versions]), returns ``None``, or a ``Work`` with
``async_op=True``. Ranks given as
``src``/``dst`` are world ranks; ``group_src``/``group_dst`` are ranks within ``group``.

Example:
    >>> import retrograd as torch
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group()
    >>> t = torch.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.MAX); t
    tensor([1., 2.])
    >>> out = [torch.zeros(2)]
    >>> dist.all_gather(out, t); out
    [tensor([1., 2.])]
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import warnings

import numpy as np

from .._functions.inplace import _make_inplace
from .._functions.statistics import _div_c
from .._tensor.tensor import Tensor, _make
from . import process_group as _pg
from ._mpi import load_mpi
from .process_group import ProcessGroup, failure_error, resolve
from .reduce_op import RedOpType, ReduceOp, mpi_op
from .work import Work, wait_requests

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
           "all_to_all_single", "barrier", "send", "recv", "isend", "irecv"]


# --------------------------------------------------------------------------------------
# buffers: what MPI reads and writes

def _check_tensor(t, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _check_list(ts, name: str) -> None:
    if not isinstance(ts, list) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        "List[torch.Tensor]\n             but got "
                        f"{type(ts)} instead.")


def _same_dtype(tensors) -> None:
    first = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != first:
            raise ValueError(f"Invalid usage of tensors with different dtypes: found {first} "
                             f"and {t.dtype}; make all the tensors of one collective the same "
                             "dtype")


def _src(t: Tensor) -> np.ndarray:
    """A C-contiguous array of ``t`` to send (the tensor's own memory when it can be)."""
    a = t._data
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _bytes(a: np.ndarray) -> np.ndarray:
    """A C-contiguous array seen as bytes: data movement works for every dtype this way."""
    return a.reshape(-1).view(np.uint8)


def _dst(t: Tensor) -> np.ndarray:
    """Where MPI may write ``t``'s result: its own memory, or a scratch array."""
    a = t._data
    if a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.empty(a.shape, a.dtype)


# Note [Collectives and versions]
# PyTorch's collectives are c10d operators with no autograd kernel whose ADInplaceOrView
# key falls through: the backend writes the result into the tensor's memory and neither
# the version counter nor the graph changes. A tensor saved for backward and then
# all-reduced is used with its new value, silently (PyTorch only warns, at backward, that
# c10d::allreduce_ has no autograd kernel), and a leaf that requires grad is written
# without the in-place error. Versions change through the tensor code a backend runs
# around its transport, and CPU scripts run gloo: it ends all_gather, gather,
# reduce_scatter and all_to_all into a list with ``output.copy_(...)`` (recorded: one
# bump; CopyBackwards on an output that requires grad), and makes AVG, which gloo lacks,
# a SUM followed by ``tensor.div_(group size)`` (div.Scalar, recorded: one bump,
# DivBackward1; an integer tensor raises the in-place cast error after holding the sum;
# a leaf that requires grad raises the leaf error). So here: _store writes without a
# bump (all_reduce, reduce, broadcast, scatter, recv, all_to_all_single), _copy_out is a
# recorded copy_, and _mean_of_sum a recorded div_ (all_reduce's and reduce's AVG).
# Measured against torch 2.13's gloo on 2 ranks (tests/distributed/test_distributed.py::
# test_versions_and_graphs_match_torch_gloo). Left different: gloo's
# all_gather_into_tensor bumps twice and refuses an output that requires grad (an error
# about a Split view), here one recorded copy; gloo's reduce_scatter with AVG bumps twice
# (a copy, then a division), here once (divided before the copy); gloo's reduce with AVG
# leaves non-root tensors partly divided, here they keep their values.


def _store(t: Tensor, buf: np.ndarray) -> None:
    """``buf`` holds ``t``'s new value: copy it in unless it is ``t``'s memory (no version
    bump, no graph: Note [Collectives and versions])."""
    a = t._data
    if buf is not a:
        np.copyto(a, buf.reshape(a.shape), casting="unsafe")


def _copy_out(t: Tensor, buf: np.ndarray) -> None:
    """``t.copy_(buf)``, as gloo ends a collective into a list of outputs (Note
    [Collectives and versions])."""
    t.copy_(_make(buf.reshape(t._data.shape)))


_div_scalar_ = _make_inplace(_div_c, "div_")  # div_.Scalar: DivBackward1, as gloo's C++


def _mean_of_sum(t: Tensor, op, n: int) -> None:
    """AVG: ``t`` holds the group's sum; divide it as gloo does, with a recorded
    ``div_`` (Note [Collectives and versions])."""
    if op == RedOpType.AVG:
        _div_scalar_(t, n)


_HALF = (np.dtype(np.float16),)


def _reducible(a: np.ndarray) -> bool:
    return a.dtype not in _HALF and a.dtype.name != "bfloat16"


def _reduce_buf(t: Tensor) -> np.ndarray:
    """A writeable contiguous array MPI can reduce in place (Note [Reductions on MPI])."""
    a = t._data
    if not _reducible(a):
        return a.astype(np.float32)
    return _dst(t) if a.flags.c_contiguous else np.ascontiguousarray(a)


def _reduce_src(t: Tensor) -> np.ndarray:
    a = t._data
    if not _reducible(a):
        return a.astype(np.float32)
    return _src(t)


def _average(buf: np.ndarray, op, n: int) -> None:
    if op == RedOpType.AVG:
        np.divide(buf, n, out=buf, casting="unsafe")


def _not_member(name: str, depth: int = 0):
    """PyTorch's warning for a non-member, pointed at the user's call (``depth``: frames
    between it and the collective that calls this)."""
    from .process_group import get_rank

    warnings.warn(f"Running {name} on global rank {get_rank()} which does not belong to the "
                  "given group.", stacklevel=3 + depth)


def _root(pg: ProcessGroup, rank, group_rank, name: str, what: str) -> int:
    """The group rank of a root given as a world rank (``src``/``dst``) or a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return int(group_rank)
    rank = 0 if rank is None else int(rank)
    if rank not in pg.ranks:
        if len(pg.ranks) == _world_size():
            raise RuntimeError(f"ProcessGroupMPI::{name}: invalid root rank: {rank} (ranks "
                               f"are 0 to {pg.size() - 1})")
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg.ranks.index(rank)


def _world_size() -> int:
    from .process_group import get_world_size

    return get_world_size()


def _run(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------------------
# reductions

# Note [The all_reduce fast path]
# Most all_reduce calls (DDP's, a metric's) are synchronous SUM or AVG of a contiguous
# tensor of a type MPI reduces natively. Those go straight to mpi4py's
# comm.Iallreduce(IN_PLACE, ...) on the tensor's own memory, tested once at once and, if
# not done, waited on with the deadline of Note [Waiting with a deadline] (work.py): no
# Work, no closure, no copy. (It was mpi4py's blocking comm.Allreduce, bounded by a
# watchdog thread that revoked the communicator on a timeout; a blocking call that must
# send to a peer that hangs does not end when revoked, so a hung peer blocked the others
# forever from 2 KB up: that Note.) SUM on the world (group None) is inlined in
# all_reduce; AVG, and a group given by the caller, go through _sum_all_reduce (one Python
# call more). Everything else (other ops, half types, views with gaps, read-only arrays,
# async_op=True) takes the general path below, which gives the same results.
#
# What the path costs shows at 4 KB, where a raw blocking call takes 1.4-9 us (bench/
# bench_distributed.py compares with raw mpi4py's blocking comm.Allreduce on the same
# buffers). In this interpreter (CPython 3.11 built without PGO) a bytecode is ~25-50
# machine instructions, reading an attribute of an ndarray ~160-200, making an int or a
# small object ~150. So the path:
# - has no closure: the general path's callback lives in _all_reduce, whose cells would
#   otherwise be made on every call, fast or not (~1,000 instructions);
# - looks the dtype up in one dict that also gives the MPI datatype (_MPI_TYPES, filled by
#   bind_mpi with the type mpi4py reads from the array's buffer format); passing
#   (array, datatype) spares mpi4py that format string. A dtype not in it (float16,
#   bool, byte-swapped, ...) is a KeyError, and the general path (~290 instructions);
# - reads ``a.ndim`` rather than ``a.flags`` (an object per call), and the flags only for
#   2-D and up. A 1-D view with gaps or a read-only array is refused by mpi4py, which
#   asks for a contiguous writeable buffer and raises BufferError (ValueError in older
#   versions) before anything is sent: the general path again. mpi4py would accept an
#   F-contiguous (transposed) array and reduce it in memory order, pairing the wrong
#   elements with a peer whose tensor has another layout: hence the flags for 2-D and up
#   (~210 instructions);
# - reads the world's bound Iallreduce and its timeout as module globals, kept in step by
#   _mirror_world (Note [Binding MPI at init]);
# - bumps no version counter, as PyTorch does not (Note [Collectives and versions]);
# - tests for a tensor by reading ``_data`` (an AttributeError sends anything else to the
#   general path, which names the mistake), not by type() and isinstance.
# - tests the request up to 256 times inline (_SPINS) before the deadline loop of
#   wait_requests: a 4 KB call ends within them, and the loop's call, list and clock cost
#   ~1 us a call (0.66-0.71 of raw mpi4py without the inline tests, 0.79-0.81 with).
# The request is libnbc's (Open MPI's non-blocking collectives; the ring algorithm, Note
# [Ring all-reduce] in _mpi.py), where the raw call is coll/tuned's blocking one, and that
# sets the floor: at 4 KB on 2 ranks, raw mpi4py's Iallreduce tested in a Python loop took
# 4.8 us against 3.9 us for its blocking Allreduce (0.81), 4.4 us with MPI_Wait. A
# persistent request (MPI_Allreduce_init, then Start and Test per call) took 3.8 us, as
# fast as the blocking call, but MPI requires every rank to create persistent
# collectives in the same order, and a cache keyed by the tensor's memory would not be
# the same on every rank; DDP's buckets, made in the same order everywhere, could use
# them. Before this change the fast path was the blocking call (0.96-1.0 of raw mpi4py),
# which a hung peer could block forever (Note [Waiting with a deadline] in work.py).
# Measured: docs/distributed.md ("Measured here").
_STATE = _pg.STATE
_NATIVE_SUM = tuple(np.dtype(t) for t in (
    np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
    np.complex64, np.complex128))
_SUM, _AVG = RedOpType.SUM, RedOpType.AVG
_IN_PLACE = None
_MPI_TYPES: dict[np.dtype, object] = {}  # dtype -> MPI.Datatype, for _NATIVE_SUM
_WORLD_IALLREDUCE = None  # bound Iallreduce (Note [Binding MPI at init])
_WORLD_LIMIT = 0.0  # the world's timeout in seconds
_SPINS = range(256)  # tests of the request before the deadline loop (~25 us at 4 KB)


class _MPIError(Exception):
    """Stands for ``mpi4py.MPI.Exception`` until MPI is loaded (nothing raises it)."""


def bind_mpi(MPI) -> None:
    """Look up the MPI objects of the fast path once (called by init_process_group).

    Example:
        >>> from retrograd.distributed._mpi import load_mpi
        >>> from retrograd.distributed.collectives import bind_mpi
        >>> bind_mpi(load_mpi())
    """
    global _IN_PLACE, _MPIError
    _IN_PLACE, _MPIError = MPI.IN_PLACE, MPI.Exception
    for dt in _NATIVE_SUM:  # the datatype mpi4py infers from the buffer's format
        _MPI_TYPES[dt] = MPI.Datatype.fromcode(memoryview(np.empty(0, dt)).format)


def _mirror_world(world) -> None:
    """Keep the fast path's globals in step with STATE.world (process_group's _set_world
    calls this at every change; Note [Binding MPI at init])."""
    global _WORLD_IALLREDUCE, _WORLD_LIMIT
    _WORLD_IALLREDUCE = None if world is None else world.comm.Iallreduce
    _WORLD_LIMIT = 0.0 if world is None else world.timeout.total_seconds()


_pg.ON_MPI.append(bind_mpi)  # Note [Binding MPI at init] (process_group.py)
_pg.ON_WORLD.append(_mirror_world)


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across the group; every rank gets the result in ``tensor``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> t = torch.tensor([1, 2]); dist.all_reduce(t, dist.ReduceOp.SUM); t
        tensor([1, 2])
        >>> dist.destroy_process_group()
    """
    start = _WORLD_IALLREDUCE
    if start is not None and not async_op:
        # Note [The all_reduce fast path]
        try:
            a = tensor._data
            buf = (a, _MPI_TYPES[a.dtype])
        except (AttributeError, KeyError):  # not a tensor (the general path says so), or
            return _all_reduce(tensor, op, group, async_op)  # no MPI SUM for the type
        if a.ndim < 2 or a.flags.c_contiguous:
            if op is _SUM and group is None:
                try:
                    test = start(_IN_PLACE, buf).Test  # op: MPI.SUM
                    for _ in _SPINS:  # a small call ends within these tests
                        if test():
                            break
                    else:  # Note [Waiting with a deadline]
                        wait_requests([test.__self__], None, "all_reduce", _WORLD_LIMIT)
                except _MPIError as e:
                    raise failure_error(_STATE, "all_reduce", e) from None
                except (BufferError, ValueError):
                    pass  # refused before any transfer (gaps, read-only): the general path
                else:
                    return None  # (no version bump: Note [Collectives and versions])
            elif (op is _SUM or op is _AVG) and _sum_all_reduce(tensor, buf, op, group):
                return None
    return _all_reduce(tensor, op, group, async_op)


def _sum_all_reduce(tensor: Tensor, buf: tuple, op, group) -> bool:
    """The fast path for AVG and for a group given by the caller: True when done, False
    where the general path must run (this rank is not a member, and the general path
    warns; or mpi4py refused the buffer before sending anything)."""
    pg = resolve(group)
    if pg is None:
        return False
    try:
        req = pg.comm.Iallreduce(_IN_PLACE, buf)  # op: MPI.SUM
    except (BufferError, ValueError):
        return False
    wait_requests([req], None, "all_reduce", pg.timeout.total_seconds())
    _mean_of_sum(tensor, op, len(pg.ranks))  # (the division is no wait on a peer)
    return True


def _all_reduce(tensor: Tensor, op, group: ProcessGroup | None, async_op: bool) -> Work | None:
    """all_reduce's general path: any op, type or layout, a Work, waits of either kind.

    (A function of its own: its closure's cells would otherwise be made at every call of
    all_reduce, fast path included; Note [The all_reduce fast path].)
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("all_reduce", depth=1)
    MPI = load_mpi()
    buf = _reduce_buf(tensor)
    req = pg.comm.Iallreduce(MPI.IN_PLACE, buf, mpi_op(MPI, op, buf.dtype))

    def finish():
        _store(tensor, buf)
        _mean_of_sum(tensor, op, pg.size())
    return _run(Work(pg, "all_reduce", [req], finish, [tensor]), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (others keep theirs).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> t = torch.tensor([3.0]); dist.reduce(t, dst=0, op=dist.ReduceOp.PRODUCT); t
        tensor([3.])
        >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("reduce")
    root = _root(pg, dst, group_dst, "reduce", "dst")
    MPI = load_mpi()
    if pg.rank() == root:
        buf = _reduce_buf(tensor)
        req = pg.comm.Ireduce(MPI.IN_PLACE, buf, mpi_op(MPI, op, buf.dtype), root)

        def finish():
            _store(tensor, buf)
            _mean_of_sum(tensor, op, pg.size())
    else:
        buf = _reduce_src(tensor)
        req = pg.comm.Ireduce(buf, None, mpi_op(MPI, op, buf.dtype), root)
        finish = None
    return _run(Work(pg, "reduce", [req], finish, [tensor]), async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op=ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` across the group into ``output`` on group rank ``i``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = torch.zeros(2); dist.reduce_scatter(out, [torch.ones(2)]); out
        tensor([1., 1.])
        >>> dist.destroy_process_group()
    """
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    pg = resolve(group)
    if pg is None:
        return _not_member("reduce_scatter")
    n = pg.size()
    if len(input_list) != n:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors but the "
                         f"group has {n} ranks; pass one tensor per rank")
    _same_dtype([output] + input_list)
    for i, t in enumerate(input_list):
        if t.shape != output.shape:
            raise ValueError(f"reduce_scatter: input_list[{i}] has shape {list(t.shape)} but "
                             f"output has shape {list(output.shape)}; they must match")
    send = np.concatenate([_reduce_src(t).reshape(-1) for t in input_list])
    return _reduce_scatter(pg, output, send, op, async_op, "reduce_scatter")


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` across the group; group rank ``i`` gets the ``i``-th of its
    ``size()`` equal chunks (along dim 0, or as a flat stack) in ``output``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = torch.zeros(3); dist.reduce_scatter_tensor(out, torch.arange(3.0)); out
        tensor([0., 1., 2.])
        >>> dist.destroy_process_group()
    """
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = resolve(group)
    if pg is None:
        return _not_member("reduce_scatter_tensor")
    _same_dtype([output, input])
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"input tensor must be the same size as output size times world size "
                         f"(input has {input.numel()} elements, output {output.numel()}, "
                         f"group size {pg.size()})")
    send = _reduce_src(input).reshape(-1)
    return _reduce_scatter(pg, output, send, op, async_op, "reduce_scatter_tensor")


def _reduce_scatter(pg, output, send, op, async_op, name):
    MPI = load_mpi()
    buf = _reduce_buf(output)
    req = pg.comm.Ireduce_scatter_block(send, buf, mpi_op(MPI, op, send.dtype))

    def finish():
        _average(buf, op, pg.size())
        _copy_out(output, buf)
    work = Work(pg, name, [req], finish, [output])
    work._keep = send
    return _run(work, async_op)


# --------------------------------------------------------------------------------------
# data movement

def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every rank of the group.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> t = torch.arange(3); dist.broadcast(t, src=0); t
        tensor([0, 1, 2])
        >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("broadcast")
    root = _root(pg, src, group_src, "broadcast", "src")
    if pg.rank() == root:
        buf = _src(tensor)
        req = pg.comm.Ibcast(_bytes(buf), root)
        finish = None
    else:
        buf = _dst(tensor)
        req = pg.comm.Ibcast(_bytes(buf), root)

        def finish():
            _store(tensor, buf)
    return _run(Work(pg, "broadcast", [req], finish, [tensor]), async_op)


def _check_outputs(name: str, outs: list[Tensor], like: Tensor, n: int) -> None:
    if len(outs) != n:
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid output tensor list at index 0 "
                           f"(expected length {n}, got {len(outs)})")
    _same_dtype([like] + outs)
    for i, t in enumerate(outs):
        if t.shape != like.shape:
            raise RuntimeError(f"ProcessGroupMPI::{name}: invalid tensor size at index {i} "
                               f"(expected {tuple(like.shape)}, got {tuple(t.shape)})")


def _scatter_into(outs: list[Tensor], block: np.ndarray) -> None:
    for t, part in zip(outs, block):
        _copy_out(t, part)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor``, gathered into ``tensor_list`` (one entry per group rank).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = [torch.zeros(2)]; dist.all_gather(out, torch.ones(2)); out
        [tensor([1., 1.])]
        >>> dist.destroy_process_group()
    """
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("all_gather")
    _check_outputs("allgather", tensor_list, tensor, pg.size())
    send = _src(tensor)
    block = np.empty((pg.size(),) + send.shape, send.dtype)
    req = pg.comm.Iallgather(_bytes(send), _bytes(block))
    work = Work(pg, "all_gather", [req], lambda: _scatter_into(tensor_list, block),
                tensor_list)
    work._keep = send
    return _run(work, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, concatenated (or stacked) into ``output_tensor``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = torch.zeros(1, 2); dist.all_gather_into_tensor(out, torch.ones(2)); out
        tensor([[1., 1.]])
        >>> dist.destroy_process_group()
    """
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("all_gather_into_tensor")
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"output tensor must have the same type as input tensor (got "
                        f"{output_tensor.dtype} and {input_tensor.dtype})")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"output tensor size must be equal to world_size times input tensor "
                         f"size (output has {output_tensor.numel()} elements, input "
                         f"{input_tensor.numel()}, group size {pg.size()})")
    send = _src(input_tensor)
    buf = _dst(output_tensor)
    req = pg.comm.Iallgather(_bytes(send), _bytes(buf))
    work = Work(pg, "all_gather_into_tensor", [req], lambda: _copy_out(output_tensor, buf),
                [output_tensor])
    work._keep = send
    return _run(work, async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor``, gathered into ``gather_list`` on rank ``dst`` only.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = [torch.zeros(2)]; dist.gather(torch.ones(2), out, dst=0); out
        [tensor([1., 1.])]
        >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("gather")
    root = _root(pg, dst, group_dst, "gather", "dst")
    send = _src(tensor)
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list(gather_list, "gather_list")
        _check_outputs("gather", gather_list, tensor, pg.size())
        block = np.empty((pg.size(),) + send.shape, send.dtype)
        req = pg.comm.Igather(_bytes(send), _bytes(block), root)
        work = Work(pg, "gather", [req], lambda: _scatter_into(gather_list, block),
                    gather_list)
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        req = pg.comm.Igather(_bytes(send), None, root)
        work = Work(pg, "gather", [req])
    work._keep = send
    return _run(work, async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """``scatter_list[i]`` of rank ``src`` into ``tensor`` on group rank ``i``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> t = torch.zeros(2); dist.scatter(t, [torch.ones(2)], src=0); t
        tensor([1., 1.])
        >>> dist.destroy_process_group()
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("scatter")
    root = _root(pg, src, group_src, "scatter", "src")
    buf = _dst(tensor)
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_list(scatter_list, "scatter_list")
        _check_outputs("scatter", scatter_list, tensor, pg.size())
        send = np.stack([_src(t) for t in scatter_list])
        req = pg.comm.Iscatter(_bytes(send), _bytes(buf), root)
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        send = None
        req = pg.comm.Iscatter(None, _bytes(buf), root)
    work = Work(pg, "scatter", [req], lambda: _store(tensor, buf), [tensor])
    work._keep = send
    return _run(work, async_op)


def _alltoallv(pg, sends: list[np.ndarray], recvs: list[np.ndarray], name: str, finish,
               outputs, async_op):
    scount = [a.nbytes for a in sends]
    rcount = [a.nbytes for a in recvs]
    sbuf = np.concatenate([_bytes(a) for a in sends]) if sends else np.empty(0, np.uint8)
    rbuf = np.empty(sum(rcount), np.uint8)
    sdisp = np.concatenate([[0], np.cumsum(scount)[:-1]]).astype(int).tolist()
    rdisp = np.concatenate([[0], np.cumsum(rcount)[:-1]]).astype(int).tolist()
    MPI = load_mpi()
    req = pg.comm.Ialltoallv([sbuf, (scount, sdisp), MPI.BYTE],
                             [rbuf, (rcount, rdisp), MPI.BYTE])

    def done():
        for r, off, c in zip(recvs, rdisp, rcount):
            _bytes(r)[...] = rbuf[off:off + c]
        finish()
    work = Work(pg, name, [req], done, outputs)
    work._keep = sbuf
    return _run(work, async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Send ``input_tensor_list[i]`` to group rank ``i``; receive rank ``i``'s into
    ``output_tensor_list[i]`` (sizes may differ per pair).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = [torch.zeros(3)]; dist.all_to_all(out, [torch.arange(3.0)]); out
        [tensor([0., 1., 2.])]
        >>> dist.destroy_process_group()
    """
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    pg = resolve(group)
    if pg is None:
        return _not_member("all_to_all")
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: both lists need one tensor per rank ({n}); got "
                         f"{len(output_tensor_list)} outputs and {len(input_tensor_list)} "
                         "inputs")
    _same_dtype(output_tensor_list + input_tensor_list)
    sends = [_src(t) for t in input_tensor_list]
    recvs = [np.empty(t.shape, t._data.dtype) for t in output_tensor_list]

    def finish():
        for t, r in zip(output_tensor_list, recvs):
            _copy_out(t, r)
    return _alltoallv(pg, sends, recvs, "all_to_all", finish, output_tensor_list, async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """``all_to_all`` on one tensor split along dim 0 (equal chunks, or the split sizes).

    Example:
        >>> import retrograd as torch
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> out = torch.zeros(2); dist.all_to_all_single(out, torch.tensor([4.0, 5.0])); out
        tensor([4., 5.])
        >>> dist.destroy_process_group()
    """
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = resolve(group)
    if pg is None:
        return _not_member("all_to_all_single")
    _same_dtype([output, input])
    n = pg.size()

    def splits(t, sizes, what):
        rows = t.shape[0] if t.ndim else 1
        if sizes is None or len(sizes) == 0:
            if rows % n:
                raise ValueError(f"all_to_all_single: {what} has {rows} rows along dim 0, "
                                 f"which do not split evenly over {n} ranks; pass "
                                 f"{what}_split_sizes")
            sizes = [rows // n] * n
        sizes = [int(s) for s in sizes]
        if len(sizes) != n or sum(sizes) != rows:
            raise ValueError(f"all_to_all_single: {what}_split_sizes {sizes} must have one "
                             f"entry per rank ({n}) summing to dim 0 of {what} ({rows})")
        a = _src(t).reshape(rows, -1)
        bounds = np.cumsum([0] + sizes)
        return [a[bounds[i]:bounds[i + 1]] for i in range(n)]

    sends = splits(input, input_split_sizes, "input")
    outbuf = _dst(output)
    recvs = splits(_make(outbuf), output_split_sizes, "output")
    return _alltoallv(pg, sends, recvs, "all_to_all_single", lambda: _store(output, outbuf),
                      [output], async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids=None) -> Work | None:
    """Wait until every rank of the group has reached the barrier.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> dist.barrier()
        >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    if pg is None:
        return _not_member("barrier")
    return _run(Work(pg, "barrier", [pg.comm.Ibarrier()]), async_op)


# --------------------------------------------------------------------------------------
# point to point

def _peer(pg, rank, group_rank, what: str) -> int:
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is None:
        if rank is None:
            raise ValueError(f"Must specify either {what} or group_{what}")
        if rank not in pg.ranks:
            raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank "
                             f"{rank}: ranks of this group are {pg.ranks}")
        group_rank = pg.ranks.index(rank)
    if group_rank == pg.rank():
        kind = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                         "rank of the current process.")
    return group_rank


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    """Send ``tensor`` to rank ``dst`` without waiting; returns a ``Work``.

    Example:
        >>> import retrograd.distributed as dist
        >>> callable(dist.isend)  # needs two ranks: see docs/distributed.md
        True
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("isend")
    peer = _peer(pg, dst, group_dst, "dst")
    send = _src(tensor)
    work = Work(pg, "send", [pg.comm.Isend(_bytes(send), dest=peer, tag=tag)])
    work._keep = send
    return work


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    """Receive into ``tensor`` from rank ``src`` (any rank if None) without waiting.

    Example:
        >>> import retrograd.distributed as dist
        >>> callable(dist.irecv)  # needs two ranks: see docs/distributed.md
        True
    """
    _check_tensor(tensor, "tensor")
    pg = resolve(group)
    if pg is None:
        return _not_member("irecv")
    MPI = load_mpi()
    peer = (MPI.ANY_SOURCE if src is None and group_src is None
            else _peer(pg, src, group_src, "src"))
    buf = _dst(tensor)
    req = pg.comm.Irecv(_bytes(buf), source=peer, tag=tag)
    return Work(pg, "recv", [req], lambda: _store(tensor, buf), [tensor],
                statuses=[MPI.Status()])


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once the message has left)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's rank
    (-1 outside ``group``)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank()
