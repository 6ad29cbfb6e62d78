"""The nnmods layers against torch beyond test_nn_layers' generic cases: the encoder's
inference padding path, causal-mask detection, errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as R


def _copy(tm, rm):
    res = rm.load_state_dict({k: R.tensor(v.detach().numpy()) for k, v in
                              tm.state_dict().items()})
    assert not res.missing_keys and not res.unexpected_keys


def _pair(make):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, rm = make(torch), make(R)
    _copy(tm, rm)
    return tm, rm


@pytest.mark.parametrize("left_aligned", [True, False])
def test_encoder_inference_zeroes_padding_as_torch(left_aligned):
    def make(L):
        layer = L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True)
        return L.nn.TransformerEncoder(layer, 2, norm=L.nn.LayerNorm(4)).eval()

    tm, rm = _pair(make)
    x = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    pad = np.array([[False, False, True, True], [False, False, False, False]])
    if not left_aligned:
        pad = pad[:, ::-1].copy()
    with torch.no_grad():
        want = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
    with R.no_grad():
        got = rm(R.tensor(x), src_key_padding_mask=R.tensor(pad))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_encoder_nested_tensor_warning_as_torch():
    for L in (torch, R):
        layer = L.nn.TransformerEncoderLayer(4, 2, 6, batch_first=False)
        with pytest.warns(UserWarning, match="self.use_nested_tensor is False because "
                          "encoder_layer.self_attn.batch_first was not True"):
            enc = L.nn.TransformerEncoder(layer, 1)
        assert enc.use_nested_tensor is False


def test_square_subsequent_mask_and_causal_detection():
    np.testing.assert_array_equal(R.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    from retrograd.nn.modules.transformer import _detect_is_causal_mask

    causal = R.nn.Transformer.generate_square_subsequent_mask(3)
    assert _detect_is_causal_mask(causal, None, 3) is True
    assert _detect_is_causal_mask(causal, None, 4) is False
    assert _detect_is_causal_mask(R.zeros(3, 3), None) is False
    assert _detect_is_causal_mask(None, True) is True


@pytest.mark.parametrize("shapes,msg", [
    (((5, 2, 4), (3, 1, 4)), "the batch number of src and tgt must be equal"),
    (((5, 2, 4), (3, 2, 6)), "the feature number of src and tgt must be equal to d_model"),
])
def test_transformer_errors_as_torch(shapes, msg):
    for L in (torch, R):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = L.nn.Transformer(4, 2, 1, 1, 6)
        with pytest.raises(RuntimeError, match=msg):
            m(L.zeros(*shapes[0]), L.zeros(*shapes[1]))


def test_bad_activation_name_as_torch():
    for L in (torch, R):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            L.nn.TransformerDecoderLayer(4, 2, 6, activation="tanh")


def test_transformer_init_is_xavier_on_matrices():
    R.manual_seed(0)
    m = R.nn.Transformer(8, 2, 1, 1, 16)
    w = m.encoder.layers[0].linear1.weight
    bound = (6 / (8 + 16)) ** 0.5
    assert float(w.abs().max()) <= bound
    assert float(m.decoder.norm.weight.sum()) == 8.0


def test_data_parallel_calls_the_module_as_torch():
    tm, rm = _pair(lambda L: L.nn.DataParallel(L.nn.Sequential(L.nn.Linear(3, 2)),
                                               device_ids=[0]))
    assert list(rm.state_dict()) == list(tm.state_dict()) == ["module.0.weight",
                                                               "module.0.bias"]
    assert rm.device_ids == tm.device_ids == []
    assert isinstance(rm.module, R.nn.Sequential)
    assert R.nn.parallel.DataParallel is R.nn.DataParallel
    # kwargs reach the module
    t_out = tm(input=torch.ones(2, 3))
    r_out = rm(input=R.ones(2, 3))
    np.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6)


def test_functional_data_parallel_raises_as_torch():
    for L in (torch, R):
        with pytest.raises(RuntimeError, match="device type could not be determined"):
            L.nn.parallel.data_parallel(L.nn.Linear(2, 2), L.ones(1, 2))


# -- lazy modules ---------------------------------------------------------------------


def _seeded(L, make):
    L.manual_seed(3)
    return make(L)


@pytest.mark.parametrize("make,shape,eager", [
    (lambda L: L.nn.LazyLinear(3), (2, 5), "Linear"),
    (lambda L: L.nn.LazyConv2d(4, 3, groups=2, bias=False), (1, 2, 5, 5), "Conv2d"),
    (lambda L: L.nn.LazyConvTranspose1d(2, 3), (3, 4), "ConvTranspose1d"),  # unbatched
    (lambda L: L.nn.LazyBatchNorm2d(), (2, 3, 2, 2), "BatchNorm2d"),
])
def test_lazy_first_call_draws_as_torch_and_becomes_eager(make, shape, eager):
    tm, rm = _seeded(torch, make), _seeded(R, make)
    assert rm.has_uninitialized_params() and tm.has_uninitialized_params()
    assert repr(rm) == repr(tm)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t_out, r_out = tm(torch.tensor(x)), rm(R.tensor(x))
    assert type(rm).__name__ == type(tm).__name__ == eager
    assert repr(rm) == repr(tm)
    assert not hasattr(rm, "_initialize_hook") and not hasattr(tm, "_initialize_hook")
    assert not rm._forward_pre_hooks and not rm._load_state_dict_pre_hooks
    np.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    for (kt, vt), (kr, vr) in zip(tm.state_dict().items(), rm.state_dict().items()):
        assert kt == kr
        np.testing.assert_allclose(vr.numpy(), vt.numpy(), rtol=1e-6, atol=1e-7)


def test_lazy_optimizer_built_before_the_dry_run_as_torch():
    def run(L):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.LazyLinear(4), L.nn.Tanh(), L.nn.LazyLinear(1))
        opt = L.optim.SGD(net.parameters(), lr=0.1)
        x = L.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
        for _ in range(2):
            opt.zero_grad()
            net(x).pow(2).sum().backward()
            opt.step()
        return [p.detach().numpy() for p in net.parameters()]

    for a, b in zip(run(torch), run(R)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_lazy_state_dict_round_trips_as_torch():
    for L in (torch, R):
        lazy = L.nn.LazyLinear(3)
        sd = lazy.state_dict()
        assert list(sd) == ["weight", "bias"]
        assert type(sd["weight"]).__name__ == "UninitializedParameter"
        other = L.nn.LazyLinear(3)
        other.load_state_dict(sd)  # uninitialized into uninitialized: nothing to copy
        assert other.has_uninitialized_params()
        trained = L.nn.Linear(5, 3)
        other.load_state_dict(trained.state_dict())  # materializes from the checkpoint
        assert type(other).__name__ == "LazyLinear" and tuple(other.weight.shape) == (3, 5)
        assert bool((other.weight == trained.weight).all())
        assert other(L.ones(2, 5)).shape == (2, 3) and other.in_features == 5
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized "
                           "parameter or buffer"):
            L.nn.Linear(5, 3).load_state_dict(L.nn.LazyLinear(3).state_dict())


def test_uninitialized_tensors_refuse_use_as_torch():
    for L in (torch, R):
        p = L.nn.UninitializedParameter(dtype=L.float64)
        assert repr(p) == "<UninitializedParameter>" and p.dtype == L.float64
        assert p.requires_grad and not L.nn.UninitializedBuffer().requires_grad
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
            p + 1
        with pytest.raises(RuntimeError, match="Can't access the shape"):
            _ = p.shape
        p.materialize((2, 3))
        assert type(p) is L.nn.Parameter and tuple(p.shape) == (2, 3)
        assert p.dtype == L.float64
        b = L.nn.UninitializedBuffer()
        b.materialize((4,))
        assert type(b) is L.Tensor


def test_lazy_dtype_conversion_before_the_dry_run():
    m = R.nn.LazyLinear(2).double()
    assert m.weight.dtype == R.float64
    assert m(R.ones(1, 3, dtype=R.float64)).dtype == R.float64
    assert m.weight.dtype == R.float64


@pytest.mark.parametrize("make,shape,exc,msg", [
    (lambda L: L.nn.LazyConv2d(4, 3, groups=2), (1, 3, 5, 5), ValueError,
     "in_channels must be divisible by groups"),
    (lambda L: L.nn.LazyConv2d(4, 3), (3, 5), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d, but got input of "
     r"size: torch.Size\(\[3, 5\]\)"),
])
def test_lazy_errors_as_torch(make, shape, exc, msg):
    for L in (torch, R):
        with pytest.raises(exc, match=msg):
            make(L)(L.ones(*shape))


# -- embedding_bag ----------------------------------------------------------------------

_BAG_IDX = np.array([4, 1, 1, 0, 3, 4, 2, 2])
_BAG_OFFS = np.array([0, 3, 3, 6])  # the second bag is empty


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx,last", [(None, False), (1, False), (-1, True)])
def test_embedding_bag_values_and_grads_as_torch(mode, padding_idx, last):
    w = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    g = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    offs = np.append(_BAG_OFFS, 8) if last else _BAG_OFFS
    outs = []
    for L in (torch, R):
        wt = L.tensor(w, requires_grad=True)
        y = L.nn.functional.embedding_bag(L.tensor(_BAG_IDX), wt, L.tensor(offs), mode=mode,
                                          padding_idx=padding_idx, include_last_offset=last)
        (y * L.tensor(g)).sum().backward()
        outs.append((y.detach().numpy(), wt.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_embedding_bag_gradcheck_float64():
    from _nn_gradcheck import gradcheck, gradgradcheck

    rng = np.random.default_rng(0)
    w = R.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    psw = R.tensor(rng.standard_normal(8), requires_grad=True)
    idx, offs = R.tensor(_BAG_IDX), R.tensor(_BAG_OFFS)
    for kw in ({"mode": "sum", "per_sample_weights": psw}, {"mode": "mean", "padding_idx": 2},
               {"mode": "max"}):
        def fn(kw=kw):
            return R.nn.functional.embedding_bag(idx, w, offs, **kw)
        wrt = [w, psw] if "per_sample_weights" in kw else [w]
        assert gradcheck(fn, wrt)
        if kw["mode"] != "max":
            assert gradgradcheck(fn, wrt)


def test_embedding_bag_module_as_torch():
    tm, rm = _pair(lambda L: L.nn.EmbeddingBag(5, 2, max_norm=1.0, padding_idx=1))
    assert repr(rm) == repr(tm)
    assert float(rm.weight[1].abs().sum()) == 0.0
    t_out = tm(torch.tensor(_BAG_IDX), torch.tensor(_BAG_OFFS))
    r_out = rm(R.tensor(_BAG_IDX), R.tensor(_BAG_OFFS))
    np.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-5,
                               atol=1e-6)  # max_norm renormalized the same rows
    np.testing.assert_allclose(rm.weight.detach().numpy(), tm.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    for L in (torch, R):
        bag = L.nn.EmbeddingBag.from_pretrained(L.eye(3), mode="sum", freeze=False)
        assert bag.weight.requires_grad and bag.mode == "sum"
        assert bag(L.tensor([[0, 2]])).tolist() == [[1.0, 0.0, 1.0]]


@pytest.mark.parametrize("args,kw,exc,msg", [
    (([[0, 1]], [0]), {}, ValueError, "if input is 2D, then offsets has to be None"),
    (([0, 1], None), {}, ValueError, "offsets has to be a 1D Tensor but got None"),
    (([0, 1], [1]), {}, RuntimeError, r"offsets\[0\] has to be 0"),
    (([0, 1], [0, 3]), {}, RuntimeError, r"offsets\[-1\] can not be greater than input's length"),
    (([0, 7], [0]), {}, RuntimeError, r"Index 1 of input takes value 7 which is not in the "
                                      r"valid range \[0, 5\)"),
    (([0, 1], [0]), {"mode": "min"}, ValueError, "mode has to be one of sum, mean or max"),
    (([0, 1], [0]), {"mode": "mean", "per_sample_weights": [1.0, 2.0]}, NotImplementedError,
     "per_sample_weights is only supported for mode='sum'"),
    (([0, 1], [0]), {"per_sample_weights": [1.0]}, ValueError,
     "If per_sample_weights"),
])
def test_embedding_bag_errors_as_torch(args, kw, exc, msg):
    for L in (torch, R):
        kw2 = {k: (L.tensor(v) if isinstance(v, list) else v) for k, v in kw.items()}
        offs = None if args[1] is None else L.tensor(args[1])
        with pytest.raises(exc, match=msg):
            L.nn.functional.embedding_bag(L.tensor(args[0]), L.ones(5, 2), offs, **kw2)


# -- CTC ------------------------------------------------------------------------------


def test_ctc_loss_long_sequences_match_torch():
    """A longer batch with mixed lengths, float32: values and gradients (through
    log_softmax) as torch's."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 4, 6)).astype(np.float32)
    tl = np.array([10, 3, 17, 1])
    il = np.array([40, 21, 38, 2])
    tg = rng.integers(1, 6, (4, 17))
    outs = []
    for L in (torch, R):
        xt = L.tensor(x, requires_grad=True)
        loss = L.nn.CTCLoss()(xt.log_softmax(2), L.tensor(tg), L.tensor(il), L.tensor(tl))
        loss.backward()
        outs.append((loss.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-4, atol=1e-6)


def test_ctc_loss_has_no_double_backward_as_torch():
    for L in (torch, R):
        x = L.zeros(4, 1, 3, dtype=L.float64, requires_grad=True)
        loss = L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor([[1, 2]]), (4,), (2,))
        (g,) = L.autograd.grad(loss, x, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is "
                           "not implemented"):
            g.sum().backward()


