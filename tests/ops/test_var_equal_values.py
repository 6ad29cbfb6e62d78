"""var and std of slices of equal values, against torch (Note [var of equal values]),
and torch's degrees-of-freedom warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd.ops.kernels.var import var_kernel


def _run(m, x, fn):
    t = m.tensor(x, requires_grad=True)
    out = fn(t)
    out.sum().backward()
    return out.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("which", ["var", "std"])
@pytest.mark.filterwarnings("error::RuntimeWarning")  # (std's 0/0 is masked, silently)
def test_equal_slices_along_a_dim_are_exactly_zero(dtype, which):
    rng = np.random.default_rng(0)
    for v in rng.standard_normal(40):
        for n in (3, 5, 7, 33):
            x = np.full((4, n), v).astype(dtype)
            x[1] = rng.standard_normal(n)  # one slice that is not constant
            fn = (lambda t: getattr(t, which)(1))  # noqa: E731
            got, want = _run(R, x, fn), _run(torch, x, fn)
            np.testing.assert_array_equal(got[0] == 0, want[0] == 0)
            np.testing.assert_array_equal(got[0][[0, 2, 3]], want[0][[0, 2, 3]])
            np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
            if which == "std":  # std's gradient is 0 where the std is 0 (torch masks it)
                np.testing.assert_array_equal(got[1][[0, 2, 3]], want[1][[0, 2, 3]])
            np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


def test_fuzz_seed_702790():
    # the campaign's program: var over an expanded dim, then a mask of what is > 0
    x = [[-0.334, -1.717, -0.036], [-1.02, 0.957, 1.947], [1.682, -1.195, 0.708]]
    outs = []
    for m in (R, torch):
        v = m.tensor(x, dtype=m.float64).unsqueeze(-3).expand((3, 3, 3)).var(-3, correction=0)
        outs.append(v.masked_fill(v > 0, 2.0).numpy())
    np.testing.assert_array_equal(*outs)


def test_what_stays_as_it_was():
    # a one-number result of float32/float64 is PyTorch's two-pass one: not zeroed
    a = np.full(3, 1.1)
    plain = np.add.reduce((a - a.mean()) ** 2) / 2
    assert var_kernel(a, (None, False, 1)) == plain
    for m in (R, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inf_nan = m.tensor([[float("inf")] * 3, [float("nan")] * 3, [5.0] * 3]).var(1)
            single = m.tensor([[1.0], [2.0]]).var(1)  # no degrees of freedom: nan
        half = m.tensor([[1.0, 1.0, 1.0]] * 2, dtype=m.float16).var(1)
        np.testing.assert_array_equal(inf_nan.numpy(), [np.nan, np.nan, 0.0])
        np.testing.assert_array_equal(single.numpy(), [np.nan, np.nan])
        np.testing.assert_array_equal(half.numpy(), [0.0, 0.0])


def test_under_vmap_a_per_sample_reduction_is_welford():
    x = np.full((3, 4), 1.1)
    got = R.func.vmap(lambda r: r.var())(R.tensor(x))
    want = torch.func.vmap(lambda r: r.var())(torch.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.tensor([[1.0], [2.0]]).std(1),
    lambda m: m.tensor([1.0]).var(),
    lambda m: m.tensor([1.0, 2.0]).var(correction=2),
    lambda m: m.var_mean(m.tensor([1.0])),
    lambda m: m.std_mean(m.tensor([1.0]), dim=0),
    lambda m: m.zeros(3, 0).var(1),
])
def test_degrees_of_freedom_warning_as_torch(call):
    def caught(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(m)
        return [str(x.message) for x in w if "degrees of freedom" in str(x.message)]
    want, got = caught(torch), caught(R)
    assert len(want) == len(got) == 1
    assert got[0].startswith(want[0].split(" (Triggered")[0])


def test_no_warning_with_degrees_of_freedom_left():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R.tensor([1.0, 2.0]).var(correction=1.5)
        R.tensor([[1.0, 2.0]]).std(1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_is_welford_even_for_one_number(dtype):
    # PyTorch's two-pass path is for float32/float64 only: a half-precision full
    # reduction is Welford's too, exactly 0 over equal values
    for v in (1.1, 0.3, 7.7, 0.1, -2.3):
        for n in (3, 5, 7, 33):
            for f in (lambda x: x.var(), lambda x: x.std(), lambda x: x.expand(2, -1).var(1)):
                got = f(R.full((n,), v, dtype=getattr(R, dtype)))
                want = f(torch.full((n,), v, dtype=getattr(torch, dtype)))
                np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
