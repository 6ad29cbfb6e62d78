"""Custom autograd.Function against PyTorch: ctx API, node identity, checks on backward.

Every scenario runs with torch and with retrograd (``same``/``same_error`` in
_autograd_compare.py). Also: the seed page's MyFunction example, and the Huber-loss
Function (hand-written forward and backward) through gradcheck and gradgradcheck.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
import warnings

import numpy as np
import pytest

import retrograd
from _autograd_compare import assert_same, same, same_error, tensor

torch = pytest.importorskip("torch")

X = [1.5, -0.5, 2.0]


def _x(m, rg=True, dtype=None):
    return tensor(m, X, requires_grad=rg, dtype=dtype or m.float32)


def square_fn(m):
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


# ----------------------------------------------------------------------------------
# the basics


def test_forward_backward_and_node_identity():
    def f(m):
        Square = square_fn(m)
        x = _x(m)
        y = Square.apply(x)
        node = y.grad_fn
        info = (node.name(), type(node.next_functions[0][0]).__name__,
                node.next_functions[0][1], y.requires_grad, y.is_leaf,
                isinstance(node, m.autograd.graph.Node))
        y.sum().backward()
        return y, x.grad, info

    r = same(f)
    assert r[2][0] == "SquareBackward"


def test_ctx_is_the_node_and_keeps_attributes():
    def f(m):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                ctx.save_for_backward(x)
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = _x(m)
        y = Scale.apply(x, 3.0)
        (saved,) = y.grad_fn.saved_tensors
        return y.grad_fn.k, saved, saved is x, y.grad_fn.needs_input_grad

    same(f)


def test_setup_context_form_and_keywords():
    def f(m):
        class MulAdd(m.autograd.Function):
            @staticmethod
            def forward(x, y, alpha=2.0):
                return x * y + alpha

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, alpha = inputs
                ctx.save_for_backward(x, y)
                ctx.alpha = alpha

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x, None

        x, y = _x(m), tensor(m, [0.5, 1.0, -1.0], requires_grad=True)
        a = MulAdd.apply(x, y)
        b = MulAdd.apply(x, y=y, alpha=5.0)
        (a + b).sum().backward()
        return a, b, x.grad, y.grad, a.grad_fn.needs_input_grad

    same(f)


def test_keyword_arguments_without_setup_context():
    def f(m):
        seen = []

        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                seen.append(ctx.needs_input_grad)
                return x * k

            @staticmethod
            def backward(ctx, g):
                return (g * 3.0,) + (None,) * (len(ctx.needs_input_grad) - 1)

        x = _x(m)
        F.apply(x, k=3.0).sum().backward()
        F.apply(x).sum().backward()
        with m.no_grad():
            z = F.apply(x)
        return seen, x.grad, z.requires_grad, z.grad_fn is None

    same(f)


def test_non_tensor_inputs_and_outputs_and_next_functions():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, name):
                return x * k, 3, name

            @staticmethod
            def backward(ctx, g, g_int, g_str):
                return g * 2.0, None, None

        x = _x(m)
        y, n, s = F.apply(x, 2.0, "a")
        nf = y.grad_fn.next_functions
        y.sum().backward()
        return y, n, s, len(nf), x.grad

    same(f)


def test_multiple_outputs_materialized_grads():
    def f(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1.clone(), g2.clone()))
                return g1 * 2 + g2 * 3

        x = _x(m)
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad, a.grad_fn is b.grad_fn, b.output_nr

    same(f)


def test_set_materialize_grads_false_passes_none():
    def f(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None))
                return g1 * 2 if g1 is not None else g2 * 3

        x = _x(m)
        a, b = Two.apply(x)
        b.sum().backward()
        return seen, x.grad

    same(f)


def test_mark_non_differentiable():
    def f(m):
        seen = []

        class SortVals(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                (i,) = ctx.saved_tensors
                seen.append(gi)
                return m.zeros_like(gv).scatter(0, i, gv)

        x = _x(m)
        v, i = SortVals.apply(x)
        (v * tensor(m, [1.0, 2.0, 3.0])).sum().backward()
        return v, i, i.requires_grad, seen, x.grad

    same(f)


def test_mark_dirty_in_place():
    def f(m):
        class AddOne_(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 1.0

        leaf = _x(m)
        a = leaf * 2
        v0 = a._version
        b = AddOne_.apply(a)
        info = (b is a, a._version - v0, a.grad_fn.name(),
                a.grad_fn.next_functions[0][0].name())
        (b * b).sum().backward()
        return info, b, leaf.grad

    same(f)


def test_mark_dirty_bumps_version_and_invalidates_saved():
    def f(m):
        class Touch(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        a = _x(m).clone()
        b = a * a  # saves a
        Touch.apply(a)
        b.sum().backward()

    same_error(f)


def test_mark_dirty_on_leaf_errors():
    def f(m):
        class AddOne_(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        AddOne_.apply(_x(m))

    same_error(f)


def test_mark_dirty_on_view_rebases_base():
    def f(m):
        class Double_(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        leaf = _x(m)
        base = leaf * 1.0
        view = base[1:]
        Double_.apply(view)
        (base * tensor(m, [1.0, 2.0, 3.0])).sum().backward()
        return base, leaf.grad

    same(f)


def test_returning_an_input_gives_a_new_view():
    def f(m):
        class Id(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = _x(m)
        y = Id.apply(x)
        info = (y is x, y.grad_fn.name(), y._is_view())
        y.sum().backward()
        return info, x.grad

    same(f)


def test_inplace_on_a_view_output_is_refused():
    def f(m):
        class Id(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5

        class First(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[0]

            @staticmethod
            def backward(ctx, g):
                return m.zeros(3).index_put((m.tensor([0]),), g)

        out = []
        for fn in (Id, First):
            try:
                fn.apply(_x(m) * 1).mul_(2)
            except RuntimeError as e:
                out.append(str(e))
        try:
            Id.apply(_x(m) * 1)[1:].mul_(2)  # a view of such a view
        except RuntimeError as e:
            out.append(str(e))
        with m.no_grad():
            Id.apply(_x(m) * 1).mul_(2)  # outside grad mode: allowed
        y = Id.apply(_x(m) * 1).clone()
        y.mul_(2)  # the fix the message suggests
        return out

    same(f)


def test_saved_output_and_double_backward():
    def f(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        x = _x(m, dtype=m.float64)
        y = Exp.apply(x)
        (saved,) = y.grad_fn.saved_tensors
        info = (saved.requires_grad, saved.grad_fn is y.grad_fn)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return info, g, gg

    same(f)


def test_saved_intermediate_is_not_differentiable():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                t = x.exp()
                ctx.save_for_backward(t)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                (t,) = ctx.saved_tensors
                return g * 2 * t

        x = _x(m)
        y = F.apply(x)
        (t,) = y.grad_fn.saved_tensors
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return t.requires_grad, g, g.requires_grad

    same(f)


def test_saved_tensors_version_check():
    def f(m):
        Square = square_fn(m)
        a = _x(m).clone()
        y = Square.apply(a)
        a.mul_(2)
        y.sum().backward()

    e = same_error(f)
    assert "SquareBackward" in str(e) and "out-of-place" in str(e)


def test_saved_tensors_freed_after_backward():
    def f(m):
        Square = square_fn(m)
        y = Square.apply(_x(m))
        y.sum().backward()
        return y.grad_fn.saved_tensors

    same_error(f)


def test_save_for_backward_none_and_non_tensor():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, nothing = ctx.saved_tensors
                return g * 2 + 0 * x

        y = F.apply(_x(m))
        return y.grad_fn.saved_tensors[1]

    same(f)

    def g(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3)
                return x * 2

        F.apply(_x(m))

    same_error(g)


def test_once_differentiable():
    def f(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        x = _x(m)
        (g,) = m.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
        v = m.ones(3, requires_grad=True)
        (g2,) = m.autograd.grad(Exp.apply(x), x, v, create_graph=True)
        plain = m.autograd.grad(Exp.apply(x).sum(), x)[0]
        return g.requires_grad, g2.requires_grad, g2.grad_fn.name(), plain

    same(f)

    def twice(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.exp()

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx, g):
                return g * 2

        x = _x(m)
        v = m.ones(3, requires_grad=True)
        (g,) = m.autograd.grad(Exp.apply(x), x, v, create_graph=True)
        g.sum().backward()

    same_error(twice)


def test_vjp_alias_and_both_defined_error():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

        x = _x(m)
        F.apply(x).sum().backward()
        return x.grad

    same(f)

    def both(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        F.apply(_x(m)).sum().backward()

    same_error(both)


def test_missing_forward_and_backward():
    def no_backward(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        F.apply(_x(m)).sum().backward()

    same_error(no_backward)

    def no_forward(m):
        class F(m.autograd.Function):
            pass

        F.apply(_x(m))

    same_error(no_forward)


def test_legacy_instance_call_errors():
    def f(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            square_fn(m)()(_x(m))

    same_error(f)


def test_function_node_hooks_and_name_like_builtin_nodes():
    def f(m):
        Square = square_fn(m)
        log = []
        x = _x(m)
        y = Square.apply(x)
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].clone())))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].clone())))
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return log, x.grad, "SquareBackward object" in repr(y.grad_fn)

    same(f)


def test_node_edges_and_hook_grad_inputs_cover_tensor_arguments_only():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                return x * k * y

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, g * 3

        x, y = _x(m), _x(m, rg=False)
        out = F.apply(x, 2.0, y)
        seen = []
        out.grad_fn.register_hook(lambda gi, go: seen.append((len(gi), gi[0], len(go))))
        nf = [(type(n).__name__ if n is not None else None, k)
              for n, k in out.grad_fn.next_functions]
        out.sum().backward()
        return nf, seen, x.grad

    same(f)


# ----------------------------------------------------------------------------------
# checks on what backward returns (PyTorch's errors, plus the fix)


@pytest.mark.parametrize("case", ["too_many", "too_few", "bad_shape", "scalar_for_vector",
                                  "grad_for_non_tensor", "numpy"])
def test_backward_return_checks(case):
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                return x * y * k

            @staticmethod
            def backward(ctx, g):
                if case == "too_many":
                    return g, g, None, g
                if case == "too_few":
                    return (g,)
                if case == "bad_shape":
                    return g[:2], g, None
                if case == "scalar_for_vector":
                    return g.sum(), g, None
                if case == "grad_for_non_tensor":
                    return g, g, g
                return np.ones(3), g, None

        x, y = _x(m), _x(m)
        F.apply(x, y, 2.0).sum().backward()

    e = same_error(f)
    if case in ("too_many", "too_few"):
        assert "FBackward" in str(e) and "one gradient per input" in str(e)


def test_extra_none_gradients_are_allowed_and_dtype_is_cast():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.double() * 2, None, None

        x = _x(m)
        F.apply(x).sum().backward()
        return x.grad

    same(f)


def test_broadcast_gradient_is_summed_back():
    def f(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.expand(2, 3) * 2

        x = _x(m)
        F.apply(x).sum().backward()
        return x.grad

    same(f)


def test_detached_gradient_under_create_graph_raises():
    """A backward that leaves the graph (NumPy, .detach()) would give silently wrong second
    derivatives; retrograd raises instead (PyTorch gives a wrong gradgradcheck later)."""

    class Cube(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return retrograd.tensor(3 * x.detach().numpy() ** 2 * g.detach().numpy())

    x = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64, requires_grad=True)
    Cube.apply(x).sum().backward()  # first order: fine
    assert x.grad.tolist() == [3.0, 12.0]
    with pytest.raises(RuntimeError, match="not connected to the graph"):
        retrograd.autograd.gradgradcheck(Cube.apply, (x,))


# ----------------------------------------------------------------------------------
# the acceptance examples


class Huber(retrograd.autograd.Function):
    """Huber loss, hand-written forward and backward (backward in Tensor ops)."""

    @staticmethod
    def forward(ctx, pred, target, delta=1.0):
        r = pred - target
        small = r.abs() <= delta
        ctx.save_for_backward(pred, target)
        ctx.delta = delta
        return retrograd.where(small, 0.5 * r * r, delta * (r.abs() - 0.5 * delta)).mean()

    @staticmethod
    def backward(ctx, g):
        pred, target = ctx.saved_tensors
        r = pred - target
        d = r.clamp(-ctx.delta, ctx.delta) / r.numel()
        return g * d, -g * d, None


def test_huber_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(0)
    # residuals away from the kinks at +-delta
    pred = retrograd.tensor(rng.uniform(-3, 3, 6), requires_grad=True)
    target = retrograd.tensor(np.zeros(6), requires_grad=True)
    pred._data[np.abs(np.abs(pred._data) - 1) < 0.1] += 0.3
    assert retrograd.autograd.gradcheck(Huber.apply, (pred, target))
    assert retrograd.autograd.gradgradcheck(Huber.apply, (pred, target))
    # and it matches torch's huber_loss
    t = torch.nn.functional.huber_loss(torch.tensor(pred._data, requires_grad=True),
                                       torch.tensor(target._data))
    assert abs(Huber.apply(pred, target).item() - t.item()) < 1e-12


def test_huber_wrong_backward_fails_gradcheck():
    class BadHuber(Huber):
        @staticmethod
        def backward(ctx, g):
            pred, target = ctx.saved_tensors
            r = pred - target
            return g * r / r.numel(), -g * r / r.numel(), None  # forgot the clamp

    pred = retrograd.tensor([0.3, 2.5, -1.7], dtype=retrograd.float64, requires_grad=True)
    target = retrograd.zeros(3, dtype=retrograd.float64)
    from retrograd.autograd.gradcheck import GradcheckError

    with pytest.raises(GradcheckError,
                       match="Jacobian mismatch for output 0 with respect to input 0"):
        retrograd.autograd.gradcheck(BadHuber.apply, (pred, target))


SEED_MY_FUNCTION = """
import torch

class MyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # Forward pass implementation
        y = x.pow(2)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        # Backward pass implementation
        x, = ctx.saved_tensors
        grad_input = 2 * x * grad_output
        return grad_input

my_function = MyFunction.apply

x = torch.tensor([[1.5410, -0.2934], [-2.1788, 0.5684]], requires_grad=True)
y = my_function(x)

y.backward()
print(x.grad)
"""


def _run_seed(code: str, use_retrograd: bool):
    src = textwrap.dedent(code)
    if use_retrograd:
        src = re.sub(r"^import torch$", "import retrograd as torch", src, flags=re.M)
    out = io.StringIO()
    err = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(src, "<seed example>", "exec"), {"__name__": "__seed__"})
        except Exception as e:
            err = e
    return out.getvalue(), err


def test_seed_custom_function_example():
    """Page 000's MyFunction: y is (2, 2), so y.backward() raises PyTorch's error."""
    t_out, t_err = _run_seed(SEED_MY_FUNCTION, False)
    r_out, r_err = _run_seed(SEED_MY_FUNCTION, True)
    assert t_err is not None and r_err is not None
    assert type(r_err) is type(t_err)
    assert str(r_err).startswith(str(t_err).split(".")[0])
    assert r_out == t_out
    fixed = SEED_MY_FUNCTION.replace("y.backward()", "y.backward(torch.ones_like(y))")
    t_out, t_err = _run_seed(fixed, False)
    r_out, r_err = _run_seed(fixed, True)
    assert t_err is None and r_err is None
    assert r_out == t_out and "tensor([[ 3.0820, -0.5868]" in r_out


def test_function_node_matches_builtin_node_api():
    Square = square_fn(retrograd)
    x = _x(retrograd)
    y = Square.apply(x)
    z = x * x
    for attr in ("name", "register_hook", "register_prehook", "next_functions", "metadata"):
        assert hasattr(y.grad_fn, attr) and hasattr(z.grad_fn, attr)
    # one base class (each node name its own subclass, as in PyTorch)
    assert isinstance(y.grad_fn, retrograd.autograd.graph.Node)
    assert isinstance(z.grad_fn, retrograd.autograd.graph.Node)
    assert_same(y, z * 1.0, check_rg=True)
