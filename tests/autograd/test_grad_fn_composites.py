"""Ops PyTorch records as one node of their own (or as a particular chain of view
nodes), checked against torch 2.13: the graph's structure (names, next_functions,
leaves), what the node saves (version-checked), values, gradients, double backward,
forward-mode tangents and in-place forms.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from test_grad_fn_structure import walk

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)
_X = _RNG.standard_normal((3, 4))
_M = _RNG.random((3, 4)) > 0.5
_ROW = np.array([[True, False, True, False]])


def _graph(fn):
    """(torch walk, retrograd walk, torch result, retrograd result, torch grads,
    retrograd grads) of ``fn(m, x)`` on one float64 leaf ``x``."""
    res = []
    for m in (torch, R):
        x = m.tensor(_X, dtype=m.float64, requires_grad=True)
        out = fn(m, x)
        outs = out if isinstance(out, tuple) else (out,)
        w = walk([o for o in outs], [x], m is torch)
        first = outs[0]
        (g,) = m.autograd.grad(first.sum(), x)
        res.append((w, first.detach().numpy(), g.numpy()))
    (tw, tv, tg), (rw, rv, rg) = res
    return tw, rw, tv, rv, tg, rg


_CASES = {
    "masked_fill_number": lambda m, x: x.masked_fill(m.tensor(_M), 0.5),
    "masked_fill_row_mask": lambda m, x: x.masked_fill(m.tensor(_ROW), -1),
    "masked_fill_wider_mask": lambda m, x: x[:1].masked_fill(m.tensor(_M), 2.0),
    "masked_fill_0d_value": lambda m, x: x.masked_fill(m.tensor(_M), m.tensor(3.0)),
    "masked_fill_inplace": lambda m, x: x.clone().masked_fill_(m.tensor(_M), 1.0),
    "masked_fill_inplace_0d": lambda m, x: x.clone().masked_fill_(m.tensor(_ROW),
                                                                   m.tensor(1.0)),
    "masked_select": lambda m, x: x.masked_select(m.tensor(_M)),
    "masked_select_row": lambda m, x: m.masked_select(x, m.tensor(_ROW)),
    "masked_select_wider_mask": lambda m, x: x[:1].masked_select(m.tensor(_M)),
    "round_decimals": lambda m, x: m.round(x * 100, decimals=1),
    "round_neg_decimals": lambda m, x: m.round(x * 1000, decimals=-2),
    "round_inplace": lambda m, x: (x * 10).round_(decimals=2),
    "kthvalue": lambda m, x: m.kthvalue(x, 2),
    "kthvalue_keepdim": lambda m, x: x.kthvalue(3, 0, keepdim=True),
    "kthvalue_0d": lambda m, x: m.kthvalue(x[1, 2], 1),
    "kthvalue_1d": lambda m, x: m.kthvalue(x[1], 3),
    "median_1d": lambda m, x: x[:, 2].median(0),
    "median_dim": lambda m, x: x.median(1),
    "median_dim_keepdim": lambda m, x: m.median(x, 0, True),
    "median_all": lambda m, x: x.median(),
    "roll_flat": lambda m, x: x.roll(5),
    "roll_flat_tuple": lambda m, x: m.roll(x, (-3,)),
    "roll_dims": lambda m, x: x.roll((1, 2), (0, 1)),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_graph_values_and_grads_match_torch(name):
    tw, rw, tv, rv, tg, rg = _graph(_CASES[name])
    assert rw == tw
    assert rv.shape == tv.shape
    np.testing.assert_allclose(rv, tv, rtol=0, atol=0)
    np.testing.assert_allclose(rg, tg, rtol=1e-15, atol=0)


def test_node_names():
    x = R.ones(3, 4, requires_grad=True)
    m = R.tensor(_M)
    assert x.masked_fill(m, 0).grad_fn.name() == "MaskedFillBackward0"
    assert x.masked_fill(m, R.tensor(0.0)).grad_fn.name() == "MaskedFillBackward1"
    assert x.masked_select(m).grad_fn.name() == "MaskedSelectBackward0"
    assert x.round(decimals=2).grad_fn.name() == "RoundBackward1"
    assert x.kthvalue(2).values.grad_fn.name() == "KthvalueBackward0"
    assert x.median(0).values.grad_fn.name() == "MedianBackward1"
    assert x.median().grad_fn.name() == "MedianBackward0"
    assert x.roll(1).grad_fn.name() == "RollBackward0"


@pytest.mark.parametrize("value_grad,self_grad", [(True, True), (True, False), (False, True)])
def test_masked_fill_tensor_value_edges_and_grads(value_grad, self_grad):
    res = []
    for m in (torch, R):
        x = m.tensor(_X, requires_grad=self_grad)
        v = m.tensor(2.5, dtype=m.float64, requires_grad=value_grad)
        y = x.masked_fill(m.tensor(_ROW), v)
        w = walk([y], [x, v], m is torch)
        leaves = [t for t in (x, v) if t.requires_grad]
        gs = m.autograd.grad((y * y).sum(), leaves)
        res.append((w, [g.numpy() for g in gs]))
    (tw, tg), (rw, rg) = res
    assert rw == tw
    for a, b in zip(rg, tg):
        np.testing.assert_allclose(a, b, rtol=1e-15)


@pytest.mark.parametrize("name", ["masked_fill", "masked_select", "kthvalue", "median"])
def test_index_or_mask_modified_in_place_is_refused(name):
    """PyTorch saves the mask (masked_fill, masked_select) or the indices (kthvalue,
    median(dim)): writing into it before backward raises its version error."""
    msgs = []
    for m in (torch, R):
        x = m.tensor(_X, requires_grad=True)
        mask = m.tensor(_M)
        if name == "masked_fill":
            y = x.masked_fill(mask, 0.0)
            mask.logical_not_()
        elif name == "masked_select":
            y = x.masked_select(mask)
            mask.logical_not_()
        else:
            y, idx = (x.kthvalue(2, 1) if name == "kthvalue" else x.median(1))
            idx.add_(0)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert "modified by an inplace operation" in msgs[1]
    assert msgs[1].startswith(msgs[0].split(" is at version")[0])


@pytest.mark.parametrize("name", ["masked_fill_number", "masked_fill_0d_value", "masked_select",
                                  "round_decimals", "kthvalue", "median_dim_keepdim",
                                  "roll_flat"])
def test_double_backward_and_forward_ad(name):
    fn = _CASES[name]
    res = []
    for m in (torch, R):
        x = m.tensor(_X, requires_grad=True)
        y = fn(m, x)
        y = y[0] if isinstance(y, tuple) else y
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        # round's gradient is a constant zero: nothing to differentiate again in torch
        gg = m.autograd.grad((g * g).sum(), x)[0] if g.requires_grad else m.zeros(0)
        fw = m.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.tensor(_X), m.tensor(_X * 0.5 + 1))
            t = fn(m, d)
            t = fw.unpack_dual(t[0] if isinstance(t, tuple) else t).tangent
        res.append((g.detach().numpy(), gg.numpy(), t.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_saved_tensor_hooks_see_the_mask():
    counts = []
    for m in (torch, R):
        packed: list = []

        def pack(t, packed=packed):
            packed.append(t.dtype)
            return t

        x = m.tensor(_X, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.masked_select(m.tensor(_M))
        y.sum().backward()
        counts.append(sorted(str(d) for d in packed))
    assert counts[1] == counts[0]


@pytest.mark.parametrize("args", [((1, 2),), (1, (0, 1)), ((1, 2), 0), ((),)])
def test_roll_argument_errors(args):
    errs = []
    for m in (torch, R):
        with pytest.raises(RuntimeError) as e:
            m.roll(m.ones(3, 4), *args)
        errs.append(str(e.value))
    assert errs[1].startswith(errs[0])


def test_round_decimals_of_integers_raises_as_torch():
    for m in (torch, R):
        with pytest.raises(NotImplementedError, match='"round_cpu" not implemented for'):
            m.round(m.tensor([15, 25]), decimals=1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("decimals", [-3, -1, 1, 2, 5])
def test_round_decimals_values_bitexact(dtype, decimals):
    data = np.random.default_rng(decimals + 10).standard_normal(200) * 10.0 ** (3 - decimals)
    t = torch.round(torch.tensor(data, dtype=getattr(torch, dtype)), decimals=decimals)
    r = R.round(R.tensor(data, dtype=getattr(R, dtype)), decimals=decimals)
    np.testing.assert_array_equal(r.numpy(), t.numpy())


# ----------------------------------------------------------------------------------
# views: one node per view PyTorch makes (Note [Basic indexing as view steps])

def _y(m):
    return m.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)


_VIEW_CASES = {
    "squeeze_all": lambda m, y: y[:, :1].squeeze(),
    "squeeze_dim": lambda m, y: y[:1].squeeze(0),
    "squeeze_dims": lambda m, y: y[:1, :, :1].squeeze((0, 2)),
    "squeeze_list": lambda m, y: m.squeeze(y[:1], [0]),
    "squeeze_0d": lambda m, y: y[0, 0, 0].squeeze(),
    "squeeze_0d_dims": lambda m, y: y[0, 0, 0].squeeze((0,)),
    "transpose_0d": lambda m, y: y[1, 2, 3].transpose(0, -1),
    "transpose_same": lambda m, y: y.transpose(1, -2),
    "int": lambda m, y: y[1],
    "int_int": lambda m, y: y[1, 2],
    "slice_alone": lambda m, y: y[:],
    "slice_past_end": lambda m, y: y[0:100],
    "full_slices": lambda m, y: y[:, 0:3, ::1],
    "ellipsis": lambda m, y: y[...],
    "empty_tuple": lambda m, y: y[()],
    "slice_slice": lambda m, y: y[0:1, ::2],
    "slice_int": lambda m, y: y[:, 1],
    "ellipsis_int": lambda m, y: y[..., 1],
    "none_int": lambda m, y: y[None, 0],
    "int_none_ellipsis_none": lambda m, y: y[None, 1, ..., None],
    "negative_start": lambda m, y: y[:, -3:],
    "np_int": lambda m, y: y[np.int64(1), 1:],
    "zero_d_index": lambda m, y: y[m.tensor(1)],
    "int_slice_then_array": lambda m, y: y[0, :, m.tensor([0, 1])],
    "array_slice": lambda m, y: y[:, m.tensor([1, 0]), 1:3],
    "none_array": lambda m, y: y[None, m.tensor([1, 0])],
    "int_mask": lambda m, y: y[0, m.tensor([True, False, True])],
    "split_arrays": lambda m, y: y[m.tensor([1, 0]), :, m.tensor([3, 0])],
    "reshape_contiguous": lambda m, y: y.reshape(6, 4),
    "reshape_alias": lambda m, y: y.transpose(0, 2).reshape(4, 3, 1, 2),
    "reshape_copy": lambda m, y: y.transpose(0, 2).reshape(-1),
    "flatten_copy": lambda m, y: y.transpose(1, 2).flatten(1),
    "flatten_alias": lambda m, y: y[:, ::2].flatten(),
    "tensordot": lambda m, y: m.tensordot(y, y.permute(2, 1, 0), dims=([1, 2], [1, 0])),
    "outer": lambda m, y: m.outer(y[0, 0], y[1, :, 0]),
}


def _view_pair(fn):
    res = []
    for m in (torch, R):
        y = _y(m)
        out = fn(m, y)
        w = walk([out], [y], m is torch)
        (g,) = m.autograd.grad((out * out).sum(), y)
        res.append((w, out.detach().numpy(), g.numpy(), tuple(out.shape), out.stride()))
    return res


@pytest.mark.parametrize("name", list(_VIEW_CASES))
def test_view_graphs_match_torch(name):
    (tw, tv, tg, ts, tst), (rw, rv, rg, rs, rst) = _view_pair(_VIEW_CASES[name])
    assert rw == tw
    assert rs == ts and rst == tst
    np.testing.assert_array_equal(rv, tv)
    np.testing.assert_array_equal(rg, tg)


@pytest.mark.parametrize("key", ["y[1][0] ", "y[0, :, 1:]", "y[..., 1:3]", "y[None, 1]"])
def test_views_by_key_rederive_after_inplace_on_base(key):
    """A view made by several steps is re-derived from its base after an in-place op on
    the base (Note [View grad_fn regeneration]) with PyTorch's graph and gradients."""
    res = []
    for m in (torch, R):
        leaf = _y(m)
        base = leaf * 1
        v = eval(key, {"y": base})
        base.mul_(2)
        w = walk([v], [leaf], m is torch)
        (g,) = m.autograd.grad((v * v).sum(), leaf)
        res.append((w, g.numpy()))
    assert res[1][0] == res[0][0]
    np.testing.assert_array_equal(res[1][1], res[0][1])


