"""``retrograd._tensor.printing`` against PyTorch's own ``repr``, character for character.

Fake tensor objects (``_data``, ``_rg``, ``grad_fn``) are printed with
``tensor_repr`` and compared with ``repr`` of the PyTorch tensor holding the
same values, so these tests do not need ``retrograd.Tensor`` to work.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

torch = pytest.importorskip("torch")

BF16 = np.dtype(ml_dtypes.bfloat16)


def _load():
    """``retrograd._tensor.printing`` and ``_core.dtype``, without ``retrograd/__init__`` if
    broken."""
    try:
        return (importlib.import_module("retrograd._tensor.printing"),
                importlib.import_module("retrograd._core.dtype"))
    except Exception:
        name = "_retrograd_printing_under_test"
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(Path(__file__).resolve().parents[2] / "src" / "retrograd")]
            sys.modules[name] = pkg
        return (importlib.import_module(name + "._printing"),
                importlib.import_module(name + "._core.dtype"))


P, D = _load()


class _Node:
    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name


class Tensor:
    def __init__(self, data, rg=False, grad_fn=None):
        self._data = data
        self._rg = rg
        self.grad_fn = grad_fn


class Parameter(Tensor):
    pass


def to_torch(a: np.ndarray):
    if a.dtype == BF16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


def from_torch(t) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(BF16)
    return t.numpy().copy()


def _floating(a: np.ndarray) -> bool:
    return a.dtype.kind == "f" or a.dtype == BF16


def check(a: np.ndarray) -> None:
    """Plain, requires_grad, grad_fn and Parameter variants all print like PyTorch."""
    t = to_torch(a)
    want = repr(t)
    assert str(t) == want
    got = P.tensor_repr(Tensor(a))
    assert got == want, f"\n--- got ---\n{got}\n--- want ---\n{want}"
    if not _floating(a):
        return
    leaf = to_torch(a).requires_grad_()
    assert P.tensor_repr(Tensor(a, rg=True)) == repr(leaf)
    out = leaf * 1
    assert P.tensor_repr(Tensor(a, rg=True, grad_fn=_Node("MulBackward0"))) == repr(out)
    assert P.tensor_repr(Parameter(a, rg=True)) == repr(torch.nn.Parameter(to_torch(a)))
    frozen = torch.nn.Parameter(to_torch(a), requires_grad=False)
    assert P.tensor_repr(Parameter(a)) == repr(frozen)


@pytest.fixture(autouse=True)
def _restore_options():
    yield
    torch.set_printoptions(profile="default")
    P.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    D.DEFAULTS.float = D.float32


# ---------------------------------------------------------------------------
# Fixed cases

_rng = np.random.default_rng(0)


def _normal(*shape, scale=1.0):
    return _rng.standard_normal(shape) * scale


def _cases():
    nan, inf = math.nan, math.inf
    f = np.float32
    cases = {
        "int-valued": np.array([4.0], f),
        "two ints": np.array([1.0, 2.0], f),
        "int 2d": np.arange(12, dtype=f).reshape(3, 4) - 5,
        "int big": np.array([1e8, 3.0], f),
        "int 1e9": np.array([1e9, 1.0], f),
        "int wide": np.array([123456.0, -7.0], np.float64),
        "fixed": np.array([1.5, -2.25, 100.125], f),
        "fixed align": np.array([[0.001, 10.5], [-999.5, 3.0]], f),
        "sci small": np.array([1e-5, 1e3], f),
        "sci ratio": np.array([0.5, 1000.5], f),
        "sci big": np.array([1.5e9], np.float64),
        "sci tiny": np.array([1e-6, -2e-6], np.float64),
        "spread": np.logspace(-6, 9, 16).astype(f),
        "spread 2d": np.logspace(-6, 9, 16).reshape(4, 4) * np.where(np.arange(16) % 3, 1, -1)
        .reshape(4, 4),
        "neg zero": np.array([-0.0], f),
        "zeros": np.array([0.0, -0.0], f),
        "neg zero frac": np.array([-0.0, 1.5], f),
        "neg zero sci": np.array([-0.0, 1e-5], f),
        "all zero 2d": np.zeros((2, 3), f),
        "nan": np.array([nan], f),
        "infs": np.array([inf, -inf], f),
        "nan int": np.array([nan, 1.0], f),
        "nan inf frac": np.array([nan, 1.5, inf, -inf], f),
        "nan sci": np.array([nan, 1e-5, 1e5, -inf], f),
        "0d float": np.array(3.0, f),
        "0d frac": np.array(-3.25, f),
        "0d negzero": np.array(-0.0, f),
        "0d nan": np.array(nan, f),
        "0d inf": np.array(-inf, np.float64),
        "0d sci": np.array(1e-5, f),
        "0d f64": np.array(2.5, np.float64),
        "0d int": np.array(3, np.int64),
        "0d int32": np.array(-3, np.int32),
        "0d bool": np.array(True),
        "0d f16": np.array(0.1, np.float16),
        "0d bf16": np.array(0.1, BF16),
        "empty": np.zeros((0,), f),
        "empty 0x3": np.zeros((0, 3), f),
        "empty 2x0x4": np.zeros((2, 0, 4), f),
        "empty f64": np.zeros((0,), np.float64),
        "empty int": np.zeros((0,), np.int64),
        "empty int 0x3": np.zeros((0, 3), np.int32),
        "empty bool": np.zeros((0,), bool),
        "empty f16": np.zeros((3, 0), np.float16),
        "ints": np.array([1, -20, 300], np.int64),
        "ints 2d": np.arange(-6, 6).reshape(3, 4),
        "int32": np.array([[1, 2], [3, 40]], np.int32),
        "int8": np.array([-128, 127, 0], np.int8),
        "uint8": np.array([0, 255, 7], np.uint8),
        "int16": np.array([-32768, 5], np.int16),
        "int64 huge": np.array([2**62, -(2**63)], np.int64),
        "bools": np.array([True, False, True]),
        "bools 2d": np.eye(3, dtype=bool),
        "f16": (_normal(3, 4)).astype(np.float16),
        "f16 big": np.array([65504.0, 1.0, -0.5], np.float16),
        "f16 tiny": np.array([6e-8, 1.0], np.float16),
        "f16 third": np.array([1 / 3, 2 / 3], np.float16),
        "bf16": _normal(2, 5).astype(BF16),
        "bf16 big": np.array([3e38, 1.0], BF16),
        "bf16 ints": np.array([256.0, 257.0, 1.0], BF16),
        "f64 third": np.array([1 / 3, 2 / 3, 1e-4]),
        "round 0.5": np.array([0.00005, 0.00015, 2.5], np.float64),
        "rounding up width": np.array([9.99995, 0.5], np.float64),
        "wrap 100": _normal(100).astype(f),
        "wrap ints": np.arange(0, 10**6, 9973),
        "wrap 3d": _normal(2, 2, 30).astype(f),
        "bool 1200": _rng.random(1200) > 0.5,
        "int 1200": _rng.integers(-(10**6), 10**6, size=(1200,)),
        "int 40x40": _rng.integers(-99, 99, size=(40, 40)).astype(np.int32),
        "exact threshold": _normal(1000).astype(f),
        "threshold+1": _normal(1001).astype(f),
        "1000x1": _normal(1000, 1).astype(f),
        "1001x1": _normal(1001, 1).astype(f),
        "1x1001": _normal(1, 1001).astype(f),
        "7x7x7x7": _normal(7, 7, 7, 7).astype(f),
        "summ sci": _normal(50, 50, scale=1e6).astype(np.float64),
        "summ int-valued": np.round(_normal(40, 40, scale=100)).astype(f),
        "summ nan": np.where(_rng.random((40, 40)) > 0.9, np.nan, _normal(40, 40)).astype(f),
    }
    for shape in [(1,), (5,), (2, 3), (2, 3, 4), (1200,), (30, 40), (2, 3, 4, 5), (1, 1, 1)]:
        for dt in [np.float32, np.float64, np.float16, BF16]:
            cases[f"normal {shape} {np.dtype(dt).name}"] = _normal(*shape).astype(dt)
    for scale in [1e-6, 1e-4, 1e-3, 1e3, 1e5, 1e8, 1e9]:
        cases[f"normal x{scale:g}"] = _normal(3, 5, scale=scale).astype(np.float32)
        cases[f"normal x{scale:g} f64"] = _normal(1200, scale=scale)
    for n in range(1, 16):
        cases[f"suffix wrap f64 len{n}"] = _normal(n) * 10
        cases[f"suffix wrap f16 len{n}"] = np.round(_normal(n) * 1000).astype(np.float16)
        cases[f"suffix wrap int32 len{n}"] = np.arange(n, dtype=np.int32) * 1000
    return cases


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    check(CASES[name])


def test_non_contiguous_and_views():
    a = _normal(6, 8).astype(np.float32)
    check(a.T)
    check(a[::2, 1::3])
    check(np.broadcast_to(np.float32(1.5), (2, 3)))


# ---------------------------------------------------------------------------
# Print options

OPTIONS = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 10},
    {"threshold": 5},
    {"threshold": 0},
    {"edgeitems": 1},
    {"edgeitems": 0},
    {"edgeitems": 0, "threshold": 5},
    {"linewidth": 20},
    {"linewidth": 5},
    {"linewidth": 120},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "full", "precision": 3, "linewidth": 60},
]

OPTION_ARRAYS = [
    "two ints", "fixed align", "sci small", "spread 2d", "nan inf frac", "0d frac", "0d int",
    "empty 0x3", "ints 2d", "bools", "f16", "wrap 100", "wrap 3d", "int 1200", "7x7x7x7",
    "summ sci", "1x1001", "threshold+1", "neg zero", "all zero 2d", "normal (30, 40) float32",
]


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("name", OPTION_ARRAYS)
def test_print_options(opts, name):
    torch.set_printoptions(**opts)
    P.set_printoptions(**opts)
    check(CASES[name])


def test_get_printoptions_round_trip():
    assert P.get_printoptions() == torch._tensor_str.get_printoptions()
    for opts in OPTIONS:
        torch.set_printoptions(**opts)
        P.set_printoptions(**opts)
        assert P.get_printoptions() == torch._tensor_str.get_printoptions()
    saved = P.get_printoptions()
    P.set_printoptions(precision=1)
    P.set_printoptions(**saved)
    assert P.get_printoptions() == saved


def test_printoptions_context_manager():
    with P.printoptions(precision=1, sci_mode=True):
        assert P.get_printoptions()["precision"] == 1
        with torch._tensor_str.printoptions(precision=1, sci_mode=True):
            check(CASES["fixed"])
    assert P.get_printoptions() == torch._tensor_str.get_printoptions()


# ---------------------------------------------------------------------------
# Default dtype, grad_fn names


@pytest.mark.parametrize("name", ["fixed", "0d f64", "empty", "empty f64", "ints", "f16",
                                  "normal (2, 3) float64", "int-valued", "empty bool"])
def test_default_dtype_float64(name):
    torch.set_default_dtype(torch.float64)
    D.DEFAULTS.float = D.float64
    check(CASES[name])


def test_grad_fn_names_from_real_graphs():
    x = torch.from_numpy(_normal(4, 5).astype(np.float32)).requires_grad_()
    w = torch.from_numpy(_normal(3, 5).astype(np.float32)).requires_grad_()
    outs = [
        x.exp(), x.sum(), x.sum(0), x.t(), x @ w.t(), torch.nn.functional.linear(x, w),
        x.reshape(20), torch.nn.functional.layer_norm(x, (5,)), x.double() * 2, x[1:, :2],
        torch.nn.functional.softmax(x, dim=1), x.half(), x.to(torch.bfloat16).mean(),
    ]
    for out in outs:
        name = type(out.grad_fn).__name__
        fake = Tensor(from_torch(out), rg=True, grad_fn=_Node(name))
        assert P.tensor_repr(fake) == repr(out)


def test_grad_fn_without_name_method_uses_type_name():
    class AddBackward0:
        pass

    fake = Tensor(np.array([1.0, 2.0], np.float32), rg=True, grad_fn=AddBackward0())
    assert P.tensor_repr(fake) == "tensor([1., 2.], grad_fn=<AddBackward0>)"


# ---------------------------------------------------------------------------
# Property-based


_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=7)


@st.composite
def _arrays(draw):
    kind = draw(st.sampled_from(["f16", "bf16", "f32", "f64", "int", "bool", "spread"]))
    shape = draw(_shapes)
    if kind == "bool":
        return draw(hnp.arrays(np.bool_, shape))
    if kind == "int":
        dt = draw(st.sampled_from([np.int8, np.uint8, np.int16, np.int32, np.int64]))
        return draw(hnp.arrays(dt, shape))
    if kind == "spread":
        # magnitudes spanning 1e-6 .. 1e9, some integer-valued, some special
        exps = draw(hnp.arrays(np.float64, shape, elements=st.floats(-6, 9)))
        sign = np.where(draw(hnp.arrays(np.bool_, shape)), -1.0, 1.0)
        a = sign * 10.0**exps
        if draw(st.booleans()):
            a = np.round(a)
        return a.astype(draw(st.sampled_from([np.float32, np.float64])))
    dt = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}[kind]
    width = {"f16": 16, "bf16": 32, "f32": 32, "f64": 64}[kind]
    a = draw(hnp.arrays(dt, shape, elements=st.floats(width=width, allow_subnormal=True)))
    return a.astype(BF16) if kind == "bf16" else a


@settings(max_examples=400, deadline=None)
@given(_arrays())
def test_hypothesis_matches_torch(a):
    check(a)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float32, st.sampled_from([(1001,), (40, 30), (3, 400), (11, 11, 11)]),
                  elements=st.floats(-1e4, 1e4, width=32)),
       st.integers(0, 4), st.integers(10, 120), st.sampled_from([None, True, False]))
def test_hypothesis_summarized_with_options(a, edgeitems, linewidth, sci_mode):
    torch.set_printoptions(edgeitems=edgeitems, linewidth=linewidth, sci_mode=sci_mode)
    P.set_printoptions(edgeitems=edgeitems, linewidth=linewidth, sci_mode=sci_mode)
    check(a)
