"""Op-database entries of the scans, scatter-reductions, counting and statistics ops
(ops/records/scans.py, _functions/scans.py, _functions/scatter_reduce.py,
_functions/counting.py, _functions/statistics.py), loaded by
opdb.py."""

from __future__ import annotations

import numpy as np

from opdb import INTERNAL_OPS, A, S, _i64, _mask, op, vals


def _dims_samples(shapes_dims):
    def gen(rng):
        return [S(A(vals(rng, shape)), d) for shape, d in shapes_dims]
    return gen


_SCAN_SHAPES = [((3, 4), 1), ((2, 3, 4), 0), ((2, 3, 4), -1), ((), 0), ((0, 3), 0), ((5,), 0)]


def _cummaxmin_samples(rng):
    out = _dims_samples(_SCAN_SHAPES)(rng)
    out.append(S(A(vals(rng, (3, 4)), layout="T"), 0, desc="non-contiguous"))
    out.append(S(A([1.0, 3.0, 3.0, 2.0, 3.0]), 0, check_grad=False,
                 desc="ties: the latest index wins (a kink, torch decides)"))
    out.append(S(A([1.0, np.nan, 3.0, np.nan]), 0, check_grad=False, desc="nan sticks"))
    return out


op("cummax", lambda m, x, d: m.cummax(x, d), _cummaxmin_samples, ("cummax",), int_ok=True)
op("cummin", lambda m, x, d: x.cummin(dim=d), _cummaxmin_samples, ("cummin",), int_ok=True)


def _logcumsumexp_samples(rng):
    out = _dims_samples(_SCAN_SHAPES)(rng)
    out.append(S(A([-np.inf, 0.0, 1.0]), 0, check_grad=False, desc="-inf first"))
    out.append(S(A([1000.0, 1000.0, -1000.0]), 0, desc="no overflow"))
    return out


op("logcumsumexp", lambda m, x, d: m.logcumsumexp(x, d), _logcumsumexp_samples,
   ("logcumsumexp",), int_ok=True)


def _diff_samples(rng):
    return [S(A(vals(rng, (5,)))), S(A(vals(rng, (3, 4))), 2, 0),
            S(A(vals(rng, (2, 3, 4))), 1, 1, A(vals(rng, (2, 1, 4))), A(vals(rng, (2, 2, 4)))),
            S(A(vals(rng, (3, 4))), prepend=A(vals(rng, (3, 2)))),
            S(A(vals(rng, (3,))), n=5, desc="n > size: empty"),
            S(A(vals(rng, (3, 4))), n=0, desc="n=0: a copy of the input"),
            S(A(vals(rng, (3, 4))), 0, prepend=A(vals(rng, (3, 1))), desc="n=0: no prepend"),
            S(A(vals(rng, ())), desc="0-d: error"),
            S(A(vals(rng, (4,))), -1, desc="negative n: error"),
            S(_mask([True, False, False, True]), desc="bool: xor")]


op("diff", lambda m, x, *a, **k: m.diff(x, *a, **k), _diff_samples, ("sub",), int_ok=True)


