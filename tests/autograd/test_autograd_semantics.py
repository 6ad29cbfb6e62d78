"""Autograd semantics against PyTorch, one test per behaviour.

Each test runs the same code with ``m = retrograd`` and ``m = torch`` (``both``) and
compares what comes out: values, dtypes, shapes, gradients, graph structure, and the
errors (type, and PyTorch's message as a prefix of retrograd's, which may add the
cause and the fix).
"""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

DTYPES = ["float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
          "int64", "bool"]


# ----------------------------------------------------------------------------------
# helpers


def _is_t(x) -> bool:
    return isinstance(x, (R.Tensor, torch.Tensor))


def same(r, t, where: str = "", rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """Recursive comparison of a retrograd result with a torch result."""
    if _is_t(t):
        assert isinstance(r, R.Tensor), f"{where}: expected a Tensor, got {r!r}"
        assert tuple(r.shape) == tuple(t.shape), f"{where}: shape {r.shape} != {t.shape}"
        assert str(r.dtype) == str(t.dtype), f"{where}: dtype {r.dtype} != {t.dtype}"
        assert r.requires_grad == t.requires_grad, f"{where}: requires_grad differs"
        rn = r.detach().float().numpy() if str(r.dtype) == "torch.bfloat16" else \
            r.detach().numpy()
        tn = t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()
        if rn.dtype.kind == "f":
            np.testing.assert_allclose(rn, tn, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(rn, tn, err_msg=where)
    elif isinstance(t, (tuple, list)):
        assert isinstance(r, (tuple, list)) and len(r) == len(t), f"{where}: {r!r} vs {t!r}"
        for k, (a, b) in enumerate(zip(r, t)):
            same(a, b, f"{where}[{k}]", rtol, atol)
    elif isinstance(t, dict):
        assert r.keys() == t.keys(), where
        for k in t:
            same(r[k], t[k], f"{where}[{k!r}]", rtol, atol)
    elif isinstance(t, (torch.dtype, torch.device)):
        assert str(r) == str(t), f"{where}: {r!r} != {t!r}"
    elif isinstance(t, float) and math.isnan(t):
        assert isinstance(r, float) and math.isnan(r), where
    elif isinstance(t, float):
        assert r == pytest.approx(t, rel=rtol, abs=atol), f"{where}: {r!r} != {t!r}"
    else:
        assert r == t, f"{where}: {r!r} != {t!r}"


def both(f, **kw) -> None:
    """Run ``f(m)`` for both modules and compare the results."""
    same(f(R), f(torch), f.__name__ if hasattr(f, "__name__") else "", **kw)


def _error(f, m):
    try:
        f(m)
    except Exception as e:
        return e
    return None


def same_error(f, prefix_len: int | None = None) -> str:
    """torch raises; retrograd raises the same type, with torch's message as a prefix.

    ``prefix_len`` compares only that many characters (where retrograd's message names
    a different detail further on). Returns retrograd's message.
    """
    et = _error(f, torch)
    assert et is not None, "torch did not raise"
    er = _error(f, R)
    assert er is not None, f"retrograd did not raise; torch raised {type(et).__name__}: {et}"
    assert isinstance(er, type(et)) or isinstance(et, type(er)), (
        f"retrograd raised {type(er).__name__}: {er}; torch {type(et).__name__}: {et}")
    tm, rm = str(et).strip(), str(er)
    tm = tm.split(" Hint:")[0]  # torch's hint (anomaly mode) is replaced by retrograd's own
    want = tm[:prefix_len] if prefix_len is not None else tm.rstrip(".")
    assert rm.startswith(want), f"message\n  {rm!r}\ndoes not start with torch's\n  {want!r}"
    return rm


def leaf(m, vals, dtype="float64", rg=True):
    return m.tensor(vals, dtype=getattr(m, dtype), requires_grad=rg)


# ----------------------------------------------------------------------------------
# backward()


def test_backward_gradient_argument():
    def f(m):
        x = leaf(m, [[1.0, 2.0], [3.0, 4.0]])
        y = x ** 2 * 3
        y.backward(gradient=m.tensor([[1.0, 0.5], [0.1, -2.0]], dtype=m.float64))
        return x.grad
    both(f)


def test_backward_retain_graph_accumulates():
    def f(m):
        x = leaf(m, [1.5, -0.5])
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        return g1, x.grad
    both(f)


def test_backward_create_graph():
    def f(m):
        x = leaf(m, [1.5, -0.5])
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        gg, = m.autograd.grad(g.sum(), x)
        return g.requires_grad, g.grad_fn is not None, g.detach(), gg
    both(f)


def test_backward_inputs():
    def f(m):
        a, b = leaf(m, [1.0, 2.0]), leaf(m, [3.0, 4.0])
        b.grad = m.tensor([10.0, 10.0], dtype=m.float64)
        (a * b).sum().backward(inputs=[a])
        (a * b * b).sum().backward(inputs=a)
        return a.grad, b.grad
    both(f)


def test_backward_inputs_non_leaf():
    def f(m):
        a = leaf(m, [1.0, 2.0])
        h = a * 3
        (h * h).sum().backward(inputs=[h])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # .grad of a non-leaf in inputs: filled, no warning
            return h.grad, a.grad
    both(f)


def test_backward_empty_inputs_error():
    same_error(lambda m: (leaf(m, [1.0]) * 2).sum().backward(inputs=[]))


def test_autograd_backward_sequences():
    def f(m):
        x = leaf(m, [1.0, 2.0, 3.0])
        y1, y2 = x * 2, (x ** 2).sum()
        m.autograd.backward([y1, y2], [m.ones(3, dtype=m.float64), None])
        g1 = x.grad.clone()
        m.autograd.backward(x.sin().sum())
        m.autograd.backward((x * x,), grad_tensors=(m.full((3,), 0.5, dtype=m.float64),))
        return g1, x.grad
    both(f)


def test_backward_on_tensor_without_grad_errors():
    same_error(lambda m: m.ones(2).sum().backward())


# ----------------------------------------------------------------------------------
# autograd.grad


def test_grad_tensor_and_sequence_forms():
    def f(m):
        x = leaf(m, [0.5, -1.0])
        w = leaf(m, [2.0, 3.0])
        y = (x * w).sin()
        a = m.autograd.grad(y.sum(), x, retain_graph=True)
        b = m.autograd.grad([y.sum()], [x, w], retain_graph=True)
        c = m.autograd.grad(y, (w,), grad_outputs=m.tensor([1.0, -2.0], dtype=m.float64),
                            retain_graph=True)
        d = m.autograd.grad((y, y * 2), [x], grad_outputs=[m.ones(2, dtype=m.float64),
                                                            m.ones(2, dtype=m.float64)])
        return a, b, c, d, x.grad, w.grad  # grad() never touches .grad
    both(f)


def test_grad_create_graph_and_retain_graph():
    def f(m):
        x = leaf(m, [0.3, 0.7])
        y = (x ** 4).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x, retain_graph=True)
        g3, = m.autograd.grad(g.sum(), x)
        return g.requires_grad, g, g2, g3
    both(f)


def test_grad_allow_unused_and_materialize():
    def f(m):
        x, z = leaf(m, [1.0, 2.0]), leaf(m, [5.0])
        y = (x * x).sum()
        a = m.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
        b = m.autograd.grad(y, [x, z], materialize_grads=True)
        return a, b
    both(f)


def test_grad_unused_error():
    same_error(lambda m: m.autograd.grad((leaf(m, [1.0]) * 2).sum(),
                                         [leaf(m, [1.0]), leaf(m, [2.0])]))


def test_grad_input_not_requiring_grad_error():
    same_error(lambda m: m.autograd.grad((leaf(m, [1.0]) * 2).sum(), leaf(m, [1.0], rg=False)))


def test_grad_materialize_with_allow_unused_false_error():
    same_error(lambda m: m.autograd.grad((leaf(m, [1.0]) * 2).sum(), leaf(m, [1.0]),
                                         allow_unused=False, materialize_grads=True))


def test_implicit_grad_error():
    same_error(lambda m: (leaf(m, [1.0, 2.0]) * 2).backward())
    same_error(lambda m: m.autograd.grad(leaf(m, [1.0, 2.0]) * 2, leaf(m, [1.0, 2.0])))


def test_mismatch_in_shape_error():
    same_error(lambda m: (leaf(m, [[1.0, 2.0]]) * 2).backward(m.ones(2, dtype=m.float64)))
    same_error(lambda m: (leaf(m, [1.0, 2.0]) * 2).backward(m.ones(3, dtype=m.float64)))
    same_error(lambda m: m.autograd.grad(leaf(m, [1.0, 2.0]) * 2, leaf(m, [1.0]),
                                         m.ones(2, 1, dtype=m.float64)), prefix_len=40)


def test_vector_jacobian_product():
    """backward(v) gives vᵀJ: compare with the Jacobian torch computes."""
    def f(m):
        x = leaf(m, [0.2, -0.4, 0.9])
        y = m.stack([x[0] * x[1], x.sin().sum(), x[2] ** 3, x.exp()[1]])
        v = m.tensor([1.0, -2.0, 0.5, 3.0], dtype=m.float64)
        y.backward(v)
        return x.grad
    both(f)
    x = torch.tensor([0.2, -0.4, 0.9], dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(
        lambda t: torch.stack([t[0] * t[1], t.sin().sum(), t[2] ** 3, t.exp()[1]]), x)
    v = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    xr = leaf(R, [0.2, -0.4, 0.9])
    R.stack([xr[0] * xr[1], xr.sin().sum(), xr[2] ** 3, xr.exp()[1]]).backward(
        R.tensor(v.numpy()))
    np.testing.assert_allclose(xr.grad.numpy(), (v @ jac).numpy(), rtol=1e-12)


# ----------------------------------------------------------------------------------
# .grad


def test_accumulation_across_calls():
    def f(m):
        x = leaf(m, [1.0], "float32")
        (x ** 2).backward()
        a = x.grad.clone()
        (2 * x).backward()
        g = x.grad
        (x * 5).sum().backward()
        return a, g.clone(), x.grad, x.grad is g  # accumulated in place: same object
    both(f)


def test_grad_zero_and_none():
    def f(m):
        x = leaf(m, [1.0, 2.0], "float32")
        (x * x).sum().backward()
        x.grad.zero_()
        z = x.grad.clone()
        (x * 3).sum().backward()
        after_zero = x.grad.clone()
        x.grad = None
        (x * 4).sum().backward()
        return z, after_zero, x.grad
    both(f)


def test_grad_setter_checks():
    same_error(lambda m: setattr(leaf(m, [1.0, 2.0]), "grad", leaf(m, [1.0], rg=False)))
    both(lambda m: setattr(leaf(m, [1.0]), "grad", None))


def test_non_leaf_grad_is_none_with_warning():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = x * 2
        y.sum().backward()
        with pytest.warns(UserWarning):
            g = y.grad
        return g
    both(f)


def test_retain_grad():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = x * 2
        y.retain_grad()
        z = y * y
        z.retain_grad()
        z.sum().backward()
        return y.retains_grad, x.retains_grad, y.grad, z.grad
    both(f)


def test_second_backward_error():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()
    same_error(f)

    def g(m):
        x = leaf(m, [1.0, 2.0])
        y = (x * x).sum()
        m.autograd.grad(y, x)
        m.autograd.grad(y, x)
    same_error(g)


def test_nodes_without_saved_tensors_run_again():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    both(f)


# ----------------------------------------------------------------------------------
# higher order


def test_third_derivative_of_cubic():
    def f(m):
        x = leaf(m, [3.0])
        y = x ** 3 - 4 * x + 2
        g1, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g1, x, create_graph=True)
        g3, = m.autograd.grad(g2, x, create_graph=True)
        g4 = m.autograd.grad(g3, x, allow_unused=True)
        return g1, g2, g3, g4
    both(f)


def test_higher_order_of_transcendentals():
    def f(m):
        x = leaf(m, [0.3, 1.2])
        y = (x.sin() * x.exp() + x.tanh() * x.sigmoid()).sum()
        out = []
        g = y
        for _ in range(4):
            g, = m.autograd.grad(g.sum(), x, create_graph=True)
            out.append(g)
        return out
    both(f, rtol=1e-10, atol=1e-12)


def test_mixed_partials():
    def f(m):
        x, w = leaf(m, [0.5, 1.5]), leaf(m, [2.0, -1.0])
        y = (x * x * w + (x * w).sin()).sum()
        gx, = m.autograd.grad(y, x, create_graph=True)
        gxw, = m.autograd.grad(gx.sum(), w)
        return gx, gxw
    both(f)


def test_hessian_vector_product():
    def f(m):
        x = leaf(m, [0.5, -1.0, 2.0])
        y = (x[0] * x[1] * x[2] + (x * x).sum() * x[0])
        g, = m.autograd.grad(y, x, create_graph=True)
        v = m.tensor([1.0, 0.0, -1.0], dtype=m.float64)
        hv, = m.autograd.grad(g, x, grad_outputs=v)
        return hv
    both(f)


# ----------------------------------------------------------------------------------
# broadcasting, pruning, depth


def test_broadcasting_gradients_sum_back():
    def f(m):
        a = leaf(m, np.arange(6.0).reshape(2, 1, 3).tolist())
        b = leaf(m, [[1.0], [2.0], [3.0], [4.0]])
        c = leaf(m, 2.0)
        y = (a * b + c) / (b + 1)
        y.backward(m.ones(2, 4, 3, dtype=m.float64))
        return a.grad, b.grad, c.grad
    both(f)


def test_pruning_leaves_not_in_inputs_untouched():
    def f(m):
        a, b, c = leaf(m, [1.0]), leaf(m, [2.0]), leaf(m, [3.0])
        b.grad = m.tensor([7.0], dtype=m.float64)
        y = (a * b * c).sum()
        ga, = m.autograd.grad(y, a, retain_graph=True)
        y.backward(inputs=[c])
        return ga, a.grad, b.grad, c.grad
    both(f)


def test_pruning_runs_only_needed_rules():
    """Rules on paths that do not lead to the inputs are not run (they would raise)."""
    calls = []
    x, z = leaf(R, [1.0, 2.0]), leaf(R, [3.0, 4.0])
    h = z * 2
    h.register_hook(lambda g: calls.append("h") or g)
    y = (x * 3).sum() + h.sum()
    g, = R.autograd.grad(y, x)
    assert calls == [] and g.tolist() == [3.0, 3.0]


def test_deep_chain_backward_no_recursion():
    n = 100_000
    x = R.tensor(1.0, dtype=R.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.00001
    y.backward()
    assert x.grad.item() == pytest.approx(1.00001 ** n, rel=1e-9)
    g, = R.autograd.grad((x * 2).sum(), x)  # the engine still works afterwards
    assert g.item() == 2.0


def test_deep_chain_create_graph():
    x = R.tensor(0.5, dtype=R.float64, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y + x * x * 1e-4
    g, = R.autograd.grad(y, x, create_graph=True)
    gg, = R.autograd.grad(g, x)
    assert g.item() == pytest.approx(1 + 20_000 * 2e-4 * 0.5, rel=1e-9)
    assert gg.item() == pytest.approx(20_000 * 2e-4, rel=1e-9)


# ----------------------------------------------------------------------------------
# grad modes


def test_no_grad_context_and_decorator():
    def f(m):
        x = leaf(m, [1.0])
        with m.no_grad():
            a = x * 2
            inside = m.is_grad_enabled()

        @m.no_grad()
        def g(t):
            return t * 3

        @m.no_grad
        def h(t):
            return t * 4

        b, c = g(x), h(x)
        return a.requires_grad, inside, b.requires_grad, c.requires_grad, \
            m.is_grad_enabled(), (x * 2).requires_grad, g.__name__
    both(f)


def test_enable_grad_and_set_grad_enabled():
    def f(m):
        x = leaf(m, [1.0])
        with m.no_grad():
            with m.enable_grad():
                a = x * 2
            b = x * 2

            @m.enable_grad()
            def g(t):
                return t * 3
            c = g(x)
        with m.set_grad_enabled(False):
            d = x * 2
        m.set_grad_enabled(False)
        e = x * 2
        m.set_grad_enabled(True)

        @m.set_grad_enabled(False)
        def h(t):
            return t * 2
        return a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, \
            e.requires_grad, h(x).requires_grad, m.is_grad_enabled()
    both(f)


def test_inference_mode():
    def f(m):
        x = leaf(m, [1.0])
        with m.inference_mode():
            a = x * 2
            on = m.is_inference_mode_enabled(), m.is_grad_enabled()
        with m.inference_mode(False):
            b = x * 2

        @m.inference_mode()
        def g(t):
            return t * 3
        return a.requires_grad, on, b.requires_grad, g(x).requires_grad, \
            m.is_inference_mode_enabled()
    both(f)


def test_grad_mode_is_thread_local():
    def f(m):
        seen = {}

        def worker():
            seen["start"] = m.is_grad_enabled()
            with m.no_grad():
                seen["inner"] = m.is_grad_enabled()
                threading.Event().wait(0.01)

        with m.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            main_inside = m.is_grad_enabled()
        return seen["start"], seen["inner"], main_inside, m.is_grad_enabled()
    both(f)


def test_no_grad_blocks_in_place_checks_on_leaves():
    def f(m):
        w = leaf(m, [1.0, 2.0])
        with m.no_grad():
            w -= 0.5 * m.ones(2, dtype=m.float64)
            w.mul_(2)
        return w.detach(), w.requires_grad, w.is_leaf, w._version
    both(f)


# ----------------------------------------------------------------------------------
# in-place and versions


def test_version_counter_shared_by_views_and_detach():
    def f(m):
        x = leaf(m, [1.0, 2.0, 3.0], rg=False)
        v, d = x[1:], x.detach()
        vs = [x._version]
        v.add_(1)
        vs.append((x._version, v._version, d._version))
        d.mul_(2)
        vs.append((x._version, v._version, d._version))
        x[0] = 5.0
        vs.append((x._version, v._version, d._version))
        return vs, x
    both(f)


def test_modified_by_inplace_error():
    def f(m):
        x = leaf(m, [1.0, 2.0, 3.0], "float32")
        y = x * 2
        z = y.exp()
        y.add_(1)
        z.sum().backward()  # exp saved its output... y is only an input here
        w = y * y
        y.mul_(3)
        w.sum().backward()
    # torch's message up to and including "expected version M instead"
    msg = same_error(f)
    assert "is at version 2; expected version 1 instead" in msg


def test_modified_output_error():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    rm = same_error(f)
    assert "is at version 1; expected version 0 instead" in rm


def test_leaf_inplace_error():
    same_error(lambda m: leaf(m, [1.0, 2.0]).add_(1))
    same_error(lambda m: leaf(m, [1.0, 2.0]).mul_(leaf(m, [1.0, 2.0])))
    same_error(lambda m: leaf(m, [1.0, 2.0])[0].add_(1))

    def setitem(m):
        x = leaf(m, [1.0, 2.0])
        x[0] = 3.0
    same_error(setitem)


def test_inplace_on_non_leaf_rebases_grad_fn():
    def f(m):
        a = leaf(m, [1.0, 2.0, 3.0])
        w = leaf(m, [0.5, -1.0, 2.0])
        b = a * 2
        before = b.grad_fn.name()
        b.mul_(w)
        b.add_(1)
        names = (before, b.grad_fn.name(), b.grad_fn.next_functions[0][0].name(), b.is_leaf)
        b.sin_()
        b.sum().backward()
        return names, b.grad_fn.name(), a.grad, w.grad, b._version
    both(f)


def test_inplace_on_view_of_non_leaf_copyslices():
    def f(m):
        a = leaf(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        w = leaf(m, [2.0, -1.0])
        b = a * 1
        v = b[:, 1]
        v.mul_(w)
        row = b[1]
        row[2] = 9.0
        b.t()[0].add_(w)
        out = (b * b).sum() + v.sum() * 3
        out.backward()
        return b.grad_fn.name(), a.grad, w.grad, b.detach(), v.detach()
    both(f)


def test_view_of_leaf_inplace_error():
    same_error(lambda m: leaf(m, [[1.0, 2.0]]).view(2).mul_(2))


def test_inplace_result_cast_error():
    same_error(lambda m: m.ones(2, dtype=m.int64).div_(2))


def test_inplace_broadcast_output_error():
    same_error(lambda m: m.ones(2, dtype=m.float64).add_(m.ones(3, 2, dtype=m.float64)))


# ----------------------------------------------------------------------------------
# dtypes


def _scalar_operands():
    return [2, 2.5, True, -3]


@pytest.mark.parametrize("da", DTYPES)
def test_promotion_table_tensors(da):
    """result_type and the dtype of a + b for every pair, 0-d and n-d mixes."""
    for db in DTYPES:
        for sa, sb in [((2,), (2,)), ((), (2,)), ((2,), ()), ((), ())]:
            ra = R.zeros(sa, dtype=getattr(R, da))
            rb = R.zeros(sb, dtype=getattr(R, db))
            ta = torch.zeros(sa, dtype=getattr(torch, da))
            tb = torch.zeros(sb, dtype=getattr(torch, db))
            where = f"{da}{sa} with {db}{sb}"
            assert str(R.result_type(ra, rb)) == str(torch.result_type(ta, tb)), where
            assert str((ra * rb).dtype) == str((ta * tb).dtype), where
            assert str((ra / rb).dtype) == str((ta / tb).dtype), where
            assert str(R.promote_types(getattr(R, da), getattr(R, db))) == \
                str(torch.promote_types(getattr(torch, da), getattr(torch, db))), where
        for s in _scalar_operands():
            for shape in [(2,), ()]:
                ra, ta = R.zeros(shape, dtype=getattr(R, da)), torch.zeros(shape,
                                                                        dtype=getattr(torch, da))
                where = f"{da}{shape} with {s!r}"
                assert str(R.result_type(ra, s)) == str(torch.result_type(ta, s)), where
                if not (da == "bool" and s is True):
                    assert str((ra * s).dtype) == str((ta * s).dtype), where
                    assert str((s * ra).dtype) == str((s * ta).dtype), where
                assert str((ra / s).dtype) == str((ta / s).dtype), where


def test_promotion_examples():
    def f(m):
        return ((m.ones(2) * 2.5).dtype, (m.arange(3) / 2).dtype, (m.arange(3) * 2.5).dtype,
                (m.arange(3) + m.tensor(1.5, dtype=m.float64)).dtype,
                (m.ones(2, dtype=m.float16) + m.tensor(1.0)).dtype,
                (m.ones(2, dtype=m.int32) + m.tensor(1)).dtype,
                (m.ones(2, dtype=m.uint8) + m.tensor(-1)).dtype,
                (m.tensor([True]) + 1).dtype, (m.tensor([True]) + 1.5).dtype)
    both(f)


def test_bool_subtraction_error():
    same_error(lambda m: m.tensor([True]) - m.tensor([False]))


def test_only_floating_tensors_require_grad():
    for dt in ["int64", "int32", "bool", "uint8"]:
        same_error(lambda m, dt=dt: m.ones(2, dtype=getattr(m, dt)).requires_grad_())
        same_error(lambda m, dt=dt: m.tensor([1, 2], dtype=getattr(m, dt), requires_grad=True))
    both(lambda m: (m.ones(2, dtype=m.float16).requires_grad_().requires_grad,
                    m.arange(3).float().requires_grad_().dtype))


# ----------------------------------------------------------------------------------
# Size, Tensor attributes, graph structure


def test_size():
    def f(m):
        s = m.zeros(2, 3, 4).shape
        return repr(s), str(s), s[1], repr(s[1:]), s.numel(), len(s), s == (2, 3, 4), \
            tuple(s), repr(m.Size([2, 3])), repr(m.zeros(()).shape), list(s)
    both(f)


def test_tensor_metadata_attributes():
    def f(m):
        x = m.arange(24.0).reshape(2, 3, 4)
        return (x.shape, x.size(), x.size(1), x.size(-1), x.dim(), x.ndim, x.numel(),
                str(x.dtype), str(x.device), x.T.shape, x.mT.shape, x.is_leaf,
                x.requires_grad, x.is_floating_point(), x.element_size(), x.stride(),
                x.transpose(0, 2).stride(), x.is_contiguous(), x.t().is_contiguous()
                if x.ndim == 2 else x.transpose(0, 1).is_contiguous(), x.nelement())
    both(f)


def test_item_tolist_numpy():
    def f(m):
        x = m.tensor([[1.5, 2.0], [3.0, 4.0]])
        i = m.tensor([3])
        return (x[0, 0].item(), type(x[0, 0].item()).__name__, x.tolist(), i.item(),
                type(i.item()).__name__, m.tensor(True).item(), x.numpy().dtype.name,
                x.numpy().tolist(), float(x[1, 1]), int(i), bool(m.tensor([1.0])),
                f"{m.tensor(2.5)} {m.tensor(2.5):.3f} {i} {m.tensor(7)}", f"{x[0]}")
    both(f)
    same_error(lambda m: f"{m.tensor([1.5]):.2f}")
    same_error(lambda m: m.ones(2).item())
    same_error(lambda m: m.ones(2, requires_grad=True).numpy())
    same_error(lambda m: bool(m.ones(2)))


def test_numpy_shares_memory():
    def f(m):
        x = m.zeros(3)
        a = x.numpy()
        a[1] = 7
        return x
    both(f)


def test_requires_grad_and_leaf_flags():
    def f(m):
        x = m.ones(2, dtype=m.float64)
        r1 = x.requires_grad_()
        y = x * 2
        return (r1 is x, x.requires_grad, x.is_leaf, y.is_leaf, y.requires_grad,
                y.detach().is_leaf, y.detach().requires_grad, m.ones(2).is_leaf,
                x.requires_grad_(False).requires_grad)
    both(f)
    same_error(lambda m: (m.ones(2, requires_grad=True) * 2).requires_grad_(False))


def test_requires_grad_setter():
    def f(m):
        x = m.ones(2)
        x.requires_grad = True
        return x.requires_grad, (x * 2).requires_grad
    both(f)


def test_detach_and_detach_():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = x * 2
        d = y.detach()
        d[0] = 10.0  # shares memory with y
        z = x * 3
        z.detach_()
        return d, y.detach(), z.requires_grad, z.is_leaf, z.grad_fn is None, d._version
    both(f)


def test_clone_data_contiguous():
    def f(m):
        x = leaf(m, [[1.0, 2.0], [3.0, 4.0]])
        c = x.clone()
        d = x.data
        t = x.t()
        tc = t.contiguous()
        return (c.grad_fn.name(), c.requires_grad, d.requires_grad, d.is_leaf,
                tc.is_contiguous(), tc.grad_fn.name(), x.contiguous() is x, tc.detach())
    both(f)

    def g(m):
        x = m.ones(2)
        x.data = m.zeros(2)
        x.data.add_(3)
        return x
    both(g)


def test_dtype_conversions():
    def f(m):
        x = m.tensor([1.7, -2.2, 0.0])
        return (x.to(m.float64), x.float(), x.double(), x.half(), x.long(), x.int(), x.bool(),
                x.to(dtype=m.int16), x.type_as(m.zeros(1, dtype=m.int8)), x.to("cpu") is x,
                x.to(m.float32) is x, x.to(m.float32, copy=True) is x, x.type(),
                x.long().type(), x.type(m.float64).dtype, x.to(x.double()).dtype)
    both(f)

    def g(m):
        x = leaf(m, [1.0, 2.0], "float32")
        y = x.double() * 2
        y.sum().backward()
        return y.grad_fn.next_functions[0][0].name(), x.grad
    both(g)


def test_len_iter_bool_hash():
    def f(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        rows = [r for r in x]
        return (len(x), rows, bool(m.tensor(0.0)), bool(m.tensor([2])),
                hash(x) == hash(x), x in {x: 1}, len({x, m.tensor(1.0)}))
    both(f)
    same_error(lambda m: len(m.tensor(1.0)))
    same_error(lambda m: iter(m.tensor(1.0)))


def test_grad_fn_names_and_next_functions():
    def structure(m):
        x = leaf(m, [1.0, 2.0])
        w = leaf(m, [0.5, 0.5])
        y = ((x * 2 + w).exp() * x).sum()

        def walk(node, depth=0):
            if node is None:
                return None
            if depth > 6:
                return node.name()
            return (node.name(), [(walk(n, depth + 1), k) for n, k in node.next_functions])
        acc = y.grad_fn.next_functions[0][0].next_functions[1][0]
        return walk(y.grad_fn), acc.variable is x
    both(structure)

    def names(m):
        x = leaf(m, [[1.0, 2.0], [3.0, 4.0]])
        ops = [x + 1, x - x, x * x, x / 2, -x, x.exp(), x.log(), x.sin(), x.cos(), x.tanh(),
               x.sigmoid(), x.relu(), x.abs(), x.sqrt(), x ** 2, x.sum(), x.sum(0), x.mean(),
               x.mean(1), x.max(), x.amax(0), x.t(), x.view(4), x.reshape(4),
               x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(0), x.expand(2, 2, 2),
               x[0], x[:, 1:], x.clone(), x @ x, x.mm(x), m.cat([x, x]), m.stack([x, x]),
               x.flip(0), x.cumsum(0), x.prod(), x.clamp(0, 1), m.where(x > 2, x, x * 2),
               x.to(m.float32), x.gather(1, m.tensor([[0], [1]])), x.logsumexp(1),
               x.norm(), m.maximum(x, x * 2), x.exp2(), x.atan(), x.repeat(2, 1), x.roll(1, 0)]
        return [o.grad_fn.name() for o in ops]
    both(names)


def test_node_callable_and_metadata():
    def f(m):
        x = leaf(m, [1.0, 2.0])
        y = x * x
        r = y.grad_fn(m.ones(2, dtype=m.float64))
        return r, type(y.grad_fn.metadata).__name__
    both(f)


# ----------------------------------------------------------------------------------
# creation


def test_tensor_dtype_inference():
    def f(m):
        return [m.tensor(v).dtype for v in ([1, 2], [1.0, 2], [True, False], 3, 3.5, True,
                                            [[1, 2], [3, 4]], [], [1, 2.5, True])] + \
            [m.tensor([1, 2], dtype=m.float16).dtype, m.tensor(np.float64(1.5)).dtype,
             m.tensor(np.arange(3, dtype=np.int32)).dtype]
    both(f)
    same_error(lambda m: m.tensor([[1, 2], [3]]), prefix_len=0)


def test_as_tensor_and_from_numpy_share_memory():
    def f(m):
        a = np.zeros(3, dtype=np.float32)
        t1, t2, t3 = m.as_tensor(a), m.from_numpy(a), m.tensor(a)
        a[0] = 5
        t2[1] = 7
        return t1, t2, t3, a.tolist(), m.as_tensor([1, 2]).dtype, \
            m.as_tensor(a, dtype=m.float64).dtype
    both(f)


def test_filled_creation():
    def f(m):
        return (m.zeros(2, 3), m.zeros((2, 3)), m.ones(2, dtype=m.int64), m.ones([]),
                m.full((2,), 7), m.full((2,), 7.0), m.full((2,), True), m.full([2], 1.5,
                                                                              dtype=m.float64),
                m.empty(2, 3).shape, m.empty(0).shape, m.eye(3), m.eye(2, 3, dtype=m.int64),
                m.zeros(2, requires_grad=True))
    both(f)


def test_arange_linspace():
    def f(m):
        return (m.arange(5), m.arange(1, 4), m.arange(0, 1, 0.25), m.arange(5.0),
                m.arange(10, 0, -3), m.arange(0, 5, 2, dtype=m.float64), m.arange(-1.5, 1.5),
                m.linspace(0, 1, 5), m.linspace(-2, 3, 7), m.linspace(0, 1, 1),
                m.linspace(0, 10, 4, dtype=m.float64), m.arange(0, 0.3, 0.1))
    both(f)


def test_like_functions():
    def f(m):
        x = m.ones(2, 3, dtype=m.float64)
        i = m.ones(2, dtype=m.int32)
        return (m.zeros_like(x), m.ones_like(i), m.full_like(x, 3), m.full_like(i, 2.7),
                m.empty_like(x).shape, m.empty_like(x).dtype, m.zeros_like(x, dtype=m.int64),
                m.ones_like(x, requires_grad=True).requires_grad, m.rand_like(x).dtype,
                m.randn_like(x).shape)
    both(f)


def test_random_shapes_dtypes_and_seed():
    def f(m):
        return (m.rand(2, 3).shape, m.rand(2).dtype, m.randn(4).dtype,
                m.randn(2, 2, dtype=m.float64).dtype, m.randint(0, 5, (3,)).dtype,
                m.randint(3, (2, 2)).shape, m.randperm(5).dtype, sorted(m.randperm(5).tolist()),
                m.randint(0, 10, (2,), dtype=m.int32).dtype, m.rand(()).shape)
    both(f)
    R.manual_seed(0)
    a = (R.rand(3), R.randn(2, 2), R.randint(0, 100, (4,)), R.randperm(6))
    R.manual_seed(0)
    b = (R.rand(3), R.randn(2, 2), R.randint(0, 100, (4,)), R.randperm(6))
    for x, y in zip(a, b):
        assert R.equal(x, y)
    assert 0 <= R.rand(1000).min().item() and R.rand(1000).max().item() < 1
    assert R.randint(2, 5, (200,)).min().item() >= 2


def test_default_dtype():
    def f(m):
        before = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        try:
            out = (m.get_default_dtype(), m.tensor([1.5]).dtype, m.zeros(1).dtype,
                   m.arange(2.0).dtype, (m.arange(3) / 2).dtype, m.ones(1).dtype,
                   (m.ones(2, dtype=m.float32) * 2.5).dtype, m.tensor([1]).dtype,
                   m.linspace(0, 1, 2).dtype, m.randn(2).dtype)
        finally:
            m.set_default_dtype(before)
        return out + (m.get_default_dtype(), m.tensor([1.5]).dtype)
    both(f)
    same_error(lambda m: m.set_default_dtype(m.int64), prefix_len=10)


def test_device():
    def f(m):
        x = m.ones(2, device="cpu")
        return (str(x.device), repr(m.device("cpu")), m.device("cpu") == x.device,
                x.to("cpu").device.type, m.zeros(1, device=m.device("cpu")).device.type,
                m.cuda.is_available(), x.is_cuda, x.cpu() is x if hasattr(x, "cpu") else True)
    both(f)
    for bad in (lambda: R.ones(2, device="cuda"), lambda: R.ones(2).to("cuda"),
                lambda: R.zeros(2, device="cuda:0"), lambda: R.tensor([1.0], device="cuda")):
        with pytest.raises(AssertionError,
                           match="(?s)^Torch not compiled with CUDA enabled\n.*CPU only"):
            bad()


def test_legacy_constructors_and_variable():
    def f(m):
        return (m.Tensor([1, 2]), m.Tensor(2, 3).shape, m.Tensor(2, 3).dtype,
                m.FloatTensor([1, 2]), m.DoubleTensor([1.5]), m.LongTensor([1, 2]),
                m.FloatTensor(3).shape, m.Tensor([[1.0, 2.0]]).shape, m.Tensor().shape,
                isinstance(m.ones(1), m.Tensor))
    both(f)

    def v(m):
        a = m.autograd.Variable(m.tensor([1.0, 2.0]), requires_grad=True)
        (a * a).sum().backward()
        return a, a.grad, m.autograd.Variable(m.ones(1)).requires_grad
    both(v)


def test_allclose_isclose_equal():
    def f(m):
        a = m.tensor([1.0, 2.0, float("nan"), float("inf")])
        b = m.tensor([1.0 + 1e-9, 2.1, float("nan"), float("inf")])
        return (m.allclose(a[:2], b[:2]), m.allclose(a, b, equal_nan=True),
                m.allclose(a[:1], b[:1]), m.isclose(a, b), m.isclose(a, b, equal_nan=True),
                m.isclose(a, b, rtol=0.1), m.equal(a[:2], a[:2]), m.equal(a, a),
                m.equal(m.ones(2), m.ones(3)), m.equal(m.ones(2), m.ones(2, dtype=m.float64)),
                m.isclose(m.tensor([1, 2]), m.tensor([1, 3])), a[:2].allclose(b[:2]),
                m.isclose(m.ones(2, 1), m.ones(3)).shape)
    both(f)


def test_floor_divide_has_no_derivative_but_div_modes_do():
    """``//`` records a node whose backward raises (PyTorch); div(rounding_mode=) gives 0."""
    same_error(lambda m: (leaf(m, [3.0, -2.5]) // 2).sum().backward())
    same_error(lambda m: (m.floor_divide(leaf(m, [3.0]), leaf(m, [2.0])) + 1).sum().backward())

    def f(m):
        x, y = leaf(m, [3.0, -2.5]), leaf(m, [2.0, 0.5])
        (x.div(y, rounding_mode="floor") + x.div(2, rounding_mode="trunc") +
         (x % y) + m.fmod(x, y)).sum().backward()
        return x.grad, y.grad
    both(f)


def _line_of(marker: str) -> int:
    import inspect

    src, start = inspect.getsourcelines(test_node_site_is_the_users_line)
    return start + next(i for i, s in enumerate(src) if marker in s)


def test_node_site_is_the_users_line():
    """Note [User sites]: every way of calling an op records the user's line (the line
    number is worked out from the saved instruction offset only when shown)."""
    x = R.ones(3, requires_grad=True)
    lin = R.nn.Linear(3, 2)
    a = x * 2  # site: operator
    b = R.mul(x,  # site: function (a call over two lines: its first)
              3)
    c = x.sin()  # site: method
    d = x.view(3, 1)  # site: view
    e = lin(x)  # site: module
    f = R.nn.functional.cross_entropy(e[None], R.tensor([1]))  # site: composite
    for t, marker in ((a, "operator"), (b, "function"), (c, "method"), (d, "view"),
                      (e, "module"), (f, "composite")):
        code, line = t.grad_fn.site
        assert code.co_name == "test_node_site_is_the_users_line"
        assert line == _line_of(f"# site: {marker}"), marker
    with pytest.raises(RuntimeError, match=f"line {_line_of('# site: function')}"):
        b.sum().backward()
        b.sum().backward()
