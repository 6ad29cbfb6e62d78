"""retrograd.compile (issue 19): whole training steps compiled against eager for many
steps, guards and retracing, graph breaks and explain, fullgraph errors, stores into
Python state, the call forms, and the compiler's refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd._compile.api import CompiledFunction, Unsupported


def _replays(cf) -> int:
    cf = cf._compiled if hasattr(cf, "_orig_mod") else cf
    return sum(e.replays for e in cf.entries)


def _params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


# ----------------------------------------------------------------------------------
# whole training steps: compiled equals eager, step after step


def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(12, 16), m.nn.ReLU(), m.nn.Dropout(0.2),
                           m.nn.Linear(16, 3))


def _cnn(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Conv2d(1, 4, 3), m.nn.ReLU(), m.nn.MaxPool2d(2),
                           m.nn.Conv2d(4, 6, 3), m.nn.BatchNorm2d(6), m.nn.ReLU(),
                           m.nn.Flatten(), m.nn.Linear(6 * 2 * 2, 3))


class _RNN:
    """An LSTM over a sequence, classifying its last state."""

    def __init__(self, m):
        m.manual_seed(0)
        self.lstm = m.nn.LSTM(5, 8, batch_first=True)
        self.head = m.nn.Linear(8, 3)

    def parameters(self):
        return list(self.lstm.parameters()) + list(self.head.parameters())

    def __call__(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _data(kind, step):
    rng = np.random.default_rng(100 + step)
    if kind == "mlp":
        x = rng.standard_normal((8, 12))
    elif kind == "cnn":
        x = rng.standard_normal((4, 1, 10, 10))
    else:
        x = rng.standard_normal((4, 6, 5))
    return x.astype(np.float32), rng.integers(0, 3, x.shape[0])


def _train(kind, compiled: bool, steps: int = 8):
    m = R
    model = {"mlp": _mlp, "cnn": _cnn, "rnn": _RNN}[kind](m)
    opt = m.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    loss_fn = m.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    fn = m.compile(step) if compiled else step
    losses = []
    m.manual_seed(1)  # (dropout's masks: the same stream in both runs)
    for k in range(steps):
        x, y = _data(kind, k % 3)  # (batches of new values each step)
        losses.append(float(fn(m.tensor(x), m.tensor(y))))
    return losses, _params(model), fn


@pytest.mark.parametrize("kind", ["mlp", "cnn", "rnn"])
def test_training_steps_equal_eager(kind):
    want_losses, want_params, _ = _train(kind, False)
    got_losses, got_params, fn = _train(kind, True)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-6, atol=1e-7)
    for a, b in zip(got_params, want_params):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert _replays(fn) >= 4  # the later steps replayed a plan


def test_wgan_gp_double_backward_step_equals_eager():
    def run(compiled):
        R.manual_seed(0)
        critic = R.nn.Sequential(R.nn.Linear(6, 16), R.nn.Tanh(), R.nn.Linear(16, 1))
        opt = R.optim.SGD(critic.parameters(), lr=0.05, momentum=0.9)

        def step(real, fake, alpha):
            opt.zero_grad()
            xi = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
            (g,) = R.autograd.grad(critic(xi).sum(), xi, create_graph=True)
            gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
            loss = critic(fake).mean() - critic(real).mean() + 10 * gp
            loss.backward()
            opt.step()
            return loss.detach()

        fn = R.compile(step) if compiled else step
        out = []
        for k in range(6):
            rng = np.random.default_rng(k)
            args = [R.tensor(rng.standard_normal(s).astype(np.float32))
                    for s in ((5, 6), (5, 6), (5, 1))]
            out.append(float(fn(*args)))
        return out, _params(critic), fn

    want, want_p, _ = run(False)
    got, got_p, fn = run(True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for a, b in zip(got_p, want_p):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert _replays(fn) >= 3


def test_against_torch_compile_same_numbers():
    """The same compiled step in torch and retrograd prints the same losses."""
    def losses(m):
        lin = m.nn.Linear(4, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor(np.arange(8.0, dtype=np.float32).reshape(2, 4) / 10))
            lin.bias.zero_()
        opt = m.optim.SGD(lin.parameters(), lr=0.1)
        x = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        y = m.tensor(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32))

        @m.compile(backend="eager" if m is torch else "inductor")
        def step():
            opt.zero_grad()
            loss = ((lin(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.detach()
        return [float(step()) for _ in range(5)]

    np.testing.assert_allclose(losses(R), losses(torch), rtol=1e-6)


@pytest.mark.parametrize("opt,kw", [("Adam", {}), ("AdamW", {}), ("Adam", {"amsgrad": True})])
def test_adam_steps_compile_bit_for_bit(opt, kw):
    """Adam's bias corrections (Python numbers from its step counter in eager code) are
    recorded in float64 while compiling: the replays give eager's bits."""
    def run(compiled):
        R.manual_seed(0)
        model = R.nn.Sequential(R.nn.Linear(6, 8), R.nn.ReLU(), R.nn.Linear(8, 2))
        o = getattr(R.optim, opt)(model.parameters(), lr=0.01, **kw)

        def step(x, y):
            o.zero_grad()
            loss = R.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            o.step()
            return loss.detach()
        f = R.compile(step) if compiled else step
        out = []
        for k in range(7):
            rng = np.random.default_rng(k)
            out.append(float(f(R.tensor(rng.standard_normal((5, 6)).astype(np.float32)),
                               R.tensor(rng.integers(0, 2, 5)))))
        return out, _params(model), f

    want, want_p, _ = run(False)
    got, got_p, f = run(True)
    assert got == want
    for a, b in zip(got_p, want_p):
        np.testing.assert_array_equal(a, b)
    assert _replays(f) >= 4


