"""Op-database entries of the nnloss family's table records (ops/table_nn_extra.py):
the shrink activations. Loaded by the last line of tests/opdb.py."""

from __future__ import annotations

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
# tests/test_nn_extra_losses.py after the same seed); the in-place form on a non-leaf
def _rrelu_samples(rng):
    return one(_SHAPES, "frac", variants=[((), {}), ((0.1, 0.3), {}), ((0.2, 0.2), {})])(rng) \
        + _kinks(rng)


op("rrelu", lambda m, x, *a: m.nn.functional.rrelu(x, *a), _rrelu_samples,
   ("rrelu_with_noise",))
op("rrelu_inplace", lambda m, x, *a: m.nn.functional.rrelu_(x * 1, *a), _rrelu_samples,
   ("rrelu_with_noise_result",))
