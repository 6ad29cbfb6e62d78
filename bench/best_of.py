"""The best of N timed steps of workloads, one framework in this process (a steadier
figure than ``run.py``'s medians on a machine that other jobs load; docs/performance.md).

Usage:
    python bench/best_of.py retrograd O1,O4,O6,O7,O8     # or torch; any workload ids
    python bench/best_of.py torch P1 --steps 12

Prints, per workload, the minimum over ``--steps`` steps (after 3 warm-up steps) in ms,
at one thread.
"""

from __future__ import annotations

import argparse
import time

from run import registry


def best_of(m, workload: str, steps: int) -> float:
    """The fastest of ``steps`` timed steps of ``workload`` on framework module ``m``, in
    seconds."""
    step, _grads, _unit = registry()[workload](m, "full")
    for _ in range(3):
        step()
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("framework", choices=("torch", "retrograd"))
    ap.add_argument("workloads", help="comma-separated ids (O1,P1,...)")
    ap.add_argument("--steps", type=int, default=25)
    a = ap.parse_args()
    m = __import__(a.framework)
    m.set_num_threads(1)
    print(a.framework, " | ".join(f"{w} {best_of(m, w, a.steps) * 1e3:.3f} ms"
                                  for w in a.workloads.split(",")))


if __name__ == "__main__":
    main()
