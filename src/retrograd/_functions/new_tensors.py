"""Tensors made from another one: ``Tensor.new_zeros/new_ones/new_full/new_empty/
new_tensor`` and the legacy ``Tensor.new``, which default to the source's dtype (a
``Parameter``'s included; the result is a plain Tensor that does not require grad).

Example:
    >>> import retrograd as torch
    >>> w = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    >>> w.new_zeros(1, 2)
    tensor([[0., 0.]], dtype=torch.float64)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from .._core import dtype as D
from .._core.hints import DeviceLike, Number, Shape
from .._core.layouts import layout
from .._core.size import Size
from .._tensor.tensor import Tensor
from .creation import _filled, _shape, check_pin_memory, tensor, uninitialized

__all__ = ["new", "new_empty", "new_full", "new_ones", "new_tensor", "new_zeros"]


def _dtype_of(self: Tensor, dtype) -> D.dtype:
    return self.dtype if dtype is None else D.as_dtype(dtype)


def new_zeros(self: Tensor, *size: int | Sequence[int], dtype: D.dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False,
              layout: layout | None = None, pin_memory: bool = False) -> Tensor:
    """Zeros of shape ``size``, of ``self``'s dtype unless ``dtype`` is given.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, dtype=torch.int32).new_zeros(2, 2)
        tensor([[0, 0],
                [0, 0]], dtype=torch.int32)
    """
    check_pin_memory(pin_memory)
    return _filled(size, None, _dtype_of(self, dtype), requires_grad, device, "new_zeros")


def new_ones(self: Tensor, *size: int | Sequence[int], dtype: D.dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False,
             layout: layout | None = None, pin_memory: bool = False) -> Tensor:
    """Ones of shape ``size``, of ``self``'s dtype unless ``dtype`` is given.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(1, dtype=torch.float64).new_ones(2)
        tensor([1., 1.], dtype=torch.float64)
    """
    check_pin_memory(pin_memory)
    return _filled(size, 1, _dtype_of(self, dtype), requires_grad, device, "new_ones")


def new_empty(self: Tensor, *size: int | Sequence[int], dtype: D.dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False,
              layout: layout | None = None, pin_memory: bool = False) -> Tensor:
    """A tensor of shape ``size`` standing for uninitialised memory (zeros here; NaN or
    the dtype's largest value under ``use_deterministic_algorithms``, as PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).new_empty(2, 3).shape
        torch.Size([2, 3])
    """
    check_pin_memory(pin_memory)
    return uninitialized(_filled(size, None, _dtype_of(self, dtype), requires_grad, device,
                                 "new_empty"))


def new_full(self: Tensor, size: Shape, fill_value: Number, *, dtype: D.dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False,
             layout: layout | None = None, pin_memory: bool = False) -> Tensor:
    """``fill_value`` in a tensor of shape ``size`` (a sequence), of ``self``'s dtype
    unless ``dtype`` is given.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, dtype=torch.int64).new_full((2,), 3.7)
        tensor([3, 3])
    """
    if not isinstance(size, (tuple, list, Size)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__} (pass the shape as a tuple, e.g. (2,))")
    check_pin_memory(pin_memory)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(tuple(size), fill_value, _dtype_of(self, dtype), requires_grad, device,
                   "new_full")


def new_tensor(self: Tensor, data: Any, dtype: D.dtype | None = None,
               device: DeviceLike | None = None, requires_grad: bool = False,
               layout: layout | None = None, pin_memory: bool = False) -> Tensor:
    """A copy of ``data`` of ``self``'s dtype unless ``dtype`` is given (a Tensor ``data``
    is copied, detached, with PyTorch's warning recommending ``detach().clone()``).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, dtype=torch.int64).new_tensor([1.5, 2.0])
        tensor([1, 2])
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.detach()
    check_pin_memory(pin_memory)
    return tensor(data, dtype=_dtype_of(self, dtype), device=device,
                  requires_grad=requires_grad)


def new(self: Tensor, *args, device: DeviceLike | None = None, **kwargs) -> Tensor:
    """The legacy constructor on a tensor: ``x.new(2, 3)`` (a shape: ints or a Size),
    ``x.new(data)`` (a list or tuple, converted to ``x``'s dtype), ``x.new(other)`` (an
    alias of ``other``, which must have ``x``'s dtype), ``x.new()`` (empty). Prefer
    ``new_empty``/``new_tensor``.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(1, dtype=torch.int64)
        >>> x.new(2, 3).shape, x.new((2, 3)), x.new()
        (torch.Size([2, 3]), tensor([2, 3]), tensor([], dtype=torch.int64))
    """
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"keyword(s) {', '.join(kwargs)}; new() takes a shape, data or a "
                        "tensor, and only the keyword device (use new_tensor(data, "
                        "dtype=...) or new_empty(size, dtype=...) for another dtype)")
    dt = self.dtype
    if not args:
        return _filled((0,), None, dt, False, device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype != dt:
            raise TypeError(f"expected {_options(dt)} (got {_options(first.dtype)}) (new(other) "
                            "aliases other, so its dtype must be this tensor's: use "
                            "other.to(x.dtype))")
        return first.detach()
    if len(args) == 1 and not isinstance(first, (int, Size)):
        return tensor(first, dtype=dt, device=device)
    return uninitialized(_filled(_shape(args), None, dt, False, device))


def _options(dt: D.dtype) -> str:
    return (f"TensorOptions(dtype={_C_NAMES.get(dt.name, dt.name)}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


_C_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def pin_memory(self: Tensor, device: DeviceLike | None = None) -> Tensor:
    """Raises RuntimeError, as PyTorch's CPU build does: pinned memory needs an accelerator.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.ones(1).pin_memory()
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[0])
        Cannot access accelerator device when none is available.
    """
    raise RuntimeError("Cannot access accelerator device when none is available.\n(retrograd "
                       "runs on the CPU only: pinned memory only speeds copies to an "
                       "accelerator, so drop the .pin_memory() call, or guard it with "
                       "`if torch.cuda.is_available():`)")


def is_pinned(self: Tensor, device: DeviceLike | None = None) -> bool:
    """False: no tensor is ever in pinned memory here.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).is_pinned()
        False
    """
    return False
