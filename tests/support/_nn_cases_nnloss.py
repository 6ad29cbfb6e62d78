"""test_nn_layers cases for the losses, distances, activations and norms of the nnloss
family (kept here so the shared case list grows by one line)."""

from __future__ import annotations

import numpy as np


def cases(Case, T) -> list:
    mlm_target = np.array([[3, 0, -1, 1], [1, 2, 2, -1], [0, 1, 2, 3]])
    return [
        Case("GaussianNLLLoss", lambda L: L.nn.GaussianNLLLoss(full=True),
             [("f", (3, 4)), ("f", (3, 4)), ("u", (3, 1))]),
        Case("PoissonNLLLoss", lambda L: L.nn.PoissonNLLLoss(), [("f", (3, 4)), ("uc", (3, 4))]),
        Case("PoissonNLLLoss-full-none",
             lambda L: L.nn.PoissonNLLLoss(log_input=False, full=True, reduction="none"),
             [("u", (2, 3)), ("const", None, np.array([[0., 2., 5.], [1., 3., 0.5]]))]),
        Case("MarginRankingLoss", lambda L: L.nn.MarginRankingLoss(0.3),
             [("f", (5,)), ("f", (5,)), ("s", (5,))]),
        Case("HingeEmbeddingLoss", lambda L: L.nn.HingeEmbeddingLoss(0.5, reduction="sum"),
             [("f", (3, 4)), ("s", (3, 4))]),
        Case("SoftMarginLoss", lambda L: L.nn.SoftMarginLoss(), [("f", (3, 4)), ("s", (3, 4))]),
        Case("MultiLabelSoftMarginLoss",
             lambda L: L.nn.MultiLabelSoftMarginLoss(weight=T(L, [1., 2., .5, 1.])),
             [("f", (3, 4)), ("uc", (3, 4))]),
        # (no second derivative of the two margin kernels in PyTorch: ggc=False)
        Case("MultiLabelMarginLoss", lambda L: L.nn.MultiLabelMarginLoss(reduction="none"),
             [("f", (3, 4)), ("const", None, mlm_target)], ggc=False),
        Case("MultiMarginLoss", lambda L: L.nn.MultiMarginLoss(p=2, margin=0.7,
                                                               weight=T(L, [1., 2., .5, 1.])),
             [("f", (3, 4)), ("c", (3,), 4)], ggc=False),
        Case("TripletMarginLoss", lambda L: L.nn.TripletMarginLoss(margin=2.0, swap=True),
             [("f", (3, 4)), ("f", (3, 4)), ("f", (3, 4))]),
        Case("TripletMarginWithDistanceLoss",
             lambda L: L.nn.TripletMarginWithDistanceLoss(margin=2.0),
             [("f", (3, 4)), ("f", (3, 4)), ("f", (3, 4))], covers=("PairwiseDistance",)),
        Case("CosineSimilarity", lambda L: L.nn.CosineSimilarity(dim=0),
             [("f", (3, 4)), ("f", (3, 4))]),
        Case("Hardshrink", lambda L: L.nn.Hardshrink(0.3), [("f", (3, 4))], ggc=False),
        Case("Softshrink", lambda L: L.nn.Softshrink(0.3), [("f", (3, 4))], ggc=False),
        Case("RReLU-eval", lambda L: L.nn.RReLU(0.1, 0.3), [("f", (3, 4))], train=False,
             ggc=False),
        Case("Softmax2d", lambda L: L.nn.Softmax2d(), [("f", (2, 3, 2, 2))]),
        Case("RMSNorm", lambda L: L.nn.RMSNorm([3, 4], eps=1e-5), [("f", (2, 3, 4))]),
        Case("LocalResponseNorm", lambda L: L.nn.LocalResponseNorm(3, 0.5, 0.7, 1.2),
             [("f", (2, 5, 3, 2))]),
        # torch's legacy backward is not the forward's exact gradient (Note [CrossMapLRN2d])
        Case("CrossMapLRN2d", lambda L: L.nn.CrossMapLRN2d(3, 0.5, 0.7, 1.2),
             [("f", (2, 5, 3, 2))], gc=False, ggc=False),
    ]
