"""Random number generators: a global default and ``Generator`` objects.

Each generator is a Mersenne Twister (MT19937) seeded as PyTorch's CPU generator is, and
``rand``/``randn``/``randint``/``randperm`` turn its words into numbers the way PyTorch's
CPU kernels do, so the same seed gives PyTorch's numbers (see Note [PyTorch's CPU stream]).

Example:
    >>> import retrograd as torch
    >>> _ = torch.manual_seed(0); a = torch.rand(3)
    >>> _ = torch.manual_seed(0); b = torch.rand(3)
    >>> bool(torch.equal(a, b))
    True
"""

from __future__ import annotations

import math
import os
import struct
import time

import numpy as np

from .._core.cpu_capability import cpu_capability
from .._graph.modes import MODES, VMAP
from .._tensor.tensor import Tensor
from .avx_math import box_muller_16 as box_muller_16_f32
from .avx_math import fma32, fma64, mul_add

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "default_generator", "fork_rng"]


# Note [PyTorch's CPU stream]
# PyTorch's CPU generator is a 32-bit Mersenne Twister initialised with init_genrand from
# the seed's low 32 bits (NumPy's MT19937 runs the same recurrence; we set its state from
# RandomState's legacy seeding, which is init_genrand). PyTorch reads it as
#   random()   one 32-bit word;   random64()  two words, the first one the high half;
#   uniform    float: (random() & (2**24 - 1)) * 2**-24, double: (random64() & (2**53 - 1))
#              * 2**-53, element after element;
#   randint    (word % range) + low, with random64() when range >= 2**28, else random();
#   randperm   Fisher-Yates, r[i] <-> r[i + random() % (n - i)] for n < 2**32 / 20;
#   randn      numel >= 16 and contiguous: fill with uniforms, then Box-Muller on blocks of 16
#              (u1 = 1 - d[j], u2 = d[j + 8] for j < 8; d[j] = r cos, d[j + 8] = r sin), the
#              last partial block redrawn as 16 fresh uniforms over the tensor's last 16;
#              numel < 16 or not contiguous: one double Box-Muller pair per two elements,
#              the sine half kept in the generator for the next draw (manual_seed clears
#              it); normal_(mean, std) ends both paths with fma(x, std, mean) (the
#              one-at-a-time path with a plain multiply-add on the DEFAULT capability:
#              avx_math.mul_add; the block path rounds once on every capability);
# The double Box-Muller uses glibc's scalar log/cos/sin (Python's math module), because
# NumPy's SIMD loops round differently in the last bit. The float32 one follows PyTorch's
# CPU capability (Note [CPU capability]): on AVX2 and AVX-512 it is the AVX2 kernel,
# Cephes polynomials with fused multiply-adds, evaluated in retrograd/_random/avx_math.py; on
# DEFAULT (ATEN_CPU_CAPABILITY=default, a CPU without AVX2 and FMA, aarch64) it is the
# scalar loop, the C library's logf/cosf/sinf in float32 with every product rounded
# (no fused multiply-add), called here through ctypes (_box_muller_16_scalar_f32).
# The other distributions (uniform_ with bounds, bernoulli, exponential, ..., multinomial)
# are in retrograd/_random/distributions.py; every consumer (nn.init, dropout, the data samplers)
# draws through these functions, so one seed gives PyTorch's numbers everywhere.

# Note [State layout]
# get_rng_state() is PyTorch's CPUGeneratorImplState, 5056 little-endian bytes: uint64 seed,
# int32 left, int32 seeded, uint64 next, 624 uint64 slots holding the mt19937 words, then
# double normal_x, normal_y, normal_rho, int32 normal_is_valid (normal_y is the cached
# double normal sample), float next_float_normal_sample, bool its validity, padding.
# mt19937's (left, next) and NumPy's pos say the same: a fresh or exhausted block is
# left == 1 (pos 624), otherwise pos = next = 625 - left. set_rng_state also takes the
# 5048-byte legacy layout (no float cache), as PyTorch does.

