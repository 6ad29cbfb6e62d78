"""explain_grad where newcomers stumble: without ``loss=`` after a backward(), the cut
on that loss's path is named (not an unused detach); the "parameter that became a
computed tensor" hint only for a leaf that nothing else holds; fix texts in the user's
own names (``z.retain_grad()``, never "the tensor.retain_grad()")."""

import runpy
import sys
import weakref

import pytest

import retrograd as torch
from retrograd import nn
from retrograd._graph.provenance import clear_cuts, last_backward


def _line() -> int:
    """The caller's current line number."""
    return sys._getframe(1).f_lineno


@pytest.fixture(autouse=True)
def _fresh():
    clear_cuts()
    yield
    clear_cuts()


# 1. the loss of the last backward() -------------------------------------------------

def test_last_backward_names_the_cut_on_the_loss_path():
    """The brief's repro: the failed backward()'s loss was cut by the int cast; the
    unused detach is no part of the answer."""
    w = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841 (an unused cut: never the answer)
    b = w.int().float()
    line = _line() - 1
    loss = (b * 2).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        loss.backward()
    bline = _line() - 1
    e = torch.explain_grad(w)
    text = str(e)
    assert (e.cause, e.reason, e.op, e.lineno) == ("cut", "integer", "to(torch.int32)", line)
    assert "logged" not in text and "detach() at" not in text and "Other cuts" not in text, text
    assert text.startswith("the loss of the last backward() (at "), text
    assert f":{bline}: `loss.backward()`" in text and "w.grad is None because" in text
    assert "b = w.int().float()" in text


def test_last_backward_that_ran():
    """A loss that requires grad through another parameter: backward() runs, w gets no
    grad, and the cut its graph consumed is named, with the backward() line."""
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841
    b = w.int().float()
    line = _line() - 1
    loss = (b * 2).sum() + (v * 3).sum()
    loss.backward()
    e = torch.explain_grad(w)
    assert (e.reason, e.lineno) == ("integer", line), str(e)
    assert "logged" not in str(e) and "pass loss= to check another" in e.message
    # zero_grad afterwards: w is on that graph, backward() has not run since
    v.grad = None
    assert torch.explain_grad(v).cause == "no_backward"
    assert "v.backward" not in torch.explain_grad(v).fix
    assert "loss.backward()" in torch.explain_grad(v).fix


def test_unused_detach_is_not_blamed_when_w_is_off_the_loss_graph():
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841
    loss = (v * 3).sum()
    (w * 2).sum()  # w is in some graph, not the loss's
    loss.backward()
    e = torch.explain_grad(w)
    assert e.cause == "not_reached" and "does not show: detach()" in e.message, str(e)
    assert "Other cuts" not in str(e)


def test_without_backward_candidates_are_listed_none_claimed():
    w = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841
    b = w.int().float()  # noqa: F841
    e = torch.explain_grad(w)
    text = str(e)
    assert e.cause == "cut" and "because" not in text, text
    assert "no backward() was seen" in text
    assert "detach() at " in text and "to(torch.int32) at " in text
    assert "Other cuts" not in text  # listed once, in the message
    assert "explain_grad(w, loss=loss)" in e.fix


def test_freed_loss_falls_back_to_candidates():
    w = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841
    ((w.int().float() * 2).sum() + (v * 3).sum()).backward()
    e = torch.explain_grad(w)
    assert "has been freed" in e.message and "because" not in e.message, str(e)


def test_loss_that_was_freed_but_did_not_require_grad_is_still_named():
    w = torch.randn(3, requires_grad=True)
    logged = w.detach()  # noqa: F841
    with pytest.raises(RuntimeError):
        (w.int().float() * 2).sum().backward()
    e = torch.explain_grad(w)
    assert (e.cause, e.reason) == ("cut", "integer") and "logged" not in str(e)


def test_last_backward_is_weak_and_skips_grad_and_nested_backwards():
    x = torch.ones(3, requires_grad=True)
    loss = (x.exp() * 2).sum()
    loss.backward()
    rec = last_backward()
    assert rec.tensors() == [loss]
    node = weakref.ref(loss.grad_fn)
    torch.autograd.grad((x * 3).sum(), x)  # fills no .grad: not a backward()
    assert last_backward() is rec
    # reentrant checkpointing calls backward() inside the backward: the outer one counts
    from retrograd.utils.checkpoint import checkpoint

    loss2 = checkpoint(lambda a: a.sin() * 2, x, use_reentrant=True).sum()
    loss2.backward()
    assert last_backward().tensors() == [loss2]
    del loss, loss2
    assert node() is None  # no graph kept alive


