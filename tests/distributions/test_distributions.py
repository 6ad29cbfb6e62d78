"""retrograd.distributions against torch.distributions: values and gradients of log_prob,
entropy, cdf, icdf and the moments on parameter grids (batch shapes, broadcasting, number
parameters), validate_args errors, KL divergences, transforms and the constraint registry.
The samples of CASES (shapes, PyTorch's numbers after the same seed, pathwise rsample
gradients) are checked with the other families' by test_distributions_gamma_counts_mvn.py."""

from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pytest
import torch

import retrograd as rt
import retrograd.distributions as D

TD = torch.distributions
RNG = np.random.default_rng(1234)


def _param(kind, shape, rng=RNG):
    """A parameter array of ``kind`` (real, pos, prob, low, num:<x>) and ``shape``."""
    if kind.startswith("num:"):
        return float(kind[4:])
    draw = {"real": lambda: rng.standard_normal(shape),
            "pos": lambda: rng.uniform(0.5, 2.0, shape),
            "prob": lambda: rng.uniform(0.1, 0.9, shape),
            "low": lambda: rng.uniform(-2.0, -0.5, shape),
            "big": lambda: rng.uniform(2.5, 4.0, shape)}[kind]
    return np.asarray(draw(), dtype=np.float64)


def _pair(value, requires_grad=True):
    """The same parameter as a torch tensor and a retrograd tensor (numbers stay numbers)."""
    if isinstance(value, float):
        return value, value
    return (torch.tensor(value, requires_grad=requires_grad),
            rt.tensor(value, dtype=rt.float64, requires_grad=requires_grad))


def _sb_normal(lib, a, b):
    dists = lib.distributions
    base = dists.Independent(dists.Normal(a, b), 1)
    return dists.TransformedDistribution(base, dists.StickBreakingTransform())


# id, constructor(library, *params), [(kind, shape) per parameter]
CASES = [
    ("normal", lambda m, a, b: m.distributions.Normal(a, b), [("real", (3, 1)), ("pos", (4,))]),
    ("normal_number", lambda m, a, b: m.distributions.Normal(a, b),
     [("num:0.3", ()), ("pos", (2, 3))]),
    ("uniform", lambda m, a, b: m.distributions.Uniform(a, b), [("low", (2, 3)), ("pos", (3,))]),
    ("exponential", lambda m, a: m.distributions.Exponential(a), [("pos", (2, 3))]),
    ("laplace", lambda m, a, b: m.distributions.Laplace(a, b), [("real", (3,)), ("pos", (2, 1))]),
    ("cauchy", lambda m, a, b: m.distributions.Cauchy(a, b), [("real", (2, 3)), ("pos", (3,))]),
    ("lognormal", lambda m, a, b: m.distributions.LogNormal(a, b),
     [("real", (3,)), ("pos", (2, 3))]),
    ("halfnormal", lambda m, a: m.distributions.HalfNormal(a), [("pos", (2, 3))]),
    ("halfcauchy", lambda m, a: m.distributions.HalfCauchy(a), [("pos", (3,))]),
    ("gumbel", lambda m, a, b: m.distributions.Gumbel(a, b), [("real", (2, 3)), ("pos", (3,))]),
    ("bernoulli_probs", lambda m, a: m.distributions.Bernoulli(probs=a), [("prob", (2, 3))]),
    ("bernoulli_logits", lambda m, a: m.distributions.Bernoulli(logits=a), [("real", (3,))]),
    ("categorical_probs", lambda m, a: m.distributions.Categorical(probs=a), [("pos", (2, 4))]),
    ("categorical_logits", lambda m, a: m.distributions.Categorical(logits=a),
     [("real", (3, 4))]),
    ("onehot_probs", lambda m, a: m.distributions.OneHotCategorical(probs=a), [("pos", (2, 3))]),
    ("onehot_logits", lambda m, a: m.distributions.OneHotCategorical(logits=a),
     [("real", (4,))]),
    ("geometric_probs", lambda m, a: m.distributions.Geometric(probs=a), [("prob", (2, 3))]),
    ("geometric_logits", lambda m, a: m.distributions.Geometric(logits=a), [("real", (3,))]),
    ("contbern_probs", lambda m, a: m.distributions.ContinuousBernoulli(probs=a),
     [("prob", (2, 3))]),
    ("contbern_logits", lambda m, a: m.distributions.ContinuousBernoulli(logits=a),
     [("real", (4,))]),
    ("relaxed_bernoulli", lambda m, t, a: m.distributions.RelaxedBernoulli(t, probs=a),
     [("pos", ()), ("prob", (2, 3))]),
    ("relaxed_onehot", lambda m, t, a: m.distributions.RelaxedOneHotCategorical(t, logits=a),
     [("pos", ()), ("real", (2, 4))]),
    ("weibull", lambda m, a, b: m.distributions.Weibull(a, b), [("pos", (2, 3)), ("pos", (3,))]),
    ("pareto", lambda m, a, b: m.distributions.Pareto(a, b), [("pos", (2, 3)), ("pos", (3,))]),
    ("pareto_heavy", lambda m, a, b: m.distributions.Pareto(a, b),
     [("pos", (3,)), ("num:0.8", ())]),
    ("mixture_normal", lambda m, w, a, b: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(w), m.distributions.Normal(a, b)),
     [("pos", (2, 3)), ("real", (2, 3)), ("pos", (3,))]),
    ("mixture_independent", lambda m, w, a, b: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(logits=w),
        m.distributions.Independent(m.distributions.Laplace(a, b), 1)),
     [("real", (2, 3)), ("real", (2, 3, 4)), ("pos", (2, 3, 4))]),
    ("independent", lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b), 1),
     [("real", (2, 3)), ("pos", (2, 3))]),
    ("transformed_affine_exp", lambda m, a, b, c, d: m.distributions.TransformedDistribution(
        m.distributions.Normal(a, b),
        [m.distributions.AffineTransform(c, d), m.distributions.ExpTransform()]),
     [("real", (3,)), ("pos", (3,)), ("real", (2, 3)), ("pos", (3,))]),
    ("transformed_stickbreaking", _sb_normal, [("real", (2, 3)), ("pos", (3,))]),
    ("transformed_tanh", lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Normal(a, b), m.distributions.TanhTransform()),
     [("real", (3,)), ("pos", (3,))]),
    ("transformed_sigmoid_power", lambda m, a, b, c: m.distributions.TransformedDistribution(
        m.distributions.Normal(a, b),
        [m.distributions.SigmoidTransform(), m.distributions.PowerTransform(c)]),
     [("real", (3,)), ("pos", (3,)), ("pos", (3,))]),
]
METHODS = ["log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev"]


