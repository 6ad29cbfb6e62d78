"""Note [CopySlices folding] (_functions/namespace.py): an in-place op on a view is one
CopySlices node on the base, as in PyTorch, with the same gradients, double backward,
version checks and second-backward errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _names(node, is_torch):
    out, seen, queue = [], set(), [node]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        name = type(n).__name__ if is_torch else n.name().rpartition("::")[2]
        out.append((name, len(n.next_functions)))
        queue.extend(f for f, _ in n.next_functions)
    return out


def _setitem(base, w):
    base[0][1:] = w[0, 1:]


# each writes into a view of ``base`` (made from x) in place, with w as an operand
PROGRAMS = {
    "mul_ on a row": lambda base, w: base[0].mul_(w[0]),
    "add_ alpha on a column": lambda base, w: base[:, 1].add_(w[:, 1], alpha=2.0),
    "exp_ on a slice": lambda base, w: base[1:, :2].exp_(),
    "view of a view": lambda base, w: base[1:][0, ::2].mul_(w[0, ::2]),
    "setitem into a view": _setitem,
    "transpose then div_": lambda base, w: base.t()[1].div_(w[:, 1]),
    "pow_ with a tensor": lambda base, w: base[0].pow_(w[0]),
}


def _run(m, prog, create_graph):
    g = np.random.default_rng(0)
    xv, wv = g.uniform(0.5, 1.5, (3, 3)), g.uniform(0.5, 1.5, (3, 3))
    x = m.tensor(xv, requires_grad=True)
    w = m.tensor(wv, requires_grad=True)
    base = x * w
    PROGRAMS[prog](base, w)
    names = _names(base.grad_fn, m is torch)
    loss = (base * base).sum()
    gx, gw = m.autograd.grad(loss, [x, w], create_graph=create_graph)
    res = [names, gx.detach().numpy(), gw.detach().numpy()]
    if create_graph:
        hx, hw = m.autograd.grad((gx * gx).sum() + gw.sum(), [x, w])
        res += [hx.numpy(), hw.numpy()]
    return res


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
@pytest.mark.parametrize("create_graph", [False, True])
def test_folded_graph_and_gradients_match_torch(prog, create_graph):
    t = _run(torch, prog, create_graph)
    r = _run(retrograd, prog, create_graph)
    assert r[0] == t[0]
    for a, b in zip(r[1:], t[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_second_backward_through_folded_node_raises_as_torch():
    for m in (torch, retrograd):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor([2.0, 3.0], requires_grad=True)
        b = x.clone()
        b[:2].mul_(w)
        loss = (b * b).sum()
        loss.backward(retain_graph=False)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_version_check_of_the_folded_op_saved_tensor():
    # mul_ saved w; writing w afterwards makes the CopySlices backward raise, as in torch
    for m in (torch, retrograd):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = m.tensor([2.0, 3.0], requires_grad=True)
        w2 = w * 1
        b = x.clone()
        b[:2].mul_(w2)
        w2.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.sum().backward()


def test_hooked_node_is_not_folded_and_hook_runs():
    x = retrograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = retrograd.tensor([2.0, 3.0], requires_grad=True)
    b = x.clone()
    seen = []
    b.register_hook(lambda g: seen.append(g.shape))
    b[:2].mul_(w)
    b.sum().backward()
    assert x.grad.tolist() == [2.0, 3.0, 1.0] and w.grad.tolist() == [1.0, 2.0]


def test_folded_node_hides_the_op_s_non_differentiable_slots():
    # scatter_ on a view: torch's CopySlices has the base's history and src's, not the index
    res = []
    for m in (torch, retrograd):
        x = m.ones(3, 4, requires_grad=True)
        src = m.full((1, 2), 2.0, requires_grad=True)
        y = x * 1
        y[1:].scatter_(1, m.tensor([[0, 1]]).expand(2, 2), src.expand(2, 2))
        names = [None if f is None else (type(f).__name__ if m is torch else f.name())
                 for f, _ in y.grad_fn.next_functions]
        (y * y).sum().backward()
        res.append((names, x.grad.numpy(), src.grad.numpy()))
    assert res[1][0] == res[0][0] == ["MulBackward0", "ExpandBackward0"]
    np.testing.assert_array_equal(res[1][1], res[0][1])
    np.testing.assert_array_equal(res[1][2], res[0][2])


def test_custom_function_on_a_view_keeps_its_own_node():
    class Double(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            v.mul_(2)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = retrograd.ones(3, requires_grad=True)
    y = x * 1
    Double.apply(y[:2])
    assert y.grad_fn.name().endswith("CopySlices")
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 1.0]
