"""Adam, with optional AMSGrad, L2 or decoupled weight decay, and maximize.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> opt.zero_grad(); (w ** 2).sum().backward(); opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import zeros_like
from .._tensor.tensor import Tensor
from .optimizer import (
    LossT,
    Optimizer,
    ParamsT,
    _call_closure,
    _step_value,
    _to_scalar,
    _use_grad,
    _validate,
)

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam (Kingma & Ba), following PyTorch's single-tensor update step by step.

    ``m = lerp(m, g, 1 - beta1)``; ``v = beta2 * v + (1 - beta2) * g * g``;
    ``p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``, with ``v``
    replaced by its running maximum under ``amsgrad``. ``weight_decay`` adds
    ``weight_decay * p`` to the gradient, or with ``decoupled_weight_decay`` (AdamW)
    multiplies ``p`` by ``1 - lr * weight_decay`` first.

    Example:
        >>> import retrograd as torch
        >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> w.grad = torch.tensor([1.0, -1.0])
        >>> torch.optim.Adam([w], lr=0.5).step(); w
        tensor([0.5000, 2.5000], requires_grad=True)
    """

    _setstate_defaults = {"amsgrad": False, "maximize": False, "foreach": None,
                          "capturable": False, "differentiable": False,
                          "decoupled_weight_decay": False, "fused": None}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _validate(lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor) and b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        super()._init_state(p, st, group)
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = zeros_like(p)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Adam update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adam([w], lr=0.1); opt.step()
            >>> opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            beta1 = _to_scalar(beta1)
            beta2 = _to_scalar(beta2)
            lr = _to_scalar(group["lr"])
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            for p, grad, st in self._params_with_grads(group):
                exp_avg = st["exp_avg"]
                exp_avg_sq = st["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                step = _step_value(st["step"])
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    max_sq = st["max_exp_avg_sq"]
                    max_sq.copy_(max_sq.maximum(exp_avg_sq))
                    denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss
