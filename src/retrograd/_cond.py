"""``torch.cond``, eagerly: call one branch on the operands.

Example:
    >>> import retrograd as torch
    >>> torch.cond(torch.tensor(True), lambda x: x * 2, lambda x: x * 3, (torch.ones(2),))
    tensor([2., 2.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._tensor.tensor import Tensor

__all__ = ["cond"]


# Note [Eager cond]
# PyTorch runs ``torch.cond`` eagerly outside torch.compile too: a bool ``pred`` (or one
# read from a one-element tensor) picks the branch, which runs on ``*operands`` and is
# differentiated as ordinary ops. PyTorch wraps the tensor-``pred`` case in an
# autograd.Function (grad_fn ``CondAutogradOpBackward``); here the branch's own nodes are
# the graph, so the gradients are the same and the grad_fn is the branch's last op.
def cond(pred: bool | Tensor, true_fn: Callable, false_fn: Callable,
         operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Example:
        >>> import retrograd as torch
        >>> torch.cond(False, lambda x: x + 1, lambda x: x - 1, (torch.tensor(1),))
        tensor(0)
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}. (reduce it first, e.g. pred.any() or pred.all())")
        pred = bool(pred.item())
    return (true_fn if pred else false_fn)(*operands)
