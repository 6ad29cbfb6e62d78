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
                if op == "AVG" and not t.dtype.is_floating_point:
                    try:  # gloo's div_ of the sum (Note [Collectives and versions])
                        dist.all_reduce(t, op=dist.ReduceOp.AVG)
                    except RuntimeError as e:
                        assert "can't be cast to the desired output type" in str(e), e
                        check(t, ref(everyone, "SUM"), f"AVG {dtype}: the sum stays")
                        continue
                    raise AssertionError(f"AVG of {dtype} did not raise")
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                want = ref(everyone, op)
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
    assert base._version == v0  # written as PyTorch's backends write: no bump
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
        if os.environ.get("MODE") == "async":  # DDP's way: a Work waited on later
            dist.all_reduce(torch.ones(4), async_op=True).wait()
        else:
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


def _faulty_steps(torch, dist, r: int):
    """(step function, name) for job_hang and job_depart: all_reduce of SIZE bytes, or a
    DDP training step (MODE=ddp), with T seconds' timeout."""
    dist.init_process_group(timeout=timedelta(seconds=float(os.environ["T"])))
    if os.environ.get("MODE") != "ddp":
        t = torch.ones(int(os.environ.get("SIZE", "4096")) // 4)
        return lambda: dist.all_reduce(t)
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 64), torch.randn(16, 1)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return step


def _run_faulty(fault) -> None:
    """Eight steps; rank 1 does ``fault()`` at step 5; the others print when and what they
    raise (the test reads it) and raise it again, which ends the job."""
    import retrograd as torch
    import retrograd.distributed as dist

    r = int(os.environ["RANK"])
    step = _faulty_steps(torch, dist, r)
    for i in range(8):
        if r == 1 and i == 5:
            fault()
        t0 = time.monotonic()
        try:
            step()
        except dist.DistBackendError as e:
            kind = "RuntimeError" if isinstance(e, RuntimeError) else "not RuntimeError"
            print(f"rank {r} caught after {time.monotonic() - t0:.2f}s at step {i} "
                  f"({kind}): {e}", flush=True)
            raise
    print(f"rank {r} was not stopped", flush=True)


def job_hang() -> None:
    """Rank 1 hangs (alive, outside MPI) at step 5: the others raise after the timeout.
    (The launcher ends rank 1 once a peer exits with the error.)"""
    def hang():
        print("rank 1 hangs", flush=True)
        time.sleep(600)
    _run_faulty(hang)


def job_depart() -> None:
    """Rank 1 calls sys.exit(0) at step 5, the process group still up: the others raise
    at once, naming it (Note [Failure notices])."""
    def depart():
        print("rank 1 leaves", flush=True)
        sys.exit(0)
    _run_faulty(depart)


def job_steady() -> None:
    """Back-to-back calls for longer than the timeout, each far shorter, time nothing out:
    each wait's clock starts with its call (Note [Waiting with a deadline])."""
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.distributed import process_group as pgm

    dist.init_process_group(timeout=timedelta(seconds=0.5))
    r, n = dist.get_rank(), dist.get_world_size()
    big = torch.zeros(1 << 18)
    for _ in range(10):
        dist.all_reduce(big)
    t0 = time.monotonic()
    for _ in range(20):
        dist.all_reduce(big)
    # as many calls as take ~1.5 s, the same number on every rank
    count = torch.tensor([1.5 * 20 / (time.monotonic() - t0)])
    dist.all_reduce(count, op=dist.ReduceOp.MAX)
    calls = int(count.item())
    for _ in range(calls):  # the fast path
        dist.all_reduce(big)
    small = torch.ones(4)
    for _ in range(calls):  # AVG's fast path
        dist.all_reduce(small, op=dist.ReduceOp.AVG)
    assert calls > 20 and not pgm.STATE.broken, (calls, pgm.STATE.broken)
    dist.destroy_process_group()
    print(f"rank {r}/{n} ok steady {calls}", flush=True)


