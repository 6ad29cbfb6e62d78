"""RMSprop, with optional centering, momentum, weight decay and maximize.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.RMSprop([w], lr=0.01).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.creation import zeros, zeros_like
from .adam import _check_nonneg, _tensor_steps
from .optimizer import (
    Optimizer,
    _call_closure,
    _check_lr,
    _check_unsupported,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
)

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

    def __init__(self, params, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_nonneg("momentum", momentum)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("alpha", alpha)
        _check_unsupported("RMSprop", foreach, None, capturable, differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        _tensor_steps(self)

    @_use_grad
    def step(self, closure=None):
        """One RMSprop update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.RMSprop([w]); opt.step(); opt.state[w]['step']
            tensor(1.)
        """
        loss = _call_closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            alpha = group["alpha"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            centered = group["centered"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                st = state[p]
                if len(st) == 0:
                    st["step"] = zeros((), dtype=_scalar_dtype())
                    st["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        st["momentum_buffer"] = zeros_like(p)
                    if centered:
                        st["grad_avg"] = zeros_like(p)
                if maximize:
                    grad = -grad
                square_avg = st["square_avg"]
                st["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
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
