"""A stack of matrices times one shared matrix is one product of rows
(Note [Folding a shared matrix]): the values, shapes, dtypes and gradients against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as R

CASES = [
    ((64, 1, 784), (784, 128), None),  # W9's first layer under vmap
    ((3, 4, 5), (5, 6), None),
    ((2, 3, 4, 5), (5, 2), None),
    ((2, 3, 4, 5), (3, 5, 2), "expand"),  # expanded: batch strides of 0
    ((3, 4, 5), (3, 5, 6), "expand"),
    ((0, 4, 5), (5, 6), None),  # empty batch
    ((3, 0, 5), (5, 6), None),  # no rows
    ((3, 4, 0), (0, 6), None),  # no contraction
    ((0, 4, 5), (0, 5, 6), "expand"),  # both batches empty: not folded
    ((1, 4, 5), (3, 5, 6), "expand"),  # b's batch larger than a's: not folded
]


def _pair(shape_a, shape_b, how, dtype):
    rng = np.random.default_rng(len(shape_a) + sum(shape_b))
    a = rng.standard_normal(shape_a).astype(dtype)
    b0 = rng.standard_normal(shape_b[-2:]).astype(dtype)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b0, requires_grad=True)
    ra, rb = R.tensor(a, requires_grad=True), R.tensor(b0, requires_grad=True)
    if how == "expand":
        return ta, tb, ta @ tb.expand(shape_b), ra, rb, ra @ rb.expand(shape_b)
    return ta, tb, ta @ tb, ra, rb, ra @ rb


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape_a,shape_b,how", CASES)
def test_stack_times_shared_matrix_matches_torch(shape_a, shape_b, how, dtype):
    ta, tb, tout, ra, rb, rout = _pair(shape_a, shape_b, how, dtype)
    assert tuple(rout.shape) == tuple(tout.shape) and rout.dtype == getattr(R, str(tout.dtype)[6:])
    assert rout.is_contiguous()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rout.detach().numpy(), tout.detach().numpy(), **tol)
    g = np.random.default_rng(1).standard_normal(tuple(tout.shape)).astype(dtype)
    tout.backward(torch.tensor(g))
    rout.backward(R.tensor(g))
    np.testing.assert_allclose(ra.grad.numpy(), ta.grad.numpy(), **tol)
    np.testing.assert_allclose(rb.grad.numpy(), tb.grad.numpy(), **tol)


@pytest.mark.parametrize("batch", [(5,), (2, 3), (0,)])
def test_shared_matrix_times_stack_of_columns_matches_torch(batch):
    """``W.expand(...) @ x`` with x a stack of columns, as vmap records ``x @ W.t()``
    (Note [Linear under vmap]): one product (B, k) @ W.T."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    x = rng.standard_normal(batch + (6, 1)).astype(np.float32)
    outs = []
    for lib in (torch, R):
        tw = lib.tensor(w, requires_grad=True)
        tx = lib.tensor(x, requires_grad=True)
        out = tw.expand(batch + (4, 6)) @ tx
        out.backward(lib.ones(tuple(out.shape)))
        outs.append((out, tw.grad, tx.grad))
    for want, got in zip(outs[0], outs[1]):
        assert tuple(got.shape) == tuple(want.shape)
        assert got.is_contiguous() == want.is_contiguous()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)


def test_stack_times_shared_matrix_is_one_product(monkeypatch):
    """The folded product takes no np.matmul (which calls BLAS once per stack element)."""
    a, w = R.randn(64, 1, 784), R.randn(128, 784)
    expected = np.matmul(a.numpy(), w.numpy().T)

    def per_stack(*args, **kwargs):
        raise AssertionError("np.matmul called: the stack was not folded")

    monkeypatch.setattr(np, "matmul", per_stack)
    out = a @ w.t()
    out_expanded = a @ w.t().expand(64, 784, 128)
    columns = w.expand(64, 128, 784) @ a.mT  # a shared matrix times a stack of columns
    monkeypatch.undo()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(out_expanded.numpy(), expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(columns.mT.numpy(), expected, rtol=1e-4, atol=1e-3)
