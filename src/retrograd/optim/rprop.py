"""Rprop: resilient backpropagation, a per-coordinate step size driven by gradient signs.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([3.0])
    >>> torch.optim.Rprop([w], lr=0.1).step(); w
    tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import full_like
from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _check_lr, _to_scalar, _use_grad

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun), following PyTorch's single-tensor update step by step.

    Per coordinate, the step size grows by ``etas[1]`` while the gradient keeps its sign,
    shrinks by ``etas[0]`` when it flips (and that coordinate skips the update), and stays
    within ``step_sizes``; the parameter moves by ``-sign(g) * step_size``.

    Example:
        >>> import retrograd as torch
        >>> w = torch.zeros(2, requires_grad=True); w.grad = torch.tensor([1.0, -1.0])
        >>> opt = torch.optim.Rprop([w], lr=0.5); opt.step(); w
        tensor([-0.5000,  0.5000], requires_grad=True)
    """

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _scalar_state = ("step",)
    _counts_steps = True
    _zero_state = ("prev",)

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        super()._init_state(p, st, group)
        st["step_size"] = full_like(p._grad, _to_scalar(group["lr"]))

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Rprop update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.zeros(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.Rprop([w]); opt.step(); opt.step(); opt.state[w]['step_size']
            tensor([0.0120])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad, st in self._params_with_grads(group):
                prev = st["prev"]
                step_size = st["step_size"]
                sign = grad.mul(prev).sign()
                # the three masks are taken before any write, as PyTorch's sequential
                # masked writes amount to (etas never equal 0 or cross sign)
                flipped = sign.lt(0)
                factor = sign.masked_fill(sign.gt(0), etaplus)
                factor.masked_fill_(flipped, etaminus).masked_fill_(sign.eq(0), 1)
                step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                grad = grad.masked_fill(flipped, 0)
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
