"""Records of torch.special's orthogonal polynomials of degree ``n``: Chebyshev of the four
kinds (and their shifted forms on [0, 1]), Hermite (physicists' and probabilists'),
Laguerre and Legendre. No derivative, as in PyTorch (its outputs never require grad).
Gathered by ``ops/records/table.py``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import binary
    >>> from retrograd.ops.records.polynomials import legendre_polynomial_p
    >>> binary(legendre_polynomial_p, torch.tensor([0.5]), 2)
    tensor([-0.1250])
"""

from __future__ import annotations

import numpy as np

from ..op import Op

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]


# Note [Polynomial kernels]
# PyTorch evaluates each polynomial per element in the operands' common floating dtype T
# (aten/src/ATen/native/Math.h), n cast to T and then truncated to an integer (a
# non-finite n counts as negative): 0 for n < 0, a closed value at the ends of the
# interval (x = +-1; x = 0 or 1 for the shifted Chebyshev forms, whose argument is
# y = 2x - 1), the trigonometric form (T_n = cos(n acos y), U_n, V_n, W_n as ratios of
# sines and cosines) for |y| < 1 above a degree threshold, else the three-term
# recurrence, stopped where it turns nan. Hermite degrees above 128 (float32) / 512
# (float64) give nan, as PyTorch's. The kernels below take the same branches in T, with
# the recurrence vectorised: every element runs steps 1 .. n - 1 of its own n. A nan x
# gives nan (PyTorch's Chebyshev, Laguerre and Legendre kernels return an uninitialised
# value there: their loop stops before its first step).
def _operands(x, n) -> tuple:
    """x and the integer degrees, broadcast (a non-finite n counts as negative)."""
    x, n = np.broadcast_arrays(np.asarray(x), np.asarray(n))
    finite = np.isfinite(n)
    n = np.where(finite, np.clip(np.where(finite, n, -1), -1, 2 ** 62), -1).astype(np.int64)
    return np.array(x), n


def _recurrence(q1, n, todo, step):
    """q_{n} of ``q_{j+1} = step(j, q_{j-1}, q_j)`` from q_0 = 1, q_1 = ``q1``, where
    ``todo`` (elements with n >= 2 on no other branch); q1 elsewhere."""
    p = np.ones_like(q1)
    q = q1.copy()
    top = int(n[todo].max(initial=0))
    for j in range(1, top):
        live = todo & (j < n) & ~np.isnan(q)
        if not live.any():
            break
        with np.errstate(all="ignore"):
            r = step(j, p, q)
        p, q = np.where(live, q, p), np.where(live, r, q)
    return q


def _finish(out, n, q1, x, branches):
    """Assemble the result: the branches (mask, value) in order, then n == 0 -> 1,
    n == 1 -> q1, the recurrence's value ``out`` elsewhere; 0 where n < 0."""
    res = np.where(n == 1, q1, out)
    res = np.where(n == 0, np.ones_like(x), res)
    for mask, value in reversed(branches):
        res = np.where(mask, value, res)
    return np.where(n < 0, np.zeros_like(x), res).astype(x.dtype, copy=False)


