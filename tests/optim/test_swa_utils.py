"""torch.optim.swa_utils against torch 2.13: AveragedModel, SWALR, update_bn, avg functions."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
import torch

import retrograd as rg


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def _copy_weights(dst, src):
    with rg.no_grad():
        for (name, p), (tname, tp) in zip(dst.state_dict().items(), src.state_dict().items()):
            assert name == tname
            p.copy_(rg.tensor(tp.detach().numpy()))


def _pair():
    torch.manual_seed(0)
    t = _model(torch).double()
    r = _model(rg).double()
    _copy_weights(r, t)
    return r, t


def _train_and_average(lib, model, kw, steps=5):
    swa = lib.optim.swa_utils.AveragedModel(model, **kw)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((8, 3)))
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
        swa.update_parameters(model)
    return swa


def _fns(lib, which):
    su = lib.optim.swa_utils
    return {
        "default": {},
        "ema_avg_fn": {"avg_fn": su.get_ema_avg_fn(0.9)},
        "swa_avg_fn": {"avg_fn": su.get_swa_avg_fn()},
        "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8)},
        "swa_multi": {"multi_avg_fn": su.get_swa_multi_avg_fn()},
        "ema_multi_buffers": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8), "use_buffers": True},
        "default_buffers": {"use_buffers": True},
    }[which]


@pytest.mark.parametrize("which", ["default", "ema_avg_fn", "swa_avg_fn", "ema_multi",
                                   "swa_multi", "ema_multi_buffers", "default_buffers"])
def test_averaged_model_matches_torch(which):
    r, t = _pair()
    ours = _train_and_average(rg, r, _fns(rg, which))
    ref = _train_and_average(torch, t, _fns(torch, which))
    ours_sd, ref_sd = ours.state_dict(), ref.state_dict()
    assert list(ours_sd) == list(ref_sd)
    for k, v in ref_sd.items():
        assert str(ours_sd[k].dtype) == str(v.dtype), k
        np.testing.assert_allclose(ours_sd[k].numpy(), v.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=k)
    x = np.random.default_rng(1).standard_normal((5, 3))
    ours.eval()
    ref.eval()
    np.testing.assert_allclose(ours(rg.tensor(x)).detach().numpy(),
                               ref(torch.tensor(x)).detach().numpy(), rtol=1e-10)


def test_integer_buffers_with_swa_multi_fn_fail_as_in_torch():
    """num_batches_tracked (int64) reaches the integer branch of get_swa_multi_avg_fn,
    which fails in torch 2.13 (integer addcdiv, float alpha): the same errors here."""
    msgs = []
    for lib in (rg, torch):
        fn = lib.optim.swa_utils.get_swa_multi_avg_fn()
        for n in (lib.tensor(1), 1):
            with pytest.raises(RuntimeError) as info:
                fn([lib.tensor([4, 8])], [lib.tensor([8, 16])], n)
            msgs.append(str(info.value))
    assert msgs[0].startswith(msgs[2]) and msgs[1].startswith(msgs[3])


def test_avg_fn_values_and_errors():
    for lib in (rg, torch):
        su = lib.optim.swa_utils
        a, b = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 6.0])
        assert su.get_ema_avg_fn(0.25)(a, b, 0).tolist() == [2.5, 5.0]
        assert su.get_swa_avg_fn()(a, b, lib.tensor(3)).tolist() == [1.5, 3.0]
        ints = [lib.tensor([4, 8])]
        su.get_ema_multi_avg_fn(0.5)(ints, [lib.tensor([8, 16])], 1)
        assert ints[0].tolist() == [6, 12]
    msgs = []
    for lib in (rg, torch):
        su = lib.optim.swa_utils
        for bad in (partial(su.get_ema_avg_fn, 1.5), partial(su.get_ema_multi_avg_fn, -0.1),
                    partial(su.AveragedModel, lib.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                            multi_avg_fn=su.get_swa_multi_avg_fn())):
            with pytest.raises((ValueError, AssertionError)) as info:
                bad()
            msgs.append((type(info.value), str(info.value)))
    assert msgs[:3] == msgs[3:]


def test_update_bn_matches_torch():
    r, t = _pair()
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((6, 3)) for _ in range(3)]
    for lib, m in ((rg, r), (torch, t)):
        m.eval()
        m[1].momentum = 0.3
        loader = [(lib.tensor(x), lib.zeros(6)) for x in data[:2]] + [lib.tensor(data[2])]
        lib.optim.swa_utils.update_bn(loader, m)
        assert not m.training and m[1].momentum == 0.3
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(r.state_dict()[k].numpy(), v.numpy(), rtol=1e-12, err_msg=k)
    # no batch norm: nothing happens
    rg.optim.swa_utils.update_bn([rg.ones(1, 2)], rg.nn.Linear(2, 2))


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=3),
                                dict(swa_lr=0.05, anneal_epochs=0),
                                dict(swa_lr=0.05, anneal_epochs=4, anneal_strategy="linear")])
def test_swalr_matches_torch(kw):
    lrs = []
    for lib in (rg, torch):
        ps = [lib.zeros(1, requires_grad=True), lib.zeros(1, requires_grad=True)]
        opt = lib.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        seen = [sched.get_last_lr()]
        for i in range(12):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
            if i == 5:  # resume from a state dict half way
                sd = sched.state_dict()
                sched = lib.optim.swa_utils.SWALR(opt, **kw)
                sched.load_state_dict(sd)
        lrs.append(seen)
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


@pytest.mark.parametrize("kw", [dict(anneal_strategy="exp"), dict(anneal_epochs=-1),
                                dict(anneal_epochs=1.5), dict(swa_lr=[0.1, 0.2])])
def test_swalr_errors_match_torch(kw):
    msgs = []
    for lib in (rg, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        with pytest.raises(ValueError) as info:
            lib.optim.swa_utils.SWALR(opt, **{"swa_lr": 0.1, **kw})
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_swalr_get_lr_outside_step_warns():
    opt = rg.optim.SGD([rg.zeros(1, requires_grad=True)], lr=1.0)
    sched = rg.optim.swa_utils.SWALR(opt, swa_lr=0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.get_lr()
    assert "get_last_lr()" in str(w[0].message)


def test_public_names_match_torch():
    assert sorted(rg.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    assert set(torch.optim.lr_scheduler.__all__) <= set(dir(rg.optim.lr_scheduler))
