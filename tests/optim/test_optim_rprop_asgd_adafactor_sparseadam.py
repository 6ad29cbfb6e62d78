"""Rprop, ASGD, Adafactor and SparseAdam against torch 2.13, step by step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg
from test_optim import _errors, _problem, _train

CASES = [
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.7), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.5, maximize=True)),  # rho = min(lr, 1/sqrt(t)) takes both sides
]


def _compare_state(opt, topt, rtol=1e-7):
    ours_sd, ref_sd = opt.state_dict(), topt.state_dict()
    assert ours_sd["param_groups"] == ref_sd["param_groups"]
    assert ours_sd["state"].keys() == ref_sd["state"].keys()
    for k, ref in ref_sd["state"].items():
        assert list(ours_sd["state"][k]) == list(ref)  # same keys, same order
        for key, v in ref.items():
            mine = ours_sd["state"][k][key]
            assert isinstance(mine, rg.Tensor) and str(mine.dtype) == str(v.dtype)
            assert tuple(mine.shape) == tuple(v.shape)
            np.testing.assert_allclose(mine.numpy(), v.numpy(), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_twelve_steps_match_torch(name, kw):
    ours, opt, losses = _train(rg, name, kw, steps=12)
    ref, topt, tlosses = _train(torch, name, kw, steps=12)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-9)
    _compare_state(opt, topt)


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor"])
def test_param_groups_and_float32(name):
    groups = {"lr": 0.02} if name == "Rprop" else {"lr": 0.02, "weight_decay": 0.2}
    ours, opt, _ = _train(rg, name, {}, steps=6, groups=groups)
    ref, topt, _ = _train(torch, name, {}, steps=6, groups=groups)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    _compare_state(opt, topt)
    ours, _, _ = _train(rg, name, {}, steps=6, dtype="float32")
    ref, _, _ = _train(torch, name, {}, steps=6, dtype="float32")
    for a, b in zip(ours, ref):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_adafactor_factors_higher_dims_and_scalars():
    rng = np.random.default_rng(1)
    shapes = [(2, 3, 4), (), (5,)]
    out = []
    for lib in (rg, torch):
        ps = [lib.tensor(rng.standard_normal(s) if s else 0.7, requires_grad=True)
              for s in shapes]
        rng = np.random.default_rng(1)
        opt = lib.optim.Adafactor(ps, lr=0.1, eps=(None, 1e-3))
        for i in range(4):
            opt.zero_grad()
            sum(((p * (i + 1.0)).sin() ** 2).sum() for p in ps).backward()
            opt.step()
        out.append(([p.detach().numpy().copy() for p in ps], opt))
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    _compare_state(out[0][1], out[1][1], rtol=1e-6)  # the 0-d parameter is float32


@pytest.mark.parametrize("name,kw", [("Rprop", dict(lr=0.05)), ("ASGD", dict(t0=2)),
                                     ("Adafactor", dict(lr=0.05))])
def test_state_dict_round_trip_and_from_torch(name, kw):
    """Resume from our own state dict and from torch's: both continue as torch does."""
    ref, _, _ = _train(torch, name, kw, steps=8)
    params_t, loss_t = _problem(torch)
    topt = getattr(torch.optim, name)(params_t, **kw)
    for _ in range(3):
        topt.zero_grad()
        loss_t().backward()
        topt.step()
    tsd = topt.state_dict()
    converted = {"param_groups": tsd["param_groups"],
                 "state": {k: {kk: rg.tensor(vv.numpy()) for kk, vv in v.items()}
                           for k, v in tsd["state"].items()}}
    params, loss_fn = _problem(rg)
    with rg.no_grad():
        for p, tp in zip(params, params_t):
            p.copy_(rg.tensor(tp.detach().numpy()))
    opt = getattr(rg.optim, name)(params, **kw)
    opt.load_state_dict(converted)
    opt2 = getattr(rg.optim, name)(params, **kw)
    opt2.load_state_dict(opt.state_dict())
    for _ in range(5):
        opt2.zero_grad()
        loss_fn().backward()
        opt2.step()
    for a, b in zip(params, ref):
        np.testing.assert_allclose(a.detach().numpy(), b, rtol=1e-9, atol=1e-12)