@pytest.mark.parametrize("kw,msg", [
    ({"blank": 4}, "blank must be in label range"),
    ({"input_lengths": (5,)}, "input_lengths must be of size batch_size"),
    ({"target_lengths": (2,)}, "target_lengths must be of size batch_size"),
    ({"input_lengths": (6, 5)}, "Expected input_lengths to have value at most 5, but got "
                                "value 6"),
    ({"target_lengths": (2, -1)}, "Expected target_lengths to have value at least 0"),
    ({"targets": [[1], [1]]}, "Expected tensor to have size at least 2 at dimension 1, but "
                              "got size 1 for argument #2 'targets'"),
])
def test_ctc_loss_errors_as_torch(kw, msg):
    for L in (torch, R):
        args = {"log_probs": L.zeros(5, 2, 4).log_softmax(2),
                "targets": L.tensor([[1, 2], [1, 1]]), "input_lengths": (5, 5),
                "target_lengths": (2, 2)}
        args.update({k: L.tensor(v) if k == "targets" else v for k, v in kw.items()})
        with pytest.raises(RuntimeError, match=msg):
            L.nn.functional.ctc_loss(**args)


# -- adaptive softmax -----------------------------------------------------------------


def test_adaptive_softmax_predict_and_unbatched_as_torch():
    tm, rm = _pair(lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(6, 12, cutoffs=[2, 7],
                                                             div_value=1.5, head_bias=True))
    x = np.random.default_rng(0).standard_normal((30, 6)).astype(np.float32) * 3
    np.testing.assert_array_equal(rm.predict(R.tensor(x)).numpy(),
                                  tm.predict(torch.tensor(x)).numpy())
    t_out = tm(torch.tensor(x[0]), torch.tensor(9))
    r_out = rm(R.tensor(x[0]), R.tensor(9))
    assert type(r_out).__name__ == "_ASMoutput" and r_out._fields == ("output", "loss")
    assert tuple(r_out.output.shape) == tuple(t_out.output.shape) == ()
    np.testing.assert_allclose(r_out.loss.item(), t_out.loss.item(), rtol=1e-5)


