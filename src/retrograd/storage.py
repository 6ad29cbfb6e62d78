"""Storages: the memory a base tensor owns, as PyTorch's ``UntypedStorage`` (bytes) and
``TypedStorage`` (elements of one dtype, deprecated), with the legacy ``FloatStorage``
family.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(4.0)
    >>> s = x[1:].untyped_storage()
    >>> s.nbytes(), s.data_ptr() == x.untyped_storage().data_ptr()
    (16, True)
"""

from __future__ import annotations

import mmap
import warnings

import numpy as np

from ._core import dtype as D

__all__ = ["UntypedStorage", "TypedStorage", "is_storage", "root_array", "byte_view",
           "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
           "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage"]

# Note [Storages are root arrays]
# A retrograd tensor holds an ndarray; a view's ndarray is a NumPy view whose ``.base``
# chain ends at the ndarray that owns the memory (``root_array``). That root is the
# storage: ``untyped_storage()`` wraps it as a flat uint8 array over the same bytes
# (``byte_view``), so storages of a tensor and of all its views report one data_ptr and
# one size, and writes through either are seen by both. A storage object is a handle,
# made afresh on each call as in PyTorch (compare ``data_ptr()``, never identity). A
# storage cannot grow in place: NumPy memory has a fixed size, and the other arrays over
# it would keep the old block, so a resize that needs more room gives the tensor a new
# root only where nothing else uses the old one (``_functions/storage_methods.py``).


def root_array(arr: np.ndarray) -> np.ndarray:
    """The ndarray that owns ``arr``'s memory (Note [Storages are root arrays]).

    Example:
        >>> import numpy as np
        >>> a = np.zeros(4); root_array(a[1:].reshape(3, 1)) is a
        True
    """
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def byte_view(root: np.ndarray) -> np.ndarray:
    """The bytes of a root array as a flat uint8 array over the same memory.

    Example:
        >>> import numpy as np
        >>> byte_view(np.ones(2, np.int16)).tolist()
        [1, 0, 1, 0]
    """
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8)
    if root.flags.f_contiguous:
        return root.T.reshape(-1).view(np.uint8)
    raise RuntimeError("this tensor's memory is not one contiguous block (it was made by "
                       "numpy.lib.stride_tricks over foreign memory), so it has no storage: "
                       "use a .clone() of it")


def _warn_typed_storage_removal(stacklevel: int = 3) -> None:
    # PyTorch warns once per process (every time after torch's warn-always switch)
    if _WARNED[0]:
        return
    _WARNED[0] = True
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter "
                  "to you if you are using storages directly.  To access UntypedStorage "
                  "directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning, stacklevel=stacklevel)


_WARNED = [False]


def _shared_bytes(n: int) -> np.ndarray:
    """``n`` zero bytes in an anonymous MAP_SHARED mapping: processes forked after this
    call see each other's writes (Note [Shared memory])."""
    buf = mmap.mmap(-1, max(n, 1), flags=mmap.MAP_SHARED)
    return np.frombuffer(buf, np.uint8, count=n)


def is_shared_array(root: np.ndarray) -> bool:
    """Whether a root array lives in shared memory (an mmap'd block)."""
    if isinstance(root, np.memmap):  # from_file maps the file, as PyTorch's mapped storage
        return True
    base = root.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if not isinstance(base, memoryview) else base.obj
    return isinstance(base, mmap.mmap) or isinstance(root, np.memmap)


def _listing(values: list, tail: str) -> str:
    """PyTorch's storage repr: one value a line, then the kind and size."""
    return " " + "\n ".join(str(v) for v in values) + "\n" + tail


class UntypedStorage:
    """The bytes of a tensor's memory.

    ``UntypedStorage(n)`` makes ``n`` zero bytes, ``UntypedStorage(seq)`` the bytes of a
    sequence of ints; ``tensor.untyped_storage()`` the memory of a tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.UntypedStorage([1, 2, 3]).tolist()
        [1, 2, 3]
    """

    __slots__ = ("_bytes",)

    def __init__(self, *args, device=None) -> None:
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"retrograd storages live on the CPU, not {device}")
        if not args:
            data = np.zeros(0, np.uint8)
        elif len(args) == 1 and isinstance(args[0], int):
            data = np.zeros(args[0], np.uint8)
        elif len(args) == 1:
            data = np.array(list(args[0]), np.uint8)
        else:
            raise TypeError("UntypedStorage() takes a size or a sequence of ints")
        self._bytes = data

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> UntypedStorage:
        s = cls.__new__(cls)
        s._bytes = byte_view(root_array(arr))
        return s

    def nbytes(self) -> int:
        return int(self._bytes.size)

    size = nbytes

    def __len__(self) -> int:
        return int(self._bytes.size)

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0]

    @property
    def device(self):
        from ._core.device import CPU

        return CPU

    is_cuda = False

    def is_pinned(self, device=None) -> bool:
        return False

    def tolist(self) -> list:
        return self._bytes.tolist()

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            s = UntypedStorage.__new__(UntypedStorage)
            if idx.step not in (None, 1):
                raise RuntimeError("slices are only supported in UntypedStorage.__getitem__ "
                                   "with step 1")
            s._bytes = self._bytes[idx]
            return s
        return int(self._bytes[idx])

    def __setitem__(self, idx, value) -> None:
        self._bytes[idx] = value

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source, non_blocking=None) -> UntypedStorage:
        src = source.untyped() if isinstance(source, TypedStorage) else source
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch: copy_ from a storage of {src.nbytes()} bytes "
                               f"into one of {self.nbytes()} bytes (the sizes must match)")
        self._bytes[...] = src._bytes
        return self

    def clone(self) -> UntypedStorage:
        s = UntypedStorage.__new__(UntypedStorage)
        s._bytes = self._bytes.copy()
        return s

    def cpu(self) -> UntypedStorage:
        return self

    def untyped(self) -> UntypedStorage:
        return self

    def is_shared(self) -> bool:
        return is_shared_array(root_array(self._bytes))

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        return _listing(self.tolist(), f"[torch.storage.UntypedStorage(device=cpu) of size "
                                       f"{self.nbytes()}]")


