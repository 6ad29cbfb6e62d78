"""nn.utils.parametrize, nn.utils.parametrizations and the legacy weight_norm /
spectral_norm hooks against torch (same weights, same seeds: values, gradients, state
dict keys, errors)."""

from __future__ import annotations

import collections
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrizations as TP
import torch.nn.utils.parametrize as TZ

import retrograd as R
import retrograd.nn.utils.parametrizations as RP
import retrograd.nn.utils.parametrize as RZ


def _pair(cls, *args, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw)
    rm = getattr(R.nn, cls)(*args, **kw)
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, rm


def _close(r, t, atol=1e-6, rtol=1e-5):
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)


def _same_state(rm, tm, atol=1e-6):
    rs, ts = rm.state_dict(), tm.state_dict()
    assert list(rs) == list(ts)
    for k in ts:
        _close(rs[k], ts[k], atol)


def _train_twice(tm, rm, x, atol=1e-5):
    """Two forward/backward passes (so hooks and power iterations run twice); gradients of
    every parameter compared by name."""
    for _ in range(2):
        tm(torch.tensor(x)).pow(2).sum().backward()
        rm(R.tensor(x)).pow(2).sum().backward()
    tn, rn = dict(tm.named_parameters()), dict(rm.named_parameters())
    assert list(rn) == list(tn)
    for k in tn:
        np.testing.assert_allclose(rn[k].grad.numpy(), tn[k].grad.numpy(), atol=atol,
                                   rtol=1e-4, err_msg=k)


def _symmetric(mod):
    class Symmetric(mod.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric


def _scale(mod, factor):
    class Scale(mod.nn.Module):
        def forward(self, x):
            return x * factor

        def right_inverse(self, x):
            return x / factor
    return Scale


X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)


