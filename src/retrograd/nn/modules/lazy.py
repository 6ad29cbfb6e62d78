"""Lazy modules: layers that learn their input size from the first batch they see.

``LazyLinear(out_features)`` and friends start with ``UninitializedParameter``s; the first
call reads the input's size, materializes the parameters, draws their initial values as
the eager layer would, and turns the module into that layer (``LazyLinear`` becomes
``Linear``), as PyTorch's LazyModuleMixin does.

Example:
    >>> import retrograd as torch
    >>> net = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(1))
    >>> net[0].has_uninitialized_params()
    True
    >>> net(torch.ones(2, 3)).shape
    torch.Size([2, 1])
    >>> net[0]
    Linear(in_features=3, out_features=4, bias=True)
"""

from __future__ import annotations

import itertools

from ..._core import dtype as D
from ..._core.grad_mode import no_grad
from ..._core.hints import DeviceLike, ShapeLike
from ..._functions.creation import tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .module import _add_hook
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _BatchNorm,
    _InstanceNorm,
)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


# Note [Lazy modules]
# A lazy module is its eager layer built with zero features, whose parameters (and
# running statistics) are then replaced by uninitialized ones (Note [Uninitialized
# tensors]). Two hooks do the rest, as in PyTorch: a forward pre-hook calls
# ``initialize_parameters(*args, **kwargs)``, which reads the sizes off the input,
# materializes every uninitialized tensor and calls ``reset_parameters`` (so the random
# draws, in order and count, are the eager layer's); then the hooks are removed and the
# module's class becomes ``cls_to_become``. A load_state_dict pre-hook materializes a
# parameter from the checkpoint's shape, so a lazy model loads a trained state without a
# dry run (it stays lazy until its first call, as PyTorch's does). ``reset_parameters``
# does nothing while a tensor is uninitialized or the size is still 0.

class LazyModuleMixin:
    """Shape inference for a layer's parameters on its first call (see the module doc).

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.LazyConv1d(4, 3)
        >>> isinstance(m, torch.nn.modules.lazy.LazyModuleMixin)
        True
        >>> _ = m(torch.ones(1, 2, 5)); type(m).__name__, m.in_channels
        ('Conv1d', 2)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = _add_hook(self._load_state_dict_pre_hooks, self._lazy_load_hook,
                                    self, count=False)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = (buf if is_lazy(buf) or keep_vars
                                              else buf.detach())

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the parameters from the first input's sizes (each layer's own)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized.

        Example:
            >>> import retrograd as torch
            >>> torch.nn.LazyLinear(2).has_uninitialized_params()
            True
        """
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                      self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose ``in_features`` is the last size of its first input.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.LazyLinear(3)
        >>> _ = m(torch.ones(2, 5)); m.weight.shape
        torch.Size([3, 5])
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: DeviceLike | None = None,
                 dtype: D.dtype | None = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a state_dict: learn it now
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    _nsp = 2

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input) -> int:
        no_batch = self._nsp + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(eager, nsp: int):
    class LazyConv(_LazyConvXdMixin, eager):
        cls_to_become = eager
        _nsp = nsp

        def __init__(self, out_channels: int, kernel_size: ShapeLike, stride: ShapeLike = 1,
                     padding: ShapeLike = 0, dilation: ShapeLike = 1, groups: int = 1,
                     bias: bool = True, padding_mode: str = "zeros",
                     device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConv


def _lazy_conv_transpose(eager, nsp: int):
    class LazyConvTranspose(_LazyConvXdMixin, eager):
        cls_to_become = eager
        _nsp = nsp

        def __init__(self, out_channels: int, kernel_size: ShapeLike, stride: ShapeLike = 1,
                     padding: ShapeLike = 0, output_padding: ShapeLike = 0, groups: int = 1,
                     bias: bool = True, dilation: ShapeLike = 1, padding_mode: str = "zeros",
                     device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups,
                             False, dilation, padding_mode, dtype=dtype)
            self._lazy_init(out_channels, bias, device, dtype)

    return LazyConvTranspose


def _named(cls, name: str, eager_name: str):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = (f"A {eager_name} whose ``in_channels`` comes from its first input "
                   f"(dim 1, or 0 unbatched).\n\n    Example:\n        >>> import retrograd "
                   f"as torch\n        >>> torch.nn.{name}(4, 3).has_uninitialized_params()\n"
                   "        True\n    ")
    return cls


LazyConv1d = _named(_lazy_conv(Conv1d, 1), "LazyConv1d", "Conv1d")
LazyConv2d = _named(_lazy_conv(Conv2d, 2), "LazyConv2d", "Conv2d")
LazyConv3d = _named(_lazy_conv(Conv3d, 3), "LazyConv3d", "Conv3d")
LazyConvTranspose1d = _named(_lazy_conv_transpose(ConvTranspose1d, 1), "LazyConvTranspose1d",
                             "ConvTranspose1d")
LazyConvTranspose2d = _named(_lazy_conv_transpose(ConvTranspose2d, 2), "LazyConvTranspose2d",
                             "ConvTranspose2d")
LazyConvTranspose3d = _named(_lazy_conv_transpose(ConvTranspose3d, 3), "LazyConvTranspose3d",
                             "ConvTranspose3d")


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: DeviceLike | None = None,
                 dtype: D.dtype | None = None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=D.int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        # dim 1 even for an unbatched instance-norm input, as PyTorch
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, eager):
    name = "Lazy" + eager.__name__
    cls = type(name, (_LazyNormBase, base), {"cls_to_become": eager,
                                             "_check_input_dim": eager._check_input_dim})
    if hasattr(eager, "_no_batch_dim"):
        cls._no_batch_dim = eager._no_batch_dim
    cls.__module__ = __name__
    cls.__doc__ = (f"A {eager.__name__} whose ``num_features`` is its first input's size "
                   f"along dim 1.\n\n    Example:\n        >>> import retrograd as torch\n"
                   f"        >>> torch.nn.{name}().has_uninitialized_params()\n        True\n"
                   "    ")
    return cls


LazyBatchNorm1d = _lazy_norm(_BatchNorm, BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(_BatchNorm, BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(_BatchNorm, BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(_InstanceNorm, InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(_InstanceNorm, InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(_InstanceNorm, InstanceNorm3d)
