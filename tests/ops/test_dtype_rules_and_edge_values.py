"""Dtype rules, tensor-only operands, empty reductions and values at singular points
(signed zeros, nan, inf) against torch 2.13, in classes the differential fuzzer found.

- mixed dtypes: ``lerp`` (end and weight must have input's dtype; a 0-d weight is
  promoted), ``x[idx] = v`` / ``index_put`` (source and destination dtypes must match,
  except a masked fill), ``matmul`` (refused by dot/mv/mm, an empty bmm returns the
  second operand's dtype); ``add``/``sub`` with alpha promote as PyTorch does.
- a Python number where PyTorch wants a tensor: maximum, minimum, atan2, fmod, lerp.
- max/min/amax/amin/argmax/argmin/aminmax over a size-0 dim: PyTorch's IndexError or
  RuntimeError, not NumPy's ValueError.
- values: sign(nan) is 0, gelu(inf) in PyTorch's vectorized float kernel is nan, the
  exponent's gradient of (negative number) ** x is nan, clamp and elu keep -0.0, k=1
  matrix products and cumprod's gradient (both of PyTorch's algorithms) give PyTorch's
  signed zeros, cumsum starts from +0.0 and accumulates float32 in float64.

Each case runs in both libraries: the same outcome (exception type, and PyTorch's first
message line as the start of retrograd's; or dtype, shape and values including the sign
of zeros), and for differentiable cases the same gradients.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fuzzgen
import retrograd as R

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _arr(t):
    if t is None:
        return None
    if "float16" in str(t.dtype):  # float16 and bfloat16, as float32 arrays
        t = t.float()
    return np.asarray(t.detach().numpy())


def _outcome(m, fn):
    """What ``fn(m)`` gives: ('raise', type name, first message line) or ('ok', dtype
    name, values as float64 with the sign of zeros, shape)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(m)
        except Exception as e:
            return ("raise", type(e).__name__, str(e).split("\n")[0])
    if isinstance(r, tuple):
        return tuple(_outcome(m, lambda _m, x=x: x) for x in r)
    a = _arr(r)
    return ("ok", str(r.dtype).split(".")[-1], tuple(a.shape), a.astype(np.float64))


def _same(t, r) -> bool:
    if isinstance(t[0], tuple):
        return len(t) == len(r) and all(_same(x, y) for x, y in zip(t, r))
    if t[0] != r[0]:
        return False
    if t[0] == "raise":
        return t[1] == r[1] and r[2].startswith(t[2].rstrip())
    if t[1:3] != r[1:3]:
        return False
    x, y = t[3], r[3]
    return np.array_equal(x, y, equal_nan=True) and np.array_equal(
        np.signbit(x) & ~np.isnan(x), np.signbit(y) & ~np.isnan(y))


def _check(fn):
    t, r = _outcome(torch, fn), _outcome(R, fn)
    assert _same(t, r), f"torch: {t}\nretrograd: {r}"
    return t


# ---------------------------------------------------------------------------------
# lerp


def _lerp_operand(m, kind, dt):
    dtype = getattr(m, dt)
    if kind == "vec":
        return m.tensor([1.0, 2.0], dtype=dtype) if dt != "bool" else m.tensor([True, False])
    return m.tensor(3.0, dtype=dtype) if dt != "bool" else m.tensor(True)


_DTS = ("float32", "float64", "int64", "bool", "float16")


@pytest.mark.parametrize("dt_in", _DTS)
@pytest.mark.parametrize("dt_end", _DTS)
def test_lerp_end_dtype(dt_in, dt_end):
    _check(lambda m: m.lerp(_lerp_operand(m, "vec", dt_in), _lerp_operand(m, "vec", dt_end),
                            0.25))


@pytest.mark.parametrize("dt_in", ("float32", "float64", "int64", "float16"))
@pytest.mark.parametrize("dt_w", ("float32", "float64", "int64", "bool"))
@pytest.mark.parametrize("w_kind", ("vec", "0d"))
@pytest.mark.parametrize("in_kind", ("vec", "0d"))
def test_lerp_weight_dtype(dt_in, dt_w, w_kind, in_kind):
    """A weight with dims must have input's dtype; a 0-d one is promoted with the
    operands (int64 operands and a float 0-d weight give float32)."""
    def fn(m):
        x = _lerp_operand(m, in_kind, dt_in)
        return m.lerp(x, x * 3 if dt_in != "bool" else x, _lerp_operand(m, w_kind, dt_w) * 0)
    _check(fn)