def test_sparse_adam_refuses_dense_gradients_as_torch():
    for lib in (rg, torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SparseAdam([w], lr=0.01, maximize=True)
        assert opt.step(lambda: 3.0) == 3.0  # no gradient yet: nothing to refuse
        w.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()
        assert len(opt.state) == 0
    assert (rg.optim.SparseAdam([rg.ones(1, requires_grad=True)]).state_dict()
            == torch.optim.SparseAdam([torch.ones(1, requires_grad=True)]).state_dict())


def _p(lib):
    return [lib.ones(1, requires_grad=True)]


@pytest.mark.parametrize("build", [
    lambda lib: lib.optim.Rprop(_p(lib), lr=-1.0),
    lambda lib: lib.optim.Rprop(_p(lib), etas=(1.5, 2.0)),
    lambda lib: lib.optim.Rprop(_p(lib), lr=lib.ones(2)),
    lambda lib: lib.optim.ASGD(_p(lib), lr=-0.1),
    lambda lib: lib.optim.ASGD(_p(lib), weight_decay=-0.1),
    lambda lib: lib.optim.SparseAdam(_p(lib), lr=0.0),
    lambda lib: lib.optim.SparseAdam(_p(lib), eps=0.0),
    lambda lib: lib.optim.SparseAdam(_p(lib), betas=(0.9, 1.0)),
    lambda lib: lib.optim.Adafactor(_p(lib), lr=-1.0),
    lambda lib: lib.optim.Adafactor(_p(lib), beta2_decay=0.5),
    lambda lib: lib.optim.Adafactor(_p(lib), eps=(-1.0, 1e-3)),
    lambda lib: lib.optim.Adafactor(_p(lib), eps=(None, -1.0)),
    lambda lib: lib.optim.Adafactor(_p(lib), d=0.5),
    lambda lib: lib.optim.Adafactor(_p(lib), weight_decay=-1.0),
])
def test_construction_errors_match_torch(build):
    (t1, m1), (t2, m2) = _errors(build)
    assert t1 is t2 and m1 == m2


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor", "SparseAdam"])
def test_defaults_and_options_match_torch(name):
    ours = getattr(rg.optim, name)(_p(rg)).param_groups[0]
    ref = getattr(torch.optim, name)(_p(torch)).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == \
        {k: v for k, v in ref.items() if k != "params"}
    assert name in rg.optim.__all__


@pytest.mark.parametrize("name,kw", [("Rprop", dict()), ("ASGD", dict(t0=2, weight_decay=0.1)),
                                     ("Adafactor", dict(weight_decay=0.1))])
def test_foreach_true_is_accepted_and_gives_torchs_update(name, kw):
    """retrograd has one implementation; torch's multi-tensor one reorders a few
    operations (ASGD: ~1e-12 apart after 8 steps)."""
    ours, opt, _ = _train(rg, name, {**kw, "foreach": True}, steps=8)
    ref, topt, _ = _train(torch, name, {**kw, "foreach": True}, steps=8)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    assert opt.param_groups[0]["foreach"] is True
    _compare_state(opt, topt, rtol=1e-7)


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor"])
def test_tensor_lr_matches_torch(name):
    """A 0-d tensor lr enters torch's arithmetic as a float32 tensor (ASGD's eta,
    Adafactor's rho and alpha): the same roundings here."""
    res = []
    for lib in (rg, torch):
        params, loss_fn = _problem(lib)
        opt = getattr(lib.optim, name)(params, lr=lib.tensor(0.01))
        for _ in range(4):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()
        res.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
