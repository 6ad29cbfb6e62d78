"""Backward graphs with PyTorch's structure: node names, next_functions, leaves.

For every op database sample (tests/opdb.py), the graphs of retrograd and torch 2.13
are walked breadth-first from each output's grad_fn and compared node by node: the
class name (torch's ``type(node).__name__``, retrograd's ``node.name()`` without its
``torch::autograd::`` prefix), the ``next_functions`` (length, order, ``None`` slots),
and for each ``AccumulateGrad`` which leaf its ``.variable`` is. Plus nn.Linear, custom
Functions, Python-scalar operands and checkpointed blocks.
"""

from __future__ import annotations

import functools

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


def _linear(m, shape, bias):
    m.manual_seed(0)
    layer = m.nn.Linear(3, 4, bias=bias)
    x = m.ones(shape, requires_grad=True)
    return layer(x), [x, layer.weight] + ([layer.bias] if bias else [])


@pytest.mark.parametrize("shape,bias", [((2, 3), True), ((3,), True), ((2, 2, 3), True),
                                        ((2, 3), False)])
def test_linear_graph(shape, bias):
    tw, rw = _pair(functools.partial(_linear, shape=shape, bias=bias))
    assert rw == tw
    if shape == (2, 3) and bias:
        assert rw[0] == ("AddmmBackward0", (("AccumulateGrad", 0), ("AccumulateGrad", 0),
                                            ("TBackward0", 0)))
        assert rw[1] == ("leaf", 2) and rw[2] == ("leaf", 0)  # bias, then input
        assert rw[3] == ("TBackward0", (("AccumulateGrad", 0),)) and rw[4] == ("leaf", 1)


def test_linear_graph_1d_no_bias():
    tw, rw = _pair(functools.partial(_linear, shape=(3,), bias=False))
    assert rw == tw


def test_linear_gradients_match_torch():
    import numpy as np

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
