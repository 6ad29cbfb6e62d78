"""What a newcomer's first PyTorch script meets: submodules reachable as attributes
right after ``import retrograd as torch`` (torch.distributed lazily: Note [Lazy
submodules]), CUDA calls raising what PyTorch 2.13's CPU build raises with the fix
appended (Note [Devices without a backend]), and torch.jit's refusal describing
retrograd.compile as it is. Compared with real torch where the behaviour is torch's."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import retrograd as R

torch = pytest.importorskip("torch")

SRC = Path(R.__file__).resolve().parent
HINT = "retrograd runs on the CPU only"

# ----------------------------------------------------------------------------------
# 1. submodules as attributes

SUBMODULES = ["distributed", "linalg", "special", "func", "utils.data", "utils.checkpoint",
              "distributions", "optim.lr_scheduler", "nn.functional", "autograd.functional",
              "backends", "testing", "amp", "cuda", "jit"]


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing imported before it) and return stdout."""
    env = dict(os.environ, PYTHONPATH=str(SRC.parent))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_submodules_are_attributes_after_import_in_a_fresh_interpreter():
    code = ("import retrograd as torch\n"
            f"for name in {SUBMODULES!r}:\n"
            "    obj = torch\n"
            "    for part in name.split('.'):\n"
            "        obj = getattr(obj, part)\n"
            "    print(name, obj.__name__)\n"
            "print(torch.distributed.is_available() in (True, False))\n")
    lines = _fresh(code).splitlines()
    assert lines[:-1] == [f"{n} retrograd.{n}" for n in SUBMODULES]
    assert lines[-1] == "True"
    for name in SUBMODULES:  # each one a submodule of real torch too
        obj = torch
        for part in name.split("."):
            obj = getattr(obj, part)


def test_distributed_is_lazy_listed_by_dir_and_does_not_load_mpi():
    code = ("import sys, retrograd as torch\n"
            "print('retrograd.distributed' in sys.modules, 'distributed' in dir(torch))\n"
            "d = torch.distributed\n"
            "print(d.is_available() in (True, False), d.is_initialized(),\n"
            "      'mpi4py' in sys.modules)\n"
            "import retrograd.distributed\n"
            "print(retrograd.distributed is d)\n")
    assert _fresh(code).split() == ["False", "True", "True", "False", "False", "True"]


def test_distributed_is_available_without_mpi4py():
    # mpi4py blocked as if not installed: the package imports and answers False (it runs
    # on MPI), as a PyTorch built without distributed support does
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import retrograd as torch\n"
            "print(torch.distributed.is_available(), torch.distributed.is_mpi_available())\n")
    assert _fresh(code).split() == ["False", "False"]


def test_fft_only_if_it_exists():
    if (SRC / "fft.py").exists() or (SRC / "fft").is_dir():
        assert R.fft.__name__ == "retrograd.fft"
    else:
        with pytest.raises(AttributeError, match="module 'retrograd' has no attribute 'fft'"):
            R.fft  # noqa: B018
        assert "fft" not in dir(R)


def test_unknown_attribute_still_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'retrograd' has no attribute 'no_such'"):
        R.no_such  # noqa: B018
    assert not hasattr(R, "no_such")


# ----------------------------------------------------------------------------------
# 2. CUDA on a CPU-only build: PyTorch's type and first line, retrograd's hint after it

