"""retrograd.distributed benchmark: all_reduce bandwidth against raw mpi4py, W2's training
step on 2 ranks (each half the batch) against 1 rank, and how much of DDP's gradient
communication hides behind backward.

Run ``python bench/bench_distributed.py`` (it starts its own MPI jobs with ``retrograd
run``: 2 ranks, then 1, ``--repeat N`` times in turn, 3 by default). It prints, per buffer
size, retrograd's and mpi4py's bus bandwidth and their ratio (the median of 7
alternating rounds, with the lowest and highest round), then W2's step time on 1 rank
and on 2 ranks under DDP (default, and ``gradient_as_bucket_view=True``) with the
speed-up, and for DDP the step without communication, the all-reduce of the buckets
alone, the wait at the end of backward and the share of the all-reduce hidden behind
backward (Note [Measuring overlap]). ``--no-bandwidth`` skips the bandwidth table;
``--mpiexec-args "--bind-to none"`` passes options to mpiexec. The machine's other load
moves every number: compare runs only with their spread.
``retrograd run --nproc N bench/bench_distributed.py --worker`` runs one job of N ranks
and prints its raw results.
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


def bandwidth(dist, MPI, torch, rounds: int = 7) -> list[dict]:
    """Per size: ``rounds`` alternating rounds of dist.all_reduce and raw mpi4py's
    ``comm.Allreduce(MPI.IN_PLACE, array)`` on the same array; each round's time is the
    median call, the slower rank's; the ratio is mpi4py's time over ours, per round."""
    comm = MPI.COMM_WORLD
    n = comm.Get_size()
    rows = []
    for size in SIZES:
        t = torch.ones(size)
        arr = t.numpy()
        reps = max(5, min(400, (1 << 24) // size))
        for _ in range(3):  # warm up both paths
            dist.all_reduce(t)
            comm.Allreduce(MPI.IN_PLACE, arr)
        ours_r, raw_r = [], []
        for _ in range(rounds):
            comm.Barrier()
            ours = _median_time(lambda t=t: dist.all_reduce(t), reps)
            comm.Barrier()
            raw = _median_time(lambda a=arr: comm.Allreduce(MPI.IN_PLACE, a), reps)
            # a collective ends when every rank's call does: the slower rank counts
            ours_r.append(comm.allreduce(ours, op=MPI.MAX))
            raw_r.append(comm.allreduce(raw, op=MPI.MAX))
        ratios = [r / o for r, o in zip(raw_r, ours_r)]
        bus = 2 * (n - 1) / n * size * 4
        ours, raw = float(np.median(ours_r)), float(np.median(raw_r))
        rows.append({"bytes": size * 4, "retrograd_s": ours, "mpi4py_s": raw,
                     "retrograd_GBps": bus / ours / 1e9, "mpi4py_GBps": bus / raw / 1e9,
                     "ratio": float(np.median(ratios)), "ratio_min": min(ratios),
                     "ratio_max": max(ratios)})
    return rows


def _w2_model(torch):
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


class W2:
    """W2's training step (MLP 784-512-512-10, SGD, cross-entropy) on ``batch`` rows,
    plain or under DDP (``views``: ``gradient_as_bucket_view=True``).

    ``measure`` times one round; the DDP variants are measured in alternating rounds,
    so that the machine's load (shared by other jobs) falls on both alike. With DDP each
    round also times the step without communication (``no_sync``), the blocking
    all-reduce of DDP's buckets alone, and the wait at the end of backward (Note
    [Measuring overlap])."""

    def __init__(self, dist, torch, batch: int, ddp: bool, views: bool = False):
        from retrograd.nn.parallel import DistributedDataParallel as DDP

        self.dist, self.ddp = dist, ddp
        net = _w2_model(torch)
        self.model = DDP(net, gradient_as_bucket_view=views) if ddp else net
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        g = torch.Generator().manual_seed(dist.get_rank() if dist.is_initialized() else 0)
        self.x = torch.randn(batch, 784, generator=g)
        self.y = torch.randint(0, 10, (batch,), generator=g)
        self.lossf = torch.nn.CrossEntropyLoss()
        self.flats = ([torch.zeros(b.offsets[-1]) for b in self.model._buckets]
                      if ddp else [])
        self.rounds: list[dict] = []
        for _ in range(3):
            self.step()

    def step(self) -> None:
        self.opt.zero_grad()
        self.lossf(self.model(self.x), self.y).backward()
        self.opt.step()

    def local_step(self) -> None:
        self.opt.zero_grad()
        with self.model.no_sync():
            self.lossf(self.model(self.x), self.y).backward()
        self.opt.step()

    def alone(self) -> None:
        for f in self.flats:
            self.dist.all_reduce(f)

    def measure(self, reps: int = 15) -> None:
        dist = self.dist
        if not self.ddp:
            self.rounds.append({"step_s": _median_time(self.step, reps)})
            return
        waits = []

        def step():
            self.step()
            waits.append(self.model._comm_wait_s)

        def alone():  # ranks in step: time the transfer, not a late peer
            dist.barrier()
            t = time.perf_counter()
            self.alone()
            return time.perf_counter() - t
        mine = {"step_s": _median_time(step, reps), "exposed_s": float(np.median(waits)),
                "compute_only_s": _median_time(self.local_step, reps),
                "allreduce_alone_s": float(np.median([alone() for _ in range(reps)]))}
        every = dist.group.WORLD.comm.allgather(mine)
        # Note [Measuring overlap]
        # A rank that reaches the end of backward first also waits for its peer to get
        # there, which is imbalance, not communication; the rank that arrives last waits
        # only for what is left of the transfer. So the exposed communication is the
        # smallest of the ranks' waits, and the hidden share is 1 - exposed / (the same
        # all-reduces alone, the ranks in step).
        self.rounds.append({
            "step_s": max(e["step_s"] for e in every),
            "exposed_s": min(e["exposed_s"] for e in every),
            "compute_only_s": max(e["compute_only_s"] for e in every),
            "allreduce_alone_s": min(e["allreduce_alone_s"] for e in every)})

    def summary(self) -> dict:
        out = {k: float(np.median([r[k] for r in self.rounds])) for k in self.rounds[0]}
        if self.ddp:
            out["buckets"] = len(self.model._buckets)
            out["hidden"] = min(1.0, max(0.0, 1 - out["exposed_s"] / out["allreduce_alone_s"]))
        return out


def worker() -> None:
    import retrograd as torch
    import retrograd.distributed as dist
    from retrograd.distributed._mpi import load_mpi

    dist.init_process_group()
    n, r = dist.get_world_size(), dist.get_rank()
    res = {"ranks": n}
    if n > 1:
        if "--no-bandwidth" not in sys.argv:
            res["bandwidth"] = bandwidth(dist, load_mpi(), torch)
        runs = {"w2": W2(dist, torch, 128 // n, ddp=True),
                "w2_views": W2(dist, torch, 128 // n, ddp=True, views=True)}
    else:
        runs = {"w2": W2(dist, torch, 128, ddp=False)}
    for _ in range(5):
        for run in runs.values():
            run.measure()
    for key, run in runs.items():
        res[key] = run.summary()
    if r == 0:
        print("RESULT " + json.dumps(res), flush=True)
    dist.destroy_process_group()


def _job(n: int, args=()) -> dict:
    from retrograd.distributed.launch import launch_command

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    extra = []
    if "--mpiexec-args" in sys.argv:  # e.g. --mpiexec-args "--bind-to none"
        extra = sys.argv[sys.argv.index("--mpiexec-args") + 1].split()
    cmd = launch_command(n, os.path.abspath(__file__), ["--worker", *args], extra=extra)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _spread(xs: list[float], scale: float = 1.0, fmt: str = ".2f") -> str:
    xs = sorted(x * scale for x in xs)
    return f"{np.median(xs):{fmt}} (min {xs[0]:{fmt}}, max {xs[-1]:{fmt}})"


def main() -> None:
    repeat = 3
    if "--repeat" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
    twos, ones = [], []
    for k in range(repeat):  # alternate the jobs, so that the machine's load hits both
        skip = k > 0 or "--no-bandwidth" in sys.argv
        twos.append(_job(2, ["--no-bandwidth"] if skip else []))
        ones.append(_job(1))
    print("all_reduce, 2 ranks, float32 (bus bandwidth of the median call; ratio = mpi4py's "
          "time / retrograd's, median over 7 alternating rounds, with the lowest and "
          "highest round):")
    print(f"{'bytes':>10} {'retrograd GB/s':>15} {'mpi4py GB/s':>12} {'ratio':>6} "
          f"{'(min':>6} {'max)':>6}")
    for row in twos[0].get("bandwidth", []):
        print(f"{row['bytes']:>10} {row['retrograd_GBps']:>15.3f} {row['mpi4py_GBps']:>12.3f} "
              f"{row['ratio']:>6.2f} {row['ratio_min']:>6.2f} {row['ratio_max']:>6.2f}")
    w1 = [o["w2"]["step_s"] for o in ones]
    print(f"\nW2 (MLP 784-512-512-10, SGD), global batch 128, single-threaded BLAS; per job the "
          f"median of 5 rounds of 15 steps; over {repeat} alternating jobs: median (min, max):")
    print(f"  1 rank, batch 128:               {_spread(w1, 1e3)} ms/step")
    for key, what in (("w2", "DDP"), ("w2_views", "DDP(gradient_as_bucket_view=True)")):
        def col(name, scale=1e3, fmt=".2f", key=key):
            return _spread([t[key][name] for t in twos], scale, fmt)
        w2 = [t[key]["step_s"] for t in twos]
        print(f"  2 ranks, batch 64 each, {what}: {_spread(w2, 1e3)} ms/step, speed-up "
              f"{_spread([a / b for a, b in zip(w1, w2)])}x ({twos[0][key]['buckets']} "
              "buckets)")
        print(f"    the same step without communication (no_sync, slower rank): "
              f"{col('compute_only_s')} ms")
        print(f"    all-reduce of the buckets alone (blocking, ranks in step): "
              f"{col('allreduce_alone_s', fmt='.3f')} ms")
        print(f"    end of backward waiting for them (exposed; the last rank to arrive): "
              f"{col('exposed_s', fmt='.3f')} ms")
        print(f"    overlap, share of the all-reduce hidden behind backward "
              f"(1 - exposed / alone): {col('hidden', 100, '.0f')} %")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
        main()