# ----------------------------------------------------------------------------------
# what a replay redoes: .grad tensors, in-place updates, stores, outputs


def test_replay_makes_new_grad_tensors_and_bumps_versions():
    w = R.ones(3, requires_grad=True)

    @R.compile
    def step(x):
        w.grad = None
        (w * x).sum().backward()
        with R.no_grad():
            w.sub_(0.1 * w.grad)

    seen = []
    for k in range(4):
        v0 = w._version
        step(R.full((3,), float(k)))
        seen.append(w.grad)
        assert w._version == v0 + 1
    assert len({id(g) for g in seen}) == 4  # a fresh .grad each call, as eager
    np.testing.assert_allclose([g.numpy()[0] for g in seen], [0, 1, 2, 3])
    np.testing.assert_allclose(w.detach().numpy(), 1 - 0.1 * 6)


def test_stores_into_python_state_are_replayed():
    x = R.tensor([1.0, 2.0], requires_grad=True)
    state = {}

    class Box:
        last = None

    box = Box()

    @R.compile
    def step(k):
        x.grad = None
        y = (x * k).sum()
        y.backward()
        state["g"] = x.grad
        box.last = y.detach()
        return box.last

    for k in range(1, 6):
        out = step(R.tensor(float(k)))
        assert state["g"] is x.grad
        assert box.last is out
        np.testing.assert_allclose(out.numpy(), 3.0 * k)
    assert _replays(step) >= 2


def test_python_state_a_replay_cannot_repeat_runs_eagerly():
    calls = {"n": 0}

    @R.compile
    def f(x):
        calls["n"] += 1
        return x * 2

    for _ in range(4):
        f(R.ones(2))
    assert calls["n"] == 4  # every call ran the Python code
    assert "changed Python state" in R.compiler.show(f)


def test_value_checks_in_library_code_replay_or_fall_back():
    """cross_entropy checks its targets' values: new valid targets replay, an invalid
    one raises PyTorch's error as eager does."""
    logits = R.randn(4, 3)

    @R.compile
    def f(t):
        return R.nn.functional.cross_entropy(logits, t)

    for k in range(4):
        t = R.tensor([k % 3, 0, 1, 2])
        np.testing.assert_allclose(f(t).numpy(),
                                   R.nn.functional.cross_entropy(logits, t).numpy())
    with pytest.raises(IndexError, match="out of bounds"):
        f(R.tensor([0, 1, 2, 7]))


def test_cross_entropy_takes_the_fused_nll_path_and_its_check():
    """Under a trace nll_loss takes its fused node (one kernel each way, as eager), its
    target check a replayed check: ignored targets fail it and that call runs eagerly."""
    w = R.randn(5, 3, requires_grad=True)

    @R.compile
    def f(x, t):
        loss = R.nn.functional.cross_entropy(x @ w, t)
        loss.backward()
        return loss.detach()

    x = R.randn(4, 5)
    for t in ([0, 1, 2, 0], [2, 2, 1, 0], [1, -100, 2, 0], [0, 0, 0, 1]):
        t = R.tensor(t)
        w.grad = None
        got = f(x, t).numpy()
        g = w.grad.numpy().copy()
        w.grad = None
        want = R.nn.functional.cross_entropy(x @ w, t)
        want.backward()
        np.testing.assert_array_equal(got, want.detach().numpy())
        np.testing.assert_array_equal(g, w.grad.numpy())
    text = R.compiler.show(f)
    assert "# nll_backward" in text and "scatter_add" not in text
    assert _replays(f) >= 2


