"""Op-database entries of the normalization records (ops/records/normalization.py, Note
[Normalization records]): batch_norm in training and eval mode, with and without the
affine parameters, and group_norm (loaded by tests/support/opdb.py)."""

from __future__ import annotations

from opdb import A, S, op, vals


def _bn(m, x, w, b, rm=None, rv=None, **k):
    return m.nn.functional.batch_norm(x, rm, rv, w, b, **k)


def _bn_samples(rng):
    out = []
    for shape in [(4, 3, 2, 3), (5, 3), (2, 3, 4)]:
        c = shape[1]
        w, b = A(vals(rng, (c,), "pos")), A(vals(rng, (c,)))
        out.append(S(A(vals(rng, shape)), w, b, training=True))
        out.append(S(A(vals(rng, shape)), None, None, training=True, desc="no affine"))
        out.append(S(A(vals(rng, shape)), w, b, A(vals(rng, (c,)), grad=False),
                     A(vals(rng, (c,), "pos"), grad=False), training=False, desc="eval"))
    out.append(S(A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (4,), "pos")),
                 A(vals(rng, (4,))), training=True, desc="non-contiguous"))
    out.append(S(A(vals(rng, (4, 3))), A(vals(rng, (2,), "pos")), None, training=True,
                 desc="a weight of the wrong size: PyTorch's error"))
    return out


def _gn_samples(rng):
    out = []
    for shape, groups in [((2, 6, 3, 2), 3), ((3, 4, 5), 2), ((3, 8), 2), ((2, 6, 3), 1)]:
        c = shape[1]
        out.append(S(A(vals(rng, shape)), groups, A(vals(rng, (c,), "pos")),
                     A(vals(rng, (c,)))))
        out.append(S(A(vals(rng, shape)), groups, desc="no affine"))
    return out


op("nn.functional.batch_norm", _bn, _bn_samples,
   ("native_batch_norm", "native_batch_norm_backward"))
op("nn.functional.group_norm", lambda m, x, *a, **k: m.nn.functional.group_norm(x, *a, **k),
   _gn_samples, ("native_group_norm",))