def _parity(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


def _chebyshev(kind: str, trig_from: int, shifted: bool):
    """The kernel of one Chebyshev kind (Note [Polynomial kernels])."""
    def fwd(x, n):
        x, n = _operands(x, n)
        y = (x + x - 1) if shifted else x
        one = np.ones_like(x)
        tn = n.astype(x.dtype)
        ends = (x == 1) | (x == 0) if shifted else np.abs(x) == 1
        pos = (x == 1) if shifted else x > 0
        q1 = {"t": y, "u": y + y, "v": y + y - 1, "w": y + y + 1}[kind]
        with np.errstate(all="ignore"):
            end_value = {
                "t": np.where(pos, one, _parity(n, one, -one)),
                "u": np.where(pos, tn + 1, _parity(n, tn + 1, -(tn + 1))),
                "v": np.where(pos, one, _parity(n, 2 * tn + 1, -(2 * tn + 1))),
                "w": np.where(pos, 2 * tn + 1, _parity(n, one, -one)),
            }[kind]
            trig = (n > trig_from) & (np.abs(y) < 1) & ~ends
            theta = np.arccos(np.where(trig, y, 0))
            trig_value = _trig(kind, theta, tn, y, n, one, shifted)
        todo = ~ends & ~trig & (n >= 2)
        out = _recurrence(q1, n, todo, lambda j, p, q: (y + y) * q - p)
        return _finish(out, n, q1, x, [(ends, end_value), (trig, trig_value)])
    fwd.__name__ = ("shifted_" if shifted else "") + f"chebyshev_polynomial_{kind}"
    return fwd


def _trig(kind, theta, tn, y, n, one, shifted):
    if kind == "t":
        return np.cos(tn * theta)
    if kind == "u":
        s = np.sin(theta)
        return np.where(s != 0, np.sin((tn + 1) * theta) / s,
                        (tn + 1) * np.cos((tn + 1) * theta) / y)
    half = theta / 2
    if kind == "v":
        return np.where(np.sin(half) != 1, np.cos((tn + 0.5) * theta) / np.cos(half),
                        _parity(n, 2 * tn + 1, -(2 * tn + 1)))
    degenerate = _parity(n, one, -one)
    if not shifted:
        degenerate = np.where(y > 0, 2 * tn + 1, degenerate)
    return np.where(np.cos(half) != 1, np.sin((tn + 0.5) * theta) / np.sin(half), degenerate)


def _hermite(physicists: bool):
    def fwd(x, n):
        x, n = _operands(x, n)
        limit = 128 if x.dtype == np.float32 else 512
        q1 = x + x if physicists else x.copy()
        over = n > limit
        todo = ~over & (n >= 2)
        if physicists:
            out = _recurrence(q1, n, todo, lambda j, p, q: (x + x) * q - (2 * j) * p)
        else:
            out = _recurrence(q1, n, todo, lambda j, p, q: x * q - j * p)
        return _finish(out, n, q1, x, [(over, np.full_like(x, np.nan))])
    fwd.__name__ = "hermite_polynomial_h" if physicists else "hermite_polynomial_he"
    return fwd


def _laguerre(x, n):
    x, n = _operands(x, n)
    q1 = 1 - x
    zero = x == 0
    out = _recurrence(q1, n, ~zero & (n >= 2),
                      lambda j, p, q: (((j + j) + (1 - x)) * q - j * p) / (j + 1))
    return _finish(out, n, q1, x, [(zero, np.ones_like(x))])


def _legendre(x, n):
    x, n = _operands(x, n)
    one = np.ones_like(x)
    ends = np.abs(x) == 1
    end_value = np.where(x > 0, one, _parity(n, one, -one))
    out = _recurrence(x.copy(), n, ~ends & (n >= 2),
                      lambda j, p, q: ((j + j + 1) * x * q - j * p) / (j + 1))
    return _finish(out, n, x, x, [(ends, end_value)])


def _record(name: str, fwd) -> Op:
    # no rule: PyTorch has no derivative (outputs never require grad)
    return Op(name, fwd, kind="float")


chebyshev_polynomial_t = _record("chebyshev_polynomial_t", _chebyshev("t", 6, False))
chebyshev_polynomial_u = _record("chebyshev_polynomial_u", _chebyshev("u", 8, False))
chebyshev_polynomial_v = _record("chebyshev_polynomial_v", _chebyshev("v", 8, False))
chebyshev_polynomial_w = _record("chebyshev_polynomial_w", _chebyshev("w", 8, False))
shifted_chebyshev_polynomial_t = _record("shifted_chebyshev_polynomial_t",
                                         _chebyshev("t", 6, True))
shifted_chebyshev_polynomial_u = _record("shifted_chebyshev_polynomial_u",
                                         _chebyshev("u", 6, True))
shifted_chebyshev_polynomial_v = _record("shifted_chebyshev_polynomial_v",
                                         _chebyshev("v", 6, True))
shifted_chebyshev_polynomial_w = _record("shifted_chebyshev_polynomial_w",
                                         _chebyshev("w", 4, True))
hermite_polynomial_h = _record("hermite_polynomial_h", _hermite(True))
hermite_polynomial_he = _record("hermite_polynomial_he", _hermite(False))
laguerre_polynomial_l = _record("laguerre_polynomial_l", _laguerre)
legendre_polynomial_p = _record("legendre_polynomial_p", _legendre)
