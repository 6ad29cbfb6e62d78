"""SparseAdam: Adam for sparse gradients, which retrograd does not have.

retrograd has no sparse tensors, so every gradient is dense and ``step`` raises
PyTorch's error for a dense gradient (what ``torch.optim.SparseAdam`` does with the
gradients of a dense layer). The class exists so code that builds it, saves and loads
its state, or picks it by name keeps working up to the first step.

Example:
    >>> import retrograd as torch
    >>> w = torch.ones(2, requires_grad=True); w.grad = torch.ones(2)
    >>> torch.optim.SparseAdam([w]).step()
    Traceback (most recent call last):
    ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead ...
"""

from __future__ import annotations

from collections.abc import Callable

from .._tensor.tensor import Tensor
from .optimizer import LossT, Optimizer, ParamsT, _call_closure, _check_lr, _use_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam with PyTorch's constructor checks; ``step`` refuses dense gradients.

    Example:
        >>> import retrograd as torch
        >>> opt = torch.optim.SparseAdam([torch.ones(1, requires_grad=True)], lr=0.01)
        >>> opt.param_groups[0]['betas']
        (0.9, 0.999)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @_use_grad
    def step(self, closure: Callable[[], LossT] | None = None) -> LossT | None:
        """Raise for the first parameter with a gradient: retrograd's gradients are dense.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SparseAdam([torch.ones(1, requires_grad=True)])
            >>> print(opt.step(lambda: 1.5))  # no parameter has a gradient yet
            1.5
        """
        loss = _call_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam "
                        "instead (retrograd has no sparse tensors, so every gradient is dense: "
                        "use torch.optim.Adam, which gives the same update for dense "
                        "gradients)")
        return loss
