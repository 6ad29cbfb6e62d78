"""Tensors over storages: ``untyped_storage``/``storage``/``storage_offset``, ``set_``,
``resize_``, ``as_strided_``, ``share_memory_``, ``empty_strided``, ``frombuffer`` and
``from_file`` (Note [Storages are root arrays] in ``retrograd/storage.py``).

Example:
    >>> import retrograd as torch
    >>> base = torch.arange(6.0)
    >>> t = torch.empty(0).set_(base.untyped_storage(), 2, (2,), (2,))
    >>> t, t.storage_offset()
    (tensor([2., 4.]), 2)
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._core.hints import DeviceLike, Shape
from .._core.layouts import layout, memory_format
from .._tensor.tensor import Tensor
from ..ops.public import public
from ..storage import (
    LEGACY,
    TypedStorage,
    UntypedStorage,
    _shared_bytes,
    _warn_typed_storage_removal,
    byte_view,
    is_shared_array,
    root_array,
)
from .creation import _finish, _shape, check_pin_memory, uninitialized
from .inplace import _check_inplace_leaf
from .new_tensors import _C_NAMES

__all__ = ["untyped_storage", "storage", "storage_offset", "storage_type", "set_",
           "is_set_to", "resize_", "resize_as_", "as_strided_", "share_memory_", "is_shared",
           "empty_strided", "new_empty_strided", "frombuffer", "from_file"]


def _offset(self: Tensor) -> int:
    # a root array owns one contiguous block and starts at its data pointer
    data = self._data
    start = root_array(data).__array_interface__["data"][0]
    return (data.__array_interface__["data"][0] - start) // data.itemsize


@public(function=False)
def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes this tensor (and every view of its memory) lives in.

    Example:
        >>> import retrograd as torch
        >>> x = torch.zeros(2, 3)
        >>> x.untyped_storage().nbytes(), x[1].untyped_storage().data_ptr() == x.data_ptr()
        (24, True)
    """
    return UntypedStorage._wrap(self._data)


@public(function=False)
def storage(self: Tensor) -> TypedStorage:
    """The storage as elements of this tensor's dtype (deprecated by PyTorch: it warns once).

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.arange(3)[1:].storage().size()
        3
    """
    _warn_typed_storage_removal()
    return TypedStorage(wrap_storage=untyped_storage(self), dtype=self.dtype, _internal=True)


@public(function=False)
def storage_offset(self: Tensor) -> int:
    """Where this tensor starts in its storage, in elements.

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6).reshape(2, 3)[1, 1:].storage_offset()
        4
    """
    return _offset(self)


@public(function=False)
def storage_type(self: Tensor) -> type:
    """The legacy typed-storage class of this tensor's dtype (``torch.FloatStorage``...).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).storage_type().__name__
        'FloatStorage'
    """
    return LEGACY[self.dtype]


