"""Collectives on picklable Python objects, built on the tensor collectives as PyTorch's are.

Each object is pickled into a uint8 tensor; the lengths travel first, then the bytes.
As in PyTorch, unpickling runs code chosen by the sender: use them only among trusted
ranks.

Example:
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group()
    >>> objs = [{"lr": 0.1}, "adam"]
    >>> dist.broadcast_object_list(objs, src=0); objs
    [{'lr': 0.1}, 'adam']
    >>> out = [None]; dist.all_gather_object(out, {"rank": dist.get_rank()}); out
    [{'rank': 0}]
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import io
import pickle

import numpy as np

from .._tensor.tensor import Tensor, _make
from . import collectives as C
from .process_group import ProcessGroup, resolve

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list"]


def _to_bytes(obj) -> np.ndarray:
    f = io.BytesIO()
    pickle.Pickler(f).dump(obj)
    return np.frombuffer(f.getvalue(), np.uint8).copy()


def _from_bytes(raw: np.ndarray):
    return pickle.loads(raw.tobytes())


def _sizes(values) -> Tensor:
    return _make(np.asarray(values, np.int64))


def broadcast_object_list(object_list: list, src: int | None = None,
                          group: ProcessGroup | None = None, device=None,
                          group_src: int | None = None) -> None:
    """Replace ``object_list``'s entries with those of rank ``src`` (same length everywhere)."""
    pg = resolve(group)
    if pg is None:
        return C._not_member("broadcast_object_list")
    root = C._root(pg, src, group_src, "broadcast", "src")
    mine = pg.rank() == root
    blobs = [_to_bytes(o) for o in object_list] if mine else []
    sizes = _sizes([b.size for b in blobs] if mine else [0] * len(object_list))
    C.broadcast(sizes, group=group, group_src=root)
    lengths = sizes._data.tolist()
    data = _make(np.concatenate(blobs) if mine and blobs else np.empty(sum(lengths), np.uint8))
    C.broadcast(data, group=group, group_src=root)
    if not mine:
        off = 0
        for i, n in enumerate(lengths):
            object_list[i] = _from_bytes(data._data[off:off + n])
            off += n


def _gather_blobs(obj, pg, group, dst_root: int | None):
    """Every rank's pickled ``obj`` (on all ranks, or on ``dst_root`` only): a list or None."""
    blob = _to_bytes(obj)
    n = pg.size()
    size = _sizes([blob.size])
    sizes = [_sizes([0]) for _ in range(n)]
    C.all_gather(sizes, size, group=group)
    lengths = [int(s._data[0]) for s in sizes]
    width = max(lengths)
    padded = np.zeros(width, np.uint8)
    padded[:blob.size] = blob
    mine = _make(padded)
    outs = [_make(np.zeros(width, np.uint8)) for _ in range(n)]
    if dst_root is None:
        C.all_gather(outs, mine, group=group)
    elif pg.rank() == dst_root:
        C.gather(mine, outs, group=group, group_dst=dst_root)
    else:
        C.gather(mine, None, group=group, group_dst=dst_root)
        return None
    return [_from_bytes(o._data[:k]) for o, k in zip(outs, lengths)]


def all_gather_object(object_list: list, obj, group: ProcessGroup | None = None) -> None:
    """Fill ``object_list`` (one slot per group rank) with every rank's ``obj``."""
    pg = resolve(group)
    if pg is None:
        return C._not_member("all_gather_object")
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} slots but the "
                         f"group has {pg.size()} ranks; pass [None] * world_size")
    object_list[:] = _gather_blobs(obj, pg, group, None)


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Every rank's ``obj``, into ``object_gather_list`` on rank ``dst`` only."""
    pg = resolve(group)
    if pg is None:
        return C._not_member("gather_object")
    root = C._root(pg, dst, group_dst, "gather", "dst")
    if pg.rank() == root and (object_gather_list is None
                              or len(object_gather_list) != pg.size()):
        raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                         "rank, with one slot per rank of the group.")
    if pg.rank() != root and object_gather_list is not None:
        raise ValueError("Argument ``object_gather_list`` must NOT be specified on "
                         "non-destination ranks.")
    got = _gather_blobs(obj, pg, group, root)
    if got is not None:
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None,
                        src: int | None = None, group: ProcessGroup | None = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_input_list[i]`` of rank ``src`` into ``scatter_object_output_list[0]``
    on group rank ``i``."""
    pg = resolve(group)
    if pg is None:
        return C._not_member("scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    root = C._root(pg, src, group_src, "scatter", "src")
    items = [None] * pg.size()
    if pg.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError("scatter_object_input_list must have one object per rank on the "
                             "source rank")
        items = list(scatter_object_input_list)
    broadcast_object_list(items, group=group, group_src=root)
    scatter_object_output_list[0] = items[pg.rank()]
