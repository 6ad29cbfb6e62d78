"""Derivatives of mm, bmm, mv and dot as PyTorch writes them (Note [Product rules as
PyTorch writes them]): the graph a double backward records, its values and the
batched gradients of autograd.functional (one product per rule), against torch 2.13.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from test_grad_fn_structure import walk

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(11)
_SHAPES = {
    "mm": ((2, 4), (4, 3)),
    "bmm": ((2, 2, 4), (2, 4, 3)),
    "mv": ((4, 3), (3,)),
    "dot": ((3,), (3,)),
}
_DATA = {k: tuple(_RNG.standard_normal(s) for s in v) for k, v in _SHAPES.items()}


def _second_order(m, op: str, wrt: int):
    a, b = (m.tensor(d, dtype=m.float64, requires_grad=True) for d in _DATA[op])
    out = getattr(m, op)(a, b).tanh().sum()
    (g,) = m.autograd.grad(out, (a, b)[wrt], create_graph=True)
    gg = m.autograd.grad((g * g).sum(), (a, b))
    return walk([g], [a, b], m is torch), g.detach().numpy(), [x.numpy() for x in gg]


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("op", sorted(_SHAPES))
def test_double_backward_graph_and_values(op, wrt):
    tw, tg, tgg = _second_order(torch, op, wrt)
    rw, rg, rgg = _second_order(R, op, wrt)
    assert rw == tw  # e.g. mv's vec: MvBackward0(TBackward0, ...), no view chain
    np.testing.assert_allclose(rg, tg, rtol=1e-12, atol=1e-12)
    for r, t in zip(rgg, tgg):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


def test_mv_self_gradient_is_a_reshape_times_vec():
    # PyTorch's grad.ger(vec): grad.reshape(n, 1) * vec (ViewBackward0, MulBackward0)
    tw, _, _ = _second_order(torch, "mv", 0)
    rw, _, _ = _second_order(R, "mv", 0)
    assert rw[0][0] == tw[0][0] == "MulBackward0"
    assert [x[0] for x in rw if x and x[0] != "leaf"][:2] == ["MulBackward0", "ViewBackward0"]


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_of_a_product_matches_torch(vectorize):
    a_np = _RNG.standard_normal((5, 4))
    x_np = _RNG.standard_normal(4)
    res = []
    for m in (torch, R):
        a = m.tensor(a_np)
        res.append(m.autograd.functional.hessian(lambda v, a=a: (a @ v).tanh().sum(),
                                                 m.tensor(x_np), vectorize=vectorize).numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", sorted(_SHAPES))
def test_batched_gradients_through_each_product(op):
    # is_grads_batched: the rules get one more leading dim and take the broadcasting form
    res = []
    for m in (torch, R):
        a, b = (m.tensor(d, requires_grad=True) for d in _DATA[op])
        out = getattr(m, op)(a, b)
        eye = m.eye(out.numel(), dtype=out.dtype).reshape((out.numel(),) + tuple(out.shape))
        ga, gb = m.autograd.grad(out, (a, b), eye, is_grads_batched=True)
        res.append((ga.numpy(), gb.numpy()))
    for r, t in zip(res[1], res[0]):
        assert r.shape == t.shape
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


def _hvp_cases(m):
    rng = np.random.default_rng(5)
    w = m.tensor(rng.standard_normal((3, 4)))
    b = m.tensor(rng.standard_normal(3))
    v = m.tensor(rng.standard_normal((2, 4)))
    a = m.tensor([1.0, 0.0, 2.0, 3.0])  # a zero: cumprod's zero-aware rule
    lin = m.autograd.functional.hvp(
        lambda x: m.nn.functional.linear(x, w, b).tanh().sum(), v, m.ones_like(v))[1]
    cum = m.autograd.functional.hvp(lambda x: x.cumprod(0).sum(), a, m.ones_like(a))[1]
    return [lin, cum]


def test_forward_over_reverse_through_rules_that_shortcut_to_arrays():
    # the rules of addmm, t() and cumprod compute on arrays when no graph is recorded,
    # but not while forward-mode tangents ride on them (hvp is forward-over-reverse)
    for r, t in zip(_hvp_cases(R), _hvp_cases(torch)):
        assert bool((t != 0).any())
        np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_tangents_of_a_linear_layers_weight_gradient():
    from torch.autograd import forward_ad as tfw

    from retrograd.autograd import forward_ad as rfw

    rng = np.random.default_rng(6)
    x0, w0, b0, tw = (rng.standard_normal(s) for s in ((2, 3), (4, 3), (4,), (4, 3)))
    res = []
    for m, fw in ((torch, tfw), (R, rfw)):
        x, b = m.tensor(x0), m.tensor(b0, requires_grad=True)
        with fw.dual_level():
            w = fw.make_dual(m.tensor(w0), m.tensor(tw))
            w.requires_grad_()
            y = m.nn.functional.linear(x, w, b).tanh().sum()
            gw, gb = m.autograd.grad(y, (w, b))
            res.append([fw.unpack_dual(g).tangent.numpy() for g in (gw, gb)])
    for r, t in zip(res[1], res[0]):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)
