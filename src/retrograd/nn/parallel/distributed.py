"""``DistributedDataParallel``: data-parallel training over the ranks of a process group.

Each rank runs the same model on its share of the batch; DDP makes the replicas start
equal (parameters and buffers broadcast from rank 0) and stay equal (every gradient is
averaged over the ranks during ``backward()``), so each rank's optimizer takes the same
step.

Example:
    >>> import retrograd as torch
    >>> import retrograd.distributed as dist
    >>> from retrograd.nn.parallel import DistributedDataParallel as DDP
    >>> dist.init_process_group()
    >>> model = DDP(torch.nn.Linear(3, 1))
    >>> model(torch.ones(2, 3)).sum().backward()
    >>> model.module.weight.grad
    tensor([[2., 2., 2.]])
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import numpy as np

from ... import distributed as dist
from ..._core.grad_mode import is_grad_enabled, no_grad
from ..._tensor.tensor import Tensor, _make
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_MB = 1.0  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB)
_DEFAULT_BUCKET_MB = 25.0


# Note [DDP buckets]
# As in PyTorch's Reducer, the parameters that require grad are packed, in reverse order
# of module.parameters() (roughly the order backward produces their gradients), into
# buckets of at most bucket_cap_mb (the first bucket 1 MiB, so communication starts
# early), one dtype per bucket. Each parameter's post-accumulate-grad hook copies its
# .grad, divided by the world size, into its slot of the bucket's flat buffer; when the
# last slot of a bucket is filled, the bucket's all-reduce (SUM) is launched without
# waiting, and backward goes on computing the earlier layers' gradients while it travels.
# Buckets are launched in index order on every rank (a bucket that is ready early waits
# for its predecessors), because MPI, like NCCL, matches collectives by their order. When
# the last bucket has been launched, the hook waits for all of them and copies the
# averaged values back into each .grad (with gradient_as_bucket_view=True, .grad becomes
# a view of its slot instead, so later backward passes accumulate straight into the
# bucket: no copy either way). The buckets' buffers live as long as the DDP object:
# allocating them every step cost W2 about 1 ms a step in page faults and cache misses.
# With find_unused_parameters=True, the forward pass walks the output's graph and marks
# the parameters it does not reach as ready with zeros; an extra all-reduce of the
# "used" flags tells which parameters no rank used, and their .grad is left untouched
# (None stays None), as PyTorch does.

# Note [DDP progress]
# MPI moves a non-blocking collective forward only inside MPI calls on the rank that
# issued it (this Open MPI has no asynchronous progress thread: ompi_info says "OMPI
# progress: no"), and its ring all-reduce needs both ranks to call in turn: each of its
# rounds waits for the peer's half. So a bucket launched while backward still runs
# travels only when some hook calls MPI. Every post-accumulate-grad hook tests the
# buckets in flight, and each launch tests its bucket at once (the peer may have posted
# its half already). Measured on W2 with 2 ranks (bench/bench_distributed.py), testing
# at launch cut the wait at the end of backward from about 0.5 ms to 0.2 ms; testing also
# before every backward node (pre-hooks on the graph) did not help, and a Python thread
# blocked in MPI_Wait while backward ran crashed Open MPI's libnbc (two threads in its
# progress loop). The end of backward then waits on each bucket's Work, tested against
# the timeout (Note [Waiting with a deadline] in distributed/work.py).


class _Bucket:
    __slots__ = ("params", "offsets", "flat", "views", "pending", "work", "dtype")

    def __init__(self, params: list, dtype):
        self.params = params
        self.dtype = dtype
        sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        # one buffer for the bucket's life (Note [DDP buckets]); views[i] is params[i]'s slot
        self.flat = np.zeros(self.offsets[-1], params[0]._data.dtype)
        self.views = [self.flat[a:b].reshape(p._data.shape)
                      for a, b, p in zip(self.offsets, self.offsets[1:], params)]
        self.pending = 0
        self.work = None


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training (PyTorch's
    ``torch.nn.parallel.DistributedDataParallel``).

    Args:
        module: the model; its parameters and buffers are broadcast from rank 0 here.
        process_group: the group to average over (the world by default).
        broadcast_buffers: broadcast rank 0's buffers (BatchNorm statistics) before each
            forward pass.
        bucket_cap_mb: the size of a gradient bucket (25 MB; the first one is 1 MiB).
        find_unused_parameters: allow parameters that do not take part in a forward pass
            (found by walking the output's graph after each forward).
        static_graph: accepted; the same graph every iteration is what DDP assumes here.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, **kwargs):
        super().__init__()

        if device_ids is not None or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                "{device(type='cpu')}. retrograd runs on the CPU: leave both out")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        pg = dist.process_group.resolve(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of "
                             "process_group; wrap the model only on the group's ranks")
        self.process_group = process_group
        self._pg = pg
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_bytes_cap = int((bucket_cap_mb or _DEFAULT_BUCKET_MB) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._params = params
        self._buckets = self._make_buckets(params)
        self._where = {id(p): (b, i) for b in self._buckets for i, p in enumerate(b.params)}
        self._expect_hooks = False
        self._next = 0
        self._used = None
        self._used_work = None
        # how long the last synced backward waited for its buckets after launching the
        # last one (bench/bench_distributed.py reads it: Note [Measuring overlap])
        self._comm_wait_s = 0.0
        self._verify_same_model()
        if init_sync:
            self._broadcast(list(module.parameters()) + list(module.buffers()))
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # -- construction ---------------------------------------------------------------------
    def _make_buckets(self, params: list) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        open_: dict = {}  # dtype -> (params, bytes)
        cap = min(int(_FIRST_BUCKET_MB * 1024 * 1024), self.bucket_bytes_cap)
        for p in reversed(params):
            cur, size = open_.get(p.dtype, ([], 0))
            cur.append(p)
            size += p.numel() * p.element_size()
            if size >= cap:
                buckets.append(_Bucket(cur, p.dtype))
                cur, size = [], 0
                cap = self.bucket_bytes_cap
            open_[p.dtype] = (cur, size)
        buckets += [_Bucket(cur, dt) for dt, (cur, _) in open_.items() if cur]
        return buckets

    def _verify_same_model(self) -> None:

        mine = [tuple(p.shape) for p in self.module.parameters()]
        every = [None] * self._pg.size()
        dist.all_gather_object(every, mine, group=self.process_group)
        for r, theirs in enumerate(every):
            if theirs != mine:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {self._pg.rank()} has "
                    f"{len(mine)} params with shapes {mine}, while rank {r} has {len(theirs)} "
                    f"with shapes {theirs}; build the same model on every rank")

    def _broadcast(self, tensors: list[Tensor]) -> None:
        """Rank 0's values of ``tensors`` on every rank, one broadcast per dtype."""

        root = self._pg.ranks[0]
        by_dtype: dict = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        for group in by_dtype.values():
            flat = _make(np.concatenate([t._data.reshape(-1) for t in group]))
            dist.broadcast(flat, src=root, group=self.process_group)
            off = 0
            for t in group:
                n = t.numel()
                with no_grad():
                    t._data[...] = flat._data[off:off + n].reshape(t._data.shape)
                t._vc[0] += 1
                off += n

    # -- forward --------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._expect_hooks and self.require_backward_grad_sync:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
                "function outputs participate in calculating loss. Parameters that did not "
                "receive a gradient on this rank: "
                + ", ".join(self._unready_names()))
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs and self._pg.size() > 1:
                self._broadcast(bufs)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        else:
            self._expect_hooks = False
        return out

    def _unready_names(self) -> list[str]:
        names = {id(p): n for n, p in self.module.named_parameters()}
        return [names.get(id(p), "?") for b in self._buckets[self._next:] for p in b.params
                if b.pending]

    def _prepare_for_backward(self, out) -> None:
        self._expect_hooks = True
        self._next = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._ready = set()
        if not self.find_unused_parameters:
            self._used = None
            return
        reached = _reachable_leaves(out)
        self._used = np.array([id(p) in reached for p in self._params], np.int32)
        for p in self._params:
            if id(p) not in reached:
                self._mark_ready(p, None)

    # -- backward -------------------------------------------------------------------------
    def _grad_ready(self, p: Tensor) -> None:
        if not self._expect_hooks:
            return  # no_sync(), or a graph DDP's forward did not make: plain accumulation
        self._mark_ready(p, p.grad)
        for b in self._buckets[:self._next]:  # Note [DDP progress]
            if b.work is not None:
                b.work.is_completed()

    def _mark_ready(self, p: Tensor, grad) -> None:
        if id(p) in self._ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function, 2) Reused parameters in multiple reentrant backward passes. Call "
                "backward once per forward of the DDP model")
        self._ready.add(id(p))
        b, i = self._where[id(p)]
        view = b.views[i]
        if grad is None:
            if p.grad is not None and p.grad._data is view:  # keep an unused .grad's value
                p.grad = _make(view.copy())
            view.fill(0)
        else:  # in place when .grad is already the slot (gradient_as_bucket_view)
            np.divide(grad._data, self._pg.size(), out=view, casting="unsafe")
        b.pending -= 1
        self._launch_ready()

    def _launch_ready(self) -> None:

        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            b = self._buckets[self._next]
            b.work = dist.all_reduce(_make(b.flat), group=self.process_group, async_op=True)
            b.work.is_completed()  # Note [DDP progress]: the peer may have posted already
            self._next += 1
        if self._next == len(self._buckets):
            start = time.perf_counter()
            if self._used is not None:
                used = _make(self._used)
                dist.all_reduce(used, group=self.process_group)
            self._finish(start)

    def _finish(self, start: float) -> None:
        self._expect_hooks = False
        for b in self._buckets:
            b.work.wait()
        self._comm_wait_s = time.perf_counter() - start
        for b in self._buckets:
            for i, p in enumerate(b.params):
                if self._used is not None and not self._used[self._params_index(p)]:
                    continue  # no rank used it: .grad stays as it was
                avg = b.views[i]
                g = p.grad
                if g is not None and g._data is avg:
                    g._vc[0] += 1  # .grad is the slot: averaged in place
                elif self.gradient_as_bucket_view:
                    p.grad = _make(avg)  # the slot becomes .grad, as in PyTorch
                elif g is None:
                    p.grad = _make(avg.copy())
                else:
                    np.copyto(g._data, avg, casting="unsafe")
                    g._vc[0] += 1
            b.work = None

    def _params_index(self, p) -> int:
        idx = getattr(self, "_pindex", None)
        if idx is None:
            idx = self._pindex = {id(q): k for k, q in enumerate(self._params)}
        return idx[id(p)]

    # -- gradient accumulation ------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip the gradient all-reduce for the backward passes of forwards run inside;
        gradients accumulate locally and are averaged by the first synced backward after.

        Example:
            >>> import retrograd as torch
            >>> import retrograd.distributed as dist
            >>> from retrograd.nn.parallel import DistributedDataParallel as DDP
            >>> dist.init_process_group()
            >>> ddp = DDP(torch.nn.Linear(2, 1))
            >>> with ddp.no_sync():
            ...     ddp(torch.ones(1, 2)).sum().backward()
            >>> ddp(torch.ones(1, 2)).sum().backward()  # averages both micro-batches' sum
            >>> ddp.module.bias.grad
            tensor([2.])
            >>> dist.destroy_process_group()
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def extra_repr(self) -> str:
        return ""


def _reachable_leaves(out) -> set:
    """ids of the leaves (parameters) whose gradients flow from the tensors in ``out``."""
    roots, stack = [], [out]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            if x.grad_fn is not None:
                roots.append(x.grad_fn)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    seen, found = set(), set()
    while roots:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            found.add(id(var))
        roots.extend(n for n, _ in node.next_functions)
    return found
