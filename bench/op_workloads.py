"""One op at a time, at the sizes the training programs (``programs.py``) run it (O1-O14).

Each is ``make(m, size) -> (step, grads, unit)`` as in ``workloads.py``. For an op,
``step()`` is its forward and its backward from a fixed random output gradient, and
``grads()`` the inputs' gradients; for ``clip_grad_norm_`` and the optimizers,
``step()`` is one call on fixed gradients and ``grads()`` the tensors it wrote.

>>> import retrograd as m
>>> step, grads, unit = o4_layer_norm(m, "tiny")
>>> [g.shape for g in grads()]
[(2, 8, 16), (16,), (16,)]
"""

from __future__ import annotations

import numpy as np
from programs import gpt_adamw, gpt_model, resnet_model
from workloads import _np, _weights


def _op(m, fn, *shapes, seed=0, ints=None):
    """A forward + backward workload of ``fn`` over float32 leaves of ``shapes`` (N(0, 1)
    draws; ``ints`` maps a leaf's position to an upper bound for integer draws that do
    not need a gradient)."""
    rng = np.random.default_rng(seed)
    ints = ints or {}
    leaves = []
    for i, s in enumerate(shapes):
        if i in ints:
            leaves.append(m.tensor(rng.integers(0, ints[i], s)))
        else:
            leaves.append(m.tensor(_weights(rng, s, 1.0), requires_grad=True))
    shape = tuple(fn(*leaves).shape)
    gout = m.tensor(_weights(rng, shape, 1.0))
    wanted = [t for t in leaves if t.requires_grad]

    def step():
        for t in wanted:
            t.grad = None
        fn(*leaves).backward(gout)

    def grads():
        step()
        return [_np(t.grad) for t in wanted]

    return step, grads, ("ms", 1e3)


def o1_gelu(m, size):
    """O1: GELU (erf form, nanoGPT's nn.GELU()) on 16x64x512, which is also P1's MLP
    activation (batch 16 x block 64 x 4 n_embd) (tiny: 2x8x16)."""
    shape = (16, 64, 512) if size == "full" else (2, 8, 16)
    return _op(m, m.nn.functional.gelu, shape, seed=101)


def o2_embedding_gpt(m, size):
    """O2: embedding forward + backward at P1's sizes: table 65x128, ids 16x64
    (tiny: 65x16, 2x8)."""
    (n, d), ids = ((65, 128), (16, 64)) if size == "full" else ((65, 16), (2, 8))
    return _op(m, lambda i, w: m.nn.functional.embedding(i, w), ids, (n, d), seed=102,
               ints={0: n})


def o3_embedding_lstm(m, size):
    """O3: embedding forward + backward at P3's sizes: table 1000x128, ids 35x20
    (tiny: 50x8, 5x3)."""
    (n, d), ids = ((1000, 128), (35, 20)) if size == "full" else ((50, 8), (5, 3))
    return _op(m, lambda i, w: m.nn.functional.embedding(i, w), ids, (n, d), seed=103,
               ints={0: n})


def o4_layer_norm(m, size):
    """O4: layer_norm over the last 128 of 16x64x128 with weight and bias, P1's
    LayerNorm (tiny: 2x8x16)."""
    shape = (16, 64, 128) if size == "full" else (2, 8, 16)
    c = shape[-1]
    return _op(m, lambda x, w, b: m.nn.functional.layer_norm(x, (c,), w, b, 1e-5),
               shape, (c,), (c,), seed=104)


def o5_batch_norm2d(m, size):
    """O5: batch_norm in training mode (batch statistics, running statistics updated)
    on 32x16x32x32, P2's first stage (tiny: 4x4x8x8)."""
    shape = (32, 16, 32, 32) if size == "full" else (4, 4, 8, 8)
    c = shape[1]
    rm, rv = m.zeros(c), m.ones(c)
    return _op(m, lambda x, w, b: m.nn.functional.batch_norm(x, rm, rv, w, b, training=True),
               shape, (c,), (c,), seed=105)


def o6_softmax(m, size):
    """O6: softmax over the last dimension of 16x4x64x64, P1's attention scores
    (tiny: 2x2x8x8)."""
    shape = (16, 4, 64, 64) if size == "full" else (2, 2, 8, 8)
    return _op(m, lambda x: m.nn.functional.softmax(x, dim=-1), shape, seed=106)


def _cross_entropy(m, rows, classes, seed):
    tgt = m.tensor(np.random.default_rng(seed + 1000).integers(0, classes, rows))
    return _op(m, lambda x: m.nn.functional.cross_entropy(x, tgt), (rows, classes), seed=seed)