def _build(case):
    """(torch distribution, retrograd distribution, their parameters) of ``case``, the
    parameters drawn from a generator seeded by the case's name (the same numbers whatever
    ran before, in any worker)."""
    name, ctor, spec = case
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [_param(kind, shape, rng) for kind, shape in spec]
    pairs = [_pair(a) for a in arrays]
    tparams = [p[0] for p in pairs]
    rparams = [p[1] for p in pairs]
    return ctor(torch, *tparams), ctor(rt, *rparams), tparams, rparams


def _call(dist, method, value):
    attr = getattr(dist, method)
    return attr(value) if method in ("log_prob", "cdf", "icdf") else (
        attr() if callable(attr) else attr)


def _grads(out, params, lib):
    wanted = [p for p in params if getattr(p, "requires_grad", False)]
    if not getattr(out, "requires_grad", False) or not wanted:
        return [None] * len(wanted)
    finite = lib.where(lib.isfinite(out), out, lib.zeros_like(out))
    weights = lib.linspace(0.5, 1.5, finite.numel(), dtype=finite.dtype).reshape(finite.shape)
    return list(lib.autograd.grad((finite * weights).sum(), wanted, allow_unused=True,
                                     retain_graph=True))


def _close(a, b, what):
    if a is None or b is None:
        assert a is None and b is None, what
        return
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9, err_msg=what)


def _value_for(tdist, method):
    if method == "icdf":
        shape = (2,) + tuple(tdist.batch_shape) + tuple(tdist.event_shape)
        return np.asarray(RNG.uniform(0.05, 0.95, shape))
    torch.manual_seed(0)
    with torch.no_grad():
        return tdist.sample((2,)).numpy()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(case):
    tdist, rdist, tparams, rparams = _build(case)
    assert tuple(rdist.batch_shape) == tuple(tdist.batch_shape)
    assert tuple(rdist.event_shape) == tuple(tdist.event_shape)
    assert rdist.has_rsample == tdist.has_rsample
    assert rdist.has_enumerate_support == tdist.has_enumerate_support
    compared = []
    for method in METHODS:
        value = _value_for(tdist, method) if method in ("log_prob", "cdf", "icdf") else None
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
        extra_t = [tvalue] if continuous else []
        extra_r = [rvalue] if continuous else []
        for i, (a, b) in enumerate(zip(_grads(expected, tparams + extra_t, torch),
                                       _grads(got, rparams + extra_r, rt))):
            _close(a, b, f"{what} grad {i}")
        compared.append(method)
    assert "log_prob" in compared