def _strides_of(shape: tuple) -> tuple:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _extent(shape: tuple, stride: tuple) -> int:
    """Elements a (shape, stride) layout reaches past its offset (0 when empty)."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))


def _over(data_bytes: np.ndarray, dtype: D.dtype, offset: int, shape: tuple,
          stride: tuple) -> np.ndarray:
    """An ndarray over ``data_bytes`` (a storage's uint8 array): the one constructor of
    strided views used by set_, resize_ and as_strided_."""
    item = dtype.itemsize
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    need = (offset + _extent(shape, stride)) * item
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if need > data_bytes.size:
        raise RuntimeError(
            f"setStorage: sizes {list(shape)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {need} are out of bounds for "
            f"storage of size {data_bytes.size} (retrograd never grows a storage others may "
            "share (Note [Storages are root arrays]): make a bigger tensor and copy into it)")
    if need == 0 and offset * item > data_bytes.size:
        return np.zeros(shape, dtype.np)
    return np.ndarray(shape, dtype.np, buffer=data_bytes, offset=offset * item,
                      strides=tuple(s * item for s in stride))


def _refuse_grad(self: Tensor, what: str) -> None:
    _check_inplace_leaf(self)
    if STATE.enabled and self.requires_grad:
        raise RuntimeError(f"{what} on a tensor that requires grad is not supported by "
                           "retrograd (it would rewrite the tensor's history): do it under "
                           "torch.no_grad(), or on a .detach()ed tensor")


def _rebind(self: Tensor, arr: np.ndarray) -> Tensor:
    """Point ``self`` at ``arr`` in place: no longer a view of its old base; one version."""
    self._data = arr
    self._base = None
    self._vfn = None
    self._vc[0] += 1
    return self


@public(function=False)
def set_(self: Tensor, source: Tensor | TypedStorage | UntypedStorage | None = None,
         storage_offset: int = 0, size: Shape | None = None, stride: Shape | None = None) -> Tensor:
    """Make this tensor look at ``source``'s memory: a tensor (same storage, offset, size
    and strides) or a storage (from ``storage_offset`` with ``size``/``stride``;
    default: all of it); no source: an empty storage.

    Example:
        >>> import retrograd as torch
        >>> x, y = torch.zeros(1), torch.arange(3.0)
        >>> x.set_(y).is_set_to(y), x.set_().shape
        (True, torch.Size([0]))
    """
    _refuse_grad(self, "set_")
    if source is None:
        return _rebind(self, np.zeros(0, self._data.dtype))
    if isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_NAMES[source.dtype.name]} "
                               f"to a tensor of type {_C_NAMES[self.dtype.name]}")
        return _rebind(self, source._data.view())
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} or an UntypedStorage,"
                               f" but got type {source.dtype} for argument 1 'storage'")
        source = source.untyped()
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    item = self.dtype.itemsize
    shape = (source.nbytes() // item,) if size is None else _shape(tuple(size))
    stride = _strides_of(shape) if stride is None else tuple(int(s) for s in stride)
    return _rebind(self, _over(source._bytes, self.dtype, int(storage_offset), shape, stride))


@public(function=False)
def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors look at the same memory the same way (storage, offset, size,
    strides).

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(4)
        >>> x.is_set_to(x[:]), x.is_set_to(x[1:])
        (True, False)
    """
    a, b = untyped_storage(self), untyped_storage(tensor)
    return (a.data_ptr() == b.data_ptr() and a.nbytes() == b.nbytes()
            and _offset(self) == _offset(tensor) and self.shape == tensor.shape
            and self.stride() == tensor.stride())


def _sole_owner(self: Tensor) -> bool:
    """Whether nothing but this tensor reaches its memory (Note [Storages are root arrays]):
    each array on the chain from ``self._data`` to the root is referenced only by the one
    before it (the tensor's slot for the first), this loop's variable and getrefcount's
    argument; a view, a detach() or a saved array would add one. A block of the buffer
    pool (an array over a memoryview of the pool's array, Note [Buffer pool]) goes back to
    the pool when released; other memory NumPy does not own (a user's buffer, a mapped
    file) is never ours to replace."""
    arr = self._data
    while True:
        if sys.getrefcount(arr) > 3:
            return False
        if not isinstance(arr.base, np.ndarray):
            base = arr.base
            return base is None or (isinstance(base, memoryview)
                                    and isinstance(base.obj, np.ndarray))
        arr = arr.base


def _resize(self: Tensor, shape: tuple) -> Tensor:
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    dtype = self.dtype
    offset = _offset(self)
    capacity = byte_view(root_array(self._data)).size
    need = (offset + int(np.prod(shape, dtype=np.int64))) * dtype.itemsize
    if need > capacity and not _sole_owner(self):  # no local may hold the arrays here
        raise RuntimeError(
            "Trying to resize storage that is not resizable (retrograd: this tensor's memory "
            f"holds {capacity} bytes and {need} are needed, and other tensors (views, "
            "detach()es) share it, so it cannot be replaced under them "
            "(Note [Storages are root arrays]): resize a .clone() instead")
    old = byte_view(root_array(self._data))
    if need > capacity:
        grown = np.zeros(need, np.uint8)
        grown[:capacity] = old
        old = grown
    return _rebind(self, _over(old, dtype, offset, shape, _strides_of(shape)))


