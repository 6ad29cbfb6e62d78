"""Adagrad: per-coordinate learning rates from the running sum of squared gradients.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([2.0])
    >>> torch.optim.Adagrad([w], lr=0.1).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import full_like
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

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "fused": None}
    _scalar_state = ("step",)
    _counts_steps = True

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _validate(lr, lr_decay=lr_decay, weight_decay=weight_decay,
                  initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        # unlike the others, Adagrad creates its state eagerly (as PyTorch does)
        for group in self.param_groups:
            for p in group["params"]:
                self._create_state(p, self.state[p], group)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        st["sum"] = full_like(p, self.defaults["initial_accumulator_value"])

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Adagrad update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Adagrad([w]); opt.step(); opt.state[w]['sum']
            tensor([1.])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            lr_decay = group["lr_decay"]
            eps = group["eps"]
            for p, grad, st in self._params_with_grads(group):
                state_sum = st["sum"]
                clr = lr / (1 + (_get_value(st["step"]) - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
