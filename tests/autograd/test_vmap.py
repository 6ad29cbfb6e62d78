"""vmap against torch.func.vmap: in_dims/out_dims, nesting, chunking, randomness, batched
tensors' behaviour and errors, composition with the other transforms, the per-sample
gradient and ensembling recipes, and that the main ops run one kernel call per batch."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap
from retrograd.ops.records import nn as TN
from retrograd.ops.records import table as T

tf = torch.func


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return R.tensor(a), torch.tensor(a)


def _same(r, t, tol=1e-10):
    if isinstance(r, (tuple, list)):
        assert isinstance(t, (tuple, list)) and len(r) == len(t)
        for x, y in zip(r, t):
            _same(x, y, tol)
        return
    assert tuple(r.shape) == tuple(t.shape)
    assert str(r.dtype) == str(t.dtype)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _both(fn_r, fn_t, *shapes, in_dims=0, out_dims=0, **kw):
    pairs = [_pair(s, i) for i, s in enumerate(shapes)]
    r = vmap(fn_r, in_dims=in_dims, out_dims=out_dims, **kw)(*[p[0] for p in pairs])
    t = tf.vmap(fn_t, in_dims=in_dims, out_dims=out_dims, **kw)(*[p[1] for p in pairs])
    _same(r, t)


# -- in_dims, out_dims, nesting, chunks ------------------------------------------------

@pytest.mark.parametrize("in_dims,shapes", [
    (0, [(4, 3)]), (1, [(3, 4)]), (-1, [(3, 4)]), ((0, None), [(4, 3), (3,)]),
    ((None, 1), [(3,), (3, 4)]), ((0, 0), [(4, 2, 3), (4, 3, 5)]), ((2, 0), [(2, 3, 4), (4, 3, 2)]),
])
def test_in_dims(in_dims, shapes):
    if len(shapes) == 1:
        _both(lambda x: (x * 2).sin(), lambda x: (x * 2).sin(), *shapes, in_dims=in_dims)
    else:
        _both(lambda x, y: x @ y if x.dim() > 1 and y.dim() > 1 else x * y,
              lambda x, y: x @ y if x.dim() > 1 and y.dim() > 1 else x * y,
              *shapes, in_dims=in_dims)


@pytest.mark.parametrize("out_dims", [0, 1, -1, (1, 0), (1, None)])
def test_out_dims(out_dims):
    def f(m, x):
        return (x.unsqueeze(0) * m, x.sum()) if out_dims != (1, None) else (x * m, m)
    xr, xt = _pair((4, 3))
    mr, mt = R.ones(2, 3), torch.ones(2, 3)
    if isinstance(out_dims, int):
        r = vmap(lambda x: f(mr, x)[0], out_dims=out_dims)(xr)
        t = tf.vmap(lambda x: f(mt, x)[0], out_dims=out_dims)(xt)
    else:
        r = vmap(lambda x: f(mr, x), out_dims=out_dims)(xr)
        t = tf.vmap(lambda x: f(mt, x), out_dims=out_dims)(xt)
    _same(r, t)


def test_nested_pytrees_and_kwargs():
    def f(d, xs, scale=1.0):
        return {"a": d["w"] * xs[0] * scale, "b": [xs[1].sum()]}
    wr, wt = _pair((5, 3))
    ar, at = _pair((5, 3), 1)
    br, bt = _pair((3, 5), 2)
    r = vmap(f, in_dims=({"w": 0}, (0, 1)))({"w": wr}, (ar, br), scale=2.0)
    t = tf.vmap(f, in_dims=({"w": 0}, (0, 1)))({"w": wt}, (at, bt), scale=2.0)
    _same(r["a"], t["a"])
    _same(r["b"][0], t["b"][0])


def test_nesting():
    _both(lambda x: vmap(lambda row: row.softmax(0))(x),
          lambda x: tf.vmap(lambda row: row.softmax(0))(x), (3, 4, 5))
    xr, xt = _pair((3, 4))
    yr, yt = _pair((5, 4), 1)
    r = vmap(lambda x: vmap(lambda y: (x * y).sum())(yr))(xr)
    t = tf.vmap(lambda x: tf.vmap(lambda y: (x * y).sum())(yt))(xt)
    _same(r, t)
    r = vmap(vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(None, 0))(xr, yr)
    t = tf.vmap(tf.vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(None, 0))(xt, yt)
    _same(r, t)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7])
def test_chunk_size(chunk_size):
    _both(lambda x, y: (x * y, x.sum()), lambda x, y: (x * y, x.sum()), (7, 3), (7, 3),
          chunk_size=chunk_size, out_dims=(1, 0))


def test_output_not_depending_on_batch_is_expanded():
    r = vmap(lambda x: R.ones(2))(R.zeros(3, 4))
    t = tf.vmap(lambda x: torch.ones(2))(torch.zeros(3, 4))
    _same(r, t)


# -- batched tensors ----------------------------------------------------------------

def test_batched_tensor_repr_shape_and_type():
    seen = []

    def f(t):
        seen.append((repr(t), tuple(t.shape), t.dim(), isinstance(t, R.Tensor)))
        return t
    vmap(f)(R.arange(6.).reshape(2, 3))
    text, shape, dim, is_t = seen[0]
    assert text.startswith("BatchedTensor(lvl=1, bdim=0, value=\n    tensor([[0., 1., 2.],")
    assert (shape, dim, is_t) == ((3,), 1, True)


@pytest.mark.parametrize("call", ["item", "bool", "tolist", "numpy", "backward", "float"])
def test_refused_like_torch(call):
    fns = {"item": lambda t: t.sum().item(), "bool": lambda t: bool(t.sum() > 0),
           "tolist": lambda t: t.tolist(), "numpy": lambda t: t.numpy(),
           "backward": lambda t: t.sum().backward(), "float": lambda t: float(t.sum())}
    with pytest.raises(RuntimeError) as rr:
        vmap(fns[call])(R.ones(2, 3, requires_grad=call == "backward"))
    with pytest.raises(RuntimeError) as tt:
        tf.vmap(fns[call])(torch.ones(2, 3, requires_grad=call == "backward"))
    assert str(rr.value) == str(tt.value)


@pytest.mark.parametrize("bad", [
    dict(in_dims=1, args=lambda m: (m.ones(3),)),
    dict(in_dims=0, args=lambda m: (m.ones(3), m.ones(4))),
    dict(in_dims=0, args=lambda m: (3,)),
    dict(in_dims=None, args=lambda m: (m.ones(3),)),
    dict(in_dims=(None,), args=lambda m: (m.ones(3),)),
    dict(in_dims=(0, 0), args=lambda m: (m.ones(3),)),
    dict(in_dims=("a",), args=lambda m: (m.ones(3),)),
    dict(in_dims=0, args=lambda m: ()),
])
def test_input_errors(bad):
    def f(*a):
        return a[0]
    with pytest.raises(ValueError) as rr:
        vmap(f, in_dims=bad["in_dims"])(*bad["args"](R))
    with pytest.raises(ValueError) as tt:
        tf.vmap(f, in_dims=bad["in_dims"])(*bad["args"](torch))
    assert str(rr.value).split(" has structure")[0] == str(tt.value).split(" has structure")[0]


def test_output_and_option_errors():
    for fn, od, exc in [(lambda a: 3, 0, ValueError), (lambda a: a, 2, IndexError),
                        (lambda a: a, "x", ValueError), (lambda a: (a, a), (0, 0, 0), ValueError),
                        (lambda a: a, None, ValueError)]:
        with pytest.raises(exc) as rr:
            vmap(fn, out_dims=od)(R.ones(3))
        with pytest.raises(exc) as tt:
            tf.vmap(fn, out_dims=od)(torch.ones(3))
        assert str(rr.value).split(" has structure")[0] == str(tt.value).split(" has structure")[0]
    for kw, exc in [(dict(randomness="sometimes"), RuntimeError), (dict(chunk_size=0), ValueError)]:
        with pytest.raises(exc) as rr:
            vmap(lambda a: a, **kw)
        with pytest.raises(exc) as tt:
            tf.vmap(lambda a: a, **kw)
        assert str(rr.value) == str(tt.value)


def test_in_place_writes():
    def f(t):
        t = t.clone()
        t.mul_(2)
        t[0] = 7.0
        t.add_(t.new_ones(3))
        return t
    _both(f, f, (2, 3))

    def into_unbatched(m):
        def g(t):
            z = m.zeros(3)
            z.add_(t)
            return z
        return g
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        vmap(into_unbatched(R))(R.ones(2, 3))


# -- randomness -------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["error", "same", "different"])
@pytest.mark.parametrize("kind", ["rand_like", "randn", "dropout", "bernoulli", "randperm"])
def test_randomness(mode, kind):
    def make(m):
        return {"rand_like": lambda t: m.rand_like(t),
                "randn": lambda t: m.randn(3) + t,
                "dropout": lambda t: m.nn.functional.dropout(t + 1, 0.5),
                "bernoulli": lambda t: m.bernoulli(t.sigmoid()),
                "randperm": lambda t: m.randperm(3) + t}[kind]
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    if mode == "error" or (mode == "same" and kind == "bernoulli"):
        with pytest.raises(RuntimeError) as rr:
            vmap(make(R), randomness=mode)(R.tensor(x))
        with pytest.raises(RuntimeError) as tt:
            tf.vmap(make(torch), randomness=mode)(torch.tensor(x))
        assert str(rr.value) == str(tt.value)
        return
    R.manual_seed(3)
    torch.manual_seed(3)
    r = vmap(make(R), randomness=mode)(R.tensor(x))
    t = tf.vmap(make(torch), randomness=mode)(torch.tensor(x))
    assert tuple(r.shape) == tuple(t.shape)
    d = r - R.tensor(x) if kind in ("randn", "randperm") else r
    rows_equal = all(np.array_equal(d[0].numpy(), d[i].numpy()) for i in range(1, 4))
    if kind in ("rand_like", "randn", "randperm"):
        assert rows_equal == (mode == "same")
    if kind in ("rand_like", "randn"):  # the same draws as PyTorch's generator
        np.testing.assert_array_equal(r.numpy(), t.numpy())


# -- composition ----------------------------------------------------------------------

def test_vmap_of_grad_and_vjp_and_jvp():
    xr, xt = _pair((4, 3))
    _same(vmap(grad(lambda x: (x.sin() * x).sum()))(xr),
          tf.vmap(tf.grad(lambda x: (x.sin() * x).sum()))(xt))
    wr, wt = _pair((3,), 5)
    _same(vmap(grad(lambda w, x: (w * x).exp().sum()), in_dims=(None, 0))(wr, xr),
          tf.vmap(tf.grad(lambda w, x: (w * x).exp().sum()), in_dims=(None, 0))(wt, xt))
    _same(vmap(lambda x, v: vjp(R.tanh, x)[1](v)[0])(xr, xr * 2),
          tf.vmap(lambda x, v: tf.vjp(torch.tanh, x)[1](v)[0])(xt, xt * 2))
    _same(vmap(lambda x, v: jvp(R.sin, (x,), (v,))[1])(xr, xr.cos()),
          tf.vmap(lambda x, v: tf.jvp(torch.sin, (x,), (v,))[1])(xt, xt.cos()))


def test_vmap_of_jacobians_and_hessian():
    xr, xt = _pair((4, 3))

    def f(m):
        return lambda x: (x.sin() * x.sum()).tanh()
    _same(vmap(jacrev(f(R)))(xr), tf.vmap(tf.jacrev(f(torch)))(xt))
    _same(vmap(jacfwd(f(R)))(xr), tf.vmap(tf.jacfwd(f(torch)))(xt))
    _same(vmap(hessian(lambda x: (x.exp() * x).sum()))(xr),
          tf.vmap(tf.hessian(lambda x: (x.exp() * x).sum()))(xt))


def test_grad_and_jacobian_of_vmap():
    xr, xt = _pair((4, 3))
    _same(grad(lambda x: vmap(lambda r: (r * r).sum())(x).sum())(xr),
          tf.grad(lambda x: tf.vmap(lambda r: (r * r).sum())(x).sum())(xt))
    _same(jacrev(vmap(R.sin))(xr), tf.jacrev(tf.vmap(torch.sin))(xt))


# -- the tutorials' recipes ---------------------------------------------------------

def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(6, 5), m.nn.ReLU(), m.nn.Linear(5, 3))


def test_per_sample_gradients_recipe():
    def run(m, fn):
        model = _mlp(m)
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = m.tensor(np.random.default_rng(1).standard_normal((8, 6)))
        y = m.tensor([0, 1, 2, 1, 0, 2, 2, 1])
        model = model.double()
        params = {k: v.detach().double() for k, v in model.named_parameters()}

        def loss(p, xb, yb):
            out = fn.functional_call(model, p, (xb.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, yb.unsqueeze(0))
        return fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(params, x, y), (model, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every op batched: no slow-path warning
        gr, (model, x, y) = run(R, R.func)
    gt, _ = run(torch, tf)
    for k in gt:
        _same(gr[k], gt[k])
    # and equal to a loop of per-example backward passes
    for i in range(8):
        model.zero_grad()
        R.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(gr[k][i].numpy(), p.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_model_ensembling_recipe():
    def run(m, fn):
        models = []
        for s in range(3):
            m.manual_seed(s)
            models.append(m.nn.Sequential(m.nn.Linear(4, 5), m.nn.Tanh(), m.nn.Linear(5, 2)))
        params, buffers = fn.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")
        x = m.tensor(np.random.default_rng(2).standard_normal((6, 4)).astype(np.float32))

        def call(p, b, xb):
            return fn.functional_call(base, (p, b), (xb,))
        return fn.vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    _same(run(R, R.func), run(torch, tf), tol=1e-6)


# -- one kernel call for the whole batch ------------------------------------------------

@pytest.mark.parametrize("name,fn,op", [
    ("mul", lambda x, w: x * w, T.mul), ("exp", lambda x, w: x.exp(), T.exp),
    ("sum", lambda x, w: x.sum(0), T.sum_dims), ("mm", lambda x, w: x @ w, T.mm_ops["matmul"]),
    ("softmax", lambda x, w: x.softmax(-1), TN.softmax),
    ("linear", lambda x, w: R.nn.functional.linear(x, w.t(), w[0]), T.mm_ops["matmul"]),
    ("relu", lambda x, w: x.relu(), T.relu), ("view", lambda x, w: x.view(-1), T.view),
    ("conv2d", lambda x, w: R.nn.functional.conv2d(x.reshape(1, 1, 3, 3),
                                                   w[:2, :2].reshape(1, 1, 2, 2)), TN.conv),
])
def test_main_ops_run_one_kernel_per_batch(name, fn, op, monkeypatch):
    calls = []
    kernel = op.fwd

    def counted(*a):
        calls.append(1)
        return kernel(*a)
    monkeypatch.setattr(op, "fwd", counted)
    x = R.tensor(np.random.default_rng(0).standard_normal((5, 3, 3)))
    w = R.tensor(np.random.default_rng(1).standard_normal((3, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = vmap(fn, in_dims=(0, None))(x, w)
    assert len(calls) == 1, f"{name}: {len(calls)} kernel calls for a batch of 5"
    monkeypatch.undo()
    want = R.stack([fn(x[i], w) for i in range(5)])
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)


def test_fallback_warns_once_and_is_right(monkeypatch):
    from retrograd._functorch import batched

    monkeypatch.setattr(batched, "_WARNED", set())  # (other tests may have warned already)
    x = R.tensor(np.random.default_rng(0).standard_normal((3, 4)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = vmap(lambda t: t.sort()[0])(x)
        vmap(lambda t: t.sort()[0])(x)
    drops = [w for w in caught if "There is a performance drop" in str(w.message)]
    assert len(drops) == 1 and "sort" in str(drops[0].message)
    np.testing.assert_array_equal(r.numpy(), np.sort(x.numpy(), axis=1))


# -- autograd.Function inside vmap ----------------------------------------------------

def _cube(m, generate=True, rule=False):
    class Cube(m.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * g * x ** 2

    if rule:
        def vmap_rule(info, in_dims, x):
            assert info.batch_size == 2 and in_dims == (0,)
            return Cube.apply(x), 0
        Cube.vmap = staticmethod(vmap_rule)
    return Cube


@pytest.mark.parametrize("generate,rule", [(True, False), (False, True)])
def test_function_under_vmap(generate, rule):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    for m, fn in ((R, R.func), (torch, tf)):
        c = _cube(m, generate, rule)
        x = m.tensor(a)
        def total(t, c=c):
            return c.apply(t).sum()

        def total_of_vmap(t, c=c, fn=fn):
            return fn.vmap(c.apply)(t).sum()
        got = [fn.vmap(c.apply)(x), fn.vmap(fn.grad(total))(x), fn.grad(total_of_vmap)(x)]
        if m is R:
            ours = got
        else:
            _same(ours, got)


def test_function_without_vmap_support_is_refused_like_torch():
    msgs = []
    for m, fn in ((R, R.func), (torch, tf)):
        with pytest.raises(RuntimeError) as e:
            fn.vmap(_cube(m, False).apply)(m.ones(2, 2))
        msgs.append(str(e.value))
        with pytest.raises(RuntimeError) as e:
            fn.vmap(_cube(m, True, True).apply)(m.ones(2, 2))
        msgs.append(str(e.value))
    assert msgs[:2] == msgs[2:]
