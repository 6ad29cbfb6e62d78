"""Engine semantics the differential fuzzer found different from torch, each against torch:
what a leaf's .grad becomes, which nodes run (and free what they saved) when a backward
is given inputs, which nodes may run twice, and autograd.grad's results."""

from __future__ import annotations

import warnings

import pytest

from _autograd_compare import same, same_error


def _grad_state(g):
    return None if g is None else (g, g.requires_grad, g.grad_fn is not None)


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_under_create_graph(create_graph):
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([[3.0]], requires_grad=True)
        gx, gy = m.autograd.grad((x * x).sum(), [x, y], create_graph=create_graph,
                                 materialize_grads=True)
        return gx, gy, gy.is_leaf
    same(f)


def test_plain_backward_adds_in_place_into_a_grad_with_a_graph():
    # PyTorch's AccumulateGrad: without create_graph, `variable_grad += new_grad` under
    # no_grad, so a .grad made by create_graph keeps its grad_fn and takes the values
    def f(m):
        x = m.tensor([1.29, -0.5], dtype=m.float64, requires_grad=True)
        (x.norm() ** 2).backward(create_graph=True)
        first = x.grad
        (x * m.tensor([0.5, 2.0], dtype=m.float64)).sum().backward()
        return x.grad, x.grad is first, x.grad.grad_fn is not None, x.grad._version
    same(f)


def test_create_graph_backward_sums_out_of_place():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        (x ** 2).sum().backward(create_graph=True)
        return x.grad, x.grad is first, m.autograd.grad(x.grad.sum(), x)[0]
    same(f)


def test_leaf_that_stopped_requiring_grad_gets_no_gradient():
    def f(m):
        x = m.tensor([[1.4, -0.5, 0.9]], requires_grad=True)
        y = x.expm1()
        x.requires_grad_(False)
        y.backward(m.ones_like(y))
        return x.grad
    same(f)


def test_reading_grad_of_a_stale_multi_output_view_returns_none():
    def f(m):
        x = m.tensor([[[1.5], [0.0]]], requires_grad=True)
        piece = (x * 2).split(1, -3)[0]
        with m.no_grad():
            piece.sin_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return piece.grad
    same(f)


@pytest.mark.parametrize("twin", ["flatten", "to", "same"])
def test_the_same_tensor_asked_for_twice(twin):
    # x.flatten(2) of a 3-D tensor and x.to(x.dtype) return x itself
    def f(m):
        x = m.tensor([[[1.0, 2.0, 3.0]]], requires_grad=True)
        h = (x * 3).exp()
        other = {"flatten": h.flatten(2), "to": h.to(m.float32), "same": h}[twin]
        assert other is h
        leaf_other = {"flatten": x.flatten(2), "to": x.to(m.float32), "same": x}[twin]
        return (m.autograd.grad((h * h).sum(), [h, other], retain_graph=True),
                m.autograd.grad((h * h).sum(), [x, leaf_other]))
    same(f)


def test_autograd_grad_does_not_run_the_node_of_a_non_leaf_input():
    # the input's own node only captures its gradient: it does not run, so it keeps what
    # it saved and a later backward through it works without retain_graph
    def f(m):
        x = m.tensor([[-2.0, 1.0, 0.84]], dtype=m.float64, requires_grad=True)
        r = x.sqrt()
        (g,) = m.autograd.grad((r * 2).sum(), [r])
        (r * 3).sum().backward()
        return g, x.grad
    same(f)


def test_backward_with_unrelated_inputs_frees_nothing():
    def f(m):
        x = m.tensor([[0.5]], requires_grad=True)
        p = (x / m.tensor([[-0.47], [-0.73]])).prod()
        other = m.tensor([1.0], requires_grad=True)
        p.backward(inputs=[other])
        p.backward()
        return x.grad, other.grad
    same(f)