_DEFAULT_SEED = 67280421310721
_N = 624
_STATE_BYTES, _LEGACY_BYTES = 5056, 5048
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddif?7x")
_TAIL_AT = 24 + 8 * _N


def _mt19937(seed: int) -> np.random.MT19937:
    """A NumPy MT19937 in the state PyTorch's ``mt19937(seed)`` starts from."""
    legacy = np.random.RandomState(seed & 0xFFFFFFFF).get_state()
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": legacy[1], "pos": legacy[2]}}
    return bits


class Generator:
    """A source of random numbers, passed as ``generator=`` to random functions.

    Example:
        >>> import retrograd as torch
        >>> g = torch.Generator().manual_seed(42)
        >>> torch.randn(2, generator=g).shape
        torch.Size([2])
    """

    def __init__(self, device="cpu"):
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        from .._core.device import CPU

        return CPU

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        # PyTorch keeps seeds as uint64: negative seeds wrap, larger ones are refused
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        seed &= 0xFFFFFFFFFFFFFFFF
        self._seed = seed
        bits = _mt19937(seed)
        self._seed_key = bits.state["state"]["key"]
        self._reset(bits)
        self.next_float_normal = None
        return self

    def _reset(self, bits: np.random.MT19937, next_normal: float | None = None) -> None:
        self.bits = bits
        self.next_double_normal = next_normal

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little") ^ time.time_ns()
        s &= 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator state as PyTorch's 5056-byte uint8 tensor (see Note [State layout]).

        Example:
            >>> import retrograd as torch
            >>> torch.Generator().manual_seed(5).get_state().shape
            torch.Size([5056])
        """
        from .._tensor.tensor import _make

        st = self.bits.state["state"]
        pos = int(st["pos"])
        if pos < _N:
            left, nxt = _N + 1 - pos, pos
        else:  # the next draw regenerates the block: next is 0 only before the first one
            left, nxt = 1, 0 if np.array_equal(st["key"], self._seed_key) else _N
        buf = np.zeros(_STATE_BYTES, np.uint8)
        buf[:24] = np.frombuffer(_HEAD.pack(self._seed, left, 1, nxt), np.uint8)
        buf[24:_TAIL_AT] = np.asarray(st["key"], "<u8").view(np.uint8)
        buf[_TAIL_AT:] = np.frombuffer(_TAIL.pack(
            0.0, self.next_double_normal or 0.0, 0.0, self.next_double_normal is not None,
            self.next_float_normal or 0.0, self.next_float_normal is not None), np.uint8)
        return _make(buf)

    def set_state(self, state) -> Generator:
        """Restore a state from ``get_state()`` (or PyTorch's ``get_rng_state()``).

        Example:
            >>> import retrograd as torch
            >>> g = torch.Generator(); s = g.get_state(); a = torch.rand(2, generator=g)
            >>> bool(torch.equal(a, torch.rand(2, generator=g.set_state(s))))
            True
        """
        if not (hasattr(state, "_data") and state._data.dtype == np.uint8):
            raise TypeError("RNG state must be a torch.ByteTensor (pass what get_rng_state() "
                            "returned)")
        raw = bytes(state._data.reshape(-1))
        if len(raw) not in (_STATE_BYTES, _LEGACY_BYTES):
            raise RuntimeError("Expected either a THGeneratorState of size 5048 or a "
                               "CPUGeneratorImplState of size 5056 but found the input RNG state "
                               f"size to be {len(raw)}. Pass what get_rng_state() returned (states "
                               "saved by retrograd before it followed PyTorch's layout cannot "
                               "be restored).")
        seed, left, _, nxt = _HEAD.unpack(raw[:24])
        key = np.frombuffer(raw[24:_TAIL_AT], "<u8").astype(np.uint32)
        _, normal_y, _, normal_valid = struct.unpack("<dddi", raw[_TAIL_AT:_TAIL_AT + 28])
        fnormal, fvalid = (struct.unpack("<f?", raw[5044:5049]) if len(raw) == _STATE_BYTES
                           else (0.0, False))
        if not 1 <= left <= _N or nxt > _N:
            raise RuntimeError("The input RNG state has an invalid mt19937 position "
                               f"(left={left}, next={nxt}); pass what get_rng_state() returned")
        bits = np.random.MT19937()
        bits.state = {"bit_generator": "MT19937",
                      "state": {"key": key, "pos": _N if left == 1 else _N + 1 - left}}
        self._seed = seed
        self._seed_key = _mt19937(seed).state["state"]["key"]
        self._reset(bits, normal_y if normal_valid else None)
        self.next_float_normal = fnormal if fvalid else None
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state (PyTorch's ``Generator.clone_state``).

        Example:
            >>> import retrograd as torch
            >>> g = torch.Generator().manual_seed(3)
            >>> a = torch.rand(2, generator=g.clone_state())
            >>> bool(torch.equal(a, torch.rand(2, generator=g)))
            True
        """
        return Generator().set_state(self.get_state())


default_generator = Generator()


#: vmap's check before a draw (Note [Randomness under vmap] in _functorch/random.py):
#: installed by _functorch/random.py when it is imported (vmap is imported with retrograd)
VMAP_DRAW_CHECK: list = [None]


def _of(generator) -> Generator:
    if MODES.bits & VMAP:  # only while a vmap is open on this thread
        VMAP_DRAW_CHECK[0]()
    return generator or default_generator


def random32(generator, n: int) -> np.ndarray:
    """``n`` words of PyTorch's ``random()`` (uint64 array of 32-bit values).

    Example:
        >>> from retrograd._random import rng
        >>> rng.random32(rng.Generator().manual_seed(0), 2).tolist()
        [2357136044, 2546248239]
    """
    return _of(generator).bits.random_raw(n)


def random64(generator, n: int) -> np.ndarray:
    """``n`` values of PyTorch's ``random64()``: two words each, the first the high half.

    Example:
        >>> from retrograd._random import rng
        >>> hex(int(rng.random64(rng.Generator().manual_seed(0), 1)[0]))
        '0x8c7f0aac97c4aa2f'
    """
    w = _of(generator).bits.random_raw(2 * n)
    return (w[0::2] << np.uint64(32)) | w[1::2]


def uniform(generator, n: int, dtype) -> np.ndarray:
    """``n`` uniforms in [0, 1) as PyTorch's ``uniform_real_distribution`` (float32/float64).

    Example:
        >>> from retrograd._random import rng
        >>> rng.uniform(rng.Generator().manual_seed(0), 2, "float32")
        array([0.4962566, 0.7682218], dtype=float32)
    """
    if np.dtype(dtype) == np.float64:
        return (random64(generator, n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    words = random32(generator, n) & np.uint64((1 << 24) - 1)
    return words.astype(np.float32) * np.float32(2.0 ** -24)


def _libm(fn):
    """``fn`` (a glibc scalar function from ``math``) over a float64 array."""
    def apply(x: np.ndarray) -> np.ndarray:
        return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)
    return apply


_log, _cos, _sin = _libm(math.log), _libm(math.cos), _libm(math.sin)
_log1p = _libm(math.log1p)


def _box_muller_16(d: np.ndarray, mean: float = 0.0, std: float = 1.0) -> None:
    """PyTorch's double Box-Muller in place on blocks of 16 (``d`` has shape (k, 16)), then
    fma(d, std, mean)."""
    radius = np.sqrt(-2.0 * _log(1.0 - d[:, :8]))
    theta = 2.0 * math.pi * d[:, 8:]
    d[:, :8] = radius * _cos(theta)
    d[:, 8:] = radius * _sin(theta)
    if std != 1 or mean != 0:
        d[...] = fma64(d, float(std), float(mean))  # one rounding on every capability


def _c_float_function(name: str):
    """The C library's float32 ``name`` (logf, cosf, sinf) over a float32 array, or, where
    no C math library can be loaded, the float64 function rounded to float32."""
    lib = _libm_handle()
    if lib is None:
        fn = getattr(math, name[:-1])
        return lambda x: np.fromiter(map(fn, x.ravel().tolist()), np.float64,
                                     x.size).astype(np.float32).reshape(x.shape)
    import ctypes

    cfn = getattr(lib, name)
    cfn.restype, cfn.argtypes = ctypes.c_float, [ctypes.c_float]
    return lambda x: np.fromiter(map(cfn, x.ravel().tolist()), np.float32,
                                 x.size).reshape(x.shape)


def _libm_handle():
    import ctypes
    import ctypes.util

    path = ctypes.util.find_library("m")
    try:
        return ctypes.CDLL(path) if path else None
    except OSError:
        return None


_SCALAR_F32: dict = {}


def _box_muller_16_scalar_f32(d: np.ndarray, mean: float = 0.0, std: float = 1.0) -> None:
    """PyTorch's scalar ``normal_fill_16`` for float32 (its DEFAULT CPU capability), in place
    on blocks of 16: r = sqrtf(-2 logf(1 - u1)), theta = float(2 pi u2) formed in double,
    then ``r * cosf(theta)`` rounded to float32, and ``* std + mean`` rounded once."""
    if not _SCALAR_F32:
        _SCALAR_F32.update({n: _c_float_function(n) for n in ("logf", "cosf", "sinf")})
    f32 = np.float32
    radius = np.sqrt(f32(-2) * _SCALAR_F32["logf"](f32(1) - d[:, :8]))
    theta = (2.0 * math.pi * d[:, 8:].astype(np.float64)).astype(f32)
    d[:, :8] = radius * _SCALAR_F32["cosf"](theta)
    d[:, 8:] = radius * _SCALAR_F32["sinf"](theta)
    if std != 1 or mean != 0:  # one rounding here too (measured against torch)
        d[...] = fma32(d, f32(std), f32(mean))


def normal_serial(generator, n: int, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    """``n`` float64 samples of PyTorch's ``normal_distribution<double>``, one after the
    other: Box-Muller pairs whose sine half waits in the generator for the next sample.

    Example:
        >>> from retrograd._random import rng
        >>> g = rng.Generator().manual_seed(0)
        >>> a = rng.normal_serial(g, 3)
        >>> bool(a[2] == rng.normal_serial(g.manual_seed(0), 4)[2])
        True
    """
    g = _of(generator)
    out = np.empty(n, np.float64)
    start = 0
    if n and g.next_double_normal is not None:
        out[0], g.next_double_normal, start = g.next_double_normal, None, 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = uniform(g, 2 * pairs, np.float64)
        r = np.sqrt(-2.0 * _log1p(-u[1::2]))
        theta = 2.0 * math.pi * u[0::2]
        both = np.empty(2 * pairs)
        both[0::2] = r * _cos(theta)
        both[1::2] = r * _sin(theta)
        out[start:] = both[:n - start]
        if (n - start) % 2:
            g.next_double_normal = float(both[-1])
    if std != 1 or mean != 0:
        out = mul_add(out, float(std), float(mean), np.float64)
    return out


def normal(generator, n: int, dtype, mean: float = 0.0, std: float = 1.0,
           contiguous: bool = True) -> np.ndarray:
    """``n`` normal samples as PyTorch's CPU ``normal_(mean, std)``: the block-of-16 fill for
    contiguous tensors of 16 or more elements, otherwise one double sample at a time.

    Example:
        >>> from retrograd._random import rng
        >>> rng.normal(rng.Generator().manual_seed(0), 16, "float32").shape
        (16,)
    """
    g = _of(generator)
    dt = np.dtype(dtype)
    if n < 16 or not contiguous:
        return normal_serial(g, n, mean, std).astype(dt)
    if dt == np.float64:
        fill, work = _box_muller_16, np.float64
    else:  # float32, and float16/bfloat16 through float32 (their opmath type)
        fill = box_muller_16_f32 if cpu_capability() != "DEFAULT" else \
            _box_muller_16_scalar_f32
        work = np.float32
    full = n - n % 16
    # the uniforms are drawn in PyTorch's order (the reduced-precision path draws block by
    # block, but Box-Muller itself draws nothing, so the order of words is the same); the
    # tail block's 16 fresh uniforms go through Box-Muller with the full blocks, in one call
    tail = 16 if n % 16 else 0
    if dt in (np.float32, np.float64):  # the words of the tail's first draw are dropped
        u = uniform(g, n + tail, work)
        blocks = np.concatenate([u[:full], u[n:]]) if tail else u
    else:  # the reduced-precision path draws whole blocks only
        blocks = uniform(g, full + tail, work)
    blocks = blocks.reshape(-1, 16)
    fill(blocks, mean, std)
    if not tail:
        return blocks.reshape(-1).astype(dt, copy=False)
    d = np.empty(n, work)
    d[:full] = blocks[:-1].reshape(-1)
    d[n - 16:] = blocks[-1]
    return d.astype(dt, copy=False)


def randperm(generator, n: int) -> np.ndarray:
    """PyTorch's CPU ``randperm(n)`` permutation (int64).

    Example:
        >>> from retrograd._random import rng
        >>> sorted(rng.randperm(rng.Generator().manual_seed(0), 4).tolist())
        [0, 1, 2, 3]
    """
    if n >= (1 << 32) // 20:
        raise NotImplementedError(f"randperm: drawing a permutation of {n} elements the way "
                                  f"PyTorch does is implemented for n < {(1 << 32) // 20}")
    draws = random32(generator, max(n - 1, 0)).tolist()
    perm = list(range(n))
    for i, u in enumerate(draws):
        j = i + u % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, dtype=np.int64)


def randint(generator, n: int, low: int, high: int) -> np.ndarray:
    """``n`` integers in [low, high) as PyTorch's CPU ``random_from_to`` kernel (int64).

    Example:
        >>> from retrograd._random import rng
        >>> bool((rng.randint(rng.Generator().manual_seed(0), 5, 3, 6) >= 3).all())
        True
    """
    span = high - low
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    words = random64(generator, n) if span >= 1 << 28 else random32(generator, n)
    return ((words % np.uint64(span)).astype(np.int64) + np.int64(low))


def draw_seed(generator=None) -> int:
    """``torch.empty((), dtype=torch.int64).random_(generator=generator).item()``: the seed
    PyTorch's RandomSampler and DataLoader draw for a fresh generator or the workers.

    Example:
        >>> from retrograd._random import rng
        >>> rng.draw_seed(rng.Generator().manual_seed(0))
        900450186894289455
    """
    return int(random64(generator, 1)[0] % np.uint64(1 << 63))


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it.

    Example:
        >>> import retrograd as torch
        >>> torch.manual_seed(0).initial_seed()
        0
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the clock; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed last given to the default generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor.

    Example:
        >>> import retrograd as torch
        >>> s = torch.get_rng_state(); a = torch.rand(2)
        >>> torch.set_rng_state(s); bool(torch.equal(a, torch.rand(2)))
        True
    """
    return default_generator.get_state()


def set_rng_state(state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(state)


class fork_rng:
    """Context manager that restores the default generator's state on exit.

    Example:
        >>> import retrograd as torch
        >>> with torch.random.fork_rng():
        ...     _ = torch.rand(1)
    """

    def __init__(self, devices=None, enabled: bool = True, **kwargs):
        self.enabled = enabled
        self.state = None

    def __enter__(self):
        if self.enabled:
            self.state = get_rng_state()

    def __exit__(self, *exc):
        if self.enabled:
            set_rng_state(self.state)
        return False