@pytest.mark.parametrize("weight", (0.25, 0.75, True, 2, -0.5))
@pytest.mark.parametrize("dt", ("float32", "float64", "bfloat16", "int64", "bool"))
def test_lerp_number_weight(weight, dt):
    _check(lambda m: m.lerp(_lerp_operand(m, "vec", dt), _lerp_operand(m, "vec", dt) * 0
                            if dt != "bool" else _lerp_operand(m, "vec", dt), weight))


@pytest.mark.parametrize("case", [
    lambda m: m.lerp(m.ones(2), m.ones(3), 0.5),
    lambda m: m.lerp(m.ones(2, 3), m.ones(3, 2), 0.5),
    lambda m: m.lerp(m.ones(2), m.ones(2), m.ones(3)),
    lambda m: m.ones(2).lerp_(m.ones(3), 0.5),
    lambda m: m.ones(1).lerp_(m.ones(2), 0.5),
    lambda m: m.ones(2).lerp_(m.ones(2), m.ones(3, 2)),
    lambda m: m.ones(2, dtype=m.int64).lerp_(m.ones(2, dtype=m.int64), m.tensor(0.5)),
    lambda m: m.ones(2).lerp_(m.ones(2, dtype=m.float64), 0.5),
    lambda m: m.ones(2).lerp_(m.ones(2), m.tensor(0.5, dtype=m.float64)),
    lambda m: m.tensor(1.0).lerp_(m.tensor(3.0), m.tensor(0.5, dtype=m.float64)),
], ids=["shape", "shape-2d", "shape-weight", "inplace-shape", "inplace-out-shape",
        "inplace-weight-shape", "inplace-int-result", "inplace-end-dtype", "inplace-0d-weight",
        "inplace-0d"])
def test_lerp_shapes_and_inplace(case):
    _check(case)


def test_lerp_inplace_under_no_grad():
    """The direct no-grad kernel (optimizers) refuses what the general path refuses."""
    def fn(m):
        x = m.ones(3)
        with m.no_grad():
            return x.lerp_(m.ones(3, dtype=m.float64), 0.5)
    _check(fn)

    def fn2(m):
        x = m.ones(3)
        with m.no_grad():
            return x.lerp_(m.ones(2), 0.5)
    _check(fn2)


@pytest.mark.parametrize("dt_w", ("float32", "float64"))
def test_lerp_0d_weight_gradients(dt_w):
    """A 0-d weight of another dtype is promoted, and its gradient has its own dtype."""
    out = []
    for m in (torch, R):
        x = m.tensor([1.0, -2.0, 0.5], requires_grad=True)
        e = m.tensor([3.0, 4.0, -1.0], requires_grad=True)
        w = m.tensor(0.3, dtype=getattr(m, dt_w), requires_grad=True)
        y = m.lerp(x, e, w)
        y.backward(m.tensor([1.0, 2.0, -1.0]))
        out.append([(_arr(t), str(t.dtype)) for t in (y, x.grad, e.grad, w.grad)])
    for (a, da), (b, db) in zip(*out):
        assert da.split(".")[-1] == db.split(".")[-1]
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ---------------------------------------------------------------------------------
# a Python number where PyTorch wants a tensor

_TENSOR_ONLY = [
    ("maximum", lambda m, a, b: m.maximum(a, b)),
    ("minimum", lambda m, a, b: m.minimum(a, b)),
    ("atan2", lambda m, a, b: m.atan2(a, b)),
    ("fmod", lambda m, a, b: m.fmod(a, b)),
    ("lerp-end", lambda m, a, b: m.lerp(a, b, 0.3)),
    ("lerp-weight", lambda m, a, b: m.lerp(a, a, b) if isinstance(a, m.Tensor) else
     m.lerp(b, b, a)),
]


@pytest.mark.parametrize("value", (2.0, -2, True, None, "s"))
@pytest.mark.parametrize("left", (True, False), ids=("number-first", "number-second"))
@pytest.mark.parametrize("name,fn", _TENSOR_ONLY, ids=[c[0] for c in _TENSOR_ONLY])
def test_number_where_tensor_wanted(name, fn, left, value):
    def call(m):
        x = m.tensor([1.0, -2.0])
        return fn(m, value, x) if left else fn(m, x, value)
    t = _check(call)
    if name == "lerp-weight" and value is not None and value != "s":
        assert t[0] == "ok"  # a number weight is allowed


