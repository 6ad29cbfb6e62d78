"""The suite is green on any CPU PyTorch supports: retrograd follows PyTorch's kernel
choice for the CPU it runs on (Note [CPU capability] in retrograd/_core/cpu_capability.py), and
these tests check that choice against torch itself under every setting this CPU allows:
ATen's ``ATEN_CPU_CAPABILITY`` (default, avx2, avx512) and oneDNN's ``ONEDNN_MAX_CPU_ISA``.

Each setting runs in a fresh process (both libraries read the variables once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrograd._core.cpu_capability import ONEDNN_ISAS, cpu_capability, cpu_flags

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
X86 = "sse4_1" in cpu_flags()
HAS_AVX2 = {"avx2", "fma"} <= cpu_flags()
HAS_AVX512 = {"avx512vl", "avx512bw", "avx512dq", "fma"} <= cpu_flags()

# every ATen capability this CPU can run, and a oneDNN cap below the CPU's own ISA
CAPABILITIES = ["default"] + (["avx2"] if HAS_AVX2 else []) + (["avx512"] if HAS_AVX512 else [])
SETTINGS = [{"ATEN_CPU_CAPABILITY": c} for c in CAPABILITIES]
if HAS_AVX512:
    SETTINGS += [{"ONEDNN_MAX_CPU_ISA": "AVX2"}, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
                 {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}]
IDS = [",".join(f"{k}={v}" for k, v in s.items()) for s in SETTINGS]


def _env(setting: dict) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")}
    env.update(setting)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests" / "support"),
                                         env.get("PYTHONPATH", "")])
    return env


def _run(code: str, setting: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=_env(setting), capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_PROBE = """
import json, torch
from retrograd._core.cpu_capability import cpu_capability, onednn_isa, onednn_takes
print(json.dumps({
    "aten": [cpu_capability(), torch.backends.cpu.get_cpu_capability()],
    "bf16": [onednn_takes("bfloat16"), torch.ops.mkldnn._is_mkldnn_bf16_supported()],
    "fp16": [onednn_takes("float16"), torch.ops.mkldnn._is_mkldnn_fp16_supported()],
    "isa": onednn_isa()}))
"""


@pytest.mark.parametrize("setting", [{}] + SETTINGS, ids=["native"] + IDS)
def test_kernel_choice_is_torchs(setting):
    """ATen's capability and oneDNN's bfloat16/float16 admission, as torch reports them."""
    got = _run(_PROBE, setting)
    for key in ("aten", "bf16", "fp16"):
        assert got[key][0] == got[key][1], (key, got)
    cap = setting.get("ONEDNN_MAX_CPU_ISA")
    if cap and got["isa"] is not None:
        assert ONEDNN_ISAS.index(got["isa"]) <= ONEDNN_ISAS.index(cap)


_VALUES = """
import json, numpy as np, torch, retrograd as rg
diffs = []
def special(m, dt, x):
    # gelu's signs (of zeros too), infinities and nans; a nan's own sign bit is left out
    # (oneDNN's float16 kernel sets it in its vector loop and not in its tail)
    y = m.nn.functional.gelu(m.tensor(x, dtype=getattr(m, dt))).double()
    return m.where(m.isnan(y), 7.0, m.where(m.isfinite(y), m.where(y.signbit(), -1.0, 1.0), y))
def same(what, f):
    t, r = f(torch).numpy(), f(rg).numpy()
    if t.tobytes() != r.tobytes():
        diffs.append(what)
for dt in ("float32", "float64"):
    for n in (5, 16, 100):
        for name, args in (("uniform_", (-0.3, 2.9)), ("normal_", (0.5, 3.0)),
                           ("normal_", ()), ("log_normal_", (0.5, 0.25))):
            same(f"{name}{args} {dt} {n}", lambda m: getattr(
                m.empty(n, dtype=getattr(m, dt)), name)(*args,
                generator=m.Generator().manual_seed(7)))
    for a, b, n in ((-3.3, 2.7, 11), (0.1, 7.9, 101), (-1e3, 1e-3, 37)):
        same(f"linspace {a} {b} {n} {dt}", lambda m: m.linspace(a, b, n, dtype=getattr(m, dt)))
    for args in ((0, 1, 0.1), (-3.3, 2.7, 0.3), (0.05, 7.3, 0.011)):
        same(f"arange {args} {dt}", lambda m: m.arange(*args, dtype=getattr(m, dt)))
    x = [-0.0, float("inf"), -10.0, 3.0, -3.0] * 4
    same(f"gelu {dt} (special values)", lambda m: special(m, dt, x))
for dt in ("bfloat16", "float16"):
    x = [-0.0, float("inf"), -10.0, 3.0] * 4
    same(f"gelu {dt} (special values)", lambda m: special(m, dt, x))
print(json.dumps(diffs))
"""


@pytest.mark.skipif(not X86, reason="PyTorch's kernel choice is modelled on x86-64 only")
@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_values_bit_for_bit_under_each_setting(setting):
    """Random fills with bounds (whose multiply-add PyTorch fuses except on DEFAULT),
    normal samples, linspace/arange and gelu's special values equal torch's bit for bit."""
    assert _run(_VALUES, setting) == []


# the CPU-sensitive tests, run once more under a second setting (the README's command
# runs them natively; this is the "second capability" step)
SUBSET = ["tests/ops/test_random_torch.py", "tests/ops/test_linspace_torch.py",
          "tests/amp/test_amp_bitexact.py",
          "tests/ops/test_dtype_rules_and_edge_values.py::test_gelu_at_inf",
          "tests/fuzz/test_fuzz_campaigns.py::test_gelu_keeps_pytorchs_sign_of_zero"]


def _second_setting() -> dict | None:
    native = cpu_capability()
    if native == "AVX512":
        return {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    if native == "AVX2":
        return {"ATEN_CPU_CAPABILITY": "default"}
    return None


@pytest.mark.slow
@pytest.mark.skipif(_second_setting() is None, reason="this CPU has only PyTorch's default "
                    "capability: there is no second one to run")
def test_cpu_sensitive_tests_pass_under_a_second_setting():
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "-p", "no:xdist", *SUBSET]
    out = subprocess.run(cmd, env=_env(_second_setting()), capture_output=True, text=True,
                         timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-4000:]
    assert " passed" in out.stdout and " failed" not in out.stdout, out.stdout[-2000:]
