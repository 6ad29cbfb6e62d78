"""nn.utils.prune against torch: masks (random ones too: retrograd's rand stream is
PyTorch's, so the same seed gives the same masks), names, hooks, containers, remove and
errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TPr

import retrograd as R
import retrograd.nn.utils.prune as RPr


def _pair(cls, *args, **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw)
    rm = getattr(R.nn, cls)(*args, **kw)
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, rm


def _same(tm, rm):
    ts, rs = tm.state_dict(), rm.state_dict()
    assert list(rs) == list(ts)
    for k in ts:
        np.testing.assert_array_equal(rs[k].numpy(), ts[k].numpy(), err_msg=k)
    assert sorted(n for n, _ in rm.named_parameters()) == \
        sorted(n for n, _ in tm.named_parameters())


def _both(fn, tm, rm, seed=7):
    torch.manual_seed(seed)
    fn(TPr, torch, tm)
    R.manual_seed(seed)
    fn(RPr, R, rm)
    _same(tm, rm)


@pytest.mark.parametrize("step", [
    lambda P, M, m: P.random_unstructured(m, "weight", amount=0.3),
    lambda P, M, m: P.random_unstructured(m, "weight", amount=5),
    lambda P, M, m: P.l1_unstructured(m, "weight", amount=0.5),
    lambda P, M, m: P.l1_unstructured(m, "weight", amount=3,
                                      importance_scores=M.arange(36.).reshape(4, 3, 3)),
    lambda P, M, m: P.random_structured(m, "weight", amount=2, dim=0),
    lambda P, M, m: P.random_structured(m, "weight", amount=0.34, dim=-1),
    lambda P, M, m: P.ln_structured(m, "weight", amount=1, n=2, dim=1),
    lambda P, M, m: P.ln_structured(m, "weight", amount=0.5, n=float("inf"), dim=0),
    lambda P, M, m: P.ln_structured(m, "weight", amount=0, n=1, dim=0),
    lambda P, M, m: P.custom_from_mask(m, "bias", M.tensor([1., 0., 1., 0.])),
    lambda P, M, m: P.identity(m, "weight"),
])
def test_single_methods_match_torch(step):
    tm, rm = _pair("Conv1d", 3, 4, 3)
    _both(step, tm, rm)
    assert RPr.is_pruned(rm) and rm._hook_count == 1
    x = np.random.default_rng(0).standard_normal((2, 3, 6)).astype(np.float32)
    tm(torch.tensor(x)).pow(2).sum().backward()
    rm(R.tensor(x)).pow(2).sum().backward()
    for (n, a), (_, b) in zip(sorted(tm.named_parameters()), sorted(rm.named_parameters())):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), atol=1e-5, err_msg=n)


def test_iterative_pruning_container_and_remove():
    tm, rm = _pair("Conv2d", 3, 4, 3)

    def steps(P, M, m):
        P.random_unstructured(m, "weight", 0.3)
        P.l1_unstructured(m, "weight", amount=10)
        P.random_structured(m, "weight", 1, dim=0)
        P.ln_structured(m, "weight", 0.34, n=1, dim=1)
        P.custom_from_mask(m, "weight", M.ones(4, 3, 3, 3))
        P.identity(m, "bias")
    _both(steps, tm, rm)
    hooks = list(rm._forward_pre_hooks.values())
    assert [type(h).__name__ for h in hooks] == ["PruningContainer", "Identity"]
    assert len(hooks[0]) == 5 and isinstance(hooks[0][1], RPr.L1Unstructured)
    assert rm._hook_count == 2
    x = np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(rm(R.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), atol=1e-5)
    weight_orig = rm.weight_orig
    TPr.remove(tm, "weight")
    RPr.remove(rm, "weight")
    _same(tm, rm)
    assert rm.weight is weight_orig and isinstance(rm.weight, R.nn.Parameter)
    TPr.remove(tm, "bias")
    RPr.remove(rm, "bias")
    _same(tm, rm)
    assert not RPr.is_pruned(rm) and rm._hook_count == 0 and not rm._forward_pre_hooks
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned "
                                         "before pruning can be removed"):
        RPr.remove(rm, "weight")


@pytest.mark.parametrize("method,kw", [("L1Unstructured", {"amount": 0.4}),
                                       ("L1Unstructured", {"amount": 7}),
                                       ("RandomUnstructured", {"amount": 0.5})])
def test_global_unstructured(method, kw):
    ta, ra = _pair("Linear", 4, 3)
    tb, rb = _pair("Linear", 3, 2)
    TPr.l1_unstructured(ta, "weight", 2)
    RPr.l1_unstructured(ra, "weight", 2)
    torch.manual_seed(3)
    TPr.global_unstructured([(ta, "weight"), (tb, "weight"), (ta, "bias")],
                            getattr(TPr, method), **kw)
    R.manual_seed(3)
    RPr.global_unstructured([(ra, "weight"), (rb, "weight"), (ra, "bias")],
                            getattr(RPr, method), **kw)
    _same(ta, ra)
    _same(tb, rb)
    scores = {(tb, "weight"): torch.arange(6.).reshape(2, 3)}
    rscores = {(rb, "weight"): R.arange(6.).reshape(2, 3)}
    TPr.global_unstructured([(tb, "weight")], TPr.L1Unstructured, scores, amount=2)
    RPr.global_unstructured([(rb, "weight")], RPr.L1Unstructured, rscores, amount=2)
    _same(tb, rb)


def test_module_level_helpers_and_prune_method():
    t = np.array([[3., -1., 2.], [0.5, -4., 0.1]], np.float32)
    for cls, kw in (("L1Unstructured", {"amount": 2}),
                    ("LnStructured", {"amount": 1, "n": 2, "dim": 0})):
        tp = getattr(TPr, cls)(**kw).prune(torch.tensor(t))
        rp = getattr(RPr, cls)(**kw).prune(R.tensor(t))
        np.testing.assert_array_equal(rp.numpy(), tp.numpy())
    net_t = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    net_r = R.nn.Sequential(R.nn.Linear(2, 2), R.nn.Linear(2, 1))
    assert RPr.is_pruned(net_r) is TPr.is_pruned(net_t) is False
    TPr.identity(net_t[1], "weight")
    RPr.identity(net_r[1], "weight")
    assert RPr.is_pruned(net_r) is TPr.is_pruned(net_t) is True


def _errors(fn_r, fn_t, exc):
    with pytest.raises(exc) as te:
        fn_t()
    with pytest.raises(exc) as re_:
        fn_r()
    assert str(re_.value) == str(te.value).replace("torch.nn.", "retrograd.nn.")


@pytest.mark.parametrize("call,exc", [
    (lambda P, M, m: P.l1_unstructured(m, "weight", amount=1.5), ValueError),
    (lambda P, M, m: P.l1_unstructured(m, "weight", amount=-1), ValueError),
    (lambda P, M, m: P.l1_unstructured(m, "weight", amount="a"), TypeError),
    (lambda P, M, m: P.l1_unstructured(m, "weight", amount=100), ValueError),
    (lambda P, M, m: P.random_structured(m, "bias", amount=1, dim=0), ValueError),
    (lambda P, M, m: P.ln_structured(m, "weight", amount=1, n=2, dim=3), IndexError),
    (lambda P, M, m: P.global_unstructured([(m, "weight")], P.RandomStructured, amount=1),
     TypeError),
    (lambda P, M, m: P.global_unstructured([(m, "weight")], P.L1Unstructured, [], amount=1),
     TypeError),
    (lambda P, M, m: P.global_unstructured(3, P.L1Unstructured, amount=1), TypeError),
])
def test_errors_match_torch(call, exc):
    tm, rm = _pair("Linear", 3, 2)
    _errors(lambda: call(RPr, R, rm), lambda: call(TPr, torch, tm), exc)
    # a failed prune leaves the module as it was
    assert sorted(n for n, _ in rm.named_parameters()) == ["bias", "weight"]
    assert rm._hook_count == 0
