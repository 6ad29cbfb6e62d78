"""DistributedDataParallel on real MPI jobs (the jobs are in _dist_jobs.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from _mpi_launch import SRC, run_job

pytestmark = pytest.mark.xdist_group("mpi")


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_training_equals_one_process_on_the_whole_batch(n):
    # rank-seeded models (construction must broadcast rank 0's), several buckets, 5 SGD
    # steps with momentum, then no_sync() accumulation over two micro-batches
    proc = run_job(n, "ddp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(" ok ddp") == n


def test_ddp_unused_parameters_and_buffers():
    for job in ("unused", "buffers"):
        proc = run_job(2, job)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.count(f" ok {job}") == 2


def test_import_retrograd_loads_neither_mpi_nor_the_distributed_package():
    code = ("import sys, retrograd, retrograd.nn; "
            "print(sorted(m for m in sys.modules if 'mpi4py' in m or 'distributed' in m "
            "or m.endswith('.parallel')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": SRC}, check=True).stdout
    assert out.strip() == "[]", out
