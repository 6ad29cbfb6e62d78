"""The buffer pool for large kernel results, blocked fused kernels and gradient donation
(Note [Buffer pool], Note [Gradient donation] in ops/buffers.py, Note [Blocked kernels] in
ops/kernels/activations.py). Arrays stay small: fixtures lower the pool threshold and the block
size."""

from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd.ops import buffers as B
from retrograd.ops.kernels import activations as KA


@pytest.fixture
def pool():
    """Pool every array of 64 bytes or more; start and end with an empty pool (earlier
    tests' garbage collected first, so no block of theirs is returned mid-test)."""
    gc.collect()
    old = B.configure(enabled=True, threshold=64, max_free=256 << 20)
    B.empty_cache()
    yield
    B.configure(**old)
    B.empty_cache()


@pytest.fixture
def blocks(monkeypatch):
    """Blocks of 256 bytes: a 2000-element array runs the blocked kernels in 32 blocks."""
    monkeypatch.setattr(KA, "_BLOCK_BYTES", 256)
    monkeypatch.setattr(KA, "_BLOCKED_MIN", 1024)


def _ptr(x) -> int:
    a = x._data if isinstance(x, R.Tensor) else x
    return a.__array_interface__["data"][0]


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def test_block_is_reused_after_the_tensor_dies(pool):
    a = R.randn(1000)
    t = a * 2
    p = _ptr(t)
    assert B.stats()["used_blocks"] == 1
    del t
    assert B.stats()["free_blocks"] == 1
    u = a * 3
    assert _ptr(u) == p  # the most recently freed block of the size class
    np.testing.assert_array_equal(u.numpy(), a.numpy() * np.float32(3))


HOLDERS = {
    "tensor": lambda t: t,
    "view": lambda t: t[10:20],
    "reshape": lambda t: t.reshape(20, 50),
    "detach": lambda t: t.detach(),
    "numpy": lambda t: t.numpy(),
    "numpy_view": lambda t: t.numpy()[::3],
    "memoryview": lambda t: memoryview(t.numpy()),
}


@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_block_is_not_reused_while_anything_uses_it(pool, holder):
    a = R.randn(1000)
    t = a * 2
    p = _ptr(t)
    keep = HOLDERS[holder](t)
    before = np.array(keep, copy=True)
    del t
    others = [a * float(k) for k in range(2, 6)]  # all alive: each needs its own block
    assert all(_ptr(o) != p for o in others)
    np.testing.assert_array_equal(np.asarray(keep), before)
    del keep, others
    assert B.stats()["free_blocks"] == 5 and B.stats()["used_blocks"] == 0  # all back


def test_a_memoryview_derived_from_a_block_keeps_it_out_of_the_pool(pool):
    a = R.randn(1000)
    t = a * 2
    p = _ptr(t)
    flat = t._data
    while isinstance(flat.base, np.ndarray):
        flat = flat.base
    mv = flat.base[8:]  # a memoryview sharing the block's buffer, not holding the array
    assert isinstance(mv, memoryview)
    del t, flat
    assert B.stats()["free_blocks"] == 0  # dropped, never handed out again
    u = a * 3
    assert _ptr(u) != p
    mv[:4] = b"\0\0\0\0"  # still writable memory of its own
    np.testing.assert_array_equal(u.numpy(), a.numpy() * np.float32(3))


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # torch's
def test_numpy_array_copy_true_copies():
    # np.array(t, copy=True) passes copy=True to __array__, which must then copy (NumPy 2)
    for m in (R, torch):
        t = m.ones(3)
        a = np.array(t, copy=True)
        a[0] = 5.0
        assert float(t[0]) == 1.0
        assert np.shares_memory(np.asarray(t), np.asarray(t))


def test_views_in_place_ops_storage_and_numpy_on_pooled_tensors(pool):
    b = R.randn(20, 50)
    t = b * 2
    assert t._data.base is not None and t.is_contiguous()
    v = t[3]
    t.add_(1)
    np.testing.assert_array_equal(v.numpy(), b.numpy()[3] * np.float32(2) + np.float32(1))
    v.mul_(0)
    assert float(t[3].abs().sum()) == 0.0
    assert t.untyped_storage().data_ptr() == t.data_ptr() == v.untyped_storage().data_ptr()
    assert np.shares_memory(t.numpy(), t._data)
    tt = t.t() * 1.0  # a transposed input: NumPy's own (Fortran-order) result, not pooled
    assert tt._data.flags.f_contiguous
    f = io.BytesIO()
    R.save(t, f)
    f.seek(0)
    np.testing.assert_array_equal(R.load(f).numpy(), t.numpy())


