"""Run a job of tests/support/_dist_jobs.py on N MPI ranks, one job at a time across xdist workers.

Each job starts real processes with ``mpiexec`` (Open MPI from the ``test`` extra). A
file lock makes the jobs of parallel pytest workers take turns, so that two 3-rank jobs
never share the 2 CI cores at once.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "src")


def mpiexec() -> str:
    pytest.importorskip("mpi4py", reason="the distributed tests need mpi4py (test extra)")
    from retrograd.distributed._mpi import find_mpiexec

    return find_mpiexec()


def mpi_args(n: int) -> list[str]:
    return [mpiexec(), "--allow-run-as-root", "--oversubscribe", "-n", str(n)]


def locked_run(cmd: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    """Run ``cmd`` once no other MPI job of the test session runs."""
    with open(os.path.join(tempfile.gettempdir(), "retrograd-mpi-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=HERE)


def job_env(extra=None) -> dict:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONUNBUFFERED="1")
    env.update(extra or {})
    return env


def run_job(n: int, job: str, *, script: str | None = None, args=(), env=None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """``mpiexec -n n python _dist_jobs.py job`` (or ``script``); returns the finished process."""
    cmd = mpi_args(n) + [sys.executable, script or os.path.join(HERE, "_dist_jobs.py")]
    cmd += [job] if job else []
    cmd += list(args)
    return locked_run(cmd, job_env(env), timeout)
