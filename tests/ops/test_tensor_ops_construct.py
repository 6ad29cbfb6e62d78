"""The construction / shape / matmul additions of issue 16 that the op database does not
cover (its entries are in opdb_construct.py): the ``torch.*`` forms of the nn functions
(Note [Top-level nn names]), ``apply_``/``map_``, ``finfo``/``iinfo``, ``can_cast``, the
predicates, the deprecation warnings, and the coverage page's exclusions.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(16)


def _pair(*shape, positive=False, requires_grad=True):
    a = _RNG.uniform(0.2 if positive else -1.0, 1.0, shape)
    return (torch.tensor(a, requires_grad=requires_grad),
            R.tensor(a, requires_grad=requires_grad))


def _np(t):
    return np.asarray(t.detach().numpy(force=True)) if hasattr(t, "detach") else t


def _same(fn, *shapes, positive=False, grad=True, extra=()):
    """fn(torch, *tensors) == fn(R, *tensors): values and (if grad) input gradients."""
    pairs = [_pair(*s, positive=positive, requires_grad=grad) for s in shapes]
    outs = []
    for k, m in enumerate((torch, R)):
        xs = [p[k] for p in pairs]
        out = fn(m, *xs, *[e[k] if isinstance(e, tuple) else e for e in extra])
        flat = list(out) if isinstance(out, tuple) else [out]
        grads = []
        if grad:
            diff = [o for o in flat if o.requires_grad]
            if diff:
                s = sum((o * (m.arange(o.numel(), dtype=o.dtype).reshape(o.shape) + 1)).sum()
                        for o in diff)
                s.backward()
                grads = [None if x.grad is None else _np(x.grad) for x in xs]
        outs.append(([_np(o) for o in flat], [str(o.dtype) for o in flat], grads))
    (tv, td, tg), (rv, rd, rg) = outs
    assert rd == td
    for a, b in zip(rv, tv):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert len(rg) == len(tg)
    for a, b in zip(rg, tg):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------
# the torch.* forms of the nn functions

NN_CALLS = {
    "conv1d": ((2, 3, 6), (4, 3, 3)), "conv2d": ((1, 2, 4, 4), (3, 2, 2, 2)),
    "conv3d": ((1, 1, 3, 3, 3), (2, 1, 2, 2, 2)),
    "conv_transpose1d": ((1, 2, 4), (2, 3, 3)), "conv_transpose2d": ((1, 2, 3, 3), (2, 1, 2, 2)),
    "conv_transpose3d": ((1, 1, 2, 2, 2), (1, 2, 2, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(NN_CALLS))
def test_top_level_convolutions(name):
    _same(lambda m, x, w: getattr(m, name)(x, w, None, 1, 1), *NN_CALLS[name])


@pytest.mark.parametrize("call,shapes", [
    (lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
     [(4, 3), (3,), (3,)]),
    (lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
     [(2, 3, 4), (3,), (3,)]),
    (lambda m, x, w, b: m.layer_norm(x, [4], w, b, 1e-5, False), [(2, 4), (4,), (4,)]),
    (lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-5, True), [(2, 4, 3), (4,), (4,)]),
    (lambda m, x, w: m.prelu(x, w), [(2, 3, 4), (3,)]),
    (lambda m, x, w: m.prelu(x, w), [(5,), (1,)]),
    (lambda m, x: m.selu(x), [(3, 4)]),
    (lambda m, x: m.celu(x, 0.5), [(3, 4)]),
    (lambda m, x: m.threshold(x, 0.1, -2.0), [(3, 4)]),
    (lambda m, x: m.max_pool1d(x, 2), [(2, 3, 6)]),
    (lambda m, x: m.max_pool1d_with_indices(x, 3, [], 1, 1, True), [(2, 3, 7)]),
    (lambda m, x: m.max_pool2d(x, 2, [1, 1]), [(1, 2, 4, 4)]),
    (lambda m, x: m.max_pool3d(x, 2), [(1, 1, 4, 4, 4)]),
    (lambda m, x: m.avg_pool1d(x, 3, [], 1), [(2, 3, 7)]),
    (lambda m, x: m.adaptive_avg_pool1d(x, 3), [(2, 3, 7)]),
    (lambda m, x: m.adaptive_max_pool1d(x, 3), [(2, 3, 7)]),
    (lambda m, x, y, w, b: m.bilinear(x, y, w, b), [(2, 3), (2, 4), (5, 3, 4), (5,)]),
    (lambda m, x: m.pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
    (lambda m, x: m.pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    (lambda m, x: m.channel_shuffle(x, 2), [(1, 4, 2, 2)]),
    (lambda m, x, y: m.kl_div(x, y.abs()), [(3, 4), (3, 4)]),
    (lambda m, x, y: m.kl_div(x, y, 2, log_target=True), [(3, 4), (3, 4)]),
    (lambda m, x, y: m.kl_div(x, y.abs(), 1), [(3, 4), (3, 4)]),
    (lambda m, x, y, t: m.margin_ranking_loss(x, y, t.sign(), 0.2, 0), [(5,), (5,), (5,)]),
    (lambda m, x, t: m.hinge_embedding_loss(x, t.sign(), 0.5, 2), [(5,), (5,)]),
    (lambda m, x, y, t: m.cosine_embedding_loss(x, y, t.sign(), 0.1), [(3, 4), (3, 4), (3,)]),
    (lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6, True, 0),
     [(3, 4), (3, 4), (3, 4)]),
    (lambda m, x, y: m.poisson_nll_loss(x, y.abs(), True, True, 1e-8, 1), [(3, 4), (3, 4)]),
    (lambda m, x, y, w: m.binary_cross_entropy_with_logits(x, y.abs(), None,
                                                               w.detach().abs(), 2),
     [(3, 4), (3, 4), (4,)]),
])
def test_top_level_nn_forms_match_torch(call, shapes):
    _same(call, *shapes)


@pytest.mark.parametrize("pad", [-1, 1])
def test_top_level_embedding_takes_the_weight_first(pad):
    _same(lambda m, w: m.embedding(w, m.tensor([[0, 2], [1, 2]]), pad), (3, 4))


def test_native_channel_shuffle_values():
    # PyTorch's native_channel_shuffle has no derivative; its values are channel_shuffle's
    _same(lambda m, x: m.native_channel_shuffle(x, 2), (1, 4, 2, 2), grad=False)


def test_top_level_losses_reduce_nothing_by_default_as_torch():
    # PyTorch 2.13's bindings read the omitted reduction as 0 (Note [Top-level nn names])
    _same(lambda m, x, y: m.kl_div(x, y.abs()), (3, 4), (3, 4))
    _same(lambda m, x, y: m.binary_cross_entropy_with_logits(x, y.abs()), (3, 4), (3, 4))
    with pytest.raises(TypeError):
        torch.kl_div(torch.zeros(2), torch.ones(2), 1, True)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout",
                                  "feature_alpha_dropout"])
def test_top_level_dropouts_draw_torch_masks(name):
    outs = []
    for m in (torch, R):
        m.manual_seed(3)
        x = m.ones(2, 3, 4, dtype=m.float64)
        y = getattr(m, name)(x, 0.4, True)
        z = getattr(m, name + "_")(x * 1, 0.4, True)
        outs.append((_np(y), _np(z), _np(getattr(m, name)(x, 0.4, False))))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_top_level_in_place_activations():
    for name, args in (("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.0, 3.0))):
        vals = []
        for m in (torch, R):
            x = m.tensor([-1.0, 0.5, 2.0], dtype=m.float64)
            assert getattr(m, name)(x, *args) is x
            vals.append(_np(x))
        np.testing.assert_allclose(vals[1], vals[0], rtol=1e-12)


def test_top_level_losses_take_aten_reduction_ints():
    x, y = R.zeros(2), R.ones(2)
    with pytest.raises(TypeError, match="reduction must be an int"):
        R.kl_div(x, y, "mean")
    with pytest.raises(TypeError):
        torch.kl_div(torch.zeros(2), torch.ones(2), "mean")


# ---------------------------------------------------------------------------------
# apply_ / map_


def test_apply_and_map_like_torch():
    res = []
    for m in (torch, R):
        x = m.tensor([[1.0, -2.0], [3.0, 4.0]]).t()
        x.apply_(lambda v: v * v - 1)
        i = m.tensor([5, 6, 7]).apply_(lambda v: v / 2)
        y = m.ones(2, 3)
        y.map_(m.tensor([1.0, 2.0, 3.0]), lambda a, b: a * 10 + b)
        res.append((_np(x), _np(i), str(i.dtype), _np(y), x._version, y._version))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])
    assert res[1][2] == res[0][2]
    np.testing.assert_array_equal(res[1][3], res[0][3])
    assert res[1][4:] == res[0][4:]


def test_apply_and_map_errors_like_torch():
    for m in (torch, R):
        with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that "
                                               "requires grad"):
            m.ones(2, requires_grad=True).apply_(lambda v: v)
        with pytest.raises(TypeError, match="must be real number, not str"):
            m.ones(2).apply_(lambda v: "a")
        with pytest.raises(TypeError, match="map_: expected torch.FloatTensor for 'other' "
                                            r"\(got torch.DoubleTensor\)"):
            m.ones(2).map_(m.ones(2, dtype=m.float64), lambda a, b: a)


# ---------------------------------------------------------------------------------
# dtype information and predicates

_FLOATS = ["float16", "bfloat16", "float32", "float64"]
_INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", _FLOATS)
def test_finfo_like_torch(name):
    t, r = torch.finfo(getattr(torch, name)), R.finfo(getattr(R, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(r, attr) == getattr(t, attr), attr
    assert repr(r) == repr(t)


@pytest.mark.parametrize("name", _INTS)
def test_iinfo_like_torch(name):
    t, r = torch.iinfo(getattr(torch, name)), R.iinfo(getattr(R, name))
    assert (r.bits, r.max, r.min, r.dtype) == (t.bits, t.max, t.min, t.dtype)
    assert repr(r) == repr(t)


def test_finfo_iinfo_errors_and_default():
    assert R.finfo().dtype == "float32"
    for m in (torch, R):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            m.finfo(m.int32)
        with pytest.raises(TypeError, match="requires an integer input type"):
            m.iinfo(m.float32)
        with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
            m.iinfo(m.bool)


def test_can_cast_like_torch():
    names = _FLOATS + _INTS + ["bool"]
    for a in names:
        for b in names:
            assert R.can_cast(getattr(R, a), getattr(R, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    with pytest.raises(TypeError, match="argument 'from_' \\(position 1\\) must be torch.dtype"):
        R.can_cast(1, R.float32)


def test_predicates_like_torch():
    for m in (torch, R):
        x = m.tensor([1.5])
        assert m.is_nonzero(x) and not m.is_nonzero(m.tensor([0]))
        assert m.is_same_size(x, m.zeros(1)) and not m.is_same_size(x, m.zeros(1, 1))
        assert m.is_signed(x) and not m.is_signed(m.tensor([1], dtype=m.uint8))
        assert not m.is_conj(x) and not m.is_neg(x) and not m.is_complex(x)
        assert not m.is_inference(x)
        assert m.conj(x) is x and m.resolve_conj(x) is x and m.resolve_neg(x) is x
        assert m.positive(x) is x and m.conj_physical(x) is x
        for bad in (m.tensor([1, 2]), m.tensor([])):
            with pytest.raises(RuntimeError, match="Boolean value of Tensor with"):
                m.is_nonzero(bad)
        with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor"):
            m.positive(m.tensor([True]))


# ---------------------------------------------------------------------------------
# deprecations and argument forms


def test_deprecation_warnings_like_torch():
    # torch.range warns from Python on every call; meshgrid's and chain_matmul's warnings
    # are TORCH_WARN_ONCE in PyTorch (once a process, so only retrograd's are checked here:
    # Python's own filters show each once a call site)
    for m in (torch, R):
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            m.range(1, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.meshgrid(m.ones(2), indexing="ij")
    with pytest.warns(UserWarning, match="torch.meshgrid: in an upcoming release"):
        R.meshgrid(R.ones(2), R.ones(3))
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        R.chain_matmul(R.eye(2), R.eye(2))


def test_range_values_and_dtypes_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, kw in (((1, 4), {}), ((0, 1, 0.1), {}), ((5, 1, -1.5), {}),
                         ((1, 4), {"dtype": "int64"}), ((0, 1, 0.3), {"dtype": "float64"})):
            t = torch.range(*args, **{k: getattr(torch, v) for k, v in kw.items()})
            r = R.range(*args, **{k: getattr(R, v) for k, v in kw.items()})
            assert str(r.dtype) == str(t.dtype)
            np.testing.assert_array_equal(_np(r), _np(t))
        for m in (torch, R):
            with pytest.raises(RuntimeError, match="step must be nonzero"):
                m.range(0, 3, 0)
            with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
                m.range(4, 1)


def test_block_diag_of_nothing_and_parameters_new_tensors():
    assert tuple(R.block_diag().shape) == tuple(torch.block_diag().shape) == (1, 0)
    for m in (torch, R):
        p = m.nn.Parameter(m.ones(2))
        for made in (p.new_zeros(3), p.new_ones(3), p.new_full((3,), 2.0), p.new_empty(3),
                     p.new_tensor([1.0, 2.0])):
            assert type(made) is m.Tensor and not made.requires_grad


def test_exposed_as_torch_exposes_them():
    for name in ("swapdims", "true_divide", "fix_", "gcd_", "lcm_", "addmv_", "detach_"):
        assert hasattr(R, name) == hasattr(torch, name), name
    for name in ("rsub", "combinations", "can_cast", "t_copy"):
        assert not hasattr(R.Tensor, name) and not hasattr(torch.Tensor, name), name
    for name in ("narrow_copy", "rot90", "vdot", "sgn_", "bitwise_left_shift_", "apply_",
                 "map_", "diag_embed", "hsplit", "split_with_sizes", "ravel", "positive"):
        assert hasattr(R.Tensor, name) and hasattr(torch.Tensor, name), name


# ---------------------------------------------------------------------------------
# the coverage page's exclusions (EXCLUSIONS and its note in docs/gen_coverage.py)

def _gen_coverage():
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "gen_coverage.py")
    spec = importlib.util.spec_from_file_location("gen_coverage", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_coverage_exclusions_are_explicit_and_exact():
    g = _gen_coverage()
    assert set(g.EXCLUSIONS) == {"devices", "quantization", "sparse", "TorchScript internals",
                                 "complex-only"}
    assert all(spec["reason"] for spec in g.EXCLUSIONS.values())
    cases = {
        ("torch", "cudnn_convolution"): "devices", ("torch.Tensor", "is_mps"): "devices",
        ("torch", "quantize_per_tensor"): "quantization", ("torch", "qint8"): "quantization",
        ("torch", "fake_quantize_per_tensor_affine"): "quantization",
        ("torch.Tensor", "q_scale"): "quantization", ("torch", "sparse_coo_tensor"): "sparse",
        ("torch", "hspmm"): "sparse", ("torch", "crow_indices_copy"): "sparse",
        ("torch", "ScriptModule"): "TorchScript internals",
        ("torch", "TensorType"): "TorchScript internals",
        ("torch", "parse_ir"): "TorchScript internals", ("torch", "fork"): "TorchScript internals",
        ("torch", "view_as_complex"): "complex-only", ("torch.Tensor", "imag"): "complex-only",
        # names that only look like the families stay counted
        ("torch", "quantile"): None, ("torch", "flipud"): None, ("torch", "qr"): None,
        ("torch.nn.init", "sparse_"): None, ("torch", "conj"): None, ("torch", "is_tensor"): None,
    }
    for (module, name), family in cases.items():
        assert g.excluded(module, name) == family, (module, name)


def test_coverage_page_lists_each_family_with_its_reason():
    g = _gen_coverage()
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "coverage.md")
    with open(path) as f:
        page = f.read()
    for family, spec in g.EXCLUSIONS.items():
        assert f"**Left out ({family}: {spec['reason']}):**" in page, family
    assert "| `torch.Tensor` |" in page
