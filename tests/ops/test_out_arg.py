"""``out=`` arguments (Note [out= arguments] in ops/out_arg.py), compared with torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R

CALLS = [
    ("add", lambda m, x, o: m.add(x, 2.0, out=o)),
    ("add_alpha", lambda m, x, o: m.add(x, x, alpha=3, out=o)),
    ("sub", lambda m, x, o: m.sub(x, 1, out=o)),
    ("mul", lambda m, x, o: m.mul(x, x, out=o)),
    ("div", lambda m, x, o: m.div(x, 4, out=o)),
    ("div_floor", lambda m, x, o: m.div(x, 0.3, rounding_mode="floor", out=o)),
    ("sin", lambda m, x, o: m.sin(x, out=o)),
    ("exp", lambda m, x, o: m.exp(x, out=o)),
    ("normalize", lambda m, x, o: m.nn.functional.normalize(x, dim=0, out=o)),
]


def _pair(dtype=np.float32, shape=(3,)):
    a = np.linspace(-1, 2, int(np.prod(shape))).reshape(shape).astype(np.float32)
    return (R.tensor(a), R.zeros(shape, dtype=getattr(R, np.dtype(dtype).name))), \
        (torch.tensor(a), torch.zeros(shape, dtype=getattr(torch, np.dtype(dtype).name)))


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_is_written_and_returned(name, call, dtype):
    (x, o), (tx, to) = _pair(dtype)
    r, tr = call(R, x, o), call(torch, tx, to)
    assert r is o and tr is to
    assert o.dtype == R.float64 if dtype == np.float64 else o.dtype == R.float32
    if name in ("sin", "exp"):  # NumPy's and PyTorch's float32 kernels differ by an ulp
        np.testing.assert_allclose(o.numpy(), to.numpy(), rtol=1e-6)
    else:
        np.testing.assert_array_equal(o.numpy(), to.numpy())


def test_out_bumps_version_and_keeps_views():
    x = R.ones(3)
    o = R.zeros(3)
    v = o[1:]
    R.add(x, 1, out=o)
    assert o._version == 1
    np.testing.assert_array_equal(v.numpy(), [2.0, 2.0])


def test_out_refuses_autograd_like_torch():
    for m in (R, torch):
        with pytest.raises(RuntimeError, match=r"sin\(\): functions with out=\.\.\. arguments "
                                               "don't support automatic differentiation"):
            m.sin(m.ones(2, requires_grad=True), out=m.zeros(2))
        with m.no_grad():
            m.sin(m.ones(2, requires_grad=True), out=m.zeros(2))


def test_out_cast_errors_like_torch():
    for m in (R, torch):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type Long"):
            m.add(m.ones(2), 1, out=m.zeros(2, dtype=m.int64))


def test_out_resized_with_torchs_warning():
    for m in (R, torch):
        o = m.zeros(5)
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            m.mul(m.ones(2), 3, out=o)
        assert tuple(o.shape) == (2,) and o.tolist() == [3.0, 3.0]
        e = m.zeros(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.mul(m.ones(2), 3, out=e)  # an empty out is resized silently
        assert tuple(e.shape) == (2,)


@pytest.mark.parametrize("fn", ["zeros", "ones"])
def test_creation_out(fn):
    o, to = R.empty(3, dtype=R.int64), torch.empty(3, dtype=torch.int64)
    r, tr = getattr(R, fn)(2, 2, out=o), getattr(torch, fn)(2, 2, out=to)
    assert r is o and o.dtype == R.int64
    np.testing.assert_array_equal(o.numpy(), tr.numpy())
    for m in (R, torch):
        with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out "
                                               r"parameter \(Long\)"):
            getattr(m, fn)(2, out=m.empty(2, dtype=m.int64), dtype=m.float32)
