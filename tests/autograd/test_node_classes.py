"""Graph objects as PyTorch makes them, against torch 2.13: each node name is a class
(``type(grad_fn).__name__``, its module, ``repr``, ``isinstance(.., graph.Node)``), a
custom Function's node is ``<Name>Backward``, saved tensors have their SavedTensor with
``register_hooks`` and PyTorch's errors once freed, and ``register_multi_grad_hook``
(Note [Node classes], Note [Saved attributes], Note [Multi-grad hooks])."""

from __future__ import annotations

import re

import pytest
import torch

import retrograd as R

MODULES = [torch, R]


def _nodes(m):
    a = m.ones(2, 2, requires_grad=True)
    b = m.ones(2, 2, requires_grad=True)
    return [(a + b).grad_fn, (a * b).sum().grad_fn, m.addmm(m.ones(2), a, m.ones(2, 2)).grad_fn,
            (a * b).grad_fn.next_functions[0][0], a[0:1].grad_fn, a.t().grad_fn,
            a.exp().grad_fn, a.sum(0).grad_fn]


def _describe(n) -> tuple:
    t = type(n)
    r = re.sub(r"0x[0-9a-f]+", "0x", repr(n))
    return t.__name__, t.__qualname__, r, n.name(), isinstance(n, m_of(n).autograd.graph.Node)


def m_of(n):
    return R if type(n).__module__.startswith("retrograd") or isinstance(
        n, R.autograd.graph.Node) else torch


def test_node_classes_are_named_after_the_node():
    got = [_describe(n) for n in _nodes(R)]
    want = [_describe(n) for n in _nodes(torch)]
    assert got == want
    for n in _nodes(R):
        if n.name() != "torch::autograd::AccumulateGrad":
            assert type(n).__module__ == "builtins"


def test_one_class_per_node_name():
    x = R.ones(3, requires_grad=True)
    assert type(x.exp().grad_fn) is type(x.exp().grad_fn)
    assert type(x.exp().grad_fn) is not type(x.sin().grad_fn)
    assert type(x.exp().grad_fn).__slots__ == ()


@pytest.mark.parametrize("m", MODULES, ids=lambda m: m.__name__)
def test_custom_function_node_class(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    y = Cube.apply(m.ones(2, requires_grad=True))
    t = type(y.grad_fn)
    assert (t.__name__, t.__qualname__, y.grad_fn.name()) == ("CubeBackward",) * 3
    assert t.__module__ == f"{m.__name__}.autograd.function"
    assert issubclass(t, m.autograd.function.BackwardCFunction)
    assert isinstance(y.grad_fn, m.autograd.graph.Node)
    assert re.fullmatch(rf"<{m.__name__}\.autograd\.function\.CubeBackward object at 0x[0-9a-f]+>",
                        repr(y.grad_fn))


def _raw_hooks(m):
    log = []
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0])
    n = (b * a).grad_fn
    raw = n._raw_saved_self
    assert raw is n._raw_saved_self
    raw.register_hooks(lambda t: (log.append("pack"), t * 2)[1],
                       lambda t: (log.append("unpack"), t)[1])
    v = n._saved_self.tolist()
    errors = []
    for call in (lambda: raw.register_hooks(lambda t: t, lambda t: t),
                 lambda: n._raw_saved_other.register_hooks(lambda t: t, lambda t: t)):
        try:
            call()
        except RuntimeError as e:
            errors.append(str(e))
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t * 1, lambda t: t)
    y.sum().backward()
    freed = []
    for call in (lambda: y.grad_fn._saved_result,
                 lambda: y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)):
        try:
            call()
        except RuntimeError as e:
            freed.append(str(e))
    return log, v, errors, [round(g, 5) for g in a.grad.tolist()], freed


def test_saved_tensor_hooks_and_errors_match_torch():
    got, want = _raw_hooks(R), _raw_hooks(torch)
    assert got == want
    assert want[4][0].startswith("Trying to backward through the graph a second time")


def test_saved_values_after_backward_and_inplace():
    def run(m):
        x = m.ones(3, 4, requires_grad=True)
        y = x.sum(1)
        y.sum().backward()
        out = [y.grad_fn._saved_dim, y.grad_fn._saved_keepdim, y.grad_fn._saved_self_sym_sizes]
        z = x * 1
        w = z * z
        with m.no_grad():
            z.add_(1)
        try:
            out.append(w.grad_fn._saved_self)
        except RuntimeError as e:
            out.append(str(e).split(" Hint")[0])
        out.append([a for a in dir(w.grad_fn) if "saved_" in a])
        return out
    assert run(R) == run(torch)


def _multi(m, mode):
    log = []
    a = m.ones(2, 3, requires_grad=True)
    b = m.ones(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    if mode == "all":
        fn = lambda grads: log.append([g is not None for g in grads])  # noqa: E731
    else:
        fn = lambda g: log.append(g.tolist())  # noqa: E731
    h = m.autograd.graph.register_multi_grad_hook((a, b, c, d), fn, mode=mode)
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    try:  # ('all': torch refuses to count a leaf's node under autograd.grad)
        m.autograd.grad((c * 2).sum(), [b], retain_graph=True)
    except RuntimeError as e:
        log.append(str(e))
    (c + d).sum().backward(retain_graph=True)
    h.remove()
    c.sum().backward()
    return log


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_matches_torch(mode):
    assert _multi(R, mode) == _multi(torch, mode)


def test_register_multi_grad_hook_refuses_an_unknown_mode():
    for m in MODULES:
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            m.autograd.graph.register_multi_grad_hook([m.ones(1, requires_grad=True)],
                                                      print, mode="some")