def test_register_chain_assign_and_state_dict():
    tm, rm = _pair("Linear", 3, 3)
    for m, mod in ((tm, torch), (rm, R)):
        P = TZ if mod is torch else RZ
        P.register_parametrization(m, "weight", _symmetric(mod)())
        P.register_parametrization(m, "weight", _scale(mod, 2.0)())
        P.register_parametrization(m, "bias", _scale(mod, 3.0)())
    assert type(rm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert RZ.type_before_parametrizations(rm) is R.nn.Linear
    assert RZ.is_parametrized(rm) and RZ.is_parametrized(rm, "bias")
    assert not RZ.is_parametrized(rm, "other")
    assert isinstance(rm.parametrizations.weight, RZ.ParametrizationList)
    assert len(rm.parametrizations.weight) == 2
    _close(rm.weight, tm.weight)
    _close(rm.bias, tm.bias)
    _same_state(rm, tm)
    _train_twice(tm, rm, X)
    # assignment runs right_inverse in reverse, the original keeps its identity
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    a = a + a.T
    orig = rm.parametrizations.weight.original
    tm.weight, rm.weight = torch.tensor(a), R.tensor(a)
    assert rm.parametrizations.weight.original is orig
    _close(rm.weight, tm.weight)
    _same_state(rm, tm)
    # a state dict round trip into a fresh parametrized module
    fresh = RZ.register_parametrization(R.nn.Linear(3, 3), "weight", _symmetric(R)())
    RZ.register_parametrization(fresh, "weight", _scale(R, 2.0)())
    RZ.register_parametrization(fresh, "bias", _scale(R, 3.0)())
    fresh.load_state_dict(rm.state_dict())
    _close(fresh.weight, tm.weight)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    tm, rm = _pair("Linear", 3, 3)
    TZ.register_parametrization(tm, "weight", _scale(torch, 2.0)())
    RZ.register_parametrization(rm, "weight", _scale(R, 2.0)())
    TZ.register_parametrization(tm, "bias", _scale(torch, 3.0)())
    RZ.register_parametrization(rm, "bias", _scale(R, 3.0)())
    orig = rm.parametrizations.weight.original
    TZ.remove_parametrizations(tm, "weight", leave)
    RZ.remove_parametrizations(rm, "weight", leave)
    assert type(rm).__name__ == "ParametrizedLinear" and rm.weight is orig
    _same_state(rm, tm)
    TZ.remove_parametrizations(tm, "bias", leave)
    RZ.remove_parametrizations(rm, "bias", leave)
    assert type(rm) is R.nn.Linear and not hasattr(rm, "parametrizations")
    _same_state(rm, tm)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        RZ.remove_parametrizations(rm, "weight")


def test_cached_computes_once():
    calls = []

    class Counted(R.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 2

    m = RZ.register_parametrization(R.nn.Linear(2, 2), "weight", Counted())
    calls.clear()
    with RZ.cached():
        with RZ.cached():
            w1 = m.weight
        assert m.weight is w1
    assert len(calls) == 1
    assert m.weight is not w1 and len(calls) == 2


def test_unsafe_and_errors_match_torch():
    class Grow(R.nn.Module):
        def forward(self, x):
            return R.cat([x, x])

    class TGrow(torch.nn.Module):
        def forward(self, x):
            return torch.cat([x, x])

    for unsafe in (False, True):
        tm, rm = _pair("Linear", 2, 2)
        if not unsafe:
            with pytest.raises(ValueError) as te:
                TZ.register_parametrization(tm, "weight", TGrow())
            with pytest.raises(ValueError) as re_:
                RZ.register_parametrization(rm, "weight", Grow())
            assert str(re_.value) == str(te.value)
            continue
        TZ.register_parametrization(tm, "weight", TGrow(), unsafe=True)
        RZ.register_parametrization(rm, "weight", Grow(), unsafe=True)
        _close(rm.weight, tm.weight)
    # a second, shape-changing parametrization on a parametrized tensor
    tm, rm = _pair("Linear", 2, 2)
    TZ.register_parametrization(tm, "weight", torch.nn.Tanh())
    RZ.register_parametrization(rm, "weight", R.nn.Tanh())
    with pytest.raises(ValueError) as te:
        TZ.register_parametrization(tm, "weight", TGrow())
    with pytest.raises(ValueError) as re_:
        RZ.register_parametrization(rm, "weight", Grow())
    assert str(re_.value) == str(te.value)
    # no right_inverse: assigning is refused
    with pytest.raises(RuntimeError) as te:
        tm.weight = torch.ones(2, 2)
    with pytest.raises(RuntimeError) as re_:
        rm.weight = R.ones(2, 2)
    assert str(re_.value) == str(te.value)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'nope'"):
        RZ.register_parametrization(rm, "nope", R.nn.Tanh())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(rm)
    clone = copy.deepcopy(rm)
    _close(clone.weight, rm.weight)
    assert clone.parametrizations.weight.original is not rm.parametrizations.weight.original


def test_transfer_parametrizations_and_params():
    tm, rm = _pair("Linear", 3, 3)
    TZ.register_parametrization(tm, "weight", _scale(torch, 2.0)())
    RZ.register_parametrization(rm, "weight", _scale(R, 2.0)())
    tt = TZ.transfer_parametrizations_and_params(tm, torch.nn.Linear(3, 3))
    rt = RZ.transfer_parametrizations_and_params(rm, R.nn.Linear(3, 3))
    _close(rt.weight, tt.weight)
    assert rt.parametrizations.weight.original is rm.parametrizations.weight.original


@pytest.mark.parametrize("kw", [{}, {"orthogonal_map": "cayley"},
                                {"orthogonal_map": "householder"},
                                {"orthogonal_map": "householder",
                                 "use_trivialization": False}])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_matches_torch(kw, shape):
    tm, rm = _pair("Linear", shape[1], shape[0])
    torch.manual_seed(1)
    R.manual_seed(1)  # the completion of a non-square base draws randn, as PyTorch's
    TP.orthogonal(tm, **kw)
    RP.orthogonal(rm, **kw)
    w = rm.weight
    eye = R.eye(min(shape))
    _close(w @ w.T if shape[0] <= shape[1] else w.T @ w, eye, 1e-5)
    _close(w, tm.weight, 1e-5)
    _same_state(rm, tm, 1e-5)
    _train_twice(tm, rm, np.random.default_rng(2).standard_normal((2, shape[1]))
                 .astype(np.float32))
    # assigning an orthogonal matrix back (right_inverse)
    q = np.linalg.qr(np.random.default_rng(3).standard_normal(
        (max(shape), min(shape))))[0].astype(np.float32)
    q = q if shape[0] >= shape[1] else q.T
    tm.weight, rm.weight = torch.tensor(q), R.tensor(q)
    _close(rm.weight, tm.weight, 1e-5)


@pytest.mark.parametrize("kw", [{}, {"orthogonal_map": "cayley"},
                                {"orthogonal_map": "householder",
                                 "use_trivialization": False}])
@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 3, 4)])
def test_orthogonal_batched_matches_torch(kw, shape):
    w = np.random.default_rng(7).standard_normal(shape).astype(np.float32)

    def holder(mod):
        m = mod.nn.Module()
        m.weight = mod.nn.Parameter(mod.tensor(w))
        return m
    tm, rm = holder(torch), holder(R)
    torch.manual_seed(1)
    R.manual_seed(1)
    TP.orthogonal(tm, **kw)
    RP.orthogonal(rm, **kw)
    _close(rm.weight, tm.weight, 1e-5)
    tm.weight.pow(3).sum().backward()
    rm.weight.pow(3).sum().backward()
    _close(rm.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad,
           1e-5)


