"""Every sampling op gives PyTorch's CPU numbers bit for bit after the same seed: the
in-place fills, torch.normal's overloads, the *_like creators, multinomial, nn.init and
the layers' default initialisation, dropout masks and the data samplers' orders."""

import numpy as np
import pytest
import torch

import retrograd as rt

SEEDS = [0, 7, 2**33 + 5]
SIZES = [1, 5, 15, 16, 17, 33, 100]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def _np(t):
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.float()
    return t.detach().numpy()


def _rnp(t):
    d = t.detach()
    if d.dtype in (rt.bfloat16, rt.float16):
        d = d.float()
    return d.numpy()


def _same(seed, torch_fn, rt_fn, rng_after=True):
    """Both functions from the same seed of the default generator give the same bits, and
    leave the generators in the same state."""
    torch.manual_seed(seed)
    rt.manual_seed(seed)
    a, b = torch_fn(), rt_fn()
    if not isinstance(a, (tuple, list)):
        a, b = [a], [b]
    for x, y in zip(a, b, strict=True):
        x, y = _np(x), _rnp(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), (x, y)
    if rng_after:
        assert torch.get_rng_state().numpy().tobytes() == rt.get_rng_state().numpy().tobytes()


def _pair(dtype):
    return getattr(torch, dtype), getattr(rt, dtype)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_fills(seed, n, dtype):
    td, rd = _pair(dtype)

    def run(lib, d):
        out = []
        for fill, args in [("uniform_", (-0.3, 0.7)), ("uniform_", (0.0, 1.0)),
                           ("normal_", (0.3, 1.7)), ("normal_", ()), ("bernoulli_", (0.3,)),
                           ("exponential_", (2.5,)), ("geometric_", (0.2,)),
                           ("log_normal_", (0.5, 0.25)), ("cauchy_", (0.1, 2.0)),
                           ("random_", ()), ("random_", (10,)), ("random_", (-3, 50))]:
            out.append(getattr(lib.empty(n, dtype=d), fill)(*args))
        out.append(lib.rand(n, dtype=d))
        out.append(lib.randn(n, dtype=d))
        return out

    _same(seed, lambda: run(torch, td), lambda: run(rt, rd))


@pytest.mark.parametrize("seed", SEEDS)
def test_fills_of_views_follow_memory_order(seed):
    def run(lib):
        base = lib.zeros(6, 20)
        base.T.uniform_(-1, 1)
        c = lib.zeros(20, 6)
        c[:, ::2].normal_(1.0, 2.0)  # not contiguous: the one-at-a-time path
        d = lib.zeros(3, 40)
        d.T.normal_()
        e = lib.zeros(4, 5).T.bernoulli_(0.5)
        return base, c, d, e

    _same(seed, lambda: run(torch), lambda: run(rt))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("pdtype", ["float32", "float64", "float16", "bfloat16"])
def test_bernoulli_with_tensor_probabilities(seed, pdtype):
    td, rd = _pair(pdtype)
    p = np.linspace(0, 1, 37)
    _same(seed, lambda: [torch.bernoulli(torch.tensor(p).to(td)),
                         torch.zeros(37).bernoulli_(torch.tensor(p).to(td))],
          lambda: [rt.bernoulli(rt.tensor(p).to(rd)),
                   rt.zeros(37).bernoulli_(rt.tensor(p).to(rd))])
    _same(seed, lambda: torch.bernoulli(torch.full((3, 5), 0.5, dtype=td), 0.2),
          lambda: rt.bernoulli(rt.full((3, 5), 0.5, dtype=rd), 0.2))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [3, 16, 40])
def test_normal_overloads_and_likes(seed, n):
    def run(lib, dt):
        m = lib.tensor(np.linspace(-1, 1, n), dtype=dt)  # (linspace itself rounds its own way)
        s = lib.tensor(np.linspace(0.1, 2, n), dtype=dt)
        x = lib.zeros(4, n, dtype=dt)
        return [lib.normal(m, s), lib.normal(m, 0.5), lib.normal(0.5, s),
                lib.normal(0.2, 3.0, size=(2, n)), lib.normal(m, s[:1]),
                lib.rand_like(x), lib.randn_like(x), lib.randint_like(x, 3, 9),
                lib.randn_like(x.T), lib.rand_like(x, dtype=lib.float64)]

    for dtype in ("float32", "float64"):
        _same(seed, lambda dtype=dtype: run(torch, getattr(torch, dtype)),
              lambda dtype=dtype: run(rt, getattr(rt, dtype)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial(seed, dtype):
    td, rd = _pair(dtype)
    w = np.array([[0.1, 0.0, 3.0, 1.0, 0.5, 0.25, 2.0], [1.0] * 7, [0, 0, 0, 1, 0, 0, 2]])

    def run(lib, d):
        t = lib.tensor(w, dtype=d)
        return [lib.multinomial(t, 5, replacement=True), lib.multinomial(t[0], 20, True),
                lib.multinomial(t, 1), lib.multinomial(t[1], 7), lib.multinomial(t, 2)]

    _same(seed, lambda: run(torch, td), lambda: run(rt, rd))


def test_generator_argument_and_errors():
    g1, g2 = torch.Generator().manual_seed(3), rt.Generator().manual_seed(3)
    a = torch.empty(40).normal_(generator=g1).numpy()
    b = rt.empty(40).normal_(generator=g2).numpy()
    assert a.tobytes() == b.tobytes()
    assert g1.get_state().numpy().tobytes() == g2.get_state().numpy().tobytes()
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        rt.zeros(3, dtype=rt.int64).uniform_()
    with pytest.raises(RuntimeError, match=r"expects p to be in \[0, 1\]"):
        rt.zeros(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
        rt.multinomial(rt.ones(3), 4)
