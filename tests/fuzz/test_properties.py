"""Property tests: random expressions over random broadcastable shapes, against PyTorch.

Hypothesis draws a small program (unary, binary and reduction steps over 1-3 leaves
whose shapes broadcast together), runs it with retrograd and with torch on the same
float64 inputs, and compares the values, the gradients of every leaf for a random
``gradient=``, and a second derivative (grad of ``sum(u * grad)`` with
``create_graph=True``). Ops whose domain is restricted get their input mapped into
the domain first (``log(|x| + 0.5)``), so every value is finite.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retrograd as R

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-10, 1e-10

UNARY = {
    "neg": lambda m, x: -x,
    "sin": lambda m, x: x.sin(),
    "cos": lambda m, x: m.cos(x),
    "tanh": lambda m, x: x.tanh(),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "exp": lambda m, x: (x.tanh() * 2).exp(),
    "log": lambda m, x: (x.abs() + 0.5).log(),
    "sqrt": lambda m, x: (x * x + 0.25).sqrt(),
    "rsqrt": lambda m, x: (x * x + 0.25).rsqrt(),
    "reciprocal": lambda m, x: (x.abs() + 0.5).reciprocal(),
    "square": lambda m, x: m.square(x.tanh() * 2),
    "abs": lambda m, x: x.abs(),
    "relu": lambda m, x: m.relu(x),
    "atan": lambda m, x: x.atan(),
    "erf": lambda m, x: m.erf(x),
    "expm1": lambda m, x: m.expm1(x.tanh()),
    "log1p": lambda m, x: m.log1p(x.abs()),
    "clamp": lambda m, x: x.clamp(-0.7, 0.9),
    "scale": lambda m, x: x * 1.5 - 0.25,
    "pow3": lambda m, x: x.tanh() ** 3,
    "transpose": lambda m, x: x.transpose(0, -1) if x.dim() >= 2 else x,
    "flip": lambda m, x: x.flip(-1) if x.dim() >= 1 else x,
    "cumsum": lambda m, x: x.cumsum(-1) if x.dim() >= 1 else x,
    "softplus": lambda m, x: ((x.tanh() * 3).exp() + 1).log(),
}
BINARY = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / (b.abs() + 0.5),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b.abs() + 0.5),
    "pow": lambda m, a, b: (a.abs() + 0.5) ** b.tanh(),
    "where": lambda m, a, b: m.where(a > b, a * 2, b),
    "hypot": lambda m, a, b: (a * a + b * b + 0.1).sqrt(),
}
REDUCE = {
    "sum": lambda m, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda m, x, d, k: x.mean(d, keepdim=k),
    "amax": lambda m, x, d, k: x.amax(d, keepdim=k),
    "logsumexp": lambda m, x, d, k: x.logsumexp(d, keepdim=k),
    "prod": lambda m, x, d, k: x.tanh().prod(d, keepdim=k),
    "var": lambda m, x, d, k: x.var(d, keepdim=k, correction=0),
    "norm": lambda m, x, d, k: (x * x + 0.1).sqrt().norm(dim=d, keepdim=k),
}


@st.composite
def programs(draw):
    ndim = draw(st.integers(0, 3))
    base = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    n_leaves = draw(st.integers(1, 3))
    shapes = []
    for _ in range(n_leaves):
        drop = draw(st.integers(0, ndim))
        shp = [1 if draw(st.booleans()) else s for s in base[drop:]]
        shapes.append(tuple(shp))
    steps = []
    live = [s for s in shapes]  # shapes of the values built so far
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce"]))
        i = draw(st.integers(0, len(live) - 1))
        if kind == "unary":
            name = draw(st.sampled_from(sorted(UNARY)))
            s = live[i]
            if name == "transpose" and len(s) >= 2:
                s = (s[-1],) + s[1:-1] + (s[0],)
            steps.append(("unary", name, i))
            live.append(s)
        elif kind == "binary":
            j = draw(st.integers(0, len(live) - 1))
            try:
                s = np.broadcast_shapes(live[i], live[j])
            except ValueError:
                continue
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), i, j))
            live.append(tuple(s))
        else:
            s = live[i]
            if not s:
                continue
            d = draw(st.integers(-len(s), len(s) - 1))
            keep = draw(st.booleans())
            steps.append(("reduce", draw(st.sampled_from(sorted(REDUCE))), i, d, keep))
            lst = list(s)
            if keep:
                lst[d] = 1
            else:
                del lst[d]
            live.append(tuple(lst))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    return shapes, steps, seed


def run(m, program, arrays):
    shapes, steps, _ = program
    leaves = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in arrays]
    vals = list(leaves)
    for step in steps:
        if step[0] == "unary":
            vals.append(UNARY[step[1]](m, vals[step[2]]))
        elif step[0] == "binary":
            vals.append(BINARY[step[1]](m, vals[step[2]], vals[step[3]]))
        else:
            vals.append(REDUCE[step[1]](m, vals[step[2]], step[3], step[4]))
    # the output mixes every value built, so each step reaches the gradient
    out = vals[-1]
    for v in vals[len(leaves):-1]:
        out = out + v.sum() * 0.5
    return leaves, out


def _np(t):
    return t.detach().numpy(force=True)  # force: torch's ZeroTensor


def check(a, b, what):
    assert tuple(a.shape) == tuple(b.shape), what
    assert str(a.dtype) == str(b.dtype), what
    np.testing.assert_allclose(_np(a), _np(b), rtol=RTOL, atol=ATOL, err_msg=what)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(programs())
def test_random_programs_match_torch(program):
    shapes, steps, seed = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, s) for s in shapes]
    rl, rout = run(R, program, arrays)
    tl, tout = run(torch, program, arrays)
    what = f"program {steps} on shapes {shapes}"
    check(rout, tout, what + ": value")
    v = rng.standard_normal(tuple(tout.shape))
    rg = R.autograd.grad(rout, rl, R.tensor(v), create_graph=True, allow_unused=True)
    tg = torch.autograd.grad(tout, tl, torch.tensor(v), create_graph=True, allow_unused=True)
    us = [rng.standard_normal(s) for s in shapes]
    rs, ts = [], []
    for k, (a, b) in enumerate(zip(rg, tg)):
        assert (a is None) == (b is None), what + f": grad {k} None-ness"
        if b is None:
            continue
        check(a, b, what + f": grad of leaf {k}")
        if b.requires_grad:
            assert a.requires_grad, what
            ts.append((b * torch.tensor(us[k])).sum())
            rs.append((a * R.tensor(us[k])).sum())
    if ts:
        rgg = R.autograd.grad(sum(rs[1:], rs[0]), rl, allow_unused=True)
        tgg = torch.autograd.grad(sum(ts[1:], ts[0]), tl, allow_unused=True)
        for k, (a, b) in enumerate(zip(rgg, tgg)):
            if b is None or a is None:  # None and zeros are the same second derivative
                z = b if a is None else a
                assert z is None or not _np(z).any(), what + f": second grad {k}"
                continue
            check(a, b, what + f": second grad of leaf {k}")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.data())
def test_broadcast_binary_ops_float32(data):
    """Elementwise binary ops over random broadcast pairs in float32 (value and grads)."""
    ndim = data.draw(st.integers(0, 3))
    base = tuple(data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    sa = tuple(1 if data.draw(st.booleans()) else s for s in base[data.draw(st.integers(0, ndim)):])
    sb = tuple(1 if data.draw(st.booleans()) else s for s in base[data.draw(st.integers(0, ndim)):])
    name = data.draw(st.sampled_from(sorted(BINARY)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31 - 1)))
    a, b = rng.uniform(-2, 2, sa).astype(np.float32), rng.uniform(-2, 2, sb).astype(np.float32)
    outs = []
    for m in (R, torch):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        out = BINARY[name](m, x, y)
        out.backward(m.tensor(np.ones(out.shape, np.float32)))
        outs.append((out, x.grad, y.grad))
    for r, t in zip(*outs):
        assert tuple(r.shape) == tuple(t.shape) and str(r.dtype) == str(t.dtype)
        np.testing.assert_allclose(_np(r), _np(t), rtol=2e-6, atol=2e-6, err_msg=name)
