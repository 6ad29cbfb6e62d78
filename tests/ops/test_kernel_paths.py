"""The fast paths of the large-array kernels against torch: batch-sliced convolutions,
col2im on padded rows, max pooling by kernel offsets, and the multiply form of relu's
gradient and sigmoid (Note [Kernel passes], Note [Convolution as one matrix product],
Note [col2im on padded rows], Note [Max pooling by kernel offsets])."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import retrograd as R
import retrograd.nn.functional as F
from retrograd.ops.records import nn as TN


def _close(r, t, rtol=1e-5, atol=1e-5):
    assert tuple(r.shape) == tuple(t.shape)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


@pytest.fixture
def tiny_slices(monkeypatch):
    """Columns of a few hundred bytes: every batch is cut into several slices."""
    monkeypatch.setattr(TN, "_SLICE_BYTES", 256)


CONV_CASES = [  # (nsp, cin, cout, groups, kernel, stride, padding, dilation, size)
    (1, 2, 4, 2, 3, 1, 1, 1, 9),
    (2, 3, 4, 1, 3, 1, 0, 1, 7),
    (2, 4, 6, 2, (2, 3), 1, (1, 2), (2, 1), 8),
    (2, 2, 3, 1, 3, 2, 1, 1, 9),
    (3, 2, 2, 1, 2, 1, 1, 1, 5),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_sliced_conv_matches_torch(case, tiny_slices):
    nsp, cin, cout, groups, k, s, p, d, size = case
    rng = np.random.default_rng(nsp + cin)
    ks = (k,) * nsp if isinstance(k, int) else k
    x = rng.standard_normal((5, cin) + (size,) * nsp).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups) + ks).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    name = f"conv{nsp}d"
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    rx, rw, rb = (R.tensor(a, requires_grad=True) for a in (x, w, b))
    to = getattr(TF, name)(tx, tw, tb, s, p, d, groups)
    ro = getattr(F, name)(rx, rw, rb, s, p, d, groups)
    _close(ro, to)
    assert ro._data.flags.c_contiguous  # relu and pooling read it at contiguous speed
    g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    tgx, tgw = torch.autograd.grad(to, (tx, tw), torch.tensor(g), create_graph=True)
    rgx, rgw = R.autograd.grad(ro, (rx, rw), R.tensor(g), create_graph=True)
    _close(rgx, tgx, atol=1e-4)
    _close(rgw, tgw, atol=1e-4)
    # second derivatives go through conv_transpose and conv_weight again
    t2 = torch.autograd.grad((tgx * tgx).sum() + (tgw * tgw).sum(), (tx, tw))
    r2 = R.autograd.grad((rgx * rgx).sum() + (rgw * rgw).sum(), (rx, rw))
    for r, t in zip(r2, t2):
        _close(r, t, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("stride,output_padding", [(1, 0), (2, 1)])
def test_conv_transpose2d_rows_matches_torch(stride, output_padding, tiny_slices):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 2)).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    rx, rw = R.tensor(x, requires_grad=True), R.tensor(w, requires_grad=True)
    to = TF.conv_transpose2d(tx, tw, None, stride, 1, output_padding, 2, (1, 2))
    ro = F.conv_transpose2d(rx, rw, None, stride, 1, output_padding, 2, (1, 2))
    _close(ro, to)
    g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    ro.backward(R.tensor(g))
    _close(rx.grad, tx.grad, atol=1e-4)
    _close(rw.grad, tw.grad, atol=1e-4)


def test_conv_transpose_with_inf_weight_matches_torch():
    # the padded-row col2im needs finite weights; inf takes the plain col2im
    w = np.ones((2, 1, 2, 2), np.float32)
    w[0, 0, 0, 0] = np.inf
    x = np.ones((1, 2, 3, 3), np.float32)
    to = TF.conv_transpose2d(torch.tensor(x), torch.tensor(w))
    ro = F.conv_transpose2d(R.tensor(x), R.tensor(w))
    np.testing.assert_array_equal(ro.numpy(), to.numpy())


@pytest.mark.parametrize("kind", ["normal", "ties", "nan"])
@pytest.mark.parametrize("cfg", [
    (2, 2, 2, 0, 1, False),  # tiled: stride == kernel
    (2, 3, 2, 1, 1, True),   # overlapping, padded, ceil_mode
    (3, (2, 3, 2), (2, 3, 2), 0, 1, False),
    (1, 3, 1, 1, 2, False),
])
def test_max_pool_by_offsets_matches_torch(kind, cfg):
    nsp, k, s, p, d, ceil = cfg
    rng = np.random.default_rng(3)
    shape = (2, 3) + (7,) * nsp
    if kind == "normal":
        x = rng.standard_normal(shape).astype(np.float32)
    else:
        x = rng.integers(0, 3, shape).astype(np.float32)
    if kind == "nan":
        x[rng.random(shape) < 0.1] = np.nan
    name = f"max_pool{nsp}d"
    tx, rx = torch.tensor(x, requires_grad=True), R.tensor(x, requires_grad=True)
    to, ti = getattr(TF, name)(tx, k, s, p, d, ceil, True)
    ro, ri = getattr(F, name)(rx, k, s, p, d, ceil, True)
    np.testing.assert_array_equal(ro.detach().numpy(), to.detach().numpy())
    if kind != "nan":  # torch keeps the last NaN of a window, retrograd the first
        assert ri.tolist() == ti.tolist()
        g = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        to.backward(torch.tensor(g))
        ro.backward(R.tensor(g))
        np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), atol=1e-6)


def test_relu_gradient_multiply_form_matches_where():
    # more than 8192 elements: the mask is written into the output as 0.0 / 1.0
    rng = np.random.default_rng(5)
    x = rng.standard_normal(20000).astype(np.float32)
    g = rng.standard_normal(20000).astype(np.float32)
    g[:3] = (-0.0, np.inf, np.nan)
    x[:3] = (-1.0, -1.0, -1.0)  # inf and nan gradients behind a closed mask give 0
    rx = R.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf * 0 inside the kernel warns nobody
        rx.relu().backward(R.tensor(g))
    expect = np.where(x > 0, g, 0).astype(np.float32)
    np.testing.assert_array_equal(rx.grad.numpy(), expect)
    assert not np.signbit(rx.grad.numpy()[0])  # +0.0, as where gives


def test_sigmoid_matches_torch_over_the_range():
    x = np.linspace(-120, 120, 20001).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning escapes the kernel
        r = R.tensor(x).sigmoid().numpy()
    t = torch.tensor(x).sigmoid().numpy()
    np.testing.assert_allclose(r, t, rtol=2e-6, atol=1e-37)
    assert R.tensor(0.5).sigmoid().shape == ()


def test_square_gradient_is_shared_and_correct():
    x = R.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x
    ga, gb = y.grad_fn(R.ones(3))
    assert ga.tolist() == gb.tolist() == [1.0, -2.0, 3.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, -4.0, 6.0]


@pytest.mark.parametrize("n", [6, 600_000])  # the small path and the blocked path
def test_relu_keeps_negative_zero_like_torch(n):
    import torch

    a = np.resize(np.array([-0.0, 0.0, np.nan, -1.0, 2.0, -np.inf], np.float32), n)
    r = R.relu(R.tensor(a)).numpy()
    t = torch.relu(torch.tensor(a)).numpy()
    np.testing.assert_array_equal(np.signbit(r), np.signbit(t))
    np.testing.assert_array_equal(r, t)
