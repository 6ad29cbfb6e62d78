"""torch.set_num_threads / get_num_threads (Note [Threads] in _core/threads.py): PyTorch's
default and errors, and the BLAS pool actually bounded (threadpoolctl)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import retrograd as R

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2"])
def test_set_num_threads_errors_are_pytorchs(bad):
    errors = []
    for m in (torch, R):
        with pytest.raises(Exception) as e:
            m.set_num_threads(bad)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("env", [{}, {"OMP_NUM_THREADS": "3"}, {"OMP_NUM_THREADS": "1"},
                                 {"MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "2"},
                                 {"MKL_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"},
                                 {"OMP_NUM_THREADS": "0"}, {"OMP_NUM_THREADS": "abc"}])
def test_default_is_pytorchs(env):
    """The root conftest sets one thread for the suite; each case starts from a clean
    environment with just the variables given."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    got = [subprocess.run([sys.executable, "-c", f"import {m} as t; print(t.get_num_threads())"],
                          capture_output=True, text=True, env={**clean, **env},
                          check=True).stdout.strip() for m in ("torch", "retrograd")]
    assert got[0] == got[1], ("torch", got[0], "retrograd", got[1])


def test_set_num_threads_bounds_the_blas_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = R.get_num_threads()
    try:
        R.set_num_threads(1)
        assert R.get_num_threads() == 1
        blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    finally:
        R.set_num_threads(before)
    assert R.get_num_threads() == before
