"""PyTorch's CPU samplers for the gamma family and Poisson, draw for draw: Marsaglia and
Tsang's gamma rejection sampler (``torch._standard_gamma``, under Gamma, Chi2, StudentT,
Beta and Dirichlet), the Poisson sampler (``torch.poisson``) and the binomial sampler
(``torch.binomial``: inversion, or Hormann's BTRS when the mean is 10 or more), each
reading PyTorch's ``uniform_real_distribution<double>`` and
``normal_distribution<double>`` from the generator, so a seed gives PyTorch's numbers.

Example:
    >>> import numpy as np
    >>> from retrograd._random import rng
    >>> from retrograd._random.gamma import standard_gamma
    >>> standard_gamma(rng.Generator().manual_seed(0), np.array([2.0])).shape
    (1,)
"""

from __future__ import annotations

import math

import numpy as np

from . import rng

__all__ = ["standard_gamma", "dirichlet", "poisson", "binomial"]


# Note [Gamma sampler draws]
# PyTorch samples one element at a time (a serial kernel, memory order) with NumPy's
# gamma algorithm: for alpha < 1 one uniform boosts alpha by 1 (scale u**(1/alpha));
# then Marsaglia-Tsang: a normal x until y = 1 + c x > 0, a uniform u, accept on the
# squeeze test or the log test. Its arithmetic mixes the element type (alpha, 1/alpha,
# alpha + 1 and d = alpha - 1/3 are computed in float for float32 input) with double
# (everything else), and 1/3 and 0.0331 are float literals; the code below keeps each
# of those roundings, which is what makes float32 samples equal bit for bit.
_THIRD_F = float(np.float32(1.0) / np.float32(3.0))
_SQUEEZE_F = float(np.float32(0.0331))


# Note [Buffered draws]
# The samplers take one uniform or normal at a time, and how many each element takes
# depends on the draws themselves. Asking NumPy for two words per uniform costs
# microseconds a call, so _Draws reads ahead a block of the generator's 32-bit words and
# serves PyTorch's uniform_real_distribution<double> (two words, 53 bits) and
# normal_distribution<double> (Box-Muller on two uniforms, the sine half kept for the
# next call, as the generator keeps it) from it in Python; close() then puts the
# generator where PyTorch's would be: its state before the read-ahead, advanced by exactly
# the words used, and the cached normal.
class _Draws:
    """PyTorch's scalar uniform and normal draws from a generator, read ahead."""

    _SCALE = 2.0 ** -53
    _MASK = (1 << 53) - 1

    def __init__(self, generator, words: int) -> None:
        self.g = rng._of(generator)
        self.start = self.g.bits.state
        self.words = self.g.bits.random_raw(max(words, 64)).tolist()
        self.pos = 0
        self.cached = self.g.next_double_normal

    def uniform(self) -> float:
        if self.pos + 2 > len(self.words):
            self.words.extend(self.g.bits.random_raw(len(self.words)).tolist())
        hi, lo = self.words[self.pos], self.words[self.pos + 1]
        self.pos += 2
        return (((hi << 32) | lo) & self._MASK) * self._SCALE

    def normal(self) -> float:
        if self.cached is not None:
            x, self.cached = self.cached, None
            return x
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cached = r * math.sin(theta)
        return r * math.cos(theta)

    def __enter__(self) -> _Draws:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.g.bits.state = self.start
        if self.pos:
            self.g.bits.random_raw(self.pos)
        self.g.next_double_normal = self.cached


def _gamma_one(g, alpha, ft) -> float:
    """One sample of Gamma(alpha, 1) in PyTorch's arithmetic (``ft``: the element type)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1.0 - g.uniform(), float(ft(1.0) / alpha))
        alpha = ft(alpha + ft(1.0))
    d = float(ft(alpha - ft(_THIRD_F)))
    # alpha < -2/3 or nan: d < 0 or nan, c is nan, and PyTorch still draws (the squeeze
    # test on the normal alone can accept; the sample is nan, then tiny)
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else (math.inf if d == 0 else math.nan)
    while True:
        x = g.normal()
        y = 1.0 + c * x
        while y <= 0:
            x = g.normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - g.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + (math.log(v) if v > 0 else math.nan)):
            return scale * d * v


def standard_gamma(generator, alpha: np.ndarray) -> np.ndarray:
    """Gamma(alpha, 1) samples, one per element of ``alpha`` in C order, in its dtype, at
    least the dtype's smallest normal number (PyTorch's ``_s_gamma_cpu``).

    Example:
        >>> from retrograd._random import rng
        >>> g = rng.Generator().manual_seed(0)
        >>> bool((standard_gamma(g, np.full(4, 0.5)) > 0).all())
        True
    """
    ft = np.float32 if alpha.dtype == np.float32 else float  # float: a C double
    flat = np.ascontiguousarray(alpha, dtype=ft).ravel()
    out = np.empty(flat.shape, ft)
    tiny = np.finfo(ft).tiny
    with _Draws(generator, 6 * flat.size) as g:
        for i, a in enumerate(flat.tolist()):
            sample = ft(_gamma_one(g, ft(a), ft))
            out[i] = sample if sample > tiny else tiny  # std::max(tiny, sample): nan -> tiny
    return out.reshape(alpha.shape)


def dirichlet(generator, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet samples over the last dim of ``alpha`` as PyTorch's ``_s_dirichlet_cpu``:
    a double gamma draw per element (C order), normalized, then clamped into
    [tiny, the number below 1] of ``alpha``'s dtype.

    Example:
        >>> from retrograd._random import rng
        >>> x = dirichlet(rng.Generator().manual_seed(0), np.ones((2, 3)))
        >>> np.allclose(x.sum(-1), 1.0)
        True
    """
    dt = np.dtype(np.float32 if alpha.dtype == np.float32 else np.float64)
    gammas = standard_gamma(generator, np.asarray(alpha, np.float64))  # double draws
    with np.errstate(all="ignore"):
        ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(dt)
    below_one = np.nextafter(dt.type(1.0), dt.type(0.0))
    return np.minimum(below_one, np.where(ratio > np.finfo(dt).tiny, ratio, np.finfo(dt).tiny))


