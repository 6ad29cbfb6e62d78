"""Legacy call forms PyTorch still accepts, with its deprecation warnings, against torch."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
import torch

import retrograd as rg


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(x.message) for x in w if issubclass(x.category, UserWarning)]


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("form", ["function", "method", "inplace"])
@pytest.mark.parametrize("value", [0.5, 3, "tensor"])
def test_value_first_forms_warn_and_compute_as_torch(name, form, value):
    outs = []
    for lib in (rg, torch):
        rng = np.random.default_rng(0)
        x, a, b = (lib.tensor(rng.standard_normal((2, 3))) for _ in range(3))
        v = lib.tensor(2.5, dtype=lib.float64) if value == "tensor" else value
        fn = {"function": partial(getattr(lib, name), x), "method": getattr(x, name),
              "inplace": getattr(x, name + "_")}[form]
        out, msgs = _warned(partial(fn, v, a, b))
        outs.append((out.numpy().copy(), x.numpy().copy(), msgs))
    (o1, x1, m1), (o2, x2, _) = outs
    np.testing.assert_allclose(o1, o2, rtol=1e-15)
    np.testing.assert_allclose(x1, x2, rtol=1e-15)
    # torch warns once per process (so its message cannot be caught here every time); the
    # text is torch 2.13's, less its "(Triggered internally at ...)"
    op = name + ("_" if form == "inplace" else "")
    old, new = (("Tensor input, Number value, Tensor tensor1, Tensor tensor2, *, Tensor out = "
                 "None", "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
                 "Tensor out = None") if form == "function" else
                ("Number value, Tensor tensor1, Tensor tensor2",
                 "Tensor tensor1, Tensor tensor2, *, Number value = 1"))
    assert m1 == [f"This overload of {op} is deprecated:\n\t{op}({old})\nConsider using one of "
                  f"the following signatures instead:\n\t{op}({new})"]


def test_value_first_form_gradients_match_the_keyword_form():
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    b = rg.tensor([3.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rg.addcdiv(rg.zeros(2), 2, a, b).sum().backward()
    ga, gb = a.grad.clone(), b.grad.clone()
    a.grad = b.grad = None
    rg.addcdiv(rg.zeros(2), a, b, value=2).sum().backward()
    assert rg.equal(ga, a.grad) and rg.equal(gb, b.grad)


def test_value_first_form_with_value_keyword_is_a_type_error():
    for lib in (rg, torch):
        with pytest.raises(TypeError, match=r"addcmul\(\) takes 3 positional arguments but 4 "):
            lib.addcmul(lib.zeros(2), 2, lib.ones(2), lib.ones(2), value=3)


def test_addcdiv_of_integer_tensors_raises_as_torch():
    msgs = []
    for lib in (rg, torch):
        four, two = lib.tensor([4]), lib.tensor([2])
        for call in (partial(lib.addcdiv, four, four, two), partial(four.addcdiv_, four, two)):
            with pytest.raises(RuntimeError) as info:
                call()
            msgs.append(str(info.value))
    assert msgs[:2] == msgs[2:]
    # one floating operand is fine, as in torch
    assert rg.addcdiv(rg.tensor([4]), rg.tensor([4.0]), rg.tensor([2])).tolist() == [6.0]


def test_variable_forms():
    for lib in (rg, torch):
        Variable = lib.autograd.Variable
        t = lib.ones(2)
        v = Variable(t, requires_grad=True)
        assert v.requires_grad and v.is_leaf and v is not t and isinstance(v, lib.Tensor)
        with lib.no_grad():
            v[0] = 5.0
        assert t.tolist() == [5.0, 1.0] and t._version == v._version == 1  # shares storage
        y = v * 2
        w = Variable(y)
        assert w.grad_fn is None and not w.requires_grad
        assert isinstance(lib.ones(1), Variable) and not isinstance(1.0, Variable)
        assert Variable().shape == (0,)
        assert Variable(t, requires_grad=1).requires_grad
        with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
            Variable(lib.ones(2, dtype=lib.int64), requires_grad=True)
        _, msgs = _warned(partial(Variable, lib.ones(2), volatile=True))
        assert msgs == ["volatile was removed and now has no effect. Use `with torch.no_grad():` "
                        "instead."]


@pytest.mark.parametrize("call", [
    lambda lib: lib.autograd.Variable(3),
    lambda lib: lib.autograd.Variable(lib.ones(2), True, True),
])
def test_variable_errors_match_torch(call):
    got = []
    for lib in (rg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                call(lib)
        got.append((type(info.value), str(info.value)))
    assert got[0][0] is got[1][0] and got[0][1].startswith(got[1][1]), got


def _signature_warning(op, method, scalar, tensors):
    head, out, new_out = ("", "", "") if method else ("Tensor input, ", ", *, Tensor out = None",
                                                      ", Tensor out = None")
    return (f"This overload of {op} is deprecated:\n\t{op}({head}Number {scalar}, {tensors}{out})"
            f"\nConsider using one of the following signatures instead:\n\t{op}({head}{tensors},"
            f" *, Number {scalar} = 1{new_out})")


@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("form", ["function", "method", "inplace"])
def test_scalar_first_add_and_sub(name, form):
    outs = []
    for lib in (rg, torch):
        rng = np.random.default_rng(1)
        x, y = (lib.tensor(rng.standard_normal((2, 3))) for _ in range(2))
        fn = {"function": partial(getattr(lib, name), x), "method": getattr(x, name),
              "inplace": getattr(x, name + "_")}[form]
        out, msgs = _warned(partial(fn, -0.25, y))
        outs.append((out.numpy().copy(), x.numpy().copy(), msgs))
    (o1, x1, m1), (o2, x2, _) = outs
    np.testing.assert_allclose(o1, o2, rtol=1e-15)
    np.testing.assert_allclose(x1, x2, rtol=1e-15)
    # the in-place method warns with the method form's signature; Tensor.add/sub are the
    # functions themselves (too common to wrap), so their method form warns like torch.add
    method = form == "inplace"
    op = name + ("_" if method else "")
    assert m1 == [_signature_warning(op, method, "alpha", "Tensor other")]


def test_scalar_first_in_place_under_autograd_and_number_operand():
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        z = w * 1
        z.add_(3, w)  # z = w + 3 w
        z.sum().backward()
        assert caught[0].filename == __file__  # the warning points at the user's line
    assert w.grad.tolist() == [4.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rg.add(rg.ones(2), 2, 3).tolist() == torch.add(torch.ones(2), 2, 3).tolist()


def test_pytorch_0_4_style_optimizer_runs_as_in_torch():
    """SGD with momentum and Adam as PyTorch 0.4's optimizers wrote them (p.data.add_(-lr,
    d_p), exp_avg.mul_(b1).add_(1 - b1, grad), addcmul_(1 - b2, grad, grad), addcdiv_)."""
    results = []
    for lib in (rg, torch):
        rng = np.random.default_rng(3)
        w = lib.tensor(rng.standard_normal(4), requires_grad=True)
        x = lib.tensor(rng.standard_normal((5, 4)))
        buf, m, v = (lib.zeros(4, dtype=lib.float64) for _ in range(3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in range(1, 6):
                w.grad = None
                ((x @ w).tanh() ** 2).sum().backward()
                g = w.grad.data
                buf.mul_(0.9).add_(1 - 0.9, g)
                m.mul_(0.9).add_(1 - 0.9, g)
                v.mul_(0.999).addcmul_(1 - 0.999, g, g)
                denom = v.sqrt().add_(1e-8)
                w.data.addcdiv_(-0.01 / (1 - 0.9 ** t), m, denom)
                w.data.add_(-0.01, buf)
        results.append(w.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13)


@pytest.mark.parametrize("form,args", [
    ("function", (0.5, "x", -2.0, "a", "b")), ("function", (0.5, "x", "a", "b")),
    ("method", (0.5, -2.0, "a", "b")), ("method", (0.5, "a", "b")),
    ("inplace", (0.5, -2.0, "a", "b")), ("inplace", (0.5, "a", "b")),
])
def test_scalar_first_addmm(form, args):
    outs = []
    for lib in (rg, torch):
        rng = np.random.default_rng(2)
        t = {k: lib.tensor(rng.standard_normal((3, 3))) for k in "xab"}
        call_args = tuple(t[a] if isinstance(a, str) else a for a in args)
        fn = {"function": lib.addmm, "method": t["x"].addmm, "inplace": t["x"].addmm_}[form]
        out, msgs = _warned(partial(fn, *call_args))
        outs.append((out.numpy().copy(), t["x"].numpy().copy(), msgs))
    (o1, x1, m1), (o2, x2, _) = outs
    np.testing.assert_allclose(o1, o2, rtol=1e-13)
    np.testing.assert_allclose(x1, x2, rtol=1e-13)
    op = "addmm_" if form == "inplace" else "addmm"
    alpha = "Number alpha, " if -2.0 in args else ""
    if form == "function":
        old = f"Number beta, Tensor input, {alpha}Tensor mat1, Tensor mat2, *, Tensor out = None"
        new = ("Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, "
               "Tensor out = None")
    else:
        old = f"Number beta, {alpha}Tensor mat1, Tensor mat2"
        new = "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1"
    assert m1 == [f"This overload of {op} is deprecated:\n\t{op}({old})\nConsider using one of "
                  f"the following signatures instead:\n\t{op}({new})"]


def test_scalar_first_addmm_with_keywords_is_a_type_error():
    for lib in (rg, torch):
        with pytest.raises(TypeError, match="addmm"):
            lib.addmm(2, lib.ones(2, 2), lib.ones(2, 2), lib.ones(2, 2), alpha=2)