@pytest.mark.parametrize("name,make", [
    ("Normal", lambda m: m.distributions.Normal(m.tensor([0.5, -1.0]), m.tensor([1.0, 2.0]))),
    ("Uniform", lambda m: m.distributions.Uniform(m.tensor([0.0, 1.0]), m.tensor([2.0, 1.5]))),
    ("Bernoulli", lambda m: m.distributions.Bernoulli(m.tensor([0.2, 0.7]))),
    ("Categorical", lambda m: m.distributions.Categorical(m.tensor([[0.2, 0.3, 0.5]] * 2))),
    ("Exponential", lambda m: m.distributions.Exponential(m.tensor([0.5, 3.0]))),
])
def test_float32_samples_are_torchs_bit_for_bit(name, make):
    for seed in (0, 12345):
        torch.manual_seed(seed)
        expected = make(torch).sample((1000,))
        rt.manual_seed(seed)
        got = make(rt).sample((1000,))
        assert got.numpy().tobytes() == expected.numpy().tobytes(), name
    if name == "Normal":
        torch.manual_seed(5)
        rt.manual_seed(5)
        assert (make(rt).rsample((9,)).detach().numpy().tobytes()
                == make(torch).rsample((9,)).detach().numpy().tobytes())


def test_bernoulli_of_strided_probabilities_samples_in_c_order():
    # torch.bernoulli samples into a fresh contiguous tensor (Bernoulli.sample passes an
    # expanded one); a transposed input takes the same order
    p = np.random.default_rng(0).uniform(size=(4, 5))
    for make in (lambda m: m.tensor(p).T, lambda m: m.tensor(p[:1]).expand(3, 4, 5),
                 lambda m: m.tensor(p, dtype=m.float32)[:, ::2]):
        torch.manual_seed(11)
        rt.manual_seed(11)
        np.testing.assert_array_equal(rt.bernoulli(make(rt)).numpy(),
                                      torch.bernoulli(make(torch)).numpy())


@pytest.mark.parametrize("make", [
    lambda: D.Normal(rt.tensor([1.0, -2.0]), rt.tensor([0.5, 2.0])),
    lambda: D.Uniform(rt.tensor([0.0]), rt.tensor([3.0])),
    lambda: D.Exponential(rt.tensor([0.5, 4.0])),
    lambda: D.Laplace(rt.tensor([1.0]), rt.tensor([2.0])),
    lambda: D.Bernoulli(rt.tensor([0.3])),
    lambda: D.Geometric(rt.tensor([0.4])),
    lambda: D.Gumbel(rt.tensor([0.5]), rt.tensor([2.0])),
    lambda: D.LogNormal(rt.tensor([0.0]), rt.tensor([0.5])),
    lambda: D.HalfNormal(rt.tensor([1.5])),
    lambda: D.ContinuousBernoulli(rt.tensor([0.2, 0.8])),
    lambda: D.OneHotCategorical(rt.tensor([0.2, 0.3, 0.5])),
], ids=["normal", "uniform", "exponential", "laplace", "bernoulli", "geometric", "gumbel",
        "lognormal", "halfnormal", "contbern", "onehot"])
def test_sample_moments(make):
    dist = make()
    rt.manual_seed(2024)
    samples = dist.sample((20000,)).double()
    mean, var = dist.mean.double(), dist.variance.double()
    np.testing.assert_allclose(samples.mean(0).numpy(), mean.numpy(),
                               atol=4 * math.sqrt(var.max().item() / 20000) + 1e-3)
    np.testing.assert_allclose(samples.var(0).numpy(), var.numpy(), rtol=0.1, atol=1e-3)


def test_categorical_sample_frequencies():
    rt.manual_seed(1)
    samples = D.Categorical(rt.tensor([0.1, 0.2, 0.7])).sample((20000,))
    freq = np.bincount(samples.numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)


