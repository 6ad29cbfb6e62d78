"""Signs of zero on +0/-0 ties in the min/max family, bit for bit against torch 2.13
(Note [Signed zeros on ties] in retrograd/ops/kernels/minmax.py).

Each library runs the same cases in a fresh process under ATEN_CPU_CAPABILITY=default and
avx2 (and the machine's own setting) and under 1 and 3 intra-op threads: the rules depend
on the vector width of the build and on the thread chunks above 32,768 elements.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrograd._core.cpu_capability import cpu_flags

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

# the cases, run by ``python -c CASES lib``: one line per result, its signs
CASES = r'''
import sys, zlib, hashlib
import numpy as np
if sys.argv[1] == "torch":
    import torch as T
else:
    import retrograd as T

def mk(shape, dt, seed, p=0.5):
    v = np.where(np.random.default_rng(seed).random(shape) < p, -0.0, 0.0)
    return T.tensor(v.tolist(), dtype=dt)

def sig(t):
    s = "".join("-" if b else "+" for b in np.signbit(np.array(t.float().tolist())).reshape(-1))
    return s if len(s) < 80 else hashlib.md5(s.encode()).hexdigest()

DT = [T.float32, T.float64, T.float16, T.bfloat16]
EW = [("maximum", T.maximum), ("minimum", T.minimum), ("fmax", T.fmax), ("fmin", T.fmin),
      ("max2", T.max), ("clampT", lambda a, b: T.clamp(a, min=b)),
      ("clampTT", lambda a, b: T.clamp(a, min=b, max=-b)), ("clamp_maxT", T.clamp_max),
      ("clampS", lambda a, b: T.clamp(a, min=0.0)), ("clampS2", lambda a, b: a.clamp(-0.0, 0.0)),
      ("inplace", lambda a, b: a.clone().clamp_min_(b)),
      ("method", lambda a, b: a.minimum(b))]
for n in (1, 5, 16, 17, 33, 40, 65, 100, 257, 40000, 70001):
    for dt in DT:
        seed = zlib.crc32(str(n).encode())
        a, b = mk((n,), dt, seed), mk((n,), dt, seed + 1)
        for name, f in EW:
            print("1d", n, dt, name, sig(f(a, b)))
for name, sa, sb in (("row", (3, 20), (20,)), ("col", (3, 40), (3, 1)), ("0d", (5, 40), ()),
                     ("T", (8, 5), "T"), ("step", (40,), "step"), ("rows", (300, 33), (300, 33))):
    for dt in DT:
        seed = zlib.crc32(name.encode())
        if sb == "T":
            a, b = mk(sa[::-1], dt, seed).t(), mk(sa[::-1], dt, seed + 1).t()
        elif sb == "step":
            a, b = mk((80,), dt, seed)[::2], mk((80,), dt, seed + 1)[::2]
        else:
            a, b = mk(sa, dt, seed), mk(sb, dt, seed + 1)
        for fname, f in EW[:8]:
            print(name, dt, fname, sig(f(a, b)))
for shape in ((1,), (8,), (31,), (32,), (33,), (65,), (257,), (40000,), (70001,), (3, 40),
              (40, 3), (70, 5), (2, 3, 40), (6, 64), (200, 200)):
    for dt in DT:
        for p in (0.5, 0.95, 0.05):
            x = mk(shape, dt, zlib.crc32((str(shape) + str(p)).encode()), p)
            fs = [("amax()", x.amax), ("amin()", x.amin), ("max()", x.max), ("min()", x.min)]
            for d in range(len(shape)):
                fs += [(f"amax{d}", lambda d=d: x.amax(d)), (f"amin{d}", lambda d=d: x.amin(d)),
                       (f"amaxT{d}", lambda d=d: x.transpose(0, -1).amax(d)),
                       (f"max{d}", lambda d=d: x.max(d).values)]
            if len(shape) == 3:
                fs += [("amax01", lambda: x.amax((0, 1))), ("amin02", lambda: x.amin((0, 2)))]
            for name, f in fs:
                print(shape, dt, p, name, sig(f()))
'''

HAS_AVX2 = {"avx2", "fma"} <= cpu_flags()
SETTINGS = [{}, {"ATEN_CPU_CAPABILITY": "default"}, {"OMP_NUM_THREADS": "1"},
            {"OMP_NUM_THREADS": "3"}] + ([{"ATEN_CPU_CAPABILITY": "avx2"}] if HAS_AVX2 else [])


def _run(lib: str, setting: dict) -> list:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(setting)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", CASES, lib], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return [ln.replace("torch.", "") for ln in res.stdout.splitlines()]


@pytest.mark.parametrize("setting", SETTINGS, ids=[",".join(f"{k}={v}" for k, v in s.items())
                                                   or "native" for s in SETTINGS])
def test_signs_of_zero_on_ties_match_torch(setting):
    want, got = _run("torch", setting), _run("retrograd", setting)
    assert len(want) == len(got) > 2000
    bad = [(w, g) for w, g in zip(want, got) if w != g]
    assert not bad, bad[:10]


def test_examples_of_the_issue():
    import retrograd as T
    assert (1 / T.tensor([[-0.0], [0.0]]).amin(0)).item() == float("-inf")
    assert (1 / torch.tensor([[-0.0], [0.0]]).amin(0)).item() == float("-inf")
    for lib in (T, torch):
        r = lib.maximum(lib.tensor(-0.0), lib.tensor(0.0))
        assert str(1 / r) == str(lib.tensor(float("-inf")))


def test_tie_gradients_stay_torchs():
    import retrograd as T
    for lib in (T, torch):
        a = lib.tensor([0.0, -0.0, 1.0], requires_grad=True)
        b = lib.tensor([-0.0, 0.0, 1.0], requires_grad=True)
        lib.maximum(a, b).sum().backward()
        assert a.grad.tolist() == [0.5, 0.5, 0.5] == b.grad.tolist()
        x = lib.tensor([[0.0, -0.0, -1.0]], requires_grad=True)
        x.amax(1).sum().backward()
        assert x.grad.tolist() == [[0.5, 0.5, 0.0]]
        p = lib.tensor([float("nan"), 1.0, 2.0], requires_grad=True)
        q = lib.tensor([1.0, float("nan"), 2.0], requires_grad=True)
        r = lib.fmax(p, q)
        r.sum().backward()
        assert r.tolist()[:2] == [1.0, 1.0]
        assert p.grad.tolist() == [0.0, 1.0, 1.0] and q.grad.tolist() == [1.0, 0.0, 0.0]
