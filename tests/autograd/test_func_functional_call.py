"""func.functional_call, nn.utils.stateless and func.stack_module_state against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R

rng = np.random.default_rng(0)


def _pair(net_fn):
    """The same module in both libraries, with the same weights."""
    t = net_fn(torch)
    r = net_fn(R)
    r.load_state_dict({k: R.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, r


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(),
                             lib.nn.Linear(4, 2))


class _Tied:
    """A module whose 'a' and 'b' are one parameter (tied), plus a buffer."""

    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Parameter(lib.ones(2))
                self.b = self.a
                self.register_buffer("buf", lib.zeros(2))

            def forward(self, x):
                return x * self.a + 2 * self.b + self.buf

        return M()


class _Raises:
    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))

            def forward(self, x):
                raise ValueError("boom")

        return M()


def _np(x):
    return x.detach().numpy()


def _both(fn):
    """fn(lib, module) for both libraries: (torch result, retrograd result) or the errors."""
    out = []
    for lib in (torch, R):
        try:
            out.append(fn(lib))
        except Exception as e:
            out.append(e)
    return out


def _same_error(t, r):
    assert isinstance(t, Exception) and isinstance(r, Exception), (t, r)
    assert type(t).__name__ == type(r).__name__
    assert str(r).startswith(str(t)), (str(t), str(r))


def test_dict_and_tuple_of_dicts_match_torch_and_restore():
    t, r = _pair(_mlp)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    new = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32)
           for k, v in t.named_parameters()}
    for split in (False, True):
        tp = {k: torch.tensor(v) for k, v in new.items()}
        rp = {k: R.tensor(v) for k, v in new.items()}
        if split:
            keys = sorted(tp)
            tp = ({k: tp[k] for k in keys[:2]}, {k: tp[k] for k in keys[2:]})
            rp = ({k: rp[k] for k in keys[:2]}, {k: rp[k] for k in keys[2:]})
        to = torch.func.functional_call(t, tp, (torch.tensor(x),))
        ro = R.func.functional_call(r, rp, R.tensor(x))
        np.testing.assert_allclose(_np(ro), _np(to), rtol=1e-5, atol=1e-6)
    # the module has its own Parameters back, and they were not changed
    for (k, tv), (k2, rv) in zip(t.named_parameters(), r.named_parameters()):
        assert k == k2 and isinstance(rv, R.nn.Parameter)
        np.testing.assert_allclose(_np(rv), _np(tv), rtol=1e-6)


def test_in_place_buffer_updates_go_to_the_dict_not_the_module():
    t, r = _pair(_mlp)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    tb = {"1.running_mean": torch.zeros(4)}
    rb = {"1.running_mean": R.zeros(4)}
    torch.func.functional_call(t, tb, torch.tensor(x))
    R.func.functional_call(r, rb, R.tensor(x))
    np.testing.assert_allclose(_np(rb["1.running_mean"]), _np(tb["1.running_mean"]), rtol=1e-5)
    assert float(r[1].running_mean.abs().sum()) == 0.0
    assert int(r[1].num_batches_tracked) == int(t[1].num_batches_tracked) == 1


def test_module_state_is_restored_when_forward_raises():
    m = _Raises.make(R)
    own = m.w
    with pytest.raises(ValueError, match="boom"):
        R.func.functional_call(m, {"w": R.zeros(2)}, R.ones(2))
    assert m.w is own and isinstance(m._parameters["w"], R.nn.Parameter)


@pytest.mark.parametrize("tie", [True, False])
def test_tied_weights(tie):
    def run(lib):
        m = _Tied.make(lib)
        return lib.func.functional_call(m, {"a": lib.zeros(2)}, lib.ones(2), tie_weights=tie)
    t, r = _both(run)
    np.testing.assert_array_equal(_np(r), _np(t))


def test_tied_weights_given_twice():
    def run(lib, same):
        m = _Tied.make(lib)
        z = lib.zeros(2)
        vals = {"a": z, "b": z if same else lib.ones(2)}
        return lib.func.functional_call(m, vals, lib.ones(2))
    t, r = _both(lambda lib: run(lib, True))
    np.testing.assert_array_equal(_np(r), _np(t))
    _same_error(*_both(lambda lib: run(lib, False)))


@pytest.mark.parametrize("vals", [{"a": 0}, {"a": 0, "buf": 0, "extra": 0}, {"extra": 0}])
def test_strict_errors(vals):
    def run(lib):
        m = _Tied.make(lib)
        d = {k: lib.zeros(2) for k in vals}
        return lib.func.functional_call(m, d, lib.ones(2), strict=True)
    _same_error(*_both(run))


@pytest.mark.parametrize("arg", ["repeated", "not_dicts", "wrong_type"])
def test_argument_errors(arg):
    def run(lib):
        m = lib.nn.Linear(2, 2)
        d = {"weight": lib.zeros(2, 2)}
        val = {"repeated": (d, d), "not_dicts": (d, 3), "wrong_type": 3}[arg]
        return lib.func.functional_call(m, val, lib.ones(2))
    _same_error(*_both(run))


def test_kwargs_and_args_none():
    def run(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(()))

            def forward(self, x=None, y=None):
                return self.w * (3 if x is None else x) + (0 if y is None else y)
        m = M()
        a = lib.func.functional_call(m, {"w": lib.tensor(2.)})
        b = lib.func.functional_call(m, {"w": lib.tensor(2.)}, (lib.tensor(1.),),
                                     {"y": lib.tensor(5.)})
        return float(a), float(b)
    t, r = _both(run)
    assert t == r == (6.0, 7.0)


def test_grad_through_functional_call_matches_torch_func():
    t, r = _pair(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(),
                                               lib.nn.Linear(4, 1)))
    x = rng.standard_normal((6, 3)).astype(np.float32)
    y = rng.standard_normal((6, 1)).astype(np.float32)
    res = []
    for lib, m in ((torch, t), (R, r)):
        def loss(p, x, y, lib=lib, m=m):
            return lib.nn.functional.mse_loss(lib.func.functional_call(m, p, (x,)), y)
        params = {k: v.detach() for k, v in m.named_parameters()}
        res.append(lib.func.grad(loss)(params, lib.tensor(x), lib.tensor(y)))
    assert list(res[0]) == list(res[1])
    for k in res[0]:
        np.testing.assert_allclose(_np(res[1][k]), _np(res[0][k]), rtol=1e-5, atol=1e-6)


def test_per_sample_grads_equal_a_loop_of_backward_passes():
    m = R.nn.Linear(3, 2)
    x = R.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xi):
        return R.func.functional_call(m, p, (xi[None],)).pow(2).sum()
    for i in range(4):
        g = R.func.grad(loss)(params, x[i])
        m.zero_grad()
        m(x[i][None]).pow(2).sum().backward()
        np.testing.assert_allclose(_np(g["weight"]), _np(m.weight.grad), rtol=1e-6)
        np.testing.assert_allclose(_np(g["bias"]), _np(m.bias.grad), rtol=1e-6)


def test_stateless_functional_call_is_deprecated_as_torch():
    out = []
    for lib in (torch, R):
        m = lib.nn.Linear(1, 1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(
                m, {"weight": lib.ones(1, 1), "bias": lib.zeros(1)}, lib.tensor([[3.]]))
        assert float(y) == 3.0
        out.append([(x.category, str(x.message)) for x in w])
    assert out[0] == out[1]


def test_reparametrize_module_context():
    for lib in (torch, R):
        m = _Tied.make(lib)
        own = m.a
        with lib.nn.utils.stateless._reparametrize_module(m, {"a": lib.zeros(2)},
                                                           tie_weights=True):
            assert float(m.a.sum()) == float(m.b.sum()) == 0.0
        assert m.a is own and m.b is own


def _ensemble(lib, n=3, train=True):
    ms = [lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2)) for _ in range(n)]
    for m in ms:
        m.train(train)
    return ms


def test_stack_module_state_matches_torch():
    tms = _ensemble(torch)
    rms = _ensemble(R)
    for t, r in zip(tms, rms):
        r.load_state_dict({k: R.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    tp, tb = torch.func.stack_module_state(tms)
    rp, rb = R.func.stack_module_state(rms)
    assert list(tp) == list(rp) and list(tb) == list(rb)
    for td, rd in ((tp, rp), (tb, rb)):
        for k in td:
            assert tuple(rd[k].shape) == tuple(td[k].shape)
            assert rd[k].dtype.itemsize == td[k].dtype.itemsize
            assert (rd[k].is_leaf, rd[k].requires_grad) == (td[k].is_leaf, td[k].requires_grad)
            np.testing.assert_array_equal(_np(rd[k]), _np(td[k]))
    # functional_call of one model with the i-th slice gives that model's output
    x = R.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for i, m in enumerate(rms):
        got = R.func.functional_call(rms[0], ({k: v[i] for k, v in rp.items()},
                                              {k: v[i] for k, v in rb.items()}), x)
        np.testing.assert_allclose(_np(got), _np(m(x)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["empty", "modes", "classes", "requires_grad"])
def test_stack_module_state_errors(case):
    def run(lib):
        ms = _ensemble(lib, 2)
        if case == "empty":
            ms = []
        elif case == "modes":
            ms[1].eval()
        elif case == "classes":
            ms[1] = lib.nn.Linear(3, 2)
        else:
            ms[1][0].weight.requires_grad_(False)
        return lib.func.stack_module_state(ms)
    _same_error(*_both(run))


class _Counter:
    """forward replaces its buffer (self.count = self.count + 1), as torch's docs example."""

    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", lib.zeros(()))
                self.plain = lib.ones(2)  # a tensor attribute, neither parameter nor buffer

            def forward(self, x):
                self.count = self.count + 1
                return x * self.plain + self.count

        return M()


