"""retrograd.distributed on real MPI jobs: collectives against NumPy, failures, timeouts.

The jobs live in _dist_jobs.py; each rank checks its results and exits non-zero on a
mismatch. Single-process behaviour (a world of one) is covered by the doctests.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile

import pytest

from _mpi_launch import HERE, job_env, locked_run, mpiexec, run_job

pytestmark = pytest.mark.xdist_group("mpi")


def _ok(proc, n: int) -> None:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(n):
        assert f"rank {r}/{n} ok" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_numpy(n):
    # all_reduce (5 ops), reduce, broadcast, all_gather(+_into_tensor), reduce_scatter
    # (+_tensor), gather, scatter for 7 dtypes x 3 shapes; all_to_all(_single) with uneven
    # sizes, bool reductions, a non-contiguous tensor, send/recv/isend/irecv, async Work,
    # object collectives, a subgroup and its non-members, and torch's errors
    _ok(run_job(n, "collectives"), n)


def test_all_reduce_fast_path():
    n = 3
    proc = run_job(n, "fastpath")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(n):
        assert f"rank {r}/{n} ok fast path" in proc.stdout, proc.stdout + proc.stderr


# sync: all_reduce's fast path; async: a Work's wait() (both: Note [Waiting with a
# deadline])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_rank_that_raises_stops_the_others_with_its_error(mode):
    proc = run_job(3, "fail", env={"T": "60", "MODE": mode})
    assert proc.returncode != 0
    for r in (0, 2):
        # they learn of it from rank 1's notice at once, long before the 60 s timeout
        line = next((x for x in proc.stdout.splitlines() if x.startswith(f"rank {r} caught")),
                    None)
        assert line is not None, f"rank {r} did not catch it:\n{proc.stdout}\n{proc.stderr}"
        assert "rank 1 raised ValueError: the data file is missing" in line, line
        assert "cannot finish all_reduce" in line
    assert "was not stopped" not in proc.stdout
    assert "ValueError: the data file is missing" in proc.stderr


def test_a_failed_request_in_a_status_is_a_peer_failure_only_with_its_notice():
    # a peer that dies before its notice is read makes Testall/Waitall raise
    # MPI_ERR_IN_STATUS: the notice, when it comes, still names the rank and its error
    proc = run_job(1, "in_status")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rank 0/1 ok in_status" in proc.stdout, proc.stdout + proc.stderr


def test_a_missing_peer_times_out_instead_of_hanging():
    proc = run_job(2, "timeout")
    assert proc.returncode != 0
    assert "rank 0 timed out: [Rank 0] all_reduce timed out after 0:00:01" in proc.stdout, (
        proc.stdout + proc.stderr)


def test_back_to_back_calls_longer_than_the_timeout_do_not_time_out():
    _ok(run_job(2, "steady"), 2)


def test_retrograd_run_sets_torchruns_variables_and_forwards_the_exit_code():
    mpiexec()  # skips without mpi4py
    base = [sys.executable, "-m", "retrograd", "run", "--nproc", "2",
            os.path.join(HERE, "_dist_jobs.py"), "launched"]
    proc = locked_run(base + ["x"], job_env(), 60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in (0, 1):
        assert f"rank {r} of 2 sum 2.0 args ['x']" in proc.stdout, proc.stdout
    assert "runs on MPI" in proc.stderr  # the one-line note for backend="gloo"
    proc = locked_run(base + ["--exit-9-on-1"], job_env(), 60)
    assert proc.returncode == 9, proc.stdout + proc.stderr


def _observations(stdout: str) -> dict:
    """{rank: what _versions_job.py saw} from the lines the ranks print."""
    seen = {}
    for line in stdout.splitlines():
        if line.startswith("rank "):
            _, rank, js = line.split(" ", 2)
            seen[int(rank)] = json.loads(js)
    return seen


def _torch_gloo_observations() -> dict:
    """_versions_job.py on torch's gloo backend, two processes on a free local port."""
    pytest.importorskip("torch")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    script = os.path.join(HERE, "_versions_job.py")
    with open(os.path.join(tempfile.gettempdir(), "retrograd-mpi-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (the cores are the MPI jobs' too)
        procs = [subprocess.Popen([sys.executable, script, "torch", str(r), port],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for r in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    return _observations(outs[0][0] + outs[1][0])


def test_versions_and_graphs_match_torch_gloo():
    # Note [Collectives and versions]: which collectives bump a version counter and
    # which record a copy_ or a div_ in the graph, the leaf and integer errors of AVG, and
    # a saved tensor all-reduced before backward, on 2 ranks: torch 2.13's gloo against
    # retrograd
    ours = run_job(2, "retrograd", script=os.path.join(HERE, "_versions_job.py"))
    assert ours.returncode == 0, ours.stdout + ours.stderr
    ours = _observations(ours.stdout)
    theirs = _torch_gloo_observations()
    assert sorted(ours) == sorted(theirs) == [0, 1]
    # gloo's reduce with AVG divides part of a non-root rank's tensor (a bug of gloo's);
    # here non-root tensors keep their values and version
    assert theirs[1].pop("reduce AVG") == 1 and ours[1].pop("reduce AVG") == 0
    for rank in (0, 1):
        diff = {k: (theirs[rank].get(k), ours[rank].get(k))
                for k in set(theirs[rank]) | set(ours[rank])
                if theirs[rank].get(k) != ours[rank].get(k)}
        assert not diff, f"rank {rank}: (torch, retrograd) {diff}"
        assert len(ours[rank]) >= 28
