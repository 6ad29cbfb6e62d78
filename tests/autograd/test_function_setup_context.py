"""autograd.Function in the setup_context form (forward without ctx), save_for_forward,
the jvp staticmethod, once_differentiable, and torch.func transforms over such
Functions; plus linearize, jvp(has_aux), grad over nested dicts and the other
torch.func names. Everything against torch.func."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R


def _functions(lib):
    """The same Functions in both libraries (setup_context form, and the old ctx form)."""

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(x, y, k=2.0):
            return x * y * k, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, k = inputs
            ctx.k = k
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y * ctx.k + g2, g1 * x * ctx.k + g2, None

        @staticmethod
        def jvp(ctx, tx, ty, _):
            x, y = ctx.saved_tensors
            return ctx.k * (tx * y + x * ty), tx + ty

    class Exp(lib.autograd.Function):  # backward in Tensor ops: twice differentiable
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

        @staticmethod
        def jvp(ctx, t):
            y, = ctx.saved_tensors
            return t * y

    class OnceExp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class OldStyle(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    class NonDiff(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, g2):
            return 2 * g

    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(x):
            x.mul_(2)
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_dirty(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    return dict(Two=Two, Exp=Exp, OnceExp=OnceExp, NoJvp=NoJvp, OldStyle=OldStyle,
                NonDiff=NonDiff, Dirty=Dirty)


_X = np.array([0.5, -1.0, 2.0])
_Y = np.array([1.5, 0.25, -0.75])

# name -> fn(lib, F, x, y) using the Functions F of lib; each is run in both libraries
CASES = {
    "grad": lambda lib, F, x, y: lib.func.grad(lambda a: F["Exp"].apply(a).sum())(x),
    "grad_of_grad": lambda lib, F, x, y: lib.func.grad(
        lambda a: lib.func.grad(lambda b: F["Exp"].apply(b).sum())(a).sum())(x),
    "grad_two_argnums": lambda lib, F, x, y: lib.func.grad(
        lambda a, b: sum(o.sum() for o in F["Two"].apply(a, b)), argnums=(0, 1))(x, y),
    "grad_keyword": lambda lib, F, x, y: lib.func.grad(
        lambda a, b: F["Two"].apply(a, b, k=3.0)[0].sum(), argnums=(0, 1))(x, y),
    "vjp": lambda lib, F, x, y: lib.func.vjp(lambda a, b: F["Two"].apply(a, b), x, y)[1](
        (lib.ones_like(x), 2 * lib.ones_like(x))),
    "jvp": lambda lib, F, x, y: lib.func.jvp(lambda a, b: F["Two"].apply(a, b), (x, y),
                                             (lib.ones_like(x), 2 * lib.ones_like(y))),
    "jacrev": lambda lib, F, x, y: lib.func.jacrev(lambda a: F["Two"].apply(a, y)[0])(x),
    "jacrev_jacrev": lambda lib, F, x, y: lib.func.jacrev(
        lib.func.jacrev(lambda a: F["Exp"].apply(a).sum()))(x),
    "jvp_of_grad": lambda lib, F, x, y: lib.func.jvp(
        lib.func.grad(lambda a: F["Two"].apply(a, a)[0].sum()), (x,), (lib.ones_like(x),)),
    "grad_of_jvp": lambda lib, F, x, y: lib.func.grad(lambda a: lib.func.jvp(
        F["Exp"].apply, (a,), (lib.ones_like(a),))[1].sum())(x),
    "once_grad": lambda lib, F, x, y: lib.func.grad(lambda a: F["OnceExp"].apply(a).sum())(x),
    "once_grad_of_grad": lambda lib, F, x, y: lib.func.grad(lambda a: lib.func.grad(
        lambda b: F["OnceExp"].apply(b).sum())(a).sum())(x),
    "nondiff_grad": lambda lib, F, x, y: lib.func.grad(lambda a: F["NonDiff"].apply(a)[0].sum())(x),
    "dirty_grad": lambda lib, F, x, y: lib.func.grad(
        lambda a: F["Dirty"].apply(a.clone()).sum())(x),
    "forward_ad": lambda lib, F, x, y: _forward_ad(lib, F, x, y),
    # refusals
    "old_style_grad": lambda lib, F, x, y: lib.func.grad(lambda a: F["OldStyle"].apply(a).sum())(x),
    "old_style_vjp": lambda lib, F, x, y: lib.func.vjp(F["OldStyle"].apply, x),
    "old_style_jvp": lambda lib, F, x, y: lib.func.jvp(F["OldStyle"].apply, (x,), (x,)),
    "old_style_jacrev": lambda lib, F, x, y: lib.func.jacrev(F["OldStyle"].apply)(x),
    "no_jvp_jvp": lambda lib, F, x, y: lib.func.jvp(F["NoJvp"].apply, (x,), (x,)),
    "nondiff_vjp": lambda lib, F, x, y: lib.func.vjp(F["NonDiff"].apply, x),
}


def _forward_ad(lib, F, x, y):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(x, lib.ones_like(x))
        a, b = F["Two"].apply(d, y)
        return fw.unpack_dual(a).tangent, fw.unpack_dual(b).tangent


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _leaves(x)]
    return [v]


@pytest.mark.parametrize("name", sorted(CASES))
def test_functions_under_transforms_match_torch(name):
    out = []
    for lib in (torch, R):
        F = _functions(lib)
        x = lib.tensor(_X, dtype=lib.float64)
        y = lib.tensor(_Y, dtype=lib.float64)
        try:
            out.append(CASES[name](lib, F, x, y))
        except Exception as e:
            out.append(e)
    t, r = out
    if isinstance(t, Exception):
        assert type(r) is type(t) or type(r).__name__ == type(t).__name__, (t, r)
        assert str(r).startswith(str(t)), (str(t), str(r))
        return
    assert not isinstance(r, Exception), r
    tl, rl = _leaves(t), _leaves(r)
    assert len(tl) == len(rl)
    for a, b in zip(tl, rl):
        if callable(a):
            continue
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12)


def test_old_style_function_still_works_outside_transforms():
    F = _functions(R)
    x = R.tensor(_X, requires_grad=True)
    F["OldStyle"].apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * _X)


def test_vmap_hooks_are_on_the_class():
    class WithRule(R.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    assert WithRule.generate_vmap_rule is True
    assert R.autograd.Function.generate_vmap_rule is False
    assert WithRule.vmap(None, (0,), R.ones(2))[1] == 0


# -- func names besides the transforms ---------------------------------------------

def test_torch_func_names_are_all_here_but_the_lead_s():
    missing = {n for n in dir(torch.func) if not n.startswith("_")} - set(dir(R.func))
    assert missing <= {"vmap"}  # vmap: the lead's piece of issue 14


def _pair_call(fn):
    out = []
    for lib in (torch, R):
        try:
            x, y = (lib.tensor(v, dtype=lib.float64) for v in (_X, _Y))
            out.append(fn(lib, x, y))
        except Exception as e:
            out.append(e)
    return out


LIN = {
    "values": lambda lib, x, y: lib.func.linearize(lambda a, b: (a * b, a.sin()), x, y)[1](
        lib.ones_like(x), y),
    "output": lambda lib, x, y: lib.func.linearize(lambda a: a.exp(), x)[0],
    "dict": lambda lib, x, y: lib.func.linearize(lambda d: d["a"] * d["b"], {"a": x, "b": y})[1](
        {"a": y, "b": x}),
    "shape": lambda lib, x, y: lib.func.linearize(lambda a: a * 2, x)[1](lib.ones(2,
                                                                                 dtype=lib.float64)),
    "dtype": lambda lib, x, y: lib.func.linearize(lambda a: a * 2, x)[1](lib.ones(3)),
    "jvp_has_aux": lambda lib, x, y: lib.func.jvp(lambda a: (a.sin(), {"c": a.cos()}), (x,),
                                                  (y,), has_aux=True),
    "grad_nested_dict": lambda lib, x, y: lib.func.grad(
        lambda d: (d["a"]["b"] ** 2).sum() + (d["c"][0] * d["c"][1]).sum())(
        {"a": {"b": x}, "c": [x, y]}),
    "grad_and_value_nested_aux": lambda lib, x, y: lib.func.grad_and_value(
        lambda d: ((d["p"] * y).sum(), {"aux": [d["p"] * 2]}), has_aux=True)({"p": x}),
}


def _flat(v):
    if isinstance(v, dict):
        return [t for k in sorted(v) for t in _flat(v[k])]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _flat(x)]
    return [v]


def _structure(v):
    if isinstance(v, dict):
        return {k: _structure(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return type(v)(_structure(x) for x in v)
    return "tensor"


@pytest.mark.parametrize("name", sorted(LIN))
def test_linearize_jvp_aux_and_nested_dicts_match_torch(name):
    t, r = _pair_call(LIN[name])
    if isinstance(t, Exception):
        assert type(r).__name__ == type(t).__name__ and str(r) == str(t), (t, r)
        return
    assert not isinstance(r, Exception), r
    assert _structure(r) == _structure(t)
    for a, b in zip(_flat(t), _flat(r)):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)


def test_replace_all_batch_norm_modules_matches_torch():
    res = []
    for lib in (torch, R):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3),
                                lib.nn.InstanceNorm1d(3, track_running_stats=True))
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        net.eval()
        res.append(([n for n, _ in net.named_buffers()], net[1].running_mean,
                    net[1].track_running_stats, str(net)))
    assert res[0] == res[1]


def test_debug_unwrap_returns_the_plain_tensor():
    x = R.ones(2)
    assert R.func.debug_unwrap(x) is x
    assert R.func.debug_unwrap(x, recurse=False) is x


def _functional(lib, which: str, vectorize: bool):
    F = _functions(lib)
    AF = lib.autograd.functional
    x = lib.tensor(_X, dtype=lib.float64)
    if which == "jacobian":
        return AF.jacobian(F["Exp"].apply, x, vectorize=vectorize)
    if which == "jacobian_fwd":
        return AF.jacobian(F["Exp"].apply, x, vectorize=True, strategy="forward-mode")
    fn = {"hessian": "Exp", "hessian_once": "OnceExp", "hessian_old": "OldStyle"}[which]
    return AF.hessian(lambda a: F[fn].apply(a).sum(), x, vectorize=vectorize)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("which", ["jacobian", "jacobian_fwd", "hessian", "hessian_once",
                                   "hessian_old"])
def test_autograd_functional_over_functions_matches_torch(which, vectorize):
    # autograd.functional is not a func transform: old-style Functions are accepted
    t, r = (_functional(lib, which, vectorize) for lib in (torch, R))
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12)


def test_linearize_is_no_transform_old_style_functions_work():
    # torch.func.linearize uses forward AD, not a functorch level: OldStyle (with a jvp)
    # is accepted there, as in torch
    def run(lib):
        class OldJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, g):
                raise AssertionError("not used")

            @staticmethod
            def jvp(ctx, t):
                x, = ctx.saved_tensors
                return 2 * x * t

        x = lib.tensor(_X)
        out, jvp_fn = lib.func.linearize(OldJvp.apply, x)
        return out.numpy(), jvp_fn(lib.ones_like(x)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's fx const-folding warns
        t = run(torch)
    r = run(R)
    np.testing.assert_allclose(r[0], t[0])
    np.testing.assert_allclose(r[1], t[1])


FUNCTIONALIZE = {
    "view_then_write": lambda x: x.view(-1).add_(1),
    "view": lambda x: x.view(2, 2),
    "input_itself": lambda x: x,
    "write_and_return_input": lambda x: x.add_(1),
    "write_then_view": lambda x: (x.mul_(2), x[1:])[1],
    "intermediate": lambda x: (lambda y: (y.add_(1), y.view(2, 2))[1])(x * 2),
    "two_views": lambda x: (x[:2], x[2:]),
    "detach": lambda x: x.detach(),
}


def _shares(a, b) -> bool:
    return a is b or a._base is b or (a._base is not None and a._base is b._base)


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("name", sorted(FUNCTIONALIZE))
def test_functionalize_values_writes_and_aliasing_match_torch(name, remove):
    res = []
    for lib in (torch, R):
        x = lib.arange(4.0)
        out = lib.func.functionalize(FUNCTIONALIZE[name], remove=remove)(x)
        outs = out if isinstance(out, tuple) else (out,)
        res.append(([o.tolist() for o in outs], x.tolist(), [_shares(o, x) for o in outs],
                    [o is x for o in outs]))
    assert res[0] == res[1]


def test_functionalize_refuses_unknown_remove_and_differentiates():
    errs = []
    for lib in (torch, R):
        with pytest.raises(RuntimeError) as info:
            lib.func.functionalize(lambda x: x, remove="views")
        errs.append(str(info.value))
    assert errs[0] == errs[1]
    x = R.tensor(_X)
    g = R.func.grad(R.func.functionalize(lambda a: (a.clone().mul_(a)).sum()))(x)
    np.testing.assert_allclose(g.numpy(), 2 * _X)