def _poisson_one(g, lam: float) -> int:
    """One Poisson(lam) sample as PyTorch's ``sample_poisson``: Hormann's transformed
    rejection for lam >= 10, otherwise the product of uniforms."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = g.uniform() - 0.5
            v = g.uniform()
            us = 0.5 - abs(u)
            raw = (2 * a / us + b) * u + lam + 0.43
            # an infinite rate: C's int64 conversion of inf or nan gives INT64_MIN on x86
            k = math.floor(raw) if math.isfinite(raw) else -(1 << 63)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam, count, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= g.uniform()
        if not prod > enlam:
            return count
        count += 1


def poisson(generator, rates: np.ndarray) -> np.ndarray:
    """Poisson samples, one per element of ``rates`` in C order, in the rates' dtype.

    Example:
        >>> from retrograd._random import rng
        >>> poisson(rng.Generator().manual_seed(0), np.zeros(2)).tolist()
        [0.0, 0.0]
    """
    flat = np.ascontiguousarray(rates, dtype=np.float64).ravel()
    with _Draws(generator, 8 * flat.size) as g:
        out = np.array([_poisson_one(g, lam) for lam in flat.tolist()], np.float64)
    return out.astype(rates.dtype).reshape(rates.shape)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log k! minus its Stirling approximation (a table below 10)."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


# Note [Binomial sampler draws]
# PyTorch's sample_binomial (after TensorFlow's random_binomial_op): p <= 0.5 samples
# successes, p > 0.5 samples failures with q = 1 - p; a mean below 10 counts geometric
# waiting times (one uniform each), otherwise Hormann's BTRS rejection (two uniforms a
# try). Count and probability arithmetic is in the element type ``ft`` (so float32 input
# rounds where PyTorch's float code does), the rest in double.
def _inversion(g, count, prob, ft) -> float:
    logprob = float(ft(np.log1p(-prob)))
    geom_sum, num = 0.0, ft(0)
    while True:
        geom_sum += math.ceil(math.log(g.uniform()) / logprob)
        if geom_sum > count:
            return num
        num = ft(num + 1)


def _btrs(g, count, prob, ft) -> float:
    stddev = float(np.sqrt(ft(ft(count * prob) * ft(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(ft(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(ft(prob / ft(1 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor(ft(ft(count + 1) * prob)))
    n = float(count)
    while True:
        u = g.uniform() - 0.5
        v = g.uniform()
        us = 0.5 - abs(u)
        k = float(ft(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= bound:
            return k


def _binomial_one(g, count, prob, ft) -> float:
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return float(count)
    if prob <= 0.5:
        if ft(count * prob) >= 10.0:
            return _btrs(g, count, prob, ft)
        return _inversion(g, count, prob, ft)
    if prob > 0.5:
        q = ft(1.0 - float(prob))
        draw = _btrs(g, count, q, ft) if ft(count * q) >= 10.0 else _inversion(g, count, q, ft)
        return float(ft(count - ft(draw)))
    return math.nan


def binomial(generator, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Binomial samples (Note [Binomial sampler draws]), one per element of the broadcast
    ``count`` and ``prob`` in C order, in their dtype.

    Example:
        >>> from retrograd._random import rng
        >>> binomial(rng.Generator().manual_seed(0), np.array([5.0]), np.array([1.0]))
        array([5.])
    """
    ft = np.float32 if count.dtype == np.float32 else float  # float: a C double
    counts, probs = (np.ascontiguousarray(v, dtype=ft).ravel()
                     for v in np.broadcast_arrays(count, prob))
    with _Draws(generator, 8 * counts.size) as g:
        out = np.array([_binomial_one(g, ft(n), ft(p), ft) for n, p in zip(counts, probs)],
                       np.float64)
    return out.astype(ft).reshape(np.broadcast_shapes(count.shape, prob.shape))
