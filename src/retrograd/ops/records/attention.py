"""Scaled dot-product attention as PyTorch's CPU flash kernel records it: one node,
ScaledDotProductFlashAttentionForCpuBackward0, over (query, key, value). Module alias
``TAT`` (Note [Module aliases] in ``ops/__init__.py``).

Note [Attention record]
PyTorch 2.13 on CPU sends scaled_dot_product_attention to its flash kernel when the
inputs are 4-D (batch, heads, length, head dim) of one head dim, there is no dropout and
the mask (if any) does not require grad; otherwise it runs the composite
(_scaled_dot_product_attention_math), which nn.functional keeps. The record computes the
composite's math in one kernel, in the opmath type (float32 for the 16-bit floats):
S = (Q Kᵀ) · scale + mask (a boolean mask becomes 0 / -inf, as PyTorch converts it; the
causal mask -inf above the diagonal), P = softmax(S) by rows (a row masked everywhere
gives zeros, as PyTorch's safe softmax), output P V. Grouped-query attention repeats each
key/value head for its group of query heads. The rule recomputes P from the saved inputs
in Tensor ops: dV = Pᵀ dO, dS = P (dO Vᵀ - rowsum(dO Vᵀ P)), dQ = scale dS K, dK = scale
dSᵀ Q (summed over a head's group): so second derivatives exist here, where PyTorch's
flash backward has none. The probabilities are computed first, by a direct kernel
(``attention_probs``), and saved for the plain backward (as the composite saved them;
PyTorch saves the rows' logsumexp and recomputes them); with create_graph they are
recomputed in Tensor ops. ``p = (mask Tensor or None, is_causal, scale used, group size,
scale as given, dropout_p, P)``.

Example:
    >>> import retrograd as torch
    >>> q = torch.ones(1, 1, 2, 4, requires_grad=True)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import STATE
from ..._tensor.tensor import _make
from ..op import Op, direct_kernel
from . import table as T
from .resize import opmath


def _causal(l_q: int, l_k: int) -> np.ndarray:
    return np.tril(np.ones((l_q, l_k), dtype=bool))


@direct_kernel
def attention_probs(q, k, mask, causal: bool, scale: float, rep: int) -> np.ndarray:
    """P = softmax(Q Kᵀ · scale + mask) by rows, in the opmath type; a row masked
    everywhere gives zeros (Note [Attention record])."""
    ot = opmath(q.dtype)
    if rep > 1:
        k = np.repeat(k, rep, axis=-3)
    s = np.matmul(q.astype(ot, copy=False), np.swapaxes(k.astype(ot, copy=False), -1, -2))
    s *= ot.type(scale)
    if mask is not None:
        s += mask.astype(ot, copy=False)
    if causal:
        s = np.where(_causal(q.shape[-2], k.shape[-2]), s, -np.inf)
    m = s.max(-1, keepdims=True)
    np.subtract(s, np.where(np.isneginf(m), 0, m), out=s)
    np.exp(s, out=s)
    total = s.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        s /= total
    if causal or mask is not None:
        s = np.where(total == 0, ot.type(0), s)
    return s


def _sdpa_fwd(q, k, v, p):
    probs, rep = p[6]._data, p[3]
    if rep > 1:
        v = np.repeat(v, rep, axis=-3)
    return np.matmul(probs, v.astype(probs.dtype, copy=False)).astype(q.dtype, copy=False)


def _group_sum(t, rep: int):
    """Sum the gradient of repeated key/value heads back to their head (grouped query)."""
    if rep == 1:
        return t
    b = t.shape[:-3]
    h, s, e = t.shape[-3:]
    return t.reshape(tuple(b) + (h // rep, rep, s, e)).sum(-3)


def _probs_by_ops(q, k, mask, causal, scale):
    sc = q.matmul(k.transpose(-2, -1)) * scale
    if mask is not None:
        sc = sc + mask
    if causal:
        keep = _make(_causal(q.shape[-2], k.shape[-2]))
        sc = T._where(keep, sc, float("-inf"))
    pr = sc.softmax(-1)
    if mask is not None or causal:  # a row masked everywhere: zeros (safe softmax)
        pr = T._where(pr.isnan(), 0.0, pr)
    return pr


def _sdpa_vjp(g, s, n, needs):
    q, k, v = s[0], s[1], s[2]
    mask, causal, scale, rep = n._p[0], n._p[1], n._p[2], n._p[3]
    if rep > 1:
        k = k.repeat_interleave(rep, dim=-3)
        v = v.repeat_interleave(rep, dim=-3)
    if STATE.enabled:  # create_graph: P recomputed in ops, differentiable in q and k
        pr = _probs_by_ops(q, k, mask, causal, scale)
    else:  # the probabilities the forward saved
        pr = s[5] if s[5].dtype == g.dtype else s[5].to(g.dtype)
    dp = g.matmul(v.transpose(-2, -1))
    ds = pr * (dp - (dp * pr).sum(-1, keepdim=True))
    dq = ds.matmul(k) * scale if needs[0] else None
    dk = _group_sum(ds.transpose(-2, -1).matmul(q) * scale, rep) if needs[1] else None
    dv = _group_sum(pr.transpose(-2, -1).matmul(g), rep) if needs[2] else None
    return [dq, dk, dv]


scaled_dot_product_flash_attention = Op(
    "scaled_dot_product_flash_attention", _sdpa_fwd, _sdpa_vjp, (0, 1, 2, "out", "p0", "p6"),
    node_name="ScaledDotProductFlashAttentionForCpuBackward0")


# _safe_softmax (SafeSoftmaxBackward0): softmax along ``dim`` with the rows that are -inf
# everywhere (masked entirely) giving zeros instead of nan, as PyTorch's attention
# composite calls it; the rule is softmax's, y (g - sum(g y)), on the saved result. p = dim.
def _safe_softmax_fwd(x, dim):
    m = x.max(dim, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(x - m)
    total = e.sum(dim, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = e / total
    return np.where(total == 0, x.dtype.type(0), out).astype(x.dtype, copy=False)


def _safe_softmax_rule(g, s, n):
    y = s[0]
    return y * (g - (g * y).sum(n._p, keepdim=True))


safe_softmax = Op("safe_softmax", _safe_softmax_fwd, (_safe_softmax_rule,), ("out",),
                  node_name="SafeSoftmaxBackward0")
