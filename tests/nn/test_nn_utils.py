"""retrograd.nn.utils and retrograd.nn.init against torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import retrograd as R
import retrograd.nn as rnn


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    rm = rnn.Sequential(rnn.Linear(4, 3), rnn.Tanh(), rnn.Linear(3, 2))
    rm.load_state_dict({k: R.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
    (tm(torch.tensor(x)) ** 2).sum().backward()
    (rm(R.tensor(x)) ** 2).sum().backward()
    return tm, rm


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    tm, rm = _models()
    nt = float(norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tm.parameters(), max_norm, norm_type=nt, foreach=True)
    rn = R.nn.utils.clip_grad_norm_(rm.parameters(), max_norm, norm_type=norm_type,
                                    foreach=True)
    assert isinstance(rn, R.Tensor) and rn.dim() == 0
    np.testing.assert_allclose(rn.item(), tn.item(), rtol=1e-6)
    for a, b in zip(tm.parameters(), rm.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_edge_cases():
    p = rnn.Parameter(R.ones(2))
    assert R.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0  # no grads
    p.grad = R.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        R.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    tp = torch.nn.Parameter(torch.ones(2))
    tp.grad = torch.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as re_:
        R.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert str(te.value) in str(re_.value)
    # a single tensor is accepted
    q = rnn.Parameter(R.zeros(2))
    q.grad = R.tensor([3.0, 4.0])
    assert R.nn.utils.clip_grad_norm_(q, 1.0).item() == 5.0
    np.testing.assert_allclose(q.grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_clip_grad_value_and_total_norm_helpers():
    tm, rm = _models()
    torch.nn.utils.clip_grad_value_(tm.parameters(), 0.1)
    R.nn.utils.clip_grad_value_(rm.parameters(), 0.1)
    for a, b in zip(tm.parameters(), rm.parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-7)
    grads_t = [p.grad for p in tm.parameters()]
    grads_r = [p.grad for p in rm.parameters()]
    np.testing.assert_allclose(R.nn.utils.get_total_norm(grads_r, 3.0).item(),
                               torch.nn.utils.get_total_norm(grads_t, 3.0).item(), rtol=1e-6)


def test_parameters_vector_roundtrip_matches_torch():
    tm, rm = _models()
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    rv = R.nn.utils.parameters_to_vector(rm.parameters())
    np.testing.assert_array_equal(rv.detach().numpy(), tv.detach().numpy())
    new = np.arange(rv.numel(), dtype=np.float32)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    R.nn.utils.vector_to_parameters(R.tensor(new), rm.parameters())
    for a, b in zip(tm.parameters(), rm.parameters()):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
        assert isinstance(b, rnn.Parameter)
    # parameters_to_vector is differentiable
    w = rnn.Parameter(R.ones(2, 2))
    (R.nn.utils.parameters_to_vector([w]) * R.arange(4.0)).sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        R.nn.utils.vector_to_parameters([1.0], [w])


# ---------------------------------------------------------------------------------
# init


@pytest.mark.parametrize("nl,param", [("linear", None), ("relu", None), ("tanh", None),
                                      ("leaky_relu", None), ("leaky_relu", 0.2),
                                      ("selu", None), ("sigmoid", None), ("conv2d", None)])
def test_calculate_gain(nl, param):
    assert R.nn.init.calculate_gain(nl, param) == torch.nn.init.calculate_gain(nl, param)


def test_init_functions_statistics():
    g = R.Generator().manual_seed(0)
    w = R.empty(400, 300)
    R.nn.init.xavier_uniform_(w, gain=2.0, generator=g)
    bound = 2.0 * math.sqrt(6.0 / 700)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.95 * bound
    R.nn.init.xavier_normal_(w)
    assert abs(float(w.std()) - math.sqrt(2.0 / 700)) < 0.02 * math.sqrt(2.0 / 700) * 5
    R.nn.init.kaiming_uniform_(w, a=0, mode="fan_out", nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / 400)
    assert float(w.abs().max()) <= bound
    R.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")
    assert abs(float(w.std()) - math.sqrt(2.0 / 300)) < 0.05 * math.sqrt(2.0 / 300)
    R.nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert float(w.min()) >= -1.0 and float(w.max()) <= 2.0
    t = torch.empty(400, 300)
    torch.nn.init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert abs(float(w.mean()) - float(t.mean())) < 0.02
    assert abs(float(w.std()) - float(t.std())) < 0.02
    R.nn.init.normal_(w, 3.0, 0.5)
    assert abs(float(w.mean()) - 3.0) < 0.01
    R.nn.init.uniform_(w, -2, -1)
    assert float(w.max()) <= -1 and float(w.min()) >= -2


def test_init_orthogonal_eye_dirac_constant():
    for shape in ((3, 5), (5, 3), (4, 2, 2)):
        w = R.empty(*shape)
        R.nn.init.orthogonal_(w, gain=2.0)
        flat = w.reshape(shape[0], -1).numpy().astype(np.float64)
        if flat.shape[0] <= flat.shape[1]:
            np.testing.assert_allclose(flat @ flat.T, 4 * np.eye(flat.shape[0]), atol=1e-5)
        else:
            np.testing.assert_allclose(flat.T @ flat, 4 * np.eye(flat.shape[1]), atol=1e-5)
    assert R.nn.init.eye_(R.empty(2, 3)).tolist() == torch.nn.init.eye_(torch.empty(2, 3)).tolist()
    assert R.nn.init.dirac_(R.empty(4, 2, 3), groups=2).tolist() == \
        torch.nn.init.dirac_(torch.empty(4, 2, 3), groups=2).tolist()
    assert R.nn.init.zeros_(R.empty(2)).tolist() == [0.0, 0.0]
    assert R.nn.init.ones_(R.empty(2)).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        R.nn.init.xavier_uniform_(R.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        R.nn.init.calculate_gain("nope")


def test_init_on_parameters_keeps_leaf_and_bumps_version():
    p = rnn.Parameter(R.zeros(3))
    v = p._version
    R.nn.init.constant_(p, 2.0)
    assert p.is_leaf and p.requires_grad and p._version == v + 1
    assert p.tolist() == [2.0, 2.0, 2.0]