def job_in_status() -> None:
    """failure_error on MPI_ERR_IN_STATUS (how Testall/Waitall report a request that
    failed): a peer's failure once its notice is there, else MPI's error given back."""
    import retrograd.distributed as dist
    from retrograd.distributed import process_group as pg
    from retrograd.distributed._mpi import load_mpi

    dist.init_process_group()
    MPI = load_mpi()
    err = MPI.Exception(MPI.ERR_IN_STATUS)
    t0 = time.monotonic()
    assert pg.failure_error(pg.STATE, "all_reduce", err) is err  # no notice, no revocation
    assert time.monotonic() - t0 < 10
    pg.STATE.broken = "rank 1 raised ValueError: the data file is missing"
    e = pg.failure_error(pg.STATE, "all_reduce", err)
    assert isinstance(e, dist.DistBackendError), e
    assert "rank 1 raised ValueError: the data file is missing; this rank cannot finish " \
        "all_reduce without it" in str(e), e
    pg.STATE.broken = ""
    other = MPI.Exception(MPI.ERR_TRUNCATE)
    assert pg.failure_error(pg.STATE, "all_reduce", other) is other
    dist.destroy_process_group()
    print("rank 0/1 ok in_status", flush=True)


def job_fastpath() -> None:
    """all_reduce's fast path (Note [The all_reduce fast path]): in place without a
    version bump (Note
    [Collectives and versions]), and equal to NumPy; what it declines (views with gaps,
    async) too."""
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=20))
    r, n = dist.get_rank(), dist.get_world_size()
    ranks = range(n)

    t = torch.arange(6.0).reshape(2, 3) + r
    mem, version = t._data, t._vc[0]
    dist.all_reduce(t)
    assert t._data is mem and t._vc[0] == version, (t._vc[0], version)
    check(t, sum(np.arange(6.0).reshape(2, 3) + k for k in ranks), "SUM")
    t = torch.full((3,), float(r + 1))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    check(t, [(n + 1) / 2] * 3, "AVG float32")
    t = torch.full((3,), r + 2, dtype=torch.int64)
    try:
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
    except RuntimeError as e:  # gloo's div_ of the sum, refused for integers
        assert "result type Float can't be cast to the desired output type Long" in str(e)
    else:
        raise AssertionError("AVG of int64 did not raise")
    check(t, [sum(k + 2 for k in ranks)] * 3, "AVG int64 holds the sum")
    base = torch.zeros(3, 2) + r
    dist.all_reduce(base[1])  # a row: contiguous, written in place into base
    check(base, [[r, r], [sum(ranks)] * 2, [r, r]], "a contiguous row")
    base = torch.zeros(3, 2) + r
    dist.all_reduce(base[:, 0])  # a column: a view with gaps
    check(base, [[sum(ranks), r]] * 3, "a column")
    # which path each kind of tensor takes: the general one makes a Work
    from retrograd.distributed import collectives

    made = []
    real_work = collectives.Work

    def counting_work(*args, **kwargs):
        made.append(args[1])
        return real_work(*args, **kwargs)

    collectives.Work = counting_work
    fast = "fast"

    def path(t, **kwargs) -> str:
        del made[:]
        dist.all_reduce(t, **kwargs)
        return "general" if made else "fast"

    col = (torch.zeros(3, 2) + r)[:, 1]
    assert path(col) == "general"  # 1-D with gaps: refused by mpi4py itself
    check(col, [sum(ranks)] * 3, "a 1-D view with gaps")
    tr = (torch.arange(6.0).reshape(2, 3) + r).t()  # F-contiguous, not C
    assert path(tr) == "general"
    check(tr, (sum(np.arange(6.0).reshape(2, 3) + k for k in ranks)).T, "a transposed view")
    general = (torch.float16, torch.bfloat16, torch.bool)  # no MPI type, or no MPI SUM
    for dtype in general + (torch.float64, torch.int64, torch.int32, torch.int16,
                            torch.int8, torch.uint8):
        t = torch.ones(3, dtype=dtype)
        assert path(t) == ("general" if dtype in general else fast), dtype
        check(t.float(), [1 if dtype is torch.bool else n] * 3, f"dtype {dtype}")
    p = torch.nn.Parameter(torch.full((2, 2), float(r)))
    assert path(p) == fast and p._vc[0] == 0
    check(p.detach(), [[sum(ranks)] * 2] * 2, "a Parameter")
    t = torch.ones(2, 3)
    assert path(t, group=dist.group.WORLD, op=dist.ReduceOp.AVG) == fast
    check(t, [[1.0] * 3] * 2, "AVG on the world group given")
    ro = torch.from_numpy(np.full(3, float(r), np.float32))
    ro._data.flags.writeable = False
    try:  # refused by mpi4py (read-only), then the general path's error, on every rank
        path(ro)
    except ValueError as e:
        assert "read-only" in str(e) and made, (e, made)
    else:
        raise AssertionError("a read-only tensor was written")
    collectives.Work = real_work
    t = torch.ones(5) * (r + 1)
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed()
    check(t, [sum(k + 1 for k in ranks)] * 5, "async")
    sub = dist.new_group([0, 1])
    t = torch.tensor([float(r)])
    if r < 2:
        dist.all_reduce(t, group=sub)
        check(t, [1.0], "subgroup")
    # an MPI error that is no peer's failure (a receive too small) reaches the caller as
    # it is, and the process group stays usable
    if r == 0:
        dist.send(torch.ones(8), dst=1)
    elif r == 1:
        from mpi4py import MPI

        try:
            dist.recv(torch.zeros(2), src=0)
        except dist.DistBackendError as e:
            raise AssertionError(f"a truncated receive broke the group: {e}") from None
        except MPI.Exception:
            pass
        else:
            raise AssertionError("a truncated receive raised nothing")
    dist.barrier()
    t = torch.ones(2)
    dist.all_reduce(t)
    check(t, [n, n], "after an MPI error")
    dist.destroy_process_group()
    print(f"rank {r}/{n} ok fast path", flush=True)


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
    _ddp_bucket_views(X, Y, r, n)
    print(f"rank {r}/{n} ok ddp", flush=True)