def test_replaced_buffers_plain_attributes_and_unknown_names_match_torch():
    res = []
    for lib in (torch, R):
        m = _Counter.make(lib)
        d = {"count": lib.tensor(5.0), "plain": lib.tensor([2.0, 3.0]), "extra": lib.ones(1)}
        out = lib.func.functional_call(m, d, lib.ones(2))
        res.append((out.tolist(), float(d["count"]), float(m.count), m.plain.tolist(),
                    hasattr(m, "extra"), sorted(d)))
    assert res[0] == res[1]


def test_grad_through_tied_weights_sums_both_uses():
    def run(lib):
        m = _Tied.make(lib)
        x = lib.tensor([1.0, 2.0])
        return lib.func.grad(lambda a: lib.func.functional_call(m, {"a": a}, x).sum())(
            lib.zeros(2)).tolist()
    assert run(torch) == run(R) == [3.0, 4.0]


@pytest.mark.parametrize("transform", ["vmap_grad", "vmap_jacrev"])
def test_per_sample_weight_grads_have_torch_func_values_and_strides(transform):
    """An unbatched nn.Linear under vmap(grad): each sample's weight gradient is a
    contiguous (out, in) matrix, as torch.func's (Note [Linear under vmap])."""
    t, r = _pair(lambda lib: lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(),
                                               lib.nn.Linear(4, 3)))
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0, 2])
    res = []
    for lib, m in ((torch, t), (R, r)):
        def loss(p, xb, yb, lib=lib, m=m):
            out = lib.func.functional_call(m, p, (xb.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yb.unsqueeze(0))

        def outputs(p, xb, lib=lib, m=m):
            return lib.func.functional_call(m, p, (xb.unsqueeze(0),)).squeeze(0)
        params = {k: v.detach() for k, v in m.named_parameters()}
        if transform == "vmap_grad":
            f = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
            res.append(f(params, lib.tensor(x), lib.tensor(y)))
        else:
            f = lib.func.vmap(lib.func.jacrev(outputs), in_dims=(None, 0))
            res.append(f(params, lib.tensor(x)))
    for k in res[0]:
        want, got = res[0][k], res[1][k]
        assert tuple(got.shape) == tuple(want.shape), k
        if transform == "vmap_grad":
            assert got.stride() == want.stride(), (k, got.stride(), want.stride())
        else:  # jacrev's output dim is outermost in memory here; each matrix row-major
            assert got.stride()[2:] == want.stride()[2:], (k, got.stride(), want.stride())
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.signbit(_np(got)), np.signbit(_np(want)))