def _error(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, -1.0])),
    lambda m: m.distributions.Exponential(m.tensor(-2.0)),
    lambda m: m.distributions.Bernoulli(probs=m.tensor([1.5])),
    lambda m: m.distributions.Categorical(probs=m.tensor([[-0.5, 1.5]])),
    lambda m: m.distributions.Uniform(m.tensor(2.0), m.tensor(1.0)),
    lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5])),
    lambda m: m.distributions.Normal(0.0, 1.0).log_prob(m.tensor(float("nan"))),
    lambda m: m.distributions.Exponential(m.tensor(1.0)).log_prob(m.tensor([-1.0])),
    lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
    lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(3), 1.0), 1)
    .log_prob(m.zeros(2)),
    lambda m: m.distributions.Bernoulli(),
])
def test_validate_args_errors_are_torchs(make):
    expected = _error(lambda: make(torch))
    got = _error(lambda: make(rt))
    assert got.startswith(expected), (got, expected)


def test_validate_args_can_be_turned_off():
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Exponential(rt.tensor(-1.0))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_enumerate_support_and_expand():
    for make in (lambda m: m.distributions.Bernoulli(m.tensor([0.3, 0.6])),
                 lambda m: m.distributions.Categorical(m.tensor([[0.3, 0.7]] * 3)),
                 lambda m: m.distributions.OneHotCategorical(m.tensor([[0.3, 0.2, 0.5]] * 2))):
        t, r = make(torch), make(rt)
        for expand in (True, False):
            np.testing.assert_array_equal(r.enumerate_support(expand).numpy(),
                                          t.enumerate_support(expand).numpy())
        te, re = t.expand((4,) + tuple(t.batch_shape)), r.expand((4,) + tuple(r.batch_shape))
        assert tuple(re.batch_shape) == tuple(te.batch_shape)
        value = te.sample()
        np.testing.assert_allclose(re.log_prob(rt.tensor(value.numpy())).numpy(),
                                   te.log_prob(value).numpy(), rtol=1e-6)
    for name in ("Normal", "Gumbel", "LogNormal", "Laplace"):
        t = getattr(TD, name)(torch.tensor([0.1, 0.2]), torch.tensor([1.0, 2.0])).expand((3, 2))
        r = getattr(D, name)(rt.tensor([0.1, 0.2]), rt.tensor([1.0, 2.0])).expand((3, 2))
        assert tuple(r.batch_shape) == (3, 2)
        np.testing.assert_allclose(r.log_prob(rt.ones(3, 2)).numpy(),
                                   t.log_prob(torch.ones(3, 2)).numpy(), rtol=1e-6)
        np.testing.assert_allclose(r.mean.numpy(), t.mean.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        D.Independent(D.Bernoulli(rt.tensor([0.3, 0.6])), 1).enumerate_support()


def test_perplexity_sample_n_and_repr():
    t, r = TD.Categorical(torch.tensor([0.2, 0.8])), D.Categorical(rt.tensor([0.2, 0.8]))
    np.testing.assert_allclose(r.perplexity().numpy(), t.perplexity().numpy(), rtol=1e-6)
    with pytest.warns(FutureWarning):
        assert tuple(r.sample_n(3).shape) == (3,)
    assert repr(D.Normal(rt.zeros(2), 1.0)) == repr(TD.Normal(torch.zeros(2), 1.0))
    assert repr(D.Exponential(rt.tensor(2.0))) == "Exponential(rate: 2.0)"


# KL divergences: every pair registered in retrograd, on parameter grids
KL_MAKERS = {
    "Normal": lambda m, g: m.distributions.Normal(g("real", (3,)), g("pos", (2, 3))),
    "Uniform": lambda m, g: m.distributions.Uniform(g("low", (2, 3)), g("pos", (3,))),
    "UniformPositive": lambda m, g: m.distributions.Uniform(g("prob", (2, 3)), g("big", (3,))),
    "Exponential": lambda m, g: m.distributions.Exponential(g("pos", (2, 3))),
    "Laplace": lambda m, g: m.distributions.Laplace(g("real", (3,)), g("pos", (3,))),
    "Cauchy": lambda m, g: m.distributions.Cauchy(g("real", (3,)), g("pos", (3,))),
    "Gumbel": lambda m, g: m.distributions.Gumbel(g("real", (3,)), g("pos", (3,))),
    "HalfNormal": lambda m, g: m.distributions.HalfNormal(g("pos", (3,))),
    "Bernoulli": lambda m, g: m.distributions.Bernoulli(g("prob", (2, 3))),
    "Categorical": lambda m, g: m.distributions.Categorical(g("pos", (2, 4))),
    "OneHotCategorical": lambda m, g: m.distributions.OneHotCategorical(logits=g("real", (4,))),
    "Geometric": lambda m, g: m.distributions.Geometric(g("prob", (3,))),
    "ContinuousBernoulli": lambda m, g: m.distributions.ContinuousBernoulli(g("prob", (3,))),
    "Independent": lambda m, g: m.distributions.Independent(
        m.distributions.Normal(g("real", (2, 3)), g("pos", (2, 3))), 1),
    "LogNormal": lambda m, g: m.distributions.LogNormal(g("real", (3,)), g("pos", (3,))),
    "Pareto": lambda m, g: m.distributions.Pareto(g("pos", (2, 3)), g("big", (2, 3))),
    "Gamma": lambda m, g: m.distributions.Gamma(g("pos", (2, 3)), g("pos", (3,))),
    "Poisson": lambda m, g: m.distributions.Poisson(g("big", (2, 3))),
    "Binomial": lambda m, g: m.distributions.Binomial(10, g("prob", (2, 3))),
    "Beta": lambda m, g: m.distributions.Beta(g("pos", (2, 3)), g("pos", (3,))),
    "Dirichlet": lambda m, g: m.distributions.Dirichlet(g("pos", (2, 4))),
    "LowRankMultivariateNormal": lambda m, g: m.distributions.LowRankMultivariateNormal(
        g("real", (3,)), g("real", (2, 3, 2)), g("pos", (3,))),
    "MultivariateNormal": lambda m, g: m.distributions.MultivariateNormal(
        g("real", (2, 3)), scale_tril=g("pos", (3, 3)).tril()),
}
def _kl_type(name):
    return getattr(D, name.replace("Positive", ""))


KL_PAIRS = [(p, q) for p in KL_MAKERS for q in KL_MAKERS
            if (_kl_type(p), _kl_type(q)) in D.kl._KL_REGISTRY
            or (p == q == "LogNormal")]


def _kl_arrays(name):
    """Fresh parameter arrays for ``KL_MAKERS[name]``, one per parameter it asks for."""
    arrays = []
    KL_MAKERS[name](torch, lambda k, s: arrays.append(_param(k, s)) or torch.tensor(arrays[-1]))
    return arrays


@pytest.mark.parametrize("p,q", KL_PAIRS, ids=[f"{p}-{q}" for p, q in KL_PAIRS])
def test_kl_divergence_matches_torch(p, q):
    pairs = [_pair(a) for a in _kl_arrays(p) + _kl_arrays(q)]
    tp, rp = iter([x[0] for x in pairs]), iter([x[1] for x in pairs])
    tdists = [KL_MAKERS[name](torch, lambda k, s: next(tp)) for name in (p, q)]
    rdists = [KL_MAKERS[name](rt, lambda k, s: next(rp)) for name in (p, q)]
    expected = TD.kl_divergence(*tdists)
    got = D.kl_divergence(*rdists)
    _close(expected, got, f"KL({p} || {q})")
    for i, (a, b) in enumerate(zip(_grads(expected, [x[0] for x in pairs], torch),
                                   _grads(got, [x[1] for x in pairs], rt))):
        _close(a, b, f"KL({p} || {q}) grad {i}")


def test_kl_registry_covers_torchs_pairs_among_our_distributions():
    ours = {c.__name__ for c in (getattr(D, n) for n in D.__all__) if isinstance(c, type)}
    torch_pairs = {(a.__name__, b.__name__) for a, b in TD.kl._KL_REGISTRY
                   if a.__name__ in ours and b.__name__ in ours}
    our_pairs = {(a.__name__, b.__name__) for a, b in D.kl._KL_REGISTRY}
    assert torch_pairs == our_pairs


def test_kl_dispatch_most_specific_and_ambiguity_warning():
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    calls = []
    D.register_kl(A, D.Normal)(lambda p, q: calls.append("A,Normal") or rt.zeros(()))
    D.register_kl(D.Normal, B)(lambda p, q: calls.append("Normal,B") or rt.zeros(()))
    try:
        D.kl_divergence(A(0.0, 1.0), D.Normal(0.0, 1.0))
        assert calls == ["A,Normal"]
        with pytest.warns(RuntimeWarning, match=r"Ambiguous kl_divergence\(A, B\)"):
            D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    finally:
        del D.kl._KL_REGISTRY[A, D.Normal], D.kl._KL_REGISTRY[D.Normal, B]
        D.kl._KL_MEMOIZE.clear()
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(rt.ones(2)))
    with pytest.raises(NotImplementedError, match="The cross KL-divergence between different "
                                                  "exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))


@pytest.mark.parametrize("make", [
    lambda m: m.distributions.Normal(m.tensor([0.3, -1.0], dtype=m.float64, requires_grad=True),
                                     m.tensor([0.5, 2.0], dtype=m.float64)),
    lambda m: m.distributions.Bernoulli(m.tensor([0.3, 0.8], dtype=m.float64,
                                                 requires_grad=True)),
    lambda m: m.distributions.Exponential(m.tensor([0.3, 2.0], dtype=m.float64,
                                                   requires_grad=True)),
    lambda m: m.distributions.ContinuousBernoulli(logits=m.tensor([0.3, 2.0], dtype=m.float64,
                                                                  requires_grad=True)),
], ids=["normal", "bernoulli", "exponential", "contbern"])
def test_exponential_family_bregman_entropy_and_kl(make):
    t, r = make(torch), make(rt)
    assert isinstance(r, D.ExponentialFamily)
    if not isinstance(r, D.ContinuousBernoulli):  # it has no _mean_carrier_measure in torch
        _close(TD.ExponentialFamily.entropy(t), D.ExponentialFamily.entropy(r), "entropy")
        _close(r.entropy(), D.ExponentialFamily.entropy(r), "closed form")
    expected = TD.kl._kl_expfamily_expfamily(t, make(torch))
    got = D.kl._kl_expfamily_expfamily(r, make(rt))
    _close(expected, got, "Bregman KL")
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# transforms: forward, inverse, log|det J| against torch
TRANSFORMS = [
    ("exp", lambda m, a: m.distributions.ExpTransform(), "real"),
    ("affine", lambda m, a: m.distributions.AffineTransform(a, -2.5), "real"),
    ("affine_event", lambda m, a: m.distributions.AffineTransform(1.0, a, event_dim=1), "real"),
    ("sigmoid", lambda m, a: m.distributions.SigmoidTransform(), "real"),
    ("tanh", lambda m, a: m.distributions.TanhTransform(), "real"),
    ("softplus", lambda m, a: m.distributions.SoftplusTransform(), "real"),
    ("power", lambda m, a: m.distributions.PowerTransform(a.abs() + 0.5), "pos"),
    ("abs", lambda m, a: m.distributions.AbsTransform(), "real"),
    ("softmax", lambda m, a: m.distributions.SoftmaxTransform(), "real"),
    ("stickbreaking", lambda m, a: m.distributions.StickBreakingTransform(), "real"),
    ("compose", lambda m, a: m.distributions.ComposeTransform(
        [m.distributions.AffineTransform(a, 0.5), m.distributions.ExpTransform()]), "real"),
    ("independent", lambda m, a: m.distributions.IndependentTransform(
        m.distributions.SigmoidTransform(), 1), "real"),
    ("inverse_exp", lambda m, a: m.distributions.ExpTransform().inv, "pos"),
    ("identity", lambda m, a: m.distributions.transforms.identity_transform, "real"),
]


@pytest.mark.parametrize("name,make,kind", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms_match_torch(name, make, kind):
    ta, ra = _pair(_param("real", (3,)))
    tx, rx = _pair(_param(kind, (2, 3)))
    tt, rtr = make(torch, ta), make(rt, ra)
    ty, ry = tt(tx), rtr(rx)
    _close(ty, ry, f"{name} forward")
    _close(tt.inv(ty), rtr.inv(ry), f"{name} inverse")
    assert rtr.bijective == tt.bijective
    assert (rtr.domain.event_dim, rtr.codomain.event_dim) == (tt.domain.event_dim,
                                                             tt.codomain.event_dim)
    assert rtr.forward_shape((4, 3)) == tt.forward_shape((4, 3))
    if not tt.bijective:
        with pytest.raises(NotImplementedError):
            rtr.log_abs_det_jacobian(rx, ry)
        return
    expected, got = tt.log_abs_det_jacobian(tx, ty), rtr.log_abs_det_jacobian(rx, ry)
    _close(expected, got, f"{name} log_abs_det_jacobian")
    for i, (a, b) in enumerate(zip(_grads(expected, [ta, tx], torch),
                                   _grads(got, [ra, rx], rt))):
        _close(a, b, f"{name} log_abs_det_jacobian grad {i}")


def test_lower_cholesky_transform_matches_torch():
    tx, rx = _pair(_param("real", (2, 3, 3)))
    ty, ry = TD.transform_to(TD.constraints.lower_cholesky)(tx), D.transform_to(
        D.constraints.lower_cholesky)(rx)
    _close(ty, ry, "forward")
    _close(TD.LowerCholeskyTransform().inv(ty), D.LowerCholeskyTransform().inv(ry), "inverse")
    for a, b in zip(_grads(ty, [tx], torch), _grads(ry, [rx], rt)):
        _close(a, b, "grad")
    assert bool(D.constraints.lower_cholesky.check(ry).all())


def test_corr_cholesky_transform_matches_torch():
    tx, rx = _pair(_param("real", (2, 6)))
    tt, rtr = TD.biject_to(TD.constraints.corr_cholesky), D.biject_to(D.constraints.corr_cholesky)
    ty, ry = tt(tx), rtr(rx)
    _close(ty, ry, "forward")
    assert bool(D.constraints.corr_cholesky.check(ry).all())
    _close(tt.inv(ty), rtr.inv(ry), "inverse")
    expected, got = tt.log_abs_det_jacobian(tx, ty), rtr.log_abs_det_jacobian(rx, ry)
    _close(expected, got, "log_abs_det_jacobian")
    for a, b in zip(_grads(expected, [tx], torch), _grads(got, [rx], rt)):
        _close(a, b, "grad")
    assert rtr.forward_shape((5, 6)) == (5, 4, 4) and rtr.inverse_shape((4, 4)) == (6,)
    m = np.arange(12.0).reshape(3, 4)
    for diag in (-1, 0, 1):
        vec = D.utils.tril_matrix_to_vec(rt.tensor(m[:, :3]), diag)
        np.testing.assert_array_equal(
            vec.numpy(), TD.utils.tril_matrix_to_vec(torch.tensor(m[:, :3]), diag).numpy())
        np.testing.assert_array_equal(
            D.utils.vec_to_tril_matrix(vec, diag).numpy(),
            TD.utils.vec_to_tril_matrix(torch.tensor(vec.numpy()), diag).numpy())


def test_transform_cache_equality_and_sign():
    t = D.ExpTransform(cache_size=1)
    x = rt.tensor([0.5])
    assert t.inv(t(x)) is x and t.inv.inv is t
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(0.0, -2.0).sign == -1
    assert D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0.0, -1.0)]).sign == -1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


