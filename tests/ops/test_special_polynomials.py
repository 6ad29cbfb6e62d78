"""torch.special's orthogonal polynomials beyond the op database
(tests/support/opdb_cdist_polynomials.py): no gradient (PyTorch's outputs never require
grad), PyTorch's errors, ``out=``, and the branches at high degree (trigonometric forms,
Hermite's degree limit)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from _autograd_compare import same_error

torch = pytest.importorskip("torch")

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]


def test_torch_special_has_no_name_retrograd_lacks():
    def public(mod):
        return {n for n in dir(mod) if not n.startswith("_")}
    missing = public(torch.special) - public(R.special) - {"torch", "Tensor", "common_args",
                                                           "multi_dim_common"}
    assert not missing


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_torch(name):
    def run(m):
        x = m.tensor([0.25, 0.5], requires_grad=True)
        out = getattr(m.special, name)(x, m.tensor([3, 10]))
        assert out.grad_fn is None and not out.requires_grad
        out.sum().backward()
    same_error(run)


@pytest.mark.parametrize("call", [
    lambda m: m.special.chebyshev_polynomial_t(0.5, 3),
    lambda m: m.special.hermite_polynomial_h(m.ones(2, dtype=m.float16), 2),
    lambda m: m.special.legendre_polynomial_p(m.ones(2, dtype=m.bfloat16), m.tensor(2)),
], ids=["numbers", "half", "bfloat16"])
def test_errors_match_torch(call):
    same_error(call)


def test_out_argument():
    for m in (R, torch):
        out = m.empty(3)
        res = m.special.legendre_polynomial_p(m.tensor([0.1, 0.5, 0.9]), 4, out=out)
        assert res is out
    np.testing.assert_allclose(
        R.special.legendre_polynomial_p(R.tensor([0.1, 0.5, 0.9]), 4).numpy(),
        torch.special.legendre_polynomial_p(torch.tensor([0.1, 0.5, 0.9]), 4).numpy(),
        rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_high_degrees_match_torch(name):
    # trigonometric branches and Hermite's limit (nan above degree 512 in float64)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-1, 1, 6), rng.uniform(0, 1, 6), [1 - 1e-12, 0.5]])
    n = np.array([20, 40, 100, 513])
    r, t = (getattr(m.special, name)(m.tensor(x[:, None]), m.tensor(n)).numpy()
            for m in (R, torch))
    np.testing.assert_allclose(r, t, rtol=1e-8, atol=1e-8)
