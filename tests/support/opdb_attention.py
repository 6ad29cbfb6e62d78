"""Op-database entries of scaled_dot_product_attention (ops/records/attention.py, Note
[Attention record]): the inputs PyTorch's CPU dispatch sends to its flash kernel (one
ScaledDotProductFlashAttentionForCpuBackward0 node) and those it sends to its composite
(SafeSoftmaxBackward0 among matmuls) (loaded by tests/support/opdb.py)."""

from __future__ import annotations

import numpy as np

from opdb import A, S, op, vals


def _sdpa(m, q, k, v, *a, **kw):
    return m.nn.functional.scaled_dot_product_attention(q, k, v, *a, **kw)


def _flash_samples(rng):
    def qkv(b=2, h=3, lq=4, lk=5, e=6, hk=None):
        hk = hk or h
        return (A(vals(rng, (b, h, lq, e))), A(vals(rng, (b, hk, lk, e))),
                A(vals(rng, (b, hk, lk, e))))
    mask = np.ones((4, 5), bool)
    mask[:, 3:] = rng.random((4, 2)) < 0.5
    return [S(*qkv()), S(*qkv(), is_causal=True), S(*qkv(lk=4), is_causal=True),
            S(*qkv(), A(mask, dtype="bool"), desc="boolean mask"),
            S(*qkv(), A(vals(rng, (4, 5)), grad=False), desc="additive mask"),
            S(*qkv(), scale=0.3), S(*qkv(hk=1), enable_gqa=True, desc="grouped query")]


def _math_samples(rng):
    return [S(A(vals(rng, (3, 4, 6))), A(vals(rng, (3, 5, 6))), A(vals(rng, (3, 5, 2)))),
            S(A(vals(rng, (3, 4, 6))), A(vals(rng, (3, 4, 6))), A(vals(rng, (3, 4, 6))),
              is_causal=True),
            S(A(vals(rng, (2, 3, 4, 6))), A(vals(rng, (2, 3, 5, 6))),
              A(vals(rng, (2, 3, 5, 6))), A(vals(rng, (4, 5))), desc="a mask that requires grad"),
            S(A(vals(rng, (4, 6))), A(vals(rng, (5, 6))), A(vals(rng, (5, 6))), scale=-0.5,
              desc="2-D, negative scale")]


# PyTorch's flash backward has no derivative (its double backward raises; retrograd's rule
# is written in Tensor ops and has one): no second-derivative comparison
op("nn.functional.scaled_dot_product_attention", _sdpa, _flash_samples,
   ("scaled_dot_product_flash_attention",), twice=False)
op("nn.functional.scaled_dot_product_attention_math", _sdpa, _math_samples, ("safe_softmax",))