def _ddp_bucket_views(X, Y, r: int, n: int) -> None:
    """gradient_as_bucket_view=True: .grad becomes a view of its bucket slot, stays one
    across steps (zero_grad(set_to_none=False) accumulates into it) and the training still
    equals one process on the whole batch."""
    import retrograd as torch
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    lossf = torch.nn.CrossEntropyLoss()
    ddp = DDP(_mlp(seed=0), bucket_cap_mb=0.0005, gradient_as_bucket_view=True)
    ref = _mlp(seed=0)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5, momentum=0.9)
    mine = slice(6 * r, 6 * r + 6)
    for step in range(4):
        opt.zero_grad(set_to_none=step % 2 == 0)
        lossf(ddp(X[mine]), Y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        lossf(ref(X), Y).backward()
        ref_opt.step()
        views = {id(v) for b in ddp._buckets for v in b.views}
        for name, p in ddp.module.named_parameters():
            assert id(p.grad._data) in views, f"{name}.grad is not a view of its bucket"
    for (name, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
        err = (p - q).abs().max().item()
        assert err < 1e-12, f"bucket views: {name} differs by {err}"


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


_SBN_SIZES = {2: [3, 5], 3: [2, 5, 4]}


def _close(got, want, what: str, tol: float = 1e-12) -> None:
    if got is None and want.numel() == 0:
        return  # an empty slice: the Function returns no gradient, as PyTorch's
    err = (got - want).abs().max().item() if got.numel() else 0.0
    assert got.shape == want.shape and err < tol, f"{what} differs by {err}"


def _bn_cases():
    """(input dims, affine, momentum, sizes per rank count) of the bare SyncBatchNorm job."""
    return [(3, True, 0.1, _SBN_SIZES), (2, False, None, _SBN_SIZES),
            (4, True, 0.3, {2: [1, 4], 3: [0, 4, 3]}), (5, True, 0.1, {2: [2, 2], 3: [1, 1, 2]})]


def job_syncbn() -> None:
    """SyncBatchNorm on n ranks with unequal slices equals BatchNorm on the whole batch."""
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    bns = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d,
           5: torch.nn.BatchNorm3d}
    for nd, affine, momentum, sizes in _bn_cases():
        counts = sizes[n]
        lo, hi = sum(counts[:r]), sum(counts[:r + 1])
        g = torch.Generator().manual_seed(nd)
        shape = (sum(counts), 3) + (2, 3, 2)[:nd - 2]
        sync = torch.nn.SyncBatchNorm(3, momentum=momentum, affine=affine).double()
        ref = bns[nd](3, momentum=momentum, affine=affine).double()
        if affine:
            with torch.no_grad():
                for m in (sync, ref):
                    m.weight.copy_(torch.tensor([0.5, 2.0, -1.5]))
                    m.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
        what = f"{nd}D affine={affine} momentum={momentum} slices {counts}"
        for step in range(2):
            X = torch.randn(shape, generator=g, dtype=torch.float64) * 3 + step
            G = torch.randn(shape, generator=g, dtype=torch.float64)
            x = X[lo:hi].clone().requires_grad_()
            xr = X.clone().requires_grad_()
            for p in list(sync.parameters()) + list(ref.parameters()):
                p.grad = None
            y = sync(x)
            (y * G[lo:hi]).sum().backward()
            yr = ref(xr)
            (yr * G).sum().backward()
            _close(y, yr[lo:hi].detach(), f"output {what}")
            _close(x.grad, xr.grad[lo:hi], f"input grad {what}")
            assert y.grad_fn.name() == "SyncBatchNormBackward", y.grad_fn.name()
            for name in ("weight", "bias") if affine else ():
                grad = getattr(sync, name).grad
                grad = torch.zeros(3, dtype=torch.float64) if grad is None else grad.clone()
                dist.all_reduce(grad)  # each rank holds its slice's share
                _close(grad, getattr(ref, name).grad, f"{name} grad {what}")
            for name in ("running_mean", "running_var"):
                _close(getattr(sync, name), getattr(ref, name), f"{name} {what}")
            assert sync.num_batches_tracked.item() == step + 1
        sync.eval()
        ref.eval()
        X = torch.randn(shape, generator=g, dtype=torch.float64)
        _close(sync(X[lo:hi]), ref(X)[lo:hi], f"eval output {what}")

    if n == 3:  # a group of ranks 0 and 2: they share statistics, rank 1 is on its own
        sub = dist.new_group([0, 2])
        X = torch.randn(9, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        parts = {0: X[:3], 1: X[3:5], 2: X[5:]}
        sync = torch.nn.SyncBatchNorm(2, process_group=sub).double()
        ref = torch.nn.BatchNorm1d(2).double()
        want = ref(torch.cat([parts[0], parts[2]]) if r != 1 else parts[1])
        got = sync(parts[r])
        _close(got, want[:3] if r == 0 else want[3:] if r == 2 else want, "sub-group output")
        _close(sync.running_var, ref.running_var, "sub-group running_var")
    dist.destroy_process_group()
    print(f"rank {r}/{n} ok syncbn", flush=True)


def job_syncbn_one() -> None:
    """Training SyncBatchNorm without a group loads no distributed package; a world of one
    falls back to batch norm."""
    import retrograd as torch

    m = torch.nn.SyncBatchNorm(2)
    m(torch.randn(4, 2)).sum().backward()
    loaded = sorted(k for k in sys.modules if "mpi4py" in k or "distributed" in k)
    assert loaded == [], loaded
    import retrograd.distributed as dist

    dist.init_process_group(timeout=timedelta(seconds=30))
    y = m(torch.randn(4, 2, requires_grad=True))
    assert dist.get_world_size() == 1 and y.grad_fn.name() != "SyncBatchNormBackward"
    dist.destroy_process_group()
    print("rank 0/1 ok syncbn_one", flush=True)


def _convnet():
    import retrograd as torch

    torch.manual_seed(3)
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Tanh(),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 6), nn.BatchNorm1d(6), nn.Tanh(),
                         nn.Linear(6, 3)).double()