@public(function=False)
def resize_(self: Tensor, *sizes: int | Sequence[int],
            memory_format: memory_format | None = None) -> Tensor:
    """Give this tensor the shape ``sizes`` (contiguous, from its storage offset), growing
    its memory when needed; new elements are zeros here (uninitialised in PyTorch).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.0).resize_(2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    return _resize(self, _shape(sizes))


@public(method=True)
def resize_as_(input: Tensor, the_template: Tensor, *,
               memory_format: memory_format | None = None) -> Tensor:
    """``input.resize_(the_template.shape)``.

    Example:
        >>> import retrograd as torch
        >>> torch.resize_as_(torch.arange(4.0), torch.zeros(2, 2)).shape
        torch.Size([2, 2])
    """
    return _resize(input, tuple(the_template.shape))


@public(method=True)
def as_strided_(input: Tensor, size: Shape, stride: Shape,
                storage_offset: int | None = None) -> Tensor:
    """Make ``input`` the strided view ``as_strided(size, stride, storage_offset)`` of its
    own storage, in place.

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.0).as_strided_((2, 2), (1, 2), 1)
        tensor([[1., 3.],
                [2., 4.]])
    """
    _refuse_grad(input, "as_strided_")
    offset = _offset(input) if storage_offset is None else int(storage_offset)
    data = byte_view(root_array(input._data))
    return _rebind(input, _over(data, input.dtype, offset, _shape(tuple(size)),
                                tuple(int(s) for s in stride)))


# Note [Shared memory]
# PyTorch's ``share_memory_()`` moves a tensor's storage into shared memory so that other
# processes see its writes (Hogwild training, DataLoader queues). retrograd moves the
# bytes into an anonymous MAP_SHARED mapping: processes *forked* afterwards
# (multiprocessing's "fork" start method) share it, writes included. Two limits, both
# refused loudly rather than silently ignored: the move gives the tensor a new root array,
# so it is refused while other tensors (views, detach()es) share the old memory; and a
# shared tensor pickled to a "spawn" child arrives as a copy (retrograd has no file
# descriptor passing), which ``is_shared()`` of the copy reports as False.
@public(function=False)
def share_memory_(self: Tensor) -> Tensor:
    """Move this tensor's memory into shared memory (Note [Shared memory]); no-op if there.

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(3.0).share_memory_()
        >>> x.is_shared(), x
        (True, tensor([0., 1., 2.]))
    """
    if is_shared_array(root_array(self._data)):
        return self
    if not _sole_owner(self):
        raise RuntimeError("share_memory_(): retrograd can move a tensor into shared memory "
                           "only while no other tensor (a view, a detach()) shares its "
                           "memory (Note [Shared memory]): call share_memory_() on the base "
                           "tensor before taking views of it")
    data = self._data
    old = byte_view(data)
    new = _shared_bytes(old.size)
    new[...] = old
    self._data = _over(new, self.dtype, 0, data.shape, _strides_of(data.shape)) \
        if data.flags.c_contiguous else new.view(data.dtype).reshape(data.T.shape).T
    return self


@public(function=False)
def is_shared(self: Tensor) -> bool:
    """Whether this tensor's memory is shared memory (``share_memory_``, ``from_file``).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1).is_shared()
        False
    """
    return is_shared_array(root_array(self._data))


@public(method=False)
def empty_strided(size: Shape, stride: Shape, *, dtype: D.dtype | None = None,
                  layout: layout | None = None, device: DeviceLike | None = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` with strides ``stride`` over just enough fresh memory.

    Example:
        >>> import retrograd as torch
        >>> torch.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    check_pin_memory(pin_memory)
    dt = D.as_dtype(dtype) if dtype is not None else D.DEFAULTS.float
    shape, st = _shape(tuple(size)), tuple(int(s) for s in stride)
    if len(shape) != len(st):
        raise RuntimeError(f"mismatch in length of strides and shape (size {list(shape)}, "
                           f"stride {list(st)})")
    memory = np.zeros(_extent(shape, st) * dt.itemsize, np.uint8)
    t = _finish(_over(memory, dt, 0, shape, st), requires_grad, device)
    return uninitialized(t) if t._data.size else t


@public(function=False)
def new_empty_strided(self: Tensor, size: Shape, stride: Shape, *, dtype: D.dtype | None = None,
                      layout: layout | None = None, device: DeviceLike | None = None,
                      requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype unless ``dtype`` is given.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(1, dtype=torch.int64).new_empty_strided((2,), (2,)).dtype
        torch.int64
    """
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