def test_buffers_keep_the_memory_order_eager_code_got():
    """A buffer standing for the sum of two transposed arrays is transposed too (Note
    [Buffer layouts]): the reduction after it sums in eager's order, bit for bit."""
    a, b = R.randn(40, 30), R.randn(40, 30)

    @R.compile
    def f(a, b):
        return (a.t() * 3 + b.t() * 2).sum(1)

    want = f(a, b).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(f(a, b).numpy(), want)
    plan = f.entries[0].plan
    assert any(order == (1, 0) for _shape, _dt, order in plan.buffers)
    assert all(buf.flags.f_contiguous for buf, (_s, _d, order) in zip(plan.bufs, plan.buffers)
               if order == (1, 0))


# ----------------------------------------------------------------------------------
# guards and retracing


def test_guards_retrace_on_shape_dtype_grad_mode_and_training_flag():
    lin = R.nn.Linear(3, 2)
    f = R.compile(lambda x: lin(x))
    with R.no_grad():
        for shape in [(4, 3), (4, 3), (4, 3), (5, 3)]:
            f(R.ones(shape))
    assert len(f.entries) == 2
    assert "shape" in f.recompile_reasons[-1]
    with R.no_grad():
        lin.eval()
        f(R.ones(4, 3))
    assert "training" in f.recompile_reasons[-1]
    lin.train()
    f(R.ones(4, 3))  # grad mode on now
    assert f.recompile_reasons[-1] == "grad mode changed"


def test_guard_fast_forms_catch_what_their_sources_catch():
    """Note [Guard expressions]: the one expression reads each tensor's array, a
    module's __dict__ and an optimizer's group once; every change still misses, with
    the standalone check's reason."""
    def misses(f, call, reason):
        n = len(f.entries)
        call()
        assert len(f.entries) == n + 1, "no retrace"
        assert reason in f.recompile_reasons[-1], f.recompile_reasons[-1]

    g = R.compile(lambda x: (x * 2).sum())
    for _ in range(3):
        g(R.ones(4, 3))
    assert ":=" in g.entries[0].guards.source
    misses(g, lambda: g(R.ones(4, 3, dtype=R.float64)), "dtype is no longer torch.float32")
    misses(g, lambda: g(R.ones(3, 4).t()), "memory layout changed")

    lin = R.nn.Linear(3, 2)
    opt = R.optim.SGD(lin.parameters(), lr=0.1)
    x = R.ones(4, 3)

    def step():
        opt.zero_grad(set_to_none=False)
        lin(x).sum().backward()
        opt.step()

    f = R.compile(step)
    for _ in range(3):
        f()

    def set_lr():
        opt.param_groups[0]["lr"] = 0.2
        f()

    def set_in_features():
        lin.in_features = 4
        f()

    def drop_grad():
        lin.weight.grad = None
        f()

    misses(f, set_lr, "['lr'] is no longer 0.1")
    misses(f, set_in_features, "in_features is no longer 3")
    misses(f, drop_grad, "weight.grad is now None")


def test_recompile_limit_warns_once_and_runs_eagerly():
    f = R.compile(lambda x: x + 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 12):
            np.testing.assert_allclose(f(R.ones(n)).numpy(), np.full(n, 2.0))
    msgs = [str(x.message) for x in w if "recompile_limit" in str(x.message)]
    assert len(msgs) == 1 and "(8)" in msgs[0]


# ----------------------------------------------------------------------------------
# graph breaks, explain, fullgraph


def _branchy(x):
    y = x.sin()
    if y.sum() > 0:  # a value read: a graph break
        y = y * 2
    return y


def test_graph_break_runs_eagerly_with_right_values():
    f = R.compile(_branchy)
    for s in (1.0, -1.0, 1.0, -1.0):
        x = R.full((3,), s)
        np.testing.assert_allclose(f(x).numpy(), _branchy(x).numpy())
    assert "bool()" in R.compiler.show(f)


def test_explain_lists_breaks_with_the_users_line():
    out = R.compiler.explain(_branchy, R.ones(3))
    assert out.graph_break_count == 1
    (reason,) = out.break_reasons
    assert "bool() of a traced value" in reason.reason
    assert reason.user_stack.endswith(f"test_compile.py:{_branchy.__code__.co_firstlineno + 2}")
    assert "Graph Break Count: 1" in str(out)
    ok = R.compiler.explain(lambda x: x.exp())(R.ones(2))  # PyTorch's newer call form
    assert ok.graph_break_count == 0 and ok.op_count >= 1


