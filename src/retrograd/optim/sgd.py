"""Stochastic gradient descent, with optional momentum, Nesterov and weight decay.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w ** 2).sum().backward(); opt.step()
    >>> w
    tensor([0.4600], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.inplace import add_scaled_
from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _check_lr, _to_scalar, _use_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum).

    Per step, for each parameter with a gradient ``g`` (PyTorch's formulas, in its order):
    ``g = -g`` if ``maximize``; ``g = g + weight_decay * p``; with momentum ``b = g`` on the
    first step, then ``b = momentum * b + (1 - dampening) * g``, and ``g = g + momentum * b``
    (Nesterov) or ``g = b``; finally ``p = p - lr * g``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
        >>> w.grad = torch.tensor([0.5, 0.5])
        >>> torch.optim.SGD([w], lr=0.2, weight_decay=0.1).step(); w
        tensor([ 0.8800, -1.0800], requires_grad=True)
    """

    _setstate_defaults = {"nesterov": False, "maximize": False, "foreach": None,
                          "differentiable": False, "fused": False}

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
            >>> torch.optim.SGD([w], lr=0.5).step(); w
            tensor([0.5000], requires_grad=True)
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            lr = _to_scalar(group["lr"])
            # SGD keeps no state unless it has momentum (its buffer starts as the gradient)
            for p, grad, st in self._params_with_grads(group, stateful=momentum != 0):
                if momentum != 0:
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = grad.detach().clone()
                        st["momentum_buffer"] = buf
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    if nesterov:
                        grad = grad.add(buf, alpha=momentum)
                    else:
                        grad = buf
                if not add_scaled_(p, grad, -lr):  # (the direct kernel of add_)
                    p.add_(grad, alpha=-lr)
        return loss