def test_backward_with_non_leaf_inputs_runs_its_node():
    # backward(inputs=[t]) runs t's grad_fn (PyTorch retains t's grad and frees the node)
    def f(m):
        x = m.tensor([2.0, 3.0], requires_grad=True)
        t = x.exp()
        (t * t).sum().backward(inputs=[t], retain_graph=True)
        first = t.grad.clone()
        t.sum().backward()
        return first, t.grad, x.grad
    same(f)


@pytest.mark.parametrize("op", ["remainder", "fmod", "lerp", "add_alpha", "clamp"])
def test_nodes_that_save_no_tensor_may_run_twice(op):
    def f(m):
        x = m.tensor([[0.17, 1.97], [-0.23, -1.74]], dtype=m.float64, requires_grad=True)
        y = {"remainder": lambda: m.remainder(x, 1), "fmod": lambda: m.fmod(x, 0.5),
             "lerp": lambda: m.lerp(x, x.detach() * 2, 0.3),
             "add_alpha": lambda: m.add(x, x, alpha=2),
             "clamp": lambda: x.clamp(-1.0, 1.0)}[op]()
        y.sum().backward()
        y.sum().backward()  # no saved tensor: allowed without retain_graph
        return x.grad, y.grad_fn.name()
    if op == "clamp":  # ClampBackward1 saves self in torch: the second backward raises
        return same_error(f)
    same(f)


@pytest.mark.parametrize("op", ["mul_scalar", "copy_slices", "index_put", "masked_setitem"])
def test_nodes_that_torch_frees_refuse_a_second_run(op):
    def f(m):
        x = m.tensor(1.93, requires_grad=True)
        v = m.zeros(3, dtype=m.float64)
        if op == "mul_scalar":
            v = x * 2.0
        elif op == "copy_slices":
            v[-1] = x
        elif op == "index_put":
            v[m.tensor([0, 2])] = x.double()
        else:
            v = x.expand(3).clone()
            v[v > 0] = 0
        v.sum().backward()
        v.sum().backward()
    same_error(f)


def test_lerp_nodes_are_torch_overloads():
    def f(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 5.0], requires_grad=True)
        s = m.lerp(a, b, 0.25)
        t = m.lerp(a, b, m.tensor(0.25, requires_grad=True))
        gs = m.autograd.grad(s.sum(), [a, b], create_graph=True)
        return (s.grad_fn.name(), t.grad_fn.name(), s, t, gs,
                [n is None or n[0].name() for n in s.grad_fn.next_functions])
    same(f)


@pytest.mark.parametrize("form", ["function", "operator"])
def test_number_modulo_tensor_has_no_derivative(form):
    def f(m):
        x = m.tensor([[1.5], [-1.7]], requires_grad=True)
        y = m.remainder(0.5, x) if form == "function" else 0.5 % x
        y.sum().backward()
    same_error(f)


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_and_std_save_their_input(fn):
    # one node (VarBackward0 / StdBackward0) that saved the input: a later in-place write
    # into it is caught at backward, as in PyTorch
    def f(m):
        x = m.tensor([[0.23, -0.74, 0.82], [-0.06, -0.03, 0.19]], dtype=m.float64,
                     requires_grad=True)
        v = x * 2
        s = getattr(v, fn)()
        v.masked_fill_(v > 0, -1.5)
        s.backward()
    _same_version_error(f)


@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"correction": 0},
                                {"dim": 1, "correction": 3}, {"correction": 6},
                                {"dim": 1, "correction": 2}, {"dim": (0, 1)}])
def test_var_and_std_first_and_second_derivatives(fn, kw):
    # incl. dof <= 0 (nan where x equals the mean, inf elsewhere) and a constant row
    def f(m):
        x = m.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(x, fn)(**kw)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        gg = m.autograd.grad(g.sum(), x)[0] if g.requires_grad else None
        return y, g, gg, y.grad_fn.name(), [n[0].name() for n in y.grad_fn.next_functions]
    same(f)


