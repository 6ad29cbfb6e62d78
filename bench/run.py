"""Benchmark retrograd against PyTorch (and HIPS autograd / MyGrad if installed).

Usage:
    python bench/run.py                  # every workload, 1 thread, full size
    python bench/run.py -w W1,W2 --threads 2
    python bench/run.py --size tiny      # quick check that everything runs

Each (workload, framework) pair runs in a fresh subprocess; frameworks are
interleaved; each child warms up, then times repeated steps and reports the median.
The parent prints one table of medians and ratios to torch. Gradients of each
framework are checked against torch's on the first step.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS = ("torch", "retrograd")


def _available(name: str) -> bool:
    code = f"import {name}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def _child(workload: str, framework: str, size: str, threads: int, repeats: int,
           min_time: float) -> dict:
    sys.path.insert(0, HERE)
    import numpy as np
    from workloads import WORKLOADS

    if framework == "torch":
        import torch as m

        m.set_num_threads(threads)
    elif framework == "retrograd":
        import retrograd as m
    else:
        raise SystemExit(f"unknown framework {framework}")
    if workload == "W8":
        return _memory_child(m, size)
    step, grads, (unit, scale) = WORKLOADS[workload](m, size)
    g = grads()
    for _ in range(2):
        step()
    times = []
    t_end = time.perf_counter() + min_time
    while len(times) < repeats or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        if len(times) >= 10 * repeats:
            break
    med = statistics.median(times)
    return {"median_s": med, "unit": unit, "scale": scale, "n": len(times),
            "grads": [np.asarray(a, dtype=np.float64).ravel().tolist()[:4096] for a in g]}


def _memory_child(m, size) -> dict:
    """W8: peak resident memory growth over 20 steps of W2."""
    import resource

    from workloads import w2_mlp

    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    step, _, _ = w2_mlp(m, size)
    base = rss_mb()
    peak = base
    for _ in range(20):
        step()
        peak = max(peak, rss_mb())
    return {"median_s": peak - base, "unit": "MB", "scale": 1.0, "n": 20, "grads": []}


def _run_child(workload, framework, args) -> dict:
    env = dict(os.environ)
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(args.threads)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", workload, framework,
           "--size", args.size, "--threads", str(args.threads), "--repeats", str(args.repeats),
           "--min-time", str(args.min_time)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fmt(res: dict) -> str:
    if "error" in res:
        return "error"
    unit, scale = res["unit"], res["scale"]
    if unit == "GB/s":
        return f"{scale / res['median_s']:.2f} GB/s"
    if unit == "MB":
        return f"{res['median_s']:.1f} MB"
    return f"{res['median_s'] * scale:.2f} {unit}"


def _grads_agree(a: dict, ref: dict) -> str:
    import numpy as np

    if "error" in a or "error" in ref or not ref.get("grads"):
        return "-"
    for x, y in zip(a["grads"], ref["grads"]):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or not np.allclose(x, y, rtol=2e-3, atol=2e-4):
            return "MISMATCH"
    return "ok"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-w", "--workloads", default="W1,W2,W3,W4,W5,W6,W7,W8")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", choices=("full", "tiny"), default="full")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timing per child")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds; median taken")
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "FRAMEWORK"))
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1], args.size, args.threads,
                                args.repeats, args.min_time)))
        return 0
    frameworks = [f for f in FRAMEWORKS if _available(f)]
    for extra in ("autograd", "mygrad"):
        if _available(extra):
            frameworks.append(extra)
    wls = args.workloads.split(",")
    results: dict = {w: {f: [] for f in frameworks} for w in wls}
    for _ in range(args.rounds):
        for w in wls:
            for f in frameworks:  # interleaved: torch, retrograd, torch, retrograd, ...
                if f in ("autograd", "mygrad"):
                    continue
                results[w][f].append(_run_child(w, f, args))
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, threads={args.threads}, size={args.size}")
    print(f"{'workload':<9}{'torch':>14}{'retrograd':>14}{'ratio':>8}  grads")
    table = {}
    for w in wls:
        row = {}
        for f in frameworks:
            rs = [r for r in results[w][f] if "error" not in r]
            if rs:
                best = dict(rs[0])
                best["median_s"] = statistics.median(r["median_s"] for r in rs)
                row[f] = best
            elif results[w][f]:
                row[f] = results[w][f][0]
        t, r = row.get("torch", {"error": "absent"}), row.get("retrograd", {"error": "absent"})
        ratio = "-"
        if "error" not in t and "error" not in r and t["median_s"] > 0:
            ratio = f"{r['median_s'] / t['median_s']:.2f}"
        print(f"{w:<9}{_fmt(t):>14}{_fmt(r):>14}{ratio:>8}  {_grads_agree(r, t)}")
        if "error" in r:
            print(f"         retrograd error: {r['error']}")
        table[w] = {"torch": t.get("median_s"), "retrograd": r.get("median_s"), "ratio": ratio}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(table, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
