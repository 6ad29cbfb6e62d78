"""Every generated in-place form (Note [In-place forms] in _functions/methods.py) against torch.

Parametrized over the generated lists themselves, so a form added there is tested here
(a form without arguments below fails ``test_every_generated_form_has_arguments``):
values and dtype, the same tensor returned, the version bump, the gradient through the
form on a non-leaf (and its grad_fn name), and the refusal on a leaf that requires grad.
The function forms (``torch.sin_(x)``) are checked against torch's functions.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from retrograd._functions.methods import inplace_functions, inplace_methods

torch = pytest.importorskip("torch")

_X = np.array([[0.15, 0.35, 0.65], [0.85, 0.25, 0.45]])  # inside every unary domain
_Y = np.array([[0.55, 1.25, 0.7], [1.4, 0.6, 0.95]])


def _args(m, name: str, rg: bool):
    """Arguments (after self) of ``name`` for module ``m``; tensors that take part in the
    gradient require grad when ``rg``."""
    def t(a, grad=True, dtype=None):
        x = m.tensor(np.asarray(a), dtype=dtype or m.float64)
        return x.requires_grad_(True) if rg and grad else x

    idx = m.tensor([[1, 0, 1], [0, 1, 0]])
    binary = {"add", "sub", "mul", "div", "subtract", "multiply", "divide", "true_divide", "pow",
              "remainder", "fmod", "atan2", "arctan2", "float_power", "hypot", "xlogy",
              "copysign", "nextafter", "heaviside", "ldexp", "igamma", "igammac"}
    compare = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
               "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor"}
    if name in binary or name in compare:
        return (t(_Y),), {}
    if name in _INTEGER and name != "bitwise_not":
        return (m.tensor([[3, 5, 6], [9, 4, 1]]),), {}
    return {
        "clamp": ((0.3, 0.7), {}), "clip": ((0.3, 0.7), {}), "clamp_min": ((0.3,), {}),
        "clamp_max": ((0.7,), {}), "lerp": ((t(_Y), 0.3), {}),
        "masked_fill": ((m.tensor(_X > 0.4), 2.0), {}),
        "index_put": (((m.tensor([1, 0]),), t(_Y[:1] * 3)), {}),
        "scatter": ((0, idx, t(_Y)), {}), "scatter_add": ((0, idx, t(_Y)), {}),
        "index_add": ((0, m.tensor([1, 0]), t(_Y)), {}),
        "index_copy": ((0, m.tensor([1, 0]), t(_Y)), {}),
        "index_fill": ((1, m.tensor([2, 0]), t(2.5)), {}),
        "cumsum": ((1,), {}), "cumprod": ((1,), {}),
        "scatter_reduce": ((0, idx, t(_Y), "amax"), {"include_self": False}),
        "index_reduce": ((1, m.tensor([1, 0, 1]), t(_Y), "prod"), {}),
        "masked_scatter": ((m.tensor(_X > 0.4), t(_Y)), {}),
        "put": ((m.tensor([4, 0, 4]), t(_Y[0])), {"accumulate": True}),
        "renorm": ((2, 0, 0.9), {}),
        "addmm": ((t(np.arange(8.0).reshape(2, 4) / 8), t(np.arange(12.0).reshape(4, 3) / 12)),
                  {}),
        "round": ((), {"decimals": 1}),
        "polygamma": ((1,), {}), "mvlgamma": ((1,), {}),
        "nan_to_num": ((), {"nan": 0.0}),
        "fill": ((2.0,), {}),
        "addmv": ((t(np.arange(8.0).reshape(2, 4) / 8), t(np.arange(4.0) / 4)), {"beta": 0.5}),
        "addr": ((t(_Y[:, 0]), t(_Y[0])), {"alpha": 2.0}),
        "addbmm": ((t(np.arange(16.0).reshape(2, 2, 4) / 16),
                    t(np.arange(24.0).reshape(2, 4, 3) / 24)), {}),
        "baddbmm": ((t(np.arange(8.0).reshape(1, 2, 4) / 8),
                     t(np.arange(12.0).reshape(1, 4, 3) / 12)), {"beta": 2.0}),
    }.get(name, ((), {}))


# ops whose in-place form has no derivative in retrograd (PyTorch records a node whose
# gradient is zero for comparisons): on a tensor that requires grad they raise
_NO_GRAD = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
            "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
            "logical_not"}
# PyTorch records nothing for these and so lets them overwrite a leaf that requires grad
# (and, on a non-leaf, keeps the old grad_fn: a silently wrong gradient); retrograd
# refuses both
_TORCH_WRITES_LEAF = {"logical_and", "logical_or", "logical_xor", "logical_not"}
# grad_fn names that still differ from PyTorch's (values and gradients match): see the
# allow-list in test_grad_fn_structure.py
_NAME_DIFFERS = {"float_power", "fmod", "frac", "index_copy", "masked_fill", "nan_to_num", "pow",
                 "remainder",
                 "round", "tril", "triu",
                 # PyTorch records ConjPhysicalBackward1 for the identity on a real tensor;
                 # retrograd's in-place identity keeps the history (Note [Conjugation of
                 # real tensors] in _functions/signs_bits_predicates.py)
                 "conj_physical"}
# PyTorch's in-place overloads of these have no derivative: backward raises, in both
_BACKWARD_RAISES = {"heaviside", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh",
                    "igamma", "igammac"}
_INTEGER = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "gcd", "lcm",
            "bitwise_left_shift", "bitwise_right_shift"}
# self of another shape than the (2, 3) matrix
_SELF = {"addmv": _X[0, :2], "baddbmm": _X[None]}

METHODS = sorted(inplace_methods())
FUNCTIONS = sorted(inplace_functions())


def _self(m, name: str, rg: bool):
    if name in _INTEGER:
        return m.tensor([[1, 6, 3], [12, 5, 0]])
    x = m.tensor(_SELF.get(name, _X), dtype=m.float64)
    return x.requires_grad_(True) if rg else x


def _np(t):
    return np.asarray(t.detach().numpy(force=True))  # force: torch's ZeroTensor gradients


def test_every_generated_form_has_arguments():
    assert len(METHODS) >= 80 and len(FUNCTIONS) >= 40
    assert set(FUNCTIONS) <= set(dir(R)), "every function form is in the namespace"
    for name in FUNCTIONS:
        assert hasattr(torch, name), f"torch has no {name}"
    for name in METHODS:
        assert hasattr(torch.Tensor, name), f"torch.Tensor has no {name}"


@pytest.mark.parametrize("name", METHODS)
def test_values_version_and_identity(name):
    base = name[:-1]
    outs = []
    for m in (torch, R):
        x = _self(m, base, False)
        args, kwargs = _args(m, base, False)
        v0 = x._version
        y = getattr(x, name)(*args, **kwargs)
        assert y is x
        outs.append((_np(x), str(x.dtype), x._version - v0))
    (tv, tdt, tbump), (rv, rdt, rbump) = outs
    assert rdt == tdt
    np.testing.assert_allclose(rv, tv, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert rbump == tbump == 1


@pytest.mark.parametrize("name", METHODS)
def test_gradient_through_the_form_on_a_non_leaf(name):
    base = name[:-1]
    if base in _INTEGER:
        pytest.skip("integer tensors do not require grad")
    res = []
    for m in (torch, R):
        leaf = _self(m, base, True)
        args, kwargs = _args(m, base, True)
        a = leaf * 1
        if base in _NO_GRAD and m is R:
            with pytest.raises(RuntimeError, match="derivative of this in-place op"):
                getattr(a, name)(*args, **kwargs)
            return
        getattr(a, name)(*args, **kwargs)
        g = m.tensor(np.linspace(-1, 1, a.numel()).reshape(tuple(a.shape)), dtype=a.dtype)
        if base in _BACKWARD_RAISES:
            with pytest.raises((RuntimeError, NotImplementedError), match="derivative for"):
                a.backward(g)
            res.append((_np(a), a.grad_fn.name(), []))
            continue
        a.backward(g)
        leaves = [leaf] + [x for x in list(args) + list(kwargs.values())
                           if isinstance(x, (torch.Tensor, R.Tensor)) and x.requires_grad]
        res.append((_np(a), a.grad_fn.name(), [None if x.grad is None else _np(x.grad)
                                               for x in leaves]))
    (tv, tname, tg), (rv, rname, rgr) = res
    np.testing.assert_allclose(rv, tv, rtol=1e-12, atol=1e-12)
    if base not in _NAME_DIFFERS:
        assert rname == tname
    assert len(rgr) == len(tg)
    for r, t in zip(rgr, tg):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", METHODS)
def test_refused_on_a_leaf_that_requires_grad(name):
    base = name[:-1]
    if base in _INTEGER:
        pytest.skip("integer tensors do not require grad")
    for m in (torch, R):
        if m is torch and base in _TORCH_WRITES_LEAF:
            continue
        leaf = _self(m, base, True)
        args, kwargs = _args(m, base, False)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
            getattr(leaf, name)(*args, **kwargs)
        assert leaf._version == 0


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_form_matches_torch(name):
    base = name[:-1]
    outs = []
    for m in (torch, R):
        x = _self(m, base, False) * 1
        args, kwargs = _args(m, base, False)
        y = getattr(m, name)(x, *args, **kwargs)
        assert y is x
        outs.append(_np(x))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12, atol=1e-12)
    assert getattr(R, name) is getattr(R.Tensor, name)
    assert name in inplace_functions()


def test_float_power_needs_a_double_tensor():
    for m in (torch, R):
        with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float "
                                               "but the operation's result requires dtype "
                                               "Double"):
            m.ones(2).float_power_(2)


def test_aliases_share_their_op_method():
    made = inplace_methods()
    assert made["divide_"] is made["div_"] is made["true_divide_"]
    assert made["arcsin_"] is made["asin_"] and made["clip_"] is made["clamp_"]
    assert R.Tensor.subtract_ is R.Tensor.sub_


def test_gradient_through_a_form_on_a_view():
    """A generated form applied to a view rewrites the base's history (CopySlices)."""
    res = []
    for m in (torch, R):
        leaf = m.tensor(_X, dtype=m.float64, requires_grad=True)
        a = leaf * 1
        m.sin_(a[0])
        a[1].clamp_(0.3, 0.7)
        a.backward(m.ones_like(a))
        res.append((_np(a), _np(leaf.grad), a.grad_fn.name()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)
    assert res[1][2] == res[0][2]
