"""Loss modules (each calls its ``nn.functional`` form).

Example:
    >>> import retrograd as torch
    >>> torch.nn.MSELoss()(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
    tensor(2.)
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss", "HuberLoss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss",
           "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss"]


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.MSELoss(reduction='sum')(torch.ones(3), torch.zeros(3))
        tensor(3.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.L1Loss()(torch.tensor([1., -1.]), torch.zeros(2))
        tensor(1.)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.HuberLoss(delta=2.0)(torch.tensor([3.]), torch.zeros(1))
        tensor(4.)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta`` (divided by beta), linear above.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.SmoothL1Loss()(torch.tensor([0.5]), torch.zeros(1))
        tensor(0.1250)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices (input holds log-probabilities).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.NLLLoss()(torch.tensor([[-0.5, -1.5]]), torch.tensor([0]))
        tensor(0.5000)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL for class indices, or cross entropy with class probabilities;
    ``weight``, ``ignore_index``, ``label_smoothing`` and every reduction.

    Example:
        >>> import retrograd as torch
        >>> loss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss(torch.tensor([[2., 0.]]), torch.tensor([0]))
        tensor(0.2269)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy on probabilities.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.BCELoss()(torch.tensor([0.5]), torch.tensor([0.]))
        tensor(0.6931)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy, stable for large logits; ``pos_weight`` weighs the
    positive term.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.BCEWithLogitsLoss()(torch.tensor([0.]), torch.tensor([1.]))
        tensor(0.6931)
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """KL divergence; ``input`` is log-probabilities (``target`` too with
    ``log_target=True``).

    Example:
        >>> import retrograd as torch
        >>> p = torch.tensor([[0.25, 0.75]])
        >>> torch.nn.KLDivLoss(reduction='batchmean')(p.log(), p)
        tensor(0.)
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineEmbeddingLoss(_Loss):
    """1 - cos for similar pairs (target 1), max(0, cos - margin) for dissimilar (-1).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.CosineEmbeddingLoss()(torch.tensor([[1., 0.]]), torch.tensor([[0., 1.]]),
        ...                                torch.tensor([1]))
        tensor(1.)
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)
