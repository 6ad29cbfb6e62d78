"""Strides of new tensors against PyTorch's (Note [Memory formats] in _core/layouts.py).

clone, ``to``, the ``*_like`` factories and ``empty`` give a new tensor the strides
PyTorch gives it (the input's layout by default, or a named memory format); leaves get
their first .grad in their own layout (Note [Gradient layout contract]).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import retrograd as rg
from retrograd._core import layouts as L

torch = pytest.importorskip("torch")


def _views(seed: int):
    """The same random chain of views in both libraries: (torch tensor, retrograd tensor)."""
    rng = random.Random(seed)
    shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 4))]
    n = int(np.prod(shape))
    base = np.arange(n, dtype=np.float32).reshape(shape) - n / 3
    xs = [torch.tensor(base), rg.tensor(base)]
    for _ in range(rng.randint(1, 4)):
        nd = xs[0].dim()
        r = rng.random()
        if r < 0.3 and nd > 1:
            p = list(range(nd))
            rng.shuffle(p)
            xs = [x.permute(p) for x in xs]
        elif r < 0.5:
            d = rng.randrange(nd)
            if xs[0].shape[d] > 1:
                idx = (slice(None),) * d + (slice(None, None, 2),)
                xs = [x[idx] for x in xs]
        elif r < 0.75:
            d = rng.randrange(nd + 1)
            k = rng.choice([1, 3])
            xs = [x.unsqueeze(d) for x in xs]
            xs = [x.expand(*[k if i == d else -1 for i in range(nd + 1)]) for x in xs]
        elif nd > 1:
            xs = [x.transpose(0, -1) for x in xs]
    return xs


def _strides(x) -> tuple:
    """The strides of dims longer than 1 (a size-1 dim's stride is free in both
    libraries, and each picks its own)."""
    return tuple(s for n, s in zip(x.shape, x.stride()) if n != 1)


def _same(t, r) -> None:
    assert tuple(r.shape) == tuple(t.shape)
    if t.numel():  # (an empty tensor's strides are arbitrary in both)
        assert _strides(r) == _strides(t), (r.stride(), t.stride())
    assert r.is_contiguous() == t.is_contiguous()
    np.testing.assert_array_equal(r.detach().numpy(), t.detach().numpy())


COPIES = {
    "clone": lambda m, x: x.clone(),
    "to_float64": lambda m, x: x.to(m.float64),
    "double": lambda m, x: x.double(),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.5),
    "contiguous": lambda m, x: x.contiguous(),
    "clone_contiguous": lambda m, x: x.clone(memory_format=m.contiguous_format),
}


@pytest.mark.parametrize("name", sorted(COPIES))
@pytest.mark.parametrize("seed", range(40))
def test_copies_keep_the_layout_pytorch_gives(name, seed):
    t, r = _views(seed)
    _same(COPIES[name](torch, t), COPIES[name](rg, r))


@pytest.mark.parametrize("seed", range(40))
def test_empty_like_and_random_like_strides(seed):
    t, r = _views(seed)
    assert _strides(rg.empty_like(r)) == _strides(torch.empty_like(t))
    for name in ("rand_like", "randn_like"):
        torch.manual_seed(seed)
        rg.manual_seed(seed)
        _same(getattr(torch, name)(t), getattr(rg, name)(r))


def test_the_stride_rules_agree_with_pytorch_on_random_views():
    # like_strides, is_contiguous_as and memory_format_strides against torch directly,
    # on strides torch made (size-0 dims included)
    rng = random.Random(0)
    for _ in range(3000):
        shape = [rng.choice([0, 1, 2, 3]) if rng.random() < 0.15 else rng.choice([1, 2, 3])
                 for _ in range(rng.randint(1, 5))]
        x = torch.empty(shape)
        for _ in range(rng.randint(0, 3)):
            r = rng.random()
            if r < 0.4 and x.dim() > 1:
                p = list(range(x.dim()))
                rng.shuffle(p)
                x = x.permute(p)
            elif r < 0.7:
                d = rng.randrange(x.dim() + 1)
                x = x.unsqueeze(d).expand(*[3 if i == d else -1 for i in range(x.dim() + 1)])
            else:
                d = rng.randrange(x.dim())
                x = x[(slice(None),) * d + (slice(None, None, 2),)]
        shp, st = tuple(x.shape), tuple(x.stride())
        assert L.like_strides(shp, st) == tuple(torch.empty_like(x).stride()), (shp, st)
        for fmt, tf in ((L.contiguous_format, torch.contiguous_format),
                        (L.channels_last, torch.channels_last),
                        (L.channels_last_3d, torch.channels_last_3d)):
            assert L.is_contiguous_as(shp, st, fmt) == x.is_contiguous(memory_format=tf)
        if x.dim() in (4, 5):
            fmt, tf = ((L.channels_last, torch.channels_last) if x.dim() == 4 else
                       (L.channels_last_3d, torch.channels_last_3d))
            want = torch.empty(shp, memory_format=tf).stride()
            assert L.memory_format_strides(shp, fmt) == tuple(want)
            if x.numel():  # (an empty tensor's copy cannot be told from an alias)
                y = x.to(memory_format=tf)
                alias = y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
                assert (L.suggest_memory_format(shp, st) is fmt) == alias


CHANNELS_LAST = {
    "to": lambda m, y, f: y.to(memory_format=f),
    "contiguous": lambda m, y, f: y.contiguous(memory_format=f),
    "clone": lambda m, y, f: y.clone(memory_format=f),
    "to_dtype": lambda m, y, f: y.to(m.float64, memory_format=f),
    "zeros_like": lambda m, y, f: m.zeros_like(y, memory_format=f),
    "full_like": lambda m, y, f: m.full_like(y, 3.0, memory_format=f),
    "then_add": lambda m, y, f: y.to(memory_format=f) + 1,
    "then_relu": lambda m, y, f: m.nn.functional.relu(y.to(memory_format=f)),
    "then_back": lambda m, y, f: y.to(memory_format=f).contiguous(),
    "permuted_clone": lambda m, y, f: y.permute(0, 2, 3, 1).clone(),
}


@pytest.mark.parametrize("name", sorted(CHANNELS_LAST))
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 1), (2, 1, 3, 2), (2, 0, 3, 2)])
def test_channels_last(name, shape):
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = CHANNELS_LAST[name](torch, torch.tensor(base), torch.channels_last)
    r = CHANNELS_LAST[name](rg, rg.tensor(base), rg.channels_last)
    _same(t, r)
    for f, tf in ((rg.channels_last, torch.channels_last), (None, None)):
        assert r.is_contiguous(**({"memory_format": f} if f else {})) == \
            t.is_contiguous(**({"memory_format": tf} if tf else {}))


def test_channels_last_3d_and_empty():
    t = torch.empty(2, 3, 4, 5, 6, memory_format=torch.channels_last_3d)
    r = rg.empty(2, 3, 4, 5, 6, memory_format=rg.channels_last_3d)
    assert r.stride() == t.stride() == (360, 1, 90, 18, 3)
    assert r.is_contiguous(memory_format=rg.channels_last_3d)
    assert not r.is_contiguous()
    x = rg.ones(2, 3, 4, 5, 6)
    assert x.to(memory_format=rg.channels_last_3d).stride() == t.stride()


ERRORS = {
    "clone_rank": lambda m: m.ones(4, 5).clone(memory_format=m.channels_last),
    "to_rank": lambda m: m.ones(4, 5).to(memory_format=m.channels_last),
    "empty_rank": lambda m: m.empty(2, 3, memory_format=m.channels_last),
    "rank_3d": lambda m: m.ones(2, 3, 4, 5).clone(memory_format=m.channels_last_3d),
    "zeros_like_rank": lambda m: m.zeros_like(m.ones(4, 5), memory_format=m.channels_last),
    "contiguous_preserve": lambda m: m.ones(2, 3).t().contiguous(
        memory_format=m.preserve_format),
    "empty_preserve": lambda m: m.empty(2, memory_format=m.preserve_format),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_memory_format_errors(name):
    with pytest.raises(RuntimeError) as te:
        ERRORS[name](torch)
    with pytest.raises(RuntimeError) as re_:
        ERRORS[name](rg)
    assert str(re_.value).startswith(str(te.value).split(" (")[0])


def test_to_aliases_where_pytorch_does():
    # PyTorch's to_will_alias: the same dtype and a format the strides already suggest
    for m in (torch, rg):
        x = m.ones(4, 5).t()
        assert x.to(memory_format=m.contiguous_format) is x  # (2-D: always "contiguous")
        assert x.float(memory_format=m.contiguous_format) is x
        y = m.ones(2, 3, 4, 5).to(memory_format=m.channels_last)
        assert y.to(memory_format=m.channels_last) is y
        assert y.to(memory_format=m.contiguous_format) is not y
        z = m.ones(2, 3, requires_grad=True)
        assert z.to(copy=True).grad_fn.name() == "ToCopyBackward0"


def _grad_strides(m):
    out = {}
    w = m.ones(2, 3, 4, 5).to(memory_format=m.channels_last).requires_grad_()
    (w * 2).sum().backward()
    out["channels_last leaf"] = w.grad.stride()
    x = m.ones(5, 4).t().requires_grad_()
    (x * 3).sum().backward()
    out["transposed leaf"] = x.grad.stride()
    x2 = m.ones(5, 4).t().requires_grad_()
    (x2.t().contiguous() * 3).sum().backward(create_graph=True)
    out["create_graph"] = x2.grad.stride()
    e = m.ones(4, 1).expand(4, 3).requires_grad_()
    (e * 2).sum().backward()
    out["expanded leaf"] = e.grad.stride()
    a = m.ones(3, 4, requires_grad=True)
    b = a * 2
    b.retain_grad()
    (b.t() * 1).sum().backward()
    out["retain_grad"] = b.grad.stride()
    conv = m.nn.Conv2d(3, 4, 3).to(memory_format=m.channels_last)
    conv(m.ones(2, 3, 6, 6)).sum().backward()
    out["module weight"] = conv.weight.stride()
    out["module weight grad"] = conv.weight.grad.stride()
    out["module bias"] = conv.bias.stride()
    return out


def test_first_grads_follow_the_layout_contract():
    assert _grad_strides(rg) == {k: tuple(v) for k, v in _grad_strides(torch).items()}


def test_grads_accumulate_into_the_leafs_layout():
    for m in (torch, rg):
        x = m.ones(5, 4).t().requires_grad_()
        g = m.arange(20.0).reshape(4, 5)  # row-major: copied into x's layout
        x.backward(g)
        first = x.grad
        x.backward(g)
        assert x.grad is first
        assert tuple(x.grad.stride()) == (1, 4)
        np.testing.assert_array_equal(np.asarray(x.grad.numpy()), 2 * np.arange(20.0).reshape(4, 5))


def test_like_factories_on_the_meta_device_keep_the_shape():
    # (meta tensors carry no strides here: the layout rule does not apply to them)
    x = rg.ones(4, 5).t()
    for fn in (rg.zeros_like, rg.empty_like, rg.ones_like):
        out = fn(x, device="meta")
        assert out.is_meta and tuple(out.shape) == (5, 4)
    y = rg.zeros_like(rg.ones(2, 3, 4, 5), device="meta", memory_format=rg.channels_last)
    assert y.is_meta and tuple(y.shape) == (2, 3, 4, 5)
