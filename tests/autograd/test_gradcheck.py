"""gradcheck / gradgradcheck against PyTorch's: same verdicts, same errors, same defaults;
the failure message also names the worst element. And gradcheck(check_forward_ad=True)
over every entry of the op database (tests/support/opdb.py).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import retrograd
from _autograd_compare import MODULES, same, same_error, tensor

torch = pytest.importorskip("torch")


def _inp(m, vals, rg=True, dtype=None):
    return tensor(m, vals, requires_grad=rg, dtype=dtype or m.float64)


def _verdict(m, fn, inputs, **kw):
    """gradcheck's result, or the exception type and the first line of its message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return m.autograd.gradcheck(fn(m), inputs(m), **kw)
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0]


def test_signatures_and_defaults_match_torch():
    for name in ("gradcheck", "gradgradcheck"):
        ours = inspect.signature(getattr(retrograd.autograd, name))
        theirs = inspect.signature(getattr(torch.autograd, name))
        assert list(ours.parameters) == list(theirs.parameters)
        for p in theirs.parameters:
            assert ours.parameters[p].default == theirs.parameters[p].default, (name, p)
            assert ours.parameters[p].kind == theirs.parameters[p].kind, (name, p)


def _scale_fn(m, bad=False, ignore_grad=False, fast_out=False):
    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if ignore_grad:
                return m.ones_like(g) * 2
            return g * 2 + (1 if bad else 0)

    return Scale.apply


