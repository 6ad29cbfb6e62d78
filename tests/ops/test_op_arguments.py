"""Op arguments against torch 2.13, in classes the differential fuzzer found:

- ``index_fill`` (``torch.index_fill``, ``Tensor.index_fill``/``index_fill_``): values,
  errors, grad_fn names and edges, gradients (the value's too), double backward,
  forward AD, and the in-place form on leaves, views and under no_grad;
- add/sub with ``alpha`` and a Python scalar (``x.add_(3, alpha=2)``,
  ``torch.sub(2, x, alpha=3)``): one AddBackward0/SubBackward0 node, PyTorch's alpha checks;
- ``x[key] = v`` errors: PyTorch's messages and order (shape before the leaf check for
  basic keys, after it for tensor indices);
- broadcasting errors of the in-place binary ops and lerp (PyTorch's RuntimeError, not
  NumPy's ValueError), the leaf check first;
- 0-d pieces of ``unbind`` share memory with their base (a silent wrong value before).
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from _gradcheck_util import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(r, t):
    assert r.dtype.__repr__() == t.dtype.__repr__()
    assert tuple(r.shape) == tuple(t.shape)
    np.testing.assert_array_equal(_np(r), _np(t))


def _name(node) -> str | None:
    if node is None:
        return None
    return node.name().rpartition("::")[2] if hasattr(node, "name") else type(node).__name__


def _edges(t) -> list:
    """grad_fn name and the names of its next functions (None slots kept)."""
    return [_name(t.grad_fn)] + [_name(n) for n, _ in t.grad_fn.next_functions]


def _same_error(fn):
    """``fn(m)`` raises the same exception type in both, and retrograd's message starts with
    torch's first line (ours may add a sentence with the cause and the fix)."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as re_:
        fn(R)
    assert type(re_.value).__name__ == type(te.value).__name__, (re_.value, te.value)
    head = str(te.value).split("\n")[0]
    assert str(re_.value).startswith(head), (str(re_.value), head)


# ----------------------------------------------------------------------------------
# index_fill

_X = np.arange(12.0).reshape(3, 4) / 4 - 1

_FILL_CASES = [
    ("dim 1", lambda m: m.tensor(_X).index_fill(1, m.tensor([2, 0, 2]), -1.5)),
    ("function", lambda m: m.index_fill(m.tensor(_X), 0, m.tensor([1]), 2)),
    ("keywords", lambda m: m.index_fill(m.tensor(_X), dim=0, index=m.tensor([1]), value=3.0)),
    ("negative dim", lambda m: m.tensor(_X).index_fill(-1, m.tensor([3]), 2.0)),
    ("negative index", lambda m: m.tensor(_X).index_fill(1, m.tensor([-1, 0]), 2.0)),
    ("0-d index", lambda m: m.tensor(_X).index_fill(1, m.tensor(1), 2.0)),
    ("empty index", lambda m: m.tensor(_X).index_fill(1, m.tensor([], dtype=m.int64), 2.0)),
    ("0-d self", lambda m: m.tensor(1.5).index_fill(0, m.tensor([0]), 5.0)),
    ("0-d self, dim -1", lambda m: m.tensor(1.5).index_fill(-1, m.tensor([-1]), 5.0)),
    ("int self, float value", lambda m: m.arange(6).reshape(2, 3).index_fill(1, m.tensor([1]),
                                                                              2.7)),
    ("int self, 0-d float tensor",
     lambda m: m.arange(6).reshape(2, 3).index_fill(1, m.tensor([1]), m.tensor(2.7))),
    ("bool self", lambda m: m.zeros(3, dtype=m.bool).index_fill(0, m.tensor([1]), 2)),
    ("bool value tensor", lambda m: m.tensor(_X).index_fill(0, m.tensor([1]), m.tensor(True))),
    ("float64 value", lambda m: m.tensor(_X, dtype=m.float32).index_fill(
        0, m.tensor([1]), m.tensor(0.1, dtype=m.float64))),
    ("3-d, middle dim", lambda m: m.arange(24.0).reshape(2, 3, 4).index_fill(1, m.tensor([2]),
                                                                            -1)),
    ("non-contiguous", lambda m: m.tensor(_X).t().index_fill(1, m.tensor([0, 2]), 9.0)),
]