@pytest.mark.parametrize("case", [
    lambda m: m.tensor([1.0]).maximum(2.0),
    lambda m: m.tensor([1.0]).minimum(2),
    lambda m: m.tensor([1.0]).atan2(2.0),
    lambda m: m.tensor([1.0]).atan2_(2.0),
    lambda m: m.tensor([1.0]).lerp(1.0, 0.3),
    lambda m: m.tensor([1.0]).lerp_(1.0, 0.3),
    lambda m: m.tensor([1.0]).maximum(m.tensor([3.0])),
    lambda m: m.tensor([1.0]).lerp(m.tensor([3.0]), 0.5),
    lambda m: m.tensor([1.0]).fmod(2.0),
    lambda m: m.remainder(2.0, m.tensor([3.0])),
], ids=["maximum", "minimum", "atan2", "atan2_", "lerp", "lerp_", "maximum-ok", "lerp-ok",
        "fmod-number-ok", "remainder-number-first-ok"])
def test_number_where_tensor_wanted_methods(case):
    """The method forms count positions after self, as PyTorch's do."""
    _check(case)


def test_invalid_combination_lists_signatures():
    for fn in (lambda m: m.fmod(2.0, m.ones(2)), lambda m: m.lerp(m.ones(2), 1, 0.3)):
        msgs = []
        for m in (torch, R):
            with pytest.raises(TypeError) as e:
                fn(m)
            msgs.append(str(e.value).splitlines())
        assert msgs[1][:3] == msgs[0][:3]


# ---------------------------------------------------------------------------------
# index_put / setitem dtypes

_PUT = [
    "x[m.tensor([0])] = d", "x[m.tensor([0])] = l", "x[m.tensor([0])] = d0",
    "x[m.tensor([0])] = 2", "x[m.tensor([True, False, True])] = d",
    "x[m.tensor([[True, False], [False, False], [True, True]])] = d0",
    "x[m.tensor([[True, False], [False, False], [True, True]])] = m.ones(3, dtype=m.float64)",
    "x[0] = d", "x[:, m.tensor([0])] = d[:1]", "x[m.tensor([0]), 0] = d[:1]",
    "x.index_put_((m.tensor([0]),), d)", "x = x.index_put((m.tensor([0]),), d)",
    "x = m.index_put(x, (m.tensor([0]),), d)",
    "x.index_put_((m.tensor([0]),), d, accumulate=True)", "x[[0, 1]] = d", "x[[0, 1], 0] = d",
    "x[m.tensor([0])] = m.ones(2, dtype=m.bool)", "x[m.tensor([0])] = m.ones(2, dtype=m.float16)",
    "x[..., m.tensor([0])] = m.ones(3, 1, dtype=m.float64)", "x[m.tensor(0)] = d",
    "x[m.tensor([0, 1])] = m.ones(5, dtype=m.float64)", "x[None, m.tensor([0])] = d",
    "x[m.tensor([0])] = m.ones(0, dtype=m.float64)", "x[m.tensor([True, False, True])] = d0",
    "x[m.tensor([True, False, True]), 0] = d0", "x[:, m.tensor([True, False])] = d0",
    "x[m.tensor([1, 2]), m.tensor([True, False])] = d0",
    "x[m.tensor([True, False, True])] = m.tensor([1.0], dtype=m.float64)",
    "x.index_put_((m.tensor([True, False, True]),), d0, accumulate=True)",
    "x.index_put_((m.tensor([True, False, True]),), d0)", "x[[True, False, True]] = d0",
    "x[m.tensor([0])] = m.tensor(1.0, dtype=m.float64, requires_grad=True)",
    "x = m.zeros(3, 2, requires_grad=True).clone(); x[m.tensor([0])] = d",
    "x = m.zeros(3, 2, requires_grad=True).clone(); "
    "x[m.tensor([True, False, True])] = m.tensor(2.0, dtype=m.float64, requires_grad=True)",
    "x[m.tensor(True)] = d0", "x[m.tensor(True)] = d",
]


@pytest.mark.parametrize("code", _PUT)
def test_index_put_dtypes(code):
    def fn(m):
        env = {"m": m, "x": m.zeros(3, 2), "d": m.ones(2, dtype=m.float64),
               "l": m.ones(2, dtype=m.int64), "d0": m.tensor(1.0, dtype=m.float64)}
        exec(code, env)
        return env["x"]
    _check(fn)


# ---------------------------------------------------------------------------------
# matmul with mixed dtypes, and the signed zeros of k=1 products

