"""Mixed precision against torch 2.13: autocast's dtypes and values, and GradScaler."""

from __future__ import annotations

import pickle
import threading
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.amp import policy
from retrograd.amp.state import AMP

DTYPES = ("float32", "bfloat16", "float16", "float64")


def _pair(shape, dtype="float32", seed=0, positive=False, requires_grad=False):
    """The same values as a torch and a retrograd tensor."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if positive:
        a = np.abs(a) * 0.8 + 0.1
    t = torch.tensor(a).to(getattr(torch, dtype))
    r = rg.tensor(t.float().numpy()).to(getattr(rg, dtype))
    if requires_grad:
        t.requires_grad_()
        r.requires_grad_()
    return t, r


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().float().numpy().astype(np.float64)
    return x.detach().float().numpy().astype(np.float64)


def _close(a, b, dt):
    tol = {"bfloat16": 2e-2, "float16": 2e-3}.get(str(dt).split(".")[-1], 1e-5)
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


# ----------------------------------------------------------------------------------
# the policy table is PyTorch's CPU autocast op list, exactly


def _torch_autocast_cpu_ops() -> set:
    names = set()
    for n in torch._C._dispatch_get_all_op_names():
        try:
            if torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCPU"):
                names.add(n.split("::")[1].split(".")[0])
        except RuntimeError:
            pass
    return names


# torch 2.13's CPU autocast lists by category (aten/src/ATen/autocast_mode.cpp), the
# oracle for retrograd's records (Note [Autocast records])
_TORCH_LOWER = (
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "_convolution", "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention", "_addmm_activation",
)

_TORCH_FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "grid_sampler_2d",
    "grid_sampler_3d", "_grid_sampler_2d_cpu_fallback", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "kl_div", "multilabel_margin_loss", "multilabel_margin_loss_forward",
    "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2",
    "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn",
    "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank",
    "linalg_solve", "linalg_cholesky", "linalg_cholesky_ex", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_inv_ex",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve",
    "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd",
    "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d",
    "adaptive_max_pool3d", "linalg_qr", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq",
)

_TORCH_PROMOTE = ("stack", "cat", "index_copy")
_TORCH_CATEGORY = {**{k: policy.LOWER_PRECISION_FP for k in _TORCH_LOWER},
                   **{k: policy.FP32 for k in _TORCH_FP32},
                   **{k: policy.PROMOTE for k in _TORCH_PROMOTE}}


def test_torch_lists_are_torch_cpu_list():
    assert set(_TORCH_CATEGORY) == _torch_autocast_cpu_ops()
    assert len(_TORCH_CATEGORY) == len(_TORCH_LOWER) + len(_TORCH_FP32) + len(_TORCH_PROMOTE)


def test_records_give_torch_categories():
    # every op and public function retrograd marks is on torch's list, in its category
    assert policy.POLICY
    for name, cat in policy.POLICY.items():
        assert _TORCH_CATEGORY.get(name) == cat, name


def _exposed(torch_name: str) -> list:
    """retrograd's public functions that stand for PyTorch's op ``torch_name``."""
    import retrograd.linalg
    import retrograd.nn.functional as F

    renamed = {"cross_entropy_loss": "cross_entropy",
               "_native_multi_head_attention": "multi_head_attention_forward",
               "grid_sampler": "grid_sample"}
    name = renamed.get(torch_name, torch_name)
    found = []
    if name.startswith("linalg_"):
        fn = getattr(retrograd.linalg, name[len("linalg_"):], None)
        return [("linalg_" + name[len("linalg_"):], fn)] if fn is not None else []
    for ns in (rg, rg.Tensor, F):
        fn = getattr(ns, name, None)
        if callable(fn) and not isinstance(fn, type):
            found.append((name, fn))
    return found


def test_every_listed_op_retrograd_has_carries_its_category():
    # a new op PyTorch autocasts (a linalg function, say) fails here until its record
    # says so
    missing = []
    for torch_name, cat in _TORCH_CATEGORY.items():
        for name, fn in _exposed(torch_name):
            if getattr(fn, "_autocast_op", None) is None or policy.ENTRIES.get(name) is None:
                missing.append(name)
            elif policy.ENTRIES[name].__class__ is str:
                assert policy.ENTRIES[name] == cat, name
    assert not missing


# ----------------------------------------------------------------------------------
# output dtypes (and values) of ops under autocast, for each input dtype


def _mk(shape_list, positive=False):
    def make(lib, dt):
        out = []
        for k, s in enumerate(shape_list):
            t, r = _pair(s, dt, seed=k, positive=positive)
            out.append(t if lib is torch else r)
        return out
    return make


def _target(lib, n=4):
    return lib.tensor([0, 2, 1, 3][:n])


OPS = {
    # lower precision
    "mm": (_mk([(3, 4), (4, 5)]), lambda L, a, b: L.mm(a, b)),
    "matmul_2d2d": (_mk([(3, 4), (4, 5)]), lambda L, a, b: a @ b),
    "matmul_2d1d": (_mk([(3, 4), (4,)]), lambda L, a, b: L.matmul(a, b)),
    "matmul_1d1d": (_mk([(4,), (4,)]), lambda L, a, b: L.matmul(a, b)),
    "matmul_1d2d": (_mk([(4,), (4, 3)]), lambda L, a, b: a @ b),
    "matmul_3d2d": (_mk([(2, 3, 4), (4, 5)]), lambda L, a, b: a.matmul(b)),
    "bmm": (_mk([(2, 3, 4), (2, 4, 5)]), lambda L, a, b: L.bmm(a, b)),
    "addmm": (_mk([(3, 5), (3, 4), (4, 5)]), lambda L, c, a, b: L.addmm(c, a, b)),
    "linear": (_mk([(3, 4), (5, 4), (5,)]), lambda L, x, w, b: L.nn.functional.linear(x, w, b)),
    "conv1d": (_mk([(2, 3, 8), (4, 3, 3)]), lambda L, x, w: L.nn.functional.conv1d(x, w)),
    "conv2d": (_mk([(2, 3, 6, 6), (4, 3, 3, 3), (4,)]),
               lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1)),
    "sdpa": (_mk([(1, 3, 4), (1, 3, 4), (1, 3, 4)]),
             lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v)),
    "einsum_contract": (_mk([(3, 4), (4, 5)]), lambda L, a, b: L.einsum("ij,jk->ik", a, b)),
    "einsum_outer": (_mk([(3,), (4,)]), lambda L, a, b: L.einsum("i,j->ij", a, b)),
    "einsum_dot": (_mk([(4,), (4,)]), lambda L, a, b: L.einsum("i,i->", a, b)),
    # not on a list: input dtype
    "mv": (_mk([(3, 4), (4,)]), lambda L, a, b: L.mv(a, b)),
    "dot": (_mk([(4,), (4,)]), lambda L, a, b: L.dot(a, b)),
    "softmax": (_mk([(3, 4)]), lambda L, a: L.nn.functional.softmax(a, -1)),
    "log_softmax": (_mk([(3, 4)]), lambda L, a: L.nn.functional.log_softmax(a, -1)),
    "layer_norm": (_mk([(3, 4)]), lambda L, a: L.nn.functional.layer_norm(a, (4,))),
    "relu": (_mk([(3, 4)]), lambda L, a: L.relu(a)),
    "gelu": (_mk([(3, 4)]), lambda L, a: L.nn.functional.gelu(a)),
    "sum": (_mk([(3, 4)]), lambda L, a: a.sum()),
    "mean": (_mk([(3, 4)]), lambda L, a: a.mean()),
    "add": (_mk([(3, 4), (3, 4)]), lambda L, a, b: a + b),
    "pad_constant": (_mk([(1, 2, 3, 3)]), lambda L, a: L.nn.functional.pad(a, (1, 1, 1, 1))),
    # float32
    "prod": (_mk([(3, 4)]), lambda L, a: L.prod(a)),
    "prod_dim": (_mk([(3, 4)]), lambda L, a: a.prod(1)),
    "mse_loss": (_mk([(3, 4), (3, 4)]), lambda L, a, b: L.nn.functional.mse_loss(a, b)),
    "l1_loss": (_mk([(3, 4), (3, 4)]), lambda L, a, b: L.nn.functional.l1_loss(a, b)),
    "huber_loss": (_mk([(3, 4), (3, 4)]), lambda L, a, b: L.nn.functional.huber_loss(a, b)),
    "smooth_l1_loss": (_mk([(3, 4), (3, 4)]),
                       lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b)),
    "cross_entropy": (_mk([(4, 5)]),
                      lambda L, a: L.nn.functional.cross_entropy(a, _target(L))),
    "nll_loss": (_mk([(4, 5)]), lambda L, a: L.nn.functional.nll_loss(a, _target(L))),
    "kl_div": (_mk([(3, 4), (3, 4)], positive=True),
               lambda L, a, b: L.nn.functional.kl_div(a, b, reduction="batchmean")),
    "bce": (_mk([(3, 4), (3, 4)], positive=True),
            lambda L, a, b: L.nn.functional.binary_cross_entropy(a.clamp(0.05, 0.95), b * 0.5)),
    "bce_logits": (_mk([(3, 4), (3, 4)], positive=True),
                   lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a, b * .5)),
    "pad_reflect": (_mk([(1, 2, 3, 3)]),
                    lambda L, a: L.nn.functional.pad(a, (1, 1, 1, 1), mode="reflect")),
    "pad_replicate_3d": (_mk([(1, 1, 3, 3, 3)]),
                         lambda L, a: L.nn.functional.pad(a, (1,) * 6, mode="replicate")),
    "avg_pool3d": (_mk([(1, 1, 4, 4, 4)]), lambda L, a: L.nn.functional.avg_pool3d(a, 2)),
    "max_pool3d": (_mk([(1, 1, 4, 4, 4)]), lambda L, a: L.nn.functional.max_pool3d(a, 2)),
    # promote
    "cat_mixed": (lambda L, dt: [_mk([(2, 3)])(L, dt)[0], _mk([(2, 3)])(L, "float32")[0]],
                  lambda L, a, b: L.cat([a, b])),
    "stack_same": (_mk([(2, 3), (2, 3)]), lambda L, a, b: L.stack([a, b])),
}


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_dtype_and_value_under_autocast(name, dt, fast):
    make, fn = OPS[name]
    results = []
    for L in (torch, rg):
        args = make(L, dt)
        try:
            with L.autocast("cpu", dtype=getattr(L, fast)):
                results.append(fn(L, *args))
        except RuntimeError as e:
            results.append(e)
    t, r = results
    if isinstance(t, Exception):
        assert isinstance(r, Exception), f"torch raised {t!r}, retrograd returned {r}"
        return
    assert not isinstance(r, Exception), f"retrograd raised {r!r}"
    assert str(r.dtype) == str(t.dtype)
    assert tuple(r.shape) == tuple(t.shape)
    _close(t, r, r.dtype)


def test_cast_errors_match_torch():
    for L in (torch, rg):
        a = L.ones(2, 2)
        with L.autocast("cpu"):
            with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
                L.mm(a.double(), a)
            with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in "
                                                   "at::autocast::prioritize"):
                L.cat([a.half(), a.bfloat16()])
            with pytest.raises(RuntimeError, match="Unexpected floating ScalarType"):
                L.stack([a.half(), a.half()])
            assert str(L.cat([a.double(), a.bfloat16()]).dtype).endswith("float64")


def test_matmul_rounds_once_like_torch():
    # float32 accumulation, one rounding: bit-identical to torch's bfloat16 products here
    ta, ra = _pair((16, 64), seed=1)
    tb, rb = _pair((64, 8), seed=2)
    with torch.autocast("cpu"):
        t = ta @ tb
    with rg.autocast("cpu"):
        r = ra @ rb
    np.testing.assert_array_equal(_np(t), _np(r))
    # and outside autocast, a bfloat16 product keeps its dtype (NumPy would give float32)
    assert (ra.bfloat16() @ rb.bfloat16()).dtype == rg.bfloat16


# ----------------------------------------------------------------------------------
# graph structure: casts are recorded, weight casts cached per region


def _next(t, i):
    return t.grad_fn.next_functions[i][0]


def test_weight_cast_cache_like_torch():
    for L in (torch, rg):
        w = L.ones(3, 3, requires_grad=True)
        x = L.ones(3, 3)
        with L.autocast("cpu"):
            a = L.mm(w, x)
            b = L.mm(x, w)
            assert _next(a, 0) is _next(b, 1)  # one cached cast of the leaf weight
            assert _next(a, 0).name() == "ToCopyBackward0"
            nl = w * 1
            c = L.mm(nl, nl)
            assert _next(c, 0) is not _next(c, 1)  # non-leaves are not cached
            v = w[0:2]
            d = L.mm(v, x[:, :2])
            e = L.mm(v, x[:, :2])
            assert _next(d, 0) is not _next(e, 0)  # views are not cached
        with L.autocast("cpu"):
            f = L.mm(w, x)
        assert _next(f, 0) is not _next(a, 0)  # cache dropped at the outermost exit
        with L.autocast("cpu", cache_enabled=False):
            g, h = L.mm(w, x), L.mm(w, x)
        assert _next(g, 0) is not _next(h, 0)
        assert _next(g, 1) is None  # x needs no grad: no cast node
    assert not AMP.cache


def test_nested_regions_and_state():
    a = rg.ones(2, 2)
    assert not rg.is_autocast_enabled("cpu") and not rg.is_autocast_enabled()
    with rg.autocast("cpu"):
        assert rg.is_autocast_enabled("cpu") and rg.get_autocast_dtype("cpu") == rg.bfloat16
        assert (a @ a).dtype == rg.bfloat16
        with rg.autocast("cpu", enabled=False):
            assert (a @ a).dtype == rg.float32
            with rg.autocast("cpu", dtype=rg.float16):
                assert (a @ a).dtype == rg.float16
            assert not rg.is_autocast_enabled("cpu")
        assert (a @ a).dtype == rg.bfloat16
    assert not rg.is_autocast_enabled("cpu") and rg.get_autocast_dtype("cpu") == rg.bfloat16
    assert AMP.nesting == 0 and not AMP.on


def test_state_restored_after_exception_and_inside_failing_op():
    a = rg.ones(2, 2)
    with pytest.raises(RuntimeError):
        with rg.autocast("cpu"):
            rg.mm(a, rg.ones(3, 3))  # shape error inside an autocast op
    assert not AMP.on and AMP.nesting == 0
    with rg.autocast("cpu"):
        with pytest.raises(RuntimeError):
            rg.mm(a, rg.ones(3, 3))
        assert AMP.on and (a @ a).dtype == rg.bfloat16


def test_decorator_and_amp_names():
    @rg.autocast("cpu")
    def f(x):
        return x @ x

    @rg.amp.autocast("cpu", dtype=rg.float16)
    def g(x):
        return x @ x

    a = rg.ones(2, 2)
    assert f(a).dtype == rg.bfloat16 and g(a).dtype == rg.float16
    assert (a @ a).dtype == rg.float32
    with pytest.raises(TypeError, match="requires a callable"):
        rg.autocast("cpu")(3)


def test_thread_local():
    seen = []
    a = rg.ones(2, 2)

    def worker():
        seen.append((a @ a).dtype)

    with rg.autocast("cpu"):
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert (a @ a).dtype == rg.bfloat16
    assert seen == [rg.float32]


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)) for x in w]


def test_cuda_and_deprecated_names_warn_like_torch():
    for name in ("cuda_amp_autocast", "autocast_cuda", "cpu_amp_autocast", "amp_autocast_cuda",
                 "bad_dtype"):
        res = []
        for L in (torch, rg):
            make = {"cuda_amp_autocast": lambda L=L: L.cuda.amp.autocast(),
                    "autocast_cuda": lambda L=L: L.autocast("cuda"),
                    "amp_autocast_cuda": lambda L=L: L.amp.autocast("cuda"),
                    "cpu_amp_autocast": lambda L=L: L.cpu.amp.autocast(),
                    "bad_dtype": lambda L=L: L.autocast("cpu", dtype=L.float32)}[name]
            ac, w = _warns(make)
            with ac:
                dt = (L.ones(2, 2) @ L.ones(2, 2)).dtype
            res.append((str(dt), w))
        (tdt, tw), (rdt, rw) = res
        assert tdt == rdt
        assert [c for c, _ in tw] == [c for c, _ in rw]
        for (_, tm), (_, rm) in zip(tw, rw):
            assert rm.startswith(tm)


def test_bad_device_types():
    for L in (torch, rg):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            L.autocast(1)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            L.autocast("foo")


# ----------------------------------------------------------------------------------
# backward: gradients in each leaf's dtype, values as torch's


def _mlp(L, seed=0):
    g = np.random.default_rng(seed)
    ws = [L.tensor(g.standard_normal(s).astype(np.float32) * 0.3, requires_grad=True)
          for s in ((8, 6), (8,), (3, 8), (3,))]
    x = L.tensor(g.standard_normal((5, 6)).astype(np.float32))
    return ws, x


def _mlp_loss(L, ws, x):
    F = L.nn.functional
    h = F.linear(x, ws[0], ws[1])
    h = L.relu(h)
    out = F.linear(h, ws[2], ws[3])
    return out, h, F.cross_entropy(out, _target(L, 4).repeat(2)[:5] % 3)


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
def test_backward_dtypes_and_values(fast):
    res = []
    for L in (torch, rg):
        ws, x = _mlp(L)
        with L.autocast("cpu", dtype=getattr(L, fast)):
            out, h, loss = _mlp_loss(L, ws, x)
        loss.backward()
        res.append((out, h, loss, [w.grad for w in ws]))
    (to, th, tl, tg), (ro, rh, rl, rgr) = res
    for t, r in ((to, ro), (th, rh), (tl, rl)):
        assert str(t.dtype) == str(r.dtype)
        _close(t, r, r.dtype)
    for t, r in zip(tg, rgr):
        assert str(r.dtype) == "torch.float32" == str(t.dtype)
        np.testing.assert_allclose(_np(r), _np(t), rtol=3e-2, atol=3e-3)


def test_backward_inside_region_runs_in_lower_precision_like_torch():
    res = []
    for L in (torch, rg):
        ws, x = _mlp(L)
        with L.autocast("cpu"):
            _, _, loss = _mlp_loss(L, ws, x)
            loss.backward()
        res.append([w.grad for w in ws])
    for t, r in zip(*res):
        assert str(t.dtype) == str(r.dtype)
        np.testing.assert_allclose(_np(r), _np(t), rtol=3e-2, atol=3e-3)


def test_double_backward_through_autocast_casts():
    for L in (torch, rg):
        w = L.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        with L.autocast("cpu"):
            y = (w @ w).float().pow(2).sum()
        g, = L.autograd.grad(y, w, create_graph=True)
        g2, = L.autograd.grad(g.sum(), w)
        if L is torch:
            tg, tg2 = g, g2
    np.testing.assert_allclose(_np(g), _np(tg), rtol=2e-2)
    np.testing.assert_allclose(_np(g2), _np(tg2), rtol=2e-2)


# ----------------------------------------------------------------------------------
# custom_fwd / custom_bwd


def test_custom_fwd_cast_inputs():
    res = []
    for L in (torch, rg):
        class Sq(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x @ x

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g @ x.T + x.T @ g

        x = L.ones(2, 2, dtype=L.bfloat16, requires_grad=True)
        with L.autocast("cpu"):
            y = Sq.apply(x)
        y.sum().backward()
        res.append((str(y.dtype), str(x.grad.dtype)))
    assert res[0] == res[1]


# ----------------------------------------------------------------------------------
# GradScaler


def _scaler_run(L, steps=50, inf_at=(3, 4, 11, 30), **kw):
    w = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = L.optim.SGD([w], lr=0.01)
    s = L.amp.GradScaler("cpu", **kw)
    scales, stepped = [], []
    for k in range(steps):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if k in inf_at else 1.0)
        s.scale(loss).backward()
        before = w.detach().clone()
        ret = s.step(opt)
        stepped.append(not bool(L.equal(before, w.detach())))
        assert ret is None
        s.update()
        scales.append(s.get_scale())
    return scales, stepped, w.detach().numpy().copy(), s.state_dict()


@pytest.mark.parametrize("kw", [dict(), dict(init_scale=2.0**10, growth_interval=3),
                                dict(init_scale=1000.0, growth_factor=1.7, backoff_factor=0.3,
                                     growth_interval=4)])
def test_scale_sequence_matches_torch(kw):
    t = _scaler_run(torch, **kw)
    r = _scaler_run(rg, **kw)
    assert r[0] == t[0]  # the same scale after every one of 50 steps, bit for bit
    assert r[1] == t[1]
    np.testing.assert_allclose(r[2], t[2], rtol=1e-6)
    assert r[3] == t[3]


def test_step_skip_is_observable():
    w = rg.ones(2, requires_grad=True)
    opt = rg.optim.SGD([w], lr=0.1)
    s = rg.amp.GradScaler("cpu")
    assert s.last_step_skipped is None
    s.scale((w * float("nan")).sum()).backward()
    assert s.step(opt) is None and s.last_step_skipped is True
    s.update()
    assert s.get_scale() == 32768.0 and bool(rg.equal(w, rg.ones(2)))
    opt.zero_grad()
    s.scale(w.sum()).backward()
    s.step(opt)
    assert s.last_step_skipped is False


def test_unscale_and_clip_like_seed():
    res = []
    for L in (torch, rg):
        w = L.tensor([[3.0, -4.0]], requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        s = L.amp.GradScaler("cpu", init_scale=256.0)
        s.scale((w * w).sum()).backward()
        res.append([w.grad.clone()])
        s.unscale_(opt)
        res[-1].append(w.grad.clone())
        n = L.nn.utils.clip_grad_norm_([w], 1.0)
        s.step(opt)
        s.update()
        res[-1] += [n, w.detach().clone()]
    for t, r in zip(*res):
        np.testing.assert_allclose(_np(r), _np(t), rtol=1e-6)


def _errors(L):
    out = []
    w = L.ones(2, requires_grad=True)
    opt = L.optim.SGD([w], lr=0.1)
    s = L.amp.GradScaler("cpu", init_scale=1024.0)
    for fn in (lambda: s.unscale_(opt), lambda: s.step(opt), lambda: s.update()):
        try:
            fn()
        except (RuntimeError, AssertionError, ValueError) as e:
            out.append((type(e).__name__, str(e)))
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    for fn in (lambda: s.unscale_(opt), lambda: s.step(opt, closure=lambda: 0)):
        try:
            fn()
        except (RuntimeError, AssertionError, ValueError) as e:
            out.append((type(e).__name__, str(e)))
    s.step(opt)
    for fn in (lambda: s.step(opt), lambda: s.unscale_(opt)):
        try:
            fn()
        except (RuntimeError, AssertionError, ValueError) as e:
            out.append((type(e).__name__, str(e)))
    s.update()
    h = L.ones(2, dtype=L.float16, requires_grad=True)
    oh = L.optim.SGD([h], lr=0.1)
    s.scale(h.float().sum()).backward()
    for fn in (lambda: s.unscale_(oh), lambda: L.amp.GradScaler("cpu", growth_factor=1.0),
               lambda: L.amp.GradScaler("cpu", backoff_factor=1.0),
               lambda: L.amp.GradScaler("cpu").load_state_dict({}),
               lambda: s.scale(3.0)):
        try:
            fn()
        except (RuntimeError, AssertionError, ValueError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_scaler_errors_match_torch():
    t, r = _errors(torch), _errors(rg)
    assert len(t) == len(r) == 12
    for (tn, tm), (rn, rm) in zip(t, r):
        assert tn == rn
        assert rm.startswith(tm)


def test_scaler_state_dict_and_pickle():
    res = []
    for L in (torch, rg):
        s = L.amp.GradScaler("cpu", init_scale=512.0, growth_interval=2)
        w = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            s.scale(w.sum()).backward()
            s.step(opt)
            s.update()
        sd = s.state_dict()
        s2 = L.amp.GradScaler("cpu")
        s2.load_state_dict(sd)
        s3 = pickle.loads(pickle.dumps(s))
        res.append((sd, s2.state_dict(), s3.state_dict(), s2.get_scale()))
        s.update(new_scale=3.0)
        res[-1] += (s.get_scale(),)
        s.update(new_scale=L.tensor(5.0))
        res[-1] += (s.get_scale(),)
    assert res[0] == res[1]


def test_scaler_scale_structures_and_dtypes():
    for L in (torch, rg):
        s = L.amp.GradScaler("cpu", init_scale=4.0)
        out = s.scale([L.ones(2), (L.ones(1), L.ones(1, dtype=L.bfloat16))])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert str(out[1][1].dtype).endswith("bfloat16")
        assert float(out[0][0]) == 4.0
        assert str(s.scale(L.ones((), dtype=L.bfloat16)).dtype).endswith("float32")
        assert str(s.scale(L.ones(2, dtype=L.bfloat16)).dtype).endswith("bfloat16")
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
            s.scale([1])


def test_disabled_and_cuda_scalers_like_torch():
    res = []
    for L in (torch, rg):
        names = []
        for make in (lambda L=L: L.amp.GradScaler(), lambda L=L: L.cuda.amp.GradScaler(),
                     lambda L=L: L.cpu.amp.GradScaler(),
                     lambda L=L: L.amp.GradScaler("cpu", enabled=False)):
            s, w = _warns(make)
            names.append((s.is_enabled(), s.get_scale(), s.state_dict(),
                          [c.__name__ for c, _ in w], [m[:60] for _, m in w]))
        w = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.5)
        s = _warns(lambda L=L: L.cuda.amp.GradScaler())[0]
        loss = s.scale(w.sum())
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        names.append(w.detach().numpy().tolist())
        res.append(names)
    assert res[0] == res[1]


# ----------------------------------------------------------------------------------
# the seed's example


SEED = '''
import torch

# Make sure you have a compatible GPU
if torch.cuda.is_available():
    # Enable automatic mixed precision
    scaler = torch.cuda.amp.GradScaler()

    # Define model and optimizer (simplified)
    model = torch.nn.Linear(10, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    # In training loop:
    for epoch in range(1):
        # Forward pass with autocast
        with torch.cuda.amp.autocast():
            x = torch.randn(3, 10, device='cuda')
            output = model(x)
            loss = output.mean()

        # Backward pass with scaled gradients
        scaler.scale(loss).backward()

        # Unscale gradients and clip if needed
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

        # Update weights and scaler
        scaler.step(optimizer)
        scaler.update()

    print("Successfully ran mixed precision training example")
else:
    print("CUDA not available, skipping mixed precision example")
'''


def test_seed_example_takes_cpu_branch(capsys):
    exec(compile(SEED.replace("import torch", "import retrograd as torch"), "seed", "exec"), {})
    assert capsys.readouterr().out == "CUDA not available, skipping mixed precision example\n"


def _seed_cpu_variant(L):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(10, 16), L.nn.ReLU(), L.nn.Linear(16, 1))
    g = np.random.default_rng(0)
    with L.no_grad():
        for p in model.parameters():
            p.copy_(L.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
    optimizer = L.optim.SGD(model.parameters(), lr=0.01)
    scaler = L.amp.GradScaler("cpu")
    log = []
    for _epoch in range(3):
        x = L.tensor(g.standard_normal((3, 10)).astype(np.float32))
        optimizer.zero_grad()
        with L.autocast("cpu", dtype=L.bfloat16):
            h = model[0](x)
            a = model[1](h)
            output = model[2](a)
            loss = output.mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = L.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        log.append(([str(t.dtype) for t in (h, a, output, loss)], loss, norm,
                    [p.grad.dtype for p in model.parameters()]))
    return log, [p.detach() for p in model.parameters()], scaler.get_scale()


def test_seed_cpu_variant_matches_torch():
    tlog, tparams, tscale = _seed_cpu_variant(torch)
    rlog, rparams, rscale = _seed_cpu_variant(rg)
    assert tscale == rscale
    for (tdts, tl, tn, tgd), (rdts, rl, rn, rgd) in zip(tlog, rlog):
        assert tdts == rdts == ["torch.bfloat16"] * 4
        assert [str(d) for d in tgd] == [str(d) for d in rgd]
        np.testing.assert_allclose(_np(rl), _np(tl), rtol=2e-2, atol=1e-2)
        np.testing.assert_allclose(_np(rn), _np(tn), rtol=5e-2)
    for t, r in zip(tparams, rparams):
        np.testing.assert_allclose(_np(r), _np(t), rtol=2e-2, atol=2e-3)


def _run_seed_on_cpu(L, x, w, b):
    code = (SEED.replace("import torch\n", "")
            .replace("torch.cuda.is_available()", "True")
            .replace("torch.cuda.amp.GradScaler()", "torch.amp.GradScaler('cpu')")
            .replace("torch.cuda.amp.autocast()", "torch.autocast('cpu', dtype=torch.bfloat16)")
            .replace("torch.randn(3, 10, device='cuda')", "torch.tensor(X)")
            .replace("    optimizer = torch.optim.SGD(",
                     "    with torch.no_grad():\n"
                     "        model.weight.copy_(torch.tensor(W))\n"
                     "        model.bias.copy_(torch.tensor(B))\n"
                     "    optimizer = torch.optim.SGD("))
    ns = {"torch": L, "X": x, "W": w, "B": b}
    exec(compile(code, "seed_cpu", "exec"), ns)
    return ns


def test_seed_example_text_on_cpu_matches_torch(capsys):
    g = np.random.default_rng(5)
    x = g.standard_normal((3, 10)).astype(np.float32)
    w = (g.standard_normal((1, 10)) * 0.3).astype(np.float32)
    b = np.array([0.1], dtype=np.float32)
    t = _run_seed_on_cpu(torch, x, w, b)
    r = _run_seed_on_cpu(rg, x, w, b)
    out = capsys.readouterr().out
    assert out == "Successfully ran mixed precision training example\n" * 2
    for k in ("output", "loss"):
        assert str(r[k].dtype) == str(t[k].dtype) == "torch.bfloat16"
        _close(t[k], r[k], r[k].dtype)
    np.testing.assert_allclose(_np(r["model"].weight), _np(t["model"].weight), rtol=1e-2)
    assert r["scaler"].get_scale() == t["scaler"].get_scale()
