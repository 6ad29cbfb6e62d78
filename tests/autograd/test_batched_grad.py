"""autograd.grad(..., is_grads_batched=True): one batched backward equals a row loop (and torch)."""

import numpy as np
import pytest
import torch

import retrograd


def _graphs(m, rng):
    """(output, input, batch of cotangents) for graphs over batch-agnostic and per-row ops."""
    a = m.tensor(rng.standard_normal((5, 5)))
    x = m.tensor(rng.standard_normal(5), requires_grad=True)
    y = (a @ x).tanh()
    (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
    yield g, x, m.eye(5, dtype=m.float64)
    z = m.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = m.cat([z.sum(0), (z * z).mean(1)]).reshape(7).exp()  # cat: a per-row rule
    yield w, z, m.eye(7, dtype=m.float64)
    s = m.tensor(rng.standard_normal(4), requires_grad=True)
    q = s.sigmoid() * s.unsqueeze(0).expand(3, 4).t().sum(1).mean()
    yield q, s, m.tensor(rng.standard_normal((6, 4)))
    u = m.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    v = (u.permute(1, 0) @ u).amax(dim=1).clamp(min=0.1).sqrt()
    yield v, u, m.tensor(rng.standard_normal((2, 3)))


def test_batched_grad_matches_torch_and_row_loop():
    ours = list(_graphs(retrograd, np.random.default_rng(0)))
    ref = list(_graphs(torch, np.random.default_rng(0)))
    for (o, x, v), (to, tx, tv) in zip(ours, ref):
        (got,) = retrograd.autograd.grad(o, x, grad_outputs=v, is_grads_batched=True,
                                         retain_graph=True)
        (want,) = torch.autograd.grad(to, tx, grad_outputs=tv, is_grads_batched=True,
                                      retain_graph=True)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)
        rows = [retrograd.autograd.grad(o, x, grad_outputs=v[i], retain_graph=True)[0]
                for i in range(v.shape[0])]
        np.testing.assert_allclose(got.detach().numpy(),
                                   np.stack([r.detach().numpy() for r in rows]), rtol=1e-12)


def test_batched_grad_shape_error():
    x = retrograd.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        retrograd.autograd.grad(y, x, grad_outputs=retrograd.ones(4, 2), is_grads_batched=True)


def test_batched_grad_create_graph_is_differentiable():
    x = retrograd.tensor([0.5, -1.0, 2.0], dtype=retrograd.float64, requires_grad=True)
    y = (x * x * x).sum()
    (g,) = retrograd.autograd.grad(y, x, create_graph=True)
    (h,) = retrograd.autograd.grad(g, x, grad_outputs=retrograd.eye(3, dtype=retrograd.float64),
                                   is_grads_batched=True, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), np.diag(6 * x.detach().numpy()))
    (t,) = retrograd.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), [6.0, 6.0, 6.0])