# 2. "a parameter that became a computed tensor" ----------------------------------------

_HINT = "parameter that became a computed tensor"


def test_no_parameter_hint_for_an_ordinary_intermediate():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    e = torch.explain_grad(y)
    assert e.cause == "not_leaf" and _HINT not in e.message, e.message
    assert "y.retain_grad()" in e.fix
    lin = nn.Linear(3, 3)
    h = lin.weight * 2
    assert _HINT not in torch.explain_grad(h).message

    def inner():
        a = torch.randn(3, requires_grad=True)
        return torch.explain_grad(a.exp())

    assert _HINT not in inner().message
    base = torch.randn(3, 4, requires_grad=True)
    assert _HINT not in torch.explain_grad(base.t()).message


def test_parameter_hint_when_the_leaf_is_lost():
    w = torch.randn(3, requires_grad=True) * 0.1
    e = torch.explain_grad(w)
    assert _HINT in e.message and "requires_grad_()" in e.message
    assert "w = (torch.randn(...) * 0.1).requires_grad_()" in e.fix

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(3)) * 0.1  # the bug

    net = Net()
    e = torch.explain_grad(net.w)
    assert _HINT in e.message and "net.w = nn.Parameter(" in e.fix

    r = torch.randn(3, requires_grad=True)
    r = r * r  # rebinding: the old leaf is held only by MulBackward0's saved list
    assert _HINT in torch.explain_grad(r).message

    p = torch.randn(3, requires_grad=True)
    (p * 2).sum().backward()
    p = p - 0.1 * p.grad  # a manual SGD step outside no_grad()
    e = torch.explain_grad(p)
    assert _HINT in e.message and "p -= lr * p.grad" in e.fix


# 3. the user's names in the fix -------------------------------------------------------

README = """\
import retrograd as torch
x = torch.tensor([2.0], requires_grad=True)
y = torch.tensor([3.0], requires_grad=True)
z = x**2 + y**3
z.backward()
result = torch.explain_grad(z)
"""


def test_readme_example_reads_as_a_sentence(tmp_path):
    path = tmp_path / "readme.py"
    path.write_text(README)
    e = runpy.run_path(str(path))["result"]
    text = str(e)
    assert "the tensor." not in text and "the tensor's" not in text, text
    assert text.startswith("z is not a leaf: it was computed by AddBackward0 at readme.py:4: "
                           "`z = x**2 + y**3`, and it is the tensor the last backward() was "
                           "called on (at readme.py:5: `z.backward()`)."), text
    assert "(x.grad, y.grad)" in e.fix and "z.retain_grad() before z.backward()" in e.fix


def test_fix_names_the_variable_and_the_loss():
    w = torch.ones(3, requires_grad=True)
    hidden = w * 2
    total = (hidden * hidden).sum()
    total.backward()
    e = torch.explain_grad(hidden)
    assert e.fix.startswith("call hidden.retain_grad() before total.backward()"), e.fix
    assert "torch.autograd.grad(total, hidden)" in e.fix
    assert "hidden.register_hook(" in e.fix and "hidden is not a leaf" in e.message
    other = (hidden * 3).sum()
    e = torch.explain_grad(hidden, loss=other)
    assert "before other.backward()" in e.fix
    e = torch.explain_grad(
        hidden,
    )  # a call over several lines
    assert "hidden.retain_grad()" in e.fix


def test_names_of_attributes_indexes_and_given_names():
    net = nn.Linear(2, 2)
    outs = [net.weight * 2]
    assert "outs[0].retain_grad()" in torch.explain_grad(outs[0]).fix
    frozen = torch.ones(2)
    assert "frozen.requires_grad_()" in torch.explain_grad(frozen).fix
    e = torch.explain_grad(net.weight)
    assert e.message.startswith("net.weight is used by a graph") and "net.weight is on" in e.fix
    e = torch.explain_grad(frozen, name="the first layer")
    assert e.message.startswith("the first layer is a leaf") and "tensor.requires_grad_()" \
        in e.fix
    # an expression, not a variable: prose says "the tensor", code says `tensor`
    e = torch.explain_grad(frozen * 2)
    assert e.message.startswith("the tensor is a leaf") and "the tensor." not in e.fix
