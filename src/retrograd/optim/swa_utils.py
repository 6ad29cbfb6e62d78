"""Stochastic weight averaging and EMA: ``AveragedModel``, ``SWALR``, ``update_bn`` and the
averaging functions, as ``torch.optim.swa_utils``.

Example:
    >>> import retrograd as torch
    >>> model = torch.nn.Linear(1, 1, bias=False)
    >>> swa = torch.optim.swa_utils.AveragedModel(model)
    >>> for w in (1.0, 2.0, 6.0):
    ...     with torch.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     swa.update_parameters(model)
    >>> swa.module.weight, swa.n_averaged
    (Parameter containing:
    tensor([[3.]], requires_grad=True), tensor(3))
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .._core import dtype as D
from .._core.grad_mode import no_grad
from .._functions import foreach
from .._functions.creation import tensor
from .._tensor.tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An exponential moving average over lists of tensors, for ``multi_avg_fn``:
    ``ema = lerp(ema, current, 1 - decay)`` (or the same formula for integer tensors).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import get_ema_multi_avg_fn
        >>> ema = [torch.zeros(2)]
        >>> get_ema_multi_avg_fn(0.75)(ema, [torch.ones(2)], None); ema
        [tensor([0.2500, 0.2500])]
    """
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point():
                foreach._foreach_lerp_(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running mean over lists of tensors, for ``multi_avg_fn``: after ``n`` averages,
    ``avg += (current - avg) / (n + 1)``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import get_swa_multi_avg_fn
        >>> avg = [torch.tensor([2.0])]
        >>> get_swa_multi_avg_fn()(avg, [torch.tensor([5.0])], 2); avg
        [tensor([3.])]
    """
    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                foreach._foreach_lerp_(averaged_param_list, current_param_list,
                                       1 / (num_averaged + 1))
            else:
                diffs = foreach._foreach_sub(current_param_list, averaged_param_list)
                if isinstance(num_averaged, Tensor):
                    foreach._foreach_addcdiv_(averaged_param_list, diffs,
                                              [num_averaged + 1] * len(averaged_param_list))
                else:
                    foreach._foreach_add_(averaged_param_list, diffs,
                                          alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """An exponential moving average of one tensor, for ``avg_fn``:
    ``decay * ema + (1 - decay) * current``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import get_ema_avg_fn
        >>> get_ema_avg_fn(0.5)(torch.zeros(1), torch.ones(1), 3)
        tensor([0.5000])
    """
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean of one tensor, for ``avg_fn``: ``avg + (current - avg) / (n + 1)``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import get_swa_avg_fn
        >>> get_swa_avg_fn()(torch.tensor([2.0]), torch.tensor([5.0]), 2)
        tensor([3.])
    """
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _by_dtype(pairs: Iterable[tuple[Tensor, Tensor]]) -> dict:
    """Group (averaged, current) pairs by dtype, in first-seen order (PyTorch groups by
    device and dtype before calling a ``multi_avg_fn``)."""
    groups: dict = {}
    for a, b in pairs:
        mine, theirs = groups.setdefault(a.dtype, ([], []))
        mine.append(a)
        theirs.append(b)
    return groups


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    running average of the model's, updated by ``update_parameters``.

    ``avg_fn(averaged, current, n_averaged)`` returns the new average of one tensor;
    ``multi_avg_fn(averaged_list, current_list, n_averaged)`` updates lists in place; by
    default, the equal-weight running mean (SWA). Without ``use_buffers`` the buffers are
    copied from the model (run ``update_bn`` afterwards for batch norm statistics).
    ``device`` is accepted for compatibility: retrograd has only the CPU.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        >>> model = torch.nn.Linear(2, 1)
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
        >>> ema.update_parameters(model); int(ema.n_averaged)
        1
    """

    def __init__(self, model: Module, device=None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Call the averaged copy of the model.

        Example:
            >>> import retrograd as torch
            >>> from retrograd.optim.swa_utils import AveragedModel
            >>> AveragedModel(torch.nn.Identity())(torch.ones(2))
            tensor([1., 1.])
        """
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters into this copy (the first call copies).

        Example:
            >>> import retrograd as torch
            >>> from retrograd.optim.swa_utils import AveragedModel
            >>> m = torch.nn.Linear(1, 1); swa = AveragedModel(m)
            >>> swa.update_parameters(m); torch.equal(swa.module.weight, m.weight)
            True
        """
        mine = self._tensors(self.module) if self.use_buffers else self.parameters()
        pairs = []
        first = int(self.n_averaged) == 0
        for p_averaged, p_model in zip(mine, self._tensors(model), strict=False):
            p_model_ = p_model.detach()
            pairs.append((p_averaged.detach(), p_model_))
            if first:
                p_averaged.detach().copy_(p_model_)
        if int(self.n_averaged) > 0:
            with no_grad():
                self._average(pairs)
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach())
        self.n_averaged += 1

    def _average(self, pairs: list[tuple[Tensor, Tensor]]) -> None:
        if self.multi_avg_fn is not None:
            for mine, theirs in _by_dtype(pairs).values():
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            return
        # with neither function given, PyTorch's CPU path is the one-tensor SWA mean
        avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
        for p_averaged, p_model in pairs:
            p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))


def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute the running statistics of every batch norm layer of ``model`` with one
    pass over ``loader`` (a batch that is a list or tuple contributes its first item).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.optim.swa_utils import update_bn
        >>> model = torch.nn.BatchNorm1d(1)
        >>> update_bn([torch.tensor([[1.0], [3.0]]), torch.tensor([[5.0], [7.0]])], model)
        >>> model.running_mean
        tensor([4.])
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then hold it.

    Example:
        >>> import retrograd as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> s = torch.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2,
        ...                                 anneal_strategy="linear")
        >>> for _ in range(3):
        ...     opt.step(); s.step(); print(s.get_last_lr())
        [0.75]
        [0.5]
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The learning rates of this step: the previous step's starting point moved a
        fraction ``anneal(t)`` of the way to ``swa_lr``.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
            >>> torch.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=0).get_last_lr()
            [0.1]
        """
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, without the optimizer and the annealing function.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
            >>> torch.optim.swa_utils.SWALR(opt, swa_lr=0.1).state_dict()['_anneal_strategy']
            'cos'
        """
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state from ``state_dict()``, the annealing function included.

        Example:
            >>> import retrograd as torch
            >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
            >>> s = torch.optim.swa_utils.SWALR(opt, swa_lr=0.1)
            >>> s.load_state_dict({**s.state_dict(), '_anneal_strategy': 'linear'})
            >>> s.anneal_func(0.25)
            0.25
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
