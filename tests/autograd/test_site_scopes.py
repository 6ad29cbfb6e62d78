"""Note [Site scopes]: nodes made inside retrograd's own code (an nn layer, a derivative
rule under create_graph) carry the user's line, found once per scope; code of the user's
called from inside a scope (their modules, hooks, a custom Function's backward) gets
its own line, as the frame walk gives it.
"""

from __future__ import annotations

import sys
import threading

import pytest

import retrograd as torch
from retrograd._graph.node import SITE_SCOPE, site_line


def _line(node) -> int:
    return site_line(node._site)[1]


def _here() -> int:
    return sys._getframe(1).f_lineno


def test_library_layers_carry_the_calling_line():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    y = model(torch.ones(2, 3)); line = _here()  # noqa: E702
    assert _line(y.grad_fn) == line  # AddmmBackward0 of the last Linear
    relu = y.grad_fn.next_functions[1][0]
    assert _line(relu) == line
    assert _line(relu.next_functions[0][0]) == line  # the first Linear's addmm
    assert SITE_SCOPE.site is None


class _Mine(torch.nn.Module):
    def forward(self, x):
        self.line = _here() + 1
        return x.exp()


def test_a_user_module_inside_a_library_container_gets_its_own_line():
    mine = _Mine()
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), mine, torch.nn.Linear(3, 1))
    y = model(torch.ones(2, 3)); line = _here()  # noqa: E702
    exp = y.grad_fn.next_functions[1][0]
    assert exp.name() == "ExpBackward0"
    assert _line(exp) == mine.line
    assert _line(exp.next_functions[0][0]) == line  # the Linear before it: the call's line


def test_forward_hooks_get_their_own_line():
    lin = torch.nn.Linear(2, 2)
    seen = {}

    def hook(module, args, out):
        seen["line"] = _here() + 1
        return out * 2

    lin.register_forward_hook(hook)
    y = torch.nn.Sequential(lin)(torch.ones(1, 2)); line = _here()  # noqa: E702
    assert y.grad_fn.name() == "MulBackward0"
    assert _line(y.grad_fn) == seen["line"]
    assert _line(y.grad_fn.next_functions[0][0]) == line


def test_create_graph_nodes_carry_the_grad_call_line():
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = (x.tanh() * x).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True); line = _here()  # noqa: E702
    assert _line(g.grad_fn) == line
    assert SITE_SCOPE.site is None


class _Square(torch.autograd.Function):
    """x * x; backward records its own nodes (on its own line) under create_graph."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x.pow(2)

    @staticmethod
    def backward(ctx, g):
        _Square.line = _here() + 1
        return g * 2 * ctx.x


def test_user_code_in_backward_gets_its_own_line():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    hook_line = {}

    def hook(g):
        hook_line["line"] = _here() + 1
        return g * w

    y = _Square.apply(x)
    y.register_hook(hook)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True); line = _here()  # noqa: E702
    node = g.grad_fn  # MulBackward0 of the custom backward's `* x`
    assert _line(node) == _Square.line
    lines = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None or n.name().endswith("AccumulateGrad"):
            continue
        lines.add(_line(n))
        stack.extend(f for f, _ in n.next_functions)
    assert lines == {_Square.line, hook_line["line"]}  # never the grad call's line
    assert line not in lines


def test_scope_closes_when_forward_raises():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    with pytest.raises(RuntimeError):
        model(torch.ones(2, 5))
    assert SITE_SCOPE.site is None


def test_scope_is_per_thread():
    lin = torch.nn.Linear(2, 2)
    inside = threading.Event()
    release = threading.Event()
    lines = {}

    class _Wait(torch.nn.Module):
        def forward(self, x):
            inside.set()
            release.wait(5)
            return x

    def worker():
        torch.nn.Sequential(_Wait(), lin)(torch.ones(1, 2))

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    y = torch.ones(1, 2, requires_grad=True) * 3; lines["main"] = _here()  # noqa: E702
    release.set()
    t.join()
    assert _line(y.grad_fn) == lines["main"]


def test_a_users_function_inside_a_library_layer_gets_its_own_line():
    lines = {}

    def act(h):
        lines["act"] = _here() + 1
        return h.exp()

    layer = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                             activation=act)
    y = layer(torch.ones(1, 3, 4)); line = _here()  # noqa: E702
    found = []
    stack, seen = [y.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.name() == "ExpBackward0":
            found.append(_line(n))
        stack.extend(f for f, _ in n.next_functions)
    assert found == [lines["act"]]
    assert _line(y.grad_fn) == line
