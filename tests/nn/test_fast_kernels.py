"""The kernels of the ops the training programs spend their time in, against torch on the
machine the tests run on: GELU (bit for bit where PyTorch runs oneDNN's AVX-512 kernels,
Note [GELU as oneDNN computes it]), layer_norm (Note [Layer norm kernels]) and
softmax/log_softmax over short and long rows with nan and -inf rows (Note [Softmax
kernels])."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from retrograd._core.cpu_capability import onednn_at_least, onednn_isa

torch = pytest.importorskip("torch")


def _gelu_inputs():
    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 5.54, 5.545, 5.6,
                        -5.6, 13.2, -13.3, 100.0, -100.0, 3.4e38, -3.4e38, 0.109, 0.11],
                       np.float32)
    bits = rng.integers(0, 2 ** 32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([(rng.standard_normal(100_000) * 3).astype(np.float32), special,
                           rng.uniform(-14, 14, 50_000).astype(np.float32), bits])


def test_gelu_float32_matches_torch():
    """Forward and backward of a contiguous float32 gelu: oneDNN's kernels, reproduced
    bit for bit where PyTorch runs their AVX-512 forms; elsewhere (AVX2's forward) close."""
    x = _gelu_inputs()
    g = np.random.default_rng(6).standard_normal(x.size).astype(np.float32)
    out = {}
    for m in (torch, R):
        t = m.tensor(x, requires_grad=True)
        y = m.nn.functional.gelu(t)
        y.backward(m.tensor(g))
        out[m.__name__] = (y.detach().numpy(), t.grad.numpy())
    (ty, tg), (ry, rg) = out["torch"], out["retrograd"]
    if onednn_isa() is None:
        pytest.skip("oneDNN's x86 kernels only")
    np.testing.assert_array_equal(rg.view(np.uint32), tg.view(np.uint32))  # backward: any ISA
    if onednn_at_least("AVX512_CORE"):
        np.testing.assert_array_equal(ry.view(np.uint32), ty.view(np.uint32))
    else:
        fin = np.isfinite(ty)
        np.testing.assert_array_equal(np.isnan(ry), np.isnan(ty))
        np.testing.assert_allclose(ry[fin], ty[fin], rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_gelu_tanh_matches_torch(dt):
    x = _gelu_inputs()[:100_019].astype(dt)
    g = np.random.default_rng(7).standard_normal(x.size).astype(dt)
    out = []
    for m in (torch, R):
        t = m.tensor(x, requires_grad=True)
        y = m.nn.functional.gelu(t, approximate="tanh")
        y.backward(m.tensor(g))
        out.append((y.detach().numpy(), t.grad.numpy()))
    tol = {"float32": (2e-6, 1e-5), "float64": (1e-13, 1e-12)}[dt]
    for r, t in zip(out[1], out[0]):
        np.testing.assert_array_equal(np.isnan(r), np.isnan(t))
        fin = np.isfinite(t)
        np.testing.assert_allclose(r[fin], t[fin], rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("shape,k,affine", [((16, 8, 32), 1, True), ((6, 5, 7), 2, True),
                                             ((9, 4), 1, False), ((4,), 1, True)])
def test_layer_norm_one_node_matches_torch(shape, k, affine):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    w, b = (rng.standard_normal(shape[-k:]).astype(np.float32) for _ in range(2))
    g = rng.standard_normal(shape).astype(np.float32)
    res = []
    for m in (torch, R):
        ts = [m.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = m.nn.functional.layer_norm(ts[0], shape[-k:], ts[1] if affine else None,
                                       ts[2] if affine else None, 1e-5)
        y.backward(m.tensor(g))
        res.append([y.grad_fn.name(), y.detach().numpy()] +
                   [t.grad.numpy() for t in ts if t.grad is not None])
    assert res[0][0] == res[1][0] == "NativeLayerNormBackward0"
    assert len(res[0]) == len(res[1])
    for r, t in zip(res[1][1:], res[0][1:]):
        np.testing.assert_allclose(r, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(64, 64), (3, 5, 16), (7, 65), (5, 1000), (4, 1)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_match_torch(shape, fn):
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if shape[0] > 3:  # a row of -inf, a row with a nan, a row with +inf
        x[1] = -np.inf
        x[2, 0] = np.nan
        x[3, -1] = np.inf
    g = rng.standard_normal(shape).astype(np.float32)
    res = []
    for m in (torch, R):
        t = m.tensor(x, requires_grad=True)
        y = getattr(m.nn.functional, fn)(t, dim=-1)
        y.backward(m.tensor(g))
        res.append((y.detach().numpy(), t.grad.numpy()))
    for r, t in zip(res[1], res[0]):
        np.testing.assert_array_equal(np.isnan(r), np.isnan(t))
        np.testing.assert_allclose(r, t, rtol=1e-5, atol=1e-6)


def test_softmax_double_backward_matches_torch():
    rng = np.random.default_rng(10)
    x, g = (rng.standard_normal((4, 8)) for _ in range(2))
    res = []
    for m in (torch, R):
        t = m.tensor(x, requires_grad=True)
        gt = m.tensor(g, requires_grad=True)
        (gx,) = m.autograd.grad(m.softmax(t, -1), t, gt, create_graph=True)
        res.append([a.numpy() for a in m.autograd.grad((gx * gx).sum(), (t, gt))])
    for r, t in zip(res[1], res[0]):
        np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12)