CONSTRAINTS = [
    ("real", lambda c: c.real), ("positive", lambda c: c.positive),
    ("nonnegative", lambda c: c.nonnegative), ("unit_interval", lambda c: c.unit_interval),
    ("greater_than", lambda c: c.greater_than(1.5)), ("less_than", lambda c: c.less_than(-1.0)),
    ("interval", lambda c: c.interval(-2.0, 3.0)),
    ("half_open_interval", lambda c: c.half_open_interval(0.0, 1.0)),
    ("simplex", lambda c: c.simplex), ("real_vector", lambda c: c.real_vector),
    ("greater_than_eq", lambda c: c.greater_than_eq(0.5)),
]


@pytest.mark.parametrize("name,make", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_registry_matches_torch(name, make):
    tx, rx = _pair(_param("real", (2, 3)))
    tc, rc = make(TD.constraints), make(D.constraints)
    assert repr(rc) == repr(tc)
    for tr, rr in ((TD.biject_to, D.biject_to), (TD.transform_to, D.transform_to)):
        tt, rtr = tr(tc), rr(rc)
        ty, ry = tt(tx), rtr(rx)
        _close(ty, ry, f"{name} {type(rtr).__name__}")
        assert bool(rc.check(ry).all()) and bool(tc.check(ty).all())
        if tt.bijective:
            _close(tt.log_abs_det_jacobian(tx, ty), rtr.log_abs_det_jacobian(rx, ry), name)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)


