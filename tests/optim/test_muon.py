"""torch.optim.Muon against PyTorch 2.13, step by step (values, state, options, errors)."""

import numpy as np
import pytest
import torch

import retrograd as R


def _run(m, shapes, steps, **kw):
    rng = np.random.default_rng(0)
    ws = [m.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
          for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(steps)]
    opt = m.optim.Muon(ws, **kw)
    trace = []
    for gs in grads:
        for w, g in zip(ws, gs):
            w.grad = m.tensor(g)
        opt.step()
        trace.append([w.detach().numpy().copy() for w in ws]
                     + [opt.state[w]["momentum_buffer"].numpy().copy() for w in ws])
    return trace


@pytest.mark.parametrize("kw", [
    {}, {"lr": 0.02, "momentum": 0.9}, {"nesterov": False, "weight_decay": 0.0},
    {"adjust_lr_fn": "match_rms_adamw", "lr": 0.01}, {"ns_steps": 2, "eps": 1e-3},
    {"ns_coefficients": (2.0, -1.5, 0.5), "adjust_lr_fn": "original"},
])
def test_muon_matches_torch_step_by_step(kw):
    shapes = [(5, 3), (3, 5), (4, 4)]  # tall (transposed inside), wide, square
    ours, theirs = _run(R, shapes, 4, **kw), _run(torch, shapes, 4, **kw)
    for a_step, b_step in zip(ours, theirs):
        for a, b in zip(a_step, b_step):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_muon_skips_params_without_grad_and_state_dict_round_trip():
    w = R.ones(2, 2, requires_grad=True)
    v = R.ones(2, 3, requires_grad=True)
    opt = R.optim.Muon([w, v], lr=0.1)
    w.grad = R.eye(2)
    opt.step()
    assert v.grad is None and len(opt.state[v]) == 0 and v.eq(1).all()
    sd = opt.state_dict()
    assert set(sd["param_groups"][0]) >= {"lr", "weight_decay", "momentum", "nesterov",
                                          "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn"}
    opt2 = R.optim.Muon([w, v], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.state[w]["momentum_buffer"].equal(opt.state[w]["momentum_buffer"])


@pytest.mark.parametrize("args,kw", [
    ((), {"lr": -1.0}), ((), {"momentum": -0.1}), ((), {"weight_decay": -1.0}),
    ((), {"adjust_lr_fn": "bogus"}),
])
def test_muon_option_errors_match_torch(args, kw):
    msgs = []
    for m in (R, torch):
        with pytest.raises(ValueError) as e:
            m.optim.Muon([m.ones(2, 2, requires_grad=True)], *args, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_muon_rejects_non_2d_params_and_too_many_steps():
    msgs = []
    for m in (R, torch):
        with pytest.raises(ValueError) as e:
            m.optim.Muon([m.ones(3, requires_grad=True)])
        msgs.append(str(e.value))
        w = m.ones(2, 2, requires_grad=True)
        w.grad = m.ones(2, 2)
        with pytest.raises(ValueError, match="less than 100"):
            m.optim.Muon([w], ns_steps=100).step()
    assert msgs[0] == msgs[1]


def _swap_run(m):
    w = m.tensor([1.0, 2.0], requires_grad=True)
    w.grad = m.tensor([0.5, -1.0])
    opt = m.optim.Adam([w], lr=0.1)
    opt.step()
    osd = opt.state_dict()
    other = m.tensor([3.0, 4.0], requires_grad=True)
    other.grad = m.tensor([1.0, 1.0])
    osd["param_groups"][0]["lr"] = 0.5
    with m.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, osd):
        inside = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is other)
        opt.step()
    errors = []
    for bad in ({"state": [], "param_groups": []}, {"state": {}, "param_groups": [{}, {}]},
                {"state": {}, "param_groups": [{"params": [0]}]},
                {"state": {5: {}}, "param_groups": osd["param_groups"]}):
        with pytest.raises(RuntimeError) as e:
            with m.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, bad):
                pass
        errors.append(str(e.value))
    return (w.detach().numpy(), other.detach().numpy(), opt.param_groups[0]["lr"], inside,
            osd["state"][0]["exp_avg"].numpy(), opt.state[w]["exp_avg"].numpy(), errors)


def test_swap_in_optimizer_params_and_state_matches_torch():
    ours, theirs = _swap_run(R), _swap_run(torch)
    for a, b in zip(ours, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6)
        else:
            assert a == b
