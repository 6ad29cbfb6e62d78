"""Gradients at singular points equal PyTorch's (issue 12, "Correct gradients, always").

Each case runs the same function under retrograd and torch 2.13 in float64 and compares
the first derivative and, where listed, the second (the gradient of the sum of the first
derivatives), element by element: the same NaN positions, the same infinities, values
within rounding. Cases marked ``signs`` also compare the sign of every zero and infinity
(atan2 at (0, 0) gives 0 and -0; x ** 0.5 at -0.0 gives -inf). The formulas followed are
PyTorch's ``derivatives.yaml`` / ``FunctionsManual.cpp`` (std_backward, atan2_backward,
norm_backward, elu_double_backward, cumprod_backward, evenly_distribute_backward).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

INF, NAN = math.inf, math.nan


def _grads(m, fn, vals, order):
    xs = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in vals]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(m, *xs)
        gs = m.autograd.grad(y.sum(), xs, create_graph=order > 1, allow_unused=True)
        out = [[None if g is None else g.detach().numpy().copy() for g in gs]]
        if order > 1:
            s = None
            for g in gs:
                if g is not None and g.requires_grad:
                    s = g.sum() if s is None else s + g.sum()
            if s is None:
                out.append(None)
            else:
                g2 = m.autograd.grad(s, xs, allow_unused=True)
                out.append([None if g is None else g.detach().numpy().copy() for g in g2])
    return out


def _same(got, want, signs, what):
    assert (got is None) == (want is None), what
    if want is None:
        return
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), f"{what}, input {i}"
        if w is None:
            continue
        assert g.shape == w.shape, f"{what}, input {i}"
        assert np.array_equal(np.isnan(g), np.isnan(w)), f"{what}, input {i}: {g} vs torch {w}"
        assert np.array_equal(np.isposinf(g), np.isposinf(w)), f"{what}, input {i}: {g} vs {w}"
        assert np.array_equal(np.isneginf(g), np.isneginf(w)), f"{what}, input {i}: {g} vs {w}"
        fin = np.isfinite(w)
        np.testing.assert_allclose(g[fin], w[fin], rtol=1e-10, atol=1e-12,
                                   err_msg=f"{what}, input {i}")
        if signs:
            assert np.array_equal(np.signbit(g)[~np.isnan(w)], np.signbit(w)[~np.isnan(w)]), \
                f"{what}, input {i}: signs {g} vs torch {w}"


F = "nn.functional"


def _f(m, name):
    obj = m
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _pow_by(e):
    return lambda m, x: x ** e


# (id, fn(m, *inputs), input values, order, compare signs of zeros)
CASES = [
    # A. std / var of a constant: gradient 0 (std_backward masks std == 0), second 0
    ("std-const", lambda m, x: x.std(), [[1.5, 1.5, 1.5]], 2, False),
    ("std-const-unbiased-false", lambda m, x: x.std(unbiased=False), [[2.0, 2.0]], 2, False),
    ("std-dim-one-const-row", lambda m, x: x.std(dim=1), [[[2.0, 2.0], [1.0, 3.0]]], 2, False),
    ("std-correction0-keepdim", lambda m, x: m.std(x, dim=0, correction=0, keepdim=True),
     [[[1.0, 2.0], [1.0, 5.0]]], 2, False),
    ("std-multi-dim", lambda m, x: x.std(dim=(0, 2)), [np.full((2, 3, 2), 0.5).tolist()], 2,
     False),
    ("var-const", lambda m, x: x.var(), [[1.5, 1.5, 1.5]], 2, False),
    ("std_mean-const", lambda m, x: sum(t.sum() for t in m.std_mean(x)), [[3.0, 3.0]], 2, False),
    ("std_mean-dim", lambda m, x: m.std_mean(x, dim=1)[0], [[[2.0, 2.0], [1.0, 3.0]]], 2, False),
    # atan2 at the origin: atan2_backward's masked reciprocal gives 0 and -0
    ("atan2-origin", lambda m, a, b: m.atan2(a, b), [[0.0, -0.0, 0.0], [0.0, 0.0, -0.0]], 2,
     True),
    ("atan2-mixed", lambda m, a, b: m.atan2(a, b), [[0.0, 1.0], [0.0, -2.0]], 1, True),
    # pow with a scalar exponent: torch computes x ** 0.5 as sqrt, x ** -0.5 as rsqrt
    ("pow-0.5-signed-zero", lambda m, x: x ** 0.5, [[-0.0, 0.0, 4.0]], 2, True),
    ("pow-neg0.5-signed-zero", lambda m, x: x ** -0.5, [[-0.0, 0.0, 4.0]], 2, True),
    ("pow-1.5-signed-zero", lambda m, x: x ** 1.5, [[-0.0, 0.0, 4.0]], 2, True),
    *[(f"pow-zero-base-exp{e}", _pow_by(e), [[0.0, -0.0, 2.0]], 2, True)
      for e in (0, 1, 2, 3, -1, -2, 2.5)],
    ("pow-tensor-exponent-at-zero", lambda m, a, b: a ** b,
     [[0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [0.0, 1.0, 2.0, 0.5, -1.0, 0.0, -0.5]], 2, False),
    ("rpow-zero-base", lambda m, b: 0.0 ** b, [[0.0, 1.0, 2.0, 0.5, -1.0]], 2, False),
    ("sqrt-forward-signed-zero", lambda m, x: m.sqrt(x) + x ** 0.5, [[-0.0, 0.0]], 1, True),
    # ELU family: first derivative at 0 takes the negative branch, second is 0 there
    ("elu-at-zero", lambda m, x: _f(m, F).elu(x), [[0.0, -0.0, 1.0, -1.0]], 2, False),
    ("elu-alpha2", lambda m, x: _f(m, F).elu(x, alpha=2.0), [[0.0, 1.0, -1.0, -30.0]], 2,
     False),
    ("celu-at-zero", lambda m, x: _f(m, F).celu(x, alpha=1.5), [[0.0, 1.0, -1.0]], 2, False),
    ("selu-at-zero", lambda m, x: _f(m, F).selu(x), [[0.0, 1.0, -1.0]], 2, False),
    # norms at 0: first derivative 0 (masked), second nan (0/0 behind the mask, as torch)
    ("norm-dim-zero-row", lambda m, x: x.norm(dim=1), [[[0.0, 0.0], [3.0, 4.0]]], 2, False),
    ("norm-zero", lambda m, x: x.norm(), [[0.0, 0.0]], 2, False),
    ("vector_norm-dim-zero-row", lambda m, x: m.linalg.vector_norm(x, dim=1),
     [[[0.0, 0.0], [3.0, 4.0]]], 2, False),
    ("vector_norm-ord3", lambda m, x: m.linalg.vector_norm(x, ord=3, dim=1),
     [[[0.0, 0.0], [3.0, -4.0]]], 2, False),
    ("vector_norm-ord1.5", lambda m, x: m.linalg.vector_norm(x, ord=1.5, dim=1),
     [[[0.0, 0.0], [3.0, -4.0]]], 2, False),
    ("vector_norm-ord0.5", lambda m, x: m.linalg.vector_norm(x, ord=0.5, dim=1),
     [[[0.0, 0.0], [3.0, 4.0]]], 2, False),
    ("vector_norm-ord1-first", lambda m, x: m.linalg.vector_norm(x, ord=1, dim=1),
     [[[0.0, 0.0], [3.0, -4.0]]], 1, False),
    ("vector_norm-inf-ties", lambda m, x: m.linalg.vector_norm(x, ord=INF, dim=1),
     [[[0.0, 0.0], [3.0, -3.0]]], 1, False),
    ("dist-equal-points", lambda m, a, b: m.dist(a, b), [[1.0, 2.0], [1.0, 2.0]], 2, False),
    # cumprod with zeros (cumprod_backward handles zeros exactly)
    ("cumprod-one-zero", lambda m, x: x.cumprod(0), [[2.0, 0.0, 3.0, 4.0]], 2, False),
    ("cumprod-two-zeros", lambda m, x: x.cumprod(0), [[2.0, 0.0, 3.0, 0.0, 5.0]], 2, False),
    ("cumprod-zero-first", lambda m, x: x.cumprod(0), [[0.0, 2.0, 3.0]], 2, False),
    ("cumprod-dim1", lambda m, x: x.cumprod(1), [[[2.0, 0.0, 3.0], [1.0, 2.0, 0.0]]], 2, False),
    ("cumprod-dim0-zeros", lambda m, x: x.cumprod(0),
     [[[2.0, 0.0, 3.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]]], 2, False),
    # softmax family with infinite logits: a +inf logit makes the whole row nan
    ("softmax-inf", lambda m, x: m.softmax(x, 0) * m.tensor([1.0, 2.0, 3.0], dtype=m.float64),
     [[INF, 1.0, 2.0]], 2, False),
    ("softmax-neg-inf", lambda m, x: m.softmax(x, 0) * m.tensor([1.0, 2.0, 3.0],
                                                                  dtype=m.float64),
     [[-INF, 1.0, 2.0]], 2, False),
    ("log_softmax-inf", lambda m, x: m.log_softmax(x, 0) * m.tensor([1.0, 2.0, 3.0],
                                                                      dtype=m.float64),
     [[INF, 1.0, 2.0]], 2, False),
    ("log_softmax-neg-inf", lambda m, x: m.log_softmax(x, 0) * m.tensor([1.0, 2.0, 3.0],
                                                                          dtype=m.float64),
     [[-INF, 1.0, 2.0]], 1, False),
    ("softmax-rows", lambda m, x: m.softmax(x, 1)[:, 0], [[[INF, 1.0, 2.0], [0.0, 1.0, 2.0]]], 1,
     False),
    ("cross_entropy-inf", lambda m, x: _f(m, F).cross_entropy(x, m.tensor([1, 0])),
     [[[INF, 1.0, 2.0], [0.0, 1.0, 2.0]]], 2, False),
    ("cross_entropy-neg-inf", lambda m, x: _f(m, F).cross_entropy(x, m.tensor([1, 0])),
     [[[-INF, 1.0, 2.0], [0.0, 1.0, 2.0]]], 1, False),
    ("logsumexp-inf", lambda m, x: x.logsumexp(0), [[INF, 1.0]], 1, False),
    ("logsumexp-neg-inf-row", lambda m, x: x.logsumexp(0), [[-INF, -INF]], 1, False),
    # the sweep: roots, logs, kinks, ties, zeros, masked nan, division by zero
    ("sqrt-zero", lambda m, x: x.sqrt(), [[0.0, -0.0, -1.0]], 2, False),
    ("rsqrt-zero", lambda m, x: x.rsqrt(), [[0.0, -0.0]], 2, False),
    ("log-zero", lambda m, x: x.log(), [[0.0, -0.0, -1.0]], 2, False),
    ("abs-zero", lambda m, x: x.abs(), [[0.0, -0.0, 2.0]], 1, True),
    ("sign-zero", lambda m, x: x.sign(), [[0.0, -0.0]], 1, False),
    ("relu-zero", lambda m, x: x.relu(), [[0.0, -0.0, 1.0]], 2, False),
    ("hardtanh-limits", lambda m, x: _f(m, F).hardtanh(x), [[-1.0, 1.0, 0.0, 2.0]], 1, False),
    ("clamp-limits", lambda m, x: x.clamp(-1, 1), [[-1.0, 1.0, 0.0, 2.0]], 2, False),
    ("clamp-min-limit", lambda m, x: x.clamp(min=1), [[1.0, 0.0]], 1, False),
    ("clamp-tensor-limits", lambda m, x, lo, hi: x.clamp(lo, hi),
     [[-1.0, 1.0, 0.0, 2.0], [-1.0, -1.0, 0.0, 3.0], [1.0, 1.0, 0.0, 2.0]], 1, False),
    ("max-ties", lambda m, x: x.max(), [[1.0, 3.0, 3.0]], 1, False),
    ("min-ties", lambda m, x: x.min(), [[1.0, 1.0, 3.0]], 1, False),
    ("amax-ties", lambda m, x: x.amax(1), [[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]], 1, False),
    ("max-dim-ties", lambda m, x: x.max(1)[0], [[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]], 1, False),
    ("maximum-ties", lambda m, a, b: m.maximum(a, b), [[1.0, 2.0], [1.0, 3.0]], 1, False),
    ("median-ties", lambda m, x: x.median(), [[1.0, 2.0, 2.0, 3.0]], 1, False),
    ("median-nan", lambda m, x: x.median(), [[3.0, NAN, 1.0]], 1, False),
    ("prod-one-zero", lambda m, x: x.prod(), [[2.0, 0.0, 3.0]], 2, False),
    ("prod-two-zeros", lambda m, x: x.prod(), [[2.0, 0.0, 0.0]], 2, False),
    ("prod-dim-zeros", lambda m, x: x.prod(1), [[[2.0, 0.0, 3.0], [0.0, 0.0, 1.0]]], 2, False),
    ("where-nan-unselected", lambda m, x: m.where(x > 0, x, x.log()), [[1.0, -1.0]], 1, False),
    ("where-sqrt-unselected", lambda m, x: m.where(x > 0, x.sqrt(), 0.0), [[1.0, -1.0, 0.0]], 1,
     False),
    ("div-by-zero", lambda m, a, b: a / b, [[1.0, 0.0, -1.0], [0.0, 0.0, 0.0]], 2, False),
    ("reciprocal-zero", lambda m, x: x.reciprocal(), [[0.0, -0.0]], 2, False),
]


@pytest.mark.parametrize("fn,vals,order,signs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_torch(fn, vals, order, signs):
    want = _grads(torch, fn, vals, order)
    got = _grads(R, fn, vals, order)
    _same(got[0], want[0], signs, "first derivative")
    if order > 1:
        _same(got[1], want[1], signs, "second derivative")


def test_forward_values_at_singular_points():
    """The forward values behind the gradients: -0.0 ** 0.5 is -0.0, (-inf) ** 0.5 is nan,
    a +inf logit makes a softmax row nan, empty reductions follow PyTorch."""
    def both(fn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(R).numpy(), fn(torch).numpy()

    for fn in (lambda m: m.tensor([-0.0, 0.0, -INF, 4.0], dtype=m.float64) ** 0.5,
               lambda m: m.tensor([-0.0, 0.0, -INF, 4.0], dtype=m.float64) ** -0.5,
               lambda m: m.softmax(m.tensor([INF, 1.0, 2.0]), 0),
               lambda m: m.log_softmax(m.tensor([INF, 1.0, 2.0]), 0),
               lambda m: m.softmax(m.tensor([-INF, -INF]), 0),
               lambda m: m.logsumexp(m.zeros(2, 0), 1),
               lambda m: m.logsumexp(m.zeros(0), 0),
               lambda m: m.softmax(m.zeros(2, 0), 1),
               lambda m: m.log_softmax(m.zeros(0), 0),
               lambda m: m.zeros(0).median(),
               lambda m: m.tensor([1.0, NAN, 0.0]).median(),
               lambda m: m.tensor([1, 2, -1, 0, -1]) ** m.tensor([-1, -1, -1, -1, -2]),
               lambda m: 2 ** m.tensor([-1, 2])):
        got, want = both(fn)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        num = ~np.isnan(want) if want.dtype.kind == "f" else np.ones(want.shape, bool)
        assert np.array_equal(np.signbit(got)[num], np.signbit(want)[num])


def test_std_node_and_inplace_elu():
    x = R.tensor([1.0, 1.0], requires_grad=True)
    assert x.std().grad_fn.name() == "StdBackward0"
    assert x.median().grad_fn.name() == "MedianBackward0"
    for m in (R, torch):  # in-place ELU saves its result (elu_): second derivative 0 at 0
        a = m.tensor([-1.0, 0.0, 2.0], dtype=m.float64, requires_grad=True)
        y = _f(m, F).elu(a * 1, alpha=2.0, inplace=True)
        g, = m.autograd.grad(y.sum(), a, create_graph=True)
        g2, = m.autograd.grad(g.sum(), a)
        if m is R:
            ours = (g.detach().numpy(), g2.numpy())
        else:
            np.testing.assert_allclose(ours[0], g.detach().numpy())
            np.testing.assert_allclose(ours[1], g2.numpy())