def test_constraint_checks_match_torch():
    values = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, float("nan")]])
    tv, rv = torch.tensor(values), rt.tensor(values)
    checks = [lambda c: c.real, lambda c: c.positive, lambda c: c.nonnegative,
              lambda c: c.boolean, lambda c: c.unit_interval, lambda c: c.nonnegative_integer,
              lambda c: c.positive_integer, lambda c: c.integer_interval(0, 1),
              lambda c: c.greater_than(0.0), lambda c: c.less_than(1.0),
              lambda c: c.interval(0.0, 1.0), lambda c: c.half_open_interval(0.0, 1.0),
              lambda c: c.independent(c.real, 1), lambda c: c.simplex, lambda c: c.one_hot]
    for make in checks:
        np.testing.assert_array_equal(make(D.constraints).check(rv).numpy(),
                                      make(TD.constraints).check(tv).numpy())
    m = torch.tensor([[1.0, 0.0], [2.0, 3.0]])
    for name in ("lower_triangular", "lower_cholesky", "square", "symmetric"):
        assert bool(getattr(D.constraints, name).check(rt.tensor(m.numpy()))) == bool(
            getattr(TD.constraints, name).check(m))
    assert D.constraints.is_dependent(D.Uniform.support)
    assert repr(D.Uniform(0.0, 2.0).arg_constraints["low"]) == "LessThan(upper_bound=2.0)"


