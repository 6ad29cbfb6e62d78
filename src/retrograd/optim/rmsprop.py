"""RMSprop, with optional centering, momentum, weight decay and maximize.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.RMSprop([w], lr=0.01).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import zeros_like
from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _to_scalar, _use_grad, _validate

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), following PyTorch's single-tensor update step by step.

    ``v = alpha * v + (1 - alpha) * g * g``; with ``centered``, ``gbar = lerp(gbar, g, 1 -
    alpha)`` and ``avg = sqrt(v - gbar^2)``, else ``avg = sqrt(v)``; ``avg += eps``. With
    momentum, ``b = momentum * b + g / avg`` and ``p -= lr * b``; otherwise
    ``p -= lr * g / avg``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([2.0])
        >>> opt = torch.optim.RMSprop([w], lr=0.01, momentum=0.9, centered=True); opt.step()
        >>> sorted(opt.state[w])
        ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    _setstate_defaults = {"momentum": 0, "centered": False, "foreach": None,
                          "maximize": False, "differentiable": False, "capturable": False}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("square_avg",)

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _validate(lr, epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        super()._init_state(p, st, group)
        if group["momentum"] > 0:
            st["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            st["grad_avg"] = zeros_like(p)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One RMSprop update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.tensor([2.0])
            >>> opt = torch.optim.RMSprop([w], alpha=0.5); opt.step(); opt.state[w]['square_avg']
            tensor([2.])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            alpha = group["alpha"]
            eps = group["eps"]
            momentum = group["momentum"]
            centered = group["centered"]
            for p, grad, st in self._params_with_grads(group):
                square_avg = st["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = st["grad_avg"]
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = st["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss
