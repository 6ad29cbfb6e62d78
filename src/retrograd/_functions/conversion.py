"""Conversions and copies: ``Tensor.to`` (and the ``Module.to`` argument parser),
``type_as``, ``type``, ``clone``, ``contiguous``, ``detach_copy``.

Example:
    >>> import retrograd as torch
    >>> torch.tensor([1, 2]).to(torch.float64).clone()
    tensor([1., 2.], dtype=torch.float64)
"""

from __future__ import annotations

from .._core import dtype as D
from .._core import layouts as L
from .._core.device import CPU, META, check_device, parse_device
from .._core.device import device as _device
from .._core.grad_mode import is_grad_enabled
from .._core.meta import NO_DATA, MetaArray
from .._graph.node import legacy_type_name
from .._tensor.tensor import Tensor, _make
from ..ops.dispatch import apply
from ..ops.public import public
from ..ops.records import table as T

# ----------------------------------------------------------------------------------
# conversions and copies


def parse_to_args(args, kwargs) -> tuple:
    """(dtype or None, copy) from the arguments of ``Tensor.to``/``Module.to``, in any of
    PyTorch's forms: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``,
    ``to(dtype, non_blocking, copy)``, keywords. The device must be the CPU."""
    dtype, copy, dev, _fmt = parse_to(args, kwargs)
    check_device(dev)
    return dtype, copy


def parse_to(args, kwargs) -> tuple:
    """(dtype or None, copy, device or None, memory_format or None) from the arguments of
    ``Tensor.to``/``Module.to``; the device is None, the CPU or 'meta' (others raise)."""

    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    dev = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: unexpected "
                        f"keyword {next(iter(kwargs))!r}. to() takes a dtype, a device (the "
                        "CPU), another tensor, or the keywords dtype, device, copy, "
                        "non_blocking and memory_format.")
    flags = []
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, bool):  # positional non_blocking, then copy (PyTorch's order)
            flags.append(a)
        elif isinstance(a, (str, _device, int)):
            dev = a
        elif a is not None:
            dtype = D.as_dtype(a)
    if len(flags) > 1:
        copy = flags[1]
    return dtype, copy, parse_device(dev), fmt


@public(function=False)
def to(self, *args, **kwargs) -> Tensor:
    """Convert dtype or memory format, or move to the 'meta' device (any other device than
    the CPU raises). A copy keeps ``self``'s layout unless ``memory_format`` says another
    (Note [Memory formats] in _core/layouts.py).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).to(torch.float64).dtype
        torch.float64
        >>> torch.zeros(1, 3, 2, 2).to(memory_format=torch.channels_last).stride()
        (12, 1, 6, 3)
    """
    dtype, copy, dev, fmt = parse_to(args, kwargs)
    if dev is META or (dev is CPU and self._data.__class__ is MetaArray):
        return _to_device(self, dtype, dev, copy)
    a = self._data
    dt = a.dtype if dtype is None else D.as_dtype(dtype).np
    if fmt is None or fmt is L.preserve_format:
        if dt == a.dtype and not copy:
            return self
        return apply(T.to_copy, (self,), dt)
    L.check_format_rank(fmt, self.dim())
    if dt == a.dtype and not copy and L.suggest_memory_format(
            a.shape, L.element_strides(a)) is fmt:  # (PyTorch's to_will_alias)
        return self
    return apply(T.to_copy, (self,), (dt, fmt))


def _to_device(self, dtype, dev, copy: bool) -> Tensor:
    """``self.to('meta')`` and ``meta.to('cpu')`` (Note [Meta tensors])."""
    meta = self._data.__class__ is MetaArray
    if dev is CPU:
        raise NotImplementedError(NO_DATA)
    dt = self._data.dtype if dtype is None else D.as_dtype(dtype).np
    if meta and dt == self._data.dtype and not copy:
        return self
    if self._rg and is_grad_enabled():
        raise NotImplementedError(
            "retrograd does not record Tensor.to('meta') in the autograd graph (PyTorch's "
            "ToCopyBackward0): move a tensor that requires grad under torch.no_grad(), or "
            "detach() it first.")
    return _make(MetaArray(self._data.shape, dt))


def _caster(dt):
    def fn(self, memory_format: L.memory_format | None = None) -> Tensor:
        return to(self, dt, memory_format=memory_format)
    fn.__name__ = dt.name
    fn.__doc__ = f"``self.to({dt!r})``."
    return fn


@public(function=False)
def type_as(self, other: Tensor) -> Tensor:
    return to(self, other.dtype)


def type_(self, dtype: str | D.dtype | None = None, non_blocking: bool = False) -> Tensor | str:
    if dtype is None:
        return _legacy_type_str(self)
    if isinstance(dtype, str):
        names = {"torch.FloatTensor": D.float32, "torch.DoubleTensor": D.float64,
                 "torch.LongTensor": D.int64, "torch.IntTensor": D.int32,
                 "torch.HalfTensor": D.float16, "torch.BoolTensor": D.bool,
                 "torch.ByteTensor": D.uint8}
        dtype = names[dtype]
    return to(self, dtype)


def _legacy_type_str(t) -> str:

    return legacy_type_name(t)


@public
def clone(input: Tensor, *, memory_format: L.memory_format | None = None) -> Tensor:
    """A copy in the graph (its gradient flows back to ``input``), in ``input``'s layout
    or the ``memory_format`` given (Note [Memory formats] in _core/layouts.py).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, requires_grad=True).clone()
        tensor([1.], grad_fn=<CloneBackward0>)
        >>> torch.zeros(2, 3).t().clone().stride()
        (1, 3)
    """
    if memory_format is None or memory_format is L.preserve_format:
        return apply(T.clone, (input,))
    L.check_format_rank(memory_format, input.dim())
    return apply(T.clone, (input,), memory_format)


@public(function=False)
def contiguous(input: Tensor, memory_format: L.memory_format | None = None) -> Tensor:
    """``input`` itself when contiguous in ``memory_format`` (row-major by default),
    otherwise a copy that is.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).t().contiguous().is_contiguous()
        True
    """
    if memory_format is None or memory_format is L.contiguous_format:
        if input._data.flags.c_contiguous:
            return input
        return apply(T.clone, (input,), L.contiguous_format)
    if memory_format is L.preserve_format:
        if input._data.flags.c_contiguous:
            return input
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator "
                           "(contiguous() makes a tensor contiguous in a named format: "
                           "pass torch.contiguous_format or torch.channels_last, or call "
                           "clone() to keep the layout)")
    L.check_format_rank(memory_format, input.dim())
    if input.is_contiguous(memory_format=memory_format):
        return input
    return apply(T.clone, (input,), memory_format)


def detach_copy(input) -> Tensor:
    return _make(input._data.copy())