@pytest.mark.parametrize("read", [lambda y: y.sum().item(), lambda y: y.tolist(),
                                  lambda y: print(y), lambda y: y.numpy()])
def test_fullgraph_raises_at_the_first_break(read, capsys):
    def f(x):
        y = x * 2
        read(y)
        return y

    with pytest.raises(Unsupported, match="graph break under fullgraph=True"):
        R.compile(f, fullgraph=True)(R.ones(2))


def test_compiled_module_outputs_backpropagate_through_one_node():
    """``model = compile(model)`` in an ordinary loop: the outputs hang from one
    CompiledFunctionBackward node whose backward is a plan; gradients equal eager's."""
    def run(compiled):
        R.manual_seed(0)
        model = R.nn.Sequential(R.nn.Linear(6, 8), R.nn.GELU(), R.nn.LayerNorm(8),
                                R.nn.Linear(8, 3))
        opt = R.optim.Adam(model.parameters(), lr=0.01)
        net = R.compile(model) if compiled else model
        names = []
        for k in range(6):
            rng = np.random.default_rng(k)
            x = R.tensor(rng.standard_normal((4, 6)).astype(np.float32))
            y = R.tensor(rng.integers(0, 3, 4))
            opt.zero_grad()
            out = net(x)
            names.append(out.grad_fn.name())
            R.nn.functional.cross_entropy(out, y).backward()
            opt.step()
        return _params(model), names, net

    want, _, _ = run(False)
    got, names, net = run(True)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert names[-1] == "CompiledFunctionBackward" and _replays(net) >= 3
    assert "its backward" in R.compiler.show(net)


def test_compiled_backward_refuses_double_backward():
    lin = R.nn.Linear(2, 1)
    f = R.compile(lambda x: lin(x).tanh())
    x = R.ones(2, requires_grad=True)
    for _ in range(3):
        out = f(x)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        R.autograd.grad(out.sum(), x, create_graph=True)


def test_data_dependent_shapes_break():
    f = R.compile(lambda x: x[x > 0].sum())
    for k in range(4):
        x = R.tensor([1.0, -1.0, 2.0, float(k - 2)])
        np.testing.assert_allclose(f(x).numpy(), x[x > 0].sum().numpy())
    assert "boolean mask" in R.compiler.show(f)


def test_random_draws_replay_from_the_live_generator():
    def f(x):
        return R.nn.functional.dropout(x, 0.5) + R.rand(3)

    cf = R.compile(f)
    for seed in range(4):
        R.manual_seed(seed)
        got = cf(R.ones(3))
        R.manual_seed(seed)
        np.testing.assert_array_equal(got.numpy(), f(R.ones(3)).numpy())
    assert _replays(cf) >= 1


# ----------------------------------------------------------------------------------
# call forms and refusals


def test_call_forms():
    @R.compile
    def a(x):
        return x + 1

    @R.compile(fullgraph=True, mode="max-autotune")
    def b(x):
        return x + 2

    assert isinstance(a, CompiledFunction) and float(a(R.zeros(()))) == 1.0
    assert float(b(R.zeros(()))) == 2.0
    eager = R.compile(lambda x: x + 3, backend="eager")
    assert eager.disabled and float(eager(R.zeros(()))) == 3.0
    assert R.compile(lambda x: x, disable=True).disabled
    assert R.compile(R.compiler.disable(lambda x: x)).disabled


