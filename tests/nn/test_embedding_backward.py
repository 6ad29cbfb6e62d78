"""embedding's backward (Note [Row scatter-add order] in ops/kernels/scatter_rows.py):
bit for bit PyTorch's, on both kernel paths (small gradients: np.add.at; large float32 /
float64 ones: the sparse product), with padding_idx and repeated indices."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,vocab,dim,dtype", [
    ((16, 64), 65, 128, "float32"),     # a GPT's character embedding: sparse path
    ((35, 20), 1000, 128, "float32"),   # an LSTM language model's
    ((32, 3), 27, 10, "float32"),       # makemore's table: np.add.at path
    ((40, 50), 30, 16, "float64"),
    ((40, 50), 30, 16, "bfloat16"),     # no sparse product in bfloat16: np.add.at
])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_backward_matches_torch_bit_for_bit(shape, vocab, dim, dtype, padding_idx):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, vocab, shape)
    w = rng.standard_normal((vocab, dim)).astype(np.float32)
    g = rng.standard_normal(shape + (dim,)).astype(np.float32)
    g.flat[0] = -0.0  # a zero's sign: PyTorch's sum starts from +0.0
    grads = []
    for m in (torch, R):
        weight = m.tensor(w).to(getattr(m, dtype)).requires_grad_()
        out = m.nn.functional.embedding(m.tensor(idx), weight, padding_idx=padding_idx)
        out.backward(m.tensor(g).to(getattr(m, dtype)))
        grads.append(weight.grad.float().numpy())
    assert grads[0].dtype == grads[1].dtype
    assert np.array_equal(grads[0].view(np.int32), grads[1].view(np.int32))


def test_embedding_double_backward_still_matches():
    idx = np.array([[0, 2, 2], [1, 2, 0]])
    results = []
    for m in (torch, R):
        w = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        y = m.nn.functional.embedding(m.tensor(idx), w)
        (g,) = m.autograd.grad((y * y).sum(), w, create_graph=True)
        g.pow(2).sum().backward()
        results.append((g.detach().numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