def _scatter_reduce_samples(reduce):
    def gen(rng):
        out = []
        for include_self in (True, False):
            idx = rng.integers(0, 3, (4, 4))
            out.append(S(A(vals(rng, (3, 4), "nz")), 0, _i64(idx), A(vals(rng, (4, 4), "nz")),
                         reduce, include_self=include_self))
        idx = rng.integers(0, 4, (3, 2))
        out.append(S(A(vals(rng, (3, 4), "nz")), 1, _i64(idx), A(vals(rng, (3, 2), "nz")),
                     reduce, desc="index narrower than self"))
        out.append(S(A(vals(rng, (2, 3, 4), "nz")), -1, _i64(rng.integers(0, 4, (2, 3, 2))),
                     A(vals(rng, (2, 3, 2), "nz")), reduce, include_self=False))
        out.append(S(A(vals(rng, (), "nz")), 0, _i64(np.array(0)), A(vals(rng, (), "nz")),
                     reduce, desc="0-d"))
        out.append(S(A(vals(rng, (3,), "nz")), 0, _i64([0, 3]), A(vals(rng, (2,), "nz")),
                     reduce, desc="index out of range: error"))
        if reduce == "prod":
            out.append(S(A([2.0, 0.0, 3.0]), 0, _i64([0, 0, 2, 2]), A([0.0, 4.0, 5.0, 0.5]),
                         "prod", desc="a zero in self and one zero per position in src"))
        if reduce in ("amax", "amin"):
            out.append(S(A([1.0, 2.0, 3.0]), 0, _i64([0, 0, 1]), A([1.0, 1.0, 2.0]), reduce,
                         check_grad=False, desc="ties share the gradient (a kink)"))
        return out
    return gen


for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    op(f"scatter_reduce_{_reduce}",
       lambda m, x, d, i, s, r, **k: x.scatter_reduce(d, i, s, r, **k),
       _scatter_reduce_samples(_reduce), ("scatter_reduce_two",),
       inplace="scatter_reduce_", int_ok=True)


def _index_reduce_samples(reduce):
    def gen(rng):
        out = []
        for include_self in (True, False):
            out.append(S(A(vals(rng, (3, 4), "nz")), 0, _i64([2, 0, 2, 2]),
                         A(vals(rng, (4, 4), "nz")), reduce, include_self=include_self))
        out.append(S(A(vals(rng, (2, 3, 4), "nz")), 2, _i64([3, 1]),
                     A(vals(rng, (2, 3, 2), "nz")), reduce, include_self=False))
        out.append(S(A(vals(rng, (3, 4), "nz")), 0, _i64([0, 1]), A(vals(rng, (3, 4), "nz")),
                     reduce, desc="index and source disagree: error"))
        return out
    return gen


for _reduce in ("prod", "mean", "amax", "amin"):
    op(f"index_reduce_{_reduce}",
       lambda m, x, d, i, s, r, **k: x.index_reduce(d, i, s, r, **k),
       _index_reduce_samples(_reduce), ("index_reduce",), inplace="index_reduce_", int_ok=True)


def _masked_scatter_samples(rng):
    return [S(A(vals(rng, (3, 4))), _mask(rng.random((3, 4)) < 0.5), A(vals(rng, (12,)))),
            S(A(vals(rng, (3, 4))), _mask(rng.random((4,)) < 0.5), A(vals(rng, (3, 5))),
              desc="mask broadcast, source larger"),
            S(A(vals(rng, (2, 3))), _mask([[True, True, True]] * 2), A(vals(rng, (5,))),
              desc="source too small: error"),
            S(A(vals(rng, (3,))), _mask([False] * 3), A(vals(rng, (0,))), desc="no True")]


op("masked_scatter", lambda m, x, mask, s: x.masked_scatter(mask, s), _masked_scatter_samples,
   ("masked_scatter",), inplace="masked_scatter_", int_ok=True)


def _put_samples(rng):
    return [S(A(vals(rng, (3, 4))), _i64([1, 7, -1, 4]), A(vals(rng, (2, 2)))),
            S(A(vals(rng, (3, 4))), _i64([1, 1, 5, -12]), A(vals(rng, (4,))), True,
              desc="accumulate with repeats"),
            S(A(vals(rng, (3, 4)), layout="T"), _i64([0, 11]), A(vals(rng, (2,))),
              desc="non-contiguous self"),
            S(A(vals(rng, (3,))), _i64([3]), A(vals(rng, (1,))), desc="out of range: error")]


op("put", lambda m, x, i, s, *a: x.put(i, s, *a), _put_samples, ("put",), inplace="put_",
   int_ok=True)
