"""Scans, scatter-reductions, counting and statistics ops against torch: the errors, the
warnings and the cases the op database (tests/support/opdb_scans.py) does not express."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(m) for m = retrograd and m = torch: the results, or the exceptions raised."""
    out = []
    for m in (R, torch):
        try:
            out.append(fn(m))
        except (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError) as e:
            out.append(e)
    return out


def _same_error(fn, match: str | None = None):
    r, t = _both(fn)
    assert isinstance(t, Exception), f"torch did not raise: {t!r}"
    assert isinstance(r, type(t)), f"torch raised {t!r}, retrograd {r!r}"
    assert str(r).startswith(str(t).rstrip(".")), (str(r), str(t))
    if match:
        assert match in str(r)


def _close(r, t):
    assert str(r.dtype) == str(t.dtype)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.logcumsumexp(m.tensor([1, 2]), 0),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1), "foo"),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0]), m.ones(1, dtype=m.float64), "sum"),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([0.0]), m.ones(1), "sum"),
    lambda m: m.zeros(3).scatter_reduce(0, m.tensor([4]), m.ones(1), "sum"),
    lambda m: m.zeros(3).index_reduce(0, m.tensor([0]), m.ones(1), "sum"),
    lambda m: m.zeros(3).index_reduce(0, m.tensor([0, 1]), m.ones(3), "prod"),
    lambda m: m.zeros(3).masked_scatter(m.tensor([True, True, False]), m.ones(1)),
    lambda m: m.zeros(3).masked_scatter(m.tensor([1, 1, 0]), m.ones(3)),
    lambda m: m.zeros(3).put(m.tensor([5]), m.ones(1)),
    lambda m: m.zeros(3).put(m.tensor([0, 1]), m.ones(1)),
    lambda m: m.ones(3).scatter(0, m.tensor([0, 0]), 2.0, reduce="foo"),
    lambda m: m.diff(m.tensor(1.0)),
    lambda m: m.diff(m.ones(3), n=-1),
    lambda m: m.mode(m.zeros(0, 3), 0),
], ids=["logcumsumexp-int", "reduce-name", "src-dtype", "index-dtype", "index-range",
        "index_reduce-sum", "index_reduce-count", "masked_scatter-short", "masked_scatter-mask",
        "put-range", "put-count", "scatter-reduce-name", "diff-0d", "diff-negative-n",
        "mode-empty-dim"])
def test_errors_match_torch(call):
    _same_error(call)


def test_scatter_multiply_and_add_match_torch():
    """Tensor.scatter_(reduce='multiply'/'add') (issue 16): values and torch's warning."""
    for reduce in ("multiply", "add"):
        outs = []
        for m in (R, torch):
            x = m.arange(1.0, 7.0).reshape(2, 3)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                x.scatter_(1, m.tensor([[0, 0], [2, 1]]), m.tensor([[2.0, 3.0], [4.0, 5.0]]),
                           reduce=reduce)
            if m is R:  # (torch warns once per process)
                assert any("scatter_reduce instead" in str(e.message) for e in w)
            y = m.ones(3).scatter(0, m.tensor([0, 0]), 2.0, reduce=reduce)
            outs.append((x, y))
        for r, t in zip(*outs):
            _close(r, t)


def test_scatter_reduce_prod_double_backward_with_two_zeros_raises():
    outs = []
    for m in (R, torch):
        src = m.tensor([0.0, 0.0, 2.0], dtype=m.float64, requires_grad=True)
        y = m.ones(2, dtype=m.float64).scatter_reduce(0, m.tensor([0, 0, 1]), src, "prod")
        (g,) = m.autograd.grad(y.sum(), src, create_graph=True)  # first order: fine
        outs.append(g)
        assert g.grad_fn.name() == "torch::autograd::Error"
        with pytest.raises(RuntimeError, match="Double backward is unsupported for src when"):
            m.autograd.grad(g.sum(), src)
    _close(*outs)


def test_scatter_reduce_src_larger_than_index_backward_raises():
    for m in (R, torch):
        src = m.ones(3, dtype=m.float64, requires_grad=True)
        y = m.zeros(2, dtype=m.float64).scatter_reduce(0, m.tensor([1]), src, "sum")
        assert y.tolist() == [0.0, 1.0]
        with pytest.raises(RuntimeError, match="invalid gradient at index 1 - got"):
            y.sum().backward()


def test_cummax_of_integers_and_bools():
    for dt in ("int64", "bool", "float32"):
        r, t = _both(lambda m, dt=dt: m.cummax(m.tensor([[1, 3, 3, 0], [2, 2, 0, 5]])
                                               .to(getattr(m, dt)), 1))
        for a, b in zip(r, t):
            assert str(a.dtype) == str(b.dtype)
            assert a.tolist() == b.tolist()


def test_new_ops_are_functions_and_methods():
    for name in ("cummax", "cummin", "logcumsumexp", "diff", "scatter_reduce", "index_reduce",
                 "masked_scatter", "put", "nanmedian", "mode", "msort"):
        assert hasattr(R, name) and hasattr(R.Tensor, name), name
    for name in ("scatter_reduce_", "index_reduce_", "masked_scatter_", "put_"):
        assert hasattr(R.Tensor, name), name


