"""NAdam: Adam with Nesterov momentum (Dozat), with PyTorch's momentum decay schedule.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.NAdam([w], lr=0.1).step(); w
    tensor([0.8944], requires_grad=True)
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

    def __init__(self, params, lr: float | Tensor = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("momentum_decay", momentum_decay)
        _check_unsupported("NAdam", foreach, None, capturable, differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                st = self.state.get(p, {})
                if len(st) != 0 and not isinstance(st.get("mu_product"), Tensor):
                    st["mu_product"] = tensor(st["mu_product"], dtype=_scalar_dtype())
        _tensor_steps(self)

    @_use_grad
    def step(self, closure=None):
        """One NAdam update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.NAdam([w]); opt.step(); opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum_decay = group["momentum_decay"]
            decoupled = group["decoupled_weight_decay"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = tensor(0.0, dtype=_scalar_dtype())
                    st["mu_product"] = tensor(1.0, dtype=_scalar_dtype())
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                if maximize:
                    grad = -grad
                exp_avg = st["exp_avg"]
                exp_avg_sq = st["exp_avg_sq"]
                mu_product = st["mu_product"]
                step_t = st["step"]
                step_t += 1
                step = _get_value(step_t)
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
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
