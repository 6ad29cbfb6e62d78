"""Per-input slots of backward nodes against torch 2.13: non-differentiable inputs and
Scalar overloads.

Note [Non-differentiable inputs] (_graph/node.py): an index, a condition or the number
of a Scalar overload has no slot in ``next_functions``, in the ``grad_inputs`` of a node's
hooks, in what calling a node returns, nor in anomaly mode's "its Nth output"; a number
PyTorch wraps into a tensor (``2 * x``) keeps its (None, 0) slot. Note [Scalar overloads]
(ops/records/elementwise.py): ``x ** 2``, ``x ** y`` and ``2 ** x`` are PowBackward0/1/2, and so on.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _slots(node):
    """(name, ((child name or None, input_nr), ...)) of a node, as the walk of both sees it."""
    name = node.name().rpartition("::")[2]
    return name, tuple((None if f is None else f.name().rpartition("::")[2], k)
                       for f, k in node.next_functions)


def _both(fn):
    """``fn(m, x, y, idx)`` run with torch and retrograd on the same float64 leaves."""
    g = np.random.default_rng(0)
    xv, yv = g.random((3, 4)), g.random((3, 4))
    iv = np.array([[0, 1], [2, 2], [3, 0]])
    res = []
    for m in (torch, R):
        x = m.tensor(xv, requires_grad=True)
        y = m.tensor(yv, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: scatter(reduce=) is deprecated
            res.append((fn(m, x, y, m.tensor(iv)), x, y))
    return res


CASES = {
    # non-differentiable inputs: no slot
    "gather": lambda m, x, y, i: x.gather(1, i),
    "take_along_dim": lambda m, x, y, i: m.take_along_dim(x, i, 1),
    "index_select": lambda m, x, y, i: x.index_select(1, i[0]),
    "index_add": lambda m, x, y, i: x.index_add(1, i[0], y[:, :2], alpha=2),
    "scatter": lambda m, x, y, i: x.scatter(1, i, y),
    "scatter_add": lambda m, x, y, i: x.scatter_add(1, i, y),
    "scatter_value": lambda m, x, y, i: x.scatter(1, i, 2.5),
    "where": lambda m, x, y, i: m.where(x > 0.5, x, y),
    "where_scalar_other": lambda m, x, y, i: m.where(x > 0.5, x, 2.0),  # keeps its None slot
    "where_scalar_input": lambda m, x, y, i: m.where(x > 0.5, 2.0, y),
    "where_mixed_dtypes": lambda m, x, y, i: m.where(x > 0.5, x.float(), y),
    "sort": lambda m, x, y, i: x.sort(1)[0],
    "sort_0d": lambda m, x, y, i: x[0, 0].sort()[0],
    "topk": lambda m, x, y, i: x.topk(2)[0],
    "max_dim": lambda m, x, y, i: x.max(1)[0],
    "min_dim": lambda m, x, y, i: x.min(0)[0],
    "nll_loss": lambda m, x, y, i: m.nn.functional.nll_loss(x, i[:, 0]),
    "embedding": lambda m, x, y, i: m.nn.functional.embedding(i, x.t()),
    "mul_scalar": lambda m, x, y, i: 2 * x,  # mul.Tensor: the wrapped number keeps a slot
    "sub_scalar": lambda m, x, y, i: x - 1,
    # Scalar overloads
    "pow_scalar": lambda m, x, y, i: x ** 2,
    "pow_half": lambda m, x, y, i: x.pow(0.5),
    "pow_tensor": lambda m, x, y, i: x ** y,
    "pow_0d_exponent": lambda m, x, y, i: x ** m.tensor(2.0, dtype=m.float64),
    "pow_0d_base": lambda m, x, y, i: m.tensor(2.0, dtype=m.float64) ** x,
    "rpow": lambda m, x, y, i: 2 ** x,
    "pow_fn_rscalar": lambda m, x, y, i: m.pow(2, x),
    "square": lambda m, x, y, i: m.square(x),
    "float_power_scalar": lambda m, x, y, i: m.float_power(x.float(), 2),
    "float_power_rscalar": lambda m, x, y, i: m.float_power(2, x),
    "float_power_tensor": lambda m, x, y, i: m.float_power(x, y),
    "rsub": lambda m, x, y, i: 1.5 - x,
    "sub_fn_number_first": lambda m, x, y, i: m.sub(1.5, x),  # sub.Tensor: two slots
    "remainder_scalar": lambda m, x, y, i: x % 2,
    "remainder_tensor": lambda m, x, y, i: m.remainder(x, y + 1),
    "remainder_rscalar": lambda m, x, y, i: 2 % (x + 1),
    "fmod_scalar": lambda m, x, y, i: m.fmod(x, 1.5),
    "fmod_tensor": lambda m, x, y, i: m.fmod(x, y + 1),
    "floor_divide_scalar": lambda m, x, y, i: x // 2,
    "floor_divide_rscalar": lambda m, x, y, i: 2 // (x + 1),
    "floor_divide_tensor": lambda m, x, y, i: x // (y + 1),
    "scatter_reduce": lambda m, x, y, i: x.scatter(1, i, y, reduce="add"),
    "scatter_value_reduce": lambda m, x, y, i: x.scatter(1, i, 2.0, reduce="add"),
    # in-place forms
    "pow_": lambda m, x, y, i: x.clone().pow_(2),
    "ipow": lambda m, x, y, i: x.clone().__ipow__(2),
    "pow_tensor_": lambda m, x, y, i: x.clone().pow_(y),
    "square_": lambda m, x, y, i: x.clone().square_(),
    "sub_": lambda m, x, y, i: x.clone().sub_(1),
    "remainder_": lambda m, x, y, i: x.clone().remainder_(2),
    "imod": lambda m, x, y, i: x.clone().__imod__(2),
    "remainder_tensor_": lambda m, x, y, i: x.clone().remainder_(y + 1),
    "fmod_": lambda m, x, y, i: x.clone().fmod_(2),
    "fmod_tensor_": lambda m, x, y, i: x.clone().fmod_(y + 1),
    "floor_divide_": lambda m, x, y, i: x.clone().floor_divide_(2),
    "float_power_": lambda m, x, y, i: x.clone().float_power_(2),
    "float_power_tensor_": lambda m, x, y, i: x.clone().float_power_(y),
    "fill_": lambda m, x, y, i: x.clone().fill_(2),
    "fill_tensor_": lambda m, x, y, i: x.clone().fill_(y[0, 0]),
    "scatter_": lambda m, x, y, i: x.clone().scatter_(1, i, 2.5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_node_and_slots_match_torch(case):
    (t, _, _), (r, _, _) = _both(CASES[case])
    assert _slots(r.grad_fn) == _slots(t.grad_fn)


def test_hidden_slots_are_declared_on_the_op():
    x = R.ones(3, 4, requires_grad=True)
    node = x.gather(1, R.tensor([[0], [1], [2]])).grad_fn
    assert node._op.nondiff == (1,) and len(node._edges) == 2  # the rules keep their indexing
    assert len(node.next_functions) == 1
    assert (x ** 2).grad_fn._op.nondiff == (1,)
    assert (2 ** x).grad_fn._op.nondiff == (0,)
    assert (x ** x).grad_fn._op.nondiff == ()
    assert (2 * x).grad_fn._op.nondiff == ()  # mul.Tensor: a (None, 0) slot instead


HOOKED = {
    "gather": lambda m, x, y, i: x.gather(1, i),
    "where": lambda m, x, y, i: m.where(x > 0.5, x, y),
    "index_add": lambda m, x, y, i: x.index_add(1, i[0], y[:, :2]),
    "pow_scalar": lambda m, x, y, i: x ** 2,
    "rpow": lambda m, x, y, i: 2 ** x,
    "max_dim": lambda m, x, y, i: x.max(1)[0],
}


@pytest.mark.parametrize("case", list(HOOKED))
def test_post_hook_sees_and_returns_one_gradient_per_slot(case):
    """A node's post hook gets one grad_input per differentiable input; what it returns
    (here each doubled) goes to those inputs."""
    res = []
    for out, x, y in _both(HOOKED[case]):
        seen = []

        def hook(gi, go, seen=seen):
            seen.append(len(gi))
            return tuple(None if g is None else g * 2 for g in gi)

        out.grad_fn.register_hook(hook)
        out.sum().backward()
        res.append((seen, [None if v.grad is None else v.grad.detach().numpy()
                           for v in (x, y)]))
    (tseen, tgrads), (rseen, rgrads) = res
    assert rseen == tseen
    for r, t in zip(rgrads, tgrads):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(r, t)


@pytest.mark.parametrize("case", ["gather", "where", "where_scalar_other", "rpow",
                                  "pow_scalar", "scatter_value"])
def test_calling_a_node_returns_one_gradient_per_slot(case):
    (t, _, _), (r, _, _) = _both(CASES[case])
    tg = t.grad_fn(torch.ones_like(t))
    rg = r.grad_fn(R.ones_like(r))
    tg, rg = (tg if isinstance(tg, tuple) else (tg,)), (rg if isinstance(rg, tuple) else (rg,))
    assert len(rg) == len(tg)
    for a, b in zip(rg, tg):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())


def test_anomaly_numbers_the_output_by_slot():
    msgs = []
    for out, _, _ in _both(lambda m, x, y, i: m.where(x > 0.5, x, y)):
        m = torch if isinstance(out, torch.Tensor) else R
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as e:
                    out.backward(m.full(tuple(out.shape), float("nan"), dtype=m.float64))
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[1] == msgs[0] == ("Function 'WhereBackward0' returned nan values in its 0th "
                                  "output.")


NOT_IMPLEMENTED = {
    "remainder_rscalar": (lambda m, x, y, i: 2 % (x + 1), "remainder"),
    "remainder_fn_rscalar": (lambda m, x, y, i: m.remainder(2.0, x + 1), "remainder"),
    "floor_divide_scalar": (lambda m, x, y, i: x // 2, "floor_divide"),
    "floor_divide_rscalar": (lambda m, x, y, i: 2 // (x + 1), "floor_divide"),
    "floor_divide_tensor": (lambda m, x, y, i: x // (y + 1), "floor_divide"),
    "scatter_reduce": (lambda m, x, y, i: x.scatter(1, i, y, reduce="add"), "scatter"),
    "scatter_value_reduce": (lambda m, x, y, i: x.scatter(1, i, 2.0, reduce="add"), "scatter"),
}


@pytest.mark.parametrize("case", list(NOT_IMPLEMENTED))
def test_no_derivative_raises_as_torch(case):
    fn, aten = NOT_IMPLEMENTED[case]
    msg = f"derivative for aten::{aten} is not implemented"
    for out, _, _ in _both(fn):
        assert out.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match=msg) as e:
            out.sum().backward()
        if not isinstance(out, torch.Tensor):  # ours adds how to get a gradient
            assert len(str(e.value)) > len(msg) + 20


@pytest.mark.parametrize("case", list(NOT_IMPLEMENTED))
def test_no_forward_derivative_raises_as_torch(case):
    fn, aten = NOT_IMPLEMENTED[case]
    msg = f"Trying to use forward AD with aten::{aten} that does not support it"
    g = np.random.default_rng(1)
    xv, yv = g.random((3, 4)), g.random((3, 4))
    for m in (torch, R):
        fw = m.autograd.forward_ad
        with fw.dual_level(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = fw.make_dual(m.tensor(xv), m.ones(3, 4, dtype=m.float64))
            with pytest.raises(NotImplementedError, match=msg):
                fn(m, x, m.tensor(yv), m.tensor([[0, 1], [2, 2], [3, 0]]))


GRADS = ["pow_scalar", "pow_half", "pow_tensor", "pow_0d_exponent", "pow_0d_base", "rpow",
         "square", "float_power_rscalar", "float_power_tensor", "rsub", "sub_fn_number_first",
         "remainder_scalar", "remainder_tensor", "fmod_scalar", "fmod_tensor", "fill_",
         "fill_tensor_", "scatter_value", "scatter_", "pow_", "remainder_", "where_mixed_dtypes",
         "sort_0d", "gather", "where_scalar_input"]


@pytest.mark.parametrize("case", GRADS)
def test_gradients_and_tangents_match_torch(case):
    """Gradients of the overloads (backward and forward mode) are those of torch."""
    g = np.random.default_rng(2)
    xv, yv = g.random((3, 4)) + 0.5, g.random((3, 4)) + 0.5
    tv = g.standard_normal((3, 4))
    iv = np.array([[0, 1], [2, 2], [3, 0]])
    res = []
    for m in (torch, R):
        x = m.tensor(xv, requires_grad=True)
        y = m.tensor(yv, requires_grad=True)
        out = CASES[case](m, x, y, m.tensor(iv))
        out.backward(m.ones_like(out))
        grads = [None if v.grad is None else v.grad.numpy() for v in (x, y)]
        fw = m.autograd.forward_ad
        with fw.dual_level():
            xd = fw.make_dual(m.tensor(xv), m.tensor(tv))
            tan = fw.unpack_dual(CASES[case](m, xd, m.tensor(yv), m.tensor(iv))).tangent
        res.append((grads, None if tan is None else tan.numpy()))
    (tg, tt), (rg, rt) = res
    for r, t in zip(rg, tg):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)
    assert (rt is None) == (tt is None)
    if tt is not None:
        np.testing.assert_allclose(rt, tt, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("expr", ["x % 2", "fmod(x, 2)", "x.clone().fill_(2)", "x ** 2",
                                  "2 ** x", "1.5 - x"])
def test_backward_twice_as_torch(expr):
    """Nodes that saved nothing (RemainderBackward0, FmodBackward0, FillBackward2,
    RsubBackward1) may run twice without retain_graph; the others raise, as in torch."""
    outcome = []
    for m in (torch, R):
        x = m.ones(3, dtype=m.float64, requires_grad=True)
        out = eval(expr, {"x": x, "fmod": m.fmod}).sum()
        out.backward()
        try:
            out.backward()
            outcome.append("ok")
        except RuntimeError as e:
            outcome.append(str(e)[:40])
    assert outcome[1] == outcome[0]
