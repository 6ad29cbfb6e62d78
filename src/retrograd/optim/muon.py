"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration (2-D only).

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(2, 2, requires_grad=True); w.grad = torch.eye(2)
    >>> torch.optim.Muon([w], lr=0.1, weight_decay=0.0).step(); w.detach().round(decimals=2)
    tensor([[0.8900, 1.0000],
            [1.0000, 0.8900]])
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._functions.matmul import addmm
from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _to_scalar, _use_grad

__all__ = ["Muon"]

# Keller Jordan's quintic coefficients and defaults, as PyTorch's torch/optim/_muon.py
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float],
                                ns_steps: int, eps: float) -> Tensor:
    """``ns_steps`` quintic Newton-Schulz iterations in bfloat16 towards ``U V^T`` of ``grad``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.muon import _zeropower_via_newtonschulz
        >>> _zeropower_via_newtonschulz(torch.eye(2), (3.4445, -4.775, 2.0315), 5, 1e-7).dtype
        torch.bfloat16
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))  # spectral norm at most 1
    for _ in range(ns_steps):
        gram = x @ x.T
        update = addmm(gram, gram, gram, beta=b, alpha=c)
        x = addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    """Scale ``lr`` so updates of rectangular matrices have a comparable RMS.

    Example:
        >>> from retrograd.optim.muon import _adjust_lr
        >>> _adjust_lr(0.1, None, (4, 1)), _adjust_lr(0.1, "match_rms_adamw", (4, 1))
        (0.2, 0.04000000000000001)
    """
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, cols)))
    return lr


class Muon(Optimizer):
    r"""Muon (Keller Jordan), following PyTorch 2.13's ``torch.optim.Muon`` step by step.

    Per 2-D parameter: ``B = lerp(B, g, 1 - momentum)``; the update is
    ``lerp(g, B, momentum)`` (nesterov) or ``B``, orthogonalised by ``ns_steps``
    Newton-Schulz iterations in bfloat16; then decoupled weight decay
    ``p *= 1 - lr * weight_decay`` and ``p -= adjusted_lr * update`` with the learning
    rate scaled by ``adjust_lr_fn`` ("original": ``sqrt(max(1, A / B))``,
    "match_rms_adamw": ``0.2 * sqrt(max(A, B))``). Other parameters (biases, embeddings)
    belong in another optimizer such as AdamW.

    Example:
        >>> import retrograd as torch
        >>> w = torch.zeros(3, 2, requires_grad=True); w.grad = torch.ones(3, 2)
        >>> opt = torch.optim.Muon([w], lr=0.02); opt.step(); opt.state[w]["momentum_buffer"]
        tensor([[0.0500, 0.0500],
                [0.0500, 0.0500],
                [0.0500, 0.0500]])
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """One Muon update of every parameter that has a gradient.

        Example:
            >>> import retrograd as torch
            >>> w = torch.eye(2, requires_grad=True); w.grad = torch.eye(2)
            >>> opt = torch.optim.Muon([w], lr=0.5, weight_decay=0.0); opt.step(); w
            tensor([[0.4375, 0.0000],
                    [0.0000, 0.4375]], requires_grad=True)
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            momentum = group["momentum"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = grad.new_zeros(grad.shape)
                buf = st["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                     group["ns_steps"], group["eps"])
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