@pytest.mark.parametrize("ctor,call,exc,msg", [
    (dict(cutoffs=[]), None, ValueError, "cutoffs should be a sequence of length larger than 0"),
    (dict(cutoffs=[5, 3]), None, ValueError, "cutoffs should be a sequence of unique, positive"),
    (dict(cutoffs=[3]), ((2, 4), [0, 12]), RuntimeError, r"Target values should be in \[0, 9\]"),
    (dict(cutoffs=[3]), ((2, 4), [0]), RuntimeError, "Input and target should have the same "
                                                     "size in the batch dimension."),
    (dict(cutoffs=[3]), ((2, 4), [[0]]), RuntimeError, "0D or 1D target tensor expected"),
])
def test_adaptive_softmax_errors_as_torch(ctor, call, exc, msg):
    for L in (torch, R):
        with pytest.raises(exc, match=msg):
            m = L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, **ctor)
            m(L.zeros(*call[0]), L.tensor(call[1]))


# -- grid_sample / affine_grid --------------------------------------------------------

_GRID_CASES = [(nd, mode, pad, align) for nd in (2, 3)
               for mode in ("bilinear", "nearest", "bicubic")
               for pad in ("zeros", "border", "reflection") for align in (False, True)
               if not (nd == 3 and mode == "bicubic")]