_MM_SHAPES = [((2,), (2,)), ((0,), (0,)), ((3, 2), (2,)), ((0, 2), (2,)), ((2,), (2, 4)),
              ((3, 2), (2, 4)), ((0, 2), (2, 3)), ((2, 0), (0, 3)), ((2, 3, 2), (2, 4)),
              ((2, 0, 2), (2, 2)), ((2, 3, 2), (2,)), ((2,), (2, 2, 4)), ((2,), (3, 2, 0)),
              ((3, 2), (2, 2, 4)), ((0, 2), (2, 2, 2)), ((2, 3, 2), (2, 2, 4)),
              ((3, 0, 2), (3, 2, 3)), ((2, 3, 0), (2, 0, 4)), ((3, 0, 2), (1, 2, 3)),
              ((2, 3, 2), (1, 2, 3)), ((1, 0, 2), (3, 2, 3)), ((3, 0, 2), (2, 2, 3)),
              ((2, 2, 3), (2, 3, 0)), ((2, 1, 0, 3), (2, 3, 2))]


@pytest.mark.parametrize("grad", ("none", "a", "b"))
@pytest.mark.parametrize("dts", [("float32", "float64"), ("float64", "float32"),
                                 ("float32", "int64"), ("int64", "float32")])
@pytest.mark.parametrize("sa,sb", _MM_SHAPES)
def test_matmul_mixed_dtypes(sa, sb, dts, grad):
    if (grad == "a" and dts[0] == "int64") or (grad == "b" and dts[1] == "int64"):
        pytest.skip("integer tensors take no gradient")

    def fn(m):
        a = m.zeros(sa, dtype=getattr(m, dts[0]), requires_grad=grad == "a")
        b = m.ones(sb, dtype=getattr(m, dts[1]), requires_grad=grad == "b")
        r = a @ b
        if r.requires_grad and r.numel():
            r.sum().backward()
            g = a.grad if grad == "a" else b.grad
            return r, g
        return r
    _check(fn)


@pytest.mark.parametrize("grad", ("none", "a", "b"))
@pytest.mark.parametrize("sa,sb", [((2, 1), (1, 3)), ((1, 1), (1, 3)), ((3, 1), (1, 1)),
                                   ((3, 1), (2, 1, 3)), ((2, 3, 1), (1, 3)),
                                   ((2, 3, 1), (2, 1, 3)), ((2, 3, 1), (1, 1, 3)),
                                   ((1,), (1, 3)), ((3, 1), (1,)), ((2, 2, 3, 1), (1, 2)),
                                   ((3, 1), (2, 2, 1, 4)), ((1, 3, 1), (2, 1, 3))])
def test_matmul_k1_signed_zeros(sa, sb, grad):
    rng = np.random.default_rng(sum(sa) * 31 + sum(sb))
    va = rng.choice([0.0, -0.0, 1.5, -2.0], size=sa)
    vb = rng.choice([0.0, -0.0, 1.5, -2.0], size=sb)
    for dt in ("float32", "float64"):
        _check(lambda m, dt=dt: m.tensor(va, dtype=getattr(m, dt), requires_grad=grad == "a") @
               m.tensor(vb, dtype=getattr(m, dt), requires_grad=grad == "b"))


# ---------------------------------------------------------------------------------
# reductions over size-0 dims

_EMPTY = ("m.zeros(3, 0, 2)", "m.zeros(0)", "m.zeros(0, 3)", "m.zeros(3, 0).long()")


@pytest.mark.parametrize("x", _EMPTY)
@pytest.mark.parametrize("call", ["amax()", "amax(1)", "amax(-2)", "amax(0)", "amax(-1)",
                                  "amax((0, 1))", "amax((0, 2))", "amax((-2, 0))",
                                  "amax((2, 1))", "amax(1, keepdim=True)", "amax(())",
                                  "amax((1, 5))", "amax(dim=None)", "amin()", "amin(-1)",
                                  "amin((0, -1))", "amin(0, True)", "max()", "max(1)",
                                  "max(-2)", "max(0)", "max(-1, keepdim=True)", "min()",
                                  "min(0)", "min(-1)", "argmax()", "argmax(1)", "argmin(-1)",
                                  "argmax(0, keepdim=True)", "argmin(keepdim=True)"])
def test_empty_reductions(x, call):
    _check(lambda m: eval(f"{x}.{call}", {"m": m}))


@pytest.mark.parametrize("x", _EMPTY + ("m.tensor(1.)",))
@pytest.mark.parametrize("kw", ["", "dim=1", "dim=-2", "dim=0", "dim=-1, keepdim=True"])
def test_empty_aminmax(x, kw):
    _check(lambda m: eval(f"m.aminmax({x}, {kw})", {"m": m}))


