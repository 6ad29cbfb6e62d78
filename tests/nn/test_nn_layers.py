"""The nn test database: every layer, activation and loss against torch.

Each ``Case`` builds the same module in torch and in retrograd (weights copied across
through ``state_dict``: torch tensors -> NumPy -> retrograd.tensor), runs both on the
same inputs and compares outputs, input gradients and parameter gradients. The same
cases run ``gradcheck`` and ``gradgradcheck`` in float64 (tests/support/_nn_gradcheck.py) with
respect to the floating inputs and every parameter. A meta-test checks that every
layer class exported by ``retrograd.nn`` has a case.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

import _nn_cases_nnloss
import _nn_cases_nnmods
import retrograd as R
import retrograd.nn as rnn
from _nn_gradcheck import gradcheck, gradgradcheck


@dataclass
class Case:
    name: str
    make: Callable[[Any], Any]          # lib -> module (lib is torch or retrograd)
    inputs: list                        # input specs, see _make_input
    call: Callable | None = None        # (module, *inputs) -> output; default module(*inputs)
    train: bool = True
    tol: tuple = (1e-4, 1e-5)
    gc: bool = True                     # gradcheck in float64
    ggc: bool = True                    # gradgradcheck in float64
    gc_inputs: list | None = None       # smaller input specs for the gradchecks
    torch_cmp: bool = True
    covers: tuple = ()                  # extra retrograd.nn class names this case covers
    extra: dict = field(default_factory=dict)


def _make_input(spec, rng):
    kind, shape = spec[0], spec[1]
    if kind == "f":
        return rng.standard_normal(shape).astype(np.float32), True
    if kind == "fc":  # float constant (no grad wanted)
        return rng.standard_normal(shape).astype(np.float32), False
    if kind == "u":
        return rng.uniform(0.05, 0.95, shape).astype(np.float32), True
    if kind == "uc":
        return rng.uniform(0.0, 1.0, shape).astype(np.float32), False
    if kind == "c":  # class indices in [0, spec[2])
        return rng.integers(0, spec[2], shape).astype(np.int64), False
    if kind == "s":  # +-1
        return np.where(rng.random(shape) < 0.5, -1, 1).astype(np.int64), False
    if kind == "p":  # probabilities along dim 1 (or 0 for 1-D)
        x = rng.standard_normal(shape)
        d = 1 if len(shape) > 1 else 0
        e = np.exp(x)
        return (e / e.sum(axis=d, keepdims=True)).astype(np.float32), spec[2] if len(spec) > 2 \
            else False
    if kind == "lp":  # log-probabilities along dim 1
        x = rng.standard_normal(shape)
        d = 1 if len(shape) > 1 else 0
        lp = x - np.log(np.exp(x).sum(axis=d, keepdims=True))
        return lp.astype(np.float32), True
    if kind == "b":
        return rng.random(shape) < spec[2], False
    if kind == "const":
        return np.asarray(spec[2]), False
    raise ValueError(kind)


def _to(lib, arr, rg, dtype=None):
    if arr.dtype == np.float32 and dtype is not None:
        arr = arr.astype(np.float64)
    t = lib.tensor(arr)
    if rg and arr.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def _float_outs(out) -> list:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_float_outs(o))
        return res
    if out is None:
        return []
    return [out] if out.dtype.is_floating_point else []


def _copy_state(tm, rm):
    sd = {k: R.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    res = rm.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys


def T(lib, data, dtype="float32"):
    return lib.tensor(np.asarray(data, dtype=dtype))


def _mha_call(m, q, k, v):
    return m(q, k, v)


CASES = [
    # linear layers
    Case("Identity", lambda L: L.nn.Identity(), [("f", (2, 3))], ggc=False),
    Case("Linear", lambda L: L.nn.Linear(3, 4), [("f", (2, 3))],
         gc_inputs=[("f", (2, 3))]),
    Case("Linear-3d-nobias", lambda L: L.nn.Linear(3, 2, bias=False), [("f", (2, 2, 3))]),
    Case("Linear-1d", lambda L: L.nn.Linear(3, 2), [("f", (3,))]),
    Case("Bilinear", lambda L: L.nn.Bilinear(2, 3, 2), [("f", (2, 2)), ("f", (2, 3))]),
    Case("Flatten", lambda L: L.nn.Flatten(), [("f", (2, 3, 2))], ggc=False),
    Case("Unflatten", lambda L: L.nn.Unflatten(1, (2, 3)), [("f", (2, 6))], ggc=False),
    # convolutions
    Case("Conv1d", lambda L: L.nn.Conv1d(2, 3, 3, stride=2, padding=1), [("f", (2, 2, 7))],
         gc_inputs=[("f", (1, 2, 5))]),
    Case("Conv1d-same-dil", lambda L: L.nn.Conv1d(2, 2, 2, padding="same", dilation=1),
         [("f", (2, 2, 6))], gc_inputs=[("f", (1, 2, 4))]),
    Case("Conv2d", lambda L: L.nn.Conv2d(2, 3, 3, padding=1), [("f", (2, 2, 5, 5))],
         gc_inputs=[("f", (1, 2, 3, 3))]),
    Case("Conv2d-stride-dil-groups",
         lambda L: L.nn.Conv2d(4, 4, (3, 2), stride=(2, 1), padding=(2, 1), dilation=2,
                               groups=2),
         [("f", (2, 4, 7, 6))], gc_inputs=[("f", (1, 4, 5, 3))]),
    Case("Conv2d-valid-nobias", lambda L: L.nn.Conv2d(2, 2, 2, padding="valid", bias=False),
         [("f", (1, 2, 4, 3))], gc_inputs=[("f", (1, 2, 3, 3))]),
    Case("Conv2d-same-even", lambda L: L.nn.Conv2d(1, 2, (2, 4), padding="same"),
         [("f", (2, 1, 5, 6))], gc_inputs=[("f", (1, 1, 3, 4))]),
    Case("Conv2d-reflect", lambda L: L.nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect"),
         [("f", (2, 1, 4, 5))], gc_inputs=[("f", (1, 1, 3, 3))]),
    Case("Conv2d-circular", lambda L: L.nn.Conv2d(1, 1, 3, padding=1, padding_mode="circular"),
         [("f", (1, 1, 4, 4))], gc_inputs=[("f", (1, 1, 3, 3))]),
    Case("Conv2d-replicate", lambda L: L.nn.Conv2d(1, 1, 3, padding=2,
                                                   padding_mode="replicate"),
         [("f", (1, 1, 3, 4))], gc_inputs=[("f", (1, 1, 2, 2))]),
    Case("Conv2d-unbatched", lambda L: L.nn.Conv2d(2, 1, 2), [("f", (2, 3, 3))]),
    Case("Conv3d", lambda L: L.nn.Conv3d(1, 2, 2, stride=(1, 2, 1)), [("f", (1, 1, 3, 4, 3))],
         gc_inputs=[("f", (1, 1, 2, 3, 2))]),
    Case("ConvTranspose1d", lambda L: L.nn.ConvTranspose1d(2, 1, 3, stride=2, padding=1,
                                                           output_padding=1),
         [("f", (2, 2, 4))], gc_inputs=[("f", (1, 2, 3))]),
    Case("ConvTranspose2d", lambda L: L.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1,
                                                           output_padding=1),
         [("f", (2, 2, 3, 4))], gc_inputs=[("f", (1, 2, 2, 2))]),
    Case("ConvTranspose2d-groups-dil", lambda L: L.nn.ConvTranspose2d(
        4, 2, 2, stride=(1, 2), groups=2, dilation=2, bias=False),
        [("f", (1, 4, 3, 3))], gc_inputs=[("f", (1, 4, 2, 2))]),
    Case("ConvTranspose3d", lambda L: L.nn.ConvTranspose3d(1, 1, 2, stride=2),
         [("f", (1, 1, 2, 2, 2))], gc_inputs=[("f", (1, 1, 1, 2, 2))]),
    # pooling
    Case("MaxPool1d", lambda L: L.nn.MaxPool1d(3, stride=2, padding=1), [("f", (2, 2, 7))]),
    Case("MaxPool2d", lambda L: L.nn.MaxPool2d(2), [("f", (2, 2, 4, 5))]),
    Case("MaxPool2d-pad-dil-ceil",
         lambda L: L.nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True),
         [("f", (1, 2, 7, 6))], gc_inputs=[("f", (1, 1, 5, 5))]),
    Case("MaxPool2d-indices", lambda L: L.nn.MaxPool2d((2, 3), stride=(1, 2),
                                                       return_indices=True),
         [("f", (1, 2, 4, 7))], gc_inputs=[("f", (1, 1, 3, 5))]),
    Case("MaxPool3d", lambda L: L.nn.MaxPool3d(2), [("f", (1, 1, 4, 4, 2))]),
    Case("AvgPool1d", lambda L: L.nn.AvgPool1d(3, stride=2, padding=1), [("f", (2, 2, 7))]),
    Case("AvgPool2d", lambda L: L.nn.AvgPool2d(2), [("f", (2, 2, 4, 5))]),
    Case("AvgPool2d-pad-ceil-nocount",
         lambda L: L.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                  count_include_pad=False),
         [("f", (1, 2, 6, 7))], gc_inputs=[("f", (1, 1, 4, 4))]),
    Case("AvgPool2d-divisor", lambda L: L.nn.AvgPool2d(2, stride=1, divisor_override=3),
         [("f", (1, 1, 3, 4))]),
    Case("AvgPool3d", lambda L: L.nn.AvgPool3d(2, stride=1), [("f", (1, 1, 3, 3, 2))]),
    Case("AdaptiveAvgPool1d", lambda L: L.nn.AdaptiveAvgPool1d(3), [("f", (2, 2, 7))]),
    Case("AdaptiveAvgPool2d", lambda L: L.nn.AdaptiveAvgPool2d((3, 2)), [("f", (2, 2, 5, 7))],
         gc_inputs=[("f", (1, 1, 4, 5))]),
    Case("AdaptiveAvgPool2d-global", lambda L: L.nn.AdaptiveAvgPool2d(1),
         [("f", (2, 3, 4, 4))], gc_inputs=[("f", (1, 2, 3, 3))]),
    # normalization
    Case("BatchNorm1d", lambda L: L.nn.BatchNorm1d(3), [("f", (4, 3))]),
    Case("BatchNorm1d-3d-eval", lambda L: L.nn.BatchNorm1d(2, momentum=None), [("f", (3, 2, 4))],
         train=False),
    Case("BatchNorm2d", lambda L: L.nn.BatchNorm2d(2), [("f", (3, 2, 3, 3))],
         gc_inputs=[("f", (2, 2, 2, 2))]),
    Case("BatchNorm2d-noaffine-eval", lambda L: L.nn.BatchNorm2d(2, affine=False),
         [("f", (2, 2, 3, 3))], train=False),
    Case("BatchNorm3d", lambda L: L.nn.BatchNorm3d(1), [("f", (2, 1, 2, 2, 2))]),
    # without a process group SyncBatchNorm is batch norm (the ranks: test_sync_batchnorm)
    Case("SyncBatchNorm", lambda L: L.nn.SyncBatchNorm(2), [("f", (3, 2, 2))]),
    Case("SyncBatchNorm-eval", lambda L: L.nn.SyncBatchNorm(2, momentum=None),
         [("f", (2, 2, 3, 3))], train=False),
    Case("InstanceNorm1d", lambda L: L.nn.InstanceNorm1d(2, affine=True), [("f", (2, 2, 5))]),
    Case("InstanceNorm2d", lambda L: L.nn.InstanceNorm2d(2, track_running_stats=True),
         [("f", (2, 2, 3, 3))]),
    Case("InstanceNorm3d", lambda L: L.nn.InstanceNorm3d(1), [("f", (1, 1, 2, 2, 2))]),
    Case("LayerNorm", lambda L: L.nn.LayerNorm(4), [("f", (3, 4))]),
    Case("LayerNorm-2d-nobias", lambda L: L.nn.LayerNorm((2, 3), bias=False),
         [("f", (2, 2, 3))]),
    Case("GroupNorm", lambda L: L.nn.GroupNorm(2, 4), [("f", (2, 4, 3))]),
    # dropout (masks come from different generators: checked separately, and here in eval)
    Case("Dropout-eval", lambda L: L.nn.Dropout(0.3), [("f", (3, 4))], train=False,
         ggc=False),
    *[Case(f"{name}-eval", lambda L, name=name: getattr(L.nn, name)(0.3), [("f", shape)],
           train=False, ggc=False)
      for name, shape in [("Dropout1d", (2, 3, 4)), ("Dropout2d", (2, 3, 2, 2)),
                          ("Dropout3d", (1, 2, 2, 2, 2)), ("AlphaDropout", (3, 4)),
                          ("FeatureAlphaDropout", (2, 3, 2))]],
    # in training (test_random_streams compares the masks with PyTorch's): the gradchecks
    # reseed before every call, so each sees one mask
    Case("AlphaDropout-train", lambda L: L.nn.AlphaDropout(0.4), [("f", (3, 4))],
         torch_cmp=False, ggc=False),
    Case("Dropout2d-train", lambda L: L.nn.Dropout2d(0.4), [("f", (2, 3, 2, 2))],
         torch_cmp=False, ggc=False),
    # embedding
    # padding_idx's row gets no gradient by definition: the gradchecks use other rows
    Case("Embedding", lambda L: L.nn.Embedding(5, 3, padding_idx=1),
         [("const", None, [[0, 1, 4], [1, 1, 2]])], gc_inputs=[("const", None, [[0, 2, 4, 0]])]),
    Case("Embedding-maxnorm", lambda L: L.nn.Embedding(4, 2, max_norm=0.5),
         [("const", None, [3, 0])], gc=False, ggc=False),
    # recurrent
    Case("RNN", lambda L: L.nn.RNN(2, 3, num_layers=2), [("f", (3, 2, 2))],
         gc_inputs=[("f", (2, 1, 2))]),
    Case("RNN-relu-batchfirst-h0", lambda L: L.nn.RNN(2, 2, nonlinearity="relu",
                                                      batch_first=True),
         [("f", (2, 3, 2)), ("f", (1, 2, 2))], gc_inputs=[("f", (1, 2, 2)), ("f", (1, 1, 2))]),
    Case("LSTM", lambda L: L.nn.LSTM(2, 2), [("f", (3, 2, 2))], gc_inputs=[("f", (2, 1, 2))]),
    Case("LSTM-bidir-2layer-batchfirst",
         lambda L: L.nn.LSTM(2, 2, num_layers=2, bidirectional=True, batch_first=True),
         [("f", (2, 3, 2))], gc_inputs=[("f", (1, 2, 2))], ggc=False),
    Case("LSTM-unbatched-hx", lambda L: L.nn.LSTM(2, 2, bias=False),
         [("f", (3, 2)), ("f", (1, 2)), ("f", (1, 2))],
         call=lambda m, x, h, c: m(x, (h, c)), gc_inputs=[("f", (2, 2)), ("f", (1, 2)),
                                                          ("f", (1, 2))], ggc=False),
    Case("GRU", lambda L: L.nn.GRU(2, 3), [("f", (3, 2, 2))], gc_inputs=[("f", (2, 1, 2))]),
    Case("GRU-bidir", lambda L: L.nn.GRU(2, 2, bidirectional=True, num_layers=2),
         [("f", (2, 2, 2))], gc_inputs=[("f", (2, 1, 2))], ggc=False),
    Case("RNNCell", lambda L: L.nn.RNNCell(2, 3), [("f", (2, 2)), ("f", (2, 3))]),
    Case("LSTMCell", lambda L: L.nn.LSTMCell(2, 2), [("f", (2, 2))]),
    Case("GRUCell", lambda L: L.nn.GRUCell(2, 2), [("f", (2, 2)), ("f", (2, 2))]),
    # attention
    Case("MultiheadAttention", lambda L: L.nn.MultiheadAttention(4, 2),
         [("f", (3, 2, 4)), ("f", (2, 2, 4)), ("f", (2, 2, 4))],
         gc_inputs=[("f", (2, 1, 4)), ("f", (2, 1, 4)), ("f", (2, 1, 4))], ggc=False),
    Case("MultiheadAttention-batchfirst-masks-kdim",
         lambda L: L.nn.MultiheadAttention(4, 2, batch_first=True, kdim=3, vdim=2),
         [("f", (2, 3, 4)), ("f", (2, 2, 3)), ("f", (2, 2, 2)),
          ("const", None, [[False, True], [False, False]])],
         call=lambda m, q, k, v, kpm: m(q, k, v, key_padding_mask=kpm,
                                        average_attn_weights=False),
         gc_inputs=[("f", (1, 2, 4)), ("f", (1, 2, 3)), ("f", (1, 2, 2)),
                    ("const", None, [[False, True]])], ggc=False),
    Case("MultiheadAttention-attnmask-noweights",
         lambda L: L.nn.MultiheadAttention(4, 1, bias=False),
         [("f", (3, 4)), ("fc", (3, 3))],
         call=lambda m, x, mask: m(x, x, x, attn_mask=mask, need_weights=False),
         gc_inputs=[("f", (2, 4)), ("fc", (2, 2))], ggc=False),
    Case("TransformerEncoderLayer",
         lambda L: L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0),
         [("f", (3, 2, 4))], gc_inputs=[("f", (2, 1, 4))], ggc=False,
         covers=("TransformerEncoder",)),
    Case("TransformerEncoderLayer-normfirst-gelu-batchfirst",
         lambda L: L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=5, dropout=0.0,
                                                activation="gelu", norm_first=True,
                                                batch_first=True),
         [("f", (2, 3, 4))], gc=False, ggc=False),
    Case("TransformerEncoder",
         lambda L: L.nn.TransformerEncoder(
             L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0), 2,
             enable_nested_tensor=False),
         [("f", (3, 2, 4))], gc=False, ggc=False),
    # activations
    Case("ReLU", lambda L: L.nn.ReLU(), [("f", (3, 4))]),
    Case("ReLU6", lambda L: L.nn.ReLU6(), [("const", None, np.array([-1., 3., 7., 0.5],
                                                                     dtype=np.float32))]),
    Case("LeakyReLU", lambda L: L.nn.LeakyReLU(0.2), [("f", (3, 4))]),
    Case("ELU", lambda L: L.nn.ELU(0.7), [("f", (3, 4))]),
    Case("SELU", lambda L: L.nn.SELU(), [("f", (3, 4))]),
    Case("CELU", lambda L: L.nn.CELU(1.5), [("f", (3, 4))]),
    Case("ELU-inplace", lambda L: L.nn.Sequential(L.nn.Linear(4, 4), L.nn.ELU(0.7, inplace=True)),
         [("f", (3, 4))]),
    Case("LeakyReLU-inplace", lambda L: L.nn.Sequential(L.nn.Linear(4, 4),
                                                        L.nn.LeakyReLU(0.2, inplace=True)),
         [("f", (3, 4))]),
    Case("Hardtanh-inplace", lambda L: L.nn.Sequential(L.nn.Linear(4, 4),
                                                       L.nn.Hardtanh(-0.5, 0.5, inplace=True)),
         [("f", (3, 4))]),
    Case("GELU", lambda L: L.nn.GELU(), [("f", (3, 4))]),
    Case("GELU-tanh", lambda L: L.nn.GELU(approximate="tanh"), [("f", (3, 4))]),
    Case("SiLU", lambda L: L.nn.SiLU(), [("f", (3, 4))]),
    Case("Mish", lambda L: L.nn.Mish(), [("f", (3, 4))]),
    Case("Softplus", lambda L: L.nn.Softplus(beta=2.0, threshold=1.0), [("f", (3, 4))]),
    Case("Softsign", lambda L: L.nn.Softsign(), [("f", (3, 4))]),
    Case("Tanh", lambda L: L.nn.Tanh(), [("f", (3, 4))]),
    Case("Sigmoid", lambda L: L.nn.Sigmoid(), [("f", (3, 4))]),
    Case("Hardtanh", lambda L: L.nn.Hardtanh(-0.5, 0.8), [("f", (3, 4))]),
    # (PyTorch has no second derivative of hardsigmoid: its NotImplemented node)
    Case("Hardsigmoid", lambda L: L.nn.Hardsigmoid(), [("f", (3, 4))], ggc=False),
    Case("Hardswish", lambda L: L.nn.Hardswish(), [("f", (3, 4))]),
    Case("LogSigmoid", lambda L: L.nn.LogSigmoid(), [("f", (3, 4))]),
    Case("Tanhshrink", lambda L: L.nn.Tanhshrink(), [("f", (3, 4))]),
    Case("Threshold", lambda L: L.nn.Threshold(0.1, -2.0), [("f", (3, 4))]),
    Case("GLU", lambda L: L.nn.GLU(1), [("f", (3, 4))]),
    Case("Softmax", lambda L: L.nn.Softmax(dim=1), [("f", (3, 4))]),
    Case("Softmin", lambda L: L.nn.Softmin(dim=0), [("f", (3, 4))]),
    Case("LogSoftmax", lambda L: L.nn.LogSoftmax(dim=-1), [("f", (2, 3, 4))]),
    Case("PReLU", lambda L: L.nn.PReLU(3, init=0.1), [("f", (2, 3, 2))]),
    # losses
    Case("MSELoss", lambda L: L.nn.MSELoss(), [("f", (3, 4)), ("f", (3, 4))]),
    Case("MSELoss-sum", lambda L: L.nn.MSELoss(reduction="sum"), [("f", (3, 4)), ("f", (3, 4))]),
    Case("L1Loss-none", lambda L: L.nn.L1Loss(reduction="none"), [("f", (3, 4)), ("fc", (3, 4))]),
    Case("HuberLoss", lambda L: L.nn.HuberLoss(delta=0.7), [("f", (3, 4)), ("f", (3, 4))]),
    Case("SmoothL1Loss", lambda L: L.nn.SmoothL1Loss(beta=0.5, reduction="sum"),
         [("f", (3, 4)), ("f", (3, 4))]),
    Case("CrossEntropyLoss", lambda L: L.nn.CrossEntropyLoss(), [("f", (4, 3)), ("c", (4,), 3)]),
    Case("CrossEntropyLoss-weight-ignore-smooth",
         lambda L: L.nn.CrossEntropyLoss(weight=T(L, [1.0, 2.0, 0.5]), ignore_index=1,
                                         label_smoothing=0.2),
         [("f", (5, 3)), ("c", (5,), 3)]),
    Case("CrossEntropyLoss-nd-sum-smooth",
         lambda L: L.nn.CrossEntropyLoss(reduction="sum", label_smoothing=0.1),
         [("f", (2, 3, 2)), ("c", (2, 2), 3)]),
    Case("CrossEntropyLoss-none-weight-smooth",
         lambda L: L.nn.CrossEntropyLoss(weight=T(L, [0.3, 1.0, 2.0]), reduction="none",
                                         label_smoothing=0.3, ignore_index=0),
         [("f", (4, 3)), ("c", (4,), 3)]),
    Case("CrossEntropyLoss-probs", lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1),
         [("f", (3, 4)), ("p", (3, 4), True)]),
    Case("CrossEntropyLoss-probs-weight-none",
         lambda L: L.nn.CrossEntropyLoss(weight=T(L, [1.0, 0.5, 2.0]), reduction="none"),
         [("f", (2, 3, 2)), ("p", (2, 3, 2))]),
    Case("CrossEntropyLoss-1d", lambda L: L.nn.CrossEntropyLoss(),
         [("f", (4,)), ("const", None, np.array(2))]),
    Case("NLLLoss", lambda L: L.nn.NLLLoss(weight=T(L, [1.0, 3.0, 0.5])),
         [("lp", (4, 3)), ("c", (4,), 3)]),
    Case("NLLLoss-ignore-none", lambda L: L.nn.NLLLoss(ignore_index=2, reduction="none"),
         [("lp", (5, 3)), ("c", (5,), 3)]),
    Case("BCELoss", lambda L: L.nn.BCELoss(weight=T(L, [1.0, 2.0, 0.5, 1.5])),
         [("u", (3, 4)), ("uc", (3, 4))]),
    Case("BCEWithLogitsLoss", lambda L: L.nn.BCEWithLogitsLoss(pos_weight=T(L, [1., 2., 3., .5])),
         [("f", (3, 4)), ("uc", (3, 4))]),
    Case("BCEWithLogitsLoss-weight-sum",
         lambda L: L.nn.BCEWithLogitsLoss(weight=T(L, [[2.0], [1.0], [0.5]]), reduction="sum"),
         [("f", (3, 4)), ("u", (3, 4))]),
    Case("KLDivLoss-batchmean", lambda L: L.nn.KLDivLoss(reduction="batchmean"),
         [("lp", (3, 4)), ("p", (3, 4), True)]),
    Case("KLDivLoss-logtarget-sum", lambda L: L.nn.KLDivLoss(reduction="sum", log_target=True),
         [("lp", (3, 4)), ("lp", (3, 4))]),
    Case("CosineEmbeddingLoss", lambda L: L.nn.CosineEmbeddingLoss(margin=0.2),
         [("f", (4, 3)), ("f", (4, 3)), ("s", (4,))]),
    Case("CosineEmbeddingLoss-1d-none", lambda L: L.nn.CosineEmbeddingLoss(reduction="none"),
         [("f", (3,)), ("f", (3,)), ("const", None, np.array(-1))]),
    # spatial layers (tests/nn/test_nn_spatial.py has more)
    *[Case(f"{k}Pad{n}d", lambda L, k=k, n=n: (getattr(L.nn, f"{k}Pad{n}d")(1, 0.5)
                                              if k == "Constant"
                                              else getattr(L.nn, f"{k}Pad{n}d")(1)),
           [("f", (1, 2) + (3,) * n)])
      for k in ("Zero", "Constant", "Reflection", "Replication", "Circular") for n in (1, 2, 3)],
    Case("PixelShuffle", lambda L: L.nn.PixelShuffle(2), [("f", (1, 8, 2, 2))]),
    Case("PixelUnshuffle", lambda L: L.nn.PixelUnshuffle(2), [("f", (2, 4, 2))]),
    Case("ChannelShuffle", lambda L: L.nn.ChannelShuffle(2), [("f", (1, 4, 2, 2))]),
    Case("Upsample", lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear"),
         [("f", (1, 2, 2, 3))]),
    Case("UpsamplingNearest2d", lambda L: L.nn.UpsamplingNearest2d(size=(3, 5)),
         [("f", (1, 2, 2, 3))]),
    Case("UpsamplingBilinear2d", lambda L: L.nn.UpsamplingBilinear2d(scale_factor=2),
         [("f", (1, 1, 2, 3))]),
    Case("Fold", lambda L: L.nn.Fold((3, 4), 2), [("f", (1, 8, 6))]),
    Case("Unfold", lambda L: L.nn.Unfold(2, padding=1, stride=2), [("f", (1, 2, 3, 4))]),
    Case("AdaptiveMaxPool1d", lambda L: L.nn.AdaptiveMaxPool1d(3), [("f", (2, 2, 7))]),
    Case("AdaptiveMaxPool2d", lambda L: L.nn.AdaptiveMaxPool2d((2, 3)), [("f", (1, 5, 4))]),
    Case("AdaptiveMaxPool3d", lambda L: L.nn.AdaptiveMaxPool3d(2), [("f", (1, 1, 3, 3, 3))]),
    Case("AdaptiveAvgPool3d", lambda L: L.nn.AdaptiveAvgPool3d((2, 1, 2)),
         [("f", (1, 2, 3, 3, 3))]),
    *[Case(f"MaxUnpool{n}d", lambda L, n=n: getattr(L.nn, f"MaxUnpool{n}d")(2),
           [("f", (1, 1) + (1,) * (n - 1) + (2,)),
            ("const", None, np.array([1, 2]).reshape((1, 1) + (1,) * (n - 1) + (2,)))])
      for n in (1, 2, 3)],
    Case("LPPool1d", lambda L: L.nn.LPPool1d(2, 2), [("f", (1, 2, 4))]),
    Case("LPPool2d", lambda L: L.nn.LPPool2d(2, 2, stride=1), [("f", (1, 3, 3))]),
    Case("LPPool3d", lambda L: L.nn.LPPool3d(2, 2), [("f", (1, 1, 2, 2, 2))]),
]
CASES += _nn_cases_nnloss.cases(Case, T)
CASES += _nn_cases_nnmods.cases(Case, T)

_IDS = [c.name for c in CASES]


def _inputs(lib, specs, seed, double=False):
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        if spec[0] == "const":
            arr = np.asarray(spec[2])
            t = lib.tensor(arr.astype(np.float64) if (double and arr.dtype.kind == "f")
                           else arr)
            out.append(t)
            continue
        arr, rg = _make_input(spec, rng)
        if double and arr.dtype.kind == "f":
            arr = arr.astype(np.float64)
        t = lib.tensor(arr)
        if rg and arr.dtype.kind == "f":
            t.requires_grad_(True)
        out.append(t)
    return out


def _run(case, m, ins):
    return case.call(m, *ins) if case.call is not None else m(*ins)


@pytest.mark.parametrize("case", [c for c in CASES if c.torch_cmp], ids=lambda c: c.name)
def test_against_torch(case):
    torch.manual_seed(0)
    tm = case.make(torch)
    rm = case.make(R)
    _copy_state(tm, rm)
    tm.train(case.train)
    rm.train(case.train)
    t_in = _inputs(torch, case.inputs, 1)
    r_in = _inputs(R, case.inputs, 1)
    t_out = _float_outs(_run(case, tm, t_in))
    r_out = _float_outs(_run(case, rm, r_in))
    rtol, atol = case.tol
    assert len(t_out) == len(r_out)
    for a, b in zip(t_out, r_out):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)
    # buffers (running statistics) after the forward
    for (kt, vt), (kr, vr) in zip(tm.state_dict().items(), rm.state_dict().items()):
        assert kt == kr
        np.testing.assert_allclose(vr.numpy(), vt.numpy(), rtol=rtol, atol=atol)
    # gradients of sum(out * g) for a fixed random g
    rng = np.random.default_rng(2)
    t_loss = r_loss = None
    for a, b in zip(t_out, r_out):
        if not a.requires_grad:
            continue
        g = rng.standard_normal(tuple(a.shape)).astype(np.float32)
        tl = (a * torch.tensor(g)).sum()
        rl = (b * R.tensor(g)).sum()
        t_loss = tl if t_loss is None else t_loss + tl
        r_loss = rl if r_loss is None else r_loss + rl
    if t_loss is None:
        return
    t_loss.backward()
    r_loss.backward()
    for a, b in zip(t_in, r_in):
        if a.requires_grad:
            if a.grad is None:
                assert b.grad is None
            else:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol,
                                           atol=atol * 10)
    tp = dict(tm.named_parameters())
    rp = dict(rm.named_parameters())
    assert list(tp) == list(rp)
    for k in tp:
        if tp[k].grad is None:
            assert rp[k].grad is None, k
        else:
            np.testing.assert_allclose(rp[k].grad.numpy(), tp[k].grad.numpy(), rtol=rtol,
                                       atol=atol * 10, err_msg=k)


def _gc_setup(case):
    R.manual_seed(0)
    m = case.make(R).double()
    m.train(case.train)
    ins = _inputs(R, case.gc_inputs or case.inputs, 3, double=True)
    wrt = [t for t in ins if t.requires_grad] + [p for p in m.parameters() if p.requires_grad]

    def fn():
        R.manual_seed(5)  # dropout (if any) draws the same mask every call
        return _run(case, m, ins)
    return fn, wrt


@pytest.mark.parametrize("case", [c for c in CASES if c.gc], ids=lambda c: c.name)
def test_gradcheck(case):
    fn, wrt = _gc_setup(case)
    assert gradcheck(fn, wrt)


@pytest.mark.parametrize("case", [c for c in CASES if c.ggc], ids=lambda c: c.name)
def test_gradgradcheck(case):
    fn, wrt = _gc_setup(case)
    assert gradgradcheck(fn, wrt)


def test_every_layer_has_a_case():
    covered = set()
    for c in CASES:
        covered.add(c.name.split("-")[0])
        covered.update(c.covers)
    skip = {"Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
            "ParameterDict", "RNNBase", "Dropout"}  # containers: test_nn_module; Dropout below
    skip |= {"Container", "NLLLoss2d", "RNNCellBase",  # deprecated/base classes and
             "LinearCrossEntropyLoss"}  # a loss with its own layer: test_nn_names
    missing = []
    for name in rnn.modules.__all__:
        obj = getattr(rnn, name)
        if inspect.isclass(obj) and issubclass(obj, rnn.Module) and name not in skip:
            if name not in covered:
                missing.append(name)
    assert not missing, f"no test case for {missing}"


def test_every_nn_op_is_reached():
    """Every op of ops/records/nn.py is reached by the cases (forward, first and second
    derivatives) or by torch.native_dropout / module backward hooks."""
    from retrograd.ops.records import nn as TN

    ops = list(TN.ALL_NN_OPS.values())
    seen = set()
    saved = []
    for op in ops:
        if op.fwd is None:
            continue

        def wrapped(*a, _orig=op.fwd, _op=op):
            seen.add(_op.name)
            return _orig(*a)
        saved.append((op, op.fwd))
        op.fwd = wrapped
    try:
        for case in CASES:
            if not case.gc:
                continue
            fn, wrt = _gc_setup(case)
            outs = [o for o in _float_outs(fn()) if o.requires_grad]
            gs = R.autograd.grad(outs, wrt, [R.ones_like(o) for o in outs], create_graph=True,
                                 allow_unused=True)
            tot = sum((g * g).sum() for g in gs if g is not None and g.requires_grad)
            if isinstance(tot, R.Tensor) and case.ggc:  # (ggc=False: no 2nd derivative)
                R.autograd.grad(tot, wrt, allow_unused=True)
        x = R.ones(3, requires_grad=True)
        # (F.dropout multiplies, as PyTorch's CPU dropout: Note [Dropout nodes])
        R.native_dropout(x, 0.5, True)[0].sum().backward()
        # nll_loss under vmap, its gradient and second derivative (test_vmap_kernels.py)
        R.func.vmap(R.func.hessian(R.nn.functional.cross_entropy))(
            R.zeros(2, 3, 4), R.tensor([[0, 1, 2], [3, 3, 1]]))
        lin = rnn.Linear(3, 1)
        lin.register_full_backward_hook(lambda m, gi, go: None)
        out = lin(x)
        assert out.grad_fn.name() == "BackwardHookFunctionBackward"
        seen.add("backward_hook")
    finally:
        for op, orig in saved:
            op.fwd = orig
    missing = sorted({op.name for op in ops} - seen)
    assert not missing, f"table_nn ops reached by no test case: {missing}"


# ---------------------------------------------------------------------------------
# dropout: statistics, scaling, gradient = mask / (1 - p), eval identity, seeding


def test_dropout_train_mask_and_grad():
    R.manual_seed(0)
    d = rnn.Dropout(0.25)
    x = R.ones(2000, requires_grad=True)
    y = d(x)
    kept = y.detach().numpy() != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy(), rtol=1e-6)
    R.manual_seed(0)
    y2 = rnn.Dropout(0.25)(R.ones(2000))
    assert np.array_equal(y2.numpy(), y.detach().numpy())
    assert rnn.Dropout(1.0)(R.ones(3)).tolist() == [0.0, 0.0, 0.0]
    assert rnn.Dropout(0.0)(R.ones(3)).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        rnn.Dropout(1.5)


def test_dropout_gradcheck():
    x = R.randn(3, 4, dtype=R.float64, requires_grad=True)

    def fn():
        R.manual_seed(3)
        return R.nn.functional.dropout(x, 0.4) * x

    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


# ---------------------------------------------------------------------------------
# default initialisation: same distributions as torch (constants exact, bounds and
# spreads of random draws)


_INIT_CASES = [
    lambda L: L.nn.Linear(60, 40),
    lambda L: L.nn.Bilinear(20, 10, 30),
    lambda L: L.nn.Conv2d(6, 8, 3, groups=2),
    lambda L: L.nn.ConvTranspose2d(6, 4, 3),
    lambda L: L.nn.BatchNorm2d(5),
    lambda L: L.nn.LayerNorm(7),
    lambda L: L.nn.GroupNorm(2, 6),
    lambda L: L.nn.Embedding(200, 8, padding_idx=3),
    lambda L: L.nn.LSTM(10, 12),
    lambda L: L.nn.GRUCell(10, 12),
    lambda L: L.nn.MultiheadAttention(16, 4),
    lambda L: L.nn.PReLU(),
]


@pytest.mark.parametrize("k", range(len(_INIT_CASES)))
def test_default_init_matches_torch(k):
    torch.manual_seed(0)
    R.manual_seed(0)
    tm = _INIT_CASES[k](torch)
    rm = _INIT_CASES[k](R)
    tsd, rsd = tm.state_dict(), rm.state_dict()
    assert list(tsd) == list(rsd)
    for key in tsd:
        a = tsd[key].numpy().astype(np.float64)
        b = rsd[key].numpy().astype(np.float64)
        assert a.shape == b.shape and str(tsd[key].dtype) == str(rsd[key].dtype), key
        if a.size < 2 or np.all(a == a.flat[0]):
            np.testing.assert_array_equal(b, a, err_msg=key)
            continue
        if "embedding" in type(tm).__name__.lower():
            assert np.all(b[3] == 0)
        spread_a, spread_b = a.std(), b.std()
        if a.size >= 200:  # small tensors' spreads are too noisy to compare
            assert abs(spread_b - spread_a) < 0.2 * spread_a, key
        if abs(a).max() < 3 * a.std():  # uniform draws: same bound
            assert abs(b).max() <= abs(a).max() * 1.1 + 1e-6, key


def test_init_is_seeded_by_manual_seed():
    R.manual_seed(7)
    a = rnn.Linear(3, 3).weight.detach().clone()
    R.manual_seed(7)
    b = rnn.Linear(3, 3).weight.detach().clone()
    assert bool(R.equal(a, b))


# ---------------------------------------------------------------------------------
# numerical stability and dtypes


def test_large_logits_cross_entropy_no_overflow():
    x = R.tensor([[1e4, -1e4, 0.0], [-1e30, 1e30, 0.0]], requires_grad=True)
    t = R.tensor([1, 0])
    loss = R.nn.functional.cross_entropy(x, t)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    tl = torch.nn.functional.cross_entropy(tx, torch.tensor([1, 0]))
    assert np.isfinite(loss.item())
    np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-6)
    loss.backward()
    tl.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-6)


def test_large_logits_bce_and_softplus():
    x = R.tensor([1e4, -1e4, 0.0], requires_grad=True)
    t = R.tensor([0.0, 1.0, 1.0])
    loss = R.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="sum")
    loss.backward()
    tx = torch.tensor([1e4, -1e4, 0.0], requires_grad=True)
    tl = torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor([0., 1., 1.]),
                                                              reduction="sum")
    tl.backward()
    np.testing.assert_allclose(loss.item(), tl.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-6)
    sp = R.nn.functional.softplus(R.tensor([1e4, -1e4]))
    assert sp.tolist() == [1e4, 0.0]
    y = R.tensor([100.0, -100.0], requires_grad=True)
    R.nn.functional.logsigmoid(y).sum().backward()
    assert np.all(np.isfinite(y.grad.numpy()))


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16"])
def test_layers_keep_dtype(dtype):
    dt = getattr(R, dtype)
    m = rnn.Sequential(rnn.Conv2d(1, 2, 3), rnn.ReLU(), rnn.Flatten(), rnn.Linear(2 * 2 * 2, 3),
                       rnn.LayerNorm(3)).to(dt)
    x = R.randn(2, 1, 4, 4).to(dt)
    y = m(x)
    assert y.dtype == dt
    y.float().sum().backward()
    assert all(p.grad.dtype == dt for p in m.parameters())


def test_layer_dtype_mismatch_errors_like_torch():
    lin = rnn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype"):
        lin(R.ones(1, 2, dtype=R.float64))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x3 "
                                           r"and 2x2\)"):
        lin(R.ones(1, 3))
    tlin = torch.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x3 "
                                           r"and 2x2\)"):
        tlin(torch.ones(1, 3))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_repr_matches_torch(case):
    torch.manual_seed(0)
    assert repr(case.make(R)) == repr(case.make(torch))