def o7_cross_entropy_gpt(m, size):
    """O7: cross_entropy of 1024x65 logits, P1's loss (tiny: 16x65)."""
    return _cross_entropy(m, 1024 if size == "full" else 16, 65, 107)


def o8_cross_entropy_lstm(m, size):
    """O8: cross_entropy of 700x1000 logits, P3's loss (tiny: 15x50)."""
    rows, classes = (700, 1000) if size == "full" else (15, 50)
    return _cross_entropy(m, rows, classes, 108)


def o9_sdpa(m, size):
    """O9: scaled_dot_product_attention with is_causal=True on q, k, v of 16x4x64x32,
    P1's attention (tiny: 2x2x8x8)."""
    shape = (16, 4, 64, 32) if size == "full" else (2, 2, 8, 8)
    f = m.nn.functional.scaled_dot_product_attention
    return _op(m, lambda q, k, v: f(q, k, v, is_causal=True), shape, shape, shape, seed=109)


def _gpt_params(m, size):
    cfg = dict(n_layer=4, n_embd=128, n_head=4, block=64) if size == "full" else \
        dict(n_layer=1, n_embd=16, n_head=2, block=8)
    return gpt_model(m, **cfg)


def _fixed_grads(m, params, seed):
    rng = np.random.default_rng(seed)
    grads = [m.tensor(_weights(rng, tuple(p.shape), 1.0)) for p in params]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    return grads


def o10_clip_grad_norm(m, size):
    """O10: clip_grad_norm_(1.0) over P1's parameters' gradients (55 tensors, 0.8M
    numbers; tiny: P1's tiny model)."""
    params = list(_gpt_params(m, size).parameters())
    fixed = _fixed_grads(m, params, 110)
    state = {}

    def step():
        state["norm"] = m.nn.utils.clip_grad_norm_(params, 1.0)

    def grads():
        for p, g in zip(params, fixed):
            p.grad = g.clone()
        step()
        return [_np(state["norm"])] + [_np(p.grad) for p in params]

    return step, grads, ("ms", 1e3)


def _optimizer_step(m, params, opt, seed, steps):
    _fixed_grads(m, params, seed)

    def step():
        opt.step()

    def grads():
        for _ in range(steps):
            step()
        return [_np(p) for p in params]

    return step, grads, ("ms", 1e3)


def o11_adamw(m, size):
    """O11: one AdamW step on P1's parameters with nanoGPT's groups (decay 0.1 on
    matrices), fixed gradients; grads() are the parameters after one step."""
    model = _gpt_params(m, size)
    return _optimizer_step(m, list(model.parameters()), gpt_adamw(m, model), 111, 1)


def o12_sgd(m, size):
    """O12: one SGD step (momentum 0.9, weight decay 5e-4) on P2's parameters, fixed
    gradients; grads() are the parameters after two steps (the second uses momentum)."""
    params = list(resnet_model(m, widths=(16, 32, 64) if size == "full" else (4, 8, 8))
                  .parameters())
    opt = m.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=5e-4)
    return _optimizer_step(m, params, opt, 112, 2)


def _conv(m, shape, seed):
    c = shape[1]
    f = m.nn.functional.conv2d
    return _op(m, lambda x, w: f(x, w, None, 1, 1), shape, (c, c, 3, 3), seed=seed)


def o13_conv2d_stage1(m, size):
    """O13: conv2d 3x3, padding 1, no bias, 16 -> 16 channels on 32x16x32x32, P2's
    first stage (tiny: 4x4x8x8)."""
    return _conv(m, (32, 16, 32, 32) if size == "full" else (4, 4, 8, 8), 113)


def o14_conv2d_stage3(m, size):
    """O14: conv2d 3x3, padding 1, no bias, 64 -> 64 channels on 32x64x8x8, P2's last
    stage (tiny: 4x8x4x4)."""
    return _conv(m, (32, 64, 8, 8) if size == "full" else (4, 8, 4, 4), 114)


OP_WORKLOADS = {
    "O1": o1_gelu,
    "O2": o2_embedding_gpt,
    "O3": o3_embedding_lstm,
    "O4": o4_layer_norm,
    "O5": o5_batch_norm2d,
    "O6": o6_softmax,
    "O7": o7_cross_entropy_gpt,
    "O8": o8_cross_entropy_lstm,
    "O9": o9_sdpa,
    "O10": o10_clip_grad_norm,
    "O11": o11_adamw,
    "O12": o12_sgd,
    "O13": o13_conv2d_stage1,
    "O14": o14_conv2d_stage3,
}
