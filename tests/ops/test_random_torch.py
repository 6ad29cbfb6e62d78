"""rand, randn, randint and randperm give PyTorch's CPU numbers bit for bit after manual_seed
(both sides of randn's 16-element switch, float32 and float64, the cached normal sample)."""

import numpy as np
import pytest
import torch

import retrograd as rt

SEEDS = [0, 1, 42, 2**32 + 7, 67280421310721]
SIZES = [1, 7, 15, 16, 17, 100, 1000]
DTYPES = ["float32", "float64"]


def _same(seed, torch_fn, rt_fn, generator=False):
    if generator:
        a = torch_fn(torch.Generator().manual_seed(seed)).numpy()
        b = rt_fn(rt.Generator().manual_seed(seed)).numpy()
    else:
        torch.manual_seed(seed)
        rt.manual_seed(seed)
        a, b = torch_fn(None).numpy(), rt_fn(None).numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rand_randn_bit_for_bit(seed, n, dtype):
    td, rd = getattr(torch, dtype), getattr(rt, dtype)
    for fn in ("rand", "randn"):
        _same(seed, lambda g, fn=fn: getattr(torch, fn)(n, dtype=td, generator=g),
              lambda g, fn=fn: getattr(rt, fn)(n, dtype=rd, generator=g))


@pytest.mark.parametrize("dtype", DTYPES)
def test_randn_sequences_share_the_cached_normal(dtype):
    # an odd-sized small randn leaves the sine half of a Box-Muller pair for the next call
    td, rd = getattr(torch, dtype), getattr(rt, dtype)
    for seed in SEEDS[:3]:
        _same(seed, lambda g: torch.cat([torch.randn(3, dtype=td), torch.randn(1, dtype=td),
                                         torch.randn(17, dtype=td), torch.randn(5, dtype=td),
                                         torch.rand(2, dtype=td)]),
              lambda g: rt.cat([rt.randn(3, dtype=rd), rt.randn(1, dtype=rd),
                                rt.randn(17, dtype=rd), rt.randn(5, dtype=rd),
                                rt.rand(2, dtype=rd)]))


def test_shapes_and_explicit_generator():
    _same(3, lambda g: torch.randn(4, 5, 6, generator=g), lambda g: rt.randn(4, 5, 6, generator=g),
          generator=True)
    _same(3, lambda g: torch.rand((3, 7), generator=g), lambda g: rt.rand((3, 7), generator=g),
          generator=True)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_randint_randperm_bit_for_bit(seed, n):
    _same(seed, lambda g: torch.randint(-5, 10, (n,), generator=g),
          lambda g: rt.randint(-5, 10, (n,), generator=g))
    _same(seed, lambda g: torch.randint(0, 2**40, (n,), generator=g),  # random64 words
          lambda g: rt.randint(0, 2**40, (n,), generator=g))
    _same(seed, lambda g: torch.randint(7, (2, n), generator=g, dtype=torch.int32),
          lambda g: rt.randint(7, (2, n), generator=g, dtype=rt.int32))
    _same(seed, lambda g: torch.randperm(n, generator=g), lambda g: rt.randperm(n, generator=g))


def test_default_generator_before_any_seed_matches_a_fresh_one():
    # PyTorch's default seed is 67280421310721; a fresh Generator starts from it
    a = torch.rand(5, generator=torch.Generator()).numpy()
    b = rt.rand(5, generator=rt.Generator()).numpy()
    np.testing.assert_array_equal(a, b)


def test_rng_state_round_trip_keeps_the_cached_normal():
    rt.manual_seed(5)
    rt.randn(1)  # leaves a cached sample
    s = rt.get_rng_state()
    a = rt.randn(3)
    rt.set_rng_state(s)
    np.testing.assert_array_equal(a.numpy(), rt.randn(3).numpy())


