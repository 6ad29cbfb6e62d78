"""RAdam: Adam with a rectified (variance-corrected) adaptive learning rate.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.RAdam([w], lr=0.1).step(); w
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam (Liu et al.), following PyTorch's single-tensor update step by step.

    ``rho_inf = 2 / (1 - beta2) - 1``; ``rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)``.
    While ``rho_t <= 5`` the step is SGD with momentum on the bias-corrected ``m``;
    after that it is Adam's step scaled by the rectification term ``r_t``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> opt = torch.optim.RAdam([w]); opt.step(); sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'step']
    """

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "decoupled_weight_decay": False, "capturable": False}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _validate(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One RAdam update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> torch.optim.RAdam([w], lr=0.1).step(); w  # rho_t <= 5: a momentum-SGD step
            tensor([-0.1000], requires_grad=True)
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            rho_inf = 2 / (1 - beta2) - 1
            for p, grad, st in self._params_with_grads(group):
                exp_avg = st["exp_avg"]
                exp_avg_sq = st["exp_avg_sq"]
                step = _get_value(st["step"])
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