@pytest.mark.parametrize("exponent", ["tensor", "number"])
def test_pow_saves_its_result_when_the_exponent_is_a_tensor(exponent):
    # PowBackward1 saves the result even if the exponent needs no gradient; PowBackward0
    # (a number exponent) does not, so an in-place op on x ** 2 stays valid
    def f(m):
        x = m.tensor([1.7, 0.9, 1.2], requires_grad=True)
        e = m.tensor([-1.6, -0.3, 0.8]) if exponent == "tensor" else 2
        y = x ** e
        y.view(-1).masked_fill_(y > 1, 0.0)
        y.sum().backward()
        return x.grad
    if exponent == "tensor":
        return _same_version_error(f)
    same(f)


def _same_version_error(f):
    # the "output 0 of X" names differ where retrograd's graph does (MaskedFill is a
    # where here, pow one node for torch's three overloads):
    # tests/autograd/test_grad_fn_structure.py
    err = same_error(f, prefix_only=False)
    assert str(err).startswith("one of the variables needed for gradient computation has "
                               "been modified by an inplace operation"), err


def test_leaf_moved_into_the_graph_interior():
    def f(m):
        x = m.tensor([1.2, -0.3], dtype=m.float64, requires_grad=True)
        y = (x * x).sum()
        x.requires_grad_(False)
        x.copy_(m.tensor([-0.1, 0.4], dtype=m.float64, requires_grad=True))
        y.backward()
    same_error(f)


@pytest.mark.parametrize("shape_b", [(3,), (3, 2)])
def test_matmul_saves_an_operand_only_for_the_others_gradient(shape_b):
    # (x @ w).backward() after an in-place write into x is fine when w needs no grad
    def f(m):
        x = m.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
        v = x * 1.5
        w = m.ones(shape_b)
        y = v @ w
        v.square_()
        y.sum().backward()
        return x.grad
    same(f)


def test_nan_to_num_is_one_node_saving_its_input():
    def f(m):
        x = m.tensor([float("nan"), float("inf"), -float("inf"), 1.5], requires_grad=True)
        y = x.nan_to_num(posinf=7.0)
        (g,) = m.autograd.grad((y * y).sum(), x)
        v = x * 1
        z = v.nan_to_num()
        v.abs_()
        return y, g, y.grad_fn.name(), z.grad_fn.name()
    same(f)


@pytest.mark.parametrize("fn", ["max", "min", "median"])
def test_full_reductions_share_a_nan_gradient_with_the_chosen_elements_only(fn):
    # evenly_distribute_backward writes g / count into zeros: a nan g stays there
    def f(m):
        x = m.tensor([[0.5, 0.3, -1.2], [-1.4, 1.1, 1.1]], requires_grad=True)
        y = getattr(x, fn)().asin()  # asin(1.1): nan, so its gradient is nan
        w = m.tensor([[-1.0, -float("inf")], [float("nan"), float("inf")]], requires_grad=True)
        z = getattr(-w, fn)()
        return m.autograd.grad(y, x)[0], m.autograd.grad(z, w)[0]
    same(f)


@pytest.mark.parametrize("n", [5, 20000, 400000])
def test_relu_passes_the_gradient_at_nan(n):
    # threshold_backward: 0 where y <= 0, else g (a nan output keeps its gradient)
    def f(m):
        x = m.arange(n, dtype=m.float32) / n - 0.5  # (exact in both libraries)
        x[::3] = float("nan")
        x.requires_grad_()
        y = m.nn.functional.relu(x)
        (g,) = m.autograd.grad(y, x, m.arange(n, dtype=m.float32).flip(0) - n / 3)
        return g
    same(f)


def test_prod_of_a_0d_tensor_passes_the_gradient():
    def f(m):
        x = m.tensor(-4.0, dtype=m.float64, requires_grad=True)
        v = x.sqrt()  # nan
        (g,) = m.autograd.grad(m.maximum(m.tensor(-0.9, dtype=m.float64), v.prod()), v)
        return g
    same(f)


