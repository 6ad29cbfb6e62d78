"""``retrograd.testing`` against ``torch.testing`` (issue 16): ``assert_close`` passes and
fails on the same inputs with the same exception type and the same message (default
tolerances per dtype, mismatch statistics, scalars, sequences, mappings, attribute
checks, ``msg``), and a seeded ``make_tensor`` gives PyTorch's values, ranges and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _t(m, v, dt="float32", **kw):
    return m.tensor(v, dtype=getattr(m, dt), **kw)


# (id, fn(m) -> (actual, expected, kwargs))
CASES = [
    ("one-of-three", lambda m: (_t(m, [1., 2., 3.]), _t(m, [1., 2.1, 3.]), {})),
    ("float64", lambda m: (_t(m, [1., 2., 3.], "float64"), _t(m, [1., 2.1, 3.], "float64"), {})),
    ("float16", lambda m: (_t(m, [1., 2.], "float16"), _t(m, [1., 2.01], "float16"), {})),
    ("bfloat16-within", lambda m: (_t(m, [1., 1.], "bfloat16"),
                                   _t(m, [1., 1.], "bfloat16") * 1.01, {})),
    ("0-d", lambda m: (_t(m, 1.5), _t(m, 1.), {})),
    ("0-d-nan", lambda m: (_t(m, 1.), _t(m, NAN), {})),
    ("one-element", lambda m: (_t(m, [1.5]), _t(m, [1.]), {})),
    ("2-d-int", lambda m: (_t(m, [[1, 2], [3, 4]], "int64"), _t(m, [[1, 2], [3, 5]], "int64"),
                           {})),
    ("uint8", lambda m: (_t(m, [1], "uint8"), _t(m, [3], "uint8"), {})),
    ("bool", lambda m: (_t(m, [True, False], "bool"), _t(m, [True, True], "bool"), {})),
    ("2-d-float", lambda m: (_t(m, [[1., 2.], [3., 4.]]), _t(m, [[1., 2.], [3., 4.5]]), {})),
    ("two-mismatches", lambda m: (_t(m, [1., 2., 3., 4.]), _t(m, [1.1, 2., 3., 4.2]), {})),
    ("rel-inf", lambda m: (_t(m, [0., 2.]), _t(m, [1e-3, 0.]), {})),
    ("within-atol", lambda m: (_t(m, [1e-7]), _t(m, [0.]), {})),
    ("within-rtol", lambda m: (_t(m, [1., 2.]), _t(m, [1., 2.000001]), {})),
    ("dtype", lambda m: (_t(m, [1.]), _t(m, [1.], "float64"), {})),
    ("dtype-unchecked", lambda m: (_t(m, [1.]), _t(m, [1.], "float64"),
                                   {"check_dtype": False})),
    ("dtype-unchecked-loose", lambda m: (_t(m, [1.]), _t(m, [1.1], "float16"),
                                         {"check_dtype": False})),
    ("int-float-unchecked", lambda m: (_t(m, [1, 2], "int64"), _t(m, [1., 2.]),
                                       {"check_dtype": False})),
    ("shape", lambda m: (_t(m, [1.]), _t(m, [1., 2.]), {})),
    ("shape-view", lambda m: (_t(m, [1., 2.]), _t(m, [1., 2.]).view(2, 1), {})),
    ("nan", lambda m: (_t(m, [NAN]), _t(m, [NAN]), {})),
    ("nan-equal", lambda m: (_t(m, [NAN]), _t(m, [NAN]), {"equal_nan": True})),
    ("inf", lambda m: (_t(m, [INF]), _t(m, [INF]), {})),
    ("inf-ninf", lambda m: (_t(m, [INF]), _t(m, [-INF]), {})),
    ("stride-unchecked", lambda m: (m.ones(2, 3), m.ones(3, 2).t(), {})),
    ("stride", lambda m: (m.ones(2, 3), m.ones(3, 2).t(), {"check_stride": True})),
    ("requires-grad", lambda m: (_t(m, [1., 2.], requires_grad=True), _t(m, [1., 2.]), {})),
    ("all-flags", lambda m: (_t(m, [1., 2.]), _t(m, [1., 2.05]),
                             {"rtol": 1e-3, "atol": 1e-3, "equal_nan": True,
                              "check_device": True, "check_layout": True})),
    ("loose-tolerances", lambda m: (_t(m, [1., 2.]), _t(m, [1., 2.05]),
                                    {"rtol": 0.1, "atol": 0.})),
    ("empty", lambda m: (_t(m, []), _t(m, []), {})),
    ("tensor-number", lambda m: (_t(m, [1.]), 1., {})),
    ("number-tensor", lambda m: (1., _t(m, [1.]), {})),
    ("ndarray-tensor", lambda m: (np.array([1., 2.]), _t(m, [1., 2.], "float64"), {})),
    ("ndarrays", lambda m: (np.array([1., 2.]), np.array([1., 2.5]), {})),
    ("subclass", lambda m: (m.nn.Parameter(m.ones(1)), m.ones(1), {})),
    ("subclass-refused", lambda m: (m.nn.Parameter(m.ones(1)), m.ones(1),
                                    {"allow_subclasses": False})),
    ("int-float", lambda m: (1, 1.0, {})),
    ("floats", lambda m: (1., 1.1, {})),
    ("ints", lambda m: (1, 2, {})),
    ("float-inf", lambda m: (1.0, INF, {})),
    ("infs", lambda m: (INF, INF, {})),
    ("numpy-scalars", lambda m: (np.float32(1.0), 1.0, {})),
    ("bools", lambda m: (True, False, {})),
    ("numpy-bool", lambda m: (np.bool_(True), True, {})),
    ("nones", lambda m: (None, None, {})),
    ("strings", lambda m: ("a", "a", {})),
    ("objects", lambda m: (object, object, {})),
    ("list-item", lambda m: ([_t(m, 1.), _t(m, 2.)], [_t(m, 1.), _t(m, 2.5)], {})),
    ("tuple-list", lambda m: ((1, 2), [1, 2], {})),
    ("lengths", lambda m: ([1., 2.], [1., 2., 3.], {})),
    ("nested-lengths", lambda m: ([[1., 2.]], [[1., 2., 3.]], {})),
    ("nested-item", lambda m: ([[_t(m, 1.)]], [[_t(m, 2.)]], {})),
    ("list-dict", lambda m: ([1.], {"a": 1.}, {})),
    ("list-number", lambda m: ([1.], 1., {})),
    ("mapping-item", lambda m: ({"a": _t(m, 1.)}, {"a": _t(m, 2.)}, {})),
    ("mapping-keys", lambda m: ({"a": _t(m, 1.)}, {"b": _t(m, 1.)}, {})),
    ("mapping-list", lambda m: ({"a": [1.]}, {"a": [1., 2.]}, {})),
    ("no-atol", lambda m: (_t(m, [1.]), _t(m, [1.]), {"rtol": 0.})),
    ("no-rtol", lambda m: (_t(m, [1.]), _t(m, [1.]), {"atol": 0.})),
    ("msg-str", lambda m: (_t(m, [1.]), _t(m, [2.]), {"msg": "custom"})),
    ("msg-callable", lambda m: ([_t(m, [1.])], [_t(m, [2.])], {"msg": lambda s: "X" + s})),
    ("msg-str-item", lambda m: ([_t(m, [1.])], [_t(m, [2.])], {"msg": "custom"})),
    ("msg-unused", lambda m: (_t(m, [1.]), _t(m, [1.]), {"msg": "custom"})),
]


def _outcome(m, fn):
    actual, expected, kw = fn(m)
    try:
        m.testing.assert_close(actual, expected, **kw)
    except Exception as e:
        # the classes named in a TypeError are retrograd's own
        text = str(e).replace("retrograd._tensor.tensor.", "torch.")
        return type(e), text.replace("retrograd.", "torch.")
    return None


@pytest.mark.parametrize("fn", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_assert_close_matches_torch(fn):
    assert _outcome(R, fn) == _outcome(torch, fn)


def test_assert_close_tolerance_edges_per_dtype():
    """Just inside and just outside each dtype's default tolerance, as PyTorch decides."""
    for dt, (rtol, atol) in [("float32", (1.3e-6, 1e-5)), ("float64", (1e-7, 1e-7)),
                             ("float16", (1e-3, 1e-5)), ("bfloat16", (0.016, 1e-5))]:
        for scale in (0.5, 0.99, 1.5, 3.0):
            delta = scale * (atol + rtol * 4.0)
            outs = []
            for m in (R, torch):
                def fn(m, delta=delta, dt=dt):
                    return _t(m, [4.0, 1.0], dt), _t(m, [4.0 + delta, 1.0], dt), {}
                outs.append(_outcome(m, fn))
            assert outs[0] == outs[1], (dt, scale)