class TypedStorage:
    """A storage seen as elements of ``dtype`` (PyTorch deprecates it; it warns once).

    Example:
        >>> import warnings, retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.arange(3.0).storage().tolist()
        [0.0, 1.0, 2.0]
    """

    __slots__ = ("_untyped_storage", "dtype")
    _fixed_dtype: D.dtype | None = None

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None,
                 _internal: bool = False) -> None:
        if not _internal:
            _warn_typed_storage_removal()
        dtype = self._fixed_dtype or dtype or D.get_default_dtype()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage.__init__ received an invalid combination of "
                                   "arguments: wrap_storage cannot come with a size or data")
            self._untyped_storage, self.dtype = wrap_storage.untyped(), dtype
            return
        if not args:
            values = np.zeros(0, dtype.np)
        elif len(args) == 1 and isinstance(args[0], int):
            values = np.zeros(args[0], dtype.np)
        else:
            values = np.array(list(args[0])).astype(dtype.np)
        self._untyped_storage = UntypedStorage._wrap(values)
        self.dtype = dtype

    def _items(self) -> np.ndarray:
        b = self._untyped_storage._bytes
        return b[: b.size - b.size % self.dtype.itemsize].view(self.dtype.np)

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    is_cuda = False

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def tolist(self) -> list:
        items = self._items()
        if self.dtype == D.bfloat16:
            items = items.astype(np.float32)
        return items.tolist()

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            b = self._untyped_storage._bytes
            start, stop, step = idx.indices(self.size())
            if step != 1:
                raise RuntimeError("slices are only supported in TypedStorage.__getitem__ "
                                   "with step 1")
            s = type(self).__new__(type(self))
            n = self.dtype.itemsize
            s._untyped_storage = UntypedStorage.__new__(UntypedStorage)
            s._untyped_storage._bytes = b[start * n: max(start, stop) * n]
            s.dtype = self.dtype
            return s
        value = self._items()[idx]
        return float(value) if self.dtype == D.bfloat16 else value.item()

    def __setitem__(self, idx, value) -> None:
        self._items()[idx] = value

    def fill_(self, value) -> TypedStorage:
        self._items()[...] = value
        return self

    def copy_(self, source, non_blocking=None) -> TypedStorage:
        self._untyped_storage.copy_(source)
        return self

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def cpu(self) -> TypedStorage:
        return self

    def pickle_storage_type(self) -> str:
        return _LEGACY_NAME[self.dtype]

    def type(self, dtype=None):
        if dtype is None:
            return f"torch.{_LEGACY_NAME[self.dtype]}"
        raise RuntimeError("TypedStorage.type(dtype) is not supported: make a tensor over "
                           "the storage and convert it with .to(dtype)")

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self) -> str:
        return _listing(self.tolist(), f"[torch.storage.TypedStorage(dtype=torch."
                                       f"{self.dtype.name}, device=cpu) of size {self.size()}]")


class _LegacyStorageMeta(type):
    """``isinstance(s, FloatStorage)`` holds for every TypedStorage of float32."""

    def __instancecheck__(cls, instance) -> bool:
        if cls._fixed_dtype is None:
            return super().__instancecheck__(instance)
        return isinstance(instance, TypedStorage) and instance.dtype == cls._fixed_dtype


def _legacy(name: str, dtype: D.dtype) -> type:
    doc = (f"The legacy typed storage of {dtype.name} elements "
           f"(``{name}(n)``, ``{name}(seq)``): a TypedStorage with that dtype.")
    return _LegacyStorageMeta(name, (TypedStorage,), {"__slots__": (), "_fixed_dtype": dtype,
                                                      "__doc__": doc, "__module__": __name__})


FloatStorage = _legacy("FloatStorage", D.float32)
DoubleStorage = _legacy("DoubleStorage", D.float64)
HalfStorage = _legacy("HalfStorage", D.float16)
BFloat16Storage = _legacy("BFloat16Storage", D.bfloat16)
LongStorage = _legacy("LongStorage", D.int64)
IntStorage = _legacy("IntStorage", D.int32)
ShortStorage = _legacy("ShortStorage", D.int16)
CharStorage = _legacy("CharStorage", D.int8)
ByteStorage = _legacy("ByteStorage", D.uint8)
BoolStorage = _legacy("BoolStorage", D.bool)
LEGACY = {c._fixed_dtype: c for c in (FloatStorage, DoubleStorage, HalfStorage,
                                      BFloat16Storage, LongStorage, IntStorage, ShortStorage,
                                      CharStorage, ByteStorage, BoolStorage)}
_LEGACY_NAME = {d: c.__name__ for d, c in LEGACY.items()}


def is_storage(obj: object) -> bool:
    """Whether ``obj`` is a storage (untyped or typed).

    Example:
        >>> import retrograd as torch
        >>> torch.is_storage(torch.ones(1).untyped_storage()), torch.is_storage(torch.ones(1))
        (True, False)
    """
    return isinstance(obj, (UntypedStorage, TypedStorage))