@pytest.mark.parametrize("key", ["y[2]", "y[:, 3]", "y[1, -4]", "y[0, 0, 0, 0]", "y[0, 0, 0][0]",
                                 "y[0, 0, 0][:]", "y[..., 0, 0, 0, 0]"])
def test_indexing_errors_match_torch(key):
    msgs = []
    for m in (torch, R):
        with pytest.raises(IndexError) as e:
            eval(key, {"y": _y(m)})
        msgs.append(str(e.value))
    assert msgs[1].startswith(msgs[0])


@pytest.mark.parametrize("key,vshape", [((slice(0, 2), slice(1, 3)), (1, 2)), ((0,), (4,)),
                                        ((0,), (1, 4)), ((Ellipsis,), (4,)),
                                        ((slice(None),), (1, 1, 4)), ((0, slice(None)), (1,)),
                                        ((slice(None), 1), (3,)), ((slice(0, 2),), ())])
def test_setitem_value_is_viewed_and_expanded_as_torch(key, vshape):
    res = []
    for m in (torch, R):
        x = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        v = m.tensor(np.arange(1.0, 1.0 + np.prod(vshape)).reshape(vshape), requires_grad=True)
        y = x * 2
        y[key] = v
        w = walk([y], [x, v], m is torch)
        gx, gv = m.autograd.grad((y * y).sum(), (x, v))
        res.append((w, gx.numpy(), gv.numpy()))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[1][1:], res[0][1:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shapes", [((2, 2), (3,)), ((3,), ()), ((3,), (2, 2))])
def test_outer_needs_vectors(shapes):
    msgs = []
    for m in (torch, R):
        with pytest.raises(RuntimeError) as e:
            m.outer(m.ones(shapes[0]), m.ones(shapes[1]))
        msgs.append(str(e.value))
    assert msgs[1].startswith(msgs[0])
