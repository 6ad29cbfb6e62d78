"""test_nn_layers cases for the layers of the nnmods family: the Transformer decoder and
model, EmbeddingBag, AdaptiveLogSoftmaxWithLoss, the lazy modules, DataParallel (kept
here so the shared case list grows by one line)."""

from __future__ import annotations

import numpy as np

_CAUSAL3 = np.triu(np.full((3, 3), -np.inf, dtype=np.float32), k=1)
_PAD_MEM = np.array([[False, False, False, True, True], [False, False, False, False, False]])
_PAD_TGT = np.array([[False, False, True], [False, False, False]])


def _dry(m, x):
    """A lazy module after its first call (so its state can be copied from torch's)."""
    m(x)
    return m


def _lazy_cases(Case) -> list:
    specs = [("LazyLinear", lambda L: L.nn.LazyLinear(3), (2, 4)),
             ("LazyConv1d", lambda L: L.nn.LazyConv1d(4, 3, groups=2), (2, 2, 6)),
             ("LazyConv2d", lambda L: L.nn.LazyConv2d(3, 2, padding=1), (1, 2, 4, 4)),
             ("LazyConv3d", lambda L: L.nn.LazyConv3d(2, 2), (1, 2, 3, 3, 3)),
             ("LazyConvTranspose1d", lambda L: L.nn.LazyConvTranspose1d(4, 3, stride=2,
                                                                         groups=2), (2, 2, 5)),
             ("LazyConvTranspose2d", lambda L: L.nn.LazyConvTranspose2d(3, 2), (1, 2, 3, 3)),
             ("LazyConvTranspose3d", lambda L: L.nn.LazyConvTranspose3d(2, 2), (1, 2, 2, 2, 2)),
             ("LazyBatchNorm1d", lambda L: L.nn.LazyBatchNorm1d(), (4, 3)),
             ("LazyBatchNorm2d", lambda L: L.nn.LazyBatchNorm2d(momentum=None), (2, 3, 2, 2)),
             ("LazyBatchNorm3d", lambda L: L.nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2)),
             ("LazyInstanceNorm1d", lambda L: L.nn.LazyInstanceNorm1d(), (2, 3, 4)),
             ("LazyInstanceNorm2d", lambda L: L.nn.LazyInstanceNorm2d(track_running_stats=False),
              (2, 3, 3, 3)),
             ("LazyInstanceNorm3d", lambda L: L.nn.LazyInstanceNorm3d(), (2, 3, 2, 2, 2))]
    return [Case(name, lambda L, make=make, shape=shape: _dry(make(L), L.ones(*shape)),
                 [("f", shape)], gc=name == "LazyLinear", ggc=False) for name, make, shape in specs]


def cases(Case, T) -> list:
    return _lazy_cases(Case) + [
        Case("TransformerDecoderLayer",
             lambda L: L.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0),
             [("f", (3, 2, 4)), ("f", (5, 2, 4))],
             gc_inputs=[("f", (2, 1, 4)), ("f", (3, 1, 4))], ggc=False),
        Case("TransformerDecoderLayer-normfirst-gelu-batchfirst-masks",
             lambda L: L.nn.TransformerDecoderLayer(4, 2, dim_feedforward=5, dropout=0.0,
                                                    activation=L.nn.functional.gelu,
                                                    norm_first=True, batch_first=True),
             [("f", (2, 3, 4)), ("f", (2, 5, 4)), ("const", None, _CAUSAL3),
              ("const", None, _PAD_MEM)],
             call=lambda m, t, mem, causal, pad: m(t, mem, tgt_mask=causal, tgt_is_causal=True,
                                                   memory_key_padding_mask=pad),
             gc=False, ggc=False),
        Case("TransformerDecoder",
             lambda L: L.nn.TransformerDecoder(
                 L.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0,
                                              activation="gelu"), 2,
                 norm=L.nn.LayerNorm(4)),
             [("f", (3, 2, 4)), ("f", (5, 2, 4)), ("const", None, _CAUSAL3),
              ("const", None, _PAD_TGT)],
             call=lambda m, t, mem, causal, pad: m(t, mem, tgt_mask=causal,
                                                   tgt_key_padding_mask=pad),
             gc=False, ggc=False),
        Case("Transformer",
             lambda L: L.nn.Transformer(4, 2, num_encoder_layers=2, num_decoder_layers=1,
                                        dim_feedforward=6, dropout=0.0, batch_first=True),
             [("f", (2, 5, 4)), ("f", (2, 3, 4)), ("const", None, _CAUSAL3),
              ("const", None, _PAD_MEM)],
             call=lambda m, s, t, causal, pad: m(s, t, tgt_mask=causal,
                                                 src_key_padding_mask=pad,
                                                 memory_key_padding_mask=pad),
             gc=False, ggc=False),  # its layers are gradchecked above (5 s for the whole)
        Case("Transformer-normfirst",
             lambda L: L.nn.Transformer(4, 2, num_encoder_layers=1, num_decoder_layers=1,
                                        dim_feedforward=6, dropout=0.0, norm_first=True),
             [("f", (5, 2, 4)), ("f", (3, 2, 4))], gc=False, ggc=False),
        Case("EmbeddingBag", lambda L: L.nn.EmbeddingBag(6, 3, mode="max"),
             [("c", (3, 4), 6)]),
        Case("EmbeddingBag-offsets-padding-mean",
             lambda L: L.nn.EmbeddingBag(6, 3, padding_idx=2),
             [("const", None, np.array([1, 2, 5, 2, 0, 3, 3])),
              ("const", None, np.array([0, 2, 2, 5]))], ggc=False),
        Case("EmbeddingBag-sum-per-sample-weights-last-offset",
             lambda L: L.nn.EmbeddingBag(6, 3, mode="sum", include_last_offset=True),
             [("const", None, np.array([1, 4, 5, 1, 0])), ("const", None, np.array([0, 3, 3, 5])),
              ("f", (5,))]),
        Case("CTCLoss", lambda L: L.nn.CTCLoss(blank=1, zero_infinity=True),
             [("f", (6, 3, 4)), ("const", None, np.array([[2, 3, 3], [0, 2, 0], [3, 3, 3]]))],
             call=lambda m, x, tg: m(x.log_softmax(2), tg, (6, 4, 5), (3, 2, 3)), ggc=False),
        Case("AdaptiveLogSoftmaxWithLoss",
             lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 6], div_value=2.0,
                                                       head_bias=True),
             [("f", (5, 8)), ("const", None, np.array([0, 4, 9, 2, 7]))],
             gc_inputs=[("f", (3, 8)), ("const", None, np.array([1, 5, 8]))]),
        Case("AdaptiveLogSoftmaxWithLoss-log_prob",
             lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(6, 9, cutoffs=[2, 5]),
             [("f", (4, 6))], call=lambda m, x: m.log_prob(x), ggc=False),
        Case("FractionalMaxPool2d",
             lambda L: L.nn.FractionalMaxPool2d(
                 (2, 3), output_size=(4, 3), return_indices=True,
                 _random_samples=L.tensor(np.float32([[[0.3, 0.8], [0.1, 0.5]]]))),
             [("f", (1, 2, 7, 8))], ggc=False),
        Case("FractionalMaxPool3d",
             lambda L: L.nn.FractionalMaxPool3d(
                 2, output_ratio=0.5, _random_samples=L.tensor(np.float32([[[0.3, 0.8, 0.5]]]))),
             [("f", (1, 1, 6, 6, 8))], ggc=False),
        Case("DataParallel", lambda L: L.nn.DataParallel(L.nn.Linear(3, 2)), [("f", (4, 3))]),
    ]
