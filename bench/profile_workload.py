"""Where a workload's time goes: sample it with py-spy and print functions by self time.

Usage:
    pip install py-spy
    python bench/profile_workload.py W3                 # retrograd, 10 s of steps, top 30
    python bench/profile_workload.py W1 --seconds 20 --top 40 --lines

The workload's step runs in a loop in a child process (one thread, as in bench/run.py)
under ``py-spy record --format raw`` (a sampling profiler: the code runs at full speed,
unlike cProfile, which slows every Python call and skews the picture towards them).
Only samples inside the step are counted. ``self`` is time spent in the function's own
code (NumPy calls it makes that have no Python frame count as its own), ``incl`` time
with everything it calls; ``--lines`` breaks self time down by source line.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

_LOOP = """
import sys, time
sys.path.insert(0, {here!r})
from workloads import WORKLOADS
import {framework} as m
if {framework!r} == "torch":
    m.set_num_threads(1)
step = WORKLOADS[{workload!r}](m, "full")[0]
for _ in range(3):
    step()
end = time.perf_counter() + {seconds}
while time.perf_counter() < end:
    step()
"""


def aggregate(raw: str, lines: bool = False) -> tuple:
    """(total samples, Counter self, Counter inclusive) of py-spy raw output, counting
    only stacks inside a workload's ``step``."""
    own = collections.Counter()
    incl = collections.Counter()
    total = 0
    for row in raw.splitlines():
        stack, _, n = row.rpartition(" ")
        if ".step (" not in stack:
            continue
        n = int(n)
        total += n
        frames = stack.split(";")
        names = [re.sub(r":\d+\)$", ")", f) for f in frames]
        own[frames[-1] if lines else names[-1]] += n
        for f in set(names):
            incl[f] += n
    return total, own, incl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--framework", default="retrograd")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=2000, help="samples per second")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--lines", action="store_true", help="self time by source line")
    args = ap.parse_args()
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("py-spy is not installed: pip install py-spy")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = _LOOP.format(here=HERE, framework=args.framework, workload=args.workload,
                        seconds=args.seconds)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "raw.txt")
        subprocess.run([spy, "record", "-r", str(args.rate), "-f", "raw", "-o", out, "--",
                        sys.executable, "-c", code], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            total, own, incl = aggregate(f.read(), args.lines)
    print(f"{args.workload} ({args.framework}): {total} samples inside step()")
    print("  self   incl  function")
    for name, n in own.most_common(args.top):
        key = re.sub(r":\d+\)$", ")", name)
        print(f"{100 * n / total:5.1f}% {100 * incl[key] / total:5.1f}%  {name[:110]}")


if __name__ == "__main__":
    main()
