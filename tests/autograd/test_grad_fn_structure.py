"""Backward graphs with PyTorch's structure: node names, next_functions, leaves.

For every op database sample (tests/support/opdb.py), the graphs of retrograd and torch 2.13
are walked breadth-first from each output's grad_fn and compared node by node: the
class name (torch's ``type(node).__name__``, retrograd's ``node.name()`` without its
``torch::autograd::`` prefix), the ``next_functions`` (length, order, ``None`` slots),
and for each ``AccumulateGrad`` which leaf its ``.variable`` is. Plus nn.Linear, custom
Functions, Python-scalar operands and checkpointed blocks; matmul for every rank
combination, einsum equations, F.linear for every input rank and layout, and the layout
of the weight's gradient (which decides whether its .grad is a copy).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

import retrograd as R
from opdb import DB, build, flat, is_tensor, sample_rng

torch = pytest.importorskip("torch")
import retrograd.utils.checkpoint  # noqa: E402

# Entries whose graphs still differ from PyTorch's (values and gradients match; see
# test_ops.py). Keep this short: fix the structure, then delete the entry.
ALLOW = {
}


def _name(node, is_torch: bool):
    if is_torch:
        return type(node).__name__
    return node.name().rpartition("::")[2]


def walk(outs, leaves, is_torch: bool, limit: int = 400) -> list:
    """Breadth-first description of the graph behind ``outs``: one item per visit."""
    res: list = []
    seen: dict = {}
    queue = [o.grad_fn if is_tensor(o) else None for o in outs]
    i = 0
    while i < len(queue) and i < limit:
        node = queue[i]
        i += 1
        if node is None:
            res.append(None)
            continue
        name = _name(node, is_torch)
        if name == "AccumulateGrad":
            v = node.variable
            res.append(("leaf", next((k for k, x in enumerate(leaves) if x is v), "?")))
            continue
        if id(node) in seen:
            res.append(("again", seen[id(node)]))
            continue
        seen[id(node)] = len(seen)
        nf = node.next_functions
        res.append((name, tuple((None if f is None else _name(f, is_torch), k) for f, k in nf)))
        queue.extend(f for f, _ in nf)
    return res


def _pair(fn):
    """(torch walk, retrograd walk) of ``fn(m) -> (outputs, leaves)``."""
    tout, tleaves = fn(torch)
    rout, rleaves = fn(R)
    return walk(flat(tout), tleaves, True), walk(flat(rout), rleaves, False)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in DB])
def test_graph_structure_matches_torch(entry):
    bad = []
    for sample in entry.samples(sample_rng(entry.name)):
        try:
            a, kw, tleaves = build(torch, sample, "float64", True)
            tout = entry.fn(torch, *a, **kw)
        except (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError):
            continue  # errors are compared in test_ops.py
        a, kw, rleaves = build(R, sample, "float64", True)
        rout = entry.fn(R, *a, **kw)
        tw, rw = walk(flat(tout), tleaves, True), walk(flat(rout), rleaves, False)
        if tw != rw:
            bad.append(f"{sample}:\n  torch     {tw}\n  retrograd {rw}")
    if entry.name in ALLOW:
        if not bad:
            pytest.fail(f"{entry.name} now matches torch: remove it from ALLOW")
        pytest.xfail(ALLOW[entry.name])
    assert not bad, f"{entry.name}:\n" + "\n".join(bad)


def test_allow_list_names_real_entries():
    names = {e.name for e in DB}
    assert set(ALLOW) <= names


@pytest.mark.parametrize("expr", ["2 * b", "b * 2", "2 + b", "b + 2", "b - 2", "b / 2",
                                  "2.5 * b * b", "b * b"])
def test_python_scalar_operands(expr):
    def fn(m):
        b = m.ones(3, requires_grad=True)
        return eval(expr, {"b": b}), [b]

    tw, rw = _pair(fn)
    assert rw == tw
    if expr == "2 * b":
        b = R.ones(3, requires_grad=True)
        nf = (2 * b).grad_fn.next_functions
        assert nf[0][0].variable is b and nf[1] == (None, 0)


def _linear(m, shape, bias, layout="c", bias_shape=None):
    """nn.Linear(3, 4) on an input of ``shape`` (``layout`` "t": made transposed, so not
    contiguous); ``bias_shape``: F.linear with a bias of that shape instead."""
    m.manual_seed(0)
    layer = m.nn.Linear(3, 4, bias=bias)
    if layout == "t":
        x = m.ones(shape[:-2] + (shape[-1], shape[-2]), requires_grad=True)
        xin = x.transpose(-1, -2)
    else:
        x = xin = m.ones(shape, requires_grad=True)
    if bias_shape is not None:
        b = m.ones(bias_shape, requires_grad=True)
        return m.nn.functional.linear(xin, layer.weight, b), [x, layer.weight, b]
    return layer(xin), [x, layer.weight] + ([layer.bias] if bias else [])


@pytest.mark.parametrize("shape,bias", [((2, 3), True), ((3,), True), ((2, 2, 3), True),
                                        ((2, 3), False), ((3,), False), ((2, 2, 3), False),
                                        ((2, 2, 2, 3), True), ((2, 2, 2, 3), False),
                                        ((0, 3), True)])
def test_linear_graph(shape, bias):
    tw, rw = _pair(functools.partial(_linear, shape=shape, bias=bias))
    assert rw == tw
    if shape == (2, 3) and bias:
        assert rw[0] == ("AddmmBackward0", (("AccumulateGrad", 0), ("AccumulateGrad", 0),
                                            ("TBackward0", 0)))
        assert rw[1] == ("leaf", 2) and rw[2] == ("leaf", 0)  # bias, then input
        assert rw[3] == ("TBackward0", (("AccumulateGrad", 0),)) and rw[4] == ("leaf", 1)


@pytest.mark.parametrize("shape,layout,bias_shape", [
    ((2, 2, 3), "t", None),  # not contiguous: matmul, then the bias added in place
    ((2, 2, 2, 3), "t", None),
    ((2, 3), "t", None),  # 2-D: addmm whatever the layout
    ((2, 2, 2, 3), "c", (2, 4)),  # a 2-D bias with a 4-D input: matmul and add_
    ((2, 2, 3), "c", (2, 4)),  # 3-D contiguous, 2-D bias: not flattened either
    ((3,), "c", ()),  # a 0-d bias: matmul and add_
])
def test_linear_graph_other_inputs(shape, layout, bias_shape):
    tw, rw = _pair(functools.partial(_linear, shape=shape, bias=True, layout=layout,
                                     bias_shape=bias_shape))
    assert rw == tw


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 3)])
def test_linear_graph_1d_weight(shape):
    def fn(m):
        x = m.ones(shape, requires_grad=True)
        w = m.ones(3, requires_grad=True)
        return m.nn.functional.linear(x, w), [x, w]

    tw, rw = _pair(fn)
    assert rw == tw
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        R.nn.functional.linear(R.ones(2, 3), R.ones(3), R.ones(()))


def test_linear_weight_gradient_layout_is_torchs():
    """addmm hands W.t() a column-major gradient (torch's mm_mat2_backward), so that
    TBackward0 gives the weight a contiguous one, taken as its .grad without a copy."""
    seen = {}
    for m in (torch, R):
        layer = m.nn.Linear(3, 4)
        out = layer(m.ones(5, 3, requires_grad=True))
        tnode = out.grad_fn.next_functions[2][0]
        tnode.register_prehook(lambda g, m=m: seen.__setitem__(m, tuple(g[0].stride())))
        out.sum().backward()
        assert layer.weight.grad.is_contiguous()
    assert seen[R] == seen[torch] == (1, 3)


@pytest.mark.parametrize("x_rg", [True, False])
def test_linear_saves_the_transposed_weight_only_for_the_input(x_rg):
    """W.t() is saved (and a later in-place write to W breaks backward) only when the
    input needs a gradient, as in torch."""
    res = []
    for m in (torch, R):
        layer = m.nn.Linear(3, 4)
        out = layer(m.ones(2, 3, requires_grad=x_rg))
        with m.no_grad():
            layer.weight.mul_(2)
        try:
            out.sum().backward()
            res.append("ok")
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            res.append("raised")
    assert res[0] == res[1] == ("raised" if x_rg else "ok")


# every rank combination torch's at::matmul tells apart (dot, mv, mm, vector-matrix, the
# fold of either operand, the bmm path with broadcast batches, a batch of 1 squeezed),
# contiguous and transposed, with either operand or both requiring grad
_MM_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
              ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
              ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
              ((2, 1, 3, 4), (3, 4, 5)), ((5, 3, 4), (2, 1, 4, 2)), ((0, 3, 4), (4, 2))]


def _matmul_pair(m, sa, sb, ta, tb, ra, rb):
    def make(shape, transposed, rg):
        if transposed and len(shape) >= 2:
            return m.ones(shape[:-2] + shape[:-3:-1], requires_grad=rg).mT
        return m.ones(shape, requires_grad=rg)
    a, b = make(sa, ta, ra), make(sb, tb, rb)
    return m.matmul(a, b), [a, b]


@pytest.mark.parametrize("sa,sb", _MM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_graph_for_every_rank_combination(sa, sb):
    bad = []
    for ta, tb, (ra, rb) in itertools.product([False, True], [False, True],
                                              [(True, True), (True, False), (False, True)]):
        tw, rw = _pair(functools.partial(_matmul_pair, sa=sa, sb=sb, ta=ta, tb=tb, ra=ra,
                                         rb=rb))
        if tw != rw:
            bad.append(f"{(ta, tb, ra, rb)}:\n  torch     {tw}\n  retrograd {rw}")
    assert not bad, "\n".join(bad)


_EINSUMS = [("ij,jk->ik", (3, 4), (4, 2)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
            ("i,i->", (4,), (4,)), ("ij->ji", (3, 4)), ("ii->i", (3, 3)), ("ii", (3, 3)),
            ("ii->", (3, 3)), ("iij->j", (2, 2, 3)), ("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
            ("i,j", (3,), (4,)), ("ij,ij->ij", (3, 4), (3, 4)), ("ij->", (3, 4)),
            ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)), ("ij,kj->ik", (3, 4), (5, 4)),
            ("ab,ab->a", (1, 3), (4, 3)), ("aij,aji->a", (2, 3, 3), (2, 3, 3)),
            ("Ab,bC->AC", (2, 3), (3, 4)), ("i...,i...->...", (2, 3, 4), (2, 1, 4)),
            ("ijk,ikl->ijl", (1, 2, 3), (5, 3, 4)), ("iji->j", (2, 3, 2)),
            ("bii->bi", (2, 3, 3)), ("ij,jk->ik", (0, 4), (4, 2))]


@pytest.mark.parametrize("spec", _EINSUMS, ids=lambda s: s[0])
def test_einsum_graph_values_and_two_derivatives(spec):
    eq, *shapes = spec
    vals = [np.random.default_rng(0).standard_normal(sh) for sh in shapes]
    res = []
    for m in (torch, R):
        xs = [m.tensor(v, requires_grad=True) for v in vals]
        out = m.einsum(eq, *xs)
        gs = m.autograd.grad((out * out).sum(), xs, create_graph=True)
        ggs = m.autograd.grad(sum((g * g).sum() for g in gs), xs)
        res.append((walk([out], xs, m is torch),
                    [t.detach().numpy() for t in (out, *gs, *ggs)]))
    assert res[1][0] == res[0][0]
    for r, t in zip(res[1][1], res[0][1]):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


def test_linear_gradients_match_torch():
    g = np.random.default_rng(3)
    w, b, x = g.standard_normal((4, 3)), g.standard_normal(4), g.standard_normal((5, 3))
    res = []
    for m in (torch, R):
        layer = m.nn.Linear(3, 4)
        with m.no_grad():
            layer.weight.copy_(m.tensor(w))
            layer.bias.copy_(m.tensor(b))
        xt = m.tensor(x, dtype=m.float32, requires_grad=True)
        leaves = [xt, layer.weight, layer.bias]
        out = layer(xt)
        (out * out).sum().backward()
        res.append([leaf.grad.detach().numpy() for leaf in leaves])
    for r, t in zip(res[1], res[0]):
        assert r.shape == t.shape
        assert abs(r - t).max() < 1e-5


def _custom(m):
    class MyFn(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = m.ones(2, requires_grad=True)
    y = m.ones(2, requires_grad=True)
    return MyFn.apply(x * 2, y).sum(), [x, y]


def test_custom_function_node_is_named_after_the_function():
    tw, rw = _pair(_custom)
    assert rw == tw
    assert rw[1][0] == "MyFnBackward"


def _checkpointed(m, reentrant: bool):
    if m is torch:
        import torch.utils.checkpoint as cp
    else:
        cp = R.utils.checkpoint
    x = m.ones(2, requires_grad=True)
    w = m.ones(2, requires_grad=True)
    out = cp.checkpoint(lambda a: (a * w).sin().sum(), x * 3, use_reentrant=reentrant)
    return out * 2, [x, w]


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpointed_block(reentrant):
    tw, rw = _pair(functools.partial(_checkpointed, reentrant=reentrant))
    assert rw == tw
    names = [n[0] for n in rw if n and n[0] not in ("leaf", "again")]
    if reentrant:
        assert "CheckpointFunctionBackward" in names
    else:
        assert "SumBackward0" in names and "SinBackward0" in names
