"""Adagrad: per-coordinate learning rates from the running sum of squared gradients.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([2.0])
    >>> torch.optim.Adagrad([w], lr=0.1).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import full_like, tensor
from .adam import _check_nonneg, _tensor_steps
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

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.), following PyTorch's single-tensor update step by step.

    ``clr = lr / (1 + (t - 1) * lr_decay)``; ``s += g * g``; ``p -= clr * g / (sqrt(s) +
    eps)``. State is created for every parameter at construction, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = torch.optim.Adagrad([w], initial_accumulator_value=0.5)
        >>> opt.state[w]['sum']
        tensor([0.5000, 0.5000])
    """

    def __init__(self, params, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        _check_nonneg("lr_decay", lr_decay)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("initial_accumulator_value", initial_accumulator_value)
        _check_nonneg("epsilon", eps)
        _check_unsupported("Adagrad", foreach, fused, False, differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = tensor(0.0, dtype=_scalar_dtype())
                st["sum"] = full_like(p, initial_accumulator_value)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        _tensor_steps(self)

    @_use_grad
    def step(self, closure=None):
        """One Adagrad update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adagrad([w]); opt.step(); opt.state[w]['sum']
            tensor([1.])
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            lr_decay = group["lr_decay"]
            weight_decay = group["weight_decay"]
            eps = group["eps"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = tensor(0.0, dtype=_scalar_dtype())
                    st["sum"] = full_like(p, self.defaults["initial_accumulator_value"])
                state_sum = st["sum"]
                step_t = st["step"]
                step_t += 1
                step = _get_value(step_t)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
