"""``DataParallel`` and ``data_parallel`` as PyTorch's behave on a machine without GPUs.

Example:
    >>> import retrograd as torch
    >>> model = torch.nn.DataParallel(torch.nn.Linear(3, 1))
    >>> model(torch.ones(2, 3)).shape
    torch.Size([2, 1])
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._core.hints import DeviceLike
from .module import Module

__all__ = ["DataParallel", "data_parallel"]


# Note [DataParallel without devices]
# PyTorch's DataParallel splits the batch over CUDA devices. When no accelerator is
# available (retrograd's only device is the CPU) its constructor keeps the module and an
# empty device_ids list, and forward simply calls the module: same outputs, same
# gradients, parameters reached as ``.module.*`` and state_dict keys prefixed with
# ``module.``. So scripts written for GPUs run unchanged. The functional form,
# data_parallel, has no such fallback in PyTorch: it raises, and so do we.

class DataParallel(Module):
    """Wraps ``module``; with no GPU (always, here) ``forward`` calls it directly, as
    PyTorch's does.

    Example:
        >>> import retrograd as torch
        >>> dp = torch.nn.DataParallel(torch.nn.Linear(2, 2), device_ids=[0, 1])
        >>> dp.device_ids, type(dp.module).__name__
        ([], 'Linear')
    """

    def __init__(self, module: Module, device_ids: Sequence[DeviceLike] | None = None,
                 output_device: DeviceLike | None = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids=None, output_device=None,
                  dim: int = 0, module_kwargs: Any | None = None):
    """The functional form of ``DataParallel``; like PyTorch's on a machine without a GPU,
    it raises (call the module instead).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2))
        ... except RuntimeError as e:
        ...     print(str(e).split(" (")[0])
        device type could not be determined
    """
    raise RuntimeError("device type could not be determined (data_parallel spreads a batch "
                       "over GPUs and this machine has none: call the module itself, "
                       "module(*inputs), or wrap it in nn.DataParallel, which does)")