op("scatter_reduce_multiply",
   lambda m, x, d, i, *a, **k: x.scatter(d, i, *a, reduce="multiply", **k),
   lambda rng: [S(A(vals(rng, (3, 4))), 1, _i64(rng.integers(0, 4, (3, 5))), A(vals(rng, (3, 5)))),
                S(A(vals(rng, (3, 4))), 0, _i64(rng.integers(0, 3, (2, 4))), value=1.5,
                  desc="value=")],
   ("scatter",), differentiable=False)  # NotImplemented nodes in torch: backward raises


# ----------------------------------------------------------------------------------
# order statistics

INTERNAL_OPS.pop("mode", None)  # torch.mode now reaches take_ops['mode']
INTERNAL_OPS["double_backward_error"] = (
    "the Error node of scatter_reduce(prod)'s gradient with two zeros at one position "
    "(its backward raises); tested in test_tensor_ops_scans.py")


def _nanmedian_samples(rng):
    nan = np.nan
    return [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (2, 3, 4))), 1),
            S(A(vals(rng, (3, 4))), -1, True), S(A(vals(rng, ()))), S(A(vals(rng, ())), 0),
            S(A(vals(rng, (5,))), 0, desc="1-D: 0-d results"),
            S(A(vals(rng, (0, 3))), check_grad=False, desc="empty: nan (0/0 in the rule)"),
            S(A(vals(rng, (0, 3))), 1),
            S(A(vals(rng, (0, 3))), 0, desc="empty reduction dim: error"),
            S(A([[1.0, nan, 3.0, 2.0], [0.5, nan, -1.0, nan]]), 1, desc="nans skipped"),
            S(A([[nan, nan, nan], [0.5, nan, nan]]), 1, keepdim=True,
              desc="an all-nan row is nan at index 0 (rows of 3: PyTorch's nth_element "
                   "leaves longer all-nan rows in an order of its own)"),
            S(A([2.0, nan, 1.0, nan, 3.0]), desc="all elements, nans skipped"),
            S(A(vals(rng, (3, 4)), layout="T"), 0, desc="non-contiguous")]


op("nanmedian", lambda m, x, *a: m.nanmedian(x, *a), _nanmedian_samples,
   ("nanmedian_all", "nanmedian_dim"), int_ok=True)


def _mode_samples(rng):
    def tied(shape):
        return A(np.round(vals(rng, shape)))
    return [S(tied((3, 6)), check_grad=False, desc="repeated values: a kink"),
            S(tied((2, 5, 3)), 1, check_grad=False, desc="repeated values: a kink"),
            S(tied((4, 5)), 0, True, check_grad=False, desc="repeated values: a kink"),
            S(A(vals(rng, (3, 4))), desc="all distinct: the smallest"), S(A(vals(rng, ()))),
            S(tied((7,)), check_grad=False, desc="1-D: 0-d results"),
            S(A(vals(rng, (0, 3))), 1), S(A(vals(rng, (0, 3))), 0, desc="empty dim: error"),
            S(A([[1.0, 2.0, 2.0, 1.0, 3.0, 1.0], [3.0, 3.0, 3.0, 3.0, 0.0, 0.0]]),
              check_grad=False, desc="ties in frequency: the smaller value, its last index")]


op("mode", lambda m, x, *a: x.mode(*a), _mode_samples, ("mode",), int_ok=True)
op("msort", lambda m, x: m.msort(x),
   lambda rng: [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (4,)))), S(A(vals(rng, (2, 3, 2))))],
   ("sort",), int_ok=True)


# ----------------------------------------------------------------------------------
# counting and searching (no derivative: PyTorch's nodes that raise, or none)


def _ties(rng, shape):
    return np.round(vals(rng, shape))