@pytest.mark.parametrize("call", [
    lambda m, x: m.unique(x),
    lambda m, x: m.unique(x, dim=0),
    lambda m, x: m.unique_consecutive(x),
    lambda m, x: m.histogram(x, 3).hist,
    lambda m, x: m.histogram(x, 3).bin_edges,
    lambda m, x: m.bincount(m.tensor([0, 1, 1]), x[:, 0]),
    lambda m, x: m.histogramdd(x, 2).hist,
    lambda m, x: m.histogramdd(x, 2).bin_edges[1],
], ids=["unique", "unique-dim", "unique_consecutive", "histogram-hist", "histogram-edges",
        "bincount-weights", "histogramdd-hist", "histogramdd-edges"])
def test_nodes_without_a_derivative_raise_as_torch(call):
    """A result of a tensor that requires grad has PyTorch's node; its backward raises."""
    errors = []
    for m in (R, torch):
        x = m.tensor([[0.5, 1.0], [0.5, 1.0], [2.0, -1.0]], dtype=m.float64, requires_grad=True)
        y = call(m, x)
        assert y.requires_grad
        errors.append((y.grad_fn.name(), _both(lambda _m, y=y: y.sum().backward())[0]))
    (rname, rerr), (tname, terr) = errors
    assert rname == tname
    assert type(rerr) is type(terr) and str(rerr).startswith(str(terr).rstrip("."))


def test_histogram_and_histc_bins_match_torch_on_random_data():
    """Elements on and near the edges land in torch's bins (float32 and float64)."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = np.round(rng.normal(size=int(rng.integers(1, 40))) * 3, 1)
        a = a.astype(rng.choice([np.float32, np.float64]))
        bins = int(rng.integers(1, 12))
        r, t = _both(lambda m, a=a, bins=bins: m.histc(m.tensor(a), bins))
        np.testing.assert_array_equal(r.numpy(), t.numpy())
        r, t = _both(lambda m, a=a, bins=bins: m.histogram(m.tensor(a), bins))
        np.testing.assert_array_equal(r.hist.numpy(), t.hist.numpy())
        np.testing.assert_array_equal(r.bin_edges.numpy(), t.bin_edges.numpy())


_X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 3.0], [2.5, -2.0, 1.0, 0.0]])


@pytest.mark.parametrize("name,call,nout", [
    ("cummax", lambda m, x, o: m.cummax(x, 1, out=o), 2),
    ("cummin", lambda m, x, o: m.cummin(x, 0, out=o), 2),
    ("logcumsumexp", lambda m, x, o: m.logcumsumexp(x, 1, out=o), 1),
    ("diff", lambda m, x, o: m.diff(x, 2, 0, out=o), 1),
    ("histc", lambda m, x, o: m.histc(x, 5, out=o), 1),
    ("histogram", lambda m, x, o: m.histogram(x, 4, out=o), 2),
    ("bucketize", lambda m, x, o: m.bucketize(x, m.tensor([0.0, 1.0]), out=o), 1),
    ("searchsorted", lambda m, x, o: m.searchsorted(m.tensor([0.0, 1.0]), x, out=o), 1),
    ("isin", lambda m, x, o: m.isin(x, m.tensor([0.5, 3.0]), out=o), 1),
    ("quantile", lambda m, x, o: m.quantile(x, 0.3, 1, out=o), 1),
    ("nanquantile", lambda m, x, o: m.nanquantile(x, 0.7, out=o), 1),
    ("nanmedian", lambda m, x, o: m.nanmedian(x, 1, out=o), 2),
    ("mode", lambda m, x, o: m.mode(x, 0, out=o), 2),
    ("msort", lambda m, x, o: m.msort(x, out=o), 1),
    ("renorm", lambda m, x, o: m.renorm(x, 2, 0, 1.0, out=o), 1),
    ("scatter_reduce", lambda m, x, o: m.scatter_reduce(
        x, 0, m.tensor([[0, 1, 0, 2]]), x[1:2], "amax", out=o), 1),
    ("index_reduce", lambda m, x, o: m.index_reduce(
        x, 1, m.tensor([0, 0]), x[:, :2], "prod", out=o), 1),
])
def test_out_forms_match_torch(name, call, nout):
    """out=: the values written and the tensors returned; with an input that requires grad,
    refused where PyTorch refuses, else the same requires_grad on out."""
    values, graded = [], []
    for m in (R, torch):
        x = m.tensor(_X)
        ref = call(m, x, None)
        refs = list(ref) if nout > 1 else [ref]
        outs = [m.empty(0, dtype=r.dtype) for r in refs]
        got = call(m, x, tuple(outs) if nout > 1 else outs[0])
        gots = list(got) if nout > 1 else [got]
        assert all(g is o for g, o in zip(gots, outs))
        values.append([o.numpy() for o in outs])
        fresh = [m.empty(0, dtype=r.dtype) for r in refs]
        try:
            y = call(m, m.tensor(_X, requires_grad=True), tuple(fresh) if nout > 1 else fresh[0])
            graded.append((y[0] if nout > 1 else y).requires_grad)
        except RuntimeError as e:
            graded.append(type(e))
    for r, t in zip(*values):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=0)
    assert graded[0] == graded[1], graded


@pytest.mark.parametrize("fn", ["median", "nanmedian", "kthvalue", "mode"])
def test_forward_ad_of_values_at_an_index_of_a_vector(fn):
    """A 1-D input's index is 0-d: the tangent is gathered there, not copied whole."""
    tangents = []
    for m in (R, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.tensor([3.0, 1.0, 2.0, 1.0]), m.tensor([1.0, 2.0, 3.0, 4.0]))
            out = getattr(m, fn)(d, 2, 0) if fn == "kthvalue" else getattr(m, fn)(d, 0)
            tangents.append(fw.unpack_dual(out.values).tangent)
    _close(*tangents)
