"""Checks and node names of nn's poolings and losses against torch 2.13: adaptive pooling's
size checks, the double-backward node names of the gather-based poolings, reduction and
float-only checks, layer options."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg


def _same_error(fn):
    got = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            fn(lib, lib.nn.functional)
        got.append((type(info.value), str(info.value)))
    (t1, m1), (t2, m2) = got
    assert t1 is t2 and m1.startswith(m2), (m1, m2)


@pytest.mark.parametrize("call", [
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(1, 2, 4, 4), -1),
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(1, 2, 4, 4), (2, -3)),
    lambda lib, F: F.adaptive_avg_pool1d(lib.ones(1, 2, 4), -1),
    lambda lib, F: F.adaptive_avg_pool3d(lib.ones(1, 2, 4, 4, 4), -1),
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(4), 2),
    lambda lib, F: F.adaptive_avg_pool1d(lib.ones(4), 2),
    lambda lib, F: F.adaptive_avg_pool3d(lib.ones(4, 4), 2),
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(1, 2, 4, 4), (2, 3, 4)),
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(1, 2, 0, 4), 2),
    lambda lib, F: F.adaptive_avg_pool1d(lib.ones(1, 2, 0), 2),
    lambda lib, F: F.adaptive_avg_pool3d(lib.ones(2, 0, 4, 4), 2),
    lambda lib, F: F.adaptive_max_pool2d(lib.ones(1, 2, 4, 4), -1),
    lambda lib, F: F.adaptive_max_pool1d(lib.ones(1, 2, 4), -1),
    lambda lib, F: F.adaptive_max_pool3d(lib.ones(1, 2, 4, 4, 4), -1),
    lambda lib, F: F.adaptive_max_pool2d(lib.ones(4), 2),
    lambda lib, F: F.adaptive_max_pool2d(lib.ones(1, 2, 4, 4), (2, 3, 4)),
    lambda lib, F: F.adaptive_max_pool2d(lib.ones(1, 0, 4, 4), 2),
])
def test_adaptive_pooling_size_errors_match_torch(call):
    _same_error(call)


@pytest.mark.parametrize("size", [0, (2, None), (None, 3), [1, 4]])
def test_adaptive_pooling_sizes_still_work(size):
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5))
    for name in ("adaptive_avg_pool2d", "adaptive_max_pool2d"):
        a = getattr(rg.nn.functional, name)(rg.tensor(x), size)
        b = getattr(torch.nn.functional, name)(torch.tensor(x), size)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call,shape", [
    (lambda F, x: F.adaptive_max_pool2d(x, 2), (1, 2, 4, 4)),
    (lambda F, x: F.adaptive_max_pool3d(x, 2), (1, 2, 4, 4, 4)),
    (lambda F, x: F.max_pool3d(x, 2), (1, 2, 4, 4, 4)),
    (lambda F, x: F.max_pool2d(x, 2), (1, 2, 4, 4)),
])
def test_double_backward_node_names_and_values_match_torch(call, shape):
    got = []
    for lib in (rg, torch):
        x = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).sin()
        x.requires_grad_(True)
        y = call(lib.nn.functional, x)
        gg = lib.ones_like(y).mul(2).requires_grad_(True)
        g, = lib.autograd.grad(y, x, gg, create_graph=True)
        ggg, = lib.autograd.grad((g * x.detach()).sum(), gg)
        got.append((y.grad_fn.name(), g.grad_fn.name(), ggg.numpy().copy()))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib, F: F.l1_loss(lib.ones(2), lib.ones(2), reduction="bad"),
    lambda lib, F: F.margin_ranking_loss(lib.ones(2), lib.ones(2), lib.ones(2), reduction="x"),
    lambda lib, F: F.gaussian_nll_loss(lib.ones(2), lib.ones(2), lib.ones(2), reduction="x"),
    lambda lib, F: F.soft_margin_loss(lib.ones(2), lib.ones(2), reduction="x"),
    lambda lib, F: F.elu(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.selu(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.rrelu(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.softplus(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.rrelu(lib.ones(2, dtype=lib.int64), training=True),
    lambda lib, F: F.gelu(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.logsigmoid(lib.ones(2, dtype=lib.int64)),
    lambda lib, F: F.adaptive_avg_pool2d(lib.ones(1, 2, 4, 4, dtype=lib.int64), 2),
])
def test_reduction_and_float_checks_match_torch(call):
    _same_error(call)


def test_margin_loss_defaults_and_padding_options_match_torch():
    for name, kw in (("MarginRankingLoss", {}), ("HingeEmbeddingLoss", {}),
                     ("MarginRankingLoss", {"margin": 0.5}), ("HingeEmbeddingLoss", {"margin": 2})):
        assert getattr(rg.nn, name)(**kw).margin == getattr(torch.nn, name)(**kw).margin
    for name, arg in (("ZeroPad1d", 2), ("ZeroPad2d", 1), ("ZeroPad2d", (1, 2, 3, 4)),
                      ("ReflectionPad3d", 1), ("ReplicationPad1d", (1, 2))):
        assert getattr(rg.nn, name)(arg).padding == getattr(torch.nn, name)(arg).padding
    assert rg.nn.ConstantPad2d(1, 0.5).padding == torch.nn.ConstantPad2d(1, 0.5).padding
    for name, kw in (("Conv2d", dict(kernel_size=3, padding=[1])),
                     ("MaxPool2d", dict(kernel_size=2)), ("AvgPool1d", dict(kernel_size=3))):
        args = (1, 1) if name == "Conv2d" else ()
        a, b = getattr(rg.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
        x = np.random.default_rng(0).standard_normal((1, 1, 6, 6) if name != "AvgPool1d"
                                                       else (1, 1, 6))
        if name == "Conv2d":
            with rg.no_grad():
                a.weight.copy_(rg.tensor(b.weight.detach().numpy()))
                a.bias.copy_(rg.tensor(b.bias.detach().numpy()))
            a, b = a.double(), b.double()
        np.testing.assert_allclose(a(rg.tensor(x)).detach().numpy(),
                                   b(torch.tensor(x)).detach().numpy(), rtol=1e-12)