def _unique_samples(rng):
    nan = np.nan
    return [S(A(_ties(rng, (3, 4)))), S(A(_ties(rng, (3, 4))), return_inverse=True),
            S(A(_ties(rng, (2, 3, 2))), return_counts=True, return_inverse=True),
            S(A(_ties(rng, (5, 2))), dim=0, return_inverse=True, return_counts=True),
            S(A(np.array([[1.0, 2.0, 1.0], [0.0, 3.0, 0.0]])), dim=1, return_inverse=True),
            S(A(_ties(rng, (3, 4))), sorted=False), S(A(vals(rng, ()))),
            S(A(vals(rng, (0, 3)))), S(A(vals(rng, (0, 3))), dim=1, desc="empty rows: error"),
            S(A([nan, 1.0, nan, 1.0]), return_counts=True, desc="nans are all distinct"),
            S(A(_ties(rng, (3, 4))), dim=2, desc="dim out of range: error")]


op("unique", lambda m, x, **k: m.unique(x, **k), _unique_samples, ("unique2", "unique_dim"),
   differentiable=False, int_ok=True)


def _unique_consecutive_samples(rng):
    return [S(A([1.0, 1.0, 2.0, 2.0, 3.0, 1.0]), return_inverse=True, return_counts=True),
            S(A(_ties(rng, (3, 4)))),
            S(A(np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 3.0], [1.0, 2.0]])), dim=0,
              return_counts=True, return_inverse=True),
            S(A(_ties(rng, (2, 3))), dim=-1), S(A(vals(rng, ()))), S(A(vals(rng, (0,))))]


op("unique_consecutive", lambda m, x, **k: m.unique_consecutive(x, **k),
   _unique_consecutive_samples, ("unique_consecutive",), differentiable=False, int_ok=True)


def _bincount_samples(rng):
    idx = rng.integers(0, 5, 8)
    return [S(_i64(idx)), S(_i64(idx), minlength=9), S(_i64(idx), A(vals(rng, (8,)))),
            S(_i64(idx), weights=A(vals(rng, (8,))), minlength=2),
            S(_i64(np.zeros(0, np.int64))), S(_i64(np.zeros(0, np.int64)), minlength=3),
            S(_i64([1, -1]), desc="negative: error"), S(_i64([[1]]), desc="2-D: error"),
            S(_i64(idx), A(vals(rng, (3,))), desc="weights of another length: error"),
            S(_i64(idx), minlength=-1, desc="negative minlength: error"),
            S(A(vals(rng, (3,)), "pos"), desc="floating input: error")]


op("bincount", lambda m, x, *a, **k: m.bincount(x, *a, **k), _bincount_samples, ("bincount",),
   differentiable=False, int_ok=True)


def _histc_samples(rng):
    return [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (20,))), 7),
            S(A(vals(rng, (3, 4))), 4, -1.0, 1.0), S(A(vals(rng, (3, 4))), bins=5, min=-3, max=3),
            S(A([0.0, 0.5, 1.0, 1.5, 2.0]), 4, 0, 2, desc="values on the edges"),
            S(A([1.0, 1.0])), S(A(vals(rng, (0,))), 4), S(A([1.0, np.nan, 0.2]), 4, 0, 2),
            S(A([1.0, np.nan]), desc="nan range: error"), S(A([1.0]), 0, desc="bins: error"),
            S(A([1.0]), 4, 3, 1, desc="max < min: error")]


op("histc", lambda m, x, *a, **k: m.histc(x, *a, **k), _histc_samples, (),
   differentiable=False, int_ok=True)


def _histogram_samples(rng):
    return [S(A(vals(rng, (3, 4))), 5), S(A(vals(rng, (20,))), bins=4, range=(-1.0, 1.0)),
            S(A(vals(rng, (10,))), 3, weight=A(vals(rng, (10,), "pos")), density=True),
            S(A(vals(rng, (10,))), A(np.array([-2.0, -0.5, 0.0, 0.7, 2.0]), grad=False)),
            S(A([0.0, 0.5, 1.0, 1.5, 2.0]), 4, range=(0.0, 2.0), desc="values on the edges"),
            S(A(vals(rng, (6,))), 0, desc="bins: error")]


