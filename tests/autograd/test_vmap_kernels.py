"""Kernels that per-sample gradients spend their time in, against torch.func: the
chunked stack of outer products (Note [Stacks of outer products]) and nll_loss under
vmap as one record (Note [NLL under vmap])."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch
import torch.func as tf

import retrograd as R
from retrograd.ops.records import matmul as TM
from retrograd.ops.records import nn as TN


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def _same(a, b, tol=1e-6):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# -- stacks of outer products --------------------------------------------------------

@pytest.mark.parametrize("sa,sb,dtype", [
    ((64, 128, 1), (64, 1, 784), np.float32),   # W9's stack: chunked, four samples a call
    ((3, 40, 128, 1), (40, 1, 700), np.float64),  # two batch dims, broadcast
    ((50, 1, 1), (1, 9000), np.float32),        # a 2-D b shared by the whole stack
    ((8, 100, 1), (1, 1, 5000), np.int64),
    ((7, 200, 1), (7, 1, 3000), np.complex64),
    ((0, 100, 1), (1, 1, 5000), np.float32),    # empty batch
    ((70, 100, 1), (70, 1, 0), np.float32),     # empty rows
])
def test_outer_stack_is_einsum_with_its_zero_signs(sa, sb, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(sa).astype(dtype)
    b = rng.standard_normal(sb).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[a < 0] = 0  # zeros times negatives: +0.0, as a product's sum gives them
        b[b > 1.5] = -0.0
        if b.size:
            b.flat[3] = np.inf  # 0 * inf is nan
    got = TM._outer_stack(a, b)
    want = np.einsum("...ik,...kj->...ij", a, b)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))


def test_outer_stack_chunks_a_large_stack(monkeypatch):
    calls = []
    einsum = np.einsum

    def counted(*a, **k):
        calls.append(1)
        return einsum(*a, **k)
    monkeypatch.setattr(TM.np, "einsum", counted)
    a = np.ones((64, 128, 1), np.float32)
    b = np.ones((64, 1, 784), np.float32)
    assert TM._outer_stack(a, b).shape == (64, 128, 784)
    assert len(calls) == -(-64 // (TM._OUTER_CHUNK // (128 * 784)))
    calls.clear()
    TM._outer_stack(a[:2, :10], b[:2, :, :10])  # small: one call
    assert len(calls) == 1


def test_per_sample_gradients_keep_torch_zero_signs():
    # a hidden layer large enough for the chunked kernel (64 x 700 per sample, 24 samples)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((24, 700)).astype(np.float32)
    y = rng.integers(0, 5, 24)
    w1 = (rng.standard_normal((64, 700)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((5, 64)) * 0.1).astype(np.float32)

    def run(m, fn):
        model = m.nn.Sequential(m.nn.Linear(700, 64), m.nn.ReLU(), m.nn.Linear(64, 5))
        with m.no_grad():
            model[0].weight.copy_(m.tensor(w1))
            model[2].weight.copy_(m.tensor(w2))
            model[0].bias.zero_()
            model[2].bias.zero_()
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb):
            out = fn.functional_call(model, p, (xb.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, yb.unsqueeze(0))
        return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, m.tensor(x), m.tensor(y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no slow-path warning
        got = run(R, R.func)
    want = run(torch, tf)
    for k in want:
        g, t = _np(got[k]), _np(want[k])
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)
        zeros = t == 0
        if k == "0.weight":  # ReLU-masked rows times negative inputs: the zeros to compare
            assert zeros.any()
        np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(t[zeros]))


# -- nll_loss / cross_entropy under vmap ---------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("tdtype", [np.int64, np.uint8])
def test_cross_entropy_under_vmap(reduction, ignore_index, tdtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    y = rng.integers(0, 4, (5, 3)).astype(tdtype)
    y[1] = 2  # every target of one sample ignored (ignore_index=2): the mean is nan

    def run(m, fn):
        def loss(xb, yb):
            return m.nn.functional.cross_entropy(xb, yb, reduction=reduction,
                                                 ignore_index=ignore_index)
        xs, ys = m.tensor(x), m.tensor(y)
        v = fn.vmap(loss)(xs, ys)
        g = fn.vmap(fn.grad(lambda a, b: loss(a, b).sum()))(xs, ys)
        return v, g
    if tdtype == np.uint8:  # PyTorch's vmap gathers with the targets: no Byte index
        with pytest.raises(RuntimeError) as want:
            run(torch, tf)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
            run(R, R.func)
        return
    (v, g), (tv, tg) = run(R, R.func), run(torch, tf)
    _same(v, tv)
    _same(g, tg)


def test_nll_loss_under_vmap_is_one_kernel(monkeypatch):
    calls = []
    kernel = TN.nll_nd.fwd

    def counted(*a):
        calls.append(1)
        return kernel(*a)
    monkeypatch.setattr(TN.nll_nd, "fwd", counted)
    rng = np.random.default_rng(1)
    logp = R.tensor(rng.standard_normal((6, 2, 5))).log_softmax(-1)
    y = R.tensor(rng.integers(0, 5, (6, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = R.func.vmap(R.nn.functional.nll_loss)(logp, y)
    assert len(calls) == 1
    monkeypatch.undo()
    want = R.stack([R.nn.functional.nll_loss(logp[i], y[i]) for i in range(6)])
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-15)


def test_cross_entropy_under_vmap_higher_order():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = np.array([[0, 1, 2], [3, 3, 1]])

    def run(m, fn):
        xs, ys = m.tensor(x), m.tensor(y)
        ce = m.nn.functional.cross_entropy
        h = fn.vmap(fn.hessian(ce))(xs, ys)
        j = fn.jacrev(lambda a: fn.vmap(lambda p, q: ce(p, q, reduction="none"))(a, ys))(xs)
        f = fn.jacfwd(lambda a: fn.vmap(lambda p, q: ce(p, q, reduction="sum"))(a, ys))(xs)
        return h, j, f
    for a, b in zip(run(R, R.func), run(torch, tf)):
        _same(a, b, tol=1e-5)


def test_nll_target_out_of_range_under_vmap_raises_like_torch():
    def run(m):
        with pytest.raises(RuntimeError) as e:
            m.func.vmap(m.nn.functional.cross_entropy)(m.zeros(2, 3, 4),
                                                       m.tensor([[0, 1, 9], [0, 0, 0]]))
        return str(e.value)
    want = run(torch)
    got = run(R)
    assert got.startswith(want), (got, want)
    assert "ignore_index" in got  # the cause and the fix


# -- grad builds no graph it would drop (Note [Transforms on the tape]) --------------

def _create_graph_flags(monkeypatch, fn):
    import retrograd.func as F

    seen = []
    inner = F.batched_grad

    def spy(*a, **k):
        seen.append(k.get("create_graph"))
        return inner(*a, **k)
    monkeypatch.setattr(F, "batched_grad", spy)
    out = fn()
    monkeypatch.undo()
    return seen, out


def test_grad_builds_no_graph_it_would_drop(monkeypatch):
    x = R.tensor([0.5, -1.0, 2.0])
    f = lambda t: (t.sin() * t).sum()  # noqa: E731
    seen, g = _create_graph_flags(monkeypatch, lambda: R.func.grad(f)(x))
    assert seen == [False] and g.grad_fn is None
    seen, _ = _create_graph_flags(monkeypatch, lambda: R.func.vmap(R.func.grad(f))(x[:, None]))
    assert seen == [False]
    # an enclosing grad, a closed-over parameter, an open forward-AD level: kept
    seen, gg = _create_graph_flags(monkeypatch, lambda: R.func.grad(
        lambda t: R.func.grad(f)(t).sum())(x))
    assert seen == [True, False]
    np.testing.assert_allclose(gg.numpy(), tf.grad(lambda t: tf.grad(
        lambda u: (u.sin() * u).sum())(t).sum())(torch.tensor(x.numpy())).numpy(), rtol=1e-6)
    w = R.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen, g = _create_graph_flags(monkeypatch, lambda: R.func.grad(lambda t: (f(t) * w).sum())(x))
    assert seen == [True]
    g.sum().backward()
    assert w.grad is not None
    seen, h = _create_graph_flags(monkeypatch, lambda: R.func.jacfwd(R.func.grad(f))(x))
    assert seen and all(seen)
    _same(h, tf.jacfwd(tf.grad(lambda u: (u.sin() * u).sum()))(torch.tensor(x.numpy())))


@pytest.mark.parametrize("name", ["silu", "mish", "gelu", "tanh", "sigmoid", "elu"])
def test_grad_equals_backward_bit_for_bit(name):
    x = (np.random.default_rng(4).standard_normal(2000) * 4).astype(np.float32)
    fn = getattr(R.nn.functional, name)
    t = R.tensor(x, requires_grad=True)
    fn(t).sum().backward()
    g = R.func.grad(lambda u: fn(u).sum())(R.tensor(x))
    np.testing.assert_array_equal(g.numpy(), t.grad.numpy())
