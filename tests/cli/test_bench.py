"""The benchmark command runs end to end on tiny sizes (it is a tool, not a test of speed:
no assertion here looks at a time)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NEW = ["P1", "P2", "P3", "P4", "P5"] + [f"O{i}" for i in range(1, 15)]


@pytest.mark.slow
@pytest.mark.parametrize("name", NEW)
def test_program_and_op_workloads_match_torch_on_tiny_sizes(name):
    """The tiny size of each training program and op workload runs in both frameworks
    (two timed steps after ``grads()``, as a child of run.py does) and its gradients pass
    run.py's check against torch's."""
    torch = pytest.importorskip("torch")
    import retrograd

    run = _load("run")
    make = run.registry()[name]
    out = {}
    for m in (torch, retrograd):
        step, grads, (unit, _) = make(m, "tiny")
        g = grads()
        step()
        step()
        out[m.__name__] = {"grads": [a.ravel().tolist() for a in g]}
        assert unit == "ms"
    assert run._grads_agree(out["retrograd"], out["torch"]) == "ok"


@pytest.mark.slow
def test_bench_table_for_a_program_that_draws():
    """run.py's table for P5, whose step draws with randn_like: after one seed torch and
    retrograd draw alike, and the compiled column's check (fresh instances, the generator
    reseeded before each run of steps) compares like with like."""
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "run.py"), "-w", "P5", "--size", "tiny",
         "--repeats", "1", "--min-time", "0", "--frameworks",
         "torch,retrograd,retrograd-compiled"],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [line for line in p.stdout.splitlines() if line.startswith("P5 ")]
    assert len(rows) == 1 and "error" not in rows[0], p.stdout
    assert rows[0].rstrip().endswith("ok"), p.stdout


def test_gradient_check_allows_float32_rounding_of_large_sums():
    """An element near 0 of an array whose large elements are sums of many float32
    products may differ by rounding of those (Note [Tolerance of the gradient check]);
    a real difference, or a shape, is a MISMATCH naming the array."""
    agree = _load("run")._grads_agree
    ref = {"grads": [[1.0, 2.0], [653.0, 0.01, -300.0]]}
    assert agree({"grads": [[1.0, 2.0], [653.0, 0.0137, -300.0]]}, ref) == "ok"
    assert agree({"grads": [[1.0, 2.0], [653.0, 0.03, -300.0]]}, ref) == \
        "MISMATCH [1] max diff 0.02"
    assert agree({"grads": [[1.0, 2.01]]}, ref).startswith("MISMATCH [0] max diff")
    assert agree({"grads": [[1.0], [1.0]]}, ref) == "MISMATCH [0] shape (1,) vs (2,)"


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
    aggregate = _load("profile_workload").aggregate

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