_READ_ONLY_WARNED = [False]


@public(method=False)
def frombuffer(buffer: Any, *, dtype: D.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over the memory of an object with the buffer protocol (no copy).

    Example:
        >>> import retrograd as torch
        >>> torch.frombuffer(bytearray(b"\\x01\\x02\\x03\\x04"), dtype=torch.int16)
        tensor([ 513, 1027], dtype=torch.int16)
    """
    dt = D.as_dtype(dtype)
    raw = np.frombuffer(buffer, np.uint8)
    length = raw.size
    if length <= 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % dt.itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({dt.itemsize})")
    n = (length - offset) // dt.itemsize if count < 0 else int(count)
    if offset + n * dt.itemsize > length:
        raise ValueError(f"requested buffer length ({n} * {dt.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if not raw.flags.writeable and not _READ_ONLY_WARNED[0]:
        _READ_ONLY_WARNED[0] = True
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. (retrograd keeps it read-only: in-place ops on "
                      "the tensor raise; pass a bytearray, or .clone() the tensor, to write)",
                      UserWarning, stacklevel=2)
    return _finish(_over(raw, dt, 0, (n,), (1,)) if offset == 0 else
                   np.ndarray((n,), dt.np, buffer=raw, offset=offset), requires_grad, None)


@public(method=False)
def from_file(filename: str, shared: bool | None = None, size: int = 0, *,
              dtype: D.dtype | None = None, layout: layout | None = None,
              device: DeviceLike | None = None, pin_memory: bool = False) -> Tensor:
    """A 1-D tensor of ``size`` elements mapped from a file: with ``shared=True`` writes go
    to the file, otherwise they stay private to the tensor.

    Example:
        >>> import os, tempfile, retrograd as torch
        >>> path = os.path.join(tempfile.mkdtemp(), "t.bin")
        >>> torch.arange(3.0).numpy().tofile(path)
        >>> torch.from_file(path, size=3)
        tensor([0., 1., 2.])
    """
    check_pin_memory(pin_memory)
    dt = D.as_dtype(dtype) if dtype is not None else D.DEFAULTS.float
    size = int(size)
    if size == 0:
        return _finish(np.zeros(0, dt.np), False, device)
    import os

    have = os.path.getsize(filename) if os.path.exists(filename) else -1
    if have < size * dt.itemsize and not shared:
        raise RuntimeError(f"unable to mmap {size * dt.itemsize} bytes from file <{filename}>: "
                           f"Cannot allocate memory (12) (the file holds {max(have, 0)} bytes: "
                           "pass a smaller size, or shared=True to extend the file)")
    mode = "r+" if shared else "c"
    if have < size * dt.itemsize:
        with open(filename, "ab") as f:
            f.truncate(size * dt.itemsize)
    return _finish(np.memmap(filename, dt.np, mode=mode, shape=(size,)), False, device)
