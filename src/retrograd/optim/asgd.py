"""ASGD: averaged stochastic gradient descent (Polyak-Juditsky averaging).

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([1.0], requires_grad=True); w.grad = torch.tensor([1.0])
    >>> torch.optim.ASGD([w], lr=0.5, lambd=0.0).step(); w
    tensor([0.5000], requires_grad=True)
"""

from __future__ import annotations

from collections.abc import Callable

from .._functions.creation import ones, tensor
from .._tensor.tensor import Tensor
from .optimizer import (
    LossT,
    Optimizer,
    ParamsT,
    _call_closure,
    _get_value,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
    _validate,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""ASGD, following PyTorch's single-tensor update step by step.

    ``p *= 1 - lambd * eta``; ``p -= eta * g``; the average ``ax`` follows ``p`` with
    weight ``mu``; then ``eta = lr / (1 + lambd * lr * t) ** alpha`` and
    ``mu = 1 / max(1, t - t0)``. ``eta`` and ``mu`` are 0-d tensors in the state.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
        >>> opt = torch.optim.ASGD([w]); opt.step(); sorted(opt.state[w])
        ['ax', 'eta', 'mu', 'step']
    """

    _setstate_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _scalar_state = ("step", "eta", "mu")
    _counts_steps = True

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _validate(lr, weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        st["eta"] = tensor(float(_to_scalar(group["lr"])), dtype=_scalar_dtype())
        st["mu"] = ones((), dtype=_scalar_dtype())
        st["ax"] = p.detach().new_zeros(p.shape)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One ASGD update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(1, requires_grad=True); w.grad = torch.ones(1)
            >>> opt = torch.optim.ASGD([w], lr=0.1); opt.step(); opt.state[w]['ax']
            tensor([0.9000])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])  # a tensor lr: eta in its dtype's arithmetic, as torch
            lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
            for p, grad, st in self._params_with_grads(group):
                ax, mu, eta = st["ax"], st["mu"], st["eta"]
                eta_value = _get_value(eta)
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                step = _get_value(st["step"])
                new_eta = lr / ((1 + lambd * lr * step) ** alpha)
                if isinstance(new_eta, Tensor):
                    eta.copy_(new_eta)
                else:
                    eta.fill_(new_eta)
                mu.fill_(1 / max(1, step - t0))
        return loss