op("histogram", lambda m, x, *a, **k: m.histogram(x, *a, **k), _histogram_samples,
   ("histogram",), differentiable=False, int_ok=True)


def _search_samples(rng):
    b = A(np.sort(np.round(vals(rng, (6,)), 1)), grad=False)
    x = A(np.round(vals(rng, (3, 4)), 1))
    return [S(x, b), S(x, b, right=True), S(x, b, out_int32=True),
            S(A(np.array([-1.0, 0.0, 1.0])), A(np.array([-1.0, 0.0, 0.0, 1.0]), grad=False),
              desc="values equal to boundaries"),
            S(x, A(vals(rng, (2, 3)), grad=False), desc="2-D boundaries: error")]


op("bucketize", lambda m, x, b, **k: m.bucketize(x, b, **k), _search_samples, (),
   differentiable=False, int_ok=True)


def _searchsorted_samples(rng):
    seq = A(np.sort(np.round(vals(rng, (6,)), 1)), grad=False)
    seq2 = A(np.sort(np.round(vals(rng, (2, 5)), 1), axis=-1), grad=False)
    x = A(np.round(vals(rng, (3, 4)), 1))
    unsorted = np.round(vals(rng, (5,)), 1)
    return [S(seq, x), S(seq, x, right=True), S(seq, x, side="right", out_int32=True),
            S(seq2, A(np.round(vals(rng, (2, 3)), 1))), S(seq2, A(vals(rng, (2, 5))), side="left"),
            S(A(unsorted, grad=False), A(vals(rng, (4,))), sorter=_i64(np.argsort(unsorted))),
            S(seq, x, side="left", right=True, desc="opposite sides: error"),
            S(seq, x, side="up", desc="bad side: error"),
            S(seq2, A(vals(rng, (3, 2))), desc="leading dims differ: error")]


op("searchsorted", lambda m, s, x, **k: m.searchsorted(s, x, **k), _searchsorted_samples, (),
   differentiable=False, int_ok=True)


def _isin_samples(rng):
    a = A(_ties(rng, (3, 4)))
    return [S(a, A(_ties(rng, (5,)))), S(a, A(_ties(rng, (2, 2))), invert=True),
            S(a, 1.0), S(a, A(_ties(rng, (3,))), assume_unique=True),
            S(a, A(vals(rng, (0,)))), S(A(vals(rng, ())), A(_ties(rng, (3,))))]


op("isin", lambda m, x, y, **k: m.isin(x, y, **k), _isin_samples, (), differentiable=False,
   int_ok=True)
op("unravel_index", lambda m, i, shape: m.unravel_index(i, shape),
   lambda rng: [S(_i64([4, 1, 5]), (2, 3)), S(_i64(np.array(7)), (2, 2, 3)),
                S(_i64([[6, -1], [0, 23]]), (4, 6)), S(_i64([3]), 5),
                S(A(vals(rng, (2,))), (2, 3), desc="floating indices: error")],
   (), differentiable=False)


# ----------------------------------------------------------------------------------
# quantiles, covariance, integration (composites: their grad_fn names are PyTorch's)


