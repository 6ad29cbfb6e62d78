"""The remaining ``torch``/``Tensor`` tensor ops of issue 16 against PyTorch 2.13: the
cases the op database does not reach (errors, warnings, what is and is not a view)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R
from _gradcheck_util import gradcheck


def _same_error(fn):
    """``fn(torch)`` and ``fn(retrograd)`` raise the same type, retrograd's message
    starting with torch's."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as re_:
        fn(R)
    assert str(re_.value).startswith(str(te.value).split("\n")[0]), (te.value, re_.value)


@pytest.mark.parametrize("fn", [
    lambda m: m.adjoint(m.ones(3)),
    lambda m: m.vander(m.ones(2, 2)),
    lambda m: m.vander(m.ones(2), N=-1),
    lambda m: m.nonzero_static(m.ones(2), size=-1),
    lambda m: m.unsafe_chunk(m.ones(2), 0),
    lambda m: m.fill(m.ones(2), m.ones(2)),
    lambda m: m.isreal(3),
    lambda m: m.unsafe_split(m.ones(4), [1, 3]),
    lambda m: m.frobenius_norm(m.ones(2, 2, 2), (0, 1, 2)),
    lambda m: m.nuclear_norm(m.ones(3)),
], ids=["adjoint-1d", "vander-2d", "vander-N", "nonzero_static-size", "unsafe_chunk-0",
        "fill-1d-value", "isreal-int", "unsafe_split-list", "frobenius-3dims", "nuclear-1d"])
def test_errors_match_torch(fn):
    _same_error(fn)


def test_concatenate_and_detach_forms():
    x = R.tensor([[1.0, 2.0]], requires_grad=True)
    assert R.concatenate([x, x], 1).grad_fn.name() == "CatBackward0"
    assert not hasattr(R.Tensor, "concatenate") and not hasattr(torch.Tensor, "concatenate")
    d = R.detach(x)
    assert not d.requires_grad and d._base is None
    d[0, 0] = 7.0  # shares memory, as x.detach()
    assert x[0, 0].item() == 7.0
    c = R.detach_copy(x)
    c[0, 0] = 1.0
    assert x[0, 0].item() == 7.0 and c.grad_fn is None


def test_fill_value_gradient_and_int_truncation():
    v = R.tensor(2.0, requires_grad=True)
    R.fill(R.zeros(2, 3), v).sum().backward()
    assert v.grad.item() == 6.0
    assert R.fill(R.zeros(2, dtype=R.int64), 2.7).tolist() == [2, 2]


def test_unsafe_split_pieces_are_not_views():
    # PyTorch: no view tracking, so an in-place op on a piece of a tensor that requires
    # grad is allowed, and the other pieces' grad_fn are not rewritten
    for m in (torch, R):
        x = m.arange(6.0).requires_grad_()
        y = x * 1
        a, b = m.unsafe_split(y, 3)
        assert not a._is_view() if m is torch else a._base is None
        a.mul_(2)
        (a.sum() + b.sum()).backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0, 1.0, 1.0, 1.0]


def test_vander_values_and_gradcheck():
    x = np.array([0.5, -1.5, 2.0])
    for n, inc in [(None, False), (4, True), (1, False)]:
        got = R.vander(R.tensor(x), N=n, increasing=inc).numpy()
        want = torch.vander(torch.tensor(x), N=n, increasing=inc).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-15)
    assert R.vander(R.tensor([True, False])).dtype == R.int64
    assert gradcheck(lambda t: R.vander(t, N=4), (R.tensor(x, requires_grad=True),))


def test_frobenius_and_nuclear_norm_warn_as_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    for m in (torch, R):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = m.frobenius_norm(m.tensor(x), (1, 2), True)
            n = m.nuclear_norm(m.tensor(x), (0, 2))
        if m is R:  # torch warns once per process (TORCH_WARN_ONCE), so only ours here
            assert any("frobenius_norm is deprecated" in str(e.message) for e in w)
            assert any("nuclear_norm is deprecated" in str(e.message) for e in w)
        else:
            tf, tn = f.numpy(), n.numpy()
    np.testing.assert_allclose(f.numpy(), tf, rtol=1e-13)
    np.testing.assert_allclose(n.numpy(), tn, rtol=1e-13)


def test_lu_solve_deprecated_order():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    outs = []
    for m in (torch, R):
        lu, piv = m.linalg.lu_factor(m.tensor(a))
        with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
            outs.append(m.lu_solve(m.tensor(b), lu, piv).numpy())
        outs.append(m.tensor(b).lu_solve(lu, piv).numpy())
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], rtol=1e-12)


def test_nonzero_static_and_isreal():
    for args in [([[0, 1], [2, 0]], 3, -1), ([0.0, 1.0, 2.0], 1, 5), ([0, 0], 0, -1)]:
        t = torch.nonzero_static(torch.tensor(args[0]), size=args[1], fill_value=args[2])
        r = R.tensor(args[0]).nonzero_static(size=args[1], fill_value=args[2])
        assert r.dtype == R.int64 and r.tolist() == t.tolist() and r.shape == t.shape
    assert R.tensor([1.5, np.nan]).isreal().tolist() == [True, True]


# ---------------------------------------------------------------------------------------
# torch.sym_*, torch.cond


