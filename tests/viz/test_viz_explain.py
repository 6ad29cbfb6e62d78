"""explain_grad: one test per cause, each checked against torch (the grad really is None
there too) and for the op and line it names."""

import sys
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd._graph.provenance import clear_cuts, recent_cuts


def _line() -> int:
    """The caller's current line number."""
    return sys._getframe(1).f_lineno


@pytest.fixture(autouse=True)
def _fresh_cuts():
    clear_cuts()
    yield
    clear_cuts()


def both(fn):
    """Run ``fn(lib)`` with torch and with retrograd; return (torch result, rg result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(torch), fn(rg)


def test_not_leaf():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        y = w * 2
        line = _line() - 1
        (y * y).sum().backward()
        return w, y, line

    (tw, ty, _), (w, y, line) = both(prog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert ty.grad is None and ty.grad_fn.name() == "MulBackward0"
        assert y.grad is None
    e = rg.explain_grad(y, name="y")
    assert (e.cause, e.op, e.lineno) == ("not_leaf", "MulBackward0", line)
    assert "retain_grad()" in e.fix and "y = w * 2" in e.code
    assert w.grad is not None  # the leaf got its gradient


def test_not_leaf_fixed_by_retain_grad():
    w = rg.ones(3, requires_grad=True)
    y = w * 2
    y.retain_grad()
    assert rg.explain_grad(y).cause == "no_backward"
    (y * y).sum().backward()
    assert rg.explain_grad(y).cause == "has_grad"


def test_not_leaf_hint_for_scaled_parameter():
    w = rg.randn(3, requires_grad=True) * 0.1  # the classic: w is no longer a leaf
    e = rg.explain_grad(w, name="w")
    assert e.cause == "not_leaf" and "requires_grad_()" in e.message


def test_did_not_require_grad():
    def prog(lib):
        x = lib.ones(3)
        w = lib.ones(3, requires_grad=True)
        (x * w).sum().backward()
        return x

    tx, x = both(prog)
    assert tx.grad is None and x.grad is None
    e = rg.explain_grad(x, name="x")
    assert e.cause == "not_requires_grad" and "requires_grad=True" in e.message
    assert rg.explain_grad(rg.ones(2, dtype=rg.int64)).cause == "not_requires_grad"
    assert "floating-point" in rg.explain_grad(rg.ones(2, dtype=rg.int64)).message


def test_cut_by_detach():
    def prog(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        h = w.detach()
        line = _line() - 1
        loss = (h * v).sum()
        loss.backward()
        return w, h, loss, line

    (tw, *_), (w, h, loss, line) = both(prog)
    assert tw.grad is None and w.grad is None
    e = rg.explain_grad(w, loss=loss, name="w")
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "detach", "detach()", line)
    assert "h = w.detach()" in e.code and "MulBackward0" in e.message
    # the detached tensor itself, and without the loss
    e2 = rg.explain_grad(h, name="h")
    assert (e2.cause, e2.reason, e2.lineno) == ("cut", "detach", line)
    assert rg.explain_grad(w).reason == "detach"


def test_cut_by_no_grad():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            h = w * 2
            line = _line() - 1
        loss = (h * v).sum()
        loss.backward()
        return w, h, loss, line

    (tw, th, *_), (w, h, loss, line) = both(prog)
    assert tw.grad is None and not th.requires_grad and w.grad is None
    e = rg.explain_grad(w, loss=loss, name="w")
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "no_grad", "mul", line)
    assert "no_grad()" in e.fix
    assert rg.explain_grad(h).reason == "no_grad"


def test_cut_by_item():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        s = (w * 2).sum().item()
        line = _line() - 1
        loss = (v * s).sum()
        loss.backward()
        return w, loss, line

    (tw, *_), (w, loss, line) = both(prog)
    assert tw.grad is None and w.grad is None
    e = rg.explain_grad(w, loss=loss, name="w")
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "item", "item()", line)


@pytest.mark.parametrize("how", ["numpy", "tolist"])
def test_cut_by_numpy_and_tolist(how):
    w = rg.ones(3, requires_grad=True)
    v = rg.ones(3, requires_grad=True)
    vals = w.numpy(force=True) if how == "numpy" else w.tolist()
    line = _line() - 1
    loss = (v * rg.tensor(np.asarray(vals) * 2.0, dtype=rg.float32)).sum()
    loss.backward()
    assert w.grad is None
    e = rg.explain_grad(w, loss=loss)
    assert (e.cause, e.reason, e.lineno) == ("cut", how, line)


def test_cut_by_integer_op():
    def prog(lib):
        w = lib.tensor([1.2, 2.7, 3.1], requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        idx = (w * 3).long()
        line = _line() - 1
        loss = (v * idx).sum()
        loss.backward()
        return w, idx, loss, line

    (tw, tidx, *_), (w, idx, loss, line) = both(prog)
    assert tw.grad is None and tidx.dtype == torch.int64 and w.grad is None
    e = rg.explain_grad(w, loss=loss, name="w")
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "integer", "to(torch.int64)", line)
    assert "floating point" in e.fix


def test_cut_by_comparison():
    w = rg.tensor([-1.0, 2.0], requires_grad=True)
    v = rg.ones(2, requires_grad=True)
    mask = w > 0
    line = _line() - 1
    loss = (v * mask).sum()
    loss.backward()
    e = rg.explain_grad(w, loss=loss)
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "comparison", "gt", line)


def test_cut_by_inplace_write_under_no_grad():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        buf = lib.zeros(3)
        with lib.no_grad():
            buf.copy_(w)
            line = _line() - 1
        loss = (buf * v).sum()
        loss.backward()
        return w, buf, loss, line

    (tw, *_), (w, buf, loss, line) = both(prog)
    assert tw.grad is None and w.grad is None
    e = rg.explain_grad(w, loss=loss)
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "inplace", "copy_ under no_grad", line)
    assert rg.explain_grad(buf).reason == "inplace"


def test_cut_by_setitem_under_no_grad():
    w = rg.ones(3, requires_grad=True)
    buf = rg.zeros(3)
    with rg.no_grad():
        buf[:] = w
    assert rg.explain_grad(buf).reason == "inplace"


def test_cut_by_inplace_detach():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        y = w * 2
        y.detach_()
        line = _line() - 1
        loss = (y * v).sum()
        loss.backward()
        return w, y, loss, line

    (tw, *_), (w, y, loss, line) = both(prog)
    assert tw.grad is None and w.grad is None
    e = rg.explain_grad(w, loss=loss)
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "detach_", "detach_()", line)
    e2 = rg.explain_grad(y, name="y")
    assert (e2.cause, e2.reason) == ("cut", "detach_") and "MulBackward0" in e2.message


def test_cut_by_data_and_requires_grad_false():
    w = rg.ones(3, requires_grad=True)
    h = w.data
    assert rg.explain_grad(h).reason == "data"
    u = rg.ones(3, requires_grad=True)
    u.requires_grad_(False)
    line = _line() - 1
    e = rg.explain_grad(u, name="u")
    assert (e.cause, e.reason, e.lineno) == ("cut", "requires_grad_false", line)


def test_not_used_not_reached_and_no_backward():
    w = rg.ones(3, requires_grad=True)
    assert rg.explain_grad(w).cause == "not_used"
    other = (w * 2).sum()
    v = rg.ones(3, requires_grad=True)
    loss = (v * 3).sum()
    assert rg.explain_grad(w, loss=loss).cause == "not_reached"
    assert rg.explain_grad(w, loss=other).cause == "no_backward"
    other.backward()
    assert rg.explain_grad(w, loss=other).cause == "has_grad"


def test_loss_that_does_not_require_grad():
    w = rg.ones(3, requires_grad=True)
    with rg.no_grad():
        loss = (w * 2).sum()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        loss.backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        torch.ones(1).sum().backward()
    e = rg.explain_grad(w, loss=loss)
    assert e.cause == "cut" and e.reason == "no_grad" and "the loss" in e.message


def test_routine_cuts_rank_below_the_bug():
    """Logging with item() reaches every parameter; a detach is named first."""
    w = rg.ones(3, requires_grad=True)
    h = w.detach()
    line = _line() - 1
    (w * 2).sum().item()
    assert rg.explain_grad(w).lineno == line
    assert h._cut.site[1] == line


def test_str_and_repr():
    w = rg.ones(3, requires_grad=True)
    h = w.detach()
    s = str(rg.explain_grad(h, name="h"))
    assert s.startswith("h does not require grad: it was made by detach()") and "Fix:" in s
    assert repr(rg.explain_grad(h)).startswith("<GradExplanation cut")
    with pytest.raises(TypeError, match="expects a Tensor"):
        rg.explain_grad([1.0])


def test_no_markers_from_optimizer_or_backward():
    """Optimizer updates and the engine turn grad mode off without a user's no_grad
    block: they must leave no cut markers (the hot path stays clean)."""
    w = rg.ones(4, requires_grad=True)
    opt = rg.optim.Adam([w], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (w.exp() * w).sum().backward()
        opt.step()
    assert recent_cuts() == []
    assert w._cut is None


def test_marks_only_when_input_requires_grad():
    x = rg.ones(3)
    with rg.no_grad():
        y = x * 2
    assert y._cut is None and x.detach()._cut is None and recent_cuts() == []


def test_graph_of_detached_value_is_not_kept_alive():
    import gc
    import weakref

    w = rg.ones(3, requires_grad=True)
    y = w.exp()
    node = weakref.ref(y.grad_fn)
    h = y.detach()
    del y
    gc.collect()
    assert node() is None and h._cut.src_name == "ExpBackward0"


def test_no_markers_from_double_backward_rules():
    """relu's rule compares its saved input with 0; under create_graph=True that
    comparison runs with grad mode on, inside the engine: it must not look like a cut."""
    x = rg.tensor([-1.0, 2.0], requires_grad=True)
    w = rg.tensor([0.5, 0.5], requires_grad=True)
    y = (x * w).relu().sum()
    (g,) = rg.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    assert recent_cuts() == []
    with rg.no_grad():
        (x * w).exp().sum()
        line = _line() - 1
        with rg.enable_grad():  # a backward inside a user's no_grad block: rules make none
            (x * w).exp().sum().backward()
    assert [(c.op, c.site[1]) for c in recent_cuts()] == [("mul", line)]


def test_transforms_leave_no_cut_markers():
    """func.grad/vmap/jacrev drop their graphs with the library's own detach: no marker
    (one would make explain_grad blame a detach() the user never wrote)."""
    w = rg.ones(3, requires_grad=True)
    x = rg.ones(4, 3)

    def loss(p, xb):
        return (xb * p).sum()

    rg.func.vmap(rg.func.grad(loss), in_dims=(None, 0))(w, x)
    rg.func.jacrev(lambda p: p * w)(w)
    rg.func.linearize(lambda p: p.sin(), w)
    assert recent_cuts() == []
    w.detach()  # the user's own detach still leaves one
    assert [c.op for c in recent_cuts()] == ["detach()"]
