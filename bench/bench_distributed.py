"""retrograd.distributed benchmark: all_reduce bandwidth against raw mpi4py, W2's training
step on 2 ranks (each half the batch) against 1 rank, and how much of DDP's gradient
communication hides behind backward.

Run ``python bench/bench_distributed.py`` (it starts its own MPI jobs: 2 ranks, then 1),
or ``retrograd run --nproc N bench/bench_distributed.py --worker`` for other sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24]  # float32 elements


def _median_time(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def bandwidth(dist, MPI, torch) -> list[dict]:
    comm = MPI.COMM_WORLD
    n = comm.Get_size()
    rows = []
    for size in SIZES:
        t = torch.ones(size)
        arr = t.numpy()
        reps = max(5, min(200, (1 << 24) // size))
        for _ in range(2):  # warm up both paths
            dist.all_reduce(t)
            comm.Allreduce(MPI.IN_PLACE, arr)
        comm.Barrier()
        ours = _median_time(lambda t=t: dist.all_reduce(t), reps)
        comm.Barrier()
        raw = _median_time(lambda a=arr: comm.Allreduce(MPI.IN_PLACE, a), reps)
        # both ranks' medians, the slower one counts (a collective ends when all do)
        ours, raw = comm.allreduce(ours, op=MPI.MAX), comm.allreduce(raw, op=MPI.MAX)
        bus = 2 * (n - 1) / n * size * 4
        rows.append({"bytes": size * 4, "retrograd_s": ours, "mpi4py_s": raw,
                     "retrograd_GBps": bus / ours / 1e9, "mpi4py_GBps": bus / raw / 1e9,
                     "ratio": raw / ours})
    return rows


def w2_step(dist, torch, batch: int, ddp: bool, reps: int = 15) -> dict:
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    nn = torch.nn
    net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                        nn.Linear(512, 10))
    model = DDP(net) if ddp else net
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(dist.get_rank())
    x = torch.randn(batch, 784, generator=g)
    y = torch.randint(0, 10, (batch,), generator=g)
    lossf = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        lossf(model(x), y).backward()
        opt.step()

    def local_backward():
        opt.zero_grad()
        with model.no_sync():
            lossf(model(x), y).backward()

    for _ in range(2):
        step()
    out = {"step_s": _median_time(step, reps)}
    if ddp:
        flat = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
        out["compute_only_s"] = _median_time(local_backward, reps)
        out["allreduce_alone_s"] = _median_time(lambda: dist.all_reduce(flat), reps)
        out["buckets"] = len(model._buckets)
    return out


def worker() -> None:
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.distributed._mpi import load_mpi

    dist.init_process_group()
    n, r = dist.get_world_size(), dist.get_rank()
    res = {"ranks": n}
    if n > 1:
        res["bandwidth"] = bandwidth(dist, load_mpi(), torch)
        res["w2"] = w2_step(dist, torch, 128 // n, ddp=True)
    else:
        res["w2"] = w2_step(dist, torch, 128, ddp=False)
    if r == 0:
        print("RESULT " + json.dumps(res), flush=True)
    dist.destroy_process_group()


def _job(n: int) -> dict:
    from retrograd.distributed.launch import launch_command

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = launch_command(n, os.path.abspath(__file__), ["--worker"])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main() -> None:
    two, one = _job(2), _job(1)
    print("all_reduce, 2 ranks, float32 (bus bandwidth; median of repeats):")
    print(f"{'bytes':>10} {'retrograd GB/s':>15} {'mpi4py GB/s':>12} {'ratio':>6}")
    for row in two["bandwidth"]:
        print(f"{row['bytes']:>10} {row['retrograd_GBps']:>15.3f} {row['mpi4py_GBps']:>12.3f} "
              f"{row['ratio']:>6.2f}")
    w1, w2 = one["w2"], two["w2"]
    print("\nW2 (MLP 784-512-512-10, SGD), global batch 128, single-threaded BLAS:")
    print(f"  1 rank, batch 128:          {w1['step_s'] * 1e3:7.2f} ms/step")
    print(f"  2 ranks, batch 64 each, DDP: {w2['step_s'] * 1e3:7.2f} ms/step "
          f"(speed-up {w1['step_s'] / w2['step_s']:.2f}x, {w2['buckets']} buckets)")
    comm = w2["allreduce_alone_s"]
    hidden = (w2["compute_only_s"] + comm - w2["step_s"]) / comm if comm > 0 else 0.0
    print(f"  per rank: step without communication (no_sync) "
          f"{w2['compute_only_s'] * 1e3:.2f} ms, all-reduce of all gradients alone "
          f"{comm * 1e3:.2f} ms; share of communication hidden behind backward: "
          f"{max(0.0, min(1.0, hidden)):.0%}")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
        main()