def test_a_saved_python_number_is_freed_like_a_tensor():
    # x / 3 saves 3 as a wrapped-number tensor in torch (DivBackward0): freed after backward
    def f(m):
        x = m.tensor([2.0, -0.66], dtype=m.float64, requires_grad=True)
        v = x / 3
        v.sum().backward()
        v.sum().backward()
    same_error(f)


@pytest.mark.parametrize("key", ["ellipsis", "all", "0:n", "int", "slice", "index"])
@pytest.mark.parametrize("value", ["number", "0-d", "1-elem", "full"])
def test_setitem_records_torchs_node_and_frees_what_torch_frees(key, value):
    # Note [Setitem nodes]: FillBackward3 / CopyBackwards into the tensor itself (may run
    # again), IndexPutBackward0 for tensor indices, CopySlices into a view (both freed)
    def f(m):
        x = m.ones(3, requires_grad=True)
        k = {"ellipsis": ..., "all": slice(None), "0:n": slice(0, 3), "int": 0,
             "slice": slice(0, 2), "index": m.tensor([0, 2])}[key]
        n = 1 if key == "int" else 2 if key in ("slice", "index") else 3
        w = m.tensor([2.0, 3.0, 4.0][:n], requires_grad=True)
        v = {"number": 5.0, "0-d": w[0], "1-elem": w[:1], "full": w}[value]
        y = x * 1
        try:
            y[k] = v
        except RuntimeError as e:  # a shape torch refuses too (compared below)
            return type(e).__name__
        names = y.grad_fn.name()  # (a broadcast value's expand node: test_grad_fn_structure)
        y.sum().backward()
        try:
            y.sum().backward()
            again = "ran again"
        except RuntimeError:
            again = "freed"
        return names, again, x.grad, w.grad
    same(f)


def test_copy_slices_takes_a_transposed_gradient():
    # the view replayed on the gradient (flatten) needs the base's layout, not g's
    def f(m):
        x = m.ones((2, 2), requires_grad=True)
        w = m.tensor([[-0.578, 0.337]], dtype=m.float64, requires_grad=True)
        v = x / w
        v.flatten(-2)[3:4] = 3
        v.permute((1, 0)).backward(m.ones(2, 2, dtype=m.float64))
        return x.grad, w.grad
    same(f)


@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_cumulative_ops_of_a_0d_tensor_are_not_views(fn):
    def f(m):
        x = m.tensor(1.33, dtype=m.float64, requires_grad=True)
        v = getattr(x, fn)(-1)
        r = v.reshape(-1)
        v.fill_(3)  # an in-place op on a plain result: FillBackward, nothing to free
        (g,) = m.autograd.grad((r * 2).sum(), [x], allow_unused=True)
        (r * 3).sum().backward()
        return v.grad_fn.name(), r, g, x.grad
    if fn == "cumprod":  # CumprodBackward0 saved its result, which fill_ overwrote
        return same_error(f)
    same(f)


@pytest.mark.parametrize("act", ["leaky_relu", "hardtanh", "relu6", "elu"])
@pytest.mark.parametrize("inplace", [False, True])
def test_mask_activations_second_derivatives_and_in_place_nodes(act, inplace):
    # the node saves the input (the output, in place) and its rule is a fused backward op
    # whose derivative w.r.t. that tensor is zero: second derivatives are zeros, not
    # "does not require grad"; at nan hardtanh's gradient is 0 and leaky_relu's the slope
    def f(m):
        F = m.nn.functional
        fn = {"leaky_relu": lambda t, **k: F.leaky_relu(t, 0.1, **k), "hardtanh": F.hardtanh,
              "relu6": F.relu6, "elu": F.elu}[act]
        x = m.tensor([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, float("nan")], dtype=m.float64,
                     requires_grad=True)
        w = x * 1
        y = fn(w, inplace=True) if inplace else fn(w)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        w = x * 1
        z = fn(w, inplace=True) if inplace else fn(w)
        z.sum().backward()  # a second run without retain_graph: the saved tensor is freed
        try:
            z.sum().backward()
            again = "ran again"
        except RuntimeError:
            again = "freed"
        return y.grad_fn.name(), y, g, gg, again
    same(f)


