"""Adafactor: Adam-like steps with a factored (row x column) second-moment estimate.

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(2, 2, requires_grad=True); w.grad = torch.ones(2, 2)
    >>> opt = torch.optim.Adafactor([w]); opt.step(); sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
"""

from __future__ import annotations

from collections.abc import Callable

from .._core import dtype as D
from .._functions.creation import tensor, zeros_like
from .._functions.reductions import norm
from .._tensor.tensor import Tensor
from .optimizer import (
    LossT,
    Optimizer,
    ParamsT,
    _call_closure,
    _scalar_dtype,
    _to_scalar,
    _use_grad,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern) as PyTorch 2.13 implements it, step by step.

    At step ``t``: ``beta2_t = 1 - t ** beta2_decay``; ``rho = min(lr, 1 / sqrt(t))``;
    ``alpha = max(eps2, RMS(p)) * rho``; decoupled weight decay ``p *= 1 - lr * wd``. A
    tensor of 2 or more dimensions keeps row and column means of ``g * g`` over its last
    two dimensions (``row_var``, ``col_var``) and estimates the variance as their
    product over the mean of ``row_var``; a vector or scalar keeps ``variance``. The
    update ``g / sqrt(max(var, eps1**2))`` is scaled down to RMS ``d`` and applied with
    ``-alpha``. ``eps1=None`` means ``finfo(dtype).eps``: as in PyTorch, the first
    parameter's dtype decides it for the whole group.

    Example:
        >>> import retrograd as torch
        >>> w = torch.ones(3, requires_grad=True); w.grad = torch.ones(3)
        >>> torch.optim.Adafactor([w], lr=0.1).step(); w
        tensor([0.9000, 0.9000, 0.9000], requires_grad=True)
    """

    _setstate_defaults = {"foreach": None}
    _scalar_state = ("step",)

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        checks = ((0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                  (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                  (eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}"),
                  (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                  (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                  (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}"))
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, st: dict, group: dict) -> None:
        grad = p._grad
        st["step"] = tensor(0.0, dtype=_scalar_dtype())
        if grad.dim() > 1:
            st["row_var"] = grad.new_zeros([*grad.shape[:-1], 1])
            st["col_var"] = grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]])
        else:
            st["variance"] = zeros_like(grad)

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Adafactor update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.ones(2, 3, requires_grad=True); w.grad = torch.ones(2, 3)
            >>> opt = torch.optim.Adafactor([w]); opt.step(); opt.state[w]['row_var'].shape
            torch.Size([2, 1])
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            eps1, eps2 = group["eps"]
            lr = _to_scalar(group["lr"])  # a tensor lr stays one: torch's arithmetic on it
            beta2_decay, d, weight_decay = group["beta2_decay"], group["d"], group["weight_decay"]
            for p, grad, st in self._params_with_grads({**group, "weight_decay": 0}):
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if eps1 is None:
                    eps1 = D.machine_limits(p.dtype)[0]
                st["step"] += 1
                t = st["step"].item()
                one_minus_beta2_t = t ** beta2_decay
                rho_t = min(lr, 1 / (t ** 0.5))
                alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = st["row_var"], st["col_var"]
                    # (g * g).mean over the last and the next-to-last dimension, as norms
                    row_var.lerp_(norm(grad, dim=-1, keepdim=True).square_()
                                  .div_(grad.size(-1)), one_minus_beta2_t)
                    col_var.lerp_(norm(grad, dim=-2, keepdim=True).square_()
                                  .div_(grad.size(-2)), one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    st["variance"].lerp_(grad * grad, one_minus_beta2_t)
                    var_estimate = st["variance"].clone()
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
