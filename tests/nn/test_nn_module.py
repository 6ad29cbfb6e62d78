"""Module system against torch: registration, iteration, modes, conversion, state dicts,
hooks, containers and Parameter."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import retrograd as R
import retrograd.nn as rnn


def _both(fn):
    """Run fn(lib) for torch and retrograd; return both results."""
    return fn(torch), fn(R)


def _err(fn, lib):
    try:
        fn(lib)
    except Exception as e:
        return type(e), str(e)
    return None, None


def _same_error(fn):
    (tt, tm), (rt, rm) = _err(fn, torch), _err(fn, R)
    assert tt is not None, "torch raised nothing"
    assert rt is tt, (rt, tt, rm)
    assert tm in rm, f"torch: {tm!r}\nretrograd: {rm!r}"
    return rm


# ---------------------------------------------------------------------------------
# registration


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 3)
            self.block = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.BatchNorm1d(3))
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("tmp", lib.zeros(2), persistent=False)
            self.shared = self.fc

        def forward(self, x):
            return self.block(self.fc(x)) * self.scale

    return Net()


def test_iteration_names_match_torch():
    torch.manual_seed(0)
    t, r = _both(_net)
    assert [n for n, _ in t.named_parameters()] == [n for n, _ in r.named_parameters()]
    assert [n for n, _ in t.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in r.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in t.named_buffers()] == [n for n, _ in r.named_buffers()]
    assert [n for n, _ in t.named_children()] == [n for n, _ in r.named_children()]
    assert [n for n, _ in t.named_modules()] == [n for n, _ in r.named_modules()]
    assert [n for n, _ in t.named_modules(prefix="net")] == \
        [n for n, _ in r.named_modules(prefix="net")]
    assert [n for n, _ in t.named_modules(remove_duplicate=False)] == \
        [n for n, _ in r.named_modules(remove_duplicate=False)]
    assert [n for n, _ in t.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in r.named_parameters(prefix="m", recurse=False)]
    assert len(list(t.parameters())) == len(list(r.parameters()))
    assert list(t.state_dict()) == list(r.state_dict())
    assert repr(t) == repr(r)
    assert sorted(d for d in dir(t) if not d.startswith("_") and d in dir(r)) == \
        sorted(d for d in dir(r) if not d.startswith("_") and d in dir(t))


@pytest.mark.parametrize("what", ["module", "parameter", "buffer"])
def test_assign_before_init_errors(what):
    def fn(lib):
        nn = lib.nn

        class Bad(nn.Module):
            def __init__(self):
                if what == "module":
                    self.fc = nn.Linear(1, 1)
                elif what == "parameter":
                    self.w = nn.Parameter(lib.ones(1))
                else:
                    self.register_buffer("b", lib.ones(1))
                super().__init__()

        Bad()

    msg = _same_error(fn)
    assert "super().__init__()" in msg


def test_assignment_type_errors_match_torch():
    def param_slot(lib):
        m = lib.nn.Linear(1, 1)
        m.weight = lib.ones(1, 1)

    def module_slot(lib):
        m = lib.nn.Sequential(lib.nn.ReLU())
        setattr(m, "0", 3)

    def buffer_slot(lib):
        m = lib.nn.BatchNorm1d(1)
        m.running_mean = [1.0]

    def bad_name(lib):
        lib.nn.Module().register_parameter("a.b", None)

    def nonleaf(lib):
        m = lib.nn.Module()
        p = lib.nn.Parameter(lib.ones(1)) * 2
        m.register_parameter("w", p)

    def missing_attr(lib):
        return lib.nn.Linear(1, 1).nope

    def no_forward(lib):
        lib.nn.Module()(1)

    for fn in (param_slot, module_slot, buffer_slot, bad_name, missing_attr, no_forward):
        _same_error(fn)
    with pytest.raises(TypeError, match="cannot assign"):
        nonleaf(R)


def test_attribute_reassignment_moves_between_kinds():
    m = rnn.Module()
    m.x = rnn.Parameter(R.ones(1))
    assert "x" in m._parameters
    m.x = None
    assert m.x is None and "x" in m._parameters
    del m.x
    m.x = rnn.Linear(1, 1)
    assert "x" in m._modules
    del m.x
    m.x = 3
    assert m.x == 3
    m.b = rnn.Buffer(R.zeros(2), persistent=False)
    assert "b" in m._buffers and "b" not in m.state_dict()
    m.b = R.ones(2)
    assert m.b.tolist() == [1.0, 1.0] and "b" not in m.state_dict()


def test_get_submodule_parameter_buffer():
    t, r = _both(_net)
    assert repr(r.get_submodule("block.0")) == repr(t.get_submodule("block.0"))
    assert r.get_parameter("block.0.weight") is r.block[0].weight
    assert r.get_buffer("block.2.running_mean") is r.block[2].running_mean
    _same_error(lambda lib: _net(lib).get_submodule("block.9"))
    _same_error(lambda lib: _net(lib).get_parameter("block.2.running_mean"))


# ---------------------------------------------------------------------------------
# modes and conversion


def test_train_eval_requires_grad_zero_grad():
    r = _net(R)
    assert r.training and r.block[2].training
    r.eval()
    assert not r.training and not r.block[2].training
    r.train()
    assert r.block[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        r.train("yes")
    r(R.ones(4, 2)).sum().backward()
    assert all(p.grad is not None for p in r.parameters())
    r.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in r.parameters())
    r.zero_grad()
    assert all(p.grad is None for p in r.parameters())
    r.requires_grad_(False)
    assert not any(p.requires_grad for p in r.parameters())


def test_to_double_half_float_apply():
    r = _net(R)
    r.double()
    assert all(p.dtype == R.float64 for p in r.parameters())
    assert r.steps.dtype == R.float64
    assert r.block[2].num_batches_tracked.dtype == R.int64
    w = r.fc.weight
    r.to(R.float32)
    assert r.fc.weight is w and w.dtype == R.float32  # same Parameter object, new data
    r.half()
    assert r.fc.bias.dtype == R.float16
    r.bfloat16()
    assert r.fc.bias.dtype == R.bfloat16
    r.float()
    assert r(R.ones(2, 2)).dtype == R.float32
    seen = []
    r.apply(lambda m: seen.append(type(m).__name__))
    t = _net(torch)
    tseen = []
    t.apply(lambda m: tseen.append(type(m).__name__))
    assert seen == tseen
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        r.to(R.int64)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        r.cuda()


def test_deepcopy_and_pickle():
    r = _net(R)
    c = copy.deepcopy(r)
    assert c.fc.weight is not r.fc.weight
    assert bool(R.equal(c.fc.weight, r.fc.weight))
    assert isinstance(c.fc.weight, rnn.Parameter) and c.fc.weight.requires_grad
    assert c.shared is c.fc
    p = pickle.loads(pickle.dumps(rnn.Linear(2, 2)))
    assert isinstance(p.weight, rnn.Parameter)


# ---------------------------------------------------------------------------------
# state dict


def _sd_from_torch(tm):
    return {k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()}


def test_state_dict_roundtrip_and_values():
    torch.manual_seed(0)
    t, r = _both(_net)
    sd = _sd_from_torch(t)
    res = r.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>"
    assert repr(res) == repr(t.load_state_dict(t.state_dict()))
    for k, v in r.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), t.state_dict()[k].numpy())
        assert not v.requires_grad
    kv = r.state_dict(keep_vars=True)
    assert kv["fc.weight"] is r.fc.weight
    assert list(r.state_dict(prefix="model.")) == list(t.state_dict(prefix="model."))
    assert r.block[2].state_dict()._metadata[""] == {"version": 2}


def _load_errors(lib, mutate, strict=True, assign=False):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.fc = nn.Linear(2, hidden)
            self.out = nn.Linear(hidden, 1)

    src = Net(3)
    sd = OrderedDict((k, v) for k, v in src.state_dict().items())
    dst = Net(4 if mutate == "size" else 3)
    if mutate == "missing":
        del sd["out.bias"]
        del sd["fc.weight"]
    elif mutate == "unexpected":
        sd["fc2.weight"] = sd["fc.weight"]
        sd["extra"] = sd["fc.bias"]
    elif mutate == "both":
        del sd["out.bias"]
        sd["fc2.weight"] = sd["fc.weight"]
    return dst.load_state_dict(sd, strict=strict, assign=assign)


@pytest.mark.parametrize("mutate", ["missing", "unexpected", "both", "size"])
def test_load_state_dict_errors_match_torch(mutate):
    msg = _same_error(lambda lib: _load_errors(lib, mutate))
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert "Hint:" in msg


@pytest.mark.parametrize("mutate", ["missing", "unexpected", "both"])
def test_load_state_dict_non_strict_returns_keys(mutate):
    t = _load_errors(torch, mutate, strict=False)
    r = _load_errors(R, mutate, strict=False)
    assert r.missing_keys == t.missing_keys
    assert r.unexpected_keys == t.unexpected_keys
    assert repr(r) == repr(t)


def test_load_state_dict_size_mismatch_raises_even_non_strict():
    _same_error(lambda lib: _load_errors(lib, "size", strict=False))


def test_load_state_dict_assign_and_numpy_values():
    m = rnn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": R.ones(2, 2), "bias": R.zeros(2)}, assign=True)
    assert m.weight is not w and isinstance(m.weight, rnn.Parameter)
    assert m.weight.requires_grad and m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    m.load_state_dict({"weight": np.full((2, 2), 3.0, np.float32), "bias": np.zeros(2)})
    assert m.weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_batchnorm_old_checkpoint_without_num_batches_tracked():
    bn = rnn.BatchNorm1d(2)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    assert repr(bn.load_state_dict(sd)) == "<All keys matched successfully>"


# ---------------------------------------------------------------------------------
# hooks


def _hook_run(lib, kind):
    torch.manual_seed(0)
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]]))
        lin.bias.copy_(lib.tensor([0.1, -0.1]))
    log = []
    x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
    if kind == "pre":
        h = lin.register_forward_pre_hook(lambda m, a: (a[0] * 2,))
    elif kind == "pre_kwargs":
        h = lin.register_forward_pre_hook(lambda m, a, k: ((a[0] + 1,), k), with_kwargs=True)
    elif kind == "fwd":
        h = lin.register_forward_hook(lambda m, a, o: o * 3)
    elif kind == "fwd_kwargs":
        h = lin.register_forward_hook(lambda m, a, k, o: log.append(sorted(k)) or o,
                                      with_kwargs=True)
    elif kind == "bwd":
        def hook(m, gi, go):
            log.append([None if g is None else g.tolist() for g in gi])
            log.append([g.tolist() for g in go])
            return (gi[0] * 10,)
        h = lin.register_full_backward_hook(hook)
    elif kind == "bwd_pre":
        def hook(m, go):
            log.append([g.tolist() for g in go])
            return (go[0] * 0.5,)
        h = lin.register_full_backward_pre_hook(hook)
    elif kind == "bwd_noinput_grad":
        x = x.detach()

        def hook(m, gi, go):
            log.append([g is None for g in gi])
            log.append([g.tolist() for g in go])
        h = lin.register_full_backward_hook(hook)
    out = lin(x)
    out.pow(2).sum().backward()
    res = [out.tolist(), None if x.grad is None else x.grad.tolist(), lin.weight.grad.tolist(),
           log]
    h.remove()
    out2 = lin(x)
    res.append(out2.tolist())
    return res


@pytest.mark.parametrize("kind", ["pre", "pre_kwargs", "fwd", "bwd", "bwd_pre",
                                  "bwd_noinput_grad"])
def test_module_hooks_match_torch(kind):
    t = _hook_run(torch, kind)
    r = _hook_run(R, kind)
    np.testing.assert_allclose(np.array(r[0]), np.array(t[0]), rtol=1e-6)
    if t[1] is None:
        assert r[1] is None
    else:
        np.testing.assert_allclose(np.array(r[1]), np.array(t[1]), rtol=1e-6)
    np.testing.assert_allclose(np.array(r[2]), np.array(t[2]), rtol=1e-6)
    assert len(r[3]) == len(t[3])
    for a, b in zip(r[3], t[3]):
        assert repr(np.array(a, dtype=object).shape) == repr(np.array(b, dtype=object).shape)
        if a and not isinstance(a[0], bool) and a[0] is not None:
            np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float),
                                       rtol=1e-6)
        else:
            assert a == b
    np.testing.assert_allclose(np.array(r[4]), np.array(t[4]), rtol=1e-6)


def test_forward_hook_with_kwargs_and_always_call():
    m = rnn.Identity()
    seen = []
    m.register_forward_hook(lambda mod, a, k, o: seen.append(k), with_kwargs=True)

    class Boom(rnn.Module):
        def forward(self, x):
            raise ValueError("boom")

    b = Boom()
    b.register_forward_hook(lambda mod, a, o: seen.append(("always", o)), always_call=True)
    m(R.ones(1))
    with pytest.raises(ValueError, match="boom"):
        b(R.ones(1))
    assert seen == [{}, ("always", None)]


def test_hook_handles_and_fast_path_counter():
    m = rnn.Linear(2, 2)
    h1 = m.register_forward_hook(lambda *a: None)
    h2 = m.register_full_backward_hook(lambda *a: None)
    assert m._hook_count == 2
    h1.remove()
    h1.remove()
    h2.remove()
    assert m._hook_count == 0
    with m.register_forward_pre_hook(lambda *a: None):
        assert m._hook_count == 1
    assert m._hook_count == 0


def test_backward_hooks_on_sequential_and_tensor_hooks_on_weights():
    """Seed-like: hooks registered on layer weights see and change the gradient."""
    seen = []

    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 1))
        net.load_state_dict(ref_sd(lib))
        net[0].weight.register_hook(lambda g: g.clamp(-0.1, 0.1))
        grads = []
        net.register_full_backward_hook(lambda m, gi, go: grads.append(gi[0].sum().item()))
        x = lib.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
        net(x).sum().backward()
        return net[0].weight.grad.numpy().copy(), grads

    torch.manual_seed(0)
    tref = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))

    def ref_sd(lib):
        if lib is torch:
            return tref.state_dict()
        return {k: R.tensor(v.numpy()) for k, v in tref.state_dict().items()}

    tw, tg = run(torch)
    rw, rg = run(R)
    np.testing.assert_allclose(rw, tw, rtol=1e-5)
    np.testing.assert_allclose(rg, tg, rtol=1e-5)
    assert seen == []


# ---------------------------------------------------------------------------------
# containers


def test_sequential_ops_match_torch():
    def build(lib):
        nn = lib.nn
        s = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 3), nn.Tanh())
        out = [repr(s[1:3]), repr(s[-1]), len(s)]
        s.append(nn.Sigmoid())
        s.insert(1, nn.Identity())
        del s[2]
        out.append(repr(s))
        out.append(repr(s.pop(0)))
        s[0] = nn.GELU()
        out.append(repr(s))
        s2 = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
        out.append(repr(s2 + nn.Sequential(nn.ReLU())))
        out.append([n for n, _ in s2.named_children()])
        s2.extend([nn.ReLU()])
        out.append(repr(s2))
        return out

    t, r = _both(build)
    assert r == t
    _same_error(lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3])


def test_modulelist_moduledict_match_torch():
    def build(lib):
        nn = lib.nn
        ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        ml.append(nn.ReLU())
        ml.extend([nn.ReLU(), nn.Tanh()])
        ml.insert(1, nn.Tanh())
        out = [repr(ml), len(ml), repr(ml[-1]), repr(ml[1:3])]
        del ml[0]
        out.append([n for n, _ in ml.named_parameters()])
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Linear(1, 1)})
        md["c"] = nn.Tanh()
        md.update([("d", nn.Identity())])
        out += [list(md.keys()), repr(md), "a" in md, len(md)]
        out.append(repr(md.pop("a")))
        out.append(list(md))
        return out

    t, r = _both(build)
    assert r == t


def test_parameterlist_parameterdict_match_torch():
    def build(lib):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
        pl.append(lib.ones(1))
        out = [len(pl), [n for n, _ in pl.named_parameters()], repr(pl),
               isinstance(pl[1], nn.Parameter), pl[1].requires_grad]
        pd = nn.ParameterDict({"w": lib.ones(2), "b": nn.Parameter(lib.zeros(1))})
        pd["c"] = lib.ones(3)
        out += [list(pd.keys()), [n for n, _ in pd.named_parameters()], repr(pd), "w" in pd,
                len(pd)]
        return out

    t, r = _both(build)
    assert r == t


# ---------------------------------------------------------------------------------
# Parameter


def test_parameter_basics_match_torch():
    def build(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        q = lib.nn.Parameter(lib.tensor([1.0]), requires_grad=False)
        return [repr(p), p.requires_grad, p.is_leaf, isinstance(p, lib.Tensor),
                type(p * 2).__name__, q.requires_grad, repr(q), repr(lib.nn.Parameter())]

    t, r = _both(build)
    assert r == t


def test_parameter_shares_memory_with_data():
    base = R.zeros(3)
    p = rnn.Parameter(base)
    with R.no_grad():
        p.add_(1)
    assert base.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError):
        rnn.Parameter([1.0, 2.0])