def job_syncbn_ddp() -> None:
    """A conv/linear model converted with convert_sync_batchnorm inside DDP, on unequal
    slices, trains as one process with BatchNorm on the whole batch."""
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group(timeout=timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    counts = _SBN_SIZES[n]
    total, lo, hi = sum(counts), sum(counts[:r]), sum(counts[:r + 1])
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_convnet())
    assert [type(m).__name__ for m in model].count("SyncBatchNorm") == 2
    ddp = DDP(model)
    ref = _convnet()
    opt = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.2, momentum=0.9)
    g = torch.Generator().manual_seed(11)
    for step in range(3):
        X = torch.randn(total, 2, 4, 4, generator=g, dtype=torch.float64)
        Y = torch.randint(0, 3, (total,), generator=g)
        x = X[lo:hi].clone().requires_grad_()
        xr = X.clone().requires_grad_()
        opt.zero_grad()
        ref_opt.zero_grad()
        # DDP averages over ranks: scale each rank's summed loss by n / total so that the
        # average is the gradient of the mean loss over the whole batch
        loss = torch.nn.functional.cross_entropy(ddp(x), Y[lo:hi], reduction="sum")
        (loss * (n / total)).backward()
        torch.nn.functional.cross_entropy(ref(xr), Y).backward()
        _close(x.grad / n, xr.grad[lo:hi], f"input grad step {step}")
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            _close(p.grad, q.grad, f"{name} grad step {step}")
        opt.step()
        ref_opt.step()
    for (name, b), c in zip(model.named_buffers(), ref.buffers()):
        _close(b, c, f"buffer {name}")
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        _close(p, q, f"parameter {name}")
    ddp.eval()
    ref.eval()
    X = torch.randn(total, 2, 4, 4, generator=g, dtype=torch.float64)
    _close(ddp(X[lo:hi]), ref(X)[lo:hi], "eval output")
    dist.destroy_process_group()
    print(f"rank {r}/{n} ok syncbn_ddp", flush=True)


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