@pytest.mark.parametrize("nd,mode,pad,align", _GRID_CASES)
def test_grid_sample_values_and_grads_as_torch(nd, mode, pad, align):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + (5, 4, 6)[:nd])
    grid = rng.uniform(-1.4, 1.4, (2,) + (3, 4, 2)[:nd] + (nd,))  # some points outside
    outs = []
    for L in (torch, R):
        xt, gt = L.tensor(x, requires_grad=True), L.tensor(grid, requires_grad=True)
        y = L.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=pad,
                                        align_corners=align)
        w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        g_grad = np.zeros_like(grid) if gt.grad is None else gt.grad.numpy()  # nearest: None
        outs.append((y.detach().numpy(), xt.grad.numpy(), g_grad))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode,pad", [("bilinear", "reflection"), ("bicubic", "zeros"),
                                      ("bilinear", "zeros")])
def test_grid_sample_gradcheck_float64(mode, pad):
    from _nn_gradcheck import gradcheck, gradgradcheck

    rng = np.random.default_rng(0)
    x = R.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = R.tensor(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), requires_grad=True)

    def fn():
        return R.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=pad,
                                           align_corners=False)
    assert gradcheck(fn, [x, grid])
    if mode == "bilinear" and pad == "zeros":
        assert gradgradcheck(fn, [x, grid])


