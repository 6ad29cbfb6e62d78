"""Optimizers (``retrograd.optim.SGD``, ``Adam``, ...) and learning-rate schedulers.

Each optimizer follows PyTorch's single-tensor (``foreach=False``) update, operation by
operation, with Tensor ops under ``no_grad``.

Example:
    >>> import retrograd as torch
    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.25)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w ** 2).sum().backward(); opt.step(); sched.step()
    >>> w, sched.get_last_lr()
    (tensor([0.7500], requires_grad=True), [0.0625])
"""

from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from .stateless import swap_in_optimizer_params_and_state

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "lr_scheduler", "swa_utils", "swap_in_optimizer_params_and_state"]
