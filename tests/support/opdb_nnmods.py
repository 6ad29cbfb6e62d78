"""Op-database entries of the nnmods family's table records (ops/records/ctc.py): the CTC
loss (loaded by tests/support/opdb.py)."""

from __future__ import annotations

import numpy as np

from opdb import A, S, op, vals


def _ctc(m, x, targets, il, tl, **kw):
    # through log_softmax, as CTC is used: Note [CTC record] (PyTorch's gradient w.r.t.
    # log_probs carries an exp(log_probs) term that log_softmax's backward cancels)
    return m.nn.functional.ctc_loss(x.log_softmax(-1), targets, il, tl, **kw)


def _i64(arr) -> A:
    return A(np.asarray(arr), grad=False, dtype="int64")


def _ctc_samples(rng):
    padded = _i64([[1, 2, 2], [3, 1, 0], [1, 1, 4]])  # repeated labels need a blank between
    out = [S(A(vals(rng, (7, 3, 5))), padded, (7, 5, 6), (3, 2, 3), reduction=r)
           for r in ("mean", "sum", "none")]
    out.append(S(A(vals(rng, (6, 2, 4))), _i64([1, 2, 0, 0]), (6, 6), (1, 3), blank=3,
                 reduction="none", desc="1-D concatenated targets, blank=3"))
    out.append(S(A(vals(rng, (5, 2, 3))), _i64([[1, 2], [2, 2]]), (5, 2), (0, 2),
                 desc="an empty target; a sample no alignment fits (loss inf, zeroed)",
                 zero_infinity=True))
    out.append(S(A(vals(rng, (5, 4))), _i64([1, 2]), _i64(5), _i64(2), reduction="none",
                 desc="unbatched, 0-d length tensors"))
    out.append(S(A(vals(rng, (4, 3, 3))), _i64([[1], [2], [1]]), _i64([4, 3, 1]),
                 _i64([1, 1, 1]), desc="length tensors; an input of one step"))
    return out


op("ctc_loss", _ctc, _ctc_samples, ("ctc_loss", "ctc_loss_backward"), twice=False,
   f32_tol=(1e-5, 1e-6))
