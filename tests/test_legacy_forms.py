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
