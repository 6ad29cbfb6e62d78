"""The CTC loss record (``ctc_loss``, ``ctc_loss_backward``), re-exported by
``ops/records/table.py``.

Note [CTC record]
``ctc_loss`` is one node (CtcLossBackward0) whose forward is the negative log-likelihood
of each sample's target under all its alignments, by the log-space alpha recursion of
Graves et al. (2006) over the extended target (blanks around and between the labels),
vectorized over the batch and the extended positions: a Python loop over time only.
Its rule is a fused backward op, ``ctc_loss_backward``, which runs the beta recursion
and returns PyTorch's gradient w.r.t. ``log_probs``,

    grad[t, n, c] = g[n] * (exp(lp[t, n, c])
                            - exp(logsumexp_{s: l'(s) = c}(alpha + beta)[t, n, s]
                                  + nll[n] - lp[t, n, c]))

zero from each sample's input length on, and zero for an infinite loss when
``zero_infinity``. The ``exp(lp)`` term is PyTorch's: it is not part of the derivative
w.r.t. ``log_probs`` itself, and vanishes when ``log_probs`` come from ``log_softmax``
(whose backward subtracts softmax times the row sum of the gradient, and every row of
the posterior sums to 1): through log_softmax, which is how CTC is used, the gradient is
the true one, so gradcheck runs through log_softmax, as PyTorch's own tests do. As in
PyTorch, the backward op has no derivative (no double backward); forward mode, which
PyTorch lacks, uses the true derivative (``_ctc_jvp``). Sums run in float64.
p = (input_lengths, target_lengths, blank, zero_infinity), the lengths as tuples of
ints; targets are (N, S) padded or 1-D concatenated.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import apply
    >>> from retrograd.ops.records.ctc import ctc_loss
    >>> lp = torch.full((2, 1, 2), 0.5).log()
    >>> apply(ctc_loss, (lp, torch.tensor([[1]])), ((2,), (1,), 0, False))
    tensor([0.2877])
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import apply
from ..op import Op
from ..public import FP32
from .helpers import _no_derivative, _no_forward_ad

__all__ = ["ctc_loss", "ctc_loss_backward"]

_NEG = -np.inf


def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)), elementwise, -inf where all three are."""
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe
    return np.where(m == _NEG, _NEG, out)


def _shift(a, k, allowed=None):
    """``a`` moved k places along the last axis (right for k > 0), -inf filled; -inf also
    where ``allowed`` is False."""
    out = np.full_like(a, _NEG)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out if allowed is None else np.where(allowed, out, _NEG)


