"""The benchmark command runs end to end on tiny sizes (it is a tool, not a test of speed:
no assertion here looks at a time)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_bench_runs_every_workload_on_tiny_sizes():
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "run.py"), "--size", "tiny",
         "--repeats", "1", "--min-time", "0"],
        capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {line.split()[0]: line for line in p.stdout.splitlines()
            if line[:1] == "W" and line[1:2].isdigit()}
    assert sorted(rows) == [f"W{i}" for i in range(1, 9)], p.stdout
    for name, line in rows.items():
        assert "error" not in line, (name, p.stdout)
        if name != "W8":  # W8 measures memory; no gradients to compare
            assert line.rstrip().endswith("ok"), (name, line)


@pytest.mark.slow
def test_checkpoint_bench_runs_on_a_small_model():
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "bench_checkpoint.py"), "--blocks", "4",
         "--width", "32", "--batch", "8", "--segments", "2"],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "gradients identical: True" in p.stdout, p.stdout
    assert "graph after forward" in p.stdout


def test_profile_aggregates_only_samples_inside_step():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "profile_workload", os.path.join(ROOT, "bench", "profile_workload.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    aggregate = mod.aggregate

    raw = "\n".join([
        "<module> (x.py:1);w1.<locals>.step (workloads.py:50);binary (dispatch.py:10) 6",
        "<module> (x.py:1);w1.<locals>.step (workloads.py:51);binary (dispatch.py:12) 2",
        "<module> (x.py:1);w1.<locals>.step (workloads.py:51);record (ops/op.py:3) 2",
        "<module> (x.py:1);import_stuff (x.py:9) 40",
    ])
    total, own, incl = aggregate(raw)
    assert total == 10
    assert own["binary (dispatch.py)"] == 8 and own["record (ops/op.py)"] == 2
    assert incl["w1.<locals>.step (workloads.py)"] == 10
    total, own, _ = aggregate(raw, lines=True)
    assert own["binary (dispatch.py:10)"] == 6
