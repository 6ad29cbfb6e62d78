"""Generated tests over the op database (tests/support/opdb.py), against PyTorch.

For every entry and sample: forward values, dtypes, shapes, requires_grad and
grad_fn names (float32, float64, and int64 where meaningful); errors where PyTorch
raises; gradients with a random ``gradient=`` (and per input, through
``autograd.grad``); numerical gradcheck and gradgradcheck in float64; double
backward against PyTorch; gradients when only some outputs are used; in-place
variants (values, version bump, gradients through the rebased ``grad_fn``, also
through a view). A meta-test checks that every op of the table has an entry.
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import retrograd as R
from _gradcheck_util import gradcheck, gradgradcheck
from opdb import DB, INTERNAL_OPS, build, flat, is_tensor, sample_rng, to_numpy
from retrograd.ops import op

torch = pytest.importorskip("torch")

ENTRIES = {e.name: e for e in DB}
_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError)


def _skip(entry, test: str) -> None:
    reason = entry.skips.get(test)
    if reason:
        pytest.skip(reason)


def _tol(entry, dtype_name: str):
    if dtype_name == "float64":
        return entry.f64_tol
    if dtype_name == "float32":
        return entry.f32_tol
    if dtype_name in ("float16", "bfloat16"):
        return (1e-3, 1e-3)
    return (0.0, 0.0)


def _call(m, entry, sample, dtype, requires_grad=True):
    args, kwargs, leaves = build(m, sample, dtype, requires_grad)
    return entry.fn(m, *args, **kwargs), leaves


def _torch_or_error(entry, sample, dtype, requires_grad=True):
    """(outputs, leaves, None) from torch, or (None, None, exception)."""
    try:
        out, leaves = _call(torch, entry, sample, dtype, requires_grad)
    except _ERRORS as e:
        return None, None, e
    return out, leaves, None


def _expect_same_error(entry, sample, dtype, err, requires_grad=True):
    try:
        _call(R, entry, sample, dtype, requires_grad)
    except _ERRORS as e:
        if not isinstance(e, type(err)) and not isinstance(err, type(e)):
            pytest.fail(f"{entry.name}{sample}: torch raised {type(err).__name__}({err}), "
                        f"retrograd {type(e).__name__}({e})")
        return
    pytest.fail(f"{entry.name}{sample} [{dtype}]: torch raised {type(err).__name__}: {err}; "
                "retrograd did not raise")


def assert_same(r, t, entry, where: str, tol=None, check_graph: bool = True) -> None:
    """``r`` (retrograd) equals ``t`` (torch): shape, dtype, values, graph flags."""
    if not is_tensor(t):
        if is_tensor(r):
            pytest.fail(f"{where}: torch gave {t!r}, retrograd a tensor {r!r}")
        assert r == t, f"{where}: {r!r} != {t!r}"
        return
    assert isinstance(r, R.Tensor), f"{where}: expected a Tensor, got {type(r).__name__}"
    assert tuple(r.shape) == tuple(t.shape), f"{where}: shape {tuple(r.shape)} != {tuple(t.shape)}"
    assert str(r.dtype) == str(t.dtype), f"{where}: dtype {r.dtype} != {t.dtype}"
    if check_graph:
        assert r.requires_grad == t.requires_grad, (
            f"{where}: requires_grad {r.requires_grad} != torch's {t.requires_grad}")
    rn, tn = to_numpy(r), to_numpy(t)
    if rn.dtype.kind == "f":
        rtol, atol = tol or _tol(entry, str(t.dtype).replace("torch.", ""))
        np.testing.assert_allclose(rn, tn, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(rn, tn, err_msg=where)


def _params(kind: str):
    out = []
    for e in DB:
        if kind == "diff" and not e.differentiable:
            continue
        if kind == "twice" and not (e.differentiable and e.twice):
            continue
        if kind == "inplace" and not e.inplace:
            continue
        out.append(pytest.param(e, id=e.name))
    return out


def _dtypes_for(e):
    return ["float32", "float64"] + (["int64"] if e.int_ok else [])


FORWARD = [pytest.param(e, dt, id=f"{e.name}-{dt}") for e in DB for dt in _dtypes_for(e)]


# ----------------------------------------------------------------------------------
# forward


@pytest.mark.parametrize("entry,dtype", FORWARD)
def test_forward(entry, dtype):
    """Values, shapes, dtypes, requires_grad and grad_fn names against torch."""
    _skip(entry, "test_forward" + ("_int" if dtype == "int64" else ""))
    for sample in entry.samples(sample_rng(entry.name)):
        tout, _, err = _torch_or_error(entry, sample, dtype)
        if err is not None:
            _expect_same_error(entry, sample, dtype, err)
            continue
        rout, _ = _call(R, entry, sample, dtype)
        ts, rs = flat(tout), flat(rout)
        where = f"{entry.name}{sample} [{dtype}]"
        assert len(rs) == len(ts), f"{where}: {len(rs)} outputs, torch has {len(ts)}"
        for k, (r, t) in enumerate(zip(rs, ts)):
            assert_same(r, t, entry, f"{where} output {k}")
        # the same call with nothing requiring grad: plain values, no graph
        rout2, _ = _call(R, entry, sample, dtype, requires_grad=False)
        for k, (r, t) in enumerate(zip(flat(rout2), ts)):
            if is_tensor(r):
                assert r.grad_fn is None and not r.requires_grad, f"{where} output {k}"
                assert_same(r, t, entry, f"{where} output {k} (no grad)", check_graph=False)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in DB])
def test_grad_fn_name(entry):
    """grad_fn.name() of every output matches torch's (float64 samples)."""
    _skip(entry, "test_grad_fn_name")
    bad = []
    for sample in entry.samples(sample_rng(entry.name)):
        tout, _, err = _torch_or_error(entry, sample, "float64")
        if err is not None:
            continue
        rout, _ = _call(R, entry, sample, "float64")
        for k, (r, t) in enumerate(zip(flat(rout), flat(tout))):
            if is_tensor(t) and t.grad_fn is not None and is_tensor(r) and r.grad_fn is not None:
                if r.grad_fn.name() != t.grad_fn.name():
                    bad.append(f"{sample} output {k}: {r.grad_fn.name()} != {t.grad_fn.name()}")
    assert not bad, f"{entry.name}: " + "; ".join(bad)


