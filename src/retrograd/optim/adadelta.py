"""Adadelta: step sizes from running averages of squared gradients and updates.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.Adadelta([w]).step(); w
    tensor([0.9968], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _to_scalar, _use_grad, _validate

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

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("square_avg", "acc_delta")

    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _validate(lr, rho=rho, epsilon=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Adadelta update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.tensor([2.0])
            >>> opt = torch.optim.Adadelta([w], rho=0.5); opt.step(); opt.state[w]['square_avg']
            tensor([2.])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            rho = group["rho"]
            eps = group["eps"]
            for p, grad, st in self._params_with_grads(group):
                square_avg = st["square_avg"]
                acc_delta = st["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
