"""PyTorch's CPU distribution kernels on retrograd's generator: the numbers behind
``uniform_``, ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``,
``random_`` and ``multinomial`` (see Note [PyTorch's CPU distributions]).

Each function returns a flat NumPy array of ``n`` samples in the order PyTorch's serial
kernel writes them; the caller lays them out over the tensor.

Example:
    >>> from retrograd._random import rng
    >>> from retrograd._random import distributions as random_dist
    >>> g = rng.Generator().manual_seed(0)
    >>> random_dist.bernoulli(g, 4, 0.5).tolist()
    [False, False, True, False]
"""

from __future__ import annotations

import math

import numpy as np

from . import rng
from .avx_math import mul_add
from .rng import _libm, random32, random64, uniform

__all__ = ["uniform_range", "bernoulli", "bernoulli_tensor", "exponential", "geometric",
           "log_normal", "cauchy", "random_full", "multinomial"]

# Note [PyTorch's CPU distributions]
# PyTorch 2.13's CPU kernels (ATen/native/cpu/DistributionTemplates.h with the transforms
# of ATen/core/TransformationHelper.h), one sample per element in TensorIterator order:
#   uniform_(a, b)    float types: x = (random() & (2**24 - 1)) * 2**-24 as float (float16
#                     and bfloat16 too: their opmath type is float), fma(x, b - a, a) in
#                     float (the kernel is built with FMA contraction, checked bit for bit),
#                     cast to the dtype, a value that rounds up to b replaced by a; double:
#                     the same with the 53-bit uniform and a double fma;
#   bernoulli_(p)     53-bit double uniform < p; bernoulli_(p_tensor): a double p compares a
#                     double uniform, every other p dtype a 24-bit float uniform;
#   exponential_(l)   (-1 / l) * log1p(-u), u a double uniform (glibc log1p);
#   geometric_(p)     ceil(log(u) / log1p(-p));   cauchy_(m, s) m + s * tan(pi * (u - 0.5));
#   log_normal_(m, s) exp of normal_distribution<double>(m, s) (which shares the cached
#                     sine half of Box-Muller with randn's small path);
#   random_()         random() % (2**digits + 1) for float/half/bfloat16, random64() % 2**63
#                     for int64, random64() % (2**53 + 1) for double, random() % (max + 1)
#                     for the other integers, random() & 1 for bool;
#   multinomial       with replacement: per row the cumulative sum in the probabilities'
#                     dtype divided by the sum, last bucket set to 1, and per sample the first
#                     bucket >= a double uniform; without replacement (or one sample): the
#                     argmax / top-k of p / q with q = exponential_(1) in p's dtype.
# MKL's VSL streams, which older PyTorch builds used for bernoulli_(float p) on Intel
# CPUs, are not in the 2.13 CPU wheel (libtorch_cpu has no VSL stream functions): every
# CPU takes the kernels above.

_log, _log1p, _exp, _tan = (_libm(f) for f in (math.log, math.log1p, math.exp, math.tan))
_FLOAT_DIGITS = {"float32": 24, "float16": 11, "bfloat16": 8}  # significant bits


