"""Benchmark retrograd against PyTorch (and HIPS autograd / MyGrad if installed).

Usage:
    python bench/run.py                  # W1-W8, 1 thread, full size
    python bench/run.py -w W1,W2 --threads 2
    python bench/run.py -w programs      # P1-P5; "ops" is O1-O14, "all" everything
    python bench/run.py -w P1 --rounds 1 # one training program
    python bench/run.py --size tiny      # quick check that everything runs
    python bench/run.py -w O9 --frameworks torch,retrograd   # eager columns only

Workloads (``-w``, comma-separated ids):

- W1-W9, W9L (``workloads.py``): small steps that stress one thing each (W1 200
  elementwise ops, W2/W3 MLPs, W4 WGAN-GP, W5 Hessian, W6 CNN, W7 4M-element
  elementwise, W8 memory growth of W2, W9/W9L per-sample gradients).
- P1-P5 (``programs.py``): whole training programs, one training step timed: P1
  nanoGPT character model (AdamW, clipping), P2 CIFAR ResNet with BatchNorm2d (SGD
  momentum), P3 2-layer LSTM language model with truncated BPTT, P4 makemore's MLP with
  BatchNorm1d, P5 VAE (randn_like, BCE + KL, Adam).
- O1-O14 (``op_workloads.py``): one op's forward + backward at those programs' sizes:
  O1 GELU, O2/O3 embedding (P1's, P3's), O4 layer_norm, O5 batch_norm2d (train), O6
  softmax, O7/O8 cross_entropy (P1's, P3's), O9 scaled_dot_product_attention (causal),
  O10 clip_grad_norm_, O11 AdamW step, O12 SGD momentum step, O13/O14 conv2d 3x3.

Each (workload, framework) pair runs in a fresh subprocess; frameworks are
interleaved; each child warms up, then times repeated steps and reports the median.
The parent prints one table of medians and ratios to torch. Gradients of each
framework are checked against torch's on the first step (``grads`` column: "ok", or
"MISMATCH" with the first differing array and its largest difference); a framework
that fails prints its error under the row, and the table goes on.

The ``compiled`` columns time the same step under ``retrograd.compile`` (its ratio is
to torch eager, as the eager one's), and ``compile s`` the first three calls (trace,
second trace, first replay) less three eager steps. ``--torch-compile`` adds
torch.compile's time (inductor; needs a C compiler, and minutes to compile).
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
COMPILED = ("retrograd-compiled", "retrograd-fused", "torch-compiled")
DEFAULT = "W1,W2,W3,W4,W5,W6,W7,W8"
GROUPS = {"programs": "P1,P2,P3,P4,P5",
          "ops": ",".join(f"O{i}" for i in range(1, 15))}
GROUPS["all"] = ",".join((DEFAULT, "W9,W9L", GROUPS["programs"], GROUPS["ops"]))


def registry() -> dict:
    """Every workload by id: ``workloads.py``'s, ``programs.py``'s, ``op_workloads.py``'s."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from op_workloads import OP_WORKLOADS
    from programs import PROGRAMS
    from workloads import WORKLOADS

    return {**WORKLOADS, **PROGRAMS, **OP_WORKLOADS}


def _available(name: str) -> bool:
    code = f"import {name}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def _child(workload: str, framework: str, size: str, threads: int, repeats: int,
           min_time: float) -> dict:
    import numpy as np

    WORKLOADS = registry()
    if framework.startswith("torch"):
        import torch as m

        m.set_num_threads(threads)
    elif framework.startswith("retrograd"):
        import retrograd as m
    else:
        raise SystemExit(f"unknown framework {framework}")
    if workload == "W8":
        return _memory_child(m, size)
    compiled = framework.endswith(("-compiled", "-fused"))
    step, grads, (unit, scale) = WORKLOADS[workload](m, size)
    if compiled:
        mode = "max-autotune" if framework.endswith("-fused") else None
        step, g, compile_s = _compiled(m, WORKLOADS[workload], size, step, grads, mode)
    else:
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
    out = {"median_s": med, "unit": unit, "scale": scale, "n": len(times),
           "grads": [np.asarray(a, dtype=np.float64).ravel().tolist()[:4096] for a in g]}
    if compiled:
        out["compile_s"] = compile_s
    return out


