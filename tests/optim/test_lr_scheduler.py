"""Learning-rate schedulers against torch 2.13: equal lr sequences, float for float."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import retrograd as rg


def _opt(lib, kind="SGD"):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.5}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _run(lib, make, steps=100, kind="SGD", metrics=None):
    opt = _opt(lib, kind)
    S = lib.optim.lr_scheduler
    sched = make(S, opt)
    seq = [list(sched.get_last_lr())]
    for i in range(steps):
        opt.step()
        if metrics is not None:
            sched.step(metrics(i))
        else:
            sched.step()
        seq.append(list(sched.get_last_lr()))
        seq.append([(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])
    return seq


SCHEDULERS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.97 ** e),
    "LambdaLR-per-group": lambda S, o: S.LambdaLR(o, [lambda e: 1 / (e + 1),
                                                      lambda e: math.cos(e / 10)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda S, o: S.StepLR(o, step_size=7, gamma=0.3),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[10, 30, 30, 70], gamma=0.5),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.97),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=17, eta_min=0.001),
    "CosineAnnealingLR-long": lambda S, o: S.CosineAnnealingLR(o, T_max=30),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=10),
    "CosineAnnealingWarmRestarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.01),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=40),
    "LinearLR-default": lambda S, o: S.LinearLR(o),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=13),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=60, power=2.0),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=101),
    "OneCycleLR-3phase-linear": lambda S, o: S.OneCycleLR(
        o, max_lr=1.0, epochs=10, steps_per_epoch=11, pct_start=0.25, three_phase=True,
        anneal_strategy="linear", base_momentum=0.8, max_momentum=0.9),
    "CyclicLR": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=7),
    "CyclicLR-triangular2": lambda S, o: S.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=5,
                                                    step_size_down=9, mode="triangular2"),
    "CyclicLR-exp_range": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=6,
                                                  mode="exp_range", gamma=0.97),
    "CyclicLR-custom": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4,
                                               scale_fn=lambda x: 1 / x, scale_mode="cycle",
                                               cycle_momentum=False),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=10),
            S.CosineAnnealingLR(o, T_max=30), S.ExponentialLR(o, gamma=0.9)],
        milestones=[10, 50]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=20), S.ExponentialLR(o, gamma=0.98),
         S.StepLR(o, step_size=15, gamma=0.5)]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_lr_sequence_equals_torch(name):
    make = SCHEDULERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _run(rg, make)
        ref = _run(torch, make)
    assert ours == ref


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR"])
def test_momentum_cycling_uses_adam_beta1(name):
    make = SCHEDULERS[name]
    assert _run(rg, make, kind="Adam") == _run(torch, make, kind="Adam")


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", factor=0.5, patience=2, cooldown=3),
                                dict(threshold_mode="abs", threshold=0.1, min_lr=[0.01, 0.2]),
                                dict(patience=0, eps=1e-3)])
def test_reduce_lr_on_plateau_equals_torch(kw):
    def metrics(i):
        return 1.0 / (1 + i % 13) + (i // 40) * 0.1

    def make(S, o):
        return S.ReduceLROnPlateau(o, **kw)

    assert _run(rg, make, metrics=metrics) == _run(torch, make, metrics=metrics)


def test_closed_form_with_epoch_argument():
    def run(lib):
        opt = _opt(lib)
        S = lib.optim.lr_scheduler
        scheds = [S.StepLR(opt, 3, 0.5)]
        out = []
        for e in [1, 2, 5, 9, 4]:
            opt.step()
            with pytest.warns(UserWarning, match="The epoch parameter"):
                scheds[0].step(e)
            out.append(scheds[0].get_last_lr())
        return out

    assert run(rg) == run(torch)


def test_warm_restarts_fractional_epochs():
    def run(lib):
        opt = _opt(lib)
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2)
        out = []
        for e in [0.5, 1.25, 3.9, 4.0, 7.5, 12.0, 13.3]:
            opt.step()
            s.step(e)
            out.append(s.get_last_lr())
        return out

    assert run(rg) == run(torch)


def test_state_dict_round_trip_continues_sequence():
    def run(lib, split):
        opt = _opt(lib)
        S = lib.optim.lr_scheduler
        s = S.OneCycleLR(opt, max_lr=1.0, total_steps=60)
        out = []
        for i in range(50):
            if i == split:
                sd_opt, sd = opt.state_dict(), s.state_dict()
                opt = _opt(lib)
                opt.load_state_dict(sd_opt)
                s = S.OneCycleLR(opt, max_lr=1.0, total_steps=60)
                s.load_state_dict(sd)
            opt.step()
            s.step()
            out.append(s.get_last_lr())
        return out

    full = run(rg, None)
    assert run(rg, 20) == full == run(torch, None)


def test_state_dict_keys_match_torch():
    for name in ["StepLR", "CosineAnnealingLR", "LambdaLR", "SequentialLR", "CyclicLR"]:
        ours = SCHEDULERS[name](rg.optim.lr_scheduler, _opt(rg)).state_dict()
        ref = SCHEDULERS[name](torch.optim.lr_scheduler, _opt(torch)).state_dict()
        assert set(ours) == set(ref), name


def test_lambda_state_dict_keeps_callable_object_state():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, e):
            return self.rate ** e

    opt = _opt(rg)
    s = rg.optim.lr_scheduler.LambdaLR(opt, [Decay(), lambda e: 1.0])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]
    sd["lr_lambdas"][0]["rate"] = 0.25
    s.load_state_dict(sd)
    assert s.lr_lambdas[0].rate == 0.25


def test_warning_when_scheduler_steps_before_optimizer():
    for lib in (rg, torch):
        opt = _opt(lib)
        s = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                             r"`optimizer.step\(\)`"):
            s.step()


def test_get_lr_outside_step_warns():
    for lib in (rg, torch):
        s = lib.optim.lr_scheduler.StepLR(_opt(lib), 2)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            s.get_lr()


@pytest.mark.parametrize("make", [
    lambda S, o: S.ConstantLR(o, factor=2.0),
    lambda S, o: S.LinearLR(o, start_factor=0.0),
    lambda S, o: S.LinearLR(o, end_factor=1.5),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1.5),
    lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    lambda S, o: S.OneCycleLR(o, max_lr=[1.0], total_steps=10),
    lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="bad"),
    lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
    lambda S, o: S.ReduceLROnPlateau(o, mode="avg"),
    lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda S, o: S.SequentialLR(o, [S.StepLR(o, 2)], milestones=[3]),
    lambda S, o: S.SequentialLR(o, [S.ReduceLROnPlateau(o), S.StepLR(o, 2)], milestones=[3]),
    lambda S, o: S.StepLR(object(), 2),
    lambda S, o: S.StepLR(o, 2, last_epoch=5),
])
def test_errors_match_torch(make):
    outs = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            make(lib.optim.lr_scheduler, _opt(lib))
        outs.append((type(info.value), str(info.value)))
    assert outs[0] == outs[1]


def test_one_cycle_past_total_steps_raises():
    opt = _opt(rg)
    s = rg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    opt.step()
    for _ in range(3):
        s.step()
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total "
                                         "steps is 3"):
        s.step()


def test_tensor_lr_is_updated_in_place():
    w = rg.zeros(1, requires_grad=True)
    lr = rg.tensor(0.1)
    opt = rg.optim.SGD([w], lr=lr)
    s = rg.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)
