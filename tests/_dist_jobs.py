"""Jobs that test_distributed*.py runs on several ranks: ``mpiexec -n N python _dist_jobs.py JOB``.

Each rank checks its own results against a NumPy reference (every rank can compute every
rank's input) and exits non-zero on the first mismatch; the test reads the exit codes
and the lines the ranks print.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import numpy as np

DTYPES = ["float32", "float64", "int64", "int32", "uint8", "float16", "bfloat16"]
SHAPES = [(), (5,), (2, 3, 4)]


def data(rank: int, shape, dtype: str, salt: int = 0):
    """Rank ``rank``'s input (small integers: sums and products are exact in every dtype)."""
    import retrograd as torch

    rng = np.random.default_rng(1000 * rank + 7 * salt + len(shape))
    a = rng.integers(1, 4, size=shape)
    return torch.tensor(a.tolist() if shape else int(a), dtype=getattr(torch, dtype))


def ref(arrs, op: str):
    stack = np.stack([np.asarray(a, dtype=np.float64) for a in arrs])
    return {"SUM": stack.sum(0), "AVG": stack.mean(0), "PRODUCT": stack.prod(0),
            "MIN": stack.min(0), "MAX": stack.max(0)}[op]


def check(got, want, what: str) -> None:
    g = np.asarray(got.float().numpy() if got.dtype.is_floating_point else got.numpy(),
                   dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape or not np.allclose(g, w, rtol=1e-2, atol=0):
        raise AssertionError(f"{what}: got {g.tolist()} want {w.tolist()}")


def job_collectives() -> None:
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group("mpi", timeout=timedelta(seconds=20))
    r, n = dist.get_rank(), dist.get_world_size()
    count = 0
    for dtype in DTYPES:
        for shape in SHAPES:
            everyone = [data(k, shape, dtype) for k in range(n)]
            for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
                t = data(r, shape, dtype)
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                want = ref(everyone, op)
                if op == "AVG" and not t.dtype.is_floating_point:
                    want = np.trunc(want)
                check(t, want, f"all_reduce {op} {dtype} {shape}")
                assert t.dtype == everyone[0].dtype
                count += 1
            t = data(r, shape, dtype)
            dist.reduce(t, dst=n - 1, op=dist.ReduceOp.SUM)
            check(t, ref(everyone, "SUM") if r == n - 1 else everyone[r], f"reduce {dtype}")
            t = data(r, shape, dtype)
            dist.broadcast(t, src=1)
            check(t, everyone[1], f"broadcast {dtype} {shape}")
            outs = [torch.zeros(shape, dtype=getattr(torch, dtype)) for _ in range(n)]
            dist.all_gather(outs, data(r, shape, dtype))
            for k in range(n):
                check(outs[k], everyone[k], f"all_gather {dtype} {shape}")
            flat = torch.zeros((n,) + tuple(shape), dtype=getattr(torch, dtype))
            dist.all_gather_into_tensor(flat, data(r, shape, dtype))
            check(flat, np.stack([np.asarray(e.float().numpy()) for e in everyone]),
                  f"all_gather_into_tensor {dtype}")
            if shape:
                cat = torch.zeros((n * shape[0],) + tuple(shape[1:]),
                                  dtype=getattr(torch, dtype))
                dist.all_gather_into_tensor(cat, data(r, shape, dtype))
                check(cat, np.concatenate([e.float().numpy() for e in everyone]),
                      f"all_gather_into_tensor concat {dtype}")
            # reduce_scatter: rank r's i-th input is data(r, salt=i)
            ins = [data(r, shape, dtype, salt=i) for i in range(n)]
            out = torch.zeros(shape, dtype=getattr(torch, dtype))
            dist.reduce_scatter(out, ins, op=dist.ReduceOp.MAX)
            check(out, ref([data(k, shape, dtype, salt=r) for k in range(n)], "MAX"),
                  f"reduce_scatter {dtype}")
            big = torch.stack([data(r, shape, dtype, salt=i) for i in range(n)])
            out = torch.zeros(shape, dtype=getattr(torch, dtype))
            dist.reduce_scatter_tensor(out, big)
            check(out, ref([data(k, shape, dtype, salt=r) for k in range(n)], "SUM"),
                  f"reduce_scatter_tensor {dtype}")
            gl = [torch.zeros(shape, dtype=getattr(torch, dtype)) for _ in range(n)]
            dist.gather(data(r, shape, dtype), gl if r == 0 else None, dst=0)
            if r == 0:
                for k in range(n):
                    check(gl[k], everyone[k], f"gather {dtype}")
            t = torch.zeros(shape, dtype=getattr(torch, dtype))
            src = n - 1
            dist.scatter(t, [data(src, shape, dtype, salt=i) for i in range(n)]
                         if r == src else None, src=src)
            check(t, data(src, shape, dtype, salt=r), f"scatter {dtype}")
            count += 8
    # all_to_all with a different size per pair: rank r sends r + i + 1 values to rank i
    sends = [torch.full((r + i + 1,), float(10 * r + i)) for i in range(n)]
    outs = [torch.zeros(i + r + 1) for i in range(n)]
    dist.all_to_all(outs, sends)
    for i in range(n):
        check(outs[i], np.full(i + r + 1, 10 * i + r), "all_to_all")
    # all_to_all_single with split sizes: rank r sends (i + 1) rows to rank i
    inp = torch.cat([torch.full((i + 1, 2), float(10 * r + i)) for i in range(n)])
    out = torch.zeros(n * (r + 1), 2)
    dist.all_to_all_single(out, inp, [r + 1] * n, [i + 1 for i in range(n)])
    check(out, np.concatenate([np.full((r + 1, 2), 10 * i + r) for i in range(n)]),
          "all_to_all_single")
    # bool: SUM is "or", PRODUCT is "and"
    b = torch.tensor([r == 0, True, False])
    dist.all_reduce(b)
    assert b.tolist() == [True, True, False], b
    b = torch.tensor([r == 0, True, False])
    dist.all_reduce(b, op=dist.ReduceOp.PRODUCT)
    assert b.tolist() == [False, True, False], b
    # a non-contiguous tensor is reduced in place (its base sees the result)
    base = torch.arange(12.0).reshape(3, 4) * (r + 1)
    view = base.t()
    v0 = base._version
    dist.all_reduce(view)
    check(base, np.arange(12.0).reshape(3, 4) * sum(range(1, n + 1)), "non-contiguous")
    assert base._version > v0
    # point to point: a ring, blocking and non-blocking, and a receive from any rank
    right, left = (r + 1) % n, (r - 1) % n
    got = torch.zeros(3)
    ws = [dist.isend(torch.full((3,), float(r)), dst=right), dist.irecv(got, src=left)]
    for w in ws:
        assert w.wait() is True
    check(got, np.full(3, left), "isend/irecv")
    if r == 0:
        senders = set()
        for _ in range(n - 1):
            buf = torch.zeros(1, dtype=torch.int64)
            who = dist.recv(buf, tag=5)
            assert int(buf.item()) == 100 + who, (who, buf)
            senders.add(who)
        assert senders == set(range(1, n)), senders
    else:
        dist.send(torch.tensor([100 + r]), dst=0, tag=5)
    # async: several operations in flight, waited out of order
    ts = [torch.full((1000,), float(r + k)) for k in range(3)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        w.wait()
        assert w.is_completed() and w.is_success()
    for k, t in enumerate(ts):
        check(t, np.full(1000, sum(q + k for q in range(n))), "async all_reduce")
    assert works[0].result()[0] is ts[0]
    # objects
    objs = [None, None] if r else [{"a": [1, 2]}, "x" * 5000]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"a": [1, 2]}, "x" * 5000], objs
    gathered = [None] * n
    dist.all_gather_object(gathered, ("rank", r, "y" * r * 100))
    assert gathered == [("rank", k, "y" * k * 100) for k in range(n)], gathered
    got = [None] * n if r == 1 else None
    dist.gather_object(r * r, got, dst=1)
    if r == 1:
        assert got == [k * k for k in range(n)], got
    one = [None]
    dist.scatter_object_list(one, [f"to {k}" for k in range(n)] if r == 0 else None, src=0)
    assert one == [f"to {r}"], one
    # a subgroup of ranks 1..n-1: collectives inside it, non-members left out
    g = dist.new_group(list(range(1, n)))
    if r == 0:
        assert g == dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
    else:
        assert dist.get_rank(g) == r - 1 and dist.get_world_size(g) == n - 1
        assert dist.get_process_group_ranks(g) == list(range(1, n))
        t = torch.tensor([float(r)])
        dist.all_reduce(t, group=g)
        check(t, [sum(range(1, n))], "subgroup all_reduce")
        t = torch.tensor([float(r)])
        dist.broadcast(t, src=n - 1, group=g)
        check(t, [n - 1], "subgroup broadcast (world rank as src)")
    dist.barrier()
    # errors as torch.distributed raises them
    for call, kind in [
        (lambda: dist.all_gather([torch.zeros(2)], torch.ones(2)), RuntimeError),
        (lambda: dist.send(torch.ones(1), dst=r), ValueError),
        (lambda: dist.broadcast(torch.ones(1), src=n + 3), RuntimeError),
        (lambda: dist.all_reduce([torch.ones(1)]), TypeError),
        (lambda: dist.init_process_group("mpi"), ValueError),
        (lambda: dist.all_reduce(torch.ones(1), op=99), ValueError),
    ]:
        try:
            call()
        except kind:
            pass
        else:
            raise AssertionError(f"no {kind.__name__}")
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {r}/{n} ok {count} checks", flush=True)


