"""Op-database entries of the loss records (ops/records/losses.py, Note [Loss records]):
mse, huber, smooth_l1, binary_cross_entropy and binary_cross_entropy_with_logits, each
reduction, a target that requires grad, and the double backward through PyTorch's
backward ops (loaded by tests/support/opdb.py)."""

from __future__ import annotations

import numpy as np

from opdb import A, S, op, vals

_SHAPES = [(3, 4), (), (2, 3, 2)]
_REDUCTIONS = ("mean", "sum", "none")


def _f(name):
    """``m.nn.functional.<name>`` for m = retrograd and m = torch."""
    return lambda m, *a, **k: getattr(m.nn.functional, name)(*a, **k)


def _regression(extra):
    """input in "frac" (away from the half-integers) minus an integer target: |x - t|
    stays 0.2 away from the kinks at delta/beta in {0.5, 1, 2}."""
    def gen(rng):
        out = []
        for shape in _SHAPES:
            for red in _REDUCTIONS:
                t = np.floor(rng.uniform(-2, 2, shape))
                out.append(S(A(vals(rng, shape, "frac")), A(t), reduction=red, **extra))
        out.append(S(A(vals(rng, (3, 4), "frac"), layout="T"), A(np.zeros((4, 3))),
                     desc="non-contiguous", **extra))
        out.append(S(A(vals(rng, (0, 2), "frac")), A(np.zeros((0, 2))), reduction="sum",
                     desc="empty", **extra))
        return out
    return gen


op("nn.functional.mse_loss", _f("mse_loss"), _regression({}), ("mse_loss", "mse_loss_backward"))
op("nn.functional.huber_loss", _f("huber_loss"), _regression({"delta": 0.5}),
   ("huber_loss", "huber_loss_backward"))
op("nn.functional.smooth_l1_loss", _f("smooth_l1_loss"), _regression({"beta": 2.0}),
   ("smooth_l1_loss", "smooth_l1_loss_backward"))


def _bce_samples(rng):
    out = []
    for shape in _SHAPES:
        for red in _REDUCTIONS:
            out.append(S(A(vals(rng, shape, (0.1, 0.9))), A(vals(rng, shape, (0.0, 1.0))),
                         reduction=red))
    w = A(vals(rng, (4,), "pos"), grad=False)
    out.append(S(A(vals(rng, (3, 4), (0.1, 0.9))), A(vals(rng, (3, 4), (0.0, 1.0))), w,
                 desc="weight (broadcast)"))
    return out


def _bce_logits_samples(rng):
    out = []
    for shape in _SHAPES:
        for red in _REDUCTIONS:
            out.append(S(A(vals(rng, shape)), A(vals(rng, shape, (0.0, 1.0))), reduction=red))
    w = A(vals(rng, (4,), "pos"), grad=False)
    pw = A(vals(rng, (4,), "pos"), grad=False)
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4), (0.0, 1.0))), w, pos_weight=pw,
                 desc="weight and pos_weight"))
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4), (0.0, 1.0))), pos_weight=pw,
                 reduction="sum", desc="pos_weight"))
    return out


op("nn.functional.binary_cross_entropy", _f("binary_cross_entropy"), _bce_samples,
   ("binary_cross_entropy", "binary_cross_entropy_backward"))
op("nn.functional.binary_cross_entropy_with_logits", _f("binary_cross_entropy_with_logits"),
   _bce_logits_samples, ("binary_cross_entropy_with_logits",))
