"""Adamax: Adam with the infinity norm in place of the second moment.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.Adamax([w], lr=0.1).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor.tensor import Tensor
from .optimizer import (
    LossT,
    Optimizer,
    ParamsT,
    _call_closure,
    _get_value,
    _to_scalar,
    _use_grad,
    _validate,
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

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("exp_avg", "exp_inf")

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _validate(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Adamax update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.tensor([-2.0])
            >>> opt = torch.optim.Adamax([w]); opt.step(); opt.state[w]['exp_inf']
            tensor([2.])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            for p, grad, st in self._params_with_grads(group):
                exp_avg = st["exp_avg"]
                exp_inf = st["exp_inf"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
                bias_correction = 1 - beta1 ** _get_value(st["step"])
                clr = lr / bias_correction
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
