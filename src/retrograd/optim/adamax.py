"""Adamax: Adam with the infinity norm in place of the second moment.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.Adamax([w], lr=0.1).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import tensor, zeros_like
from .adam import _check_betas, _check_nonneg, _tensor_steps
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_lr,
    _check_unsupported,
    _get_value,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba), following PyTorch's single-tensor update step by step.

    ``m = lerp(m, g, 1 - beta1)``; ``u = max(beta2 * u, |g| + eps)``;
    ``p -= lr / (1 - beta1^t) * m / u``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> opt = torch.optim.Adamax([w]); opt.step(); sorted(opt.state[w])
        ['exp_avg', 'exp_inf', 'step']
    """

    def __init__(self, params, lr: float | Tensor = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        _check_unsupported("Adamax", foreach, None, capturable, differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
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
        """One Adamax update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adamax([w]); opt.step(); opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = tensor(0.0, dtype=_scalar_dtype())
                    st["exp_avg"] = zeros_like(p)
                    st["exp_inf"] = zeros_like(p)
                if maximize:
                    grad = -grad
                exp_avg = st["exp_avg"]
                exp_inf = st["exp_inf"]
                step_t = st["step"]
                step_t += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
                bias_correction = 1 - beta1 ** _get_value(step_t)
                clr = lr / bias_correction
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
