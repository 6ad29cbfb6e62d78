"""Op-database entries of the nnloss family's table records (ops/records/activations.py):
the shrink activations, rrelu, pdist and soft_margin_loss (loaded by tests/support/opdb.py)."""

from __future__ import annotations

import numpy as np

from opdb import A, S, one, op, vals

# "frac" values keep away from the thresholds ±0.5 and ±1 (the kinks)
_SHAPES = [(3, 4), (), (2, 3, 4), (0, 2)]
_LAMBDS = [((), {}), ((1.0,), {}), ((), {"lambd": 0.0})]


def _kinks(rng):
    return [S(A([-1.0, -0.5, 0.0, 0.5, 1.0]), desc="at ±lambd: 0 and gradient 0",
              check_grad=False),
            S(A(vals(rng, (3, 4), "frac"), "frac", layout="T"), desc="non-contiguous")]


def _with_kinks(rng):
    return one(_SHAPES, "frac", variants=_LAMBDS)(rng) + _kinks(rng)


op("hardshrink", lambda m, x, *a, **k: m.hardshrink(x, *a, **k), _with_kinks, ("hardshrink",))
op("softshrink", lambda m, x, *a, **k: m.nn.functional.softshrink(x, *a, **k), _with_kinks,
   ("softshrink",))


# rrelu in eval mode (the mean slope; training draws are compared in
# tests/nn/test_nnloss_layers.py after the same seed); the in-place form on a non-leaf
def _rrelu_samples(rng):
    return one(_SHAPES, "frac", variants=[((), {}), ((0.1, 0.3), {}), ((0.2, 0.2), {})])(rng) \
        + _kinks(rng)


op("rrelu", lambda m, x, *a: m.nn.functional.rrelu(x, *a), _rrelu_samples,
   ("rrelu_with_noise",))
op("rrelu_inplace", lambda m, x, *a: m.nn.functional.rrelu_(x * 1, *a), _rrelu_samples,
   ("rrelu_with_noise_result",))


# pdist: rows of a 2-D input, every p branch of PyTorch's backward (Note [pdist record])
def _pdist_samples(rng):
    out = [S(A(vals(rng, (n, 3))), p) for n in (4, 2, 1) for p in (2.0, 1.0, 3.0, 0.5, 1.5)]
    out.append(S(A(vals(rng, (4, 3))), float("inf")))
    out.append(S(A(vals(rng, (5, 3)), layout="T"), 2.0, desc="non-contiguous"))
    out.append(S(A([[0.0, 1.0], [0.0, 1.0], [1.0, 3.0]]), 2.0, check_grad=False,
                 desc="a repeated row: distance 0, gradient 0"))
    return out


op("pdist", lambda m, x, p: m.pdist(x, p), _pdist_samples, ("pdist",), twice=False)


# soft_margin_loss: ±1 targets (not differentiable), every reduction
def _soft_margin_samples(rng):
    out = []
    for shape in [(3, 4), (), (2, 3, 2)]:
        t = A(np.where(rng.random(shape) < 0.5, -1.0, 1.0), grad=False)
        for red in ("mean", "sum", "none"):
            out.append(S(A(vals(rng, shape)), t, reduction=red))
    return out


op("soft_margin_loss",
   lambda m, x, t, **k: m.nn.functional.soft_margin_loss(x, t, **k),
   _soft_margin_samples, ("soft_margin_loss",))


# multi_margin_loss / multilabel_margin_loss: class-index targets (int64), every reduction,
# a 1-D input (one sample); no second derivative in PyTorch (twice=False)
def _multi_margin_samples(rng):
    out = []
    for red in ("mean", "sum", "none"):
        for kw in ({"p": 1}, {"p": 2, "margin": 0.7}):
            out.append(S(A(vals(rng, (3, 4))), A([0, 3, 1], dtype="int64"),
                         A(rng.random(4) + 0.5, grad=False), reduction=red, **kw))
        out.append(S(A(vals(rng, (4,))), A(2, dtype="int64"),
                     A(rng.random(4) + 0.5, grad=False), reduction=red, desc="one sample"))
    return out


def _multilabel_margin_samples(rng):
    target = [[3, 0, -1, 1], [1, 2, 2, -1], [0, 1, 2, 3]]  # a duplicate; all classes
    out = [S(A(vals(rng, (3, 4))), A(target, dtype="int64"), reduction=red)
           for red in ("mean", "sum", "none")]
    out.append(S(A(vals(rng, (4,))), A([2, -1, 0, 0], dtype="int64"), reduction="none",
                 desc="one sample"))
    return out


op("multi_margin_loss",
   lambda m, x, t, w, **k: m.nn.functional.multi_margin_loss(x, t, weight=w, **k),
   _multi_margin_samples, ("multi_margin_loss",), twice=False)
op("multilabel_margin_loss",
   lambda m, x, t, **k: m.nn.functional.multilabel_margin_loss(x, t, **k),
   _multilabel_margin_samples, ("multilabel_margin_loss",), twice=False)