@pytest.mark.parametrize("view", ["flatten", "permute", "ellipsis", "as_strided"])
def test_a_view_made_before_its_base_required_grad_has_no_accumulator(view):
    # it requires grad through its base, has no grad_fn until an in-place write, and a
    # gradient reaching it goes nowhere (PyTorch's invalid edge): its .grad stays None
    def f(m):
        x = m.tensor([[0.65, -1.03, -1.92], [0.5, 2.0, -0.1]], dtype=m.float64)
        v = {"flatten": lambda: x.flatten(), "permute": lambda: x.permute(1, 0),
             "ellipsis": lambda: x[...], "as_strided": lambda: x.as_strided((2, 2), (1, 1))}[view]()
        x.requires_grad_()
        y = (v * 2).sum()
        edges = [n is None for n, _ in y.grad_fn.next_functions[0][0].next_functions]
        y.backward()
        return v.requires_grad, v.is_leaf, edges, v.grad, x.grad
    same(f)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_remainder_zero_results_keep_the_dividends_sign(dtype):
    # PyTorch's kernel is fmod plus b where the signs differ: 0.0 % -1.5 is 0.0, and the
    # gradient through a log of it is +inf (NumPy's remainder gives -0.0, so -inf)
    def f(m):
        a = m.tensor([0.0, -0.0, 3.0, -3.0, 1.5, -1.5], dtype=getattr(m, dtype), requires_grad=True)
        b = m.tensor([-1.44, 1.44, -1.5, 1.5, -1.5, 1.5], dtype=getattr(m, dtype))
        r = m.remainder(a, b)
        (g,) = m.autograd.grad(r.log().sum(), a)
        return r, 1 / r, g  # (1 / r: the sign of a zero as +-inf)
    same(f)


def test_remainder_of_0d_tensors():
    def f(m):
        x = m.tensor(1.5, requires_grad=True)
        return m.remainder(x, x), m.remainder(0, x), m.remainder(x, 0.5)
    same(f)


def test_number_divided_by_a_tensor_is_a_reciprocal_multiply():
    # PyTorch: 3 / x is reciprocal(x) * 3: the node saves the reciprocal, not x, so an
    # in-place write into x afterwards is fine; integers give the default float dtype
    def f(m):
        x = m.tensor([[-1.234], [0.595]], requires_grad=True)
        v = x * 1
        y = 3 / v
        with m.no_grad():
            v.div_(-2)
        (g,) = m.autograd.grad(y.sum(), x)
        nexts = [n and n[0] and n[0].name() for n in y.grad_fn.next_functions]
        return y, g, y.grad_fn.name(), nexts, 1 / m.tensor([2, 4]), 2 / m.tensor([True])
    same(f)


def test_backward_from_a_view_that_requires_grad_only_through_its_base():
    def f(m):
        x = m.tensor([[1.17, -1.93], [1.0, -1.0]], dtype=m.float64)
        v = x.view(-1)
        x.requires_grad_()
        v.backward(m.ones_like(v))
    same_error(f)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_tensor_is_one_node(fn):
    # the double-backward graph reads the output itself, so the gradient with respect
    # to that output is found (a reshape around the op hid it)
    def f(m):
        x = m.tensor(1.338, requires_grad=True)
        y = getattr(m, fn)(x, -1)
        (g,) = m.autograd.grad(y.sum(), [x], create_graph=True)
        return y, y.grad_fn.name(), m.autograd.grad(g.sum(), [g, x, y], allow_unused=True)
    same(f)