@pytest.mark.parametrize("name,fn", _FILL_CASES, ids=[c[0] for c in _FILL_CASES])
def test_index_fill_values(name, fn):
    _same(fn(R), fn(torch))


_FILL_ERRORS = [
    ("index out of range", lambda m: m.tensor(_X).index_fill(1, m.tensor([4]), 2.0)),
    ("negative index out of range", lambda m: m.tensor(_X).index_fill(1, m.tensor([-5]), 2.0)),
    ("0-d self, index 1", lambda m: m.tensor(1.0).index_fill(0, m.tensor([1]), 2.0)),
    ("float index", lambda m: m.tensor(_X).index_fill(1, m.tensor([0.0]), 2.0)),
    ("int32 index", lambda m: m.tensor(_X).index_fill(1, m.tensor([0], dtype=m.int32), 2.0)),
    ("2-d index", lambda m: m.tensor(_X).index_fill(1, m.tensor([[0]]), 2.0)),
    ("dim out of range", lambda m: m.tensor(_X).index_fill(2, m.tensor([0]), 2.0)),
    ("1-d value", lambda m: m.tensor(_X).index_fill(1, m.tensor([0]), m.ones(1))),
    ("1-d value before the index dtype",
     lambda m: m.tensor(_X).index_fill(1, m.tensor([0.0]), m.ones(2))),
    ("index dtype before dim", lambda m: m.tensor(_X).index_fill(5, m.tensor([0.0]), 1.0)),
    ("dim before index rank", lambda m: m.tensor(_X).index_fill(5, m.tensor([[0]]), 1.0)),
    ("complex value", lambda m: m.tensor(_X).index_fill(1, m.tensor([0]), 1j)),
    ("list index", lambda m: m.tensor(_X).index_fill(1, [0], 2.0)),
    ("str value", lambda m: m.tensor(_X).index_fill(1, m.tensor([0]), "a")),
    ("float dim", lambda m: m.tensor(_X).index_fill(1.0, m.tensor([0]), 2.0)),
]


@pytest.mark.parametrize("name,fn", _FILL_ERRORS, ids=[c[0] for c in _FILL_ERRORS])
def test_index_fill_errors(name, fn):
    _same_error(fn)


def _fill_graph(m, value_tensor: bool, self_grad: bool = True):
    a = m.tensor(_X, requires_grad=self_grad)
    b = a * 2 if self_grad else a
    v = m.tensor(0.5, requires_grad=True) if value_tensor else 0.5
    return b.index_fill(1, m.tensor([2, 0, 2]), v), a, v


@pytest.mark.parametrize("value_tensor,self_grad", [(False, True), (True, True), (True, False)])
def test_index_fill_grad_fn_and_gradients(value_tensor, self_grad):
    (ry, ra, rv), (ty, ta, tv) = (_fill_graph(m, value_tensor, self_grad) for m in (R, torch))
    assert _edges(ry) == _edges(ty)
    w = np.arange(12.0).reshape(3, 4) + 1
    leaves_r = [x for x in (ra, rv) if isinstance(x, R.Tensor) and x.requires_grad]
    leaves_t = [x for x in (ta, tv) if isinstance(x, torch.Tensor) and x.requires_grad]
    gr = R.autograd.grad((ry * R.tensor(w)).sum(), leaves_r)
    gt = torch.autograd.grad((ty * torch.tensor(w)).sum(), leaves_t)
    for a, b in zip(gr, gt):
        _same(a, b)  # the value's gradient: each filled position once (duplicates too)


def test_index_fill_value_gradient_keeps_the_value_dtype():
    def run(m):
        x = m.zeros(2, 3, requires_grad=True)
        v = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        x.index_fill(1, m.tensor([0, 1]), v).sum().backward()
        return v.grad, x.grad
    for a, b in zip(run(R), run(torch)):
        _same(a, b)