def test_compiled_module_and_module_compile():
    m = R.nn.Linear(3, 2)
    om = R.compile(m)
    assert isinstance(om, R.nn.Module) and om._orig_mod is m
    assert list(om.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert om.in_features == 3
    with R.no_grad():
        outs = [om(R.ones(3)) for _ in range(4)]
    np.testing.assert_allclose(outs[-1].numpy(), m(R.ones(3)).detach().numpy())
    assert _replays(om) >= 1
    m2 = R.nn.Linear(3, 2)
    m2.compile()
    with R.no_grad():
        for _ in range(4):
            y = m2(R.ones(3))
    assert _replays(m2._compiled_call_impl) >= 1
    assert "# plan:" in R.compiler.show(m2)  # (a module after .compile() shows its plans)
    np.testing.assert_allclose(y.numpy(), (R.ones(3) @ m2.weight.T + m2.bias).detach().numpy())


def test_refusals_match_torch():
    for m in (R, torch):
        with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
            m.compile(lambda x: x, mode="default", options={})
    with pytest.raises(RuntimeError, match="Invalid backend"):
        R.compile(lambda x: x, backend="nonesuch")
    with pytest.raises(NotImplementedError, match="GraphModule"):
        R.compile(lambda x: x, backend=lambda gm, ex: gm)


def test_compiler_helpers():
    assert not R.compiler.is_compiling()
    seen = []
    f = R.compile(lambda x: seen.append(R.compiler.is_compiling()) or x * 1)
    f(R.ones(1))
    assert seen == [True]
    for _ in range(3):
        f(R.ones(1))
    R.compiler.reset()
    assert f.entries == []
    assert "inductor" in R.compiler.list_backends()


def test_draw_plan_shows_calls_buffers_and_the_compiled_backward():
    m = R.nn.Sequential(R.nn.Linear(3, 4), R.nn.ReLU(), R.nn.Linear(4, 1))
    cm = R.compile(m)
    with pytest.raises(RuntimeError, match="no plan to draw yet"):
        R.compiler.draw_plan(cm)
    for _ in range(3):
        cm(R.ones(2, 3)).sum().backward()
    pic = R.compiler.draw_plan(cm)
    kinds = [n["kind"] for n in pic.nodes]
    assert "grad_output" in kinds and "saved" in kinds
    assert [n["label"] for n in pic.nodes if n["kind"] == "plain"].count("addmm") == 2
    assert "cluster_backward" in pic.source and "style=dashed" in pic.source
    with pytest.raises(TypeError, match="expects what retrograd.compile returned"):
        R.compiler.draw_plan(lambda x: x)


def test_compiled_model_with_accumulation_ragged_batches_dropout_and_eval():
    """Three forwards before one backward (the saved arrays of each call are its own),
    a smaller last batch (a second plan), dropout masks, then eval under no_grad."""
    def run(compiled):
        R.manual_seed(0)
        model = R.nn.Sequential(R.nn.Linear(4, 8), R.nn.Tanh(), R.nn.Dropout(0.3),
                                R.nn.Linear(8, 2))
        net = R.compile(model) if compiled else model
        opt = R.optim.SGD(model.parameters(), lr=0.1)
        R.manual_seed(1)
        losses = []
        for step in range(5):
            opt.zero_grad()
            parts = []
            for micro in range(3):
                rng = np.random.default_rng(step * 3 + micro)
                x = R.tensor(rng.standard_normal((5 if micro < 2 else 3, 4)).astype(np.float32))
                parts.append(net(x).pow(2).mean())
            loss = parts[0] + parts[1] + parts[2]
            loss.backward()
            opt.step()
            losses.append(float(loss))
        model.eval()
        with R.no_grad():
            evals = [float(net(R.ones(2, 4)).sum()) for _ in range(3)]
        return losses, evals, _params(model)

    want = run(False)
    got = run(True)
    assert got[0] == want[0] and got[1] == want[1]
    for a, b in zip(got[2], want[2]):
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------------
# fusion (Note [Fusion]): Numba kernels for runs of elementwise calls


def _fusion_case(m, fused):
    x = m.tensor(np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6), requires_grad=True)
    c = m.tensor(np.linspace(0.5, 1.5, 24, dtype=np.float32).reshape(4, 6))

    def step():
        x.grad = None
        y = x
        for _ in range(6):
            y = ((y * 1.01 + 0.1).sin() * c).tanh()
        y = y.sigmoid() - y.relu() * 0.5
        y.sum().backward()
        return y.detach(), x.grad

    return m.compile(step, mode="max-autotune") if fused else step


def test_fused_plan_equals_eager_to_rounding():
    pytest.importorskip("numba")
    eager, fused = _fusion_case(R, False), _fusion_case(R, True)
    for _ in range(4):
        want, got = eager(), fused()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-6, atol=2e-7)
    text = R.compiler.show(fused)
    assert "# fused:" in text and "FUSED(" in text
    assert _replays(fused) >= 1


def test_fusion_leaves_large_arrays_and_other_calls_to_numpy():
    pytest.importorskip("numba")
    from retrograd._compile import fuse

    f = R.compile(lambda x: (x * 2 + 1).exp(), options={"fuse": True})
    big = R.ones(fuse.MAX_ELEMENTS + 1)
    for _ in range(3):
        out = f(big)
    np.testing.assert_allclose(out.numpy(), np.exp(np.float32(3)), rtol=1e-6)
    assert "# fused:" not in R.compiler.show(f)


def test_fusion_without_numba_says_how_to_get_it(monkeypatch):
    from retrograd._compile import fuse

    monkeypatch.setattr(fuse, "available", lambda: False)
    with pytest.raises(RuntimeError, match=r"pip install 'retrograd\[compile\]'"):
        R.compile(lambda x: x, mode="max-autotune")