def _distinct(rng, shape):
    """Values with no ties (order statistics are smooth there)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) / n * 3 - 1.5 + rng.uniform(0, 0.01, n)).reshape(shape)


def _quantile_samples(rng):
    q2 = A(np.array([0.1, 0.5, 0.95]), grad=False)
    nan = np.nan
    out = [S(A(_distinct(rng, (3, 4))), 0.3), S(A(_distinct(rng, (3, 4))), 0.3, 1),
           S(A(_distinct(rng, (3, 4))), 0.6, 0, True), S(A(_distinct(rng, (3, 4))), q2),
           S(A(_distinct(rng, (2, 3, 4))), q2, 1, keepdim=True),
           S(A(_distinct(rng, (3, 4))), 0.25, keepdim=True), S(A(_distinct(rng, (5,))), 1.0),
           S(A(vals(rng, ())), 0.5), S(A(vals(rng, ())), 0.5, 0),
           S(A([[1.0, nan, 3.0], [2.0, 0.5, 1.0]]), 0.4, 1, check_grad=False, desc="nans"),
           S(A([[nan, nan], [2.0, 0.5]]), 0.4, 1, check_grad=False, desc="an all-nan row"),
           S(A(vals(rng, (3,))), 1.5, desc="q out of range: error"),
           S(A(vals(rng, (0,))), 0.5, desc="empty: error"),
           S(A(vals(rng, (3,))), A(np.array([[0.5]]), grad=False), desc="2-D q: error"),
           S(A(vals(rng, (3,))), 0.5, interpolation="cubic", desc="bad mode: error")]
    for mode in ("lower", "higher", "midpoint", "nearest"):
        out.append(S(A(_distinct(rng, (3, 5))), 0.3, 1, interpolation=mode))
        out.append(S(A(_distinct(rng, (4, 3))), q2, 0, interpolation=mode))
    return out


op("quantile", lambda m, x, *a, **k: m.quantile(x, *a, **k), _quantile_samples,
   ("sort", "gather", "lerp", "squeeze_inplace"), int_ok=True)
op("nanquantile", lambda m, x, *a, **k: x.nanquantile(*a, **k), _quantile_samples,
   ("sort", "gather", "lerp", "squeeze_inplace"), int_ok=True)


def _cov_samples(rng):
    return [S(A(vals(rng, (3, 5)))), S(A(vals(rng, (6,)))), S(A(vals(rng, (2, 4))), correction=0),
            S(A(vals(rng, (2, 5))), fweights=_i64([1, 2, 0, 3, 1])),
            S(A(vals(rng, (3, 4))), aweights=A(vals(rng, (4,), "pos"), grad=False)),
            S(A(vals(rng, (3, 4))), correction=2, fweights=_i64([2, 1, 1, 3]),
              aweights=A(vals(rng, (4,), "pos"))),
            S(A(vals(rng, (2, 2, 2))), desc="3-D: error"),
            S(A(vals(rng, (2, 3))), fweights=_i64([1, -1, 1]), desc="negative weights: error"),
            S(A(vals(rng, (2, 3))), fweights=_i64([0, 0, 0]), desc="weights sum to 0: error"),
            S(A(vals(rng, (2, 3))), aweights=_i64([1, 1, 1]), desc="integer aweights: error")]


op("cov", lambda m, x, **k: m.cov(x, **k), _cov_samples, ("mm", "squeeze_all"), int_ok=True)
op("corrcoef", lambda m, x: x.corrcoef(),
   lambda rng: [S(A(vals(rng, (3, 5)))), S(A(vals(rng, (5,)))), S(A(vals(rng, (2, 4)))),
                S(A(vals(rng, (2, 2, 2))), desc="3-D: error")], ("mm", "clamp"), int_ok=True)


def _trapezoid_samples(rng):
    x4 = A(np.cumsum(vals(rng, (4,), "pos")))
    return [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (3, 4))), dx=0.5),
            S(A(vals(rng, (3, 4))), x4), S(A(vals(rng, (4, 3))), x4, dim=0),
            S(A(vals(rng, (2, 3, 4))), A(np.cumsum(vals(rng, (3, 4), "pos"), -1))),
            S(A(vals(rng, (3, 4))), A(np.cumsum(vals(rng, (3, 4), "pos"), -1))),
            S(A(vals(rng, (2, 0)))), S(A(vals(rng, (3, 1)))),
            S(A(vals(rng, (3, 4))), A(vals(rng, (3,))), desc="x of another length: error")]


op("trapezoid", lambda m, y, *a, **k: m.trapezoid(y, *a, **k), _trapezoid_samples,
   ("sum", "mul"), int_ok=True)
op("trapz", lambda m, y, *a, **k: m.trapz(y, *a, **k),
   lambda rng: [S(A(vals(rng, (3, 4))), dx=2.0), S(A(vals(rng, (4,))), A(vals(rng, (4,))))],
   ("sum",), int_ok=True)
op("cumulative_trapezoid", lambda m, y, *a, **k: m.cumulative_trapezoid(y, *a, **k),
   _trapezoid_samples, ("cumsum",), int_ok=True)


def _renorm_samples(rng):
    out = []
    for p, dim, maxnorm in ((2, 0, 1.5), (1, 1, 1.0), (3, -1, 0.8), (1.5, 0, 1.2),
                            (float("inf"), 1, 0.9), (0.5, 0, 6.0), (2, 0, 0.0)):
        out.append(S(A(vals(rng, (3, 4))), p, dim, maxnorm))
    out += [S(A(vals(rng, (2, 3, 4))), 2, 1, 1.0), S(A(vals(rng, (3, 4)), layout="T"), 2, 0, 1.),
            S(A(vals(rng, (3, 4))), 2, 0, 100.0, desc="no slice above maxnorm"),
            S(A(vals(rng, (3,))), 2, 0, 1.0, desc="1-D: error"),
            S(A(vals(rng, (3, 4))), 0, 0, 1.0, desc="p = 0: error"),
            S(A(vals(rng, (3, 4))), 2, 0, -1.0, desc="negative maxnorm: error")]
    return out


op("renorm", lambda m, x, *a: x.renorm(*a), _renorm_samples, ("renorm",), inplace="renorm_",
   int_ok=True)


def _gradient_samples(rng):
    c4 = A(np.cumsum(vals(rng, (4,), "pos")), grad=False)
    c3 = A(np.cumsum(vals(rng, (3,), "pos")), grad=False)
    return [S(A(vals(rng, (5,)))), S(A(vals(rng, (3, 4)))), S(A(vals(rng, (3, 4))), spacing=2.0),
            S(A(vals(rng, (3, 4))), spacing=[0.5, 2.0], edge_order=2),
            S(A(vals(rng, (3, 4))), spacing=[c3, c4]), S(A(vals(rng, (3, 4))), spacing=[c4], dim=1),
            S(A(vals(rng, (3, 4))), spacing=[c3, c4], edge_order=2),
            S(A(vals(rng, (2, 3, 4))), dim=-1, edge_order=2),
            S(A(vals(rng, (2, 3, 4))), dim=[0, 2]),
            S(A(vals(rng, (2, 4))), spacing=[1.0], desc="spacing list too short: error"),
            S(A(vals(rng, (2, 4))), edge_order=2, desc="dim too short for edge_order: error"),
            S(A(vals(rng, (3, 4))), edge_order=3, desc="edge_order 3: error")]


op("gradient", lambda m, x, **k: m.gradient(x, **k), _gradient_samples, ("cat", "div"),
   int_ok=True)


def _histogramdd_samples(rng):
    pts = A(np.round(vals(rng, (12, 2)), 1))
    return [S(pts, 3), S(pts, [2, 4], range=[-1.0, 1.0, -2.0, 2.0]),
            S(A(np.round(vals(rng, (2, 5, 3)), 1)), [2, 1, 3], density=True),
            S(pts, 2, weight=A(vals(rng, (12,), "pos"))),
            S(pts, [A(np.array([-2.0, 0.0, 2.0]), grad=False),
                    A(np.array([-1.0, -0.5, 0.5, 1.0]), grad=False)]),
            S(A(np.round(vals(rng, (6, 1)), 1)), 4),
            S(A(vals(rng, (4,))), 2, desc="1-D input: error"),
            S(pts, [2], desc="bins of another length: error"),
            S(pts, 2, range=[0.0, 1.0], desc="range of another length: error")]


op("histogramdd", lambda m, x, *a, **k: m.histogramdd(x, *a, **k), _histogramdd_samples,
   ("_histogramdd_bin_edges", "_histogramdd_from_bin_cts"), differentiable=False, int_ok=True)
