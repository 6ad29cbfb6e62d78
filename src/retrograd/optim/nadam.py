"""NAdam: Adam with Nesterov momentum (Dozat), with PyTorch's momentum decay schedule.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.NAdam([w], lr=0.1).step(); w
    tensor([0.8944], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import tensor
from .._tensor.tensor import Tensor
from .optimizer import (
    LossT,
    Optimizer,
    ParamsT,
    _call_closure,
    _get_value,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
    _validate,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam, following PyTorch's single-tensor update step by step.

    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))``; the running product of the
    ``mu`` is kept in ``state['mu_product']``; the update is
    ``p -= lr * (1 - mu_t) / (1 - prod_t) * g / denom + lr * mu_{t+1} / (1 - prod_{t+1})
    * m / denom`` with ``denom = sqrt(v / (1 - beta2^t)) + eps``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> opt = torch.optim.NAdam([w]); opt.step(); sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    _setstate_defaults = {"maximize": False, "foreach": None, "capturable": False,
                          "differentiable": False, "decoupled_weight_decay": False}
    _scalar_state = ("step", "mu_product")
    _counts_steps = True
    _zero_state = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _validate(lr, epsilon=eps, betas=betas, weight_decay=weight_decay,
                  momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        st["mu_product"] = tensor(1.0, dtype=_scalar_dtype())
        super()._init_state(p, st, group)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One NAdam update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.NAdam([w]); opt.step(); opt.state[w]['mu_product']
            tensor(0.4501)
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            momentum_decay = group["momentum_decay"]
            for p, grad, st in self._params_with_grads(group):
                exp_avg = st["exp_avg"]
                exp_avg_sq = st["exp_avg_sq"]
                mu_product = st["mu_product"]
                step = _get_value(st["step"])
                bias_correction2 = 1 - beta2 ** step
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product *= mu
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt()
                mu_product_value = _get_value(mu_product)
                mu_product_next = mu_product_value * mu_next
                denom.add_(eps)
                p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
                p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
