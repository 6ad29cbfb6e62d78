"""The margin/ranking/NLL/triplet losses, distances, shrink/randomized activations, the
in-place functional activations, RMS/local-response norms and gumbel_softmax against
torch: values, dtypes, shapes for every reduction, gradients, float64 gradcheck and
gradgradcheck, errors, warnings, reprs and seeded draws."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import retrograd as R
import retrograd.nn as rnn
import retrograd.nn.functional as F
from _nn_gradcheck import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
REDUCTIONS = ("none", "mean", "sum")


def _np(t):
    return t.detach().numpy()


def _run(fn, lib, arrays, rg):
    ts = [lib.tensor(a, requires_grad=g) if isinstance(a, np.ndarray) else a
          for a, g in zip(arrays, rg)]
    return ts, fn(lib, *ts)


def _compare(fn, arrays, rg=None, rtol=1e-5, atol=1e-6, check_grad=True):
    """fn(lib, *tensors) with lib = torch and retrograd: value, shape, dtype, gradient."""
    rg = rg or [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    tt, to = _run(fn, torch, arrays, rg)
    rt, ro = _run(fn, R, arrays, rg)
    assert tuple(ro.shape) == tuple(to.shape)
    assert str(ro.dtype) == str(to.dtype)
    np.testing.assert_allclose(_np(ro), _np(to), rtol=rtol, atol=atol)
    if check_grad and to.requires_grad:
        v = RNG.standard_normal(tuple(to.shape))
        to.backward(torch.tensor(v, dtype=to.dtype))
        ro.backward(R.tensor(v, dtype=ro.dtype))
        for t, r, g in zip(tt, rt, rg):
            if g:
                tg = np.zeros(t.shape) if t.grad is None else _np(t.grad)
                rgr = np.zeros(r.shape) if r.grad is None else _np(r.grad)
                np.testing.assert_allclose(rgr, tg, rtol=rtol, atol=atol)
    return ro


def _lib_F(lib):
    return TF if lib is torch else F


def _gradchecks(fn, arrays, second=True):
    ts = [R.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda: fn(*ts), ts)
    if second:
        assert gradgradcheck(lambda: fn(*ts), ts)


# ---------------------------------------------------------------------------------
# losses

def _x(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _sign(*shape, dtype=np.float64):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0).astype(dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_margin_losses(reduction, dtype):
    x1, x2, y = _x(4, 3, dtype=dtype), _x(4, 3, dtype=dtype), _sign(4, 3, dtype=dtype)
    _compare(lambda L, a, b, t: _lib_F(L).margin_ranking_loss(a, b, t, 0.3,
                                                              reduction=reduction),
             [x1, x2, y], [True, True, False])
    _compare(lambda L, a, t: _lib_F(L).hinge_embedding_loss(a, t, 0.7, reduction=reduction),
             [x1, y], [True, False])
    _compare(lambda L, a, t: _lib_F(L).soft_margin_loss(a, t, reduction=reduction),
             [x1, y], [True, False])
    _compare(lambda L, a, t: _lib_F(L).soft_margin_loss(a, t, reduction=reduction),
             [x1, y.astype(np.int64)], [True, False])  # the input's dtype, as torch
    _compare(lambda L, a, t: _lib_F(L).multilabel_soft_margin_loss(a, t, reduction=reduction),
             [x1, (y > 0).astype(dtype)], [True, True])
    w = RNG.random(3).astype(dtype)
    _compare(lambda L, a, t, ww: _lib_F(L).multilabel_soft_margin_loss(
        a, t, ww, reduction=reduction), [x1, (y > 0).astype(dtype), w], [True, False, True])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_and_gaussian_nll(reduction):
    x, t = _x(3, 4), RNG.poisson(2.0, (3, 4)).astype(np.float64)
    for log_input in (True, False):
        for full in (False, True):
            inp = x if log_input else np.abs(x) + 0.1
            _compare(lambda L, a, b, li=log_input, fu=full: _lib_F(L).poisson_nll_loss(
                a, b, li, fu, reduction=reduction), [inp, t], [True, True])
    mu, tgt = _x(4, 3), _x(4, 3)
    for var in (np.abs(_x(4, 3)), np.abs(_x(4)), np.abs(_x(4, 1)), np.abs(_x(1, 3))):
        for full in (False, True):
            _compare(lambda L, a, b, v, fu=full: _lib_F(L).gaussian_nll_loss(
                a, b, v, fu, eps=1e-3, reduction=reduction), [mu, tgt, var])
    _compare(lambda L, a, b: _lib_F(L).gaussian_nll_loss(a, b, 0.5, reduction=reduction),
             [mu, tgt])


def test_gaussian_nll_clamp_keeps_var_gradient():
    # the clamp runs under no_grad: var below eps still gets the unclamped rule's gradient
    _compare(lambda L, a, b, v: _lib_F(L).gaussian_nll_loss(a, b, v, eps=0.5),
             [_x(5), _x(5), np.array([0.1, 0.2, 1.0, 2.0, 0.0])])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(3, 5), (5,)])
def test_class_margin_losses(reduction, shape):
    x = _x(*shape)
    c = shape[-1]
    rows = 1 if len(shape) == 1 else shape[0]
    tgt = np.full((rows, c), -1, dtype=np.int64)
    tgt[0, :3] = [3, 0, 3]           # a duplicate target counts twice, as the kernel
    if rows > 1:
        tgt[1, :1] = [2]
        tgt[2, :] = [4, 1, 0, 2, 3]  # every class a target: zero loss
    tgt = tgt.reshape(shape)
    _compare(lambda L, a, t: _lib_F(L).multilabel_margin_loss(a, t, reduction=reduction),
             [x, tgt])
    cls = RNG.integers(0, c, rows).astype(np.int64).reshape(shape[:-1])
    w = RNG.random(c) + 0.5
    for p in (1, 2):
        _compare(lambda L, a, t, p=p: _lib_F(L).multi_margin_loss(
            a, t, p, 0.8, reduction=reduction), [x, cls])
        _compare(lambda L, a, t, ww, p=p: _lib_F(L).multi_margin_loss(
            a, t, p, 1.3, ww, reduction=reduction), [x, cls, w], [True, False, False])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triplet_losses(reduction):
    a, p, n = _x(4, 3), _x(4, 3), _x(4, 3)
    for pn in (1.0, 2.0, 3.0):
        for swap in (False, True):
            _compare(lambda L, x, y, z, pn=pn, s=swap: _lib_F(L).triplet_margin_loss(
                x, y, z, 1.5, pn, 1e-6, s, reduction=reduction), [a, p, n])
    for swap in (False, True):
        _compare(lambda L, x, y, z, s=swap: _lib_F(L).triplet_margin_with_distance_loss(
            x, y, z, swap=s, margin=2.0, reduction=reduction), [a, p, n])
        _compare(lambda L, x, y, z, s=swap: _lib_F(L).triplet_margin_with_distance_loss(
            x, y, z, distance_function=lambda u, v: 1 - _lib_F(L).cosine_similarity(u, v),
            swap=s, reduction=reduction), [a, p, n])
    _compare(lambda L, x, y, z: _lib_F(L).triplet_margin_loss(x, y, z), [a[0], p[0], n[0]])


def test_losses_gradcheck_and_gradgradcheck():
    x1, x2, y = _x(3, 4), _x(3, 4), _sign(3, 4)
    yt, yc = R.tensor(y), R.tensor(np.array([1, 3, 0]))
    _gradchecks(lambda a, b: F.margin_ranking_loss(a, b, yt, 0.2), [x1, x2])
    _gradchecks(lambda a: F.hinge_embedding_loss(a, yt, 0.5, reduction="sum"), [x1])
    _gradchecks(lambda a: F.soft_margin_loss(a, yt), [x1])
    _gradchecks(lambda a: F.multilabel_soft_margin_loss(a, (yt > 0).double()), [x1])
    _gradchecks(lambda a, v: F.gaussian_nll_loss(a, yt, v, full=True), [x1, np.abs(x2) + 0.5])
    _gradchecks(lambda a: F.poisson_nll_loss(a, yt.abs() * 2, full=True), [x1])
    mlm = np.array([[1, -1, 0, 0], [3, 2, -1, 0], [0, 1, 2, -1]])
    _gradchecks(lambda a: F.multi_margin_loss(a, yc, p=2), [x1], second=False)
    _gradchecks(lambda a: F.multilabel_margin_loss(a, R.tensor(mlm)), [x1], second=False)
    for L in (torch, R):  # PyTorch has no second derivative of these two kernels
        for f in (lambda a, L=L: _lib_F(L).multi_margin_loss(a, L.tensor([1, 3, 0]), p=2),
                  lambda a, L=L: _lib_F(L).multilabel_margin_loss(a, L.tensor(mlm))):
            a = L.tensor(x1, requires_grad=True)
            g = L.autograd.grad(f(a), a, create_graph=True)[0]
            assert g.grad_fn.name() == "torch::autograd::NotImplemented"
            with pytest.raises(RuntimeError, match="_margin_loss_backward is not implemented"):
                g.sum().backward()
    _gradchecks(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=3.0), [x1, x2, _x(3, 4)])


@pytest.mark.parametrize("name,args", [
    ("margin_ranking_loss", 3), ("hinge_embedding_loss", 2), ("soft_margin_loss", 2),
    ("multilabel_soft_margin_loss", 2), ("poisson_nll_loss", 2), ("triplet_margin_loss", 3),
])
def test_size_average_reduce_warn_and_map(name, args):
    arrays = [_x(3, 2) for _ in range(args)]
    for size_average, reduce in ((False, None), (None, False), (True, True)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            _compare(lambda L, *ts, sa=size_average, rd=reduce: getattr(_lib_F(L), name)(
                *ts, size_average=sa, reduce=rd), arrays,
                [True] * (args - 1) + [name == "triplet_margin_loss"], check_grad=False)
        msgs = [str(w.message) for w in rec]
        assert sum("size_average and reduce args will be deprecated" in m
                   for m in msgs) == 2, msgs


def _errors(fn, exc=Exception):
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as re_:
        fn(R)
    assert str(re_.value).startswith(str(te.value).strip()), (str(re_.value), str(te.value))


def test_loss_errors():
    def T(L, *a, **k):
        return L.tensor(*a, **k)
    _errors(lambda L: _lib_F(L).gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3, 2)))
    _errors(lambda L: _lib_F(L).gaussian_nll_loss(L.ones(2), L.ones(2), -T(L, [1., 1.])))
    _errors(lambda L: _lib_F(L).gaussian_nll_loss(L.ones(2), L.ones(2), L.ones(2),
                                                  reduction="max"))
    _errors(lambda L: _lib_F(L).poisson_nll_loss(L.ones(2), L.ones(2), reduction="max"))
    _errors(lambda L: _lib_F(L).soft_margin_loss(L.ones(2), L.ones(2, requires_grad=True)))
    _errors(lambda L: _lib_F(L).margin_ranking_loss(L.ones(2), L.ones(2), L.ones(2, 1)))
    _errors(lambda L: _lib_F(L).multi_margin_loss(L.ones(2, 3), T(L, [0, 1]), p=3))
    _errors(lambda L: _lib_F(L).multi_margin_loss(L.ones(2, 3), T(L, [0, 1]),
                                                  weight=L.ones(3, 1)))
    _errors(lambda L: _lib_F(L).multi_margin_loss(L.ones(2, 3), T(L, [0, 3])))
    _errors(lambda L: _lib_F(L).multi_margin_loss(L.ones(2, 3), T(L, [0, 1]),
                                                  weight=L.ones(3, requires_grad=True)))
    _errors(lambda L: _lib_F(L).multilabel_margin_loss(L.ones(2, 3), T(L, [[0, 1]])))
    _errors(lambda L: _lib_F(L).triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3),
                                                    margin=1.))
    _errors(lambda L: _lib_F(L).triplet_margin_loss(L.ones(2), L.ones(2), L.ones(2),
                                                    margin=0.))
    _errors(lambda L: _lib_F(L).triplet_margin_with_distance_loss(
        L.ones(2), L.ones(2), L.ones(2), margin=-1.))
    _errors(lambda L: L.nn.MultiMarginLoss(p=3))
    _errors(lambda L: L.nn.MultiMarginLoss(weight=L.ones(2, 2)))
    _errors(lambda L: L.nn.TripletMarginLoss(margin=0))
    _errors(lambda L: L.nn.TripletMarginWithDistanceLoss(margin=0))


def test_loss_modules_match_functional_and_repr():
    x, y, v = _x(3, 4), _sign(3, 4), np.abs(_x(3, 4))
    cases = [
        ("GaussianNLLLoss", dict(full=True, eps=1e-4, reduction="sum"), [x, y, v]),
        ("PoissonNLLLoss", dict(log_input=True, full=True), [x, np.abs(y) * 3]),
        ("MarginRankingLoss", dict(margin=0.5), [x, v, y]),
        ("HingeEmbeddingLoss", dict(margin=2.0, reduction="none"), [x, y]),
        ("SoftMarginLoss", dict(), [x, y.astype(np.int64)]),
        ("MultiLabelSoftMarginLoss", dict(), [x, (y > 0) * 1.0]),
        ("MultiLabelMarginLoss", dict(), [x, np.array([[1, -1, 0, 0]] * 3)]),
        ("MultiMarginLoss", dict(p=2, margin=0.5), [x, np.array([0, 3, 1])]),
        ("TripletMarginLoss", dict(p=1.0, swap=True), [x, v, y]),
        ("TripletMarginWithDistanceLoss", dict(swap=True), [x, v, y]),
    ]
    for name, kw, arrays in cases:
        _compare(lambda L, *ts, n=name, k=kw: getattr(L.nn, n)(**k)(*ts), arrays)
        assert repr(getattr(rnn, name)(**kw)) == repr(getattr(tnn, name)(**kw))
    w = np.array([1.0, 2.0, 0.5, 1.0])
    _compare(lambda L, a, t: L.nn.MultiMarginLoss(weight=L.tensor(w))(a, t),
             [x, np.array([0, 3, 1])])
    assert rnn.MultiMarginLoss(weight=R.tensor(w)).state_dict()["weight"].tolist() == w.tolist()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert rnn.SoftMarginLoss(size_average=False).reduction == "sum"
    assert not rec  # the modules map the legacy arguments silently, as torch's


# ---------------------------------------------------------------------------------
# distances

def test_distances():
    a, b = _x(4, 3), _x(4, 3)
    for p in (1.0, 2.0, 0.5, float("inf")):
        _compare(lambda L, x, y, p=p: _lib_F(L).pairwise_distance(x, y, p, 1e-6, True), [a, b])
        _compare(lambda L, x, p=p: _lib_F(L).pdist(x, p), [a])
    _compare(lambda L, x, y: _lib_F(L).pairwise_distance(x, y), [a, b[0]])
    _compare(lambda L, x, y: L.nn.PairwiseDistance(3.0, keepdim=True)(x, y), [a, b])
    _compare(lambda L, x, y: L.nn.CosineSimilarity(0, 1e-6)(x, y), [a, b])
    dup = np.concatenate([a, a[:1]])      # a repeated row: distance 0, gradient 0 there
    for p in (0.0, 0.5, 1.0, 2.0, 3.0, float("inf")):
        _compare(lambda L, x, p=p: _lib_F(L).pdist(x, p), [dup])
    ties = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 2.0]])  # equal |d| (inf)
    for p in (0.0, 0.5, float("inf")):
        _compare(lambda L, x, p=p: _lib_F(L).pdist(x, p), [ties])
    _compare(lambda L, x: _lib_F(L).pdist(x), [a[:1]])
    _gradchecks(lambda x: F.pdist(x), [a], second=False)
    for L in (torch, R):  # no double backward of pdist in PyTorch
        x = L.tensor(a, requires_grad=True)
        g = L.autograd.grad(L.pdist(x).sum(), x, create_graph=True)[0]
        assert g.grad_fn.name() == "PdistBackwardBackward0"
        with pytest.raises(NotImplementedError, match="_pdist_backward' is not implemented"):
            g.sum().backward()
    _gradchecks(lambda x, y: F.pairwise_distance(x, y, 3.0), [a, b])
    _errors(lambda L: _lib_F(L).pdist(L.ones(2, 2, 2)))
    _errors(lambda L: _lib_F(L).pdist(L.ones(2, 2), -1.))
    assert repr(rnn.PairwiseDistance()) == repr(tnn.PairwiseDistance())
    assert repr(rnn.CosineSimilarity()) == repr(tnn.CosineSimilarity())


# ---------------------------------------------------------------------------------
# activations

def test_shrinks():
    x = np.array([-2.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.7, 1.5])
    nan = np.array([np.nan, 1.0])  # NaN stays NaN (its gradient differs between torch's
    for name in ("hardshrink", "softshrink"):  # vectorized and scalar kernels: not checked)
        _compare(lambda L, t, n=name: getattr(_lib_F(L), n)(t), [nan], check_grad=False)
    for lambd in (0.5, 0.0, 1.0):
        _compare(lambda L, t, lb=lambd: _lib_F(L).hardshrink(t, lb), [x])
        _compare(lambda L, t, lb=lambd: _lib_F(L).softshrink(t, lb), [x])
        _compare(lambda L, t, lb=lambd: L.nn.Hardshrink(lb)(t), [x.astype(np.float32)])
        _compare(lambda L, t, lb=lambd: L.nn.Softshrink(lb)(t), [x.astype(np.float32)])
    _gradchecks(lambda t: F.softshrink(t, 0.1), [_x(5)])
    _gradchecks(lambda t: F.hardshrink(t, 0.1), [_x(5)])
    _errors(lambda L: _lib_F(L).softshrink(L.ones(2), -1.))
    assert repr(rnn.Hardshrink()) == repr(tnn.Hardshrink())
    assert repr(rnn.Softshrink(0.25)) == repr(tnn.Softshrink(0.25))


def test_rrelu_matches_torch_after_seed():
    x = _x(3, 50, dtype=np.float32)
    for dtype in (np.float32, np.float64):
        xs = x.astype(dtype)
        torch.manual_seed(3)
        R.manual_seed(3)
        ro = _compare(lambda L, t: _lib_F(L).rrelu(t, 0.1, 0.4, training=True), [xs])
        torch.manual_seed(3)
        R.manual_seed(3)   # the module in training mode draws the same numbers
        _compare(lambda L, t: L.nn.RReLU(0.1, 0.4)(t), [xs])
        assert _np(ro).min() < 0
    _compare(lambda L, t: _lib_F(L).rrelu(t, 0.1, 0.4), [x])         # eval: mean slope
    _compare(lambda L, t: L.nn.RReLU().eval()(t), [x])
    torch.manual_seed(5)
    R.manual_seed(5)
    _compare(lambda L, t: _lib_F(L).rrelu_(t.clone(), training=True), [x])
    assert torch.rand(3).tolist() == R.rand(3).tolist()             # same stream afterwards
    _errors(lambda L: _lib_F(L).rrelu(L.ones(2), 0.5, 0.1, training=True))
    assert repr(rnn.RReLU(0.1, 0.3, True)) == repr(tnn.RReLU(0.1, 0.3, True))


@pytest.mark.parametrize("name,args", [
    ("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()), ("hardtanh_", (-0.5, 0.8)),
    ("leaky_relu_", (0.2,)), ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3)),
])
def test_inplace_functional_activations(name, args):
    x = _x(3, 4)
    _compare(lambda L, t: getattr(_lib_F(L), name)(t * 1, *args), [x])
    for L in (torch, R):
        t = L.tensor(x)
        v0 = t._version
        out = getattr(_lib_F(L), name)(t, *args)
        assert out is t and t._version == v0 + 1
    with pytest.raises(RuntimeError):
        getattr(F, name)(R.tensor(x, requires_grad=True), *args)


def test_softmax2d():
    _compare(lambda L, t: L.nn.Softmax2d()(t), [_x(2, 3, 2, 2)])
    _compare(lambda L, t: L.nn.Softmax2d()(t), [_x(3, 2, 2)])
    _errors(lambda L: L.nn.Softmax2d()(L.ones(2, 2)))
    assert repr(rnn.Softmax2d()) == "Softmax2d()"


def test_gumbel_softmax_draws_as_torch():
    logits = _x(4, 5)
    for hard in (False, True):
        for dim in (-1, 0):
            torch.manual_seed(11)
            R.manual_seed(11)
            _compare(lambda L, t, h=hard, d=dim: _lib_F(L).gumbel_softmax(t, 0.5, h, dim=d),
                     [logits])
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(R.zeros(3), eps=1e-3)


# ---------------------------------------------------------------------------------
# normalization

def test_rms_norm():
    x = _x(2, 3, 4)
    for shape in ([4], (3, 4)):
        for eps in (None, 1e-3):
            _compare(lambda L, t, s=shape, e=eps: _lib_F(L).rms_norm(t, s, eps=e), [x])
            _compare(lambda L, t, w, s=shape, e=eps: _lib_F(L).rms_norm(t, s, w, e),
                     [x, _x(*np.atleast_1d(shape))])
            _compare(lambda L, t, s=shape, e=eps: _lib_F(L).rms_norm(t, s, eps=e),
                     [x.astype(np.float32)])
    _gradchecks(lambda t, w: F.rms_norm(t, [4], w), [_x(2, 4), _x(4)])
    _errors(lambda L: _lib_F(L).rms_norm(L.ones(2, 3), [4]))
    for kw in (dict(normalized_shape=4), dict(normalized_shape=[3, 4], eps=1e-5,
                                              elementwise_affine=False)):
        tm, rm = tnn.RMSNorm(**kw), rnn.RMSNorm(**kw)
        assert repr(rm) == repr(tm)
        assert list(rm.state_dict()) == list(tm.state_dict())
        _compare(lambda L, t, m={torch: tm, R: rm}: m[L](t), [x.astype(np.float32)])


def test_local_response_norm_and_cross_map_lrn():
    for shape in ((2, 5, 3), (2, 5, 3, 2), (1, 4, 2, 2, 2)):
        for size in (1, 2, 3):
            _compare(lambda L, t, s=size: _lib_F(L).local_response_norm(t, s, 0.1, 0.6, 1.5),
                     [_x(*shape)])
    _compare(lambda L, t: L.nn.LocalResponseNorm(3)(t), [_x(2, 4, 3)])
    _gradchecks(lambda t: F.local_response_norm(t, 3, 0.5, 0.75, 1.0), [_x(1, 4, 3)])
    _errors(lambda L: _lib_F(L).local_response_norm(L.ones(2, 3), 2))
    for channels in (1, 4, 7):  # (size 1 fails in torch's backward: a narrow out of range)
        for size in (2, 3, 5):
            _compare(lambda L, t, s=size: L.nn.CrossMapLRN2d(s, 0.3, 0.7, 2.0)(t),
                     [_x(2, channels, 3, 2)], rtol=1e-5, atol=1e-7)
    _errors(lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)))
    assert repr(rnn.LocalResponseNorm(2)) == repr(tnn.LocalResponseNorm(2))
    assert repr(rnn.CrossMapLRN2d(3)) == repr(tnn.CrossMapLRN2d(3))


def test_top_level_names_and_node_names():
    a, b = _x(4, 3), _x(4, 3)
    _compare(lambda L, x: L.pdist(x, 1.5), [a])
    _compare(lambda L, x, y: L.pairwise_distance(x, y, 2.0, 1e-6, True), [a, b])
    _compare(lambda L, x, y: L.cosine_similarity(x, y, 0), [a, b])
    _compare(lambda L, x: L.rms_norm(x, [3], eps=1e-4), [a])
    _compare(lambda L, x: L.rrelu(x, 0.2, 0.3), [a])
    _compare(lambda L, x: L.hardshrink(x, 0.3), [a])
    _compare(lambda L, x: x.hardshrink(0.3), [a])

    def names(L):
        x = L.tensor(a, requires_grad=True)
        y = x * 1
        _lib_F(L).rrelu_(y, training=True)
        g = L.autograd.grad(_lib_F(L).rrelu(x, training=True).sum(), x, create_graph=True)[0]
        outs = [L.hardshrink(x), _lib_F(L).softshrink(x), _lib_F(L).rrelu(x), y, g]
        return [o.grad_fn.name() for o in outs]
    assert names(R) == names(torch)