def job_fail() -> None:
    """Rank 1 raises before a collective; the others must fail with a clear error."""
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=float(os.environ.get("T", "30"))))
    r = dist.get_rank()
    dist.barrier()
    if r == 1:
        raise ValueError("the data file is missing")
    t0 = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4))
    except dist.DistBackendError as e:
        print(f"rank {r} caught after {time.monotonic() - t0:.1f}s: {e}", flush=True)
        raise
    print(f"rank {r} was not stopped", flush=True)


def job_timeout() -> None:
    """Rank 1 skips a collective (and stays alive); the others time out with a clear error."""
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=1))
    r = dist.get_rank()
    if r == 1:
        time.sleep(2)
        return
    try:
        dist.all_reduce(torch.ones(4))
    except dist.DistBackendError as e:
        print(f"rank {r} timed out: {e}", flush=True)
        sys.exit(3)


def _mlp(seed: int):
    import retrograd as torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8),
                               torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()


def job_ddp() -> None:
    """DDP on n ranks, each with 1/n of the batch, equals one process on the whole batch."""
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(timeout=timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    g = torch.Generator().manual_seed(5)
    X = torch.randn(6 * n, 4, generator=g, dtype=torch.float64)
    Y = torch.randint(0, 3, (6 * n,), generator=g)
    lossf = torch.nn.CrossEntropyLoss()

    # every rank starts from different weights: DDP must broadcast rank 0's
    ddp = DDP(_mlp(seed=r), bucket_cap_mb=0.0005)
    assert len(ddp._buckets) > 1, len(ddp._buckets)
    ref = _mlp(seed=0)
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert torch.equal(p, q), "construction did not broadcast rank 0's parameters"
    assert list(ddp.state_dict())[0] == "module.0.weight", list(ddp.state_dict())

    opt = torch.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5, momentum=0.9)
    mine = slice(6 * r, 6 * r + 6)
    for _ in range(5):
        opt.zero_grad()
        lossf(ddp(X[mine]), Y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        lossf(ref(X), Y).backward()
        ref_opt.step()
    for (name, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
        err = (p - q).abs().max().item()
        assert err < 1e-12, f"{name} differs from one process on the whole batch by {err}"

    # no_sync: two micro-batches per rank, the first without communication
    opt.zero_grad()
    ref_opt.zero_grad()
    halves = (slice(6 * r, 6 * r + 3), slice(6 * r + 3, 6 * r + 6))
    with ddp.no_sync():
        (lossf(ddp(X[halves[0]]), Y[halves[0]]) / 2).backward()
    local = ddp.module[0].bias.grad.clone()
    seen = [None] * n
    dist.all_gather_object(seen, local.tolist())
    assert n == 1 or seen[0] != seen[1], "no_sync() still averaged the gradients"
    (lossf(ddp(X[halves[1]]), Y[halves[1]]) / 2).backward()
    lossf(ref(X), Y).backward()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert (p.grad - q.grad).abs().max().item() < 1e-12, "no_sync accumulation differs"
    print(f"rank {r}/{n} ok ddp", flush=True)


class _Branchy:
    """A model whose ``extra`` layer only rank 0 uses and whose ``never`` layer nobody does."""

    @staticmethod
    def make():
        import retrograd as torch

        class Branchy(torch.nn.Module):
            def __init__(self):
                super().__init__()
                torch.manual_seed(0)
                self.body = torch.nn.Linear(3, 3).double()
                self.extra = torch.nn.Linear(3, 3).double()
                self.never = torch.nn.Linear(3, 3).double()

            def forward(self, x, use_extra: bool):
                h = self.body(x)
                return self.extra(h) if use_extra else h
        return Branchy()


def job_unused() -> None:
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(timeout=timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    x = torch.full((2, 3), float(r + 1), dtype=torch.float64)
    ddp = DDP(_Branchy.make(), find_unused_parameters=True)
    ddp(x, use_extra=(r == 0)).sum().backward()
    assert ddp.module.never.weight.grad is None, "a parameter no rank used got a gradient"
    # extra: only rank 0 computed a gradient; the average over n ranks is that / n
    ref = _Branchy.make()
    ref(torch.full((2, 3), 1.0, dtype=torch.float64), True).sum().backward()
    want = ref.extra.weight.grad / n
    assert (ddp.module.extra.weight.grad - want).abs().max().item() < 1e-12
    # body: everyone used it; the average of the ranks' gradients
    parts = []
    for k in range(n):
        m = _Branchy.make()
        m(torch.full((2, 3), float(k + 1), dtype=torch.float64), k == 0).sum().backward()
        parts.append(m.body.weight.grad)
    want = sum(parts[1:], parts[0]) / n
    assert (ddp.module.body.weight.grad - want).abs().max().item() < 1e-12

    # without find_unused_parameters, the next forward says what went wrong
    plain = DDP(_Branchy.make())
    plain(x, use_extra=True).sum().backward()
    try:
        plain(x, use_extra=True)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e), e
        assert "never.weight" in str(e), e
    else:
        raise AssertionError("an unused parameter went unnoticed")
    print(f"rank {r}/{n} ok unused", flush=True)


def job_buffers() -> None:
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(timeout=timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    with torch.no_grad():
        net[1].running_mean.fill_(float(r))
    ddp = DDP(net)
    assert net[1].running_mean.tolist() == [0.0, 0.0]  # rank 0's, from construction
    with torch.no_grad():
        net[1].running_mean.fill_(float(r + 10))
    ddp.eval()
    ddp(torch.ones(3, 2))  # broadcast_buffers: rank 0's statistics before the forward
    assert net[1].running_mean.tolist() == [10.0, 10.0], net[1].running_mean
    keep = DDP(torch.nn.BatchNorm1d(2), broadcast_buffers=False)
    with torch.no_grad():
        keep.module.running_mean.fill_(float(r))
    keep.eval()
    keep(torch.ones(3, 2))
    assert keep.module.running_mean.tolist() == [float(r)] * 2
    print(f"rank {r}/{n} ok buffers", flush=True)


def job_launched() -> None:
    """Run by `retrograd run`: torchrun's variables are set before the script starts."""
    import retrograd as torch
    import retrograd.distributed as dist

    seen = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR",
                                       "MASTER_PORT")}
    dist.init_process_group("gloo", init_method="env://")
    assert int(seen["RANK"]) == dist.get_rank()
    assert int(seen["WORLD_SIZE"]) == dist.get_world_size()
    t = torch.ones(1)
    dist.all_reduce(t)
    print(f"rank {seen['RANK']} of {seen['WORLD_SIZE']} sum {t.item()} args {sys.argv[2:]}",
          flush=True)
    if "--exit-9-on-1" in sys.argv and dist.get_rank() == 1:
        dist.destroy_process_group()
        sys.exit(9)
    dist.destroy_process_group()


if __name__ == "__main__":
    globals()["job_" + sys.argv[1]]()
