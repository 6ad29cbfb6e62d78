"""Op-database entries of the gamma-family samplers (ops/records/gamma.py): each call seeds
first, so the draws are PyTorch's and test_ops.py compares values and first derivatives
with torch. Loaded by opdb.py."""

from __future__ import annotations

import numpy as np

from opdb import A, S, op, vals

_RANDOM = ("a sample at a fixed seed is not a smooth function of its parameter (the "
           "rejection sampler's draws move): the pathwise gradient is PyTorch's "
           "approximation of the implicit derivative, compared with torch by test_grad")


def _seeded(fn):
    def call(m, *args):
        m.manual_seed(5)
        return fn(m, *args)
    return call


def _rates(rng):
    return [S(A(vals(rng, s, "pos") * 3, "pos")) for s in [(), (3,), (2, 3), (0, 2)]] + [
        S(A(vals(rng, (3, 4), "pos"), "pos", layout="T"), desc="non-contiguous")]


_SKIPS = {"test_gradcheck": _RANDOM,
          "test_gradgradcheck": _RANDOM, "test_double_backward": _RANDOM}

op("_standard_gamma", _seeded(lambda m, a: m._standard_gamma(a)), _rates,
   ("_standard_gamma", "_standard_gamma_grad"), twice=False, skips=dict(_SKIPS))
op("poisson", _seeded(lambda m, a: m.poisson(a)), _rates, ("poisson",), twice=False,
   skips=dict(_SKIPS))
op("_standard_gamma_grad", lambda m, a, x: m._standard_gamma_grad(a, x),
   lambda rng: [S(A(vals(rng, (3, 4), "pos") * 4, "pos", grad=False),
                  A(vals(rng, (3, 4), "pos") * 3, "pos", grad=False)),
                S(A(vals(rng, (2, 1), "pos") * 10, "pos", grad=False),
                  A(vals(rng, (3,), "pos") * 10, "pos", grad=False), desc="broadcast")],
   ("_standard_gamma_grad",), differentiable=False)


def _simplex_samples(rng):
    """Points inside the simplex with their concentrations and totals."""
    out = []
    for shape in [(3,), (2, 4)]:
        x = rng.dirichlet(np.ones(shape[-1]), shape[:-1] or None)
        alpha = vals(rng, shape, "pos") * 3
        total = np.broadcast_to(alpha.sum(-1, keepdims=True), shape)
        out.append(S(A(x, grad=False), A(alpha, "pos", grad=False),
                     A(np.array(total), "pos", grad=False)))
    return out


op("_sample_dirichlet", _seeded(lambda m, a: m._sample_dirichlet(a)),
   lambda rng: [S(A(vals(rng, s, "pos") * 3, "pos", grad=False)) for s in [(3,), (2, 4)]],
   ("_sample_dirichlet",), differentiable=False)
op("_dirichlet_grad", lambda m, x, a, t: m._dirichlet_grad(x, a, t), _simplex_samples,
   ("_dirichlet_grad",), differentiable=False)
op("binomial", _seeded(lambda m, n, p: m.binomial(n, p)),
   lambda rng: [S(A(np.round(vals(rng, (2, 3), "pos") * 20), grad=False),
                  A(rng.uniform(0.05, 0.95, (3,)), grad=False), desc="broadcast"),
                S(A(np.array([0.0, 5.0, 300.0]), grad=False),
                  A(np.array([0.5, 1.0, 0.7]), grad=False), desc="edges and BTRS")],
   ("binomial",), differentiable=False)
