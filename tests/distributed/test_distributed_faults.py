"""A peer that hangs or leaves: the other ranks raise DistBackendError, in bounded time.

Each job runs under `retrograd run` (the jobs are job_hang and job_depart in
_dist_jobs.py): rank 1 hangs (asleep, outside MPI) or calls ``sys.exit(0)`` at step 5 of
an all_reduce loop or of DDP training, and every other rank prints how long its step took
to raise and what it raised. Bounds on time are generous (a loaded 2-core machine): a
hang raises between 0.5x and 3x the timeout, a departure within 10 s of a 60 s timeout.
Note [Waiting with a deadline] (work.py) and Note [Failure notices] (process_group.py).
"""

from __future__ import annotations

import os
import re
import sys

import pytest

from _mpi_launch import HERE, job_env, locked_run, mpiexec

pytestmark = pytest.mark.xdist_group("mpi")


def _run(n: int, job: str, **env) -> tuple[str, dict[int, float]]:
    """Run ``job`` on ``n`` ranks with ``retrograd run``; (output, {rank: seconds to raise})."""
    mpiexec()  # skips without mpi4py
    cmd = [sys.executable, "-m", "retrograd", "run", "--nproc", str(n),
           os.path.join(HERE, "_dist_jobs.py"), job]
    proc = locked_run(cmd, job_env(env), 55)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "was not stopped" not in out, out
    caught = {}
    for r in range(n):
        if r == 1:
            continue
        m = re.search(rf"^rank {r} caught after ([0-9.]+)s at step 5 \(RuntimeError\): "
                      rf"\[Rank {r}\] (.*)$", proc.stdout, re.M)
        assert m is not None, f"rank {r} did not raise at step 5:\n{out}"
        caught[r] = float(m.group(1))
    return proc.stdout, caught


# 4 KB: the all_reduce fast path; 1 MB: a size whose blocking call a revocation did not
# end (Note [Waiting with a deadline]); DDP: the issue's job (its buckets' Work.wait)
@pytest.mark.parametrize("n,mode,size", [(2, "all_reduce", 4096), (3, "all_reduce", 1 << 20),
                                         (2, "ddp", 0), (3, "ddp", 0)],
                         ids=["2-ranks-4KB", "3-ranks-1MB", "2-ranks-ddp", "3-ranks-ddp"])
def test_a_hung_peer_makes_the_others_raise_after_the_timeout(n, mode, size):
    timeout = 3.0
    out, caught = _run(n, "hang", T=str(timeout), MODE=mode, SIZE=str(size))
    assert "rank 1 hangs" in out
    for r, seconds in caught.items():
        assert 0.5 * timeout <= seconds <= 3 * timeout, (r, seconds, out)
    assert "all_reduce timed out after 0:00:03: a peer did not join it" in out, out
    assert "init_process_group(timeout=...)" in out  # the fix


@pytest.mark.parametrize("n,mode", [(2, "all_reduce"), (3, "ddp")],
                         ids=["2-ranks-all_reduce", "3-ranks-ddp"])
def test_a_peer_that_exits_makes_the_others_raise_at_once(n, mode):
    out, caught = _run(n, "depart", T="60", MODE=mode)
    assert "rank 1 leaves" in out
    for r, seconds in caught.items():
        assert seconds < 10, (r, seconds, out)  # not the 60 s timeout
    line = next(x for x in out.splitlines() if x.startswith("rank 0 caught"))
    assert re.search(r"rank 1 exited without calling destroy_process_group .*; this rank "
                     r"cannot finish all_reduce without it\. Make every rank run the same "
                     r"collectives", line), line
