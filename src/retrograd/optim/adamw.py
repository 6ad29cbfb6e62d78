"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter).

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([0.0])
    >>> torch.optim.AdamW([w], lr=0.1, weight_decay=0.5).step(); w
    tensor([0.9500], requires_grad=True)
"""

from __future__ import annotations

from .._tensor.tensor import Tensor
from .adam import Adam
from .optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameter (``p *= 1 - lr * weight_decay``)
    instead of adding to the gradient; ``weight_decay`` defaults to 0.01.

    Example:
        >>> import retrograd as torch
        >>> opt = torch.optim.AdamW([torch.ones(1, requires_grad=True)])
        >>> opt.param_groups[0]['weight_decay'], opt.param_groups[0]['decoupled_weight_decay']
        (0.01, True)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
