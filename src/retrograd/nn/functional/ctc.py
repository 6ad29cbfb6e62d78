"""``F.ctc_loss``: the Connectionist Temporal Classification loss (Note [CTC record]).

Example:
    >>> import retrograd as torch
    >>> lp = torch.full((3, 1, 3), 1 / 3).log()
    >>> loss = torch.nn.functional.ctc_loss(lp, torch.tensor([[1, 2]]), (3,), (2,))
    >>> round(loss.item(), 4)
    0.8432
"""

from __future__ import annotations

import numpy as np

from ..._core.hints import Shape
from ..._functions.pointwise import where
from ..._tensor.tensor import Tensor, _make
from ...ops.batch_rules import per_element_under_vmap
from ...ops.dispatch import apply
from ...ops.public import autocast_category
from ...ops.records import ctc as TC

__all__ = ["ctc_loss"]


def _lengths(x, what: str) -> np.ndarray:
    arr = x._data if isinstance(x, Tensor) else np.asarray(x)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: {what} must hold integers, got {arr.dtype} (pass a "
                           "tuple of ints or an integer tensor)")
    return arr.astype(np.int64).reshape(-1)


def _check(log_probs: Tensor, targets: np.ndarray, il: np.ndarray, tl: np.ndarray,
           blank: int) -> None:
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if il.size != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.size != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for name, lens, top in (("input_lengths", il, steps), ("target_lengths", tl, None)):
        if lens.size and lens.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{int(lens.min())} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        if top is not None and lens.size and lens.max() > top:
            raise RuntimeError(f"Expected {name} to have value at most {top}, but got value "
                               f"{int(lens.max())} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    if targets.ndim == 2 and tl.size and targets.shape[1] < tl.max():
        raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at dimension "
                           f"1, but got size {targets.shape[1]} for argument #2 'targets' (while "
                           "checking arguments for ctc_loss_allocate_outputs)")
    if targets.ndim == 1 and targets.size < tl.sum():
        raise RuntimeError(f"ctc_loss: 1-D targets hold {targets.size} labels but "
                           f"target_lengths sum to {int(tl.sum())} (concatenate every "
                           "sample's labels, or pass (batch, S) padded targets)")
    used = targets if targets.ndim == 1 else np.concatenate(
        [targets[n, :k] for n, k in enumerate(tl)]) if tl.size else targets
    if used.size and (used.min() < 0 or used.max() >= classes):
        raise RuntimeError(f"ctc_loss: target labels must be in [0, {classes}) (the classes of "
                           f"log_probs), got values from {int(used.min())} to "
                           f"{int(used.max())}; PyTorch reads out of bounds here")
    if (used == blank).any():
        raise RuntimeError(f"ctc_loss: a target label equals the blank ({blank}); targets "
                           "cannot contain the blank (PyTorch's documented contract; its "
                           "gradient is undefined there): remove it or choose another blank")


@autocast_category(TC.ctc_loss)
@per_element_under_vmap
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Shape,
             target_lengths: Tensor | Shape, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) (or unbatched (T, C), log-softmax outputs)
    against ``targets`` ((N, S) padded, or 1-D concatenated), with PyTorch's reductions
    ('mean' divides each loss by its target length first) and gradient.

    Example:
        >>> import retrograd as torch
        >>> x = torch.zeros(4, 2, 3, requires_grad=True)
        >>> loss = torch.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor([[1, 2], [1, 1]]),
        ...                                     (4, 4), (2, 2), reduction="sum")
        >>> loss.backward(); x.grad.shape
        torch.Size([4, 2, 3])
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got "
                           f"{log_probs.dim()} dimensions")
    tg = targets._data.astype(np.int64)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths,
                                                              "target_lengths")
    _check(log_probs, tg, il, tl, blank)
    p = (tuple(int(v) for v in il), tuple(int(v) for v in tl), int(blank), bool(zero_infinity))
    loss = apply(TC.ctc_loss, (log_probs, _make(tg)), p)
    if zero_infinity:
        loss = where(_make(np.isinf(loss._data)), _make(np.zeros((), loss._data.dtype)), loss)
    if reduction == "mean":
        loss = (loss / _make(np.maximum(tl, 1).astype(loss._data.dtype))).mean()
    elif reduction == "sum":
        loss = loss.sum()
    elif unbatched:
        loss = loss.squeeze(0)
    return loss