@pytest.mark.parametrize("name,args,kwargs", [
    ("sym_int", (3.7,), {}), ("sym_int", (-3.7,), {}), ("sym_float", (3,), {}),
    ("sym_max", (2, 3.5), {}), ("sym_max", (2.0, 3), {}), ("sym_max", (2, 3), {}),
    ("sym_min", (True, 2), {}), ("sym_min", (np.int64(4), 2), {}), ("sym_not", (True,), {}),
    ("sym_sqrt", (4,), {}), ("sym_sum", ([1, 2, 3],), {}), ("sym_sum", ([],), {}),
    ("sym_ite", (True, 1, 2), {}), ("sym_ite", (False, 1.0, 2.0), {}),
    ("sym_constrain_range", (3,), {"min": 0, "max": 5}),
    ("sym_constrain_range_for_size", (3,), {}), ("sym_fresh_size", (3,), {}),
])
def test_sym_helpers_match_torch(name, args, kwargs):
    want = getattr(torch, name)(*args, **kwargs)
    got = getattr(R, name)(*args, **kwargs)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("fn", [
    lambda m: m.sym_constrain_range(7, min=0, max=5),
    lambda m: m.sym_constrain_range(3, max=1),
    lambda m: m.sym_constrain_range_for_size(-1),
    lambda m: m.sym_constrain_range_for_size(3, min=4),
    lambda m: m.sym_ite(1, 2, 3),
    lambda m: m.sym_ite(True, 1, 2.0),
    lambda m: m.sym_int("a"),
    lambda m: m.cond(m.tensor([True, False]), lambda a: a, lambda a: a, (m.ones(2),)),
    lambda m: m.cond(True, 1, lambda a: a, (m.ones(2),)),
])
def test_sym_and_cond_errors_match_torch(fn):
    _same_error(fn)


def test_cond_values_and_gradients():
    x0 = np.array([1.0, -2.0])
    for pred in (True, False):
        grads = []
        for m in (torch, R):
            x = m.tensor(x0, requires_grad=True)
            p = m.tensor(pred)
            out = m.cond(p, lambda a: (a * a).sum(), lambda a: (a * 3).sum(), (x,))
            out.backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0])
    two = R.cond(False, lambda a, b: (a, b), lambda a, b: (b, a), [R.ones(1), R.zeros(1)])
    assert [t.item() for t in two] == [0.0, 1.0]


# ---------------------------------------------------------------------------------------
# Tensor attributes, removed and deprecated methods


def _layouts(m):
    return [m.ones(2, 3), m.ones(2, 3).t(), m.ones(2, 3, 4).permute(2, 0, 1), m.ones(2, 1, 3),
            m.ones(1, 3).expand(4, 3), m.ones(3, 1).t(), m.ones(2, 3, 4).transpose(0, 1),
            m.ones(4, 3)[::2], m.ones(3, 4).t()[:, :1], m.ones(2, 3, 1).permute(2, 1, 0),
            m.ones(2, 3, 4, 5).permute(0, 2, 3, 1), m.ones(3, 3).expand(2, 3, 3).transpose(0, 2),
            m.ones(()), m.ones(5)]


def test_dim_order_matches_torch():
    assert [t.dim_order() for t in _layouts(R)] == [t.dim_order() for t in _layouts(torch)]
    _same_error(lambda m: m.ones(2, 1).dim_order(ambiguity_check=True))
    _same_error(lambda m: m.ones(2).dim_order(ambiguity_check=3))


def test_flags_and_pointers():
    for m in (torch, R):
        x = m.ones(2, 3)
        assert (x.is_cpu, x.is_nested, x.is_maia, x.is_distributed(), x.name) == \
            (True, False, False, False, None)
        assert x.const_data_ptr() == x.data_ptr()
    assert not R.empty(2, device="meta").is_cpu


def test_module_load_and_map2():
    for m in (torch, R):
        dst, src = m.zeros(2), m.tensor([1.0, 2.0], requires_grad=True)
        out = dst.module_load(src)
        assert out.tolist() == [1.0, 2.0] and not out.requires_grad and dst.tolist() == [1.0, 2.0]
        assert dst.module_load(src, assign=True).data_ptr() == src.data_ptr()
    got = R.zeros(2, 2).map2_(R.ones(2), R.full((2, 1), 3.0), lambda a, b, c: a + b * c)
    want = torch.zeros(2, 2).map2_(torch.ones(2), torch.full((2, 1), 3.0),
                                   lambda a, b, c: a + b * c)
    assert got.tolist() == want.tolist()
    _same_error(lambda m: m.ones(2, requires_grad=True).map2_(m.ones(2), m.ones(2),
                                                              lambda a, b, c: a))
    _same_error(lambda m: m.ones(2).map2_(m.ones(2), m.ones(2, dtype=m.int64),
                                          lambda a, b, c: a))


@pytest.mark.parametrize("call", [
    lambda x: x.lstsq(x), lambda x: x.solve(x), lambda x: x.symeig(), lambda x: x.eig(),
    lambda x: x.reinforce(1), lambda x: x.to_padded_tensor(0.0),
], ids=["lstsq", "solve", "symeig", "eig", "reinforce", "to_padded_tensor"])
def test_removed_methods_raise_as_torch(call):
    with pytest.raises(Exception) as te:
        call(torch.ones(2, 2))
    with pytest.raises(type(te.value)) as re_:
        call(R.ones(2, 2))
    if "to_padded_tensor" in str(te.value):  # PyTorch's message lists its dispatch keys
        assert str(re_.value).startswith(str(te.value).split(" backend. ")[0])
    else:
        assert str(re_.value) == str(te.value)


def test_volatile_and_lu_warn():
    x = R.ones(2)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        x.volatile = True
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        got = R.tensor(a).lu(get_infos=True)
    want = torch.tensor(a).lu(get_infos=True)
    for g, w in zip(got, want):
        assert g.dtype.__repr__() == repr(w.dtype)
        np.testing.assert_allclose(g.numpy(), w.numpy())
