"""Normalization layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm.

Example:
    >>> import retrograd as torch
    >>> bn = torch.nn.BatchNorm1d(2)
    >>> _ = bn(torch.tensor([[1., 2.], [3., 6.]]))
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.2000, 0.4000]), tensor(1))
"""

from __future__ import annotations

import warnings

from ..._core import dtype as D
from ..._core.hints import DeviceLike, ShapeLike
from ..._functions.creation import ones, tensor, zeros
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from .linear import _weight_and_bias
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "GroupNorm"]


def _dt(dtype):
    return dtype if dtype is not None else D.DEFAULTS.float


def _affine_params(module: Module, affine: bool, shape: tuple, bias: bool, dtype) -> None:
    """Register ``module.weight``/``module.bias`` of ``shape`` (None when not ``affine``;
    bias None unless ``bias``)."""
    if affine:
        _weight_and_bias(module, shape, shape, bias, dtype)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(affine: bool, weight, bias) -> None:
    """Weight 1 and bias 0 (where the module has them)."""
    if affine:
        init.ones_(weight)
        if bias is not None:
            init.zeros_(bias)


class _NormBase(Module):
    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_params(self, affine, (num_features,), bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=_dt(dtype)))
            self.register_buffer("running_var", ones(num_features, dtype=_dt(dtype)))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=D.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches seen."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        """Running statistics reset; weight 1, bias 0."""
        self.reset_running_stats()
        _reset_affine(self.affine, self.weight, self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "bias={use_bias}, track_running_stats={track_running_stats}".format(
                    **self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs, assign=False) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked
                                   is not None else tensor(0, dtype=D.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs, assign)


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        eaf = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                eaf = 1.0 / float(self.num_batches_tracked.item())
            else:
                eaf = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None,
                            self.running_var if use_stats else None, self.weight, self.bias,
                            bn_training, eaf, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.BatchNorm1d(3)
        BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.BatchNorm2d(2)(torch.randn(4, 2, 3, 3)).shape
        torch.Size([4, 2, 3, 3])
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.BatchNorm3d(1)(torch.randn(2, 1, 2, 2, 2)).shape
        torch.Size([2, 1, 2, 2, 2])
    """

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input):
        nd = self._no_batch_dim
        if input.dim() not in (nd, nd + 1):
            raise ValueError(f"expected {nd}D or {nd + 1}D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False", stacklevel=2)
        unbatched = input.dim() == self._no_batch_dim
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.InstanceNorm1d(2).affine
        False
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W) input.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.InstanceNorm2d(2)(torch.randn(1, 2, 3, 3)).shape
        torch.Size([1, 2, 3, 3])
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or (C, D, H, W) input."""

    _no_batch_dim = 4


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.LayerNorm(4)
        LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape: ShapeLike, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, elementwise_affine, self.normalized_shape, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine(self.elementwise_affine, self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    """Normalize groups of channels per sample, then a per-channel scale and shift.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.GroupNorm(2, 4)(torch.randn(3, 4, 5)).shape
        torch.Size([3, 4, 5])
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_params(self, affine, (num_channels,), bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine(self.affine, self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)