@pytest.mark.parametrize("draws", [0, 1, 2, 7, 623, 624, 625, 1300])
def test_rng_state_is_pytorchs_layout(draws):
    # the same bytes as torch.get_rng_state() after the same draws, and both directions load
    for fn in ("randint", "randn1"):
        torch.manual_seed(11)
        rt.manual_seed(11)
        if draws:
            if fn == "randint":
                torch.randint(0, 5, (draws,))
                rt.randint(0, 5, (draws,))
            else:
                torch.randn(1, dtype=torch.float64)  # caches a double normal
                rt.randn(1, dtype=rt.float64)
                torch.randint(0, 5, (draws,))
                rt.randint(0, 5, (draws,))
        ts, rs = torch.get_rng_state(), rt.get_rng_state()
        assert ts.numpy().tobytes() == rs.numpy().tobytes()
        a = torch.randn(5, dtype=torch.float64).numpy()
        rt.set_rng_state(rt.tensor(ts.numpy()))
        np.testing.assert_array_equal(a, rt.randn(5, dtype=rt.float64).numpy())
        torch.set_rng_state(torch.from_numpy(rs.numpy().copy()))
        np.testing.assert_array_equal(a, torch.randn(5, dtype=torch.float64).numpy())


def test_set_rng_state_rejects_a_wrong_size():
    with pytest.raises(RuntimeError, match="CPUGeneratorImplState of size 5056"):
        rt.set_rng_state(rt.zeros(10, dtype=rt.uint8))


@pytest.mark.parametrize("seed", [0, 1, 123])
@pytest.mark.parametrize("n", [15, 16, 17, 1000, 65536 + 17, 10**5])
def test_large_float32_randn_crosses_chunks(seed, n):
    # retrograd/_random/avx_math.py works in blocks of 4096 rows of 16 (Note [Chunks])
    _same(seed, lambda g: torch.randn(n, generator=g), lambda g: rt.randn(n, generator=g),
          generator=True)
    _same(seed, lambda g: torch.empty(n).normal_(0.5, 3.0, generator=g),
          lambda g: rt.empty(n).normal_(0.5, 3.0, generator=g), generator=True)


def _round_f32(x):
    """The float32 nearest to the Fraction x (ties to even), without double rounding."""
    from fractions import Fraction

    near = np.float32(float(x))
    cands = [near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))]
    dist = [abs(Fraction(float(c)) - x) for c in cands]
    best = min(dist)
    ties = [c for c, d in zip(cands, dist) if d == best]
    return min(ties, key=lambda c: int(np.array(c).view(np.int32)) & 1)


def test_exact_float32_fma_on_midpoints():
    # a*b + c rounded once, also where the float64 sum lands on a float32 midpoint (the
    # inputs are built so that it does: 1 + a*b with a*b just off 2**-24)
    from fractions import Fraction

    from retrograd._random.avx_math import fma32

    rng = np.random.default_rng(0)
    a = rng.uniform(1, 2, 4000).astype(np.float32)
    b = (np.float64(2.0 ** -24) / a).astype(np.float32)
    c = np.ones(4000, np.float32)
    naive = (a.astype(np.float64) * b + c).astype(np.float32)
    want = np.array([_round_f32(Fraction(float(x)) * Fraction(float(y)) + 1) for x, y in zip(a, b)],
                    np.float32)
    assert (naive != want).sum() > 10  # the hard cases are there
    assert fma32(a, b, c).tobytes() == want.tobytes()
    x = rng.standard_normal(3000).astype(np.float32)
    y = rng.standard_normal(3000).astype(np.float32)
    z = rng.standard_normal(3000).astype(np.float32) * np.float32(1e-3)
    want = np.array([_round_f32(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)))
                     for p, q, r in zip(x, y, z)], np.float32)
    assert fma32(x, y, z).tobytes() == want.tobytes()


def test_randn_recomputes_a_block_with_the_checked_fma(monkeypatch):
    # the path taken when a deferred check finds a double rounding gives the same numbers
    from retrograd._random import avx_math

    monkeypatch.setattr(avx_math._Deferred, "rounded_twice", lambda self: True)
    _same(4, lambda g: torch.randn(100, generator=g), lambda g: rt.randn(100, generator=g),
          generator=True)