# ----------------------------------------------------------------------------------
# gradients against torch


def _diff_outputs(outs, which=None):
    res = [(k, o) for k, o in enumerate(outs) if is_tensor(o) and o.requires_grad]
    if which is not None:
        res = [(k, o) for k, o in res if k in which]
    return res


def _vs(m, entry, outs, tag):
    rng = sample_rng(entry.name, tag)
    return [m.tensor(rng.standard_normal(tuple(o.shape))).to(o.dtype) for o in outs]


def _grads(m, entry, sample, dtype, which=None, per_input=True):
    out, leaves = _call(m, entry, sample, dtype)
    diff = _diff_outputs(flat(out), which)
    if not diff:
        return None, None
    outs = [o for _, o in diff]
    vs = _vs(m, entry, outs, "v")
    single = []
    if per_input and len(leaves) > 1:
        for leaf in leaves:  # each input alone: rules learn which inputs need a gradient
            single.append(m.autograd.grad(outs, [leaf], vs, retain_graph=True,
                                          allow_unused=True)[0])
    m.autograd.backward(outs, vs)
    return [leaf.grad for leaf in leaves], single


def _compare_grads(rg, tg, entry, where, tol=None):
    assert len(rg) == len(tg)
    for i, (r, t) in enumerate(zip(rg, tg)):
        if t is None:
            assert r is None, f"{where}: grad of input {i} should be None, got {r}"
            continue
        assert r is not None, f"{where}: grad of input {i} is None, torch has {t}"
        assert_same(r, t, entry, f"{where} grad of input {i}", tol=tol, check_graph=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("entry", _params("diff"))
def test_grad(entry, dtype):
    """backward() with a random ``gradient=`` matches torch (also input by input)."""
    _skip(entry, "test_grad")
    for sample in entry.samples(sample_rng(entry.name)):
        if not sample.torch_grad:
            continue
        _, _, err = _torch_or_error(entry, sample, dtype)
        if err is not None:
            continue
        tg, tsingle = _grads(torch, entry, sample, dtype)
        rg, rsingle = _grads(R, entry, sample, dtype)
        where = f"{entry.name}{sample} [{dtype}]"
        if tg is None:
            assert rg is None, f"{where}: torch's outputs need no grad, retrograd's do"
            continue
        assert rg is not None, f"{where}: no output of retrograd requires grad"
        _compare_grads(rg, tg, entry, where)
        _compare_grads(rsingle, tsingle, entry, where + " (autograd.grad per input)")


@pytest.mark.parametrize("entry", _params("diff"))
def test_output_subsets(entry):
    """Using only some outputs (the others get no gradient, i.e. None) matches torch."""
    _skip(entry, "test_grad")
    n_multi = 0
    for sample in entry.samples(sample_rng(entry.name)):
        if not sample.torch_grad:
            continue
        tout, _, err = _torch_or_error(entry, sample, "float64")
        if err is not None:
            continue
        diff = _diff_outputs(flat(tout))
        if len(diff) < 2:
            continue
        n_multi += 1
        for k, _ in diff:
            tg, _ = _grads(torch, entry, sample, "float64", which={k}, per_input=False)
            rg, _ = _grads(R, entry, sample, "float64", which={k}, per_input=False)
            _compare_grads(rg, tg, entry, f"{entry.name}{sample} only output {k}")
    if not n_multi:
        pytest.skip("no sample with several differentiable outputs")


# ----------------------------------------------------------------------------------
# numerical checks (float64, retrograd alone)


def _bound(entry, sample):
    def fn(*ls):
        args, kwargs, _ = build(R, sample, "float64", leaves=list(ls))
        return entry.fn(R, *args, **kwargs)
    return fn


def _checkable(entry):
    for sample in entry.samples(sample_rng(entry.name)):
        if not (sample.check_grad and sample.torch_grad):  # (no gradient in torch either)
            continue
        _, _, err = _torch_or_error(entry, sample, "float64")
        if err is not None:
            continue
        _, leaves = _call(R, entry, sample, "float64")
        if leaves:
            yield sample, leaves


@pytest.mark.parametrize("entry", _params("diff"))
def test_gradcheck(entry):
    """Analytic vᵀJ against central differences (float64)."""
    _skip(entry, "test_gradcheck")
    for sample, leaves in _checkable(entry):
        try:
            gradcheck(_bound(entry, sample), leaves)
        except AssertionError as e:
            raise AssertionError(f"{entry.name}{sample}: {e}") from None


@pytest.mark.parametrize("entry", _params("twice"))
def test_gradgradcheck(entry):
    """Second derivatives (create_graph=True) against central differences (float64)."""
    _skip(entry, "test_gradgradcheck")
    for sample, leaves in _checkable(entry):
        try:
            gradgradcheck(_bound(entry, sample), leaves)
        except AssertionError as e:
            raise AssertionError(f"{entry.name}{sample}: {e}") from None


@pytest.mark.parametrize("entry", _params("twice"))
def test_official_gradcheck(entry):
    """retrograd.autograd.gradcheck / gradgradcheck (PyTorch's API) agree on every entry."""
    official = getattr(R.autograd, "gradcheck", None)
    official2 = getattr(R.autograd, "gradgradcheck", None)
    if official is None or official2 is None:
        pytest.skip("retrograd.autograd.gradcheck is not there yet")
    _skip(entry, "test_gradcheck")
    for sample, leaves in _checkable(entry):
        fn = _bound(entry, sample)
        assert official(fn, tuple(leaves)), f"{entry.name}{sample}"
        if "test_gradgradcheck" not in entry.skips:
            assert official2(fn, tuple(leaves)), f"{entry.name}{sample}"


def _double(m, entry, sample):
    out, leaves = _call(m, entry, sample, "float64")
    diff = _diff_outputs(flat(out))
    if not diff:
        return None
    outs = [o for _, o in diff]
    vs = _vs(m, entry, outs, "v")
    gs = m.autograd.grad(outs, leaves, vs, create_graph=True, allow_unused=True)
    us = _vs(m, entry, leaves, "u")
    terms = [(g * u).sum() for g, u in zip(gs, us) if g is not None and g.requires_grad]
    first = [g.detach() if g is not None else None for g in gs]
    if not terms:
        return first, None
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return first, m.autograd.grad(total, leaves, allow_unused=True)


@pytest.mark.parametrize("entry", _params("twice"))
def test_double_backward(entry):
    """grad(sum(u * grad(f, create_graph=True))) matches torch (None counts as zeros)."""
    _skip(entry, "test_double_backward")
    for sample in entry.samples(sample_rng(entry.name)):
        if not (sample.torch_grad and sample.check_grad):  # kinks: no second derivative
            continue
        _, _, err = _torch_or_error(entry, sample, "float64")
        if err is not None:
            continue
        t = _double(torch, entry, sample)
        r = _double(R, entry, sample)
        where = f"{entry.name}{sample}"
        if t is None:
            assert r is None, where
            continue
        assert r is not None, f"{where}: no output of retrograd requires grad"
        _compare_grads(r[0], t[0], entry, where + " first grads")
        tgg = t[1] or [None] * len(t[0])
        rgg = r[1] or [None] * len(r[0])
        for i, (a, b) in enumerate(zip(rgg, tgg)):
            a = np.zeros(tuple(b.shape)) if a is None and b is not None else a
            if b is None:
                if a is not None:
                    assert not to_numpy(a).any(), f"{where}: second grad {i} should be zero"
                continue
            if a is None:
                assert not to_numpy(b).any(), f"{where}: second grad {i} is None, torch {b}"
                continue
            if isinstance(a, np.ndarray):
                a = R.tensor(a)
            assert_same(a, b, entry, f"{where} second grad {i}", check_graph=False)


# ----------------------------------------------------------------------------------
# in-place variants


def _inplace_run(m, entry, sample, dtype, through_view: bool):
    args, kwargs, leaves = build(m, sample, dtype)
    x = args[0]
    if not is_tensor(x):
        return "skip"
    base = x * 1
    target = base.view(tuple(base.shape)) if through_view else base
    v0 = base._version
    res = getattr(target, entry.inplace)(*args[1:], **kwargs)
    assert res is target, f"{entry.inplace} must return self"
    outs = [base, target] if through_view else [base]
    names = [o.grad_fn.name() if o.grad_fn is not None else None for o in outs]
    info = (base._version - v0, names, [o.detach().clone() for o in outs])
    diff = [o for o in outs if o.requires_grad]
    if not diff or not leaves:
        return info, None
    vs = _vs(m, entry, diff, "inplace")
    m.autograd.backward(diff, vs)
    return info, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize("through_view", [False, True], ids=["self", "view"])
@pytest.mark.parametrize("entry", _params("inplace"))
def test_inplace(entry, through_view):
    """x.op_(...) on a non-leaf (or on a view of one): values, version, grad_fn, grads."""
    _skip(entry, "test_inplace")
    for dtype in ("float64", "float32"):
        for sample in entry.samples(sample_rng(entry.name)):
            if not (sample.inplace and sample.torch_grad):
                continue
            where = f"{entry.name} -> {entry.inplace}{sample} [{dtype}]"
            try:
                t = _inplace_run(torch, entry, sample, dtype, through_view)
            except _ERRORS as err:
                try:
                    _inplace_run(R, entry, sample, dtype, through_view)
                except _ERRORS as e:
                    assert isinstance(e, type(err)) or isinstance(err, type(e)), (
                        f"{where}: torch raised {err!r}, retrograd {e!r}")
                    continue
                pytest.fail(f"{where}: torch raised {err!r}; retrograd did not raise")
            r = _inplace_run(R, entry, sample, dtype, through_view)
            if t == "skip":
                continue
            (tver, tnames, tvals), tg = t
            (rver, rnames, rvals), rg = r
            assert rver == tver, f"{where}: version bumped by {rver}, torch by {tver}"
            for a, b in zip(rvals, tvals):
                assert_same(a, b, entry, where, check_graph=False)
            if not through_view and "test_grad_fn_name" not in entry.skips:
                assert rnames == tnames, f"{where}: grad_fn {rnames} != torch's {tnames}"
            if tg is None:
                assert rg is None, where
                continue
            _compare_grads(rg, tg, entry, where)


# ----------------------------------------------------------------------------------
# meta-tests: the database covers the table


def _import_all():
    """Import every retrograd module, so that every Op of the table is registered.

    A module that fails to import is reported by its own tests; its ops are not
    registered, so they cannot be checked here.
    """
    for mod in pkgutil.walk_packages(R.__path__, "retrograd.", onerror=lambda name: None):
        if mod.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except Exception:
            continue


def _reached_ops():
    """Run every entry's samples (float64, requires_grad) and record the ops reached."""
    seen_by: dict = {}
    current = [None]
    saved = []
    for o in list(op.REGISTRY):
        if o.fwd is None:
            continue
        orig = o.fwd

        def wrapped(*a, _orig=orig, _op=o):
            seen_by.setdefault(current[0], set()).add(_op)
            return _orig(*a)
        saved.append((o, orig))
        o.fwd = wrapped
    try:
        for entry in DB:
            current[0] = entry.name
            for sample in entry.samples(sample_rng(entry.name)):
                try:
                    out, leaves = _call(R, entry, sample, "float64")
                except _ERRORS:
                    continue
                outs = [o for o in flat(out) if is_tensor(o) and o.grad_fn is not None]
                try:  # kernels that backward rules call (fused backward ops) count too
                    gs = R.autograd.grad(outs, leaves, [R.ones_like(o) for o in outs],
                                         create_graph=True, allow_unused=True)
                except _ERRORS:
                    gs = ()
                outs += [g for g in gs if g is not None and g.grad_fn is not None]
                stack = [o.grad_fn for o in outs]
                visited = set()
                while stack:
                    node = stack.pop()
                    if node is None or id(node) in visited:
                        continue
                    visited.add(id(node))
                    if isinstance(node._op, op.Op):
                        seen_by.setdefault(entry.name, set()).add(node._op)
                    stack.extend(e[0] for e in node._edges if e is not None)
    finally:
        for o, orig in saved:
            o.fwd = orig
    return seen_by


def test_every_table_op_has_an_entry():
    """Every Op in the table is reached by some entry (or is listed as internal)."""
    _import_all()
    seen_by = _reached_ops()
    reached = set().union(*seen_by.values())
    from retrograd.ops.records import nn as TN

    # nn ops have their own database and meta-test:
    # tests/nn/test_nn_layers.py::test_every_nn_op_is_reached
    nn_ops = set(map(id, TN.ALL_NN_OPS.values()))
    unreached = [o for o in op.REGISTRY if o not in reached and id(o) not in nn_ops]
    missing = sorted({o.name for o in unreached if o.name not in INTERNAL_OPS})
    assert not missing, (f"table ops without an op-database entry (add one to "
                         f"tests/support/opdb.py, or list the op in INTERNAL_OPS with a reason): "
                         f"{missing}")
    stale = sorted(set(INTERNAL_OPS) - {o.name for o in unreached})
    assert not stale, f"INTERNAL_OPS names no unreached op (remove them): {stale}"
    bad = {}
    for entry in DB:
        got = {o.name for o in seen_by.get(entry.name, ())}
        lost = set(entry.ops) - got
        if lost:
            bad[entry.name] = sorted(lost)
    assert not bad, f"entries that do not reach the ops they declare: {bad}"


def test_database_is_well_formed():
    for entry in DB:
        samples = entry.samples(sample_rng(entry.name))
        assert samples, entry.name
        assert set(entry.skips) <= {"test_forward", "test_forward_int", "test_grad",
                                    "test_grad_fn_name",
                                    "test_gradcheck", "test_gradgradcheck",
                                    "test_double_backward", "test_inplace"}, entry.name
        if entry.inplace:
            assert hasattr(R.Tensor, entry.inplace), entry.inplace
            assert hasattr(torch.Tensor, entry.inplace), entry.inplace


def test_gradcheck_util_catches_wrong_rules():
    """The checker itself: a deliberately wrong derivative must be reported."""
    x = R.tensor([0.3, 0.7], dtype=R.float64, requires_grad=True)
    assert gradcheck(lambda t: t.sin(), [x])

    def wrong(t):
        return t.sin() + (t.detach() * 0.5)  # value depends on t, gradient ignores it
    with pytest.raises(AssertionError):
        gradcheck(wrong, [x])
    with pytest.raises(AssertionError):
        gradgradcheck(lambda t: t * t.detach() * t, [x])
