"""Classes of differential-fuzzing differences (docs/compatibility.md,
"Differential fuzzing"), each checked against torch: what matmul saves for backward (a
copy where PyTorch's reshape copies; seed 7918), the order of a node without a
derivative and the leaves beside it (11278, 2253), prod's gradient over one element
(17004), an in-place op into an overlapping view with a wider operand (784), setitem
with a value sharing self's memory (101813); and the exclusions added for the rest
(10818, 1569, 2624, 105548, 109958), which must claim their seeds
and nothing else.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


# ----------------------------------------------------------------------------------
# Note [What matmul saves] (_functions/matmul.py): an in-place write into an operand after
# the product invalidates the graph exactly where PyTorch saved the operand itself, and
# not where it saved its reshape's copy; the gradients use the values at the product.

_SHAPES_A = [(3,), (2, 3), (2, 2, 3), (1, 2, 3), (2, 1, 2, 3)]
_SHAPES_B = [(3,), (3, 4), (2, 3, 4), (1, 3, 4), (1, 2, 3, 4)]


def _operand(T, shape, layout, rg, seed):
    """(leaf, operand, the tensor written in place): the operand as it is, transposed
    (``t``), with its batch permuted (``p``) or expanded from a batch of 1 (``e``)."""
    if layout == "t":
        made = shape[:-2] + (shape[-1], shape[-2])
    elif layout == "p":
        made = (shape[-2],) + shape[:-2] + (shape[-1],)
    elif layout == "e":
        made = (1,) + shape[1:]
    else:
        made = shape
    vals = np.random.default_rng(seed).standard_normal(made).round(3)
    leaf = T.tensor(vals.tolist(), dtype=T.float64).requires_grad_(rg)
    pre = leaf * 1
    op = {"t": lambda: pre.mT, "p": lambda: pre.movedim(0, -2),
          "e": lambda: pre.expand(shape), "c": lambda: pre}[layout]()
    return leaf, op, pre


def _matmul_then_write(T, sa, sb, la, lb, ra, rb, written):
    xa, a, pa = _operand(T, sa, la, ra, 1)
    xb, b, pb = _operand(T, sb, lb, rb, 2)
    r = T.matmul(a, b)
    (pa if written == "a" else pb).mul_(2)
    try:
        (r * r).sum().backward(create_graph=True)
        grads = [x.grad for x in (xa, xb) if x.grad is not None]
        sum((g * g).sum() for g in grads).backward()  # through the saved tensors again
    except RuntimeError as e:
        return "raised" if "modified by an inplace operation" in str(e) else str(e)
    return [None if x.grad is None else np.array(x.grad.detach().tolist()) for x in (xa, xb)]


def _layouts(shape):
    return "c" + ("t" if len(shape) >= 2 else "") + ("pe" if len(shape) >= 3 else "")


_MATMUL_CASES = [(sa, sb) for sa, sb in itertools.product(_SHAPES_A, _SHAPES_B)
                 if (len(sa) > 2 or len(sb) > 2)]


@pytest.mark.parametrize("sa,sb", _MATMUL_CASES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_saves_what_torch_saves(sa, sb):
    checked = raised = 0
    for la, lb in itertools.product(_layouts(sa), _layouts(sb)):
        for (ra, rb), written in itertools.product([(True, False), (False, True),
                                                    (True, True)], "ab"):
            args = (sa, sb, la, lb, ra, rb, written)
            try:
                want = _matmul_then_write(torch, *args)
            except RuntimeError:  # shapes that do not multiply
                continue
            got = _matmul_then_write(retrograd, *args)
            checked += 1
            if isinstance(want, str):
                raised += 1
                assert got == want, args
            else:
                assert not isinstance(got, str), (args, got)
                for g, w in zip(got, want):
                    assert (g is None) == (w is None), args
                    if w is not None:
                        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10, err_msg=str(args))
    assert checked


# ----------------------------------------------------------------------------------
# Note [Nodes PyTorch runs first] (_graph/engine.py): a node without a derivative runs
# as early as AccumulateGrad, in the order of the edges that made both ready, so whether
# a leaf beside it got its gradient before the error depends on that order.

_NOT_IMPLEMENTED_CASES = {
    "remainder-first": lambda T, x, w: T.remainder(-2, x) * w,
    "leaf-first": lambda T, x, w: w * T.remainder(-2, x),
    "leaf-used-before": lambda T, x, w: (w * 1).sum() * 0 + T.remainder(-2, x) * w,
    "floor-divide-first": lambda T, x, w: (x // 2) * w,
    "floor-divide-second": lambda T, x, w: w * (x // 2),
    "a-node-between": lambda T, x, w: T.remainder(-2, x).exp() * w,
    "mv": lambda T, x, w: T.remainder(-2, x.expand(2, 3)) @ w,
}


@pytest.mark.parametrize("case", _NOT_IMPLEMENTED_CASES)
def test_a_node_without_derivative_runs_when_torch_runs_it(case):
    def run(T):
        x = T.tensor([1.5, -0.5, 2.0], requires_grad=True)
        w = T.tensor([0.5, 2.0, -1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::"):
            _NOT_IMPLEMENTED_CASES[case](T, x, w).sum().backward()
        return None if w.grad is None else w.grad.tolist()

    got, want = run(retrograd), run(torch)
    assert (got is None) == (want is None)
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_fuzz_seed_11278():
    def run(T):
        x1 = T.tensor([[-0.211, -1.45, 1.046], [-1.916, -0.365, -0.545]], dtype=T.float64,
                      requires_grad=True)
        v3 = T.remainder(-2, x1)
        x4 = T.tensor([0.899, 1.664, -0.386], dtype=T.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::remainder"):
            (v3 @ x4).mean().backward(retain_graph=True)
        return x4.grad

    assert run(torch) is None
    assert run(retrograd) is None


# ----------------------------------------------------------------------------------
# prod's gradient over one element is the incoming gradient itself (PyTorch's
# prod_safe_zeros_backward), so under create_graph it has no graph through the input

_PROD_CASES = [
    ((1,), [0.0], {}), ((1,), [0.0], {"dim": 0}), ((1,), [0.0], {"dim": 0, "keepdim": True}),
    ((2, 1), [0.0, 3.0], {"dim": 1}), ((1, 1), [0.0], {}), ((3,), [0.0, 2.0, 3.0], {}),
    ((2, 2), [0.0, 2.0, 0.0, 1.0], {"dim": 0}), ((1,), [2.0], {"dim": 0}),
]


@pytest.mark.parametrize("shape,vals,kw", _PROD_CASES)
def test_prod_gradient_over_one_element(shape, vals, kw):
    def run(T):
        x = T.tensor(vals, dtype=T.float64).reshape(shape).requires_grad_()
        w = T.tensor(1.5, dtype=T.float64)  # the incoming gradient has no graph
        (g,) = T.autograd.grad((x.prod(**kw) * w).sum(), [x], create_graph=True)
        return g.requires_grad, g.grad_fn is not None, g.detach().tolist()

    assert run(retrograd) == run(torch)


# ----------------------------------------------------------------------------------
# an in-place op into a view whose elements share memory, with an operand of a wider
# dtype: PyTorch's CPU TensorIterator computes from a promoted copy of self and copies
# the result back, so every value comes from the memory as it was (fuzz seed 784); with
# one dtype, it reads the memory as the earlier elements left it

_OVERLAP_VIEWS = [(6, (5, 2), (1, 1)), (8, (3, 3), (2, 1)), (12, (3, 4), (1, 3)),
                  (7, (2, 3, 2), (1, 2, 1))]


@pytest.mark.parametrize("n,shape,strides", _OVERLAP_VIEWS)
@pytest.mark.parametrize("other", ["float64", "float32"])
@pytest.mark.parametrize("op", ["mul_", "add_", "div_", "copy_"])
def test_inplace_into_overlapping_view_with_a_wider_operand(n, shape, strides, other, op):
    def run(T):
        rng = np.random.default_rng(n)
        base = T.tensor(rng.standard_normal(n).round(2).tolist(), dtype=T.float32)
        v = base.as_strided(shape, strides)
        o = T.tensor(rng.standard_normal(shape).round(2).tolist(), dtype=getattr(T, other))
        getattr(v, op)(o)
        return np.array(base.tolist())

    np.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-6)


# ----------------------------------------------------------------------------------
# x[index] = value where value shares x's memory: PyTorch views the value without its
# leading 1s first, a tensor of its own, so the value is compared with x by memory and
# strides (an expanded one is "too hard": allowed), not as x itself (fuzz seed 101813)

def _expanded(T, *shape):
    return T.ones(()).expand(*shape)


_SETITEM_ALIAS = {
    "expanded-self": lambda T: (_expanded(T, 1, 3), [0], lambda x: x),
    "expanded-self-3d": lambda T: (_expanded(T, 1, 1, 3), [0], lambda x: x),
    "expanded-self-mask": lambda T: (_expanded(T, 1, 3), [True], lambda x: x),
    "expanded-no-leading-1": lambda T: (_expanded(T, 2, 3), [0, 1], lambda x: x),
    "expanded-row": lambda T: (T.ones(1, 1).expand(1, 3), [0], lambda x: x),
    "expanded-rows": lambda T: (T.ones(2, 1).expand(2, 3), [0, 0], lambda x: x),
    "contiguous-self": lambda T: (T.ones(1, 3), [0], lambda x: x),
    "contiguous-row": lambda T: (T.ones(2, 3), [1], lambda x: x[0:1]),
}


@pytest.mark.parametrize("case", _SETITEM_ALIAS)
def test_setitem_with_a_value_sharing_memory(case):
    def run(T):
        x, index, value = _SETITEM_ALIAS[case](T)
        try:
            x[T.tensor(index)] = value(x)
        except RuntimeError as e:
            return str(e).split(".")[0]
        return "ok"

    assert run(retrograd) == run(torch)


def test_fuzz_seed_101813():
    def run(T):
        x2 = T.tensor([[-2.0, 1.116, -1.918]], dtype=T.float32, requires_grad=True)
        g, = T.autograd.grad(x2.sum(), [x2], create_graph=True)
        g[T.tensor([0])] = g
        return g.tolist()

    assert run(retrograd) == run(torch)


# ----------------------------------------------------------------------------------
# the exclusions added for these classes (tests/support/fuzzgen.py, Note [Exclusions]) claim
# only their own difference: a program with each one's trigger whose difference lies
# elsewhere (retrograd faked as torch with an exp 0.1% off) is not excluded

fuzzgen = pytest.importorskip("fuzzgen")

_TRIGGERS = {
    "matmul view": "x1 = T.tensor([[1.0, 2.0]], dtype=T.float64, requires_grad=True)\n"
                   "x2 = T.ones((2, 2, 3), dtype=T.float64)\n"
                   "v3 = T.matmul(x1, x2)\n"
                   "v4 = T.exp(v3)\n",
    "zero contribution": "x1 = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)\n"
                         "x1.sum().backward()\n"
                         "T.exp(x1).sum().backward(create_graph=True)\n",
    "second order": "x1 = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)\n"
                    "v2 = x1 * 2\n"
                    "g3_0, = T.autograd.grad(T.exp(v2).sum(), [x1], create_graph=True)\n"
                    "v2.mul_(2)\n"
                    "g3_0.sum().backward()\n",
    "layout": "x1 = T.tensor([[0.5, 1.0], [2.0, 3.0]], dtype=T.float64, requires_grad=True)\n"
              "g2_0, = T.autograd.grad(x1.sum(), [x1])\n"
              "v3 = T.exp(g2_0)\n",
}


def _wrong_exp_module():
    import types

    fake = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch)
                                    if not k.startswith("__")})
    fake.exp = lambda x: torch.exp(x) * 1.001
    return fake


@pytest.mark.parametrize("name", _TRIGGERS)
def test_new_exclusions_do_not_hide_other_differences(name, monkeypatch):
    monkeypatch.setattr(fuzzgen, "_modules", lambda: (_wrong_exp_module(), torch))
    prog = fuzzgen.parse(_TRIGGERS[name])
    diff = fuzzgen.compare(prog)
    assert diff is not None and "exp" in (diff.code + str(diff)), diff
    assert fuzzgen.excluded_by(diff, prog) is None, (name, str(diff))


# the seeds and the category of the entry that must claim each:
# tests/fuzz/data/excluded_seeds.txt
@pytest.mark.parametrize("seed,category", fuzzgen.read_seeds("excluded_seeds.txt"))
def test_residual_seeds_are_excluded_by_their_entry(seed, category):
    out = fuzzgen.check_seed(seed, do_shrink=False)
    entry = next(ex for ex in fuzzgen.EXCLUSIONS if ex.category == category)
    if out.diff is None and entry.cpu_dependent:
        return  # this CPU's NumPy loops round as torch does: the program agrees
    assert out.diff is not None and out.excluded is not None, seed
    assert out.excluded.category == category


def test_matmul_result_is_a_view_where_torch_returns_one():
    # seed 1178, once an exclusion: a 1-row matrix times a batch is folded, and the
    # transposed product's mT is contiguous, so the result is that view (as in torch); an
    # in-place op on it goes through CopySlices
    assert fuzzgen.check_seed(1178, do_shrink=False).diff is None
    x = retrograd.ones(1, 3, requires_grad=True)
    r = x @ retrograd.ones(2, 3, 4, requires_grad=True)
    assert r._base is not None and r.grad_fn.name() == "TransposeBackward0"


# fresh-range seeds 104829 (clamp with tensor bounds at a signed-zero tie) and 103029
# (an in-place op whose result has another dtype than its operands' common one)
def test_clamp_tensor_bounds_keep_self_on_ties_and_propagate_nan():
    nan = float("nan")
    cases = [([1.0, nan, 0.0, -0.0], [nan, 1.0, -0.0, 0.0], None),
             ([1.0, nan, 0.0, -0.0], None, [nan, 1.0, -0.0, 0.0]),
             ([0.0, -0.0], [-0.0, 0.0], [-0.0, 0.0])]
    for x, lo, hi in cases:
        res = []
        for m in (torch, retrograd):
            kw = {k: m.tensor(v) for k, v in (("min", lo), ("max", hi)) if v is not None}
            res.append(m.clamp(m.tensor(x), **kw).numpy())
        np.testing.assert_array_equal(res[1], res[0])
        np.testing.assert_array_equal(np.signbit(res[1]), np.signbit(res[0]))


@pytest.mark.parametrize("op", ["pow_", "mul_", "div_", "add_", "sub_", "atan2_"])
def test_inplace_with_a_wider_operand_records_as_torch(op):
    out = []
    for m in (torch, retrograd):
        a = m.tensor([0.5, 1.5, 2.0], requires_grad=True)
        w = m.tensor([0.3, 0.7, 1.1], dtype=m.float64, requires_grad=True)
        x = a * 1
        getattr(x, op)(w)
        name = type(x.grad_fn).__name__ if m is torch else x.grad_fn.name()
        (x * x).sum().backward()
        out.append((name, x.dtype, a.grad.numpy(), w.grad.numpy()))
    (tn, tdt, ta, tw), (rn, rdt, ra, rw) = out
    assert rn == tn and str(rdt) == str(tdt)
    np.testing.assert_allclose(ra, ta, rtol=1e-6)
    np.testing.assert_allclose(rw, tw, rtol=1e-6)


def test_inplace_with_a_wider_operand_saves_self():
    # PowBackward1 saves its result, which is x itself: a later write into x (through a
    # view) makes the gradient raise, as in PyTorch (fuzz seed 103029)
    for m in (torch, retrograd):
        x = m.tensor([-2.0], requires_grad=True).square()
        e = m.tensor([0.714], dtype=m.float64, requires_grad=True)
        x.pow_(e)
        x.view(-1).masked_fill_(x.view(-1) > 0, 2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            m.autograd.grad(x.sum(), [e])