CASES = {
    "sin": (lambda m: m.sin, lambda m: (_inp(m, [0.3, -1.2, 2.0]),)),
    "matmul_tanh": (lambda m: (lambda a, b: (a @ b).tanh()),
                    lambda m: (_inp(m, [[0.1, 0.2], [0.3, -0.4]]), _inp(m, [[1.0], [-1.0]]))),
    "two_outputs": (lambda m: (lambda a, b: (a * b, (a + b).exp())),
                    lambda m: (_inp(m, [0.5, -0.5]), _inp(m, [1.0, 2.0]))),
    "mixed_args": (lambda m: (lambda a, k, i: (a * k)[i]),
                   lambda m: (_inp(m, [1.0, 2.0, 3.0]), 3.0,
                              tensor(m, [2, 0], dtype=m.int64))),
    "partially_rg": (lambda m: (lambda a, b: a * b.sum()),
                     lambda m: (_inp(m, [1.0, 2.0]), _inp(m, [3.0, 4.0], rg=False))),
    "unused_input": (lambda m: (lambda a, b: a.exp()),
                     lambda m: (_inp(m, [1.0, 2.0]), _inp(m, [3.0, 4.0]))),
    "no_diff_output": (lambda m: (lambda a: a.argmax()), lambda m: (_inp(m, [1.0, 3.0]),)),
    "wrong_backward": (lambda m: _scale_fn(m, bad=True), lambda m: (_inp(m, [1.0, 2.0, 3.0]),)),
    "ignores_grad_output": (lambda m: (lambda x: _scale_fn(m, ignore_grad=True)(x).sum()),
                            lambda m: (_inp(m, [1.0, 2.0]),)),
    "nothing_requires_grad": (lambda m: m.sin, lambda m: (_inp(m, [1.0], rg=False),)),
    "stride_zero": (lambda m: m.sin,
                    lambda m: (_inp(m, [1.0], rg=False).expand(3).requires_grad_(),)),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_verdicts_match_torch(case, fast_mode):
    fn, inputs = CASES[case]
    t = _verdict(torch, fn, inputs, fast_mode=fast_mode)
    r = _verdict(retrograd, fn, inputs, fast_mode=fast_mode)
    if t is True:
        assert r is True, r
    else:
        assert r is not True, "torch failed, retrograd passed"
        assert r[0] == t[0] and r[1].startswith(t[1].rstrip(".")), (r, t)


def test_failure_message_shows_worst_element():
    x = _inp(retrograd, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError) as ei:
        retrograd.autograd.gradcheck(_scale_fn(retrograd, bad=True), (x,))
    msg = str(ei.value)
    t = _inp(torch, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError) as ti:
        torch.autograd.gradcheck(_scale_fn(torch, bad=True), (t,))
    assert type(ei.value).__name__ == type(ti.value).__name__ == "GradcheckError"
    assert msg.startswith(str(ti.value).rstrip())  # PyTorch's whole message, then ours
    assert "The worst element is d output[1] / d input[0]" in msg
    assert "analytical 1 vs numerical 0" in msg and "relative error inf" in msg


def test_raise_exception_false_returns_false():
    def f(m):
        return m.autograd.gradcheck(_scale_fn(m, bad=True), (_inp(m, [1.0, 2.0]),),
                                    raise_exception=False)

    assert same(f) is False


def test_float32_inputs_warn_like_torch():
    msgs = []
    for m in MODULES:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.autograd.gradcheck(lambda x: x * 2, (_inp(m, [1.0, 2.0], dtype=m.float32),),
                                 eps=1e-2, atol=1e-2, rtol=1e-2)
        msgs.append([str(x.message) for x in w if "double precision" in str(x.message)])
    assert msgs[0] == msgs[1] and msgs[0]


def test_nondeterministic_backward():
    def fn(m):
        rng = np.random.default_rng(0)

        class Noisy(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * (2 + 1e-9 * float(rng.standard_normal()))

        return Noisy.apply

    def f(m):
        return m.autograd.gradcheck(fn(m), (_inp(m, [1.0, 2.0]),))

    e = same_error(f)
    assert "Backward is not reentrant" in str(e)

    def g(m):
        return m.autograd.gradcheck(fn(m), (_inp(m, [1.0, 2.0]),), nondet_tol=1e-6)

    assert same(g) is True


def test_undefined_output_grads_check():
    """A multi-output Function that handles None output grads passes the undefined-grad
    check (one output's gradient undefined at a time), as in PyTorch."""
    def fn(m):
        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                r = None
                if g1 is not None:
                    r = g1 * 2
                if g2 is not None:
                    r = g2 * 3 if r is None else r + g2 * 3
                return r

        return Two.apply

    def f(m):
        return (m.autograd.gradcheck(fn(m), (_inp(m, [1.0, 2.0]),)),
                m.autograd.gradcheck(lambda x: x.split(1), (_inp(m, [1.0, 2.0]),)))

    assert same(f) == (True, True)


def test_forward_ad_and_batched_grad_checks():
    def f(m):
        fns = [lambda a, b: (a @ b).tanh(), lambda a, b: (a.exp() * b.sum(), a.sin())]
        ins = (_inp(m, [[0.1, 0.2], [0.3, -0.4]]), _inp(m, [[1.0, 0.5], [-1.0, 2.0]]))
        return [m.autograd.gradcheck(fn, ins, check_forward_ad=True, check_batched_grad=True)
                for fn in fns] + [
            m.autograd.gradcheck(fn, ins, check_forward_ad=True, check_backward_ad=False,
                                 fast_mode=True) for fn in fns]

    assert same(f) == [True] * 4


def test_forward_ad_failure_and_missing_jvp():
    def bad_jvp(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 3

        return m.autograd.gradcheck(F.apply, (_inp(m, [1.0, 2.0]),), check_forward_ad=True)

    e = same_error(bad_jvp)
    assert "Jacobian computed with forward mode mismatch" in str(e)

    def no_jvp(m):
        return m.autograd.gradcheck(_scale_fn(m), (_inp(m, [1.0, 2.0]),), check_forward_ad=True)

    same_error(no_jvp)


def test_argument_errors():
    same_error(lambda m: m.autograd.gradcheck(m.sin, (_inp(m, [1.0]),), check_forward_ad=False,
                                              check_backward_ad=False))
    same_error(lambda m: m.autograd.gradcheck(m.sin, (_inp(m, [1.0]),), check_batched_grad=True,
                                              check_backward_ad=False, check_forward_ad=True))
    same_error(lambda m: m.autograd.gradgradcheck(m.sin, (_inp(m, [1.0]),),
                                                  check_rev_over_rev=False))


def test_gradgradcheck_verdicts():
    def cube(m, bad):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                if bad:  # right first derivative, but its own derivative is lost
                    return 3 * x.detach() ** 2 * g
                return 3 * x ** 2 * g

        return Cube.apply

    def good(m):
        return (m.autograd.gradgradcheck(cube(m, False), (_inp(m, [1.0, -2.0]),)),
                m.autograd.gradgradcheck(lambda a, b: (a * b).sin(),
                                         (_inp(m, [1.0, 2.0]), _inp(m, [0.5, -0.3]))),
                m.autograd.gradgradcheck(lambda a: a.tanh(), (_inp(m, [0.2, 0.1]),),
                                         grad_outputs=(_inp(m, [1.0, -1.0]),)),
                m.autograd.gradgradcheck(lambda a: a.exp(), (_inp(m, [0.2, 0.1]),),
                                         fast_mode=True, check_fwd_over_rev=True),
                m.autograd.gradgradcheck(lambda a: a.exp(), (_inp(m, [0.2, 0.1]),),
                                         gen_non_contig_grad_outputs=True))

    assert same(good) == (True,) * 5
    e = same_error(lambda m: m.autograd.gradgradcheck(cube(m, True), (_inp(m, [1.0, -2.0]),)))
    assert "Jacobian mismatch" in str(e)


def test_numerical_and_analytical_jacobian_helpers():
    from retrograd.autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian

    x = _inp(retrograd, [1.0, 2.0])
    (num,) = get_numerical_jacobian(lambda xs: xs[0] ** 2, (x,), eps=1e-6)
    jac, reentrant, sizes_ok, types_ok = get_analytical_jacobian((x,), x ** 2)
    np.testing.assert_allclose(num._data, [[2.0, 0.0], [0.0, 4.0]], atol=1e-6)
    np.testing.assert_allclose(jac[0]._data, [[2.0, 0.0], [0.0, 4.0]])
    assert reentrant and sizes_ok and types_ok


# ----------------------------------------------------------------------------------
# forward-mode gradcheck over the op database


def _opdb_params():
    try:
        import opdb
    except ImportError:  # pragma: no cover - the database ships with the tests
        return []
    return [pytest.param(e, id=e.name) for e in opdb.DB if e.differentiable]


@pytest.mark.parametrize("entry", _opdb_params())
def test_opdb_forward_ad_gradcheck(entry):
    """gradcheck(check_forward_ad=True): forward-mode tangents of every op in the database
    against central differences (the backward half is test_ops.py's official check)."""
    from opdb import build, sample_rng

    reason = entry.skips.get("test_gradcheck")
    if reason:
        pytest.skip(reason)
    checked = 0
    for sample in entry.samples(sample_rng(entry.name)):
        if not (sample.check_grad and sample.torch_grad):  # (no derivative in torch)
            continue
        try:
            args, kwargs, _ = build(torch, sample, "float64")
            entry.fn(torch, *args, **kwargs)
        except Exception:
            continue
        _, _, leaves = build(retrograd, sample, "float64")
        if not leaves:
            continue

        def fn(*ls, sample=sample):
            a, k, _ = build(retrograd, sample, "float64", leaves=list(ls))
            return entry.fn(retrograd, *a, **k)

        assert retrograd.autograd.gradcheck(fn, tuple(leaves), check_forward_ad=True,
                                            check_backward_ad=False), f"{entry.name}{sample}"
        checked += 1
    if not checked:
        pytest.skip("no differentiable float64 sample")