def test_orthogonal_errors_match_torch():
    for bad, kw in (("Linear", {"orthogonal_map": "bad"}), ("bias", {})):
        tm, rm = _pair("Linear", 3, 3)
        name = "bias" if bad == "bias" else "weight"
        with pytest.raises(ValueError) as te:
            TP.orthogonal(tm, name, **kw)
        with pytest.raises(ValueError) as re_:
            RP.orthogonal(rm, name, **kw)
        assert str(re_.value) == str(te.value)
    tm, rm = _pair("Linear", 3, 3)
    TP.orthogonal(tm, orthogonal_map="cayley", use_trivialization=False)
    RP.orthogonal(rm, orthogonal_map="cayley", use_trivialization=False)
    _close(rm.weight, tm.weight, 1e-5)
    with pytest.raises(NotImplementedError) as te:
        tm.weight = torch.eye(3)
    with pytest.raises(NotImplementedError) as re_:
        rm.weight = R.eye(3)
    assert str(re_.value) == str(te.value)


@pytest.mark.parametrize("dim", [0, 1, -1, None])
def test_weight_norm_parametrization(dim):
    tm, rm = _pair("Conv1d", 2, 3, 2)
    TP.weight_norm(tm, dim=dim)
    RP.weight_norm(rm, dim=dim)
    _same_state(rm, tm)
    _close(rm.weight, tm.weight)
    _train_twice(tm, rm, np.random.default_rng(4).standard_normal((2, 2, 5))
                 .astype(np.float32))


