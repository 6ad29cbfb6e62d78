"""A view's strides as PyTorch's computeStride gives them, size-1 dims and empty tensors
included (Note [View strides] in _core/layouts.py), and the writes that depend on them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd._core.layouts import view_strides


def _bases(m):
    """Tensors of several layouts, each with the same values in torch and here."""
    def a(*shape):
        n = int(np.prod(shape))
        return m.arange(n, dtype=m.float32).reshape(shape)
    return {
        "contiguous (3, 1, 1)": a(3, 1, 1),
        "transposed (1, 3, 1)": a(1, 3, 1).transpose(0, 1),
        "transposed (1, 4)": a(4, 1).t(),
        "transposed (2, 1, 3)": a(1, 2, 3).transpose(0, 1),
        "expanded (3, 1, 1)": m.tensor([1.0]).expand(3, 1, 1),
        "expanded one element": m.tensor([1.0]).expand(1, 1),
        "sliced (2, 1, 3)": a(4, 1, 3)[::2],
        "column (4, 1)": a(4, 2)[:, :1],
        "empty (0, 3)": a(0, 3),
        "empty (3, 0, 1)": a(3, 0, 1),
    }


def _shapes(n: int):
    sizes = [0, 1, 2, 3, 4, 6, 12] if n else [0, 1, 3]
    return [c for k in (1, 2, 3) for c in itertools.product(sizes, repeat=k)
            if int(np.prod(c)) == n]


@pytest.mark.parametrize("name", list(_bases(torch)))
def test_view_strides_are_torch_strides(name):
    tb, rb = _bases(torch)[name], _bases(R)[name]
    assert tuple(rb.stride()) == tuple(tb.stride()), name
    for shape in _shapes(tb.numel()):
        try:
            want = tb.view(shape).stride()
        except RuntimeError:
            with pytest.raises(RuntimeError):
                rb.view(shape)
            continue
        got = rb.view(shape)
        assert tuple(got.stride()) == tuple(want), (name, shape)
        np.testing.assert_array_equal(got.numpy(), tb.view(shape).numpy())


def test_view_strides_helper():
    assert view_strides((3, 1, 1), (0, 1, 1), (3, 1)) == (0, 1)
    assert view_strides((2, 3), (1, 2), (6,)) is None  # a transposed matrix: no view
    assert view_strides((), (), (1, 1)) == (1, 1)
    assert view_strides((0, 3), (3, 1), (3, 0)) == (1, 1)


def test_a_view_writes_into_its_base():
    x = R.zeros(4, 2)
    v = x[:, :1].view(1, 4, 1)  # non-contiguous base, size-1 dims: computeStride's strides
    v.add_(1)
    np.testing.assert_array_equal(x.numpy()[:, 0], np.ones(4))
    np.testing.assert_array_equal(x.numpy()[:, 1], np.zeros(4))


def test_setitem_into_a_view_of_the_same_single_element():
    # fuzz seed 904357: PyTorch sees a full overlap (equal strides) and copies
    def run(m):
        x = m.tensor([-1.04], requires_grad=True)
        g, = m.autograd.grad(x.sum(), [x], create_graph=True)
        v = g.t().view((1, 1))
        v[::2] = g
        return v.detach().numpy(), tuple(v.stride())
    got, want = run(R), run(torch)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def test_an_expanded_view_stays_read_only():
    v = R.tensor([1.0]).expand(3, 1).view(3)
    with pytest.raises(RuntimeError, match="more than one element"):
        v.add_(1)