MAKE = [
    ((2, 3), {"dtype": "float32"}),
    ((4,), {"dtype": "float64", "low": -1, "high": 1}),
    ((3, 2), {"dtype": "int64"}),
    ((5,), {"dtype": "uint8"}),
    ((5,), {"dtype": "int8", "low": -200, "high": 200}),
    ((6,), {"dtype": "bool"}),
    ((2, 2), {"dtype": "float32", "noncontiguous": True}),
    ((8,), {"dtype": "int32", "low": 0, "high": 2, "exclude_zero": True}),
    ((3,), {"dtype": "float32", "low": 0.5, "high": 2.5, "requires_grad": True}),
    ((2,), {"dtype": "float64", "low": -1e308, "high": 1e308}),
]


@pytest.mark.parametrize("shape,kw", MAKE, ids=[str(i) for i in range(len(MAKE))])
def test_make_tensor_matches_torch_seeded(shape, kw):
    res = []
    for m in (R, torch):
        m.manual_seed(7)
        args = dict(kw, dtype=getattr(m, kw["dtype"]))
        res.append(m.testing.make_tensor(*shape, device="cpu", **args))
    ours, theirs = res
    assert ours.dtype.__repr__() == repr(theirs.dtype)
    assert ours.shape == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(ours.detach().double().numpy(),
                                  theirs.detach().double().numpy())


MAKE_ERRORS = [
    ((2,), {"dtype": "int64", "requires_grad": True}),
    ((2,), {"dtype": "float32", "low": 2, "high": 1}),
    ((2,), {"dtype": "float32", "low": NAN}),
    ((2,), {"dtype": "uint8", "low": 300, "high": 400}),
    ((2,), {"dtype": "float32", "noncontiguous": True, "memory_format": "x"}),
]


@pytest.mark.parametrize("shape,kw", MAKE_ERRORS, ids=[str(i) for i in range(len(MAKE_ERRORS))])
def test_make_tensor_errors_match_torch(shape, kw):
    res = []
    for m in (R, torch):
        args = dict(kw, dtype=getattr(m, kw["dtype"]))
        with pytest.raises(ValueError) as e:
            m.testing.make_tensor(*shape, device="cpu", **args)
        res.append(str(e.value).replace("torch.", ""))
    assert res[0] == res[1]


def test_make_tensor_low_equal_high_warns_as_torch():
    for m in (R, torch):
        with pytest.warns(FutureWarning, match="low==high"):
            x = m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=1, high=1)
        assert x.tolist() == [1.0, 1.0]