def test_empty_cache_and_the_cap_on_free_bytes(pool):
    a = R.randn(1000)  # 4000 bytes: size class 4096
    ts = [a * float(k) for k in range(6)]
    del ts
    assert B.stats()["free_blocks"] == 6 and B.stats()["free_bytes"] == 6 * 4096
    R.cpu.empty_cache()
    assert B.stats()["free_blocks"] == 0 and B.stats()["free_bytes"] == 0
    B.configure(max_free=2 * 4096)
    ts = [a * float(k) for k in range(6)]
    del ts
    assert B.stats()["free_bytes"] == 2 * 4096  # the oldest were handed back
    assert B.stats()["used_blocks"] == 0


def test_pool_off_gives_plain_arrays(pool):
    B.configure(enabled=False)
    assert B.pool_min() == sys.maxsize
    t = R.randn(1000) * 2
    assert t._data.base is None and B.stats()["used_blocks"] == 0


def test_environment_switches():
    code = ("import sys; from retrograd.ops import buffers as B; "
            "print(B.pool_min() == sys.maxsize, B.empty((100,), 'f4').base is None)")
    env = dict(os.environ, RETROGRAD_CPU_POOL="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "True"], out.stderr
    env = dict(os.environ, RETROGRAD_CPU_POOL="1", RETROGRAD_CPU_POOL_MIN="128")
    code = "from retrograd.ops import buffers as B; print(B.pool_min())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "128", out.stderr


def test_threads_share_the_pool(pool):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(3000).astype(np.float32) for _ in range(4)]

    def work(x):
        t = R.tensor(x, requires_grad=True)
        ((t * 2 + 1).tanh() * t).sigmoid().sum().backward()
        return t.grad.numpy().copy()

    B.configure(enabled=False)
    expect = [work(x) for x in xs]
    B.configure(enabled=True)
    got = [None] * len(xs)

    def run(i):
        for _ in range(20):
            got[i] = work(xs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for e, g in zip(expect, got):
        assert _bits(e) == _bits(g)
    assert B.stats()["used_blocks"] == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_uses_its_own_pool(pool):
    a = R.randn(1000)
    keep = a * 2
    pid = os.fork()
    if pid == 0:  # the child: a fresh lock, the parent's blocks as copy-on-write copies
        try:
            t = a * 3
            ok = np.array_equal(t.numpy(), a.numpy() * np.float32(3)) and \
                np.array_equal(keep.numpy(), a.numpy() * np.float32(2))
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _specials(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x[::97] = np.nan
    x[::89] = np.inf
    x[::83] = -np.inf
    x[::79] = -0.0
    x[::73] = 0.0
    return x


def _w7_chain(m, x0, c0, g0):
    """W7's ten ops and a few more, forward and backward; every result as NumPy."""
    x = m.tensor(x0, requires_grad=True)
    c = m.tensor(c0)
    y = x * c
    y = y + 1.0
    y = y.tanh()
    y = y * y
    y = y - 0.5
    y = y.sigmoid()
    y = y * 2.0
    y = y.exp()
    y = y / c
    y = y.relu()
    y = y * x.sigmoid() + x.relu() - x.tanh()
    y.backward(m.tensor(g0))
    return [y.detach().numpy(), x.grad.numpy()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_are_bit_identical_with_the_pool_on_and_off(pool, blocks, dtype):
    rng = np.random.default_rng(1)
    x0 = _specials((rng.standard_normal(2003) * 30).astype(dtype))
    c0 = (rng.random(2003) + 0.5).astype(dtype)
    g0 = _specials(rng.standard_normal(2003).astype(dtype)[::-1])
    with np.errstate(all="ignore"):
        on = _w7_chain(R, x0, c0, g0)
        B.configure(enabled=False)
        KA._BLOCKED_MIN = sys.maxsize  # and unblocked kernels
        off = _w7_chain(R, x0, c0, g0)
    for a, b in zip(on, off):
        assert _bits(a) == _bits(b)


def test_w7_chain_gradients_match_torch(pool, blocks):
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal(4000).astype(np.float32)
    c0 = (rng.random(4000) + 0.5).astype(np.float32)
    g0 = np.ones(4000, np.float32)
    for r, t in zip(_w7_chain(R, x0, c0, g0), _w7_chain(torch, x0, c0, g0)):
        np.testing.assert_allclose(r, t, rtol=2e-6, atol=1e-6)


def test_blocked_kernels_match_the_unblocked_ones(pool, blocks):
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        a = _specials((rng.standard_normal(2001) * 20).astype(dtype))
        g = _specials(rng.standard_normal(2001).astype(dtype)[::-1])
        y = np.abs(a)
        y[::7] = -1.0
        with np.errstate(all="ignore"):
            got = [KA.sigmoid_kernel(a), KA.relu_kernel(a), KA.tanh_backward_kernel(g, a),
                   KA.sigmoid_backward_kernel(g, a), KA.threshold_backward_kernel(g, y)]
            KA._BLOCKED_MIN = sys.maxsize
            want = [KA.sigmoid_kernel(a), KA.relu_kernel(a), KA.tanh_backward_kernel(g, a),
                    KA.sigmoid_backward_kernel(g, a), np.where(y <= 0, 0, g).astype(dtype)]
            KA._BLOCKED_MIN = 1024
        for k, (x, w) in enumerate(zip(got, want)):
            assert x.dtype == w.dtype and x.shape == w.shape, k
            assert _bits(x) == _bits(w), k


def _spy_donations(monkeypatch) -> list:
    taken = []
    real = B.result_for

    def spy(x, y, shape, dtype):
        offered = B._DONATION.array
        out = real(x, y, shape, dtype)
        if offered is not None and out is offered:
            taken.append(out.shape)  # not the array: a reference would stop the next offer
        return out

    monkeypatch.setattr(B, "result_for", spy)
    return taken


def test_backward_writes_into_the_gradients_it_consumes(pool, monkeypatch):
    taken = _spy_donations(monkeypatch)
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal(500).astype(np.float32)
    c0 = (rng.random(500) + 0.5).astype(np.float32)
    r = _w7_chain(R, x0, c0, np.ones(500, np.float32))
    assert len(taken) >= 5
    t = _w7_chain(torch, x0, c0, np.ones(500, np.float32))
    np.testing.assert_allclose(r[1], t[1], rtol=2e-6, atol=1e-6)


def test_no_donation_where_someone_else_sees_the_gradient(pool, monkeypatch):
    taken = _spy_donations(monkeypatch)
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal(300)
    g0 = rng.standard_normal(300)

    def run(m):
        seen = []
        x = m.tensor(x0, requires_grad=True)
        a = x.exp()
        b = a * 3.0
        b.register_hook(lambda g: seen.append(g))  # the hook keeps b's gradient
        c = b.sin()
        c.retain_grad()
        d = c.exp() + c  # c's gradient is a sum of two
        e = d * d + d  # d is used three times
        g = m.tensor(g0)
        e.backward(g)
        gx, = m.autograd.grad((x * x).exp().sum(), x)
        return [x.grad, seen[0], c.grad, g, gx]

    r = run(R)
    t = run(torch)
    for a, b in zip(r, t):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(r[3].numpy(), g0)  # the user's gradient is untouched
    assert taken  # and the ops nobody else sees did write in place


def test_no_donation_with_create_graph_or_forward_ad(pool, monkeypatch):
    taken = _spy_donations(monkeypatch)
    x0 = np.linspace(-2, 2, 200)
    v0 = np.cos(np.arange(200.0))

    def run(m):
        x = m.tensor(x0, requires_grad=True)
        g, = m.autograd.grad((x.sin() * x).exp().sum(), x, create_graph=True)
        h, = m.autograd.grad((g * g).sum(), x)
        _, hv = m.autograd.functional.hvp(lambda t: (t.sin() * t * t).sum(), m.tensor(x0),
                                          m.tensor(v0))
        return [g, h, hv]

    for a, b in zip(run(R), run(torch)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)
    assert taken  # the second-order pass (no create_graph) still donates


class _KeepsItsGradient:
    """A custom Function whose backward keeps the gradient it returns."""

    def __init__(self, m):
        kept = self.kept = []

        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2.0

            @staticmethod
            def backward(ctx, g):
                r = g * 2.0
                kept.append(r)
                return r

        self.fn = Twice


def test_donation_only_of_memory_the_engine_alone_holds(pool, monkeypatch):
    # explicit ownership (Note [Gradient donation]): one gradient handed to two nodes,
    # autograd.grad's answers (a non-leaf's and a leaf's), what a custom Function's
    # backward returned and kept: none is written into while someone else holds it
    taken = _spy_donations(monkeypatch)
    rng = np.random.default_rng(6)
    x0, y0, z0, g0 = (rng.standard_normal(300) for _ in range(4))

    def run(m):
        keep = _KeepsItsGradient(m)
        x, y, z = (m.tensor(v, requires_grad=True) for v in (x0, y0, z0))
        a = (x.exp() + x.sin()) * 3.0  # add hands one gradient to exp and sin
        h = keep.fn.apply(y.sin()).exp()  # the custom backward's result flows into sin
        k = h.sin()
        u = (z + k.exp()) * 3.0  # add's gradient: to the leaf z and to exp
        out = a * 2.0 + u
        gk, gz, gy, gx = m.autograd.grad(out, (k, z, y, x), m.tensor(g0))
        return [gk, gz, gy, gx, keep.kept[0]]

    for a, b in zip(run(R), run(torch)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    assert taken  # what the engine alone held was still written into