def test_weight_norm_parametrization_loads_legacy_state_dict():
    tm, rm = _pair("Linear", 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(tm)
    legacy = {k: R.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    RP.weight_norm(rm)
    rm.load_state_dict(legacy)
    _close(rm.weight, tm.weight)


@pytest.mark.parametrize("cls,args", [("Linear", (3, 4)), ("ConvTranspose1d", (3, 2, 2)),
                                      ("Conv1d", (3, 2, 2))])
def test_spectral_norm_parametrization(cls, args):
    tm, rm = _pair(cls, *args)
    torch.manual_seed(3)
    R.manual_seed(3)  # u and v start from normal_ draws, the same stream as PyTorch's
    TP.spectral_norm(tm, n_power_iterations=2)
    RP.spectral_norm(rm, n_power_iterations=2)
    _same_state(rm, tm, 1e-5)
    x = np.random.default_rng(5).standard_normal((2, 3) if cls == "Linear" else (2, 3, 4))
    _train_twice(tm, rm, x.astype(np.float32), 1e-4)
    _same_state(rm, tm, 1e-5)
    tm.eval()
    rm.eval()
    _close(rm.weight, tm.weight, 1e-5)
    _same_state(rm, tm, 1e-5)  # eval mode: no power iteration, buffers unchanged
    with pytest.raises(IndexError) as te:
        TP.spectral_norm(torch.nn.Linear(2, 2), dim=2)
    with pytest.raises(IndexError) as re_:
        RP.spectral_norm(R.nn.Linear(2, 2), dim=2)
    assert str(re_.value) == str(te.value)


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm(dim):
    tm, rm = _pair("Linear", 3, 4)
    tw = _warns(lambda: torch.nn.utils.weight_norm(tm, dim=dim))
    rw = _warns(lambda: R.nn.utils.weight_norm(rm, dim=dim))
    assert rw == tw and rw[0][0] is FutureWarning
    _same_state(rm, tm)
    _train_twice(tm, rm, X)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        R.nn.utils.weight_norm(rm, dim=dim)
    torch.nn.utils.remove_weight_norm(tm)
    R.nn.utils.remove_weight_norm(rm)
    _same_state(rm, tm)
    assert not rm._forward_pre_hooks and rm._hook_count == 0
    with pytest.raises(ValueError) as te:
        torch.nn.utils.remove_weight_norm(tm)
    with pytest.raises(ValueError) as re_:
        R.nn.utils.remove_weight_norm(rm)
    assert str(re_.value).split(" not found")[0] == str(te.value).split(" not found")[0]


@pytest.mark.parametrize("cls,args", [("Linear", (3, 4)), ("ConvTranspose1d", (3, 2, 2))])
def test_legacy_spectral_norm(cls, args):
    tm, rm = _pair(cls, *args)
    torch.manual_seed(5)
    R.manual_seed(5)
    torch.nn.utils.spectral_norm(tm, n_power_iterations=2)
    R.nn.utils.spectral_norm(rm, n_power_iterations=2)
    x = np.random.default_rng(6).standard_normal((2, 3) if cls == "Linear" else (2, 3, 5))
    _train_twice(tm, rm, x.astype(np.float32), 1e-4)
    ts, rs = tm.state_dict(), rm.state_dict()
    assert rs._metadata[""] == ts._metadata[""] == {"version": 1, "spectral_norm":
                                                     {"weight.version": 1}}
    _same_state(rm, tm, 1e-5)
    if cls == "Linear":  # a version-0 checkpoint: weight_v is solved from the others
        t0 = collections.OrderedDict((k, v.clone()) for k, v in ts.items() if k != "weight_v")
        t0["weight"] = tm.weight.detach().clone()
        r0 = collections.OrderedDict((k, R.tensor(v.numpy())) for k, v in t0.items())
        t0._metadata = {"": {"version": 1}}
        r0._metadata = {"": {"version": 1}}
        tm.load_state_dict(t0)
        rm.load_state_dict(r0)
        _close(rm.weight_v, tm.weight_v, 1e-5)
    torch.nn.utils.remove_spectral_norm(tm)
    R.nn.utils.remove_spectral_norm(rm)
    _same_state(rm, tm, 1e-5)
    assert rm._hook_count == 0 and not rm._state_dict_hooks and \
        not rm._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        R.nn.utils.remove_spectral_norm(rm)


@pytest.mark.parametrize("make", [
    lambda m: RP.orthogonal(m),
    lambda m: RP.orthogonal(m, orthogonal_map="cayley"),
    lambda m: RP.orthogonal(m, orthogonal_map="householder"),
    lambda m: RP.weight_norm(m),
    lambda m: RP.spectral_norm(m).eval(),
])
def test_parametrizations_gradcheck_float64(make):
    R.manual_seed(0)
    m = make(R.nn.Linear(3, 3, dtype=R.float64))
    plist = m.parametrizations.weight
    inputs = tuple(p.detach().clone() for _, p in plist.named_parameters(recurse=False))
    if plist.is_tensor:
        # householder reads the signs of the diagonal through an int cast (no gradient, as
        # PyTorch's); keep the diagonal away from the integers where that cast jumps
        inputs[0].diagonal().sub_(0.5)

    def f(*tensors):
        return plist[0](*tensors)

    inputs = tuple(t.requires_grad_() for t in inputs)
    assert R.autograd.gradcheck(f, inputs)
    assert R.autograd.gradgradcheck(f, inputs)
