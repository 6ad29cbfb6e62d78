"""``nn.LinearCrossEntropyLoss``: a linear layer and the cross entropy of its logits in
one module (``F.linear_cross_entropy``), as PyTorch 2.13.

Example:
    >>> import retrograd as torch
    >>> torch.manual_seed(0)
    <retrograd._random.rng.Generator object at ...>
    >>> loss = torch.nn.LinearCrossEntropyLoss(4, 3)
    >>> loss(torch.ones(2, 4), torch.tensor([0, 2])).shape
    torch.Size([])
"""

from __future__ import annotations

import math

from ..._core.dtype import dtype
from ..._core.hints import DeviceLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from ..functional.linear_cross_entropy_options import LinearCrossEntropyOptions
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``self.linear(input)`` logits: ``num_classes`` classes (times
    ``out_features`` positions for a K-dimensional loss), the weight stored 2-D in
    ``self.linear`` and reshaped in ``forward``; ``options`` turns on chunking.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2.0)
        Traceback (most recent call last):
        RuntimeError: expected label_smoothing to be in range [0, 1], got 2.0
    """

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device: DeviceLike | None = None, dtype: dtype | None = None,
                 reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError("expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                    weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
