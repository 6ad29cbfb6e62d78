"""gradgradcheck draws its random grad_outputs from the global generator as PyTorch does
(testing.make_tensor in [-1, 1)), so what a program draws after the check matches PyTorch
(Note [gradgradcheck's grad_outputs] in autograd/gradcheck.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as R


def _f(lib):
    return lambda x, w: ((x * w).sin().sum(-1), (x.exp() * 2).reshape(-1))


@pytest.mark.parametrize("non_contig", [False, True])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_draws_after_gradgradcheck_match_torch(non_contig, fast_mode):
    x0 = np.random.default_rng(0).standard_normal((2, 3))
    w0 = np.random.default_rng(1).standard_normal(3)
    draws = []
    for lib in (torch, R):
        lib.manual_seed(7)
        x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(_f(lib), (x, w), fast_mode=fast_mode,
                                          gen_non_contig_grad_outputs=non_contig)
        draws.append(lib.rand(6).numpy())
    np.testing.assert_array_equal(draws[0], draws[1])