def _opmath(dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def uniform_range(generator, n: int, dtype, low: float, high: float) -> np.ndarray:
    """``n`` samples of ``uniform_(low, high)`` in ``dtype``.

    Example:
        >>> from retrograd._random import rng
        >>> from retrograd._random import distributions as random_dist
        >>> g = rng.Generator().manual_seed(0)
        >>> random_dist.uniform_range(g, 2, "float32", -1.0, 1.0)
        array([-0.00748682,  0.5364436 ], dtype=float32)
    """
    dt = np.dtype(dtype)
    op = _opmath(dt)
    lo, hi = op.type(low), op.type(high)
    x = uniform(generator, n, op)
    if lo == 0 and hi == 1:
        out = x
    elif op == np.float64 and max(abs(hi - lo), abs(lo)) > 2.0 ** 960:
        # fma64's splitting overflows near the float64 limit: scaled by a power of two
        # (exact), the fma is the same
        out = mul_add(x, (hi - lo) * 2.0 ** -64, lo * 2.0 ** -64, op) * 2.0 ** 64
    else:
        out = mul_add(x, hi - lo, lo, op)
    out = out.astype(dt)
    at_top = out == dt.type(high)
    if at_top.any():
        out[at_top] = dt.type(low)
    return out


def bernoulli(generator: rng.Generator | None, n: int, p: float) -> np.ndarray:
    """``n`` booleans of ``bernoulli_(p)`` for a number ``p``."""
    return uniform(generator, n, np.float64) < float(p)


def bernoulli_tensor(generator, p: np.ndarray) -> np.ndarray:
    """Booleans of ``bernoulli_(p)`` for a probability array ``p`` (flat, in order).

    Example:
        >>> import numpy as np
        >>> from retrograd._random import rng
        >>> from retrograd._random import distributions as random_dist
        >>> g = rng.Generator().manual_seed(0)
        >>> random_dist.bernoulli_tensor(g, np.array([0.0, 1.0], np.float32)).tolist()
        [False, True]
    """
    if p.dtype == np.float64:
        return uniform(generator, p.size, np.float64) < p
    return uniform(generator, p.size, np.float32) < p.astype(np.float32)


def exponential(generator, n: int, lambd: float) -> np.ndarray:
    """``n`` float64 samples of ``exponential_(lambd)``.

    Example:
        >>> from retrograd._random import rng
        >>> from retrograd._random import distributions as random_dist
        >>> random_dist.exponential(rng.Generator().manual_seed(0), 1, 2.0)
        array([1.75416309])
    """
    u = uniform(generator, n, np.float64)
    return (-1.0 / float(lambd)) * _log1p(-u)


def geometric(generator, n: int, p: float) -> np.ndarray:
    """``n`` float64 samples of ``geometric_(p)``."""
    u = uniform(generator, n, np.float64)
    return np.ceil(_log(u) / math.log1p(-float(p)))


def log_normal(generator, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` float64 samples of ``log_normal_(mean, std)``."""
    return _exp(rng.normal_serial(generator, n, mean, std))


def cauchy(generator, n: int, median: float, sigma: float) -> np.ndarray:
    """``n`` float64 samples of ``cauchy_(median, sigma)``."""
    u = uniform(generator, n, np.float64)
    return float(median) + float(sigma) * _tan(math.pi * (u - 0.5))


def random_full(generator, n: int, dtype) -> np.ndarray:
    """``n`` samples of ``random_()`` (no bounds) for ``dtype``, as int64 or float64."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return (random32(generator, n) & np.uint64(1)).astype(np.int64)
    if dt == np.int64:
        return (random64(generator, n) % np.uint64(1 << 63)).astype(np.int64)
    if dt == np.float64:
        return (random64(generator, n) % np.uint64((1 << 53) + 1)).astype(np.float64)
    if dt.name in _FLOAT_DIGITS:
        span = (1 << _FLOAT_DIGITS[dt.name]) + 1
        return (random32(generator, n) % np.uint64(span)).astype(np.float64)
    top = np.iinfo(dt).max
    return (random32(generator, n) % np.uint64(top + 1)).astype(np.int64)


def multinomial(generator, probs: np.ndarray, num_samples: int,
                replacement: bool) -> np.ndarray:
    """``multinomial`` indices (int64, shape ``rows x num_samples``) for a 2-D ``probs``.

    Example:
        >>> import numpy as np
        >>> from retrograd._random import rng
        >>> from retrograd._random import distributions as random_dist
        >>> g = rng.Generator().manual_seed(0)
        >>> random_dist.multinomial(g, np.array([[0.0, 1.0]], np.float32), 2, True).tolist()
        [[1, 1]]
    """
    rows, cats = probs.shape
    if not replacement or num_samples == 1:
        q = exponential(generator, probs.size, 1.0).astype(probs.dtype).reshape(rows, cats)
        ratio = probs / q
        if num_samples == 1:
            return np.argmax(ratio, axis=-1).reshape(rows, 1).astype(np.int64)
        return np.argsort(-ratio, axis=-1, kind="stable")[:, :num_samples].astype(np.int64)
    acc = np.float32 if probs.dtype != np.float64 else np.float64
    out = np.empty((rows, num_samples), np.int64)
    for i in range(rows):
        cum = np.cumsum(probs[i].astype(acc), dtype=acc)
        cum = cum / cum[-1]
        cum[-1] = 1
        u = uniform(generator, num_samples, np.float64)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out
