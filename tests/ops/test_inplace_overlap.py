"""In-place ops and memory overlap, and in-place ops on views of leaves, against PyTorch.

The fuzzer classes "in-place overlap check", "a view of a leaf Variable that requires grad
is being used in an in-place operation" and "is_leaf/requires_grad of value at
requires_grad_": which writes PyTorch refuses (an expanded output; an input partially
overlapping the output), what it computes for the writes it allows into memory whose
elements are shared (Note [Memory overlap in in-place ops] in ops/overlap.py), the
gradients of such writes (Note [In-place ops on overlapping views] in _functions/inplace.py),
and when a view counts as a view of a leaf. Every scenario runs with ``m = torch`` and
``m = retrograd`` (``same``/``same_error`` in _autograd_compare.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import fuzzgen
import retrograd
from _autograd_compare import same, same_error
from retrograd.ops import overlap


def _run(f):
    """``f(m)`` with both modules: the same exception (type, torch's message first) or the
    same results."""
    try:
        f(torch)
    except Exception:
        same_error(f)
        return
    same(f, rtol=1e-5, atol=1e-6)


# views of arange(1, 10) whose memory NumPy holds read-only in retrograd
VIEWS = {
    "expand": lambda b: b[:3].expand(2, 3),  # stride 0: refused by checking ops
    "expand_0d": lambda b: b[0].expand(3),
    "expand_empty": lambda b: b[:0].expand(2, 0),  # empty: never overlapping
    "expand_row": lambda b: b[:3].expand(2, 3)[0],  # a row of it: distinct elements
    "expand_col": lambda b: b[:3].expand(2, 3)[:, 0],
    "expand_diag": lambda b: b[:3].expand(3, 3).diagonal(),
    "expand_t": lambda b: b[:3].expand(2, 3).t(),
    "as_strided_overlap": lambda b: b.as_strided((2, 2), (1, 1)),  # "too hard": allowed
    "as_strided_disjoint": lambda b: b.as_strided((2, 2), (1, 2)),
    "as_strided_0": lambda b: b.as_strided((2, 2), (0, 1)),
    "unfold_overlap": lambda b: b.unfold(0, 3, 1),
    "unfold_disjoint": lambda b: b.unfold(0, 3, 3),
}

OPS = {
    "exp_": lambda v: v.exp_(), "neg_": lambda v: v.neg_(), "add_1": lambda v: v.add_(1),
    "mul_2": lambda v: v.mul_(2), "sqrt_": lambda v: v.sqrt_(), "relu_": lambda v: v.relu_(),
    "clamp_": lambda v: v.clamp_(2, 5), "pow_2": lambda v: v.pow_(2),
    "square_": lambda v: v.square_(), "fill_": lambda v: v.fill_(7),
    "zero_": lambda v: v.zero_(), "fill_tensor": lambda v: v.fill_(torch_or_rg(v).tensor(7.)),
    "masked_fill_": lambda v: v.masked_fill_(v > 2, 0.5),
    "add_self": lambda v: v.add_(v), "mul_clone": lambda v: v.mul_(v.clone()),
    "copy_clone": lambda v: v.copy_(v.clone() + 1), "copy_self": lambda v: v.copy_(v),
    "lerp_": lambda v: v.lerp_(v * 2, 0.5),
    "set_all_scalar": lambda v: v.__setitem__(Ellipsis, 1.),
    "set_all_self": lambda v: v.__setitem__(Ellipsis, v),
    "set_all_tensor": lambda v: v.__setitem__(Ellipsis, v.clone() + 1),
    "set_first": lambda v: v.__setitem__(0, 1.) if v.ndim and v.shape[0] else None,
    "set_mask": lambda v: v.__setitem__(v > 2, 1.),
    "set_index": lambda v: v.__setitem__(torch_or_rg(v).tensor([0]), 1.)
    if v.ndim and v.shape[0] else None,
    "set_index_tensor": lambda v: v.__setitem__(torch_or_rg(v).tensor([0, 0]),
                                                torch_or_rg(v).tensor(5.))
    if v.ndim and v.shape[0] else None,
    "uniform_": lambda v: v.uniform_(),
}


def torch_or_rg(t):
    return torch if isinstance(t, torch.Tensor) else retrograd


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_writes_into_read_only_views(view, op):
    """PyTorch refuses a checking op's write into an expanded tensor only; fill_, zero_,
    masked_fill_ and advanced-index writes go through; elements of an overlapping view
    are updated once per element that holds them, in TensorIterator's order."""
    if op == "uniform_" and "overlap" in view:
        pytest.skip("random values")

    def f(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's deprecation of writes into expanded
            b = m.arange(1., 10.)
            OPS[op](VIEWS[view](b))
        return b if op != "uniform_" else None
    _run(f)


# writes whose input shares memory with the written tensor (x = arange(1, 7))
PARTIAL = {
    "slice_into_shifted": lambda m, x: x[1:].add_(x[:-1]),  # partial: refused
    "reshaped_full": lambda m, x: x.view(2, 3).add_(x.view(2, 3)),  # full: allowed
    "leading_1": lambda m, x: x.view(1, 6).add_(x),  # same bytes, other strides: refused
    "transposed": lambda m, x: x.view(2, 3).t().add_(x.view(3, 2)),
    "strided_input": lambda m, x: x[:3].add_(x[::2]),  # not dense: "too hard", allowed
    "strided_output": lambda m, x: x[::2].add_(x[:3]),  # ... element by element
    "strided_mul": lambda m, x: x[::2].mul_(x[1:4]),
    "strided_sub": lambda m, x: x[1::2].sub_(x[:3]),
    "copy_shifted": lambda m, x: x[1:4].copy_(x[:3]),
    "set_shifted": lambda m, x: x.__setitem__(slice(1, 4), x[:3]),
    "set_strided": lambda m, x: x.__setitem__(slice(None, None, 2), x[:3]),
    "set_from_strided": lambda m, x: x.__setitem__(slice(None, 3), x[::2]),
    "set_broadcast_0d": lambda m, x: x.__setitem__(slice(1, None), x[0]),  # expanded: allowed
    "set_broadcast_row": lambda m, x: x.view(2, 3).__setitem__(slice(1, None), x.view(2, 3)[0]),
    "set_row_1": lambda m, x: x.view(2, 3).__setitem__(slice(1, None), x.view(2, 3)[:1]),
    "index_put_same": lambda m, x: x.__setitem__(m.tensor([0, 1]), x[:2]),  # refused, even
    "index_put_other": lambda m, x: x.__setitem__(m.tensor([0, 1]), x[3:5]),  # disjoint
    "index_put_0d": lambda m, x: x.__setitem__(m.tensor([0, 1]), x[5]),
    "mask_0d": lambda m, x: x.__setitem__(x > 2, x[0]),  # masked_fill_: value unchecked
    "mask_tensor": lambda m, x: x.__setitem__(x > 2, x[2:]),
    "clamp_min_0d": lambda m, x: x.clamp_(min=x[0]),
    "clamp_min_shifted": lambda m, x: x[:3].clamp_(min=x[1:4]),
    "lerp_end": lambda m, x: x[:3].lerp_(x[1:4], .5),
    "pow_shifted": lambda m, x: x[:3].pow_(x[1:4]),
    "mul_0d_inside": lambda m, x: x[:3].mul_(x[0]),
    "mul_0d_outside": lambda m, x: x[1:3].mul_(x[0]),
    "mul_0d_same": lambda m, x: x[0].mul_(x[0]),
    "mul_detached": lambda m, x: x.mul_(x.detach()),
    "masked_fill_value": lambda m, x: x[:3].masked_fill_(x[:3] > 1, x[0]),
    "fill_own_element": lambda m, x: x[1:].fill_(x[1]),
    "unfold_add_unfold": lambda m, x: x.unfold(0, 3, 1).add_(x.unfold(0, 3, 1)),
    "unfold_mul_slice": lambda m, x: x.unfold(0, 3, 1).mul_(x[:3]),
    "as_strided_copy_t": lambda m, x: x.as_strided((2, 2), (1, 1)).copy_(
        m.tensor([[10., 20.], [30., 40.]]).t()),  # the last write in TensorIterator's order
    "as_strided_add": lambda m, x: x.as_strided((2, 3), (1, 2)).add_(
        m.tensor([[10., 20., 30.], [40., 50., 60.]])),
    "as_strided_pow": lambda m, x: x.as_strided((3, 2), (1, 2)).pow_(
        m.tensor([[1., 2.], [3., 1.], [2., .5]])),
    "set_t_from_view": lambda m, x: x.view(2, 3).t().__setitem__(Ellipsis, x.view(3, 2)),
    "expand_set_same": lambda m, x: x[:3].expand(2, 3).__setitem__(slice(1, None), x[:3]),
    "expand_copy_same": lambda m, x: x[:3].expand(2, 3).copy_(x[:3]),  # refused: copy_
    "expand_index_put": lambda m, x: x[:2].expand(2, 2).index_put_(
        (m.tensor([0, 1]),), m.tensor(7.)),
}


def _run_write(write, stop: float) -> None:
    """Run ``write(m, x)`` on x = arange(1, stop) in both libraries; compare x after."""
    def f(m):
        x = m.arange(1., stop)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            write(m, x)
        return x
    _run(f)


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_writes_overlapping_an_input(case):
    _run_write(PARTIAL[case], 7.)


# writes other than elementwise in-place ops (x = arange(1, 10))
OTHER_WRITES = {
    "scatter_expanded": lambda m, x: x[:3].expand(2, 3).scatter_(
        1, m.tensor([[0], [1]]), m.ones(2, 1)),  # refused
    "scatter_overlapping": lambda m, x: x.unfold(0, 3, 1).scatter_(
        1, m.tensor([[0]] * 7), m.ones(7, 1)),  # only the scattered elements are written
    "scatter_src_disjoint": lambda m, x: x[:3].scatter_(0, m.tensor([0, 1]), x[3:5]),
    "scatter_src_overlapping": lambda m, x: x[:3].scatter_(0, m.tensor([0, 1]), x[:2]),
    "index_add_expanded": lambda m, x: x[:3].expand(2, 3).index_add_(
        0, m.tensor([0]), m.ones(1, 3)),
    "index_add_src": lambda m, x: x[:3].index_add_(0, m.tensor([0, 1]), x[3:5]),
    "index_copy_src": lambda m, x: x[:3].index_copy_(0, m.tensor([0, 1]), x[3:5]),
    "index_copy_overlapping": lambda m, x: x.unfold(0, 3, 1).index_copy_(
        0, m.tensor([0]), m.ones(1, 3)),
    "out_expanded": lambda m, x: m.add(m.ones(2, 3), 1, out=x[:3].expand(2, 3)),
    "out_partial": lambda m, x: m.add(x[:3], 1, out=x[1:4]),
    "out_overlapping": lambda m, x: m.exp(m.arange(21.).reshape(7, 3) / 10,
                                          out=x.unfold(0, 3, 1)),
    "addcmul_shifted": lambda m, x: x[:3].addcmul_(x[1:4], x[1:4]),
    "cumsum_expanded": lambda m, x: x[:3].expand(2, 3).cumsum_(1),
    "tril_expanded": lambda m, x: x[:3].expand(3, 3).tril_(),  # unchecked: zeros only
    "triu_overlapping": lambda m, x: x.as_strided((3, 3), (1, 1)).triu_(1),
    "clamp_tensor_min_expanded": lambda m, x: x[:3].expand(2, 3).clamp_(min=m.zeros(2, 3)),
    "masked_fill_own_element": lambda m, x: x[:3].masked_fill_(
        m.tensor([True, False, True]), x[1]),
}


@pytest.mark.parametrize("case", sorted(OTHER_WRITES))
def test_other_writes_into_overlapping_memory(case):
    _run_write(OTHER_WRITES[case], 10.)


def test_x_setitem_itself_is_a_no_op_even_when_expanded():
    def f(m):
        x = m.tensor([[1.], [2.], [3.]])
        v = x.expand(3, 3)
        v[...] = x  # the expanded value is v itself: nothing is checked
        v[...] = v
        w = m.arange(3.).expand(3, 3)
        w[1:] = m.arange(3.)[None]
        return x, w
    _run(f)
    same_error(lambda m: m.tensor([[1.], [2.]]).expand(2, 2).copy_(m.tensor([[1.], [2.]])))


def test_size_one_dims_compare_their_strides():
    # PyTorch calls same-bytes tensors with different strides a partial overlap, size-1
    # dims included: ``x[None]``'s new dim has the next dim's size times its stride
    def f(m, key):
        v = m.pow(m.tensor([[0.2, 0.2], [1.8, 1.6]]), 2.).diagonal(-1)
        w = v[None] if key == "none" else v[::2] if key == "step" else v
        w[...] = v
        return v
    for key in ("none", "step"):
        _run(lambda m, key=key: f(m, key))
    same(lambda m: [m.zeros(2, 3)[k].stride() for k in
                    [(None,), (None, None), (Ellipsis, None), (None, slice(1, None)),
                     (0, None)]])


def test_expanded_gradients_keep_their_layout():
    # autograd.grad hands out the expanded gradient of sum() through x[...] and x[None]
    # (AliasBackward0, UnsqueezeBackward0), so an in-place op on it is refused as in torch
    def f(m, k):
        x = m.ones(2, 3, requires_grad=True)
        y = x[...] if k == 0 else x[None] if k == 1 else x[:, None]
        g, = m.autograd.grad(y.sum(), x)
        return g.stride(), g.square_()
    for k in range(3):
        same_error(lambda m, k=k: f(m, k))


def test_retained_gradient_is_a_contiguous_clone():
    def f(m, create_graph):
        x = m.ones(2, 3, requires_grad=True)
        y = x.unfold(1, 2, 1)
        y.retain_grad()
        m.autograd.grad(y.sum(), x, create_graph=create_graph)
        return y.grad.stride(), y.grad.mul_(2)
    for cg in (False, True):
        same(lambda m, cg=cg: f(m, cg))


def test_gradients_through_writes_into_overlapping_views():
    # CopySlices overwrites the view's part of the base's gradient: one value per memory
    # location (the last write), not the sum our view rules would give
    def f(m, op):
        x = m.tensor([[-0.446, -0.135, -1.572]], dtype=m.float64, requires_grad=True)
        b = x.asin()
        v = b.as_strided((2, 2), (1, 1)) if op != "unfold" else b.reshape(-1).unfold(0, 2, 1)
        if op == "sigmoid":
            v.sigmoid_()
        elif op == "mul":
            v.mul_(m.tensor([[2., 3.], [5., 7.]], dtype=m.float64))
        elif op == "unfold":
            v.exp_()
        else:
            v.square_()
        g, = m.autograd.grad((b * b).sum(), x, create_graph=True)
        return b, g  # (not second order: PyTorch differentiates the op's saved result with
        # its view rule, a sum; see the Note)
    for op in ("sigmoid", "mul", "unfold", "square"):
        same(lambda m, op=op: f(m, op), rtol=1e-6, atol=1e-9)


def test_gradient_of_a_write_into_an_expanded_view_is_refused():
    # PyTorch copies the view's gradient into an expanded region of the base's gradient
    def f(m, how):
        x = m.ones(3, requires_grad=True)
        b = x * 1
        v = b[0].expand(3)
        if how == "fill":
            v.fill_(2.)
        else:
            v[...] = v  # a no-op write, recorded all the same
        b.sum().backward()
    for how in ("fill", "self"):
        same_error(lambda m, how=how: f(m, how))

    def g(m):  # the same memory written through a sibling: fine
        x = m.tensor(1.0, requires_grad=True)
        b = m.where(x > 0, x, 0.0)
        b.expand(2)[::2] = b
        b.sum().backward()
        return x.grad
    same(g)


def test_index_put_and_masked_fill_write_only_their_elements():
    def f(m, how):
        x = m.tensor([[[-0.812, 0.197, -0.829]], [[0.5, 0.25, 1.0]]], requires_grad=True)
        b = x * 2
        v = b.as_strided((5, 2), (1, 1))
        if how == "index":
            v[m.tensor([1, 4])] = -1.5
        elif how == "mask":
            v.masked_fill_(v > 0.3, -1.5)
        else:
            v.index_put_((m.tensor([0, 3]),), m.tensor([9., 8.]), accumulate=True)
        g, = m.autograd.grad((b * b).sum(), x)
        return b, g
    for how in ("index", "mask", "accumulate"):
        same(lambda m, how=how: f(m, how))


def test_expanded_index_put_and_masked_fill_warn_as_pytorch():
    for m in (torch, retrograd):
        for write in (lambda v, m=m: v.__setitem__(m.tensor([0]), 1.),
                      lambda v: v.masked_fill_(v > 0, 1.)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                write(m.zeros(3).expand(2, 3))
            assert any("on expanded tensors is deprecated" in str(x.message) for x in w), m


# -- views of leaves ---------------------------------------------------------------

LEAF_VIEWS = {
    # a view made before the view itself was given requires_grad: its base is a leaf
    "view_then_requires_grad": lambda m: m.zeros(3, 3).view(-1).requires_grad_().t(),
    "alias_0d": lambda m: m.tensor(-1.0)[...].requires_grad_(),
    "t_1d": lambda m: m.tensor([2.0, -0.2]).t().requires_grad_(),
    "unsqueeze_of_leaf_view": lambda m: m.tensor([[0.5, -0.7]])[None].requires_grad_(),
    # the base stopped requiring grad: the view still does (it has a grad_fn)
    "base_stopped": lambda m: [v for x in [m.ones(2, 1, 3, requires_grad=True)]
                               for v in [x.unsqueeze(-1)] if x.requires_grad_(False) is x][0],
}

LEAF_OPS = {
    "setitem_all": lambda m, v: v.__setitem__(Ellipsis, 1.),
    "tanh_": lambda m, v: v.tanh_(), "fill_": lambda m, v: v.fill_(2.),
    "div_": lambda m, v: v.div_(m.tensor(3.)), "zero_": lambda m, v: v.zero_(),
    "copy_": lambda m, v: v.copy_(m.zeros(v.shape, dtype=m.int64)),
    "masked_fill_": lambda m, v: v.masked_fill_(v > 0, -1.5),
    "lerp_bad_shape": lambda m, v: v.lerp_(m.ones(7, 5), 0.5),  # the leaf is reported first
    "setitem_index_bad_shape": lambda m, v: v.__setitem__(
        (m.tensor([0]),) if v.ndim else (v > 0,), m.ones(7, 5)),
}


@pytest.mark.parametrize("op", sorted(LEAF_OPS))
@pytest.mark.parametrize("view", sorted(LEAF_VIEWS))
def test_in_place_on_a_view_of_a_leaf(view, op):
    same_error(lambda m: LEAF_OPS[op](m, LEAF_VIEWS[view](m)))


@pytest.mark.parametrize("key", [
    "...", ":", "0:10", "-3:", ":3", ":2", "::1", "(slice(None), slice(0, 2))", "None", "0",
    "(Ellipsis, 0)", "True", "(slice(None), None)", "[0]", "x > 0", "(slice(None), [0])",
    "(None, [0])", "(0, [0])"])
def test_setitem_on_a_leaf_names_leaf_or_view(key):
    # the written tensor is the leaf itself when the slicing part of the key selects all
    # of it (PyTorch skips such slices), otherwise a view of the leaf
    def f(m):
        x = m.ones(3, 2, requires_grad=True)
        k = eval(key.replace("[0]", "m.tensor([0])"), {"m": m, "x": x})
        k = k if key not in (":", "0:10", "-3:", ":3", ":2", "::1") else \
            eval(f"np.s_[{key}]", {"np": np})
        x[k] = 1.
    same_error(f)


@pytest.mark.parametrize("shape,key,vshape", [
    ((2,), "1:1", (2,)), ((3,), "-3", (3,)), ((4, 4, 4), "-2", (4, 4)),
    ((3, 4, 2), "2:3", (3, 2, 4)), ((3,), "::2", (3,)), ((2, 5), ":, 3:3", (4, 2)),
    ((2, 3, 4), ":, :, 1:1", (4, 5, 2)), ((3, 2), "0:2", (7,))])
def test_setitem_on_a_leaf_reports_a_bad_value_shape_first(shape, key, vshape):
    # basic keys: PyTorch expands the value (without its leading 1s) before the leaf check
    def f(m):
        x = m.zeros(shape, requires_grad=True)
        exec(f"x[{key}] = m.ones({vshape})", {"x": x, "m": m})
    same_error(f)


def test_index_put_takes_the_dtype_of_the_tensor():
    def f(m, key, value):
        x = m.zeros(2, 3, dtype=m.float64)
        x[eval(key, {"m": m, "x": x})] = value(m)
        return x
    same_error(lambda m: f(m, "m.tensor([0])", lambda m: m.ones(3)))
    same_error(lambda m: f(m, "(slice(None), m.tensor([1]))", lambda m: m.ones(2, 1)))
    same_error(lambda m: f(m, "x > 0", lambda m: m.ones(0)))
    same(lambda m: f(m, "x == 0", lambda m: m.tensor(2.)))  # masked_fill_: converted
    same(lambda m: f(m, "m.tensor([1])", lambda m: m.ones(3, dtype=m.float64)))
    same(lambda m: f(m, "0", lambda m: m.ones(3)))  # a basic key: copy_ converts


def test_views_made_before_requires_grad_are_rederived():
    def f(m):
        x = m.tensor([1.836, 0.441, 0.508]).double()
        v = x.view(-1)
        w = x.as_strided((3,), (1,), 0).view_as(x)
        w[m.tensor([2])] = 2.0
        assert v.grad_fn is None  # read while nothing requires grad: stays stale
        x.requires_grad_()
        return v, v.is_leaf, v.grad_fn is not None
    same(f)

    def g(m):  # a multi-output view modified, then its base requires grad: refused
        x = m.add(m.ones(2, 3, dtype=m.float64), 1)
        v = x.split(3, -1)[0]
        v.copy_(m.zeros(2, 3))
        x.requires_grad_()
        assert v.requires_grad  # (read without re-deriving the grad_fn)
        return v.grad_fn
    same_error(g)

    def h(m):  # the view of a base that stopped requiring grad keeps a grad_fn
        x = m.tensor([[0.0, -1.6], [1.7, -1.5]], requires_grad=True)
        v = x.as_strided((3, 2), (1, 1))
        w = x[...]
        x.requires_grad_(False)
        with m.no_grad():
            v[m.tensor([0, 2])] = 0.
        return v.requires_grad, v.is_leaf, w.requires_grad, w.is_leaf
    same(h)


def test_rederived_views_give_fresh_gradients():
    # a view re-derived after an in-place op is one AsStridedBackward0 from its base: its
    # gradient is a new tensor (a plain alias passes the very same gradient on)
    def f(m, modify):
        x = m.tensor([[-0.5, 0.9, 1.1], [1.6, -1.6, 1.4]], requires_grad=True)
        b = x.max(1)[0]
        v = b[...]
        if modify:
            with m.no_grad():
                b.masked_fill_(b > 0, 0.0)
        gb, gv = m.autograd.grad(v.mean(), [b, v], create_graph=True)
        same_object = gb is gv
        gb[...] = 2.0
        return same_object, gb, gv, gv.stride()
    same(lambda m: f(m, True))
    same(lambda m: f(m, False))

    def g(m):
        x = m.ones(3, requires_grad=True)
        b = x * 1
        v = b.movedim(-1, 0)
        with m.no_grad():
            v.clamp_(min=x)
        gb, = m.autograd.grad(v.sum(), [b])
        w = gb.view(3, 1)
        w[...] = -1.5  # fresh: writable
        return gb
    same(g)


def test_setitem_of_a_zero_dim_value_is_a_fill():
    def f(m):
        a = m.tensor(-1.951) * m.tensor(-0.799, dtype=m.float64, requires_grad=True)
        v = a.view(1)
        v[...] = a  # fill_: a value sharing memory is cloned, not compared
        return a, v
    same(f)
    same_error(lambda m: [v.copy_(a) for a in [m.tensor(2.)] for v in [a.view(1)]])


def test_expand_strides_and_errors():
    def f(m):
        out = []
        for src, shape in [((3,), (1, 3)), ((3,), (2, 1, 3)), ((1, 3), (1, 1, 3)),
                           ((2, 1), (1, 2, 4)), ((), (1, 1)), ((1,), (4, 1))]:
            out.append(m.zeros(src).expand(shape).stride())
        x = m.zeros(3, 2).t()[:1]
        return out, x.expand(1, 1, 3).stride(), x.t().expand(2, 3, 4).stride()
    same(f)
    same_error(lambda m: m.zeros(3, dtype=m.float64).expand(()))
    same_error(lambda m: m.zeros(4, 2).expand(2, 0))  # the last mismatching dim is named


def test_requires_grad_false_on_a_view_of_a_base_that_requires_grad():
    def f(m):
        x = m.tensor(1.893)
        v = x.unsqueeze(-1)
        x.requires_grad_()
        v.requires_grad_(False)  # no effect while the base requires grad
        return v.requires_grad, v.is_leaf
    same(f)


def test_no_gradient_for_a_leaf_that_stopped_requiring_grad():
    def f(m):
        a = m.tensor([[-0.478], [-0.085]], dtype=m.float64, requires_grad=True)
        b = m.tensor([[-0.774], [1.359]], dtype=m.float64, requires_grad=True)
        y = b / a * 2
        b.requires_grad_(False)
        y.sum().backward()
        return a.grad, b.grad
    same(f)


def test_grad_of_a_stale_multi_output_view_is_read_without_rederiving():
    def f(m):
        x = m.ones(2, 2, dtype=m.float64, requires_grad=True)
        v = x.reshape(-1).unbind(-1)[3]
        with m.no_grad():
            v.fill_(-2)
        return v.grad, x
    same(f)


# -- layouts that views depend on ----------------------------------------------------

def test_unbind_of_a_vector_gives_zero_dim_views():
    def f(m):
        x = m.tensor([-0.598, 1.415, 0.976])
        v = x.unbind(0)[1]
        v.neg_()  # writes through to x
        y = m.tensor([-0.598, 1.415, 0.976])
        y.add_(y.unbind(0)[1], alpha=2)  # ... and so overlaps it: refused
        return x
    same_error(f)
    same(lambda m: [x for x in [m.tensor([0.5, 2.0])] if x.unbind(0)[0].neg_() is not None])


def test_cumsum_and_softmax_results_are_contiguous():
    def f(m):
        x = m.zeros((2, 3, 2), requires_grad=True)
        v = m.erf(x.unfold(1, 2, 1)).cumsum(0)
        s = m.nn.functional.softmax(m.zeros(2, 3, 3, 3).unfold(1, 2, 2), dim=1)
        return (v.stride(), v.view(2, 2, -1), s.stride(), s.as_strided((6,), (2,)),
                m.zeros(4, 2, 3).permute(2, 0, 1).cumprod(1).stride(),
                m.log_softmax(m.zeros(4, 2, 3).permute(2, 0, 1), 1).stride())
    same(f)


def test_overlap_rules():
    a = np.arange(12.)
    assert overlap.internal(np.broadcast_to(a[:3], (2, 3)))
    assert not overlap.internal(np.broadcast_to(a[:0], (2, 0)))  # empty: contiguous
    assert overlap.dense(a.reshape(3, 4).T) and not overlap.dense(a[::2])
    assert overlap.status(a[:6], a[6:]) == overlap.NO
    assert overlap.status(a[:6], a[3:9]) == overlap.PARTIAL
    assert overlap.status(a.reshape(2, 6), a.reshape(2, 6)) == overlap.FULL
    assert overlap.status(a.reshape(3, 4).T, a.reshape(4, 3)) == overlap.PARTIAL
    assert overlap.status(a[::2], a[:6]) == overlap.TOO_HARD
    e = np.broadcast_to(a[:3], (2, 3))
    with pytest.raises(RuntimeError, match="more than one element"):
        overlap.check(e, ())
    overlap.check(e, (a,), "none")
    with pytest.warns(UserWarning, match="Use of index_fill_ on expanded tensors"):
        overlap.check(e, (a[:3],), "index_fill", "index_fill_")  # (warns, checks no input)
    # TensorIterator's order: by the output's strides, ties to the smaller dim, then inputs
    assert overlap.ti_order((2, 3), [(24, 8)]).tolist() == [0, 1, 2, 3, 4, 5]
    assert overlap.ti_order((2, 3), [(8, 16)]).tolist() == [0, 3, 1, 4, 2, 5]
    assert overlap.ti_order((2, 2), [(8, 8), (8, 16)]).tolist() == [0, 2, 1, 3]


# -- fuzz seeds of these classes, each with what its program does:
# tests/fuzz/data/overlap_seeds.txt (tests/fuzz/data/open_seeds.txt lists what is still open)

SEEDS = [seed for seed, _ in fuzzgen.read_seeds("overlap_seeds.txt")]


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_seed_agrees(seed):
    out = fuzzgen.check_seed(seed, do_shrink=False)
    assert out.diff is None, fuzzgen.render(*fuzzgen.shrink(out.program, out.diff))