def _outcome(fn):
    """('ok', value) or (error type name, first line of the message, whole message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", fn())
        except Exception as e:
            return (type(e).__name__, str(e).splitlines()[0] if str(e) else "", str(e))


CUDA_CALLS = {
    "tensor.cuda()": lambda m: m.zeros(2).cuda(),
    "tensor.cuda(0)": lambda m: m.zeros(2).cuda(0),
    "tensor.cuda('cuda:1')": lambda m: m.zeros(2).cuda("cuda:1"),
    "tensor.cuda(-1)": lambda m: m.zeros(2).cuda(-1),
    "tensor.to('cuda')": lambda m: m.zeros(2).to("cuda"),
    "tensor.to('cuda:0')": lambda m: m.zeros(2).to("cuda:0"),
    "tensor.to(device('cuda'))": lambda m: m.zeros(2).to(m.device("cuda")),
    "tensor.to(0)": lambda m: m.zeros(2).to(0),
    "tensor.to(device='cuda', dtype)": lambda m: m.zeros(2).to(device="cuda", dtype=m.float64),
    "tensor.to('mps')": lambda m: m.zeros(2).to("mps"),
    "tensor.to('xpu')": lambda m: m.zeros(2).to("xpu"),
    "zeros(device='cuda')": lambda m: m.zeros(2, device="cuda"),
    "tensor(device='cuda')": lambda m: m.tensor([1.0], device="cuda"),
    "randn(device='cuda:1')": lambda m: m.randn(2, device="cuda:1"),
    "arange(device='cuda')": lambda m: m.arange(2, device="cuda"),
    "zeros_like(device='cuda')": lambda m: m.zeros_like(m.ones(2), device="cuda"),
    "Linear.cuda()": lambda m: m.nn.Linear(2, 2).cuda(),
    "Linear.cuda(0)": lambda m: m.nn.Linear(2, 2).cuda(0),
    "Linear.to('cuda')": lambda m: m.nn.Linear(2, 2).to("cuda"),
    "ReLU.cuda()": lambda m: repr(m.nn.ReLU().cuda()),
    "device('cuda')": lambda m: repr(m.device("cuda")),
    "device('cuda', 1)": lambda m: str(m.device("cuda", 1)),
    "device('mps')": lambda m: repr(m.device("mps")),
    "device('cuda:x')": lambda m: m.device("cuda:x"),
    "device('foo')": lambda m: m.device("foo"),
    "device(0)": lambda m: m.device(0),
    "cpu == cuda": lambda m: m.zeros(1).device == m.device("cuda"),
    "is_cuda": lambda m: m.zeros(1).is_cuda,
    "cuda.is_available()": lambda m: m.cuda.is_available(),
    "cuda.device_count()": lambda m: m.cuda.device_count(),
    "cuda.is_initialized()": lambda m: m.cuda.is_initialized(),
    "cuda.init()": lambda m: m.cuda.init(),
    "cuda.current_device()": lambda m: m.cuda.current_device(),
    "cuda.get_device_name()": lambda m: m.cuda.get_device_name(),
    "cuda.get_device_name(0)": lambda m: m.cuda.get_device_name(0),
    "cuda.get_device_capability()": lambda m: m.cuda.get_device_capability(),
    "cuda.get_device_properties(0)": lambda m: m.cuda.get_device_properties(0),
    "cuda.can_device_access_peer(0, 1)": lambda m: m.cuda.can_device_access_peer(0, 1),
    "cuda.synchronize()": lambda m: m.cuda.synchronize(),
    "cuda.set_device(0)": lambda m: m.cuda.set_device(0),
    "cuda.set_device('cuda:0')": lambda m: m.cuda.set_device("cuda:0"),
    "cuda.set_device(-1)": lambda m: m.cuda.set_device(-1),
    "cuda.manual_seed(0)": lambda m: m.cuda.manual_seed(0),
    "cuda.manual_seed_all(0)": lambda m: m.cuda.manual_seed_all(0),
    "cuda.seed()": lambda m: m.cuda.seed(),
    "cuda.seed_all()": lambda m: m.cuda.seed_all(),
    "cuda.initial_seed()": lambda m: m.cuda.initial_seed(),
    "cuda.get_rng_state()": lambda m: m.cuda.get_rng_state(),
    "cuda.get_rng_state_all()": lambda m: m.cuda.get_rng_state_all(),
    "cuda.set_rng_state_all([])": lambda m: m.cuda.set_rng_state_all([]),
    "cuda.memory_allocated()": lambda m: m.cuda.memory_allocated(),
    "cuda.max_memory_allocated()": lambda m: m.cuda.max_memory_allocated(),
    "cuda.memory_reserved()": lambda m: m.cuda.memory_reserved(),
    "cuda.max_memory_reserved()": lambda m: m.cuda.max_memory_reserved(),
    "cuda.memory_stats()": lambda m: dict(m.cuda.memory_stats()),
    "cuda.reset_peak_memory_stats()": lambda m: m.cuda.reset_peak_memory_stats(),
    "cuda.mem_get_info()": lambda m: m.cuda.mem_get_info(),
    "cuda.set_per_process_memory_fraction": lambda m: m.cuda.set_per_process_memory_fraction(.5),
    "cuda.empty_cache()": lambda m: m.cuda.empty_cache(),
    "cuda.ipc_collect()": lambda m: m.cuda.ipc_collect(),
    "cuda.is_bf16_supported()": lambda m: m.cuda.is_bf16_supported(),
    "cuda.is_tf32_supported()": lambda m: m.cuda.is_tf32_supported(),
    "cuda.get_arch_list()": lambda m: m.cuda.get_arch_list(),
    "cuda.get_gencode_flags()": lambda m: m.cuda.get_gencode_flags(),
    "cuda.current_stream()": lambda m: m.cuda.current_stream(),
    "cuda.default_stream()": lambda m: m.cuda.default_stream(),
    "cuda.Stream()": lambda m: m.cuda.Stream(),
    "cuda.Event()": lambda m: m.cuda.Event(),
    "with cuda.device(0)": lambda m: m.cuda.device(0).__enter__(),
    "with cuda.device(-1)": lambda m: m.cuda.device(-1).__enter__(),
    "cuda.OutOfMemoryError": lambda m: issubclass(m.cuda.OutOfMemoryError, RuntimeError),
    "cuda.amp.autocast() enabled": lambda m: m.cuda.amp.autocast()._enabled,
    "autocast('cuda') enabled": lambda m: m.autocast("cuda")._enabled,
    "cuda.amp.GradScaler()": lambda m: m.cuda.amp.GradScaler().is_enabled(),
    "amp.GradScaler('cuda')": lambda m: m.amp.GradScaler("cuda").is_enabled(),
}


@pytest.mark.parametrize("name", list(CUDA_CALLS))
def test_cuda_call_matches_a_cpu_only_torch(name):
    assert not torch.cuda.is_available()  # the oracle is a CPU-only build
    theirs, ours = _outcome(lambda: CUDA_CALLS[name](torch)), _outcome(lambda: CUDA_CALLS[name](R))
    if theirs[0] == "ok":
        assert ours[0] == "ok", ours
        assert str(ours[1]).replace("retrograd", "torch") == str(theirs[1])
        return
    assert ours[:2] == theirs[:2]
    if theirs[1].startswith(("Torch not compiled", "Cannot access accelerator", "PyTorch ",
                             "module 'torch._C'", "torch.cuda.Stream", "Tried to")):
        assert HINT in ours[2] and 'torch.cuda.is_available() else "cpu"' in ours[2]


def test_cuda_hint_names_the_fix():
    with pytest.raises(AssertionError) as info:
        R.zeros(2, device="cuda")
    lines = str(info.value).splitlines()
    assert lines[0] == "Torch not compiled with CUDA enabled"
    assert lines[1] == ('(retrograd runs on the CPU only, with NumPy kernels: use device="cpu", '
                        'or choose the device at run time with `device = "cuda" if '
                        'torch.cuda.is_available() else "cpu"`.)')


def test_portable_device_choice_runs():
    device = R.device("cuda" if R.cuda.is_available() else "cpu")
    model = R.nn.Linear(3, 1).to(device)
    assert model(R.ones(2, 3, device=device)).shape == (2, 1)


@pytest.mark.parametrize("map_location", ["cuda", "cuda:0", {"cpu": "cuda:0"}])
def test_load_onto_cuda_raises_as_torch(map_location):
    buf = io.BytesIO()
    R.save({"w": R.ones(2)}, buf)
    tbuf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, tbuf)
    for lib, b in ((torch, tbuf), (R, buf)):
        b.seek(0)
        ml = lib.device(map_location) if map_location == "cuda:0" else map_location
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA "
                                               "device but torch.cuda.is_available"):
            lib.load(b, map_location=ml)


# ----------------------------------------------------------------------------------
# 3. torch.jit points to retrograd.compile and says what it does


def test_jit_script_message_describes_compile_as_it_is():
    with pytest.raises(RuntimeError) as info:
        R.jit.script(R.nn.Linear(2, 2))
    msg = str(info.value)
    assert msg.startswith("torch.jit.script is not supported: retrograd has no TorchScript")
    assert "returns it unchanged" not in msg
    assert "retrograd.compile(model)" in msg and "replayed as a plan of NumPy calls" in msg
    assert "retrograd.compiler.explain(model)(*inputs)" in msg
    # what the message says compile does, it does: a new module, whose calls are traced
    # and replayed, and explain reports the plan
    lin = R.nn.Linear(2, 2)
    compiled = R.compile(lin)
    assert compiled is not lin and compiled._orig_mod is lin
    x = R.ones(3, 2)
    assert R.allclose(compiled(x), lin(x)) and R.allclose(compiled(x), lin(x))
    report = R.compiler.explain(lin)(x)
    assert report.graph_count == 1 and report.graph_break_count == 0
