"""Activation checkpointing against torch 2.13 and against the plain (uncheckpointed) run."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import retrograd as rg
import retrograd.utils.checkpoint as rcp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from bench_checkpoint import saved_tensor_bytes

CP = {torch: tcp, rg: rcp}


def _np(t):
    return t.detach().numpy().astype(np.float64)


def _mlp(L, blocks=3, width=6, p=0.0, seed=0):
    """The same MLP (weights from one NumPy stream) in either library."""
    L.manual_seed(seed)
    layers = []
    for _ in range(blocks):
        layers += [L.nn.Linear(width, width), L.nn.Tanh(), L.nn.Dropout(p)]
    layers.append(L.nn.Linear(width, 2))
    model = L.nn.Sequential(*layers)
    g = np.random.default_rng(seed)
    with L.no_grad():
        for prm in model.parameters():
            prm.copy_(L.tensor(g.standard_normal(tuple(prm.shape)) * 0.5, dtype=L.float64))
    return model.double()


def _data(L, width=6, n=5):
    g = np.random.default_rng(7)
    return (L.tensor(g.standard_normal((n, width)), requires_grad=True),
            L.tensor(g.standard_normal((n, 2))))


def _grads(L, mode, use_reentrant=False, p=0.0, train=True, seed=0):
    model = _mlp(L, p=p)
    model.train(train)
    x, y = _data(L)
    L.manual_seed(seed)
    mods = list(model.children())
    cp = CP[L]
    if mode == "plain":
        out = model(x)
    elif mode == "checkpoint":
        h = cp.checkpoint(lambda t: L.nn.Sequential(*mods[:6])(t), x,
                          use_reentrant=use_reentrant)
        out = cp.checkpoint(lambda t: L.nn.Sequential(*mods[6:])(t), h,
                            use_reentrant=use_reentrant)
    else:
        out = cp.checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    return [_np(loss), _np(x.grad)] + [_np(q.grad) for q in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("mode", ["checkpoint", "sequential"])
def test_gradients_equal_plain_and_torch(mode, use_reentrant):
    plain = _grads(rg, "plain")
    ck = _grads(rg, mode, use_reentrant)
    tck = _grads(torch, mode, use_reentrant)
    for a, b, c in zip(plain, ck, tck):
        np.testing.assert_array_equal(a, b)  # recomputation gives bit-identical gradients
        np.testing.assert_allclose(b, c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("mode", ["checkpoint", "sequential"])
def test_dropout_masks_replayed(mode, use_reentrant):
    plain = _grads(rg, "plain", p=0.5, seed=3)
    ck = _grads(rg, mode, use_reentrant, p=0.5, seed=3)
    for a, b in zip(plain, ck):
        np.testing.assert_array_equal(a, b)
    assert any(np.any(g == 0) for g in plain[2:])  # dropout did drop something


def test_eval_mode_dropout_matches_torch():
    for mode in ("checkpoint", "sequential"):
        r = _grads(rg, mode, False, p=0.5, train=False)
        t = _grads(torch, mode, False, p=0.5, train=False)
        for a, b in zip(r, t):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_without_preserved_rng_masks_differ():
    model = _mlp(rg, p=0.5)
    x, y = _data(rg)
    rg.manual_seed(0)
    out = rcp.checkpoint(model, x, use_reentrant=False, preserve_rng_state=False)
    # the recomputed mask differs from the forward's: a CheckpointError is not raised
    # (same shapes) but the result is not the plain gradient, as in PyTorch
    ((out - y) ** 2).mean().backward()
    plain = _grads(rg, "plain", p=0.5, seed=0)
    assert not np.array_equal(plain[1], _np(x.grad))


def test_rng_state_after_backward_is_as_without_checkpoint():
    draws = []
    for ck in (False, True):
        model = _mlp(rg, p=0.5)
        x, _ = _data(rg)
        rg.manual_seed(11)
        out = rcp.checkpoint(model, x, use_reentrant=False) if ck else model(x)
        out.sum().backward()
        draws.append(rg.rand(3).tolist())
    assert draws[0] == draws[1]


def _f(L):
    w = L.tensor([0.5, -1.5, 2.0], dtype=L.float64, requires_grad=True)

    def fn(t):
        return ((t * w).sin() * t).exp()
    return w, fn


def test_autograd_grad_and_create_graph_non_reentrant():
    res = []
    for L in (torch, rg):
        w, fn = _f(L)
        x = L.tensor([1.0, 2.0, -0.5], dtype=L.float64, requires_grad=True)
        y = CP[L].checkpoint(fn, x, use_reentrant=False).sum()
        gx, gw = L.autograd.grad(y, (x, w), create_graph=True)
        hx, = L.autograd.grad((gx * gw).sum(), x)
        res.append([_np(gx), _np(gw), _np(hx)])
        w2, fn2 = _f(L)
        x2 = L.tensor([1.0, 2.0, -0.5], dtype=L.float64, requires_grad=True)
        y2 = fn2(x2).sum()
        gx2, gw2 = L.autograd.grad(y2, (x2, w2), create_graph=True)
        hx2, = L.autograd.grad((gx2 * gw2).sum(), x2)
        for a, b in zip(res[-1], (_np(gx2), _np(gw2), _np(hx2))):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_backward_inputs_non_reentrant():
    w, fn = _f(rg)
    x = rg.tensor([1.0, 2.0, -0.5], dtype=rg.float64, requires_grad=True)
    rcp.checkpoint(fn, x, use_reentrant=False).sum().backward(inputs=[w])
    assert x.grad is None and w.grad is not None


def test_reentrant_refuses_grad_and_inputs_like_torch():
    msgs = []
    for L in (torch, rg):
        w, fn = _f(L)
        x = L.tensor([1.0, 2.0, -0.5], dtype=L.float64, requires_grad=True)
        for call in (lambda y, x=x, L=L: L.autograd.grad(y, x),
                     lambda y, x=x: y.backward(inputs=[x])):
            y = CP[L].checkpoint(fn, x, use_reentrant=True).sum()
            with pytest.raises(RuntimeError) as e:
                call(y)
            msgs.append(str(e.value))
    assert msgs[2:] == msgs[:2]
    assert msgs[0].startswith("When use_reentrant=True, torch.utils.checkpoint is incompatible")


def test_retain_graph_twice_recomputes():
    res = []
    for L in (torch, rg):
        w, fn = _f(L)
        x = L.tensor([1.0, 2.0, -0.5], dtype=L.float64, requires_grad=True)
        y = CP[L].checkpoint(fn, x, use_reentrant=False).sum()
        y.backward(retain_graph=True)
        y.backward()
        res.append((_np(x.grad), _np(w.grad)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _warn_list(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w]


def test_use_reentrant_warnings_match_torch():
    for name in ("checkpoint", "checkpoint_sequential"):
        got = []
        for L in (torch, rg):
            x = L.ones(2, requires_grad=True)
            if name == "checkpoint":
                got.append(_warn_list(lambda L=L, x=x: CP[L].checkpoint(L.sin, x)))
            else:
                got.append(_warn_list(lambda L=L, x=x: CP[L].checkpoint_sequential(
                    [L.sin, L.cos], 2, x)))
        assert got[0] == got[1] and len(got[0]) == 1


def test_no_input_requires_grad_warning_reentrant():
    got = []
    for L in (torch, rg):
        w = L.ones(2, requires_grad=True)
        got.append(_warn_list(lambda L=L, w=w: CP[L].checkpoint(lambda t: t * w, L.ones(2),
                                                                  use_reentrant=True)))
    assert got[0] == got[1] == ["None of the inputs have requires_grad=True. Gradients will "
                                "be None"]


def test_argument_errors_match_torch():
    for L in (torch, rg):
        cp = CP[L]
        x = L.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            cp.checkpoint(L.sin, x, use_reentrant=True, foo=1)
        with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only"):
            cp.checkpoint(L.sin, x, use_reentrant=True, context_fn=lambda: (None, None))
        with pytest.raises(ValueError, match="determinism_check should be one of"):
            cp.checkpoint(L.sin, x, use_reentrant=False, determinism_check="bitwise")
        with pytest.raises(ValueError, match="Unexpected keyword arguments: bar"):
            cp.checkpoint_sequential([L.sin], 1, x, use_reentrant=False, bar=2)


def test_kwargs_non_reentrant():
    for L in (torch, rg):
        x = L.tensor([0.3, 0.7], requires_grad=True)
        CP[L].checkpoint(lambda t, scale=1.0: (t * scale).sin().sum(), x, scale=3.0,
                         use_reentrant=False).backward()
        if L is torch:
            tg = _np(x.grad)
    np.testing.assert_allclose(_np(x.grad), tg, rtol=1e-6)


def test_nondeterministic_function_raises_checkpoint_error():
    msgs = []
    for L in (torch, rg):
        calls = []

        def fn(t, calls=calls):
            calls.append(1)
            return (t * t * t).sum() if len(calls) == 1 else (t * t).sum()

        x = L.ones(3, requires_grad=True)
        y = CP[L].checkpoint(fn, x, use_reentrant=False)
        with pytest.raises(RuntimeError) as e:
            y.backward()
        assert type(e.value).__name__ == "CheckpointError"
        msgs.append(str(e.value).split("\n")[:3])
    assert msgs[0] == msgs[1]
    assert msgs[0][0].endswith("A different number of tensors was saved during the original "
                               "forward and recomputation.")


def test_metadata_mismatch_raises():
    for L in (torch, rg):
        calls = []

        def fn(t, calls=calls):
            calls.append(1)
            u = t if len(calls) == 1 else t[:2]
            return (u * u).sum()

        x = L.ones(3, requires_grad=True)
        y = CP[L].checkpoint(fn, x, use_reentrant=False)
        with pytest.raises(RuntimeError, match="Recomputed values for the following tensors "
                                               "have different metadata"):
            y.backward()


def test_inplace_change_of_input_is_detected():
    x = rg.ones(3, requires_grad=True)
    h = x * 2
    y = rcp.checkpoint(lambda t: (t * t).sum(), h, use_reentrant=False)
    with rg.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_no_grad_forward_runs_plainly():
    for L in (torch, rg):
        x = L.ones(2, requires_grad=True)
        with L.no_grad():
            y = CP[L].checkpoint(L.sin, x, use_reentrant=False)
        assert not y.requires_grad


def test_early_stop_off_and_nested():
    res = []
    for L in (torch, rg):
        cp = CP[L]
        w, fn = _f(L)
        x = L.tensor([1.0, 2.0, -0.5], dtype=L.float64, requires_grad=True)
        with cp.set_checkpoint_early_stop(False):
            y = cp.checkpoint(fn, x, use_reentrant=False)

        def outer(t, cp=cp, fn=fn):
            return cp.checkpoint(fn, t.cos(), use_reentrant=False).tanh()

        z = cp.checkpoint(outer, x, use_reentrant=False)
        (y.sum() + z.sum()).backward()
        res.append((_np(x.grad), _np(w.grad)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_autocast_state_replayed_in_recomputation():
    res = []
    for L in (torch, rg):
        model = _mlp(L).float()
        x, _ = _data(L)
        x = x.detach().float().requires_grad_()
        with L.autocast("cpu", dtype=L.bfloat16):
            out = CP[L].checkpoint(model, x, use_reentrant=False)
        assert str(out.dtype).endswith("bfloat16")
        out.float().sum().backward()
        res.append([_np(x.grad.float())] + [_np(q.grad) for q in model.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=3e-2, atol=3e-2)


def test_checkpointed_graph_holds_less_memory():
    # 20 x (Linear + ReLU) of width 128, batch 32: the bench's shape ratio, small
    rg.manual_seed(0)
    layers = []
    for _ in range(20):
        layers += [rg.nn.Linear(128, 128), rg.nn.ReLU()]
    model = rg.nn.Sequential(*layers)
    x = rg.randn(32, 128, requires_grad=True)  # the reentrant variant needs it (as torch)
    plain = model(x).sum()
    ck = rcp.checkpoint_sequential(model, 4, x, use_reentrant=False).sum()
    pb, cb = saved_tensor_bytes(plain), saved_tensor_bytes(ck)
    assert cb <= 0.4 * pb
    plain.backward()
    g1 = [q.grad.clone() for q in model.parameters()]
    model.zero_grad()
    ck.backward()
    for a, q in zip(g1, model.parameters()):
        assert bool(rg.equal(a, q.grad))
    # and the reentrant variant keeps only the segment inputs as well
    cr = rcp.checkpoint_sequential(model, 4, x, use_reentrant=True).sum()
    assert saved_tensor_bytes(cr) <= 0.4 * pb


def test_recomputed_tensors_freed_after_backward():
    x = rg.randn(4, 8, requires_grad=True)
    w = rg.randn(8, 8, requires_grad=True)
    y = rcp.checkpoint(lambda t: (t @ w).tanh() @ w, x, use_reentrant=False).sum()
    holders = [s.packed for n in [y.grad_fn.next_functions[0][0]] for s in n._saved
               if hasattr(s, "packed")]
    frame = holders[0].frame
    y.backward()
    assert len(frame.recomputed) == 0