def test_duplicate_dims_message():
    _check(lambda m: m.zeros(2, 3, 4).sum((1, 0, 1, 0)))
    _check(lambda m: m.zeros(3, 0).amax((0, -2)))


# ---------------------------------------------------------------------------------
# values at singular points


@pytest.mark.parametrize("dt", ("float32", "float64", "float16", "bfloat16", "int64", "bool"))
def test_sign_of_nan_is_zero(dt):
    vals = [NAN, -NAN, 0.0, -0.0, 1.0, -2.0, INF, -INF] if dt not in ("int64", "bool") else \
        ([1, 0, -3] if dt == "int64" else [True, False])
    _check(lambda m: m.tensor(vals, dtype=getattr(m, dt)).sign())
    _check(lambda m: m.tensor(vals[0], dtype=getattr(m, dt)).sign())  # 0-d


def test_abs_gradient_at_nan():
    def fn(m):
        x = m.tensor([NAN, 1.0, -1.0, 0.0], requires_grad=True)
        x.abs().sum().backward()
        return x.grad
    _check(fn)


_GELU_LAYOUTS = [
    ("one", lambda m, dt: m.tensor([INF], dtype=dt)),
    ("0d", lambda m, dt: m.tensor(INF, dtype=dt)),
    ("two", lambda m, dt: m.tensor([INF, 1.0], dtype=dt)),
    ("mixed", lambda m, dt: m.tensor([1.0, INF, -INF, NAN, 0.0, -0.0], dtype=dt)),
    ("2d", lambda m, dt: m.tensor([[INF, 1.0], [2.0, INF]], dtype=dt)),
    ("transposed", lambda m, dt: m.tensor([[INF, 1.0], [2.0, INF]], dtype=dt).t()),
    ("column", lambda m, dt: m.tensor([[INF, 1.0], [2.0, INF]], dtype=dt)[:, 0]),
    ("expanded", lambda m, dt: m.tensor([INF], dtype=dt).expand(4)),
    ("slice", lambda m, dt: m.full((2, 4), INF, dtype=dt)[:, :2]),
    ("size-1-dims", lambda m, dt: m.full((2, 1, 3), INF, dtype=dt).transpose(0, 1)),
]


@pytest.mark.parametrize("dt", ("float32", "float64", "bfloat16", "float16"))
@pytest.mark.parametrize("name,make", _GELU_LAYOUTS, ids=[c[0] for c in _GELU_LAYOUTS])
def test_gelu_at_inf(name, make, dt):
    """PyTorch sends a contiguous gelu of two or more float32 (bfloat16, float16 where
    oneDNN handles them) elements to oneDNN, whose AVX-512 kernels give nan at +inf and
    whose AVX2/SSE4.1 ones give inf; its own loops and float64 give inf. Compared with
    torch on the machine the test runs on (Note [CPU capability])."""
    def fn(m):
        y = m.nn.functional.gelu(make(m, getattr(m, dt)))
        return m.where(m.isfinite(y), m.zeros_like(y), y)  # compare the non-finite part
    _check(fn)


@pytest.mark.parametrize("approximate", ("none", "tanh"))
@pytest.mark.parametrize("dt", ("float32", "float64"))
def test_gelu_gradient_at_inf(dt, approximate):
    def fn(m):
        x = m.tensor([INF, -INF, NAN, 0.0], dtype=getattr(m, dt), requires_grad=True)
        m.nn.functional.gelu(x, approximate=approximate).sum().backward()
        return x.grad
    _check(fn)


@pytest.mark.parametrize("base", (-1.5, -2, -0.0, 0.0, NAN, INF, -INF, 2.5))
@pytest.mark.parametrize("dt", ("float32", "float64"))
def test_pow_number_base_exponent_gradient(base, dt):
    """d/dx base ** x = base ** x * log(base): nan for a negative base (PyTorch), not a
    ValueError from math.log."""
    def fn(m):
        x = m.tensor([0.5, 1.0, -1.0, 2.0, 0.0], dtype=getattr(m, dt), requires_grad=True)
        y = m.pow(base, x)
        y.sum().backward()
        return y, x.grad
    _check(fn)


