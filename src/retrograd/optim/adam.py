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

from .._tensor import Tensor
from ..ops.creation import tensor, zeros_like
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

__all__ = ["Adam"]


def _check_betas(betas) -> None:
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_nonneg(name: str, value) -> None:
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def _tensor_steps(opt: Optimizer) -> None:
    """Old state dicts stored ``step`` as a number: make it the 0-d tensor used now."""
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p, {})
            if len(st) != 0 and "step" in st and not isinstance(st["step"], Tensor):
                st["step"] = tensor(float(st["step"]), dtype=_scalar_dtype())


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

    def __init__(self, params, lr: float | Tensor = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor) and b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        _check_unsupported(type(self).__name__, foreach, fused, capturable, differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        _tensor_steps(self)

    @_use_grad
    def step(self, closure=None):
        """One Adam update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adam([w], lr=0.1); opt.step()
            >>> opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            beta1 = _to_scalar(beta1)
            beta2 = _to_scalar(beta2)
            lr = _to_scalar(group["lr"])
            weight_decay = group["weight_decay"]
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = tensor(0.0, dtype=_scalar_dtype())
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                    if amsgrad:
                        st["max_exp_avg_sq"] = zeros_like(p)
                if maximize:
                    grad = -grad
                exp_avg = st["exp_avg"]
                exp_avg_sq = st["exp_avg_sq"]
                step_t = st["step"]
                step_t += 1
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

                step = _get_value(step_t)
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
