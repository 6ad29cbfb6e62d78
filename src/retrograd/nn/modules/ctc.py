"""``CTCLoss``: the Connectionist Temporal Classification loss as a module.

Example:
    >>> import retrograd as torch
    >>> ctc = torch.nn.CTCLoss(blank=0)
    >>> lp = torch.zeros(5, 2, 4).log_softmax(2)
    >>> ctc(lp, torch.tensor([[1, 2], [3, 3]]), (5, 5), (2, 2)).shape
    torch.Size([])
"""

from __future__ import annotations

from ..._core.hints import Shape
from ..._tensor.tensor import Tensor
from .. import functional as F
from .loss import _Loss

__all__ = ["CTCLoss"]


class CTCLoss(_Loss):
    """The CTC loss between unsegmented sequences and targets (see ``F.ctc_loss``):
    ``blank`` label, ``reduction`` ('mean' divides by target lengths, then averages),
    ``zero_infinity`` to zero impossible alignments' losses and gradients.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.CTCLoss(zero_infinity=True).zero_infinity
        True
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Shape,
                target_lengths: Tensor | Shape) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
