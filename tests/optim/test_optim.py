"""Optimizers against torch 2.13: same model, data and options give the same parameters."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg

# ----------------------------------------------------------------------------------
# a small hand-written model, built the same way in both libraries


def _problem(lib, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(4, 3), (4,), (2, 4), (2,)]
    dt = getattr(lib, dtype)
    params = [lib.tensor(rng.standard_normal(s), dtype=dt, requires_grad=True) for s in shapes]
    x = lib.tensor(rng.standard_normal((6, 3)), dtype=dt)
    y = lib.tensor(rng.standard_normal((6, 2)), dtype=dt)

    def loss_fn():
        h = lib.tanh(x @ params[0].T + params[1])
        return ((h @ params[2].T + params[3] - y) ** 2).mean()

    return params, loss_fn


def _train(lib, name, kw, steps=20, dtype="float64", groups=None):
    params, loss_fn = _problem(lib, dtype)
    sign = -1.0 if kw.get("maximize") else 1.0  # maximize(-loss) stays bounded
    if groups is not None:
        opt = getattr(lib.optim, name)([{"params": params[:2], **groups},
                                        {"params": params[2:]}], **kw)
    else:
        opt = getattr(lib.optim, name)(params, **kw)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = sign * loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [p.detach().numpy().copy() for p in params], opt, losses


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, decoupled_weight_decay=True,
                  weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_twenty_steps_match_torch(name, kw):
    ours, opt, losses = _train(rg, name, kw)
    ref, topt, tlosses = _train(torch, name, kw)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
        # the updates follow torch's operation order: only last-bit differences remain
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-9)
    # same optimizer state, key for key
    ours_sd, ref_sd = opt.state_dict(), topt.state_dict()
    assert ours_sd["state"].keys() == ref_sd["state"].keys()
    for k in ref_sd["state"]:
        assert ours_sd["state"][k].keys() == ref_sd["state"][k].keys()
        for key, v in ref_sd["state"][k].items():
            mine = ours_sd["state"][k][key]
            assert isinstance(mine, rg.Tensor) and str(mine.dtype) == str(v.dtype)
            np.testing.assert_allclose(mine.numpy(), v.numpy(), rtol=1e-7, atol=1e-10)
    assert ours_sd["param_groups"] == ref_sd["param_groups"]


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("RMSprop", dict(lr=0.01, centered=True))])
def test_float32_matches_torch(name, kw):
    ours, _, _ = _train(rg, name, kw, dtype="float32")
    ref, _, _ = _train(torch, name, kw, dtype="float32")
    for a, b in zip(ours, ref):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "NAdam"])
def test_param_groups_with_own_options(name):
    kw = {"lr": 0.01} if name != "SGD" else {"lr": 0.1, "momentum": 0.9}
    groups = {"lr": 0.05, "weight_decay": 0.2}
    ours, opt, _ = _train(rg, name, kw, steps=10, groups=groups)
    ref, topt, _ = _train(torch, name, kw, steps=10, groups=groups)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert opt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def _lbfgs(lib, kw, steps):
    params, loss_fn = _problem(lib)
    opt = lib.optim.LBFGS(params, **kw)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    out = [opt.step(closure).item() for _ in range(steps)]
    return [p.detach().numpy().copy() for p in params], out, opt.state[params[0]]


@pytest.mark.parametrize("kw", [dict(lr=0.5, max_iter=5), dict(max_iter=5, history_size=2),
                                dict(line_search_fn="strong_wolfe"),
                                dict(line_search_fn="strong_wolfe", max_iter=4, lr=0.3)])
def test_lbfgs_matches_torch(kw):
    ours, losses, st = _lbfgs(rg, kw, 4)
    ref, tlosses, tst = _lbfgs(torch, kw, 4)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-7)
    assert st["func_evals"] == tst["func_evals"] and st["n_iter"] == tst["n_iter"]


def test_lbfgs_needs_one_group_and_a_known_line_search():
    p = rg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        rg.optim.LBFGS([{"params": [p]}, {"params": [rg.zeros(1, requires_grad=True)]}])
    opt = rg.optim.LBFGS([p], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# ----------------------------------------------------------------------------------
# the Optimizer base class


def test_parameters_without_grad_are_skipped():
    for lib in (rg, torch):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        opt = lib.optim.Adam([a, b], lr=0.1)
        (a * 3).sum().backward()
        opt.step()
        assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
        assert a.tolist() != [1.0, 1.0] and len(opt.state[a]) == 3


def test_zero_grad():
    for lib in (rg, torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        (w * 2).sum().backward()
        g = w.grad
        opt.zero_grad(set_to_none=False)
        assert w.grad is g and w.grad.tolist() == [0.0, 0.0]
        opt.zero_grad()
        assert w.grad is None


def _errors(fn):
    outs = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        outs.append((type(info.value), str(info.value)))
    return outs


@pytest.mark.parametrize("build", [
    lambda lib: lib.optim.SGD(lib.ones(2, requires_grad=True), lr=0.1),
    lambda lib: lib.optim.SGD([], lr=0.1),
    lambda lib: lib.optim.SGD([1.0], lr=0.1),
    lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
    lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1, momentum=-1),
    lambda lib: lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1, nesterov=True),
    lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)], betas=(1.0, 0.9)),
    lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)], eps=-1.0),
    lambda lib: lib.optim.Adam([lib.ones(1, requires_grad=True)], weight_decay=-1.0),
    lambda lib: lib.optim.RMSprop([lib.ones(1, requires_grad=True)], alpha=-1.0),
    lambda lib: lib.optim.Adadelta([lib.ones(1, requires_grad=True)], rho=1.5),
    lambda lib: lib.optim.NAdam([lib.ones(1, requires_grad=True)], momentum_decay=-1.0),
    lambda lib: lib.optim.SGD([{"params": {lib.ones(1, requires_grad=True)}}], lr=0.1),
])
def test_construction_errors_match_torch(build):
    (t1, m1), (t2, m2) = _errors(build)
    assert t1 is t2 and m1.startswith(m2.split(".FloatTensor")[0]), (m1, m2)


def test_parameter_passed_twice():
    for lib in (rg, torch):
        p = lib.ones(1, requires_grad=True)
        with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                             "group"):
            lib.optim.SGD([{"params": [p]}, {"params": [p], "lr": 1.0}], lr=0.1)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            lib.optim.SGD([p, p], lr=0.1)


def test_add_param_group_and_repr():
    opts = []
    for lib in (rg, torch):
        opt = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": lib.zeros(2, requires_grad=True), "lr": 0.5})
        opts.append(opt)
    assert repr(opts[0]) == repr(opts[1])
    assert opts[0].state_dict()["param_groups"] == opts[1].state_dict()["param_groups"]


def test_named_parameters_are_accepted():
    for lib in (rg, torch):
        opt = lib.optim.SGD([("w", lib.ones(1, requires_grad=True))], lr=0.1)
        assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]


def test_required_option():
    from retrograd.optim.optimizer import Optimizer, required

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Optimizer([rg.ones(1, requires_grad=True)], {"lr": required})


def test_unsupported_implementation_switches_raise():
    p = rg.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="fused=True is not supported"):
        rg.optim.Adam([p], fused=True)
    with pytest.raises(RuntimeError, match="differentiable=True"):
        rg.optim.SGD([p], lr=0.1, differentiable=True)
    with pytest.raises(RuntimeError, match="capturable=True"):
        rg.optim.AdamW([p], capturable=True)


def test_closure_runs_with_grad_enabled_and_returns_loss():
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.1)
    seen = []

    def closure():
        seen.append(rg.is_grad_enabled())
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    with rg.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 5.0
    assert w.tolist() == pytest.approx([0.8, 1.6])


def test_step_does_not_record_graph():
    w = rg.ones(2, requires_grad=True)
    opt = rg.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert w.grad_fn is None and w.is_leaf and rg.is_grad_enabled()
    assert opt.state[w]["exp_avg"].grad_fn is None


def test_tensor_lr():
    outs = []
    for lib in (rg, torch):
        params, loss_fn = _problem(lib)
        lr = lib.tensor(0.05, dtype=lib.float64)
        opt = lib.optim.SGD(params, lr=lr, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            loss_fn().backward()
            opt.step()
        outs.append([p.detach().numpy().copy() for p in params])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_step_dtype_follows_default_dtype():
    prev = rg.get_default_dtype()
    try:
        rg.set_default_dtype(rg.float64)
        w = rg.ones(1, requires_grad=True)
        w.grad = rg.ones(1)
        opt = rg.optim.Adam([w])
        opt.step()
        assert opt.state[w]["step"].dtype == rg.float64
    finally:
        rg.set_default_dtype(prev)
    w = rg.ones(1, requires_grad=True)
    w.grad = rg.ones(1)
    opt = rg.optim.Adam([w])
    opt.step()
    assert opt.state[w]["step"].dtype == rg.float32


# ----------------------------------------------------------------------------------
# hooks


def test_step_hooks():
    calls = []
    w = rg.ones(1, requires_grad=True)
    w.grad = rg.ones(1)
    opt = rg.optim.SGD([w], lr=0.5)

    def pre(o, args, kwargs):
        calls.append(("pre", w.item()))

    def post(o, args, kwargs):
        calls.append(("post", w.item()))

    h1 = opt.register_step_pre_hook(pre)
    h2 = opt.register_step_post_hook(post)
    opt.step()
    assert calls == [("pre", 1.0), ("post", 0.5)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(calls) == 2


def test_step_pre_hook_can_replace_arguments():
    w = rg.tensor([3.0], requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    h = opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": closure}))
    assert opt.step().item() == 9.0
    h.remove()
    h = opt.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple of"):
        opt.step()
    h.remove()


def test_global_step_hooks():
    from retrograd.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    seen = []
    h1 = register_optimizer_step_pre_hook(lambda o, a, k: seen.append(("pre", type(o).__name__)))
    h2 = register_optimizer_step_post_hook(lambda o, a, k: seen.append(("post",
                                                                         type(o).__name__)))
    try:
        w = rg.ones(1, requires_grad=True)
        w.grad = rg.ones(1)
        rg.optim.Adam([w]).step()
        rg.optim.SGD([w], lr=0.1).step()
    finally:
        h1.remove()
        h2.remove()
    assert seen == [("pre", "Adam"), ("post", "Adam"), ("pre", "SGD"), ("post", "SGD")]


def test_state_dict_hooks():
    opt = rg.optim.SGD([rg.ones(1, requires_grad=True)], lr=0.1)
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: log.append("post"))
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("load-pre"))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load-post"), prepend=True)
    opt.load_state_dict(opt.state_dict())
    assert log == ["pre", "post", "load-pre", "load-post"]


# ----------------------------------------------------------------------------------
# state dicts: a round trip resumes training bit for bit


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("AdamW", dict(lr=0.01)),
                                     ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1)), ("Adadelta", dict()),
                                     ("Adamax", dict()), ("NAdam", dict()),
                                     ("RAdam", dict())])
def test_state_dict_round_trip_resumes_bit_for_bit(name, kw, tmp_path):
    full, _, _ = _train(rg, name, kw, steps=12, dtype="float32")

    params, loss_fn = _problem(rg, "float32")
    opt = getattr(rg.optim, name)(params, **kw)
    for _ in range(5):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    path = tmp_path / "ckpt.pt"
    rg.save({"params": [p.detach() for p in params], "optim": opt.state_dict()}, path)

    ckpt = rg.load(path)
    params2, loss_fn2 = _problem(rg, "float32")
    with rg.no_grad():
        for p, saved in zip(params2, ckpt["params"]):
            p.copy_(saved)
    opt2 = getattr(rg.optim, name)(params2, **kw)
    opt2.load_state_dict(ckpt["optim"])
    for _ in range(7):
        opt2.zero_grad()
        loss_fn2().backward()
        opt2.step()
    for a, p in zip(full, params2):
        assert np.array_equal(a, p.detach().numpy())


def test_load_state_dict_errors_match_torch():
    def mismatch_groups(lib):
        a = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        b = lib.optim.SGD([{"params": [lib.ones(1, requires_grad=True)]},
                           {"params": [lib.ones(1, requires_grad=True)]}], lr=0.1)
        b.load_state_dict(a.state_dict())

    def mismatch_sizes(lib):
        a = lib.optim.SGD([lib.ones(1, requires_grad=True)], lr=0.1)
        b = lib.optim.SGD([lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)],
                          lr=0.1)
        b.load_state_dict(a.state_dict())

    for fn in (mismatch_groups, mismatch_sizes):
        (t1, m1), (t2, m2) = _errors(fn)
        assert t1 is t2 and m1 == m2


def test_load_state_dict_casts_state_to_param_dtype_but_not_step():
    w = rg.ones(2, requires_grad=True)
    w.grad = rg.ones(2)
    opt = rg.optim.Adam([w])
    opt.step()
    sd = opt.state_dict()
    w64 = rg.ones(2, dtype=rg.float64, requires_grad=True)
    opt64 = rg.optim.Adam([w64])
    opt64.load_state_dict(sd)
    assert opt64.state[w64]["exp_avg"].dtype == rg.float64
    assert opt64.state[w64]["step"].dtype == rg.float32


def test_old_style_numeric_step_is_upgraded():
    w = rg.ones(2, requires_grad=True)
    w.grad = rg.ones(2)
    opt = rg.optim.Adam([w])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1
    opt2 = rg.optim.Adam([w])
    opt2.load_state_dict(sd)
    assert isinstance(opt2.state[w]["step"], rg.Tensor)
    opt2.step()
    assert opt2.state[w]["step"].item() == 2.0


# ----------------------------------------------------------------------------------
# a PyTorch training script, run with `import retrograd as torch`

_nn = getattr(rg, "nn", None)
_needs_nn = pytest.mark.skipif(
    _nn is None or not all(hasattr(_nn, n) for n in ("Linear", "CrossEntropyLoss", "ReLU",
                                                     "Sequential", "Module")),
    reason="retrograd.nn (Linear, ReLU, Sequential, CrossEntropyLoss) is not available yet")


def _script(torch_mod, init_weights, x_np, y_np, path, resume_at=None):
    """A plain PyTorch training loop: DataLoader over a TensorDataset, CrossEntropyLoss,
    SGD with momentum, StepLR, and a checkpoint saved and reloaded mid-way."""
    nn = torch_mod.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    with torch_mod.no_grad():
        for p, w in zip(model.parameters(), init_weights):
            p.copy_(torch_mod.tensor(w))
    ds = torch_mod.utils.data.TensorDataset(torch_mod.tensor(x_np), torch_mod.tensor(y_np))
    loader = torch_mod.utils.data.DataLoader(ds, batch_size=5, shuffle=False)
    opt = torch_mod.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch_mod.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(4):
        if epoch == resume_at:
            torch_mod.save({"model": model.state_dict(), "optim": opt.state_dict(),
                            "sched": sched.state_dict(), "epoch": epoch}, path)
            ckpt = torch_mod.load(path)
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            model.load_state_dict(ckpt["model"])
            opt = torch_mod.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            opt.load_state_dict(ckpt["optim"])
            sched = torch_mod.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
            sched.load_state_dict(ckpt["sched"])
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    return losses


@_needs_nn
def test_pytorch_training_script_runs_on_retrograd(tmp_path):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((8, 4)).astype(np.float32) * 0.5,
            rng.standard_normal(8).astype(np.float32) * 0.1,
            rng.standard_normal((3, 8)).astype(np.float32) * 0.5,
            rng.standard_normal(3).astype(np.float32) * 0.1]
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.integers(0, 3, 20)
    ref = _script(torch, init, x, y, tmp_path / "t.pt", resume_at=2)
    ours = _script(rg, init, x, y, tmp_path / "r.pt", resume_at=2)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)
    # resuming from the checkpoint gives exactly the uninterrupted run
    assert _script(rg, init, x, y, tmp_path / "r2.pt") == ours


def test_checkpoint_of_optimizer_state_in_memory():
    w = rg.ones(3, requires_grad=True)
    w.grad = rg.tensor([1.0, -2.0, 3.0])
    opt = rg.optim.Adam([w], lr=0.1)
    opt.step()
    buf = io.BytesIO()
    rg.save(opt.state_dict(), buf)
    buf.seek(0)
    sd = rg.load(buf)
    assert sd["param_groups"] == opt.state_dict()["param_groups"]
    assert rg.equal(sd["state"][0]["exp_avg"], opt.state[w]["exp_avg"])


def test_optimizer_ignores_warnings_free_path():
    # a normal step emits no warning (e.g. no non-leaf .grad access)
    w = rg.ones(2, requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