def test_index_fill_negative_index_value_gradient_refused_as_torch():
    # torch's backward formula (index_select of the unique index) refuses the negative
    # index that the forward accepted
    def run(m):
        x = m.zeros(2, 3, requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        y = x.index_fill(1, m.tensor([-1]), v)
        y.sum().backward()
    _same_error(run)


def test_index_fill_gradcheck_and_double_backward():
    idx = R.tensor([2, 0, 2])

    def f(x, v):
        return (x * x).index_fill(1, idx, v * v) * x

    x = R.tensor(_X + 0.1, dtype=R.float64, requires_grad=True)
    v = R.tensor(0.7, dtype=R.float64, requires_grad=True)
    assert gradcheck(f, [x, v])
    assert gradgradcheck(f, [x, v])
    assert gradcheck(lambda x: x.index_fill(0, R.tensor([1]), 3.0) * x, [x])

    def second(m):
        a = m.tensor(_X, dtype=m.float64, requires_grad=True)
        b = m.tensor(0.7, dtype=m.float64, requires_grad=True)
        y = (a * a).index_fill(1, m.tensor([1, 3]), b * b) * a
        g = m.autograd.grad(y.sum(), (a, b), create_graph=True)
        return m.autograd.grad((g[0] * g[0]).sum() + g[1] * g[1], (a, b))
    for a, b in zip(second(R), second(torch)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)


def test_index_fill_forward_ad():
    def run(m):
        fwd = m.autograd.forward_ad
        x = m.tensor(_X, dtype=m.float64)
        v = m.tensor(0.3, dtype=m.float64)
        with fwd.dual_level():
            dx = fwd.make_dual(x, m.ones_like(x) * 2)
            dv = fwd.make_dual(v, m.tensor(5.0, dtype=m.float64))
            outs = [fwd.unpack_dual(dx.index_fill(1, m.tensor([0, 2]), dv)).tangent,
                    fwd.unpack_dual(dx.index_fill(1, m.tensor([1]), 4.0)).tangent,
                    fwd.unpack_dual(x.index_fill(0, m.tensor([2]), dv)).tangent]
        return outs
    for a, b in zip(run(R), run(torch)):
        _same(a, b)


def test_index_fill_in_place_forms():
    def on_view(m):
        a = m.tensor(_X, requires_grad=True)
        b = a * 1
        v = m.tensor(7.0, requires_grad=True)
        ver = b._version
        out = b[1].index_fill_(0, m.tensor([1, 3]), v)
        assert b._version == ver + 1
        (b * b).sum().backward()
        return b, a.grad, v.grad, out is not b and out.grad_fn is not None
    r, t = on_view(R), on_view(torch)
    for a, b in zip(r[:3], t[:3]):
        _same(a, b)
    assert r[3] and t[3]

    def plain(m):
        x = m.zeros(2, 3)
        out = x.index_fill_(1, m.tensor([1]), m.tensor(3.0, requires_grad=True))
        return out is x, x, _edges(x)
    r, t = plain(R), plain(torch)
    assert r[0] and t[0] and r[2] == t[2]
    _same(r[1], t[1])

    def no_grad_leaf(m):
        a = m.tensor(_X, requires_grad=True)
        with m.no_grad():
            a.index_fill_(0, m.tensor([1]), 7.0)
        return a
    _same(no_grad_leaf(R), no_grad_leaf(torch))


@pytest.mark.parametrize("index", [[1], [7]])  # the leaf check comes before the index check
def test_index_fill_in_place_refused_on_leaves(index):
    _same_error(lambda m: m.tensor(_X, requires_grad=True).index_fill_(1, m.tensor(index), 1.0))
    _same_error(lambda m: m.tensor(_X, requires_grad=True)[0].index_fill_(0, m.tensor(index),
                                                                          1.0))
    # a view made a leaf by requires_grad_ (its base does not require grad): torch calls the
    # write "a view of a leaf" too
    def view_leaf(m):
        v = m.zeros(3, 4).view(-1).requires_grad_()
        v.t().index_fill_(0, m.tensor(index), 1.0)
    _same_error(view_leaf)


# ----------------------------------------------------------------------------------
# add/sub with alpha

_XF = np.array([1.0, 2.5, -3.0])

_ALPHA_CASES = [
    ("add scalar int", lambda m, x: m.add(x, 2, alpha=3)),
    ("add scalar float", lambda m, x: m.add(x, 2.5, alpha=0.5)),
    ("sub scalar", lambda m, x: m.sub(x, 2, alpha=3)),
    ("sub scalar float alpha", lambda m, x: m.sub(x, 0.5, alpha=0.5)),
    ("method", lambda m, x: x.add(2, alpha=3)),
    ("scalar first, add", lambda m, x: m.add(2, x, alpha=2)),
    ("scalar first, sub", lambda m, x: m.sub(2, x, alpha=2)),
    # an exact alpha * other: PyTorch's kernel fuses the multiply-add (one rounding)
    ("tensor other", lambda m, x: m.add(x, x * 2, alpha=0.25)),
    ("tensor other, sub", lambda m, x: m.sub(x, x * 2, alpha=1.5)),
    ("alpha 0", lambda m, x: m.add(x, 2, alpha=0)),
    ("alpha float 1.0", lambda m, x: m.add(x, 2, alpha=1.0)),
    ("alpha 0-d tensor", lambda m, x: m.add(x, 2, alpha=m.tensor(2.0))),
    ("alpha numpy", lambda m, x: m.add(x, 2, alpha=np.float64(3.0))),
    ("bool scalar other", lambda m, x: m.add(x, True, alpha=2)),
    ("0-d int other", lambda m, x: m.sub(x, m.tensor(2), alpha=0.5)),
    ("float64 0-d other", lambda m, x: m.add(x, m.tensor(2.0, dtype=m.float64), alpha=3)),
]


@pytest.mark.parametrize("name,fn", _ALPHA_CASES, ids=[c[0] for c in _ALPHA_CASES])
def test_alpha_with_scalars_values_and_graph(name, fn):
    xr = R.tensor(_XF, dtype=R.float32, requires_grad=True)
    xt = torch.tensor(_XF, dtype=torch.float32, requires_grad=True)
    yr, yt = fn(R, xr), fn(torch, xt)
    _same(yr, yt)
    assert _edges(yr)[0] == _edges(yt)[0]
    if "tensor other" not in name:  # torch: one node with the leaf (or None) as edges
        assert _edges(yr) == _edges(yt)
    w = np.array([1.0, -2.0, 0.5])
    gr, = R.autograd.grad((yr * R.tensor(w)).sum(), [xr])
    gt, = torch.autograd.grad((yt * torch.tensor(w)).sum(), [xt])
    _same(gr, gt)


_INT = np.array([1, 2, 3])
_ALPHA_DTYPES = [
    ("int + int * int", lambda m: m.add(m.tensor(_INT), 2, alpha=3)),
    ("int + float scalar * int", lambda m: m.add(m.tensor(_INT), 2.5, alpha=3)),
    ("int + float scalar * float alpha", lambda m: m.add(m.tensor(_INT), 2.0, alpha=0.5)),
    ("bool + bool, int alpha", lambda m: m.add(m.tensor([True, False]), m.tensor([True, False]),
                                               alpha=2)),
    ("bool + True, alpha True", lambda m: m.add(m.tensor([True, False]), True, alpha=True)),
    ("bool + int scalar", lambda m: m.add(m.tensor([True, False]), 1, alpha=2)),
    ("float16", lambda m: m.add(m.tensor([1.0, 3.0], dtype=m.float16), 0.1, alpha=0.3)),
    ("float + int tensor", lambda m: m.add(m.tensor(_XF), m.tensor(_INT), alpha=0.5)),
    ("int + float tensor", lambda m: m.add(m.tensor(_INT), m.tensor(_XF), alpha=0.5)),
    ("in place, int", lambda m: m.tensor(_INT).add_(2, alpha=3)),
    ("in place, no_grad scalar", lambda m: m.tensor(_XF).add_(3, alpha=2)),
    ("in place, sub_", lambda m: m.tensor(_XF).sub_(m.tensor(_XF), alpha=0.25)),
]


@pytest.mark.parametrize("name,fn", _ALPHA_DTYPES, ids=[c[0] for c in _ALPHA_DTYPES])
def test_alpha_dtypes(name, fn):
    _same(fn(R), fn(torch))


_ALPHA_ERRORS = [
    ("float alpha, int result", lambda m: m.add(m.tensor(_INT), 2, alpha=0.5)),
    ("float alpha, int tensors", lambda m: m.add(m.tensor(_INT), m.tensor(_INT), alpha=0.5)),
    ("numpy float alpha, int result", lambda m: m.add(m.tensor(_INT), 2, alpha=np.float64(3))),
    ("bool alpha, float result", lambda m: m.add(m.tensor(_XF), 1, alpha=True)),
    ("bool alpha, int result", lambda m: m.sub(m.tensor(_INT), 1, alpha=True)),
    ("bool alpha, tensors", lambda m: m.add(m.tensor(_XF), m.tensor(_XF), alpha=True)),
    ("complex alpha", lambda m: m.add(m.tensor(_XF), m.tensor(_XF), alpha=2j)),
    ("str alpha", lambda m: m.add(m.tensor(_XF), m.tensor(_XF), alpha="a")),
    ("None alpha", lambda m: m.add(m.tensor(_XF), 2, alpha=None)),
    ("1-d tensor alpha", lambda m: m.add(m.tensor(_XF), 2, alpha=m.tensor([2.0]))),
    ("two bool tensors", lambda m: m.sub(m.tensor([True]), m.tensor([False]), alpha=2)),
    ("shape before alpha", lambda m: m.add(m.ones(2, dtype=m.int64), m.ones(3, dtype=m.int64),
                                           alpha=0.5)),
    ("in place, int, float alpha", lambda m: m.tensor(_INT).add_(2, alpha=0.5)),
    ("in place, float alpha, no_grad fast path", lambda m: m.tensor(_XF).add_(2, alpha=True)),
    ("in place, result can't be cast", lambda m: m.tensor(_INT).add_(2.5, alpha=2)),
    ("in place on a leaf", lambda m: m.tensor(_XF, requires_grad=True).add_(0, alpha=2)),
    ("in place on a view of a leaf",
     lambda m: m.tensor(_XF, requires_grad=True)[:2].add_(3, alpha=2)),
]


@pytest.mark.parametrize("name,fn", _ALPHA_ERRORS, ids=[c[0] for c in _ALPHA_ERRORS])
def test_alpha_errors(name, fn):
    _same_error(fn)


def test_alpha_in_place_gradient_and_double_backward():
    def run(m):
        a = m.tensor(_XF, dtype=m.float64, requires_grad=True)
        b = m.tensor(_XF[::-1].copy(), dtype=m.float64, requires_grad=True)
        y = a * a
        y.add_(b * b, alpha=-0.75)
        y.sub_(2, alpha=3)
        g = m.autograd.grad(y.sum(), (a, b), create_graph=True)
        gg = m.autograd.grad((g[0] * g[1]).sum(), (a, b))
        return y, *g, *gg
    for a, b in zip(run(R), run(torch)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-13)
    x = R.tensor(_XF, dtype=R.float64, requires_grad=True)
    z = R.tensor(_XF * 2, dtype=R.float64, requires_grad=True)
    assert gradgradcheck(lambda x, z: R.sub(x * z, z * z, alpha=0.3) * x, [x, z])


# ----------------------------------------------------------------------------------
# setitem


def _set(make, key, value):
    def fn(m):
        x = make(m)
        k = key(m) if callable(key) else key
        v = value(m) if callable(value) else value
        x[k] = v
    return fn


def _leaf(m):
    return m.ones(2, 3, requires_grad=True)


def _plain(m):
    return m.ones(2, 3)


def _view_of_leaf(m):
    return m.ones(2, 3, requires_grad=True)[0:2]


def _chunk_view(m):
    y = m.tensor([0.0, 1.6, 1.2, 2.0], requires_grad=True) * 1
    return y.chunk(2, -1)[-1].permute((0,))


def _no_grad_view(m):
    x = m.ones(3, requires_grad=True) * 1
    with m.no_grad():
        return x[0:2]


def _idx(*i):
    return lambda m: m.tensor(list(i))


def _ones(*shape):
    return lambda m: m.ones(*shape)


_SETITEM_ERRORS = [
    # basic keys: the value is expanded first (its shape error wins over the leaf check)
    ("empty slice", _plain, slice(1, 1), _ones(2)),
    ("empty slice, more dims", _plain, (slice(None), slice(0, 0)), _ones(2)),
    ("int key, 1-d value", _plain, (0, 0), _ones(2)),
    ("int key, value with more dims", _plain, 0, _ones(2, 3)),
    ("int key, leading 1s stripped then too long", _plain, (0, 0), _ones(1, 2)),
    ("ellipsis, extra dim", _plain, Ellipsis, _ones(2, 3, 1)),
    ("leaf, ellipsis, bad shape", _leaf, Ellipsis, _ones(4)),
    ("leaf, int key, bad shape", _leaf, 0, _ones(4)),
    ("view of a leaf, int key, bad shape", _view_of_leaf, 0, _ones(4)),
    # tensor indices: the in-place checks come first, then the shape of the indexing result
    ("index, bad shape", _plain, _idx(0), _ones(4)),
    ("index, value too big", _plain, _idx(0), _ones(2, 3)),
    ("two indices", _plain, (_idx(0), _idx(1)), _ones(2)),
    ("slice and index", _plain, lambda m: (slice(None), m.tensor([0])), _ones(3)),
    ("mask", _plain, lambda m: m.tensor([True, False]), _ones(2)),
    ("leaf, index, bad shape", _leaf, _idx(0), _ones(4)),
    ("view of a leaf, index, bad shape", _view_of_leaf, _idx(0), _ones(4)),
    ("leaf, int then index", _leaf, lambda m: (0, m.tensor([0])), _ones(4)),
    # the leaf checks: a write into the leaf itself or into a view of it
    ("leaf, ellipsis", _leaf, Ellipsis, 1.0),
    ("leaf, full slice", _leaf, slice(None), 1.0),
    ("leaf, slice to the end", _leaf, slice(0, 10), 1.0),
    ("leaf, full slices", _leaf, (slice(None), slice(0, 3)), 1.0),
    ("leaf, partial slice", _leaf, (slice(None), slice(0, 2)), 1.0),
    ("leaf, negative start", _leaf, slice(-2, None), 1.0),
    ("leaf, None", _leaf, None, 1.0),
    ("leaf, int", _leaf, 0, 1.0),
    ("leaf, index", _leaf, _idx(0), 1.0),
    ("leaf, mask", _leaf, lambda m: m.tensor([True, False]), 1.0),
    ("leaf, slice then index", _leaf, lambda m: (slice(None), m.tensor([0])), 1.0),
    ("view of a leaf", _view_of_leaf, Ellipsis, 1.0),
    ("view of a leaf, index", _view_of_leaf, _idx(0), _ones(3)),
    # views that cannot be rewritten: named after the view the write goes through
    ("multi-output view, index", _chunk_view, _idx(0), 1.0),
    ("multi-output view, index, bad shape", _chunk_view, _idx(0), _ones(3)),
    ("multi-output view, int", _chunk_view, 0, 1.0),
    ("multi-output view, slice", _chunk_view, slice(0, 1), 1.0),
    ("multi-output view, None", _chunk_view, None, 1.0),
    ("multi-output view, ellipsis", _chunk_view, Ellipsis, 1.0),
    ("no_grad view, int", _no_grad_view, 0, 5.0),
    ("no_grad view, ellipsis", _no_grad_view, Ellipsis, 5.0),
    ("no_grad view, index", _no_grad_view, _idx(0), 5.0),
]


@pytest.mark.parametrize("name,make,key,value", _SETITEM_ERRORS,
                         ids=[c[0] for c in _SETITEM_ERRORS])
def test_setitem_errors(name, make, key, value):
    _same_error(_set(make, key, value))


def test_setitem_view_made_a_leaf_is_refused():
    # fuzz seeds 453 and 6624: a view that requires grad whose base is a leaf
    def viewed(m):
        v = m.zeros(3, 3).view(-1)
        v.requires_grad_()
        v.t()[...] = 1
    _same_error(viewed)

    def indexed(m):
        v = m.ones(2, 3).std(1).t()
        v.requires_grad_()
        v[m.tensor([0, 1])] = m.tensor([[-0.18]], requires_grad=True)
    _same_error(indexed)


_SETITEM_OK = [
    ("leading 1s stripped", Ellipsis, _ones(1, 2, 3)),
    ("int key, leading 1s", 0, _ones(1, 1, 3)),
    ("element, 1-element value", (0, 0), _ones(1)),
    ("element, 1x1 value", (0, 0), _ones(1, 1)),
    ("empty slice, broadcast", (slice(None), slice(0, 0)), _ones(1)),
    ("index, leading 1s", _idx(0), _ones(1, 1, 3)),
    ("float64 value", Ellipsis, lambda m: m.ones(3, dtype=m.float64) * 2),
]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name,key,value", _SETITEM_OK, ids=[c[0] for c in _SETITEM_OK])
def test_setitem_value_shapes(name, key, value, grad):
    def run(m):
        x = m.arange(6.0).reshape(2, 3)
        v = value(m)
        if grad:
            x = x.requires_grad_() * 1
            v = v.requires_grad_()
        x[key(m) if callable(key) else key] = v
        if grad:
            x.sum().backward()
            return x, v.grad
        return (x,)
    for a, b in zip(run(R), run(torch)):
        _same(a, b)


@pytest.mark.parametrize("piece", [1, -1])
def test_unbind_0d_piece_shares_memory(piece):
    # fuzz seeds 6427 and 7773: x.unbind(-1)[i] of a 1-D tensor was a copy
    def run(m):
        x = m.tensor([-1.5, -0.75, 1.5, 2.0])
        p = x.unbind(-1)[piece]
        p.unsqueeze(0)[...] = -3.0
        y = m.tensor([1.0, 2.0, 3.0, 4.0], dtype=m.float64)
        q = y.unbind(-1)[2]
        y[2:4] = 3.5
        return x, p, q
    for a, b in zip(run(R), run(torch)):
        _same(a, b)


def test_expand_error_names_the_rightmost_mismatch():
    _same_error(lambda m: m.ones(2, 3).expand(3, 4))
    _same_error(lambda m: m.ones(2, 3, dtype=m.float64).expand(3))
    _same_error(lambda m: m.ones(2).expand(-1, 2))


# ----------------------------------------------------------------------------------
# broadcasting errors of in-place ops and lerp


def _t(*shape, rg=False):
    return lambda m: m.ones(*shape, requires_grad=rg)


_BROADCAST_ERRORS = [
    ("sub_ under no_grad", lambda m: m.ones(2).sub_(m.ones(4))),
    ("add_ under no_grad, alpha", lambda m: m.ones(4, 4).add_(m.ones(2, 2), alpha=2)),
    ("mul_ 3-d", lambda m: m.ones(4, 3, 5).mul_(m.ones(2, 1, 3))),
    ("mul_ int", lambda m: m.ones(2, dtype=m.int64).mul_(m.ones(4))),
    ("add_ other requires grad", lambda m: m.ones(2).add_(m.ones(3, requires_grad=True))),
    ("add_ result larger than self", lambda m: m.ones(2).add_(m.ones(3, 2))),
    ("lerp_ under no_grad", lambda m: m.ones(2).lerp_(m.ones(4), 0.5)),
    ("lerp_ tensor weight", lambda m: m.ones(2).lerp_(m.ones(2), m.ones(4))),
    ("lerp_ result larger than self", lambda m: m.ones(2).lerp_(m.ones(3, 2), 0.5)),
    ("lerp", lambda m: m.lerp(m.ones(5, 3), m.ones(3, 1), 0.3)),
    ("lerp, three tensors", lambda m: m.lerp(m.ones(2, 1), m.ones(3), m.ones(4))),
    ("lerp, weight", lambda m: m.lerp(m.ones(2), m.ones(2), m.ones(4))),
    ("addcmul_", lambda m: m.ones(2).addcmul_(m.ones(3), m.ones(3))),
    # the leaf check before the shape check
    ("leaf add_", lambda m: m.ones(2, requires_grad=True).add_(m.ones(3))),
    ("leaf lerp_", lambda m: m.ones(4, 5, requires_grad=True).lerp_(m.ones(2, 3), 0.5)),
    ("view of a leaf lerp_",
     lambda m: m.ones(5, 2, requires_grad=True)[1:].lerp_(m.ones(3, 0), 0.5)),
]


@pytest.mark.parametrize("name,fn", _BROADCAST_ERRORS, ids=[c[0] for c in _BROADCAST_ERRORS])
def test_broadcast_errors(name, fn):
    _same_error(fn)
