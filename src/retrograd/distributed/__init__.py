"""``retrograd.distributed``: PyTorch's ``torch.distributed`` on MPI (through mpi4py).

Start N processes with ``retrograd run --nproc N script.py`` (or ``mpiexec -n N python
script.py``); in the script, ``init_process_group()`` joins them and the collectives
(``all_reduce``, ``broadcast``, ``all_gather``, ...) move tensors between them. Needs
the ``distributed`` extra: ``pip install 'retrograd[distributed]'`` (mpi4py and Open MPI).
Importing this package does not start MPI; ``init_process_group`` does.

Example:
    >>> import retrograd as torch
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group(backend="mpi")
    >>> t = torch.ones(2) * (dist.get_rank() + 1)
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)  # the sum over ranks, on every rank
    >>> t
    tensor([1., 1.])
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from .process_group import (
    Backend,
    DistBackendError,
    DistError,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .reduce_op import ReduceOp
from .work import Work

__all__ = ["Backend", "DistBackendError", "DistError", "GroupMember", "ProcessGroup",
           "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast",
           "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "gather",
           "gather_object", "get_backend", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "irecv", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available",
           "is_torchelastic_launched", "isend", "new_group", "recv", "reduce",
           "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send"]