def _compiled(m, make, size, eager_step, eager_grads, mode=None):
    """The compiled step, gradients to compare with torch's, and the compile time.
    ``grads()`` of a fresh instance after three compiled steps must equal those of
    another fresh instance after three eager steps (they agree when the compiled steps
    updated everything as eager steps do); otherwise the child fails. The generator is
    reseeded before each run of steps and each ``grads()``, so workloads that draw
    (P5's ``randn_like``) draw alike."""
    import numpy as np

    first = eager_grads()  # (compared with torch's first-step gradients)
    step, grads, _ = make(m, size)
    compiled = m.compile(step, mode=mode)
    m.manual_seed(0)
    t0 = time.perf_counter()
    for _ in range(3):
        compiled()
    t1 = time.perf_counter()
    for _ in range(3):
        eager_step()
    t2 = time.perf_counter()
    ref_step, ref_grads, _ = make(m, size)
    m.manual_seed(0)
    for _ in range(3):
        ref_step()
    m.manual_seed(1)
    mine = grads()
    m.manual_seed(1)
    ref = ref_grads()
    for a, b in zip(mine, ref):
        if not np.allclose(a, b, rtol=1e-4, atol=1e-6):
            raise SystemExit("compiled steps differ from eager steps")
    return compiled, first, max(0.0, (t1 - t0) - (t2 - t1))


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
        return "-" if res["error"] == "absent" else "error"
    unit, scale = res["unit"], res["scale"]
    if unit == "GB/s":
        return f"{scale / res['median_s']:.2f} GB/s"
    if unit == "MB":
        return f"{res['median_s']:.1f} MB"
    return f"{res['median_s'] * scale:.2f} {unit}"


# Note [Tolerance of the gradient check]
# Each element may differ by 2e-3 of itself plus 2e-4, or by 2e-5 of the array's
# largest magnitude (about 170 float32 ulps of it), whichever is larger. The second
# term is for reductions whose results cancel: O13's conv2d weight gradient sums 32,768
# products into values up to 653, and torch's float32 answer is 3.6e-3 from the float64
# one (retrograd's 2e-4) on elements near 0, where 2e-3 of the element allows nothing.
def _grads_agree(a: dict, ref: dict) -> str:
    """"ok" when every array matches torch's up to float32 rounding (Note [Tolerance of
    the gradient check]), else "MISMATCH" with the first array that does not and its
    largest difference.

    >>> _grads_agree({"grads": [[1.0, 0.5]]}, {"grads": [[1.0, 0.4]]})
    'MISMATCH [0] max diff 0.1'
    """
    import numpy as np

    if "error" in a or "error" in ref or not ref.get("grads"):
        return "-"
    for i, (x, y) in enumerate(zip(a["grads"], ref["grads"])):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return f"MISMATCH [{i}] shape {x.shape} vs {y.shape}"
        atol = max(2e-4, 2e-5 * float(np.abs(y).max(initial=0.0)))
        if not np.allclose(x, y, rtol=2e-3, atol=atol):
            return f"MISMATCH [{i}] max diff {float(np.abs(x - y).max()):.3g}"
    return "ok"


def _ratio(a: dict, t: dict) -> str:
    if "error" in a or "error" in t or not t["median_s"] > 0:
        return "-"
    return f"{a['median_s'] / t['median_s']:.2f}"


