"""Adadelta: step sizes from running averages of squared gradients and updates.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.Adadelta([w]).step(); w
    tensor([0.9968], requires_grad=True)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import zeros, zeros_like
from .adam import _check_nonneg, _tensor_steps
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_lr,
    _check_unsupported,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler), following PyTorch's single-tensor update step by step.

    ``v = rho * v + (1 - rho) * g * g``; ``d = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho * u + (1 - rho) * d * d``; ``p -= lr * d``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> opt = torch.optim.Adadelta([w], rho=0.5); opt.step()
        >>> sorted(opt.state[w])
        ['acc_delta', 'square_avg', 'step']
    """

    def __init__(self, params, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonneg("epsilon", eps)
        _check_nonneg("weight_decay", weight_decay)
        _check_unsupported("Adadelta", foreach, None, capturable, differentiable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        _tensor_steps(self)

    @_use_grad
    def step(self, closure=None):
        """One Adadelta update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adadelta([w]); opt.step(); opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            rho = group["rho"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = zeros((), dtype=_scalar_dtype())
                    st["square_avg"] = zeros_like(p)
                    st["acc_delta"] = zeros_like(p)
                square_avg = st["square_avg"]
                acc_delta = st["acc_delta"]
                st["step"] += 1
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