@pytest.mark.parametrize("size,align", [((2, 3, 4, 5), False), ((2, 3, 4, 5), True),
                                        ((2, 1, 3, 2, 4), False), ((1, 1, 1, 3), False)])
def test_affine_grid_as_torch(size, align):
    nsp = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((size[0], nsp, nsp + 1))
    outs = []
    for L in (torch, R):
        th = L.tensor(theta, requires_grad=True)
        grid = L.nn.functional.affine_grid(th, size, align_corners=align)
        (grid * grid).sum().backward()
        outs.append((grid.detach().numpy(), th.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda L: L.nn.functional.grid_sample(L.zeros(1, 2, 3, 3), L.zeros(1, 2, 2, 2),
                                           mode="cubic"), ValueError, "expected mode to be"),
    (lambda L: L.nn.functional.grid_sample(L.zeros(1, 2, 3, 3), L.zeros(1, 2, 2, 2),
                                           padding_mode="wrap"), ValueError,
     "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
    (lambda L: L.nn.functional.grid_sample(L.zeros(1, 2, 3, 3, 3), L.zeros(1, 2, 2, 2, 3),
                                           mode="bicubic", align_corners=False), RuntimeError,
     "bicubic interpolation only supports 4D input"),
    (lambda L: L.nn.functional.grid_sample(L.zeros(1, 2, 3, 3), L.zeros(1, 2, 2, 3),
                                           align_corners=False), RuntimeError,
     "expected grid to have size 2 in last dimension"),
    (lambda L: L.nn.functional.grid_sample(L.zeros(1, 2, 3, 3), L.zeros(2, 2, 2, 2),
                                           align_corners=False), RuntimeError,
     "expected grid and input to have same batch size"),
    (lambda L: L.nn.functional.affine_grid(L.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False),
     ValueError, "Expected a batch of 2D affine matrices of shape Nx2x3"),
    (lambda L: L.nn.functional.affine_grid(L.zeros(1, 2, 3), (1, 1, 2), align_corners=False),
     NotImplementedError, "affine_grid only supports 4D and 5D sizes"),
])
def test_grid_errors_as_torch(call, exc, msg):
    for L in (torch, R):
        with pytest.raises(exc, match=msg):
            call(L)


def test_grid_default_align_corners_warns_as_torch():
    for L in (torch, R):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has "
                          "changed to align_corners=False since 1.3.0"):
            L.nn.functional.affine_grid(L.zeros(1, 2, 3), (1, 1, 2, 2))


# -- interpolate: bicubic and antialias ------------------------------------------------


@pytest.mark.parametrize("mode,antialias,align", [
    (m, aa, al) for m in ("bilinear", "bicubic") for aa in (False, True) for al in (False, True)
] + [("lanczos", True, False)])
@pytest.mark.parametrize("kw", [{"size": (4, 5)}, {"size": (11, 13)},
                                {"scale_factor": (2.3, 0.5)}])
def test_interpolate_cubic_and_antialias_as_torch(mode, antialias, align, kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9))
    outs = []
    for L in (torch, R):
        xt = L.tensor(x, requires_grad=True)
        y = L.nn.functional.interpolate(xt, mode=mode, antialias=antialias,
                                        align_corners=align, **kw)
        w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        outs.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_interpolate_bicubic_antialias_gradcheck_float64():
    from _nn_gradcheck import gradcheck

    x = R.tensor(np.random.default_rng(0).standard_normal((1, 1, 5, 4)), requires_grad=True)
    assert gradcheck(lambda: R.nn.functional.interpolate(x, size=(3, 6), mode="bicubic",
                                                         antialias=True), [x])