def test_torch_namespace_and_pathwise_gradients():
    assert rt.distributions is D
    loc = rt.tensor([0.5, -0.2], requires_grad=True)
    scale = rt.tensor([1.5, 0.7], requires_grad=True)
    rt.manual_seed(0)
    x = D.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    rt.manual_seed(0)
    eps = rt.randn(3, 2)
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.Normal(loc, scale).log_prob(x.detach()).sum().backward()


def _reinforce_step(lib, w, states):
    """One REINFORCE step of pytorch/examples' shape: sample actions from a softmax
    policy, score them, and backpropagate the policy-gradient loss."""
    weight = lib.tensor(w, requires_grad=True)
    lib.manual_seed(4)
    probs = lib.softmax(lib.tensor(states) @ weight, dim=-1)
    dist = lib.distributions.Categorical(probs)
    actions = dist.sample()
    returns = lib.arange(len(states), dtype=lib.float32) * 0.1 + 1.0
    loss = -(dist.log_prob(actions) * returns).sum() - 0.01 * dist.entropy().sum()
    loss.backward()
    return actions.numpy(), loss.item(), weight.grad.numpy()


def _vae_step(lib, mu, logvar):
    """A VAE's reparameterized latent and KL term, as in pytorch/examples' vae."""
    mu = lib.tensor(mu, requires_grad=True)
    logvar = lib.tensor(logvar, requires_grad=True)
    lib.manual_seed(9)
    q = lib.distributions.Normal(mu, (0.5 * logvar).exp())
    z = q.rsample()
    prior = lib.distributions.Normal(lib.zeros_like(mu), lib.ones_like(mu))
    loss = lib.distributions.kl_divergence(q, prior).sum() + (z**2).sum()
    loss.backward()
    return z.detach().numpy(), loss.item(), mu.grad.numpy(), logvar.grad.numpy()


def test_reinforce_and_vae_steps_match_torch():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    states = rng.standard_normal((6, 4)).astype(np.float32)
    for a, b in zip(_reinforce_step(torch, w, states), _reinforce_step(rt, w, states)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    mu, logvar = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    for a, b in zip(_vae_step(torch, mu, logvar), _vae_step(rt, mu, logvar)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_log_prob_supports_double_backward():
    for lib in (torch, rt):
        loc = lib.tensor([0.3, -0.4], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        lp = lib.distributions.Laplace(loc, 2.0).log_prob(x) + lib.distributions.Normal(
            loc, 1.5).log_prob(x)
        (g,) = lib.autograd.grad(lp.sum(), loc, create_graph=True)
        (gg,) = lib.autograd.grad((g**2).sum(), loc)
        if lib is torch:
            expected = (g.detach().numpy(), gg.numpy())
    np.testing.assert_allclose(g.detach().numpy(), expected[0], rtol=1e-10)
    np.testing.assert_allclose(gg.numpy(), expected[1], rtol=1e-10)