@pytest.mark.parametrize("n", (1, 40))
@pytest.mark.parametrize("call", ["clamp(-1.0, 0.0)", "clamp(min=0.0)", "clamp(max=0.0)",
                                  "clamp(-0.0, 0.0)", "clamp(0.0, -0.0)", "clamp_min(0.0)",
                                  "clamp_max(0.0)", "clamp_min(-0.0)", "clamp(-0.0)",
                                  "clamp(min=float('nan'))", "clamp(2.0, 1.0)", "clamp(0)"])
def test_clamp_signed_zeros(call, n):
    """PyTorch's clamp keeps the input on ties with a bound: clamp(-0.0, min=0.0) is
    -0.0."""
    vals = [1.0, -0.0, NAN, 0.0, -3.0, -2.0, 2.0, INF, -INF] * n
    _check(lambda m: eval(f"x.{call}", {"x": m.tensor(vals)}))


@pytest.mark.parametrize("fn", ["elu", "selu", "celu"])
def test_elu_of_negative_zero(fn):
    def run(m):
        y = getattr(m.nn.functional, fn)(m.tensor([-0.0, 0.0, 1.0] * 10))
        return m.where(y == 0, y, m.zeros_like(y))  # the zeros and their signs
    _check(run)


def _cumprod_case(m, vals, gvals, dim, dt, create_graph):
    x = m.tensor(vals, dtype=getattr(m, dt), requires_grad=True)
    y = x.cumprod(dim)
    gx, = m.autograd.grad(y, x, m.tensor(gvals, dtype=getattr(m, dt)),
                          create_graph=create_graph)
    out = [y, gx]
    if create_graph and gx.requires_grad:
        gg, = m.autograd.grad((gx * gx).sum(), x)
        out.append(gg)
    return tuple(out)


@pytest.mark.parametrize("create_graph", (False, True))
@pytest.mark.parametrize("seed", range(12))
def test_cumprod_gradient_with_zeros(seed, create_graph):
    """Both of PyTorch's cumprod_backward algorithms (O(n) without a graph, O(n^2) with
    one), so values and signed zeros match: exactly."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=rng.integers(1, 4)))
    vals = rng.choice([0.0, -0.0, 1.5, -2.0, 0.5, 3.0, -1.0], size=shape)
    gvals = rng.choice([1.0, -0.5, 2.0, 0.0, -0.0], size=shape)
    dim = int(rng.integers(-len(shape), len(shape)))
    for dt in ("float32", "float64"):
        _check(lambda m, dt=dt: _cumprod_case(m, vals, gvals, dim, dt, create_graph))


def test_cumsum_starts_from_positive_zero_and_accumulates_in_double():
    _check(lambda m: m.tensor([-0.0, -0.0, 1.0, -1.0]).cumsum(0))
    rng = np.random.default_rng(0)
    vals = rng.normal(size=(4, 300)).astype(np.float32) * 1e3
    _check(lambda m: m.tensor(vals).cumsum(1))
    _check(lambda m: m.tensor(vals[:, :40] / 1e3 + 1).cumprod(1))


@pytest.mark.parametrize("case", [
    lambda m: m.sub(m.tensor(0.5, dtype=m.float64), m.tensor([1, 2]), alpha=0.5),
    lambda m: m.add(m.tensor([1, 2]), m.tensor(0.5, dtype=m.float64), alpha=0.5),
    lambda m: m.add(m.tensor([1, 2]), m.tensor([1, 2]), alpha=0.5),
    lambda m: m.add(m.tensor([1, 2]), m.tensor([1, 2]), alpha=3),
    lambda m: m.sub(m.tensor([1e8], dtype=m.float64), m.tensor([3]), alpha=0.1),
    lambda m: m.add(m.tensor([1.0, 2.0]), m.tensor([1, 2]), alpha=0.5),
], ids=["0d-double-minus-long", "long-plus-0d-double", "long-float-alpha", "long-int-alpha",
        "double-minus-long", "float-plus-long"])
def test_add_sub_alpha_dtype(case):
    _check(case)


# ---------------------------------------------------------------------------------
# fuzz seeds of these classes beyond the CI range (tests/fuzz/test_fuzz.py runs 0..2999),
# each with what its program uses: tests/fuzz/data/dtype_and_edge_value_seeds.txt

_SEEDS = [seed for seed, _ in fuzzgen.read_seeds("dtype_and_edge_value_seeds.txt")]


@pytest.mark.parametrize("seed", _SEEDS)
def test_fuzz_seeds_agree(seed):
    out = fuzzgen.check_seed(seed, do_shrink=False)
    assert not out.failed, fuzzgen.render(out.program, out.diff)