def test_interpolate_antialias_refuses_other_modes_as_torch():
    for L in (torch, R):
        with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, "
                           "bicubic, and lanczos modes and requires a 4-D tensor as input"):
            L.nn.functional.interpolate(L.zeros(1, 1, 4), size=2, mode="linear",
                                        antialias=True)
        with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors "
                           r"supported \(got 3D\) for the modes: .* \(got bicubic\)"):
            L.nn.functional.interpolate(L.zeros(1, 1, 4), size=2, mode="bicubic")
        with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
            L.nn.functional.interpolate(L.zeros(1, 1, 4, 4), size=2, mode="lanczos")


# -- fractional max pooling -----------------------------------------------------------


@pytest.mark.parametrize("nsp,shape,kernel,kw", [
    (2, (2, 3, 9, 11), 3, {"output_size": (4, 5)}),
    (2, (3, 10, 7), 2, {"output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 7, 8, 9), (1, 2, 3), {"output_ratio": 0.6}),
])
def test_fractional_max_pool_draws_values_indices_grads_as_torch(nsp, shape, kernel, kw):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x.flat[5] = np.nan  # a NaN wins its windows, as in PyTorch's kernel
    outs = []
    for L in (torch, R):
        L.manual_seed(7)  # the windows are drawn from the global generator
        xt = L.tensor(x, requires_grad=True)
        fn = getattr(L.nn.functional, f"fractional_max_pool{nsp}d")
        y, idx = fn(xt, kernel, return_indices=True, **kw)
        w = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(np.float32))
        (y * w).nan_to_num().sum().backward()
        outs.append((y.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(b, a)


def test_fractional_max_pool_gradcheck_float64():
    from _nn_gradcheck import gradcheck

    x = R.tensor(np.random.default_rng(1).standard_normal((1, 2, 6, 7)), requires_grad=True)
    samples = R.tensor(np.random.default_rng(2).random((1, 2, 2)))
    assert gradcheck(lambda: R.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(4, 3), _random_samples=samples), [x])


@pytest.mark.parametrize("call,exc,msg", [
    (lambda L: L.nn.functional.fractional_max_pool2d(L.zeros(1, 2, 5, 5), 2), ValueError,
     "fractional_max_pool2d requires specifying either an output_size or an output_ratio"),
    (lambda L: L.nn.functional.fractional_max_pool2d(L.zeros(1, 2, 5, 5), 4, output_size=3),
     RuntimeError, "pool height 4 too large relative to input height 5"),
    (lambda L: L.nn.functional.fractional_max_pool2d(
        L.zeros(1, 2, 5, 5), 2, output_size=3, _random_samples=L.rand(1, 3, 2)), RuntimeError,
     r"Expect _random_samples.size\(1\) equals to input channel size."),
    (lambda L: L.nn.functional.fractional_max_pool2d(
        L.zeros(1, 2, 5, 5), 2, output_size=3, _random_samples=L.rand(1, 2, 2).double()),
     RuntimeError, "Expect _random_samples to have the same dtype as input"),
    (lambda L: L.nn.FractionalMaxPool2d(2), ValueError,
     "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"),
    (lambda L: L.nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5), ValueError,
     "only one of output_size and output_ratio may be specified"),
    (lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5), ValueError,
     r"output_ratio must be between 0 and 1 \(got 1.5\)"),
])
def test_fractional_max_pool_errors_as_torch(call, exc, msg):
    for L in (torch, R):
        with pytest.raises(exc, match=msg):
            call(L)


def test_lazy_modules_deepcopy_and_pickle_before_the_dry_run():
    import copy
    import pickle

    net = R.nn.Sequential(R.nn.LazyLinear(3), R.nn.LazyBatchNorm1d())
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert clone(R.ones(2, 5)).shape == (2, 3)
        assert type(clone[0]).__name__ == "Linear" and tuple(clone[0].weight.shape) == (3, 5)
        assert type(clone[1]).__name__ == "BatchNorm1d"
    assert type(net[0]).__name__ == "LazyLinear" and net[0].has_uninitialized_params()
    h = net[0].register_forward_pre_hook(lambda m, a: None)  # ids stay unique after a load
    assert h.id not in (net[0]._initialize_hook.id, net[0]._load_hook.id)
