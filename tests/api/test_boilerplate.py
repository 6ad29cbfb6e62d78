"""The boilerplate lines at the top of real scripts (issue 16), against torch 2.13 CPU:
``torch.backends`` flags (values, settable, checks, ``flags()``), deterministic mode,
float32 matmul precision, pinned memory, ``torch.jit`` pass-throughs and refusals,
``Tensor.new*`` constructors, ``set_default_tensor_type`` and ``torch.__version__``.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:
            return e
    raise AssertionError("nothing raised")


def _first_line(e: Exception) -> tuple:
    return type(e), str(e).splitlines()[0]


FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
         ("cudnn", "allow_tf32"), ("cudnn", "benchmark_limit"), ("mkldnn", "enabled"),
         ("mkldnn", "deterministic"), ("opt_einsum", "enabled"), ("opt_einsum", "strategy")]


@pytest.mark.parametrize("backend,flag", FLAGS, ids=[".".join(f) for f in FLAGS])
def test_backend_flag_defaults_match_torch(backend, flag):
    ours = getattr(getattr(R.backends, backend), flag)
    assert ours == getattr(getattr(torch.backends, backend), flag)


def test_backend_availability_matches_torch():
    for name in ("cudnn.is_available", "cudnn.version", "mps.is_available", "mps.is_built",
                 "mkldnn.is_available", "openmp.is_available", "opt_einsum.is_available",
                 "cuda.is_built"):
        mod, fn = name.split(".")
        assert getattr(getattr(R.backends, mod), fn)() == getattr(
            getattr(torch.backends, mod), fn)(), name
    assert R.backends.cudnn.is_acceptable(R.ones(1)) is False


BOOL_FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
              ("cudnn", "allow_tf32"), ("mkldnn", "enabled"), ("mkldnn", "deterministic")]


@pytest.mark.parametrize("backend,flag", BOOL_FLAGS, ids=[".".join(f) for f in BOOL_FLAGS])
def test_bool_flags_set_read_back_and_refuse_non_bools_as_torch(backend, flag):
    for m in (R, torch):
        mod = getattr(m.backends, backend)
        before = getattr(mod, flag)
        try:
            setattr(mod, flag, not before)
            assert getattr(mod, flag) is (not before)
        finally:
            setattr(mod, flag, before)
    for bad in (1, "x", None):
        def set_bad(m, bad=bad):
            return lambda: setattr(getattr(m.backends, backend), flag, bad)
        assert _first_line(_error(set_bad(R))) == _first_line(_error(set_bad(torch)))


def test_import_forms_and_module_identity():
    cudnn = importlib.import_module("retrograd.backends.cudnn")
    assert cudnn is R.backends.cudnn
    cudnn.benchmark = True
    try:
        assert R.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = False


def test_cudnn_flags_context_manager_as_torch():
    for m in (R, torch):
        c = m.backends.cudnn
        with c.flags():  # PyTorch's defaults: every flag given, so cuDNN is turned off
            seen = (c.enabled, c.benchmark, c.deterministic, c.allow_tf32)
        with c.flags(enabled=True, benchmark=True, deterministic=True):
            seen2 = (c.enabled, c.benchmark, c.deterministic)
        after = (c.enabled, c.benchmark, c.deterministic, c.allow_tf32)
        if m is R:
            ours = (seen, seen2, after)
    assert ours == (seen, seen2, after)
    with pytest.raises(ZeroDivisionError):  # restored on an exception too
        with R.backends.cudnn.flags(enabled=False, benchmark=True):
            raise ZeroDivisionError
    assert R.backends.cudnn.enabled is True and R.backends.cudnn.benchmark is False


def test_mkldnn_flags_context_manager():
    with R.backends.mkldnn.flags(enabled=False, deterministic=True):
        assert (R.backends.mkldnn.enabled, R.backends.mkldnn.deterministic) == (False, True)
    assert (R.backends.mkldnn.enabled, R.backends.mkldnn.deterministic) == (True, False)


def test_opt_einsum_as_torch_without_opt_einsum():
    assert not torch.backends.opt_einsum.is_available()  # the oracle's environment
    for m in (R, torch):
        m.backends.opt_einsum.enabled = True  # a plain attribute in PyTorch: accepted
        assert m.backends.opt_einsum.enabled is True
        m.backends.opt_einsum.enabled = False
        e = _error(lambda m=m: m.backends.opt_einsum.flags(enabled=True).__enter__())
        assert isinstance(e, ValueError) and str(e).startswith("opt_einsum is not available")
        with m.backends.opt_einsum.flags(enabled=False):
            assert m.backends.opt_einsum.enabled is False
        with pytest.raises(ValueError):
            with m.backends.opt_einsum.flags(enabled=True):
                pass


def test_cuda_matmul_flags_as_torch():
    for m in (R, torch):
        mm = m.backends.cuda.matmul
        assert mm.allow_tf32 is False
        assert mm.allow_fp16_reduced_precision_reduction is True
        assert mm.allow_bf16_reduced_precision_reduction is True
        mm.allow_tf32 = True
        assert m.get_float32_matmul_precision() == "high"
        mm.allow_tf32 = False
        assert m.get_float32_matmul_precision() == "highest"
    for name, value in (("foo", 1), ("allow_tf32", 1),
                        ("allow_fp16_reduced_precision_reduction", 1)):
        ours = _error(lambda v=value, n=name: setattr(R.backends.cuda.matmul, n, v))
        theirs = _error(lambda v=value, n=name: setattr(torch.backends.cuda.matmul, n, v))
        assert _first_line(ours) == _first_line(theirs)
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        R.backends.cuda.matmul.foo  # noqa: B018


def test_float32_matmul_precision_as_torch():
    try:
        for p in ("high", "medium", "highest"):
            for m in (R, torch):
                m.set_float32_matmul_precision(p)
            assert R.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
            assert R.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
        for m in (R, torch):
            with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or "
                                                 "'medium'; the current"):
                m.set_float32_matmul_precision("bad")
            assert m.get_float32_matmul_precision() == "highest"
        assert _first_line(_error(lambda: R.set_float32_matmul_precision(1))) == _first_line(
            _error(lambda: torch.set_float32_matmul_precision(1)))
    finally:
        for m in (R, torch):
            m.set_float32_matmul_precision("highest")


def _det_state(m):
    return (m.are_deterministic_algorithms_enabled(),
            m.is_deterministic_algorithms_warn_only_enabled(), m.get_deterministic_debug_mode())


def test_deterministic_mode_as_torch():
    try:
        for call in (lambda m: m.use_deterministic_algorithms(True),
                     lambda m: m.use_deterministic_algorithms(True, warn_only=True),
                     lambda m: m.use_deterministic_algorithms(False),
                     *(lambda m, v=v: m.set_deterministic_debug_mode(v)
                       for v in ("warn", "error", "default", 1, 2, 0, True))):
            for m in (R, torch):
                call(m)
            assert _det_state(R) == _det_state(torch)
        for bad in (lambda m: m.set_deterministic_debug_mode("x"),
                    lambda m: m.set_deterministic_debug_mode(3),
                    lambda m: m.set_deterministic_debug_mode(1.0),
                    lambda m: m.use_deterministic_algorithms(1),
                    lambda m: m.use_deterministic_algorithms(True, warn_only=1)):
            assert _first_line(_error(lambda b=bad: b(R))) == _first_line(
                _error(lambda b=bad: b(torch)))
    finally:
        for m in (R, torch):
            m.use_deterministic_algorithms(False)


def test_deterministic_mode_fills_uninitialized_memory_as_torch():
    def made(m):
        return [m.empty(3), m.empty(2, dtype=m.int64), m.empty(2, dtype=m.int8),
                m.empty(2, dtype=m.bool), m.empty_like(m.ones(2)), m.ones(1).new_empty(2),
                m.ones(1, dtype=m.int32).new(2)]
    try:
        for m in (R, torch):
            m.use_deterministic_algorithms(True)
        ours, theirs = made(R), made(torch)
    finally:
        for m in (R, torch):
            m.use_deterministic_algorithms(False)
    for a, b in zip(ours, theirs):
        assert str(a) == str(b)
    assert R.empty(2).tolist() == [0.0, 0.0]  # off again: zeros (never garbage)


def test_pin_memory_as_torch():
    for fn in (lambda m: m.ones(2).pin_memory(), lambda m: m.tensor([1.], pin_memory=True),
               lambda m: m.empty(2, pin_memory=True), lambda m: m.zeros(2, pin_memory=True),
               lambda m: m.ones(2, pin_memory=True),
               lambda m: m.ones(1).new_zeros(2, pin_memory=True)):
        assert _first_line(_error(lambda f=fn: f(R))) == _first_line(_error(lambda f=fn: f(torch)))
    assert R.ones(2).is_pinned() is False is torch.ones(2).is_pinned()


def test_dataloader_pin_memory_warns_on_iteration_as_torch():
    for m in (R, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loader = m.utils.data.DataLoader([1, 2], pin_memory=True)
            assert not w  # PyTorch warns when an iterator is made, not at construction
            assert [b.tolist() for b in loader] == [[1], [2]]
        assert [str(x.message) for x in w] == [
            "'pin_memory' argument is set as true but no accelerator is found, then device "
            "pinned memory won't be used."]


def test_jit_decorators_pass_through():
    class Model(R.nn.Module):
        scale: R.jit.Final[int]

        def __init__(self):
            super().__init__()
            self.scale = 2

        @R.jit.export
        def double(self, x):
            return x * self.scale

        @R.jit.ignore
        def debug(self, x):
            return x

        @R.jit.unused
        def unused(self, x):
            raise AssertionError("not called")

        @R.jit.ignore(drop=False)
        def other(self, x):
            return x

        def forward(self, x):
            if R.jit.is_scripting() or R.jit.is_tracing():
                raise AssertionError("never scripting or tracing here")
            y: list = R.jit.annotate(list[int], [])
            return self.other(self.debug(self.double(x))) + len(y)

    assert Model()(R.tensor([1.0])).tolist() == [2.0]
    assert R.jit.Final is torch.jit.Final
    assert R.jit.fork(pow, 2, 5).wait() == R.jit.wait(R.jit.fork(pow, 2, 5)) == 32
    with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
        R.jit.ignore(True)


@pytest.mark.parametrize("name", ["script", "trace", "trace_module", "save", "load", "freeze",
                                  "optimize_for_inference"])
def test_jit_compilers_refuse_and_point_to_compile(name):
    fn = getattr(R.jit, name)
    args = {"script": (R.nn.Linear(1, 1),), "trace": (R.nn.Linear(1, 1), R.ones(1, 1)),
            "trace_module": (R.nn.Linear(1, 1), {}), "save": (R.nn.Linear(1, 1), "m.pt"),
            "load": ("m.pt",), "freeze": (R.nn.Linear(1, 1),),
            "optimize_for_inference": (R.nn.Linear(1, 1),)}[name]
    with pytest.raises(RuntimeError, match=rf"torch\.jit\.{name} is not supported.*"
                                           r"retrograd\.compile"):
        fn(*args)


NEW = [
    ("new_zeros-varargs", lambda x, m: x.new_zeros(2, 3)),
    ("new_zeros-tuple", lambda x, m: x.new_zeros((2, 3))),
    ("new_zeros-0d", lambda x, m: x.new_zeros(())),
    ("new_zeros-dtype", lambda x, m: x.new_zeros(2, dtype=m.float32, requires_grad=True)),
    ("new_ones", lambda x, m: x.new_ones([1, 2])),
    ("new_full", lambda x, m: x.new_full((2,), 3.7)),
    ("new_full-int-fill", lambda x, m: x.new_full((2,), 3)),
    ("new_empty-shape", lambda x, m: x.new_empty(2, 3).shape),
    ("new_tensor-list", lambda x, m: x.new_tensor([1.5, 2.0])),
    ("new_tensor-number", lambda x, m: x.new_tensor(3)),
    ("new_tensor-bool", lambda x, m: x.new_tensor(True)),
    ("new_tensor-dtype", lambda x, m: x.new_tensor([1, 2], dtype=m.float32)),
    ("new-shape", lambda x, m: x.new(2, 3).shape),
    ("new-size", lambda x, m: x.new(m.Size([2])).shape),
    ("new-data-list", lambda x, m: x.new([1.5, 2.0])),
    ("new-data-tuple", lambda x, m: x.new((2, 3))),
    ("new-empty", lambda x, m: x.new()),
]
SOURCES = [("int64", lambda m: m.ones(2, dtype=m.int64)),
           ("float64", lambda m: m.ones(2, dtype=m.float64)),
           ("parameter", lambda m: m.nn.Parameter(m.ones(2, dtype=m.float64)))]


@pytest.mark.parametrize("src", [s[1] for s in SOURCES], ids=[s[0] for s in SOURCES])
@pytest.mark.parametrize("fn", [c[1] for c in NEW], ids=[c[0] for c in NEW])
def test_new_constructors_match_torch(fn, src):
    outs = []
    for m in (R, torch):
        x = src(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = fn(x, m)
            except Exception as e:
                r = _first_line(e)
        if isinstance(r, m.Tensor):
            r = (type(r).__name__, str(r.dtype), r.tolist(), r.requires_grad)
        elif isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], type):
            r = (r[0], r[1].split(" (")[0])
        outs.append(r if not isinstance(r, m.Size) else tuple(r))
    assert outs[0] == outs[1]


def test_new_constructors_errors_as_torch():
    for fn in (lambda m: m.ones(1).new_full(2, 3),
               lambda m: m.ones(1, dtype=m.int64).new_zeros(2, requires_grad=True),
               lambda m: m.ones(1).new_zeros(-1),
               lambda m: m.ones(1, dtype=m.int64).new(m.ones(2))):
        ours = _first_line(_error(lambda f=fn: f(R)))
        theirs = _first_line(_error(lambda f=fn: f(torch)))
        assert ours[0] == theirs[0]
        assert ours[1].startswith(theirs[1].split(" (")[0][:40])


def test_new_tensor_of_a_tensor_warns_copies_and_detaches():
    x = R.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match=r"sourceTensor\.detach\(\)\.clone\(\)"):
        y = x.new_tensor(x)
    assert not y.requires_grad
    y += 1
    assert x.tolist() == [1.0, 1.0]
    t = R.ones(2)
    assert t.new(t).data_ptr() == t.data_ptr()  # new(other) aliases, as in PyTorch


def test_word_language_model_init_hidden_line():
    weight = R.nn.Linear(3, 4).weight  # a Parameter: init_hidden calls weight.new_zeros
    h = weight.new_zeros(2, 5, 4)
    assert type(h) is R.Tensor and h.shape == (2, 5, 4) and not h.requires_grad


def test_set_default_tensor_type_as_torch():
    try:
        for arg in ("torch.DoubleTensor", "torch.FloatTensor", "DoubleTensor", "HalfTensor",
                    "torch.BFloat16Tensor"):
            outs = []
            for m in (R, torch):
                a = getattr(m, arg) if not arg.startswith("torch.") else arg
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    m.set_default_tensor_type(a)
                outs.append(str(m.get_default_dtype()))
                if m is R:
                    assert "set_default_tensor_type() is deprecated" in str(w[0].message)
            assert outs[0] == outs[1]
        for arg in ("torch.LongTensor", "torch.cuda.FloatTensor", "LongTensor", "float64"):
            outs = []
            for m in (R, torch):
                a = getattr(m, arg) if not arg.startswith("torch.") else arg
                outs.append(_first_line(_error(lambda a=a, m=m: m.set_default_tensor_type(a))))
            assert outs[0][0] == outs[1][0] and outs[0][1].startswith(
                outs[1][1].split(". ")[0]), arg
    finally:
        R.set_default_dtype(R.float32)
        torch.set_default_dtype(torch.float32)


GATES = ['v >= "2.0"', 'v >= "1.12"', 'v < "3"', 'v >= (2, 0)', 'v > (1, 13, 1)',
         'v >= "2.13"', 'v < "2.14"', 'v < (2, 14)', 'v >= "abc"', 'v.split(".")[0] == "2"',
         'tuple(int(x) for x in v.split("+")[0].split(".")[:2]) >= (2, 0)',
         'parse(v) >= parse("2.0")', 'parse(v).release[:2] == (2, 13)',
         'parse(v.split("+")[0]) == parse("2.13.0")']


@pytest.mark.parametrize("gate", GATES)
def test_version_gates_take_the_modern_branch_as_torch(gate):
    from packaging.version import parse
    ours = eval(gate, {"v": R.__version__, "parse": parse})
    assert ours == eval(gate, {"v": torch.__version__, "parse": parse})


def test_version_is_a_str_naming_retrograd():
    v = R.__version__
    assert isinstance(v, str) and v == R.version.__version__
    assert v == f"2.13.0+retrograd.{R.version.retrograd_version}"
    assert {v: 1}[str(v)] == 1 and v != "2.13.1"
    with pytest.raises(TypeError):
        v >= 3  # noqa: B015  (as torch: no order with an int)
    assert R.version.cuda is None and R.version.hip is None
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == \
        R.version.retrograd_version


def test_cli_version_is_the_distributions():
    out = subprocess.run([sys.executable, "-c", "from retrograd._cli.main import _version; "
                          "print(_version())"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith(f"retrograd {R.version.retrograd_version} (NumPy")


ASARRAY = [
    ("tensor-shared", lambda m, x, a: m.asarray(x) is x),
    ("tensor-copy", lambda m, x, a: m.asarray(x, copy=True) is x),
    ("tensor-dtype", lambda m, x, a: str(m.asarray(x, dtype=m.float64).dtype)),
    ("tensor-no-copy-dtype", lambda m, x, a: m.asarray(x, dtype=m.float64, copy=False)),
    ("ndarray-no-copy-dtype", lambda m, x, a: m.asarray(a, dtype=m.float32, copy=False)),
    ("list", lambda m, x, a: m.asarray([1, 2]).tolist()),
    ("list-dtype", lambda m, x, a: str(m.asarray([1.5, 2.], dtype=m.int32))),
    ("number", lambda m, x, a: str(m.asarray(3.0))),
    ("bool", lambda m, x, a: str(m.asarray(True))),
    ("numpy-scalar", lambda m, x, a: str(m.asarray(np.float32(2.5)))),
    ("requires-grad", lambda m, x, a: m.asarray(x, requires_grad=True).requires_grad),
]


@pytest.mark.parametrize("fn", [c[1] for c in ASARRAY], ids=[c[0] for c in ASARRAY])
def test_asarray_matches_torch(fn):
    outs = []
    for m in (R, torch):
        x, a = m.ones(2), np.arange(3.0)
        try:
            outs.append(fn(m, x, a))
        except ValueError as e:
            outs.append(str(e).splitlines()[0])
    assert outs[0] == outs[1]


def test_asarray_shares_numpy_memory_as_torch():
    a = np.arange(3.0)
    t = R.asarray(a)
    a[0] = 9
    assert t.tolist() == [9.0, 1.0, 2.0]
    c = R.asarray(a, copy=True)
    a[0] = 1
    assert t.tolist()[0] == 1.0 and c.tolist()[0] == 9.0


def test_legacy_types_and_sizes_as_torch():
    for m in (R, torch):
        assert str(m.ShortTensor([1]).dtype).endswith("int16")
        assert str(m.CharTensor(2).dtype).endswith("int8") and m.CharTensor(2).shape == (2,)
    x, y = R.ones(2, 3, dtype=R.float64), torch.ones(2, 3, dtype=torch.float64)
    assert (x.get_device(), x.nbytes, x.itemsize) == (y.get_device(), y.nbytes, y.itemsize)


def test_fill_uninitialized_memory_flag_as_torch():
    import torch.utils.deterministic as tdet

    import retrograd.utils.deterministic as det
    assert det.fill_uninitialized_memory is tdet.fill_uninitialized_memory is True
    assert _first_line(_error(lambda: setattr(det, "fill_uninitialized_memory", 1))) == \
        _first_line(_error(lambda: setattr(tdet, "fill_uninitialized_memory", 1)))
    try:
        R.use_deterministic_algorithms(True)
        assert R.empty(1).isnan().all()
        det.fill_uninitialized_memory = False
        assert R.empty(1).tolist() == [0.0]
    finally:
        det.fill_uninitialized_memory = True
        R.use_deterministic_algorithms(False)


def test_torch_version_orders_as_packaging_does():
    # PEP 440's order without a runtime dependency (retrograd.version._key)
    import itertools

    from packaging.version import Version

    from retrograd.version import TorchVersion

    vs = ["1.0", "1.0.0", "1.0a1", "1.0b2", "1.0rc1", "1.0c1", "1.0.post1", "1.0-1",
          "1.0.dev3", "1.0a1.dev2", "1.0.post1.dev0", "1.0rc1.post2", "1.0+cpu", "1.0+abc.5",
          "1.0+5", "2.13", "2.13.1", "2.0.0rc3", "1.12.1+cu116", "2.14.0.dev20260101",
          "2.13.0+retrograd.0.1.0"]
    for a, b in itertools.product(vs, vs):
        for op in ("__lt__", "__eq__", "__gt__", "__le__", "__ge__"):
            want = getattr(Version(a), op)(Version(b))
            assert getattr(TorchVersion(a), op)(b) == want, (a, op, b)
            assert getattr(TorchVersion(a), op)(Version(b)) == want, (a, op, b)
