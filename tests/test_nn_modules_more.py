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
