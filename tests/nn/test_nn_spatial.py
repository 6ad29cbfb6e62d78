"""The spatial layers against torch: padding modules and F.pad, pixel/channel shuffles,
fold/unfold, adaptive max pooling, max unpooling, LP pooling, upsampling."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R

RNG = np.random.default_rng(0)


def _both(shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    return (R.tensor(a, dtype=getattr(R, dtype), requires_grad=True),
            torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True))


def _grad_fn_name(y) -> str:
    y = y[0] if isinstance(y, tuple) else y
    return type(y.grad_fn).__name__ if isinstance(y, torch.Tensor) else y.grad_fn.name()


def _compare(fn, shape, grad_fn=True):
    """Values, dtypes, first derivatives (random output gradient) and the grad_fn name."""
    r, t = _both(shape)
    yr, yt = fn(R, r), fn(torch, t)
    outs_r = yr if isinstance(yr, tuple) else (yr,)
    outs_t = yt if isinstance(yt, tuple) else (yt,)
    for a, b in zip(outs_r, outs_t):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    if grad_fn:
        assert _grad_fn_name(yr) == _grad_fn_name(yt)
    g = RNG.standard_normal(tuple(outs_t[0].shape))
    outs_r[0].backward(R.tensor(g))
    outs_t[0].backward(torch.tensor(g))
    np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


CASES = [
    ("pixel_shuffle", lambda m, x: m.nn.functional.pixel_shuffle(x, 2), (2, 8, 2, 3)),
    ("pixel_shuffle_5d", lambda m, x: m.nn.functional.pixel_shuffle(x, 3), (2, 1, 9, 1, 2)),
    ("pixel_unshuffle", lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), (2, 4, 6)),
    ("channel_shuffle", lambda m, x: m.nn.functional.channel_shuffle(x, 3), (2, 6, 2, 2)),
    ("unfold", lambda m, x: m.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                   stride=(2, 1)), (2, 3, 5, 6)),
    ("unfold_unbatched", lambda m, x: m.nn.functional.unfold(x, 2), (3, 4, 4)),
    ("fold", lambda m, x: m.nn.functional.fold(x, (4, 5), 2, padding=1, stride=2),
     (2, 12, 9)),
    ("fold_unbatched", lambda m, x: m.nn.functional.fold(x, (3, 3), 2), (4, 4)),
    ("adaptive_max_pool1d", lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3, True),
     (2, 3, 7)),
    ("adaptive_max_pool2d", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (3, None),
                                                                             True), (2, 5, 4)),
    ("adaptive_max_pool2d_up", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 5),
     (1, 2, 3, 4)),
    ("adaptive_max_pool3d", lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, 3, 2),
                                                                             True),
     (1, 2, 5, 4, 3)),
    ("adaptive_avg_pool3d", lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, (2, 3, 1)),
     (2, 5, 4, 3)),
    ("max_pool3d_with_indices", lambda m, x: m.nn.functional.max_pool3d(
        x, 2, return_indices=True), (1, 2, 4, 4, 4)),
    ("lp_pool1d", lambda m, x: m.nn.functional.lp_pool1d(x.abs() + 0.1, 3, 2), (2, 3, 6)),
    ("lp_pool2d", lambda m, x: m.nn.functional.lp_pool2d(x, 2, (2, 3), stride=1,
                                                         ceil_mode=True), (2, 4, 5)),
    ("lp_pool3d", lambda m, x: m.nn.functional.lp_pool3d(x, 2.0, 2), (1, 2, 4, 4, 4)),
    ("lp_pool_inf", lambda m, x: m.nn.functional.lp_pool2d(x, float("inf"), 2), (1, 4, 4)),
    ("pad_reflect3d", lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1, 1, 0), "reflect"),
     (2, 3, 4, 4)),
    ("pad_circular_neg", lambda m, x: m.nn.functional.pad(x, (-1, 2), "circular"), (2, 3, 4)),
    ("pad_replicate_neg", lambda m, x: m.nn.functional.pad(x, (-1, 2, 1, -2), "replicate"),
     (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
def test_functional_against_torch(name, fn, shape):
    _compare(fn, shape, grad_fn=not name.startswith(("pad_", "adaptive_avg", "lp_pool_inf")))


def _unpool(nsp):
    def fn(m, x):
        F = m.nn.functional
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nsp - 1]
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nsp - 1]
        y, i = pool(x.detach(), 2, return_indices=True)
        y = y * x.sum()  # a differentiable input to the unpooling
        size = [s * 2 + 1 for s in y.shape[-nsp:]]
        return unpool(y, i, 2, output_size=size)
    return fn


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_max_unpool_against_torch(nsp):
    _compare(_unpool(nsp), (2, 2) + (4,) * nsp, grad_fn=nsp > 1)


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.functional.pixel_shuffle(x, 2), (1, 4, 2, 2)),
    (lambda m, x: m.nn.functional.channel_shuffle(x, 2), (1, 4, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2, padding=1), (1, 2, 3, 3)),
    (lambda m, x: m.nn.functional.fold(x, (3, 4), 2), (1, 8, 6)),
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 2), (1, 3, 5)),
    (lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 2), (1, 3, 3, 3)),
    (lambda m, x: m.nn.functional.lp_pool2d(x, 2, 2), (1, 4, 4)),
])
def test_gradcheck_gradgradcheck(fn, shape):
    r, _ = _both(shape)
    assert R.autograd.gradcheck(lambda x: fn(R, x), (r,))
    assert R.autograd.gradgradcheck(lambda x: fn(R, x), (r,))


def test_adaptive_max_pool_nan_and_ties_as_torch():
    a = np.array([[[1.0, np.nan, 3.0, np.nan, 3.0, 0.0, 2.0, 2.0]]])
    yr, ir = R.nn.functional.adaptive_max_pool1d(R.tensor(a), 3, return_indices=True)
    yt, it = torch.nn.functional.adaptive_max_pool1d(torch.tensor(a), 3, return_indices=True)
    assert ir.tolist() == it.tolist()
    np.testing.assert_array_equal(yr.numpy(), yt.numpy())


MODULES = [
    ("ZeroPad1d", (1,), (2, 3)), ("ZeroPad2d", ((1, 2, 0, 1),), (1, 2, 3)),
    ("ZeroPad3d", (1,), (1, 2, 2, 2)), ("ConstantPad1d", ((2, 1), 3.5), (1, 2, 3)),
    ("ConstantPad2d", (1, -1.0), (2, 3)), ("ConstantPad3d", ((1, 0, 0, 1, 1, 0), 2.0),
                                            (2, 2, 2, 2)),
    ("ReflectionPad1d", (2,), (2, 4)), ("ReflectionPad2d", ((1, 0, 2, 1),), (1, 2, 3, 3)),
    ("ReflectionPad3d", (1,), (2, 2, 2, 2)), ("ReplicationPad1d", ((3, 1),), (1, 2, 3)),
    ("ReplicationPad2d", (2,), (2, 3, 3)), ("ReplicationPad3d", (1,), (1, 1, 2, 2, 2)),
    ("CircularPad1d", (2,), (2, 3)), ("CircularPad2d", ((1, 2, 2, 1),), (1, 2, 3, 3)),
    ("CircularPad3d", (1,), (1, 2, 2, 2)),
    ("PixelShuffle", (2,), (1, 8, 2, 2)), ("PixelUnshuffle", (2,), (2, 4, 2)),
    ("ChannelShuffle", (2,), (1, 4, 2, 2)),
    ("Upsample", (None, 2.0), (1, 2, 3)), ("Upsample", (4, None, "linear", True), (1, 2, 3)),
    ("Upsample", ((3, 5), None, "bilinear"), (1, 2, 2, 3)),
    ("UpsamplingNearest2d", (None, 2), (1, 1, 2, 3)),
    ("UpsamplingBilinear2d", ((3, 4),), (1, 1, 2, 3)),
    ("Fold", ((3, 4), 2), (1, 8, 6)), ("Unfold", (2, 1, 1, 2), (1, 2, 3, 3)),
    ("AdaptiveMaxPool1d", (2,), (1, 2, 5)), ("AdaptiveMaxPool2d", ((2, None),), (1, 3, 3)),
    ("AdaptiveMaxPool3d", (2,), (1, 1, 3, 3, 3)), ("AdaptiveAvgPool3d", (2,), (1, 3, 3, 3)),
    ("LPPool1d", (2, 3), (1, 2, 6)), ("LPPool2d", (2.0, 3, 2, True), (1, 1, 5, 5)),
    ("LPPool3d", (1, 2), (1, 1, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,shape", MODULES, ids=[m[0] for m in MODULES])
def test_modules_against_torch(name, args, shape):
    mr, mt = getattr(R.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(mr) == repr(mt)
    _compare(lambda m, x: (mr if m is R else mt)(x), shape, grad_fn=False)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_modules(n):
    mr, mt = getattr(R.nn, f"MaxUnpool{n}d")(2), getattr(torch.nn, f"MaxUnpool{n}d")(2)
    assert repr(mr) == repr(mt)
    a = RNG.standard_normal((1, 2) + (4,) * n)
    pr, pt = getattr(R.nn, f"MaxPool{n}d")(2, return_indices=True), \
        getattr(torch.nn, f"MaxPool{n}d")(2, return_indices=True)
    yr, yt = mr(*pr(R.tensor(a))), mt(*pt(torch.tensor(a)))
    np.testing.assert_array_equal(yr.numpy(), yt.numpy())


@pytest.mark.parametrize("name,kwargs", [("upsample", {"scale_factor": 2}),
                                         ("upsample_nearest", {"size": 5}),
                                         ("upsample_bilinear", {"scale_factor": 2})])
def test_deprecated_upsample(name, kwargs):
    a = RNG.standard_normal((1, 2, 3, 3))
    out = []
    for m in (R, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out.append(getattr(m.nn.functional, name)(m.tensor(a), **kwargs).numpy())
        assert [str(x.message) for x in w] == [
            f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead."]
        assert w[0].category is UserWarning and w[0].filename == __file__
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


ERRORS = [
    lambda m: m.nn.functional.pixel_shuffle(m.ones(4, 4), 2),
    lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 4, 4, 4), 0),
    lambda m: m.nn.functional.pixel_shuffle(m.ones(1, 4, 4, 4), 3),
    lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 4, 4, 4), 3),
    lambda m: m.nn.functional.pixel_unshuffle(m.ones(1, 4, 4, 3), 2),
    lambda m: m.nn.functional.channel_shuffle(m.ones(1, 4, 4), 3),
    lambda m: m.nn.functional.channel_shuffle(m.ones(1, 4, 4), 0),
    lambda m: m.nn.functional.channel_shuffle(m.ones(4, 4), 2),
    lambda m: m.nn.functional.unfold(m.ones(1, 1, 4, 4), 0),
    lambda m: m.nn.functional.unfold(m.ones(1, 1, 4, 4), 5),
    lambda m: m.nn.functional.fold(m.ones(1, 5, 9), (4, 4), 2),
    lambda m: m.nn.functional.fold(m.ones(1, 8, 8), (4, 4), 2),
    lambda m: m.nn.functional.adaptive_max_pool2d(m.ones(4, 4), 2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 1).long(), 2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2), 2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.full((1, 1, 2, 2), 99).long(),
                                           2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2).long(), 2,
                                           output_size=(9, 9)),
    lambda m: m.nn.functional.pad(m.ones(3), (1, 1), mode="reflect"),
    lambda m: m.nn.functional.pad(m.ones(3, 3), (1, 1, 1, 1), mode="replicate"),
    lambda m: m.nn.functional.pad(m.ones(1, 3, 3), (1, 1), mode="reflect", value=1.0),
    lambda m: m.nn.functional.pad(m.ones(1, 3, 3), (3, 1), mode="reflect"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_torch(i):
    with pytest.raises(Exception) as et:
        ERRORS[i](torch)
    with pytest.raises(type(et.value)) as er:
        ERRORS[i](R)
    assert str(er.value).startswith(str(et.value).split("\n")[0])
