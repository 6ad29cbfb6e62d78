"""The distributions of the gamma family, the counts and the multivariate normals
(Gamma, Chi2, StudentT, Poisson, MultivariateNormal) against torch.distributions: values
and gradients on parameter grids with batch shapes, PyTorch's samples after the same seed,
pathwise rsample gradients through ``_standard_gamma``, sample moments and the KL pairs;
the sample test runs test_distributions.py's CASES too. Reuses that file's grid helpers."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import torch

import retrograd as rt
import retrograd.distributions as D
from test_distributions import CASES as BASE_CASES
from test_distributions import _build, _call, _close, _grads, _pair, _value_for

TD = torch.distributions

CASES = [
    ("gamma", lambda m, a, b: m.distributions.Gamma(a, b), [("pos", (2, 3)), ("pos", (3,))]),
    ("gamma_small", lambda m, a, b: m.distributions.Gamma(a, b),
     [("prob", (4,)), ("num:2.0", ())]),
    ("chi2", lambda m, a: m.distributions.Chi2(a), [("big", (2, 3))]),
    ("studentt", lambda m, a, b, c: m.distributions.StudentT(a, b, c),
     [("big", (2, 1)), ("real", (3,)), ("pos", (2, 3))]),
    ("studentt_heavy", lambda m, a: m.distributions.StudentT(a), [("pos", (2, 3))]),
    ("poisson", lambda m, a: m.distributions.Poisson(a), [("big", (2, 3))]),
    ("beta", lambda m, a, b: m.distributions.Beta(a, b), [("pos", (2, 3)), ("big", (3,))]),
    ("beta_number", lambda m, a: m.distributions.Beta(a, 0.7), [("prob", (4,))]),
    ("dirichlet", lambda m, a: m.distributions.Dirichlet(a), [("pos", (2, 3, 4))]),
    ("dirichlet_big", lambda m, a: m.distributions.Dirichlet(a), [("big", (3, 2))]),
    ("binomial", lambda m, n, a: m.distributions.Binomial(n, a),
     [("num:12.0", ()), ("prob", (2, 3))]),
    ("binomial_logits", lambda m, n, a: m.distributions.Binomial(n, logits=a),
     [("num:30.0", ()), ("real", (3,))]),
    ("negbinomial", lambda m, n, a: m.distributions.NegativeBinomial(n, a),
     [("pos", (3,)), ("prob", (2, 3))]),
    ("negbinomial_logits", lambda m, n, a: m.distributions.NegativeBinomial(n, logits=a),
     [("big", (2, 3)), ("real", (3,))]),
    ("multinomial", lambda m, a: m.distributions.Multinomial(7, a), [("pos", (2, 4))]),
    ("multinomial_logits", lambda m, a: m.distributions.Multinomial(5, logits=a),
     [("real", (3,))]),
    ("vonmises", lambda m, a, b: m.distributions.VonMises(a, b), [("real", (2, 3)), ("pos", (3,))]),
    ("vonmises_concentrated", lambda m, a, b: m.distributions.VonMises(a, b),
     [("real", (3,)), ("big", (2, 3))]),
]
METHODS = ["log_prob", "cdf", "entropy", "mean", "mode", "variance", "stddev"]
# PyTorch has no derivative of igamma in its first argument: Gamma.cdf's gradient is
# compared w.r.t. the rate and the value only
NO_GRAD = {("gamma", "cdf", 0), ("gamma_small", "cdf", 0), ("chi2", "cdf", 0)}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(case):
    tdist, rdist, tparams, rparams = _build(case)
    assert tuple(rdist.batch_shape) == tuple(tdist.batch_shape)
    assert tuple(rdist.event_shape) == tuple(tdist.event_shape)
    assert rdist.has_rsample == tdist.has_rsample
    for method in METHODS:
        value = _value_for(tdist, method) if method in ("log_prob", "cdf") else None
        continuous = value is not None and not tdist.support.is_discrete
        tvalue, rvalue = _pair(value, continuous) if value is not None else (None, None)
        try:
            expected = _call(tdist, method, tvalue)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                _call(rdist, method, rvalue)
            continue
        got = _call(rdist, method, rvalue)
        what = f"{case[0]}.{method}"
        _close(expected, got, what)
        keep = [i for i in range(len(tparams)) if (case[0], method, i) not in NO_GRAD]
        tp = [tparams[i] for i in keep] + ([tvalue] if continuous else [])
        rp = [rparams[i] for i in keep] + ([rvalue] if continuous else [])
        for i, (a, b) in enumerate(zip(_grads(expected, tp, torch), _grads(got, rp, rt))):
            _close(a, b, f"{what} grad {i}")


# every family's sampler against PyTorch's: the gamma family and the counts here draw
# through PyTorch's own samplers, bit for bit; test_distributions.py's CASES and the von
# Mises rejection sampler transform PyTorch's draws with NumPy's elementwise math (cos,
# acos, log, ...), whose last bit differs from PyTorch's for some draws
_ULP_CASES = {"vonmises", "vonmises_concentrated"}
SAMPLE_CASES = ([pytest.param(c, False, id=c[0]) for c in BASE_CASES]
                + [pytest.param(c, c[0] not in _ULP_CASES, id=c[0]) for c in CASES])


@pytest.mark.parametrize("case,exact", SAMPLE_CASES)
def test_samples_are_torchs_numbers_and_rsample_gradients(case, exact):
    tdist, rdist, tparams, rparams = _build(case)
    for shape in [(), (5,), (2, 3)]:
        torch.manual_seed(7)
        expected = tdist.sample(shape)
        rt.manual_seed(7)
        got = rdist.sample(shape)
        assert tuple(got.shape) == tuple(expected.shape)
        assert got.dtype.name == str(expected.dtype).split(".")[-1]
        if exact:
            np.testing.assert_array_equal(got.numpy(), expected.numpy())
        else:
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)
    if tdist.has_rsample:
        torch.manual_seed(3)
        rt.manual_seed(3)
        expected, got = tdist.rsample((4,)), rdist.rsample((4,))
        _close(expected, got, "rsample")
        for i, (a, b) in enumerate(zip(_grads(expected, tparams, torch),
                                       _grads(got, rparams, rt))):
            _close(a, b, f"rsample grad {i}")
    else:
        with pytest.raises(NotImplementedError):
            rdist.rsample()


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.Gamma(m.tensor([0.4, 2.0, 9.0]), m.tensor([1.0, 3.0, 0.5])),
    lambda m: m.distributions.Chi2(m.tensor([1.0, 5.0])),
    lambda m: m.distributions.StudentT(m.tensor([5.0, 9.0]), m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Poisson(m.tensor([0.5, 4.0, 30.0])),
    lambda m: m.distributions.Beta(m.tensor([0.5, 2.0, 9.0]), m.tensor([0.5, 3.0, 1.0])),
    lambda m: m.distributions.Dirichlet(m.tensor([0.3, 2.0, 5.0])),
    lambda m: m.distributions.Binomial(m.tensor([5.0, 40.0, 200.0]), m.tensor([0.3, 0.5, 0.9])),
    lambda m: m.distributions.NegativeBinomial(m.tensor([2.0, 7.5]), m.tensor([0.3, 0.6])),
    lambda m: m.distributions.Multinomial(9, m.tensor([0.2, 0.3, 0.5])),
], ids=["gamma", "chi2", "studentt", "poisson", "beta", "dirichlet", "binomial", "negbinomial",
        "multinomial"])
def test_float32_samples_are_torchs_bit_for_bit_and_have_the_moments(make):
    torch.manual_seed(2024)
    expected = make(torch).sample((4000,))
    rt.manual_seed(2024)
    dist = make(rt)
    got = dist.sample((4000,))
    assert got.numpy().tobytes() == expected.numpy().tobytes()
    samples = got.double()
    mean, var = dist.mean.double(), dist.variance.double()
    np.testing.assert_allclose(samples.mean(0).numpy(), mean.numpy(),
                               atol=5 * math.sqrt(var.max().item() / 4000))
    np.testing.assert_allclose(samples.var(0).numpy(), var.numpy(), rtol=0.2)


def test_von_mises_float32_samples_and_circular_moments():
    def make(m):
        return m.distributions.VonMises(m.tensor([0.5, -2.0, 3.0]), m.tensor([4.0, 0.3, 9.0]))
    torch.manual_seed(8)
    expected = make(torch).sample((3000,))
    rt.manual_seed(8)
    dist = make(rt)
    got = dist.sample((3000,))
    assert got.numpy().tobytes() == expected.numpy().tobytes()
    x = got.double().numpy()
    resultant = np.exp(1j * x).mean(0)
    np.testing.assert_allclose(np.angle(resultant), dist.mean.numpy(), atol=0.1)
    np.testing.assert_allclose(1 - np.abs(resultant), dist.variance.numpy(), atol=0.03)


def test_standard_gamma_gradient_is_torchs_in_every_region():
    # the series (x < 0.8), the saddle point (alpha > 8, near and far from x = alpha) and
    # the rational fit (Note [Implicit gamma gradient])
    x = np.array([0.01, 0.5, 0.79, 0.85, 1.5, 3.0, 7.0, 9.5, 12.0, 40.0])
    alpha = np.array([0.2, 0.7, 1.5, 3.0, 7.5, 8.5, 10.0, 12.0, 30.0, 50.0])
    xs, alphas = np.meshgrid(x, alpha)
    for dtype in ("float64", "float32"):
        expected = torch._standard_gamma_grad(torch.tensor(alphas).to(getattr(torch, dtype)),
                                              torch.tensor(xs).to(getattr(torch, dtype)))
        got = rt._standard_gamma_grad(rt.tensor(alphas).to(getattr(rt, dtype)),
                                      rt.tensor(xs).to(getattr(rt, dtype)))
        assert got.dtype.name == dtype
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-13)
    a = rt.tensor([2.0, 0.5], dtype=rt.float64, requires_grad=True)
    rt.manual_seed(0)
    x = rt._standard_gamma(a)
    assert x.grad_fn.name() == "StandardGammaBackward0"
    (g,) = rt.autograd.grad(x.sum(), a, create_graph=True)
    with pytest.raises(NotImplementedError, match="the derivative for '_standard_gamma_grad' "
                                                  "is not implemented"):
        g.sum().backward()
    with pytest.raises(NotImplementedError, match="\"gamma_cpu\" not implemented for 'Long'"):
        rt._standard_gamma(rt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        rt.poisson(rt.tensor([-1.0]))
    # PyTorch draws for negative and nan concentrations too (a nan sample, then tiny)
    edge = [-1.0, 2.5, float("nan"), 0.7, 0.0, 3.0, -0.5, 1e-3]
    for dtype in ("float64", "float32"):
        torch.manual_seed(3)
        expected = (torch._standard_gamma(torch.tensor(edge, dtype=getattr(torch, dtype))),
                    torch.rand(3))
        rt.manual_seed(3)
        got = (rt._standard_gamma(rt.tensor(edge, dtype=getattr(rt, dtype))), rt.rand(3))
        for a, b in zip(expected, got):
            np.testing.assert_array_equal(b.numpy(), a.numpy())


def _spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


# (loc shape, matrix shape): batch shapes that broadcast both ways
MVN_SHAPES = [((3,), (3, 3)), ((4, 1, 3), (2, 3, 3)), ((2, 3), (3, 3))]


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("shapes", MVN_SHAPES, ids=["plain", "broadcast", "batched_loc"])
def test_multivariate_normal_matches_torch(kind, shapes):
    rng = np.random.default_rng(zlib.crc32(repr((kind, shapes)).encode()))
    loc = rng.standard_normal(shapes[0])
    mat = _spd(rng, shapes[1])
    if kind == "scale_tril":
        mat = np.linalg.cholesky(mat)
    (tl, rl), (tm, rm) = _pair(loc), _pair(mat)
    tdist = TD.MultivariateNormal(tl, **{kind: tm})
    rdist = D.MultivariateNormal(rl, **{kind: rm})
    assert (tuple(rdist.batch_shape), tuple(rdist.event_shape)) == (
        tuple(tdist.batch_shape), tuple(tdist.event_shape))
    value = _value_for(tdist, "log_prob")
    tv, rv = _pair(value)
    for method in ["log_prob", "entropy", "mean", "mode", "variance", "stddev",
                   "covariance_matrix", "precision_matrix", "scale_tril"]:
        expected = _call(tdist, method, tv)
        got = _call(rdist, method, rv)
        _close(expected, got, method)
        extra = ([tv], [rv]) if method == "log_prob" else ([], [])
        for i, (a, b) in enumerate(zip(_grads(expected, [tl, tm] + extra[0], torch),
                                       _grads(got, [rl, rm] + extra[1], rt))):
            _close(a, b, f"{method} grad {i}")
    torch.manual_seed(3)
    rt.manual_seed(3)
    expected, got = tdist.rsample((2,)), rdist.rsample((2,))
    _close(expected, got, "rsample")
    for i, (a, b) in enumerate(zip(_grads(expected, [tl, tm], torch),
                                   _grads(got, [rl, rm], rt))):
        _close(a, b, f"rsample grad {i}")
    expanded = rdist.expand((5,) + tuple(rdist.batch_shape))
    texpanded = tdist.expand((5,) + tuple(tdist.batch_shape))
    _close(texpanded.log_prob(tv[0]), expanded.log_prob(rv[0]), "expanded log_prob")


def test_multivariate_normal_samples_and_moments():
    cov = [[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]]
    loc = [1.0, -2.0, 0.5]
    torch.manual_seed(11)
    expected = TD.MultivariateNormal(torch.tensor(loc), torch.tensor(cov)).sample((4000,))
    rt.manual_seed(11)
    got = D.MultivariateNormal(rt.tensor(loc), rt.tensor(cov)).sample((4000,))
    assert got.dtype == rt.float32 and tuple(got.shape) == (4000, 3)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    x = got.double().numpy()
    np.testing.assert_allclose(x.mean(0), loc, atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.1)


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2), scale_tril=m.eye(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(()), m.eye(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), scale_tril=m.ones(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [0.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), scale_tril=-m.eye(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)).log_prob(m.zeros(3)),
])
def test_multivariate_normal_errors_are_torchs(make):
    with pytest.raises(Exception) as expected:
        make(torch)
    with pytest.raises(type(expected.value)) as got:
        make(rt)
    assert str(got.value).startswith(str(expected.value).split("\n")[0][:60])


def test_matrix_constraints_match_torch():
    rng = np.random.default_rng(0)
    mats = np.stack([_spd(rng, (3, 3)), -_spd(rng, (3, 3)), np.diag([1.0, 0.0, 2.0]),
                     rng.standard_normal((3, 3))])
    for name in ("positive_definite", "positive_semidefinite"):
        r, t = getattr(D.constraints, name), getattr(TD.constraints, name)
        assert repr(r) == repr(t) and r.event_dim == t.event_dim == 2
        np.testing.assert_array_equal(r.check(rt.tensor(mats)).numpy(),
                                      t.check(torch.tensor(mats)).numpy())


@pytest.mark.parametrize("shapes", [((3,), (3, 2), (3,)), ((2, 1, 3), (4, 3, 1), (2, 1, 3))],
                         ids=["plain", "broadcast"])
def test_lowrank_multivariate_normal_matches_torch(shapes):
    rng = np.random.default_rng(zlib.crc32(repr(shapes).encode()))
    arrays = [rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1]),
              rng.uniform(0.5, 2.0, shapes[2])]
    pairs = [_pair(a) for a in arrays]
    tp, rp = [p[0] for p in pairs], [p[1] for p in pairs]
    tdist, rdist = TD.LowRankMultivariateNormal(*tp), D.LowRankMultivariateNormal(*rp)
    assert tuple(rdist.batch_shape) == tuple(tdist.batch_shape)
    tv, rv = _pair(_value_for(tdist, "log_prob"))
    for method in ["log_prob", "entropy", "mean", "variance", "covariance_matrix",
                   "precision_matrix", "scale_tril"]:
        expected, got = _call(tdist, method, tv), _call(rdist, method, rv)
        _close(expected, got, method)
        extra = ([tv], [rv]) if method == "log_prob" else ([], [])
        for i, (a, b) in enumerate(zip(_grads(expected, tp + extra[0], torch),
                                       _grads(got, rp + extra[1], rt))):
            _close(a, b, f"{method} grad {i}")
    torch.manual_seed(5)
    rt.manual_seed(5)
    expected, got = tdist.rsample((3,)), rdist.rsample((3,))
    _close(expected, got, "rsample")
    for i, (a, b) in enumerate(zip(_grads(expected, tp, torch), _grads(got, rp, rt))):
        _close(a, b, f"rsample grad {i}")
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors with shape"):
        D.LowRankMultivariateNormal(rt.zeros(3), rt.zeros(3, 1), rt.ones(2))


def test_positive_definite_transform_matches_torch():
    tx, rx = _pair(np.random.default_rng(3).standard_normal((2, 3, 3)))
    for name in ("positive_definite", "positive_semidefinite"):
        tt = TD.transform_to(getattr(TD.constraints, name))
        rtr = D.transform_to(getattr(D.constraints, name))
        assert type(rtr).__name__ == type(tt).__name__ == "PositiveDefiniteTransform"
        ty, ry = tt(tx), rtr(rx)
        _close(ty, ry, "forward")
        _close(tt.inv(ty), rtr.inv(ry), "inverse")
        for a, b in zip(_grads(ty, [tx], torch), _grads(ry, [rx], rt)):
            _close(a, b, "grad")
        assert bool(getattr(D.constraints, name).check(ry).all())


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.Gamma(m.tensor([1.0, -1.0]), m.tensor([1.0, 1.0])),
    lambda m: m.distributions.Chi2(m.tensor([0.0])),
    lambda m: m.distributions.StudentT(m.tensor([-2.0])),
    lambda m: m.distributions.Beta(m.tensor([0.5]), m.tensor([-0.5])),
    lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Poisson(m.tensor([-1.0])),
    lambda m: m.distributions.Binomial(3, m.tensor([1.5])),
    lambda m: m.distributions.Binomial(m.tensor([2.5]), m.tensor([0.5])),
    lambda m: m.distributions.NegativeBinomial(m.tensor([2.0]), m.tensor([1.0])),
    lambda m: m.distributions.Multinomial(3, m.tensor([0.5, -0.5])),
    lambda m: m.distributions.VonMises(m.tensor([0.0]), m.tensor([0.0])),
    lambda m: m.distributions.Gamma(m.tensor([1.0]), 1.0).log_prob(m.tensor([-1.0])),
    lambda m: m.distributions.Beta(m.tensor([1.0]), 1.0).log_prob(m.tensor([1.5])),
    lambda m: m.distributions.Poisson(m.tensor([1.0])).log_prob(m.tensor([0.5])),
    lambda m: m.distributions.Binomial(3, m.tensor([0.5])).log_prob(m.tensor([4.0])),
    lambda m: m.distributions.Multinomial(3, m.tensor([0.5, 0.5])).log_prob(m.tensor([3.0, 1.0])),
    lambda m: m.distributions.Binomial(m.tensor([0.5])),
])
def test_validate_args_errors_are_torchs(make):
    with pytest.raises(ValueError) as expected:
        make(torch)
    with pytest.raises(ValueError) as got:
        make(rt)
    assert str(got.value).startswith(str(expected.value)), (str(got.value), str(expected.value))


def test_unsupported_cases_raise_torchs_errors():
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(rt.tensor(3.0), rt.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by "
                                                  "`entropy`"):
        D.Binomial(rt.tensor([2.0, 3.0]), rt.tensor([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError, match="KL between Binomials where q.total_count > "
                                                  "p.total_count is not implemented"):
        D.kl_divergence(D.Binomial(2, rt.tensor([0.5])), D.Binomial(3, rt.tensor([0.5])))
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for "
                                         "count, got: Long"):
        rt.binomial(rt.tensor([5]), rt.tensor([0.3]))
    x = rt.tensor([1.0, 2.0, 3.0], dtype=rt.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_sample_dirichlet is not "
                                           "implemented"):
        rt._sample_dirichlet(x).sum().backward()
