"""``nn.SyncBatchNorm``: batch norm whose statistics span every rank of a process group.

Under data parallelism each rank sees a slice of the batch; ``BatchNorm*d`` would
normalize each slice by its own statistics. ``SyncBatchNorm`` normalizes by those of the
whole global batch (the ranks' slices may differ in size), so n ranks train as one
process on the union of their slices would. ``convert_sync_batchnorm`` swaps it in for
every ``BatchNorm*d`` of a model before ``DistributedDataParallel`` wraps it.

Example:
    >>> import retrograd as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    >>> model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    >>> type(model[1]).__name__
    'SyncBatchNorm'
"""

from __future__ import annotations

import sys
from typing import Any

from ..._core.dtype import dtype
from ..._core.grad_mode import no_grad
from ..._core.hints import DeviceLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from ._functions import SyncBatchNorm as _SyncBatchNormFunction
from .module import Module
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]

_DIST = __name__.rsplit(".", 3)[0] + ".distributed"  # "retrograd.distributed"


# Note [SyncBatchNorm without MPI]
# Only training with batch statistics in an initialized group of more than one rank
# synchronizes; everything else (eval with running statistics, one rank, no process
# group) is F.batch_norm, as in PyTorch. Whether a group is initialized is read from
# retrograd.distributed only if something has imported it already: a script that called
# init_process_group() has, and one that has not cannot have a group. So importing
# retrograd.nn, or training SyncBatchNorm in a plain script, never loads the distributed
# package or mpi4py. PyTorch also refuses CPU tensors here ("SyncBatchNorm expected input
# tensor to be on GPU"); retrograd runs on the CPU, so CPU is what it synchronizes.

def _sync_world(process_group) -> tuple[Any, int] | None:
    """(group, size) to synchronize over, or None when this forward needs no sync."""
    dist = sys.modules.get(_DIST)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    group = process_group if process_group else dist.group.WORLD
    size = dist.get_world_size(group)
    return (group, size) if size > 1 else None


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, +) input with statistics over all ranks of a group.

    Args:
        num_features: ``C`` of an input of size ``(N, C, +)``.
        eps: added to the variance for numerical stability. Default: 1e-5.
        momentum: factor of the running statistics' update; ``None`` for a cumulative
            average. Default: 0.1.
        affine: whether the layer has a learnable weight and bias. Default: True.
        track_running_stats: whether the layer keeps running statistics. Default: True.
        process_group: the group whose ranks share statistics (default: the world).

    In training with more than one rank, the mean and variance are those of the
    concatenation of all ranks' inputs; in eval mode, with one rank or without an
    initialized process group it is ``BatchNorm*d``.

    Example:
        >>> import retrograd as torch
        >>> bn = torch.nn.SyncBatchNorm(2)  # no process group: plain batch norm
        >>> bn(torch.tensor([[1., 2.], [3., 6.]])).detach()
        tensor([[-1.0000, -1.0000],
                [ 1.0000,  1.0000]])
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any | None = None, device: DeviceLike | None = None,
                 dtype: dtype | None = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        """Normalize ``input`` (synchronizing the statistics when training on several ranks).

        Example:
            >>> import retrograd as torch
            >>> torch.nn.SyncBatchNorm(3)(torch.randn(4, 3, 2)).shape
            torch.Size([4, 3, 2])
        """
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is None:
                raise AssertionError("num_batches_tracked must not be None")
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                eaf = 1.0 / float(self.num_batches_tracked.item())
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_stats = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_stats else None
        running_var = self.running_var if use_stats else None
        world = _sync_world(self.process_group) if bn_training and self.training else None
        if world is None:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, eaf, self.eps)
        group, size = world
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean,
                                            running_var, self.eps, eaf, group, size)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any | None = None) -> Module:
        """Replace every ``BatchNorm*d`` in ``module`` (recursively) by a ``SyncBatchNorm``
        sharing its parameters and buffers; returns ``module`` (or the new layer when
        ``module`` itself is a batch norm).

        Example:
            >>> import retrograd as torch
            >>> bn = torch.nn.BatchNorm2d(3)
            >>> sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
            >>> type(sync).__name__, sync.weight is bn.weight
            ('SyncBatchNorm', True)
        """
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
