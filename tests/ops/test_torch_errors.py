"""Errors match PyTorch's (issue 12): the same exception type, PyTorch's key wording, and
retrograd's added cause and fix; and the edge cases where PyTorch returns a result
(empty softmax, split of a size-0 dim, view of an advanced-indexing result, flatten of a
1-D tensor) return the same result.

Each error case runs under torch 2.13 too, so a change of PyTorch's type or wording shows
up here rather than in a user's code.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _raise(m, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(m)
        except Exception as e:
            return e
    raise AssertionError(f"{m.__name__} raised nothing")


def _i(m, v):
    return m.tensor(v)


# (id, fn(m), key phrase of PyTorch's message)
ERRORS = [
    # B. integer division by zero
    ("floor_divide-zero", lambda m: _i(m, [5, 3]) // _i(m, [0, 1]), "ZeroDivisionError"),
    ("floor_divide-scalar-zero", lambda m: _i(m, [5, 3]) // 0, "ZeroDivisionError"),
    ("rfloordiv-zero", lambda m: 5 // _i(m, [0, 1]), "ZeroDivisionError"),
    ("remainder-zero", lambda m: _i(m, [5, 3]) % _i(m, [0, 1]), "ZeroDivisionError"),
    ("remainder-scalar-zero", lambda m: m.remainder(_i(m, [5, 3]), 0), "ZeroDivisionError"),
    ("remainder-uint8-zero", lambda m: m.tensor([5], dtype=m.uint8) % m.tensor([0],
                                                                             dtype=m.uint8),
     "ZeroDivisionError"),
    ("fmod-zero", lambda m: m.fmod(_i(m, [5, 3]), _i(m, [0, 1])), "ZeroDivisionError"),
    ("fmod-scalar-zero", lambda m: m.fmod(_i(m, [5, 3]), 0), "ZeroDivisionError"),
    ("div-floor-zero", lambda m: m.div(_i(m, [5, 3]), _i(m, [0, 1]), rounding_mode="floor"),
     "ZeroDivisionError"),
    ("div-trunc-zero", lambda m: m.div(_i(m, [5, 3]), _i(m, [0, 1]), rounding_mode="trunc"),
     "ZeroDivisionError"),
    ("celu-alpha-zero", lambda m: m.nn.functional.celu(m.ones(2), alpha=0.0),
     "ZeroDivisionError"),
    # C. PyTorch's types and wording
    ("permute-duplicate", lambda m: m.zeros(2, 3).permute(0, 0),
     "permute(): duplicate dims are not allowed."),
    ("permute-duplicate-negative", lambda m: m.zeros(2, 3).permute(1, -1),
     "duplicate dims are not allowed"),
    ("where-broadcast", lambda m: m.where(m.ones(3, dtype=m.bool), m.zeros(3), m.zeros(4)),
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    ("clamp-broadcast", lambda m: m.clamp(m.zeros(3), m.zeros(4), m.ones(3)),
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    ("tensor-ragged", lambda m: m.tensor([[1, 2], [3]]),
     "expected sequence of length 2 at dim 1 (got 1)"),
    ("tensor-ragged-deep", lambda m: m.tensor([[[1], [2]], [[1], [2, 3]]]),
     "expected sequence of length 1 at dim 2 (got 2)"),
    ("tensor-ragged-dtype", lambda m: m.tensor([[1.0, 2.0], [3.0]], dtype=m.float32),
     "expected sequence of length 2 at dim 1 (got 1)"),
    ("tensor-not-a-sequence", lambda m: m.tensor([[1, 2], 3]), "not a sequence"),
    ("tensor-extra-depth", lambda m: m.tensor([1, [2]]),
     "'list' object cannot be interpreted as an integer"),
    ("bool-mask-length", lambda m: m.zeros(3)[m.tensor([True, False])],
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] "
     "at index 0"),
    ("bool-mask-second-dim", lambda m: m.zeros(3, 4)[:, m.tensor([True, False])],
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
     "[3, 4] at index 1"),
    ("bool-mask-2d", lambda m: m.zeros(3, 2)[m.tensor([[True, False]])],
     "The shape of the mask [1, 2] at index 0 does not match"),
    ("int-pow-negative", lambda m: _i(m, [1, 2]) ** -1,
     "Integers to negative integer powers are not allowed."),
    ("int-pow-negative-fn", lambda m: m.pow(_i(m, [1, 2]), -2),
     "Integers to negative integer powers are not allowed."),
    ("cat-empty", lambda m: m.cat([]), "expected a non-empty list of Tensors"),
    ("stack-empty", lambda m: m.stack([]), "stack expects a non-empty TensorList"),
    ("gather-out-of-range", lambda m: m.gather(m.zeros(2, 3), 1, _i(m, [[0, 3]])),
     "index 3 is out of bounds for dimension 1 with size 3"),
    ("gather-negative", lambda m: m.gather(m.zeros(2, 3), 1, _i(m, [[0, -1]])),
     "index -1 is out of bounds for dimension 1 with size 3"),
    ("scatter-out-of-range", lambda m: m.zeros(2, 3).scatter(1, _i(m, [[0, 5]]), 1.0),
     "index 5 is out of bounds for dimension 1 with size 3"),
    ("scatter_add-out-of-range",
     lambda m: m.zeros(2, 3).scatter_add(0, _i(m, [[0, 2]]), m.ones(1, 2)),
     "index 2 is out of bounds for dimension 0 with size 2"),
    ("dtype-string-zeros", lambda m: m.zeros(2, dtype="float32"),
     "argument 'dtype' must be torch.dtype, not str"),
    ("dtype-string-tensor", lambda m: m.tensor([1.0], dtype="float64"),
     "argument 'dtype' must be torch.dtype, not str"),
    ("chunk-zero-chunks", lambda m: m.zeros(4).chunk(0),
     "chunk expects `chunks` to be greater than 0, got: 0"),
]


@pytest.mark.parametrize("fn,phrase", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_error_matches_torch(fn, phrase):
    want = _raise(torch, fn)
    got = _raise(R, fn)
    assert type(got) is type(want), f"retrograd raised {type(got).__name__}: {got}; torch " \
                                    f"raised {type(want).__name__}: {want}"
    assert phrase in str(want), f"torch's wording changed: {want}"
    assert phrase in str(got), got
    assert len(str(got)) > len(phrase) + 20, f"no cause or fix added: {got}"


def test_dtype_string_to_is_a_type_error():
    for m in (torch, R):
        with pytest.raises(TypeError):
            m.zeros(2).to(dtype="float32")


def test_integer_tensor_exponent_may_be_negative():
    # PyTorch refuses a negative Python int exponent but computes a tensor one
    for m in (torch, R):
        r = _i(m, [1, 2, -1, 0]) ** m.tensor(-1)
        assert r.tolist() == [1, 0, -1, 0]
    assert (_i(R, [4, 1]) // _i(R, [2, 1])).tolist() == [2, 1]
    assert (R.tensor([5.0, -3.0, 0.0]) // 0.0).numpy().tolist()[:2] == [float("inf"),
                                                                           float("-inf")]


# results where retrograd used to raise or differ
def _shapes(r):
    return [tuple(t.shape) for t in r] if isinstance(r, tuple) else tuple(r.shape)


RESULTS = [
    ("softmax-empty", lambda m: m.softmax(m.zeros(0), 0)),
    ("softmax-empty-dim", lambda m: m.softmax(m.zeros(2, 0), 1)),
    ("log_softmax-empty", lambda m: m.log_softmax(m.zeros(0), 0)),
    ("log_softmax-empty-dim", lambda m: m.log_softmax(m.zeros(2, 0), 1)),
    ("logsumexp-empty", lambda m: m.logsumexp(m.zeros(0), 0)),
    ("logsumexp-empty-dim", lambda m: m.logsumexp(m.zeros(2, 0), 1)),
    ("logsumexp-empty-keepdim", lambda m: m.logsumexp(m.zeros(2, 0), 1, keepdim=True)),
    ("split-size-0-dim", lambda m: m.zeros(0, 3).split(2)),
    ("split-size-0-dim1", lambda m: m.zeros(3, 0).split(2, dim=1)),
    ("chunk-size-0-dim", lambda m: m.zeros(0, 3).chunk(2)),
    ("chunk-size-0-dim1", lambda m: m.zeros(3, 0).chunk(3, 1)),
    ("split-sizes-0-dim", lambda m: m.zeros(0, 3).split([0, 0])),
    ("chunk-uneven", lambda m: m.zeros(5, 3).chunk(4)),
    ("view-after-index-dim1", lambda m: m.arange(12.0).reshape(4, 3)[:, m.tensor([0, 2])]
     .view(-1)),
    ("view-after-index-middle", lambda m: m.arange(24.0).reshape(2, 4, 3)[:, m.tensor([0, 2])]
     .view(-1)),
    ("view-after-two-indices", lambda m: m.arange(24.0).reshape(2, 4, 3)
     [:, m.tensor([0, 2]), m.tensor([1, 1])].view(-1)),
    ("view-after-mask", lambda m: m.arange(12.0).reshape(4, 3)
     [m.tensor([True, False, True, False])].view(-1)),
    ("index-0d", lambda m: m.arange(3.0)[m.tensor(1)]),
    ("flatten-0d", lambda m: m.tensor(3.0).flatten()),
    ("flatten-same-dim", lambda m: m.zeros(2, 3).flatten(1, 1)),
]


@pytest.mark.parametrize("fn", [c[1] for c in RESULTS], ids=[c[0] for c in RESULTS])
def test_result_matches_torch(fn):
    want, got = fn(torch), fn(R)
    assert _shapes(got) == _shapes(want)
    ws = want if isinstance(want, tuple) else (want,)
    gs = got if isinstance(got, tuple) else (got,)
    for g, w in zip(gs, ws):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_empty_softmax_backward():
    for m in (torch, R):
        x = m.zeros(2, 0, requires_grad=True)
        m.softmax(x, 1).sum().backward()
        assert tuple(x.grad.shape) == (2, 0)


def test_flatten_identity():
    for m in (torch, R):
        x = m.zeros(3)
        assert x.flatten() is x
        assert x.flatten(0, -1) is x
        y = m.zeros(2, 3)
        assert y.flatten(1, 1) is y
        assert y.flatten() is not y
        z = m.tensor(1.0)
        assert z.flatten() is not z and tuple(z.flatten().shape) == (1,)


def test_advanced_index_result_is_contiguous():
    x = R.arange(24.0).reshape(2, 4, 3)
    r = x[:, R.tensor([0, 2])]
    assert r.is_contiguous()
    v = r.view(-1)
    assert v.tolist() == torch.arange(24.0).reshape(2, 4, 3)[:, torch.tensor([0, 2])].view(-1) \
        .tolist()