def _frameworks(args, ap) -> list:
    """The columns to run: those named by ``--frameworks``, else every one installed."""
    known = FRAMEWORKS + ("autograd", "mygrad") + COMPILED
    if args.frameworks:
        chosen = args.frameworks.split(",")
        if any(f not in known for f in chosen):
            ap.error(f"--frameworks: choose from {','.join(known)}")
        return [f for f in known if f in chosen]
    frameworks = [f for f in FRAMEWORKS if _available(f)]
    for extra in ("autograd", "mygrad"):
        if _available(extra):
            frameworks.append(extra)
    if "retrograd" in frameworks:
        frameworks.append("retrograd-compiled")
        if _available("numba"):
            frameworks.append("retrograd-fused")
    if args.torch_compile and "torch" in frameworks:
        frameworks.append("torch-compiled")
    return frameworks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-w", "--workloads", default=DEFAULT,
                    help="ids (W1.., P1.., O1..) or groups: programs, ops, all")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", choices=("full", "tiny"), default="full")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timing per child")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds; median taken")
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "FRAMEWORK"))
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--frameworks", help="only these columns, e.g. "
                    "torch,retrograd,retrograd-compiled (default: every one installed)")
    ap.add_argument("--torch-compile", action="store_true",
                    help="also time torch.compile (inductor: needs a C compiler)")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], args.child[1], args.size, args.threads,
                                args.repeats, args.min_time)))
        return 0
    frameworks = _frameworks(args, ap)
    wls = ",".join(GROUPS.get(w, w) for w in args.workloads.split(",")).split(",")
    unknown = [w for w in wls if w not in registry() and w != "W8"]
    if unknown:
        ap.error(f"unknown workload(s) {','.join(unknown)}")
    results: dict = {w: {f: [] for f in frameworks} for w in wls}
    for _ in range(args.rounds):
        for w in wls:
            for f in frameworks:  # interleaved: torch, retrograd, torch, retrograd, ...
                if f in ("autograd", "mygrad") or (f in COMPILED and w == "W8"):
                    continue
                results[w][f].append(_run_child(w, f, args))
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, threads={args.threads}, size={args.size}")
    tc = "torch-compiled" in frameworks
    fz = "retrograd-fused" in frameworks
    print(f"{'workload':<9}{'torch':>14}{'retrograd':>14}{'ratio':>8}{'compiled':>14}"
          f"{'ratio':>8}{'compile s':>10}" + (f"{'fused':>14}{'ratio':>8}" if fz else "")
          + (f"{'torch.compile':>15}{'ratio':>8}" if tc else "") + "  grads")
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
        c = row.get("retrograd-compiled", {"error": "absent"})
        cratio, cs = _ratio(c, t), "-"
        if "compile_s" in c:
            cs = f"{c['compile_s']:.2f}"
        line = f"{w:<9}{_fmt(t):>14}{_fmt(r):>14}{ratio:>8}"
        line += f"{_fmt(c) if w != 'W8' else '-':>14}{cratio:>8}{cs:>10}"
        fr = row.get("retrograd-fused", {"error": "absent"})
        if fz:
            line += f"{_fmt(fr) if w != 'W8' else '-':>14}{_ratio(fr, t):>8}"
        if tc:
            tcr = row.get("torch-compiled", {"error": "absent"})
            line += f"{_fmt(tcr) if w != 'W8' else '-':>15}{_ratio(tcr, t):>8}"
        agree = _grads_agree(r, t)
        if w != "W8" and agree == "ok" and "error" not in c:
            agree = _grads_agree(c, t)
        if w != "W8" and agree == "ok" and fz and "error" not in fr:
            agree = _grads_agree(fr, t)
        print(f"{line}  {agree}")
        for f, res in (("torch", t), ("retrograd", r), ("retrograd-compiled", c),
                       ("retrograd-fused", fr)):
            if "error" in res and res["error"] != "absent":
                print(f"         {f} error: {res['error']}")
        table[w] = {"torch": t.get("median_s"), "retrograd": r.get("median_s"), "ratio": ratio,
                    "compiled": c.get("median_s"), "compiled_ratio": cratio,
                    "compile_s": c.get("compile_s"), "fused": fr.get("median_s") if fz else None}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(table, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
