"""Views and in-place ops against PyTorch: every view op with in-place ops on its base,
on itself and on a sibling view, views of views, and the defects of issue 12.

Each scenario runs with ``m = torch`` and ``m = retrograd``; both must give the same
values, gradients, ``requires_grad`` and grad_fn presence, or raise the same exception
type (Note [View grad_fn regeneration] in ops/dispatch.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd
from _autograd_compare import assert_same, same, same_error

# view ops of a (3, 4) tensor (a view of a view where the name says so)
VIEWS = {
    "view": lambda x: x.view(12),
    "reshape": lambda x: x.reshape(4, 3),
    "slice": lambda x: x[1:, ::2],
    "select": lambda x: x[1],
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "expand": lambda x: x[0:1].expand(3, 4),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
    "unfold": lambda x: x.unfold(1, 2, 1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "split": lambda x: x.split(2)[0],
    "chunk": lambda x: x.chunk(2, 1)[1],
    "unbind": lambda x: x.unbind(1)[2],
    "as_strided": lambda x: x.as_strided((2, 2), (4, 1), 1),
    "flatten": lambda x: x.flatten(),
    "view_of_view": lambda x: x[1:].t()[1:],
    "alias_getitem": lambda x: x[...],
}

INPLACE = {
    "mul_": lambda t, m: t.mul_(2),
    "exp_": lambda t, m: t.exp_(),
    "add_tensor": lambda t, m: t.add_(m.ones(t.shape[-1:]) * 0.5),
    "zero_": lambda t, m: t.zero_(),
    "fill_": lambda t, m: t.fill_(3.0),
    "copy_": lambda t, m: t.copy_(m.arange(float(t.shape[-1])) if t.dim() else m.tensor(7.0)),
    "setitem": lambda t, m: t.__setitem__((0,) if t.dim() else (), 10.0),
    "iadd": lambda t, m: t.__iadd__(1.0),
    "clamp_": lambda t, m: t.clamp_(-1.0, 1.5),
}


def _x(m):
    return m.tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.4, requires_grad=True)


def _weights(m, shape):
    n = int(np.prod(shape))
    return m.tensor((np.arange(n, dtype=np.float64) % 5 + 1).reshape(shape), dtype=m.float32)


def _outcome(f):
    """What ``f(m)`` gives with each module: (torch's, retrograd's) result or exception."""
    out = []
    for m in (torch, retrograd):
        try:
            out.append(f(m))
        except (RuntimeError, ValueError, IndexError, TypeError) as e:
            out.append(e)
    return out


def _check(f):
    t, r = _outcome(f)
    if isinstance(t, Exception):
        assert isinstance(r, type(t)), f"torch raised {t!r}, retrograd gave {r!r}"
        return
    assert not isinstance(r, Exception), f"retrograd raised {r!r}, torch gave {t!r}"
    assert_same(r, t, rtol=1e-5, atol=1e-6)


def _grads(m, x, loss, *tensors):
    loss.backward()
    return [x.grad] + [(t.requires_grad, t.grad_fn is not None) for t in tensors]


@pytest.mark.parametrize("op", list(INPLACE))
@pytest.mark.parametrize("view", list(VIEWS))
def test_inplace_on_base_reaches_earlier_view(view, op):
    """The view's grad_fn is re-derived from the base's new history."""
    def f(m):
        x = _x(m)
        b = x * 1
        v = VIEWS[view](b)
        INPLACE[op](b, m)
        loss = (v * _weights(m, v.shape)).sum() + (b * b).sum()
        return [v] + _grads(m, x, loss, v, b)
    _check(f)


@pytest.mark.parametrize("op", list(INPLACE))
@pytest.mark.parametrize("view", list(VIEWS))
def test_inplace_on_view_rewrites_base(view, op):
    def f(m):
        x = _x(m)
        b = x * 1
        v = VIEWS[view](b)
        INPLACE[op](v, m)
        loss = (b * _weights(m, b.shape)).sum() + (v * v).sum()
        return [b, v] + _grads(m, x, loss, v, b)
    _check(f)


@pytest.mark.parametrize("op", ["mul_", "setitem", "copy_"])
@pytest.mark.parametrize("view", list(VIEWS))
def test_inplace_on_sibling_view(view, op):
    def f(m):
        x = _x(m)
        b = x * 1
        row = b[1]  # the sibling that is written to
        v = VIEWS[view](b)
        INPLACE[op](row, m)
        loss = (v * _weights(m, v.shape)).sum()
        return [v] + _grads(m, x, loss, v, b)
    _check(f)


def _overlapping(m, view):
    b = m.arange(12.).reshape(3, 4)
    return b, b.unfold(1, 2, 1) if view == "unfold" else b.as_strided((3, 3), (1, 1)) \
        if view == "as_strided" else b[0:1].expand(3, 4)


@pytest.mark.parametrize("view", ["unfold", "as_strided", "expand"])
def test_writes_into_overlapping_views(view):
    # PyTorch refuses only a write into an expanded view (stride 0); the elements of an
    # overlapping unfold/as_strided view are written one after the other (more cases in
    # test_inplace_overlap.py)
    def mul(m):
        b, v = _overlapping(m, view)
        v.mul_(2)
        return b
    if view == "expand":
        same_error(mul)
    else:
        same(mul)

    def row(m):
        b, v = _overlapping(m, view)
        v[0] = 1.0  # one row: its elements are distinct
        return b
    same(row)
    same(lambda m: m.arange(12.).reshape(3, 4).unfold(1, 2, 2).mul_(2))  # disjoint windows


@pytest.mark.parametrize("view", ["slice", "t", "select", "diagonal", "view"])
def test_double_backward_through_rewritten_view(view):
    def f(m):
        x = _x(m)
        b = x * x
        v = VIEWS[view](b)
        b.mul_(3)
        g, = m.autograd.grad((v * v).sum(), x, create_graph=True)
        g2, = m.autograd.grad((g * g).sum(), x)
        return [g, g2]
    same(f, rtol=1e-5, atol=1e-5)


def test_issue_reproducers():
    def cases(m):
        out = []
        x = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        v0 = x.clone(); v1 = v0[0]; v0.mul_(2); v1.sum().backward()  # noqa: E702
        out.append(x.grad)
        x = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        v0 = x.clone(); v1 = v0.t(); v0[0, 0] = 10.  # noqa: E702
        (v1 * m.tensor([[1., 2.], [3., 4.]])).sum().backward()
        out.append(x.grad)
        x = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        v0 = x.clone(); v1 = v0[:, 0]; v0.exp_(); v1.sum().backward()  # noqa: E702
        out.append(x.grad)
        x = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        v0 = x.clone(); a = v0[0]; b = v0.view(4); a.mul_(2); b.sum().backward()  # noqa: E702
        out.append(x.grad)
        x = m.tensor([1., 2.], requires_grad=True)  # no false "modified by an inplace" error
        v0 = x.square(); v0.add_(x); v0.pow(2).sum().backward()  # noqa: E702
        out.append(x.grad)
        return out
    same(cases, rtol=1e-6)


def test_grad_buffers_are_never_shared():
    def f(m):
        a, b, c = (m.tensor([1., 2.], requires_grad=True) for _ in range(3))
        ((a + b) * c).sum().backward()
        a.grad.mul_(10)  # must not change b.grad
        ((a + b) * c).sum().backward()  # accumulates in place into each buffer
        return [a.grad, b.grad, c.grad]
    same(f)
    a = retrograd.ones(2, requires_grad=True)
    b = retrograd.ones(2, requires_grad=True)
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())


def test_grad_buffer_not_shared_with_user_gradient_or_hook():
    seen = []
    x = retrograd.ones(3, requires_grad=True)
    y = x * 1
    y.register_hook(lambda g: seen.append(g))
    v = retrograd.ones(3)
    y.backward(v)
    assert not np.shares_memory(x.grad.numpy(), v.numpy())
    assert not np.shares_memory(x.grad.numpy(), seen[0].numpy())
    x.grad.mul_(5)
    assert seen[0].tolist() == [1.0, 1.0, 1.0]


def test_grad_buffers_with_create_graph_and_views():
    def f(m):
        a = m.tensor([1., 2., 3., 4.], requires_grad=True)
        w = m.tensor([1., 2., 3., 4.], requires_grad=True)
        (a.view(2, 2) * 1).sum().backward(create_graph=True)
        (w * w).sum().backward(create_graph=True)
        return [a.grad, w.grad, w.grad.grad_fn is not None]
    same(f)


def test_clip_grad_norm_does_not_leak_into_other_leaves():
    def f(m):
        a, b = m.tensor([3., 4.], requires_grad=True), m.tensor([1., 1.], requires_grad=True)
        (a + b).sum().backward()
        m.nn.utils.clip_grad_norm_([a], 0.5)
        return [a.grad, b.grad]
    same(f, rtol=1e-6)


def test_retain_grad_follows_inplace_ops():
    def f(m):
        x = m.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        z = x * 1
        z.retain_grad()
        z[0:2].mul_(5)
        (y.sum() + (z * z).sum()).backward()
        return [y.grad, z.grad, x.grad]
    same(f)


def test_retain_grad_on_a_view_after_base_inplace():
    def f(m):
        x = m.tensor([1., 2., 3.], requires_grad=True)
        b = x * 1
        v = b[1:]
        v.retain_grad()
        b.mul_(2)
        (v * v).sum().backward()
        return [v.grad, x.grad]
    same(f)


def test_requires_grad_set_after_view_was_taken():
    def f(m):
        a = m.zeros(3)
        b = a[:]
        a.requires_grad = True
        return [b.requires_grad, b.grad_fn is not None]
    same(f)

    def write(m):
        a = m.zeros(3)
        b = a[:]
        a.requires_grad = True
        b.add_(5)
    same_error(write)


def test_family_comes_to_require_grad_through_an_inplace_op():
    def f(m):
        a = m.zeros(3)
        b = a[:2]
        c = a[1:]
        w = m.ones(2, requires_grad=True)
        b.add_(w)
        out = [a.requires_grad, c.requires_grad, c.grad_fn is not None]
        (c * 1).sum().backward()
        return out + [w.grad]
    same(f)


@pytest.mark.parametrize("path", ["iadd", "add_", "out", "index_copy_", "setitem_view",
                                  "setitem"])
def test_inplace_on_a_leaf_is_refused_on_every_path(path):
    def f(m):
        x = m.ones(3, requires_grad=True)
        if path == "iadd":
            x += 1
        elif path == "add_":
            x.add_(1)
        elif path == "out":
            m.add(m.ones(3), 1, out=x)
        elif path == "index_copy_":
            x.index_copy_(0, m.tensor([0]), m.zeros(1))
        elif path == "setitem_view":
            x[1:][0] = 3.0
        else:
            x[0] = 3.0
    same_error(f, prefix_only=False)


@pytest.mark.parametrize("view", ["split", "chunk", "unbind"])
def test_multi_output_views_refuse_inplace(view):
    def direct(m):
        b = _x(m) * 1
        VIEWS[view](b).mul_(2)
    same_error(direct)

    def indirect(m):
        b = _x(m) * 1
        v = VIEWS[view](b)
        b.mul_(2)
        return v.grad_fn
    same_error(indirect)

    def untracked(m):  # nothing requires grad: allowed
        b = m.ones(3, 4)
        v = VIEWS[view](b)
        v.mul_(2)
        return [b, v.grad_fn is None]
    same(untracked)


def _no_grad_view(m):
    """A non-leaf and a view of it taken under no_grad."""
    b = _x(m) * 1
    with m.no_grad():
        v = b[0]
    return b, v


def test_no_grad_view_rules():
    def made_in_no_grad(m):
        _, v = _no_grad_view(m)
        return [v.requires_grad, v.grad_fn is None]
    same(made_in_no_grad)

    def modified_after(m):
        b, v = _no_grad_view(m)
        b.mul_(2)
        return v.grad_fn
    same_error(modified_after)

    def written_in_grad_mode(m):
        _, v = _no_grad_view(m)
        v.mul_(2)
    same_error(written_in_grad_mode)


def test_view_of_leaf_updated_under_no_grad_regenerates():
    def f(m):
        p = m.tensor([1., 2., 3., 4.], requires_grad=True)
        v = p[:2]
        with m.no_grad():
            p.mul_(2)
        (v * v).sum().backward()
        return [v, p.grad]
    same(f)


def test_diagonal_is_a_view():
    def f(m):
        x = m.arange(9.).reshape(3, 3)
        d = x.diagonal()
        d.mul_(10)
        return [x, d._base is x, d.is_contiguous()]
    same(f)


def _double_in_place(m):
    """A Function that doubles its input in place through numpy() and marks it dirty."""
    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.numpy()[...] *= 2  # grad mode is off in forward: numpy() is allowed
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


def test_mark_dirty_through_numpy_in_forward():
    def f(m):
        a = m.tensor([1., 2.], requires_grad=True)
        b = a * 1
        out = _double_in_place(m).apply(b)
        res = [out is b, out, b._version]
        out.sum().backward()
        return res + [a.grad]
    same(f)

    def stale(m):
        a = m.tensor([1., 2.], requires_grad=True)
        b = a * 1
        c = b * b  # saves b at version 0
        _double_in_place(m).apply(b)
        c.sum().backward()
    same_error(stale)
