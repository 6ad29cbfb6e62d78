"""Op-database entries of the nn-names records (ops/records/prelu.py): prelu's
``_prelu_kernel`` through ``F.prelu`` and ``torch.prelu`` (loaded by tests/support/opdb.py)."""

from __future__ import annotations

from opdb import A, S, op, vals


# (input shape, weight shape): per channel, shared, 0-d weight, ranks that already agree
# (no view: PreluKernelBackward0 takes the weight directly), empty batch; "nz" keeps
# inputs away from the kink at 0, which gets its own sample without gradcheck
def _prelu_samples(rng):
    shapes = [((2, 3, 4), (3,)), ((2, 3), (1,)), ((4,), (1,)), ((), ()), ((2, 3), ()),
              ((3,), ()), ((2, 3, 2, 2), (3,)), ((0, 3), (3,))]
    out = [S(A(vals(rng, xs, "nz"), "nz"), A(vals(rng, ws))) for xs, ws in shapes]
    out.append(S(A(vals(rng, (3, 4), "nz"), "nz", layout="T"), A(vals(rng, (4,))),
                 desc="non-contiguous input"))
    out.append(S(A([-1.0, 0.0, 2.0]), A([0.25]), check_grad=False,
                 desc="at 0: w * x, input gradient w * grad (x > 0 is false)"))
    return out


op("prelu", lambda m, x, w: m.nn.functional.prelu(x, w), _prelu_samples, ("_prelu_kernel",))
op("prelu_toplevel", lambda m, x, w: m.prelu(x, w), _prelu_samples, ("_prelu_kernel",))