def _extended(lp, tg, p):
    """(input lengths, target lengths, extended targets (N, 2S+1), where a skip over a
    blank is allowed (N, 2S+1), log-probs of the extended targets (T, N, 2S+1))."""
    il = np.asarray(p[0], dtype=np.int64)
    tl = np.asarray(p[1], dtype=np.int64)
    blank = p[2]
    n = lp.shape[1]
    width = int(tl.max()) if tl.size else 0
    step = np.arange(width)
    valid = step[None, :] < tl[:, None]
    if tg.ndim == 1:
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]])
        at = np.clip(starts[:, None] + step[None, :], 0, max(tg.size - 1, 0))
        labels = tg[at] if tg.size else np.zeros((n, width), dtype=np.int64)
    else:
        labels = tg[:, :width]
    labels = np.where(valid, labels, blank).astype(np.int64)
    ext = np.full((n, 2 * width + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    lpx = lp.astype(np.float64)[:, np.arange(n)[:, None], ext]
    return il, tl, ext, skip, lpx


def _alpha(lpx, tl, skip):
    alpha = np.full(lpx.shape, _NEG)
    alpha[0, :, 0] = lpx[0, :, 0]
    if lpx.shape[2] > 1:
        alpha[0, :, 1] = np.where(tl > 0, lpx[0, :, 1], _NEG)
    for t in range(1, lpx.shape[0]):
        a = alpha[t - 1]
        alpha[t] = _lse3(a, _shift(a, 1), _shift(a, 2, skip)) + lpx[t]
    return alpha


def _ends(x, tl):
    """x[n, 2 tl] and x[n, 2 tl - 1] (-inf for an empty target) per sample."""
    rows = np.arange(x.shape[0])
    last = x[rows, 2 * tl]
    before = np.where(tl > 0, x[rows, np.maximum(2 * tl - 1, 0)], _NEG)
    return last, before


def _ctc_fwd(lp, tg, p):
    il, tl, _, skip, lpx = _extended(lp, tg, p)
    alpha = _alpha(lpx, tl, skip)
    at_end = alpha[np.maximum(il - 1, 0), np.arange(lp.shape[1])]
    last, before = _ends(at_end, tl)
    # no input steps: the empty target has probability 1, any other 0
    last = np.where(il == 0, np.where(tl == 0, 0.0, _NEG), last)
    before = np.where(il == 0, _NEG, before)
    return (-np.logaddexp(last, before)).astype(lp.dtype)


def _beta(lpx, il, tl, skip):
    steps, n, width = lpx.shape
    beta = np.full(lpx.shape, _NEG)
    skip_next = _shift(skip, -2)  # moving back from s + 2 to s skips a blank
    rows = np.arange(n)
    init = np.full((n, width), _NEG)
    end_t = il - 1
    cand = np.full((n, width), _NEG)
    for t in range(steps - 1, -1, -1):
        if t < steps - 1:
            b = beta[t + 1]
            cand = _lse3(b, _shift(b, -1), np.where(skip_next, _shift(b, -2), _NEG)) + lpx[t]
        init[:] = _NEG
        init[rows, 2 * tl] = lpx[t, rows, 2 * tl]
        init[rows, np.maximum(2 * tl - 1, 0)] = np.where(
            tl > 0, lpx[t, rows, np.maximum(2 * tl - 1, 0)], init[rows, 0])
        beta[t] = np.where((t == end_t)[:, None], init,
                           np.where((t < end_t)[:, None], cand, _NEG))
    return beta


def _ctc_bwd_fwd(g, lp, tg, nll, p):
    il, tl, ext, skip, lpx = _extended(lp, tg, p)
    steps, n, classes = lp.shape
    ab = _alpha(lpx, tl, skip) + _beta(lpx, il, tl, skip)
    top = ab.max(axis=2, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = np.exp(ab - top)
        acc = np.zeros((steps, n, classes))
        rows = np.arange(n)
        for s in range(ext.shape[1]):  # each sample once per s: no repeated index
            acc[:, rows, ext[:, s]] += e[:, :, s]
        lcab = np.log(acc) + top
        lp64 = lp.astype(np.float64)
        nll64 = nll.astype(np.float64)[None, :, None]
        grad = np.exp(lp64) - np.exp(lcab + nll64 - lp64)
    grad[np.arange(steps)[:, None] >= il[None, :]] = 0.0
    if p[3]:
        grad[:, np.isinf(nll)] = 0.0
    return (grad * g.astype(np.float64)[None, :, None]).astype(lp.dtype)


_HINT = ("PyTorch's CTC backward is not differentiable: take first derivatives only, or "
         "write the loss with differentiable ops if you need second ones")
ctc_loss_backward = Op("ctc_loss_backward", _ctc_bwd_fwd,
                       (_no_derivative("_ctc_loss_backward", _HINT),) * 2 + (None, None),
                       (), jvp=_no_forward_ad("_ctc_loss_backward", _HINT),
                       node_name="CtcLossBackwardBackward0")
def _ctc_jvp(t, s, n, out):
    """Forward mode (which PyTorch lacks): the true derivative w.r.t. log_probs, minus the
    posterior, is PyTorch's gradient with grad_out = 1 less its exp(log_probs) term (where
    t < input length), so the tangent is sum over t, c of (G - exp(lp)) * tangent."""
    if t[0] is None:
        return None
    lp, tg = s[0], s[1]
    grad = apply(ctc_loss_backward, (out.new_ones(out.shape), lp, tg, out), n._p)
    live = np.arange(lp.shape[0])[:, None] < np.asarray(n._p[0])[None, :]
    deriv = grad - lp.exp() * _make(live[:, :, None].astype(lp._data.dtype))
    return (deriv * t[0]).sum((0, 2))


ctc_loss = Op("ctc_loss", _ctc_fwd,
              (lambda g, s, n: apply(ctc_loss_backward, (g, s[0], s[1], s[2]), n._p), None),
              (0, 1, "out"), jvp=_ctc_jvp, autocast=FP32, node_name="CtcLossBackward0")
