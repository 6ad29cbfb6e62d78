"""PyTorch's zip checkpoint format: reading it through a restricted unpickler, writing it.

Example:
    >>> import io
    >>> import retrograd as torch
    >>> from retrograd._serialization.zip_checkpoint import read_zip, write_zip
    >>> buf = io.BytesIO()
    >>> write_zip({'w': torch.ones(2)}, buf)
    >>> _ = buf.seek(0)
    >>> read_zip(buf, None)
    {'w': tensor([1., 1.])}
"""

from __future__ import annotations

import _codecs
import collections
import io
import pickle
import struct
import sys
import zipfile
from typing import Any

import numpy as np

from .._core import dtype as D
from .._core.device import check_map_location, device
from .._core.size import Size
from .._tensor.tensor import Tensor, _make
from ..nn import Parameter
from .checkpoint_file import EOFRuntimeError, UnpicklingRuntimeError
from .zip_records import MINIZ_HINT, check_method, read_record

__all__ = ["read_zip", "write_zip", "WeightsUnpickler", "Refused", "map_storage", "unpickle"]

# Note [PyTorch zip checkpoints]
# ``torch.save`` writes a zip archive (entries stored, not compressed) under one folder
# ``<name>/``: ``data.pkl`` (a protocol-2 pickle of the object), ``data/<key>`` (each
# storage's raw bytes, little-endian), ``byteorder`` and ``version``. In ``data.pkl`` a
# tensor is ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
# requires_grad, OrderedDict())`` and a storage is a persistent id ``('storage',
# torch.FloatStorage, key, location, numel)``; a Parameter wraps its tensor in
# ``torch._utils._rebuild_parameter``. Unpickling runs whatever the file names, so the
# reader is PyTorch's ``weights_only`` mode and nothing else: ``find_class`` returns
# retrograd's own stand-ins for exactly the globals PyTorch's allowlist holds, and any
# other name raises ``pickle.UnpicklingError`` before anything is called. Each storage is
# read once into one NumPy buffer and every tensor over it is a strided view of that
# buffer, so tensors (and views) that shared memory when saved share it when loaded.
# The writer emits the same opcodes, naming torch's globals by module and name
# (torch is never imported), so ``torch.load(weights_only=True)`` reads it.

_BY_NAME = {d.name: d for d in D.ALL}
_STORAGE_NAMES = {
    "FloatStorage": D.float32, "DoubleStorage": D.float64, "HalfStorage": D.float16,
    "BFloat16Storage": D.bfloat16, "LongStorage": D.int64, "IntStorage": D.int32,
    "ShortStorage": D.int16, "CharStorage": D.int8, "ByteStorage": D.uint8,
    "BoolStorage": D.bool,
}
_STORAGE_OF = {d.name: n for n, d in _STORAGE_NAMES.items()}
_FIX = ("retrograd.load reads only what PyTorch's weights_only=True loader reads "
        "(tensors, parameters, dtypes, sizes, numbers, strings and containers); "
        "re-save the object as a state dict of tensors (model.state_dict()) to load it")


class Refused(pickle.UnpicklingError):
    """The file names something outside PyTorch's ``weights_only`` allowlist (as opposed
    to a damaged pickle, which loading reports as a ``RuntimeError``)."""


class FromUser(Exception):
    """An exception raised by the caller's ``map_location``: passed on unchanged."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc


class _StorageType:
    """Stand-in for ``torch.FloatStorage`` and friends: only carries a dtype."""

    def __init__(self, name: str, dtype) -> None:
        self.name = name
        self.dtype = dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None) -> Tensor:
    if not isinstance(storage, np.ndarray):
        raise pickle.UnpicklingError(f"a tensor's storage is {type(storage).__name__}, "
                                     "not a storage: the file is corrupted")
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = int(storage_offset)
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size + stride):
        raise pickle.UnpicklingError(f"bad tensor geometry size={size} stride={stride} "
                                     f"offset={offset}: the file is corrupted")
    if all(size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.size:
            raise pickle.UnpicklingError(
                f"a tensor of size {size} (stride {stride}, offset {offset}) reaches past "
                f"its storage of {storage.size} elements: the file is corrupted")
    elif offset > storage.size:
        offset = storage.size
    item = storage.itemsize
    # a view whose .base is the storage array, so saving finds the storage again
    arr = np.ndarray(size, storage.dtype, buffer=storage, offset=offset * item,
                     strides=tuple(s * item for s in stride))
    t = _make(arr)
    if requires_grad:
        if not t.is_floating_point():
            raise pickle.UnpicklingError("a tensor of an integer dtype requires grad: the "
                                         "file is corrupted")
        t._rg = True
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None) -> Tensor:

    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("a Parameter wraps something that is not a tensor: the "
                                     "file is corrupted")
    if state:
        raise Refused(f"Weights only load failed. a Parameter carries extra "
                                     f"attributes {sorted(state)!r}; {_FIX}")
    p = Parameter(data, requires_grad=bool(requires_grad))
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    t = func(*args)
    if new_type is _PARAMETER and not getattr(type(t), "_is_param", False):
        return _rebuild_parameter(t, t.requires_grad)
    if state:
        raise Refused(f"Weights only load failed. a tensor carries extra "
                                     f"attributes; {_FIX}")
    return t


_PARAMETER = object()  # stand-in for torch.nn.parameter.Parameter (a type marker)


def _device(*args):

    try:
        return device(*args)
    except RuntimeError:
        return args[0] if len(args) == 1 else f"{args[0]}:{args[1]}"


def _allowed() -> dict[str, Any]:
    rc: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": _PARAMETER,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
        "_codecs.encode": _codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.storage.UntypedStorage": _StorageType("UntypedStorage", D.uint8),
    }
    for d in D.ALL:
        rc[f"torch.{d.name}"] = d
    for n, d in _STORAGE_NAMES.items():
        rc[f"torch.{n}"] = _StorageType(n, d)
    return rc


_ALLOWED = _allowed()


class WeightsUnpickler(pickle.Unpickler):
    """PyTorch's ``weights_only`` unpickler: globals from the allowlist, nothing else."""

    def __init__(self, file, storages=None) -> None:
        super().__init__(file, encoding="utf-8")
        self._storages = storages  # None: the pickle may name no storages

    def find_class(self, module: str, name: str):
        if module == "__builtin__":  # protocol-2 pickles name builtins as Python 2 did
            module = "builtins"
        obj = _ALLOWED.get(f"{module}.{name}")
        if obj is None:
            raise Refused(
                f"Weights only load failed. WeightsUnpickler error: Unsupported global: "
                f"GLOBAL {module}.{name} was not an allowed global by default. "
                f"(retrograd never imports or calls names from a checkpoint: {_FIX})")
        return obj

    def persistent_load(self, pid):
        # the zip format's ids are ('storage', type, key, location, numel); the legacy
        # format adds view_metadata: None, or (view_key, offset, numel) for a storage
        # that is a slice of another (files from PyTorch before 1.0)
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and self._storages is not None):
            raise pickle.UnpicklingError(f"unknown persistent id {str(pid)[:60]}: the file "
                                         "is corrupted")
        arr = self._storages(pid[1].dtype, str(pid[2]), str(pid[3]), pid[4])
        view = pid[5] if len(pid) == 6 else None
        if view is None:
            return arr
        if not (isinstance(view, tuple) and len(view) == 3):
            raise pickle.UnpicklingError(f"bad storage view {str(view)[:60]}: the file is "
                                         "corrupted")
        offset, numel = int(view[1]), int(view[2])
        if offset < 0 or numel < 0 or offset + numel > arr.size:
            raise pickle.UnpicklingError(f"a storage view [{offset}, {offset + numel}) lies "
                                         f"outside its storage of {arr.size} elements: the "
                                         "file is corrupted")
        return arr[offset:offset + numel]


def map_storage(arr: np.ndarray, location: str, map_location) -> np.ndarray:
    """Apply ``map_location`` to one storage, as ``torch.load`` does (Note [Storage
    locations])."""
    # Note [Storage locations]
    # A storage carries the device it was saved from ('cpu', 'cuda:0', ...). retrograd
    # has only the CPU, so a storage saved from any device loads there: PyTorch would
    # raise on a machine without CUDA, but a CUDA-trained checkpoint is exactly what a
    # CPU user wants to read. Only an explicit request for another device (a string, a
    # device, or a dict entry naming one) is refused with the 'CPU only' error. A
    # callable gets ``(storage, location)``, the storage standing in as a flat tensor;
    # what it returns (a tensor, or None for "keep it") becomes the storage.

    if map_location is None:
        return arr
    if isinstance(map_location, dict):
        if location in map_location:
            target = map_location[location]
            check_map_location(target.decode("ascii") if isinstance(target, bytes) else target)
        return arr
    if isinstance(map_location, bytes):
        map_location = map_location.decode("ascii")
    if isinstance(map_location, str):
        check_map_location(map_location)
        return arr
    if isinstance(map_location, device) or not callable(map_location):
        check_map_location(map_location)
        return arr
    try:
        result = map_location(_make(arr), location)
    except Exception as exc:
        raise FromUser(exc) from None
    if result is None:
        return arr
    if not isinstance(result, Tensor) or result.numel() != arr.size:
        raise FromUser(TypeError(
            f"map_location returned {type(result).__name__}"
            f"{f' of {result.numel()} elements' if isinstance(result, Tensor) else ''} for a "
            f"storage of {arr.size} elements; it must return the storage it was given (a "
            "flat tensor of the same size), a copy of it, or None"))
    return result._data.reshape(-1)


def read_zip(fh, map_location, mapped=None) -> Any:
    """Load a ``torch.save`` zip archive from the seekable binary file ``fh`` (with
    ``mapped``, the file mapped copy-on-write, Note [mmap loading]), reading each
    storage once into its final array (Note [Reading zip records] in zip_records.py)."""
    # Note [mmap loading]
    # ``torch.load(path, mmap=True)`` maps the file and builds each storage over its
    # bytes instead of reading them: pages are read when touched, and the mapping is
    # private (MAP_PRIVATE, PyTorch's default mmap option), so a write to a loaded
    # tensor changes that process's copy of the page and never the file. Python's
    # ``mmap.ACCESS_COPY`` is that mapping. torch.save stores entries uncompressed and
    # 64-byte aligned; a compressed entry (another zip writer) is read into memory.
    zf = _open_archive(fh)
    end = fh.seek(0, io.SEEK_END)
    names = set(zf.namelist())
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise RuntimeError(f"PytorchStreamReader failed locating file data.pkl: file not "
                           f"found. {MINIZ_HINT} The zip archive has "
                           f"{'no' if not pkl else len(pkl)} <name>/data.pkl records, where "
                           "torch.save writes one: it is not a torch.save checkpoint, or it "
                           "was repacked or damaged (save it again with torch.save)")
    prefix = pkl[0][:-len("data.pkl")]
    byteorder = _byteorder(zf, prefix + "byteorder", names)
    order = "<" if byteorder == "little" else ">"
    swap = byteorder != sys.byteorder
    loaded: dict[str, np.ndarray] = {}

    def storage(dtype, key: str, location: str, numel) -> np.ndarray:
        if key not in loaded:
            raw = _storage_record(zf, fh, end, mapped, prefix, names, key, dtype, numel)
            arr = raw.view(np.dtype(dtype.np).newbyteorder(order))
            if swap:
                arr = (arr.astype(arr.dtype.newbyteorder("=")) if mapped is not None
                       else arr.byteswap(inplace=True).view(arr.dtype.newbyteorder("=")))
            loaded[key] = map_storage(arr, location, map_location)
        arr = loaded[key]
        return arr if arr.dtype == dtype.np else arr.view(dtype.np)

    info = zf.getinfo(pkl[0])
    check_method(info)
    with zf.open(info) as f:  # read as the pickle asks, never more
        return unpickle(f, storage)


def _open_archive(fh) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError,
            struct.error) as e:
        raise RuntimeError(
            f"PytorchStreamReader failed reading zip archive: failed finding central "
            f"directory. {MINIZ_HINT} ({type(e).__name__}: {e}.) The file starts like a zip "
            "but its directory, which a zip keeps at its end, is missing or damaged: the file "
            "was cut off while being saved or copied; save or copy it again") from None


def _byteorder(zf: zipfile.ZipFile, name: str, names) -> str:
    if name not in names:
        return "little"
    info = zf.getinfo(name)
    check_method(info)
    if info.file_size > 16:
        raise RuntimeError(f"the byteorder record holds {info.file_size} bytes, not 'little' "
                           "or 'big': the file is corrupted")
    text = zf.read(name).decode("ascii", "replace").strip()
    if text not in ("little", "big"):
        raise RuntimeError(f"unknown byteorder {text[:20]!r} in the archive")
    return text


def _storage_record(zf, fh, end: int, mapped, prefix: str, names, key: str, dtype,
                    numel) -> np.ndarray:
    """Storage ``key``'s bytes, once its record is checked against the ``numel``
    elements of ``dtype`` the pickle declares (PyTorch's check and wording)."""
    if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
        raise RuntimeError(f"storage {key!r} declares {str(numel)[:40]} elements, not a "
                           "count: the file is corrupted")
    nbytes = numel * np.dtype(dtype.np).itemsize
    entry = f"{prefix}data/{key}"
    if entry not in names:
        raise RuntimeError(f"PytorchStreamReader failed locating file data/{key}: file not "
                           f"found. {MINIZ_HINT} Storage {key!r} is missing from the archive: "
                           "the file is corrupted (save it again)")
    info = zf.getinfo(entry)
    if info.file_size != nbytes:
        raise RuntimeError(
            f"record size ({info.file_size} bytes) does not match expected size ({nbytes} "
            f"bytes = {nbytes} elements * 1 bytes/element) for dtype Byte. The pickle "
            f"declares storage {key!r} as {numel} {dtype.name} elements, and its record "
            f"{entry!r} holds {info.file_size} bytes: the file is corrupted or was edited "
            "after saving (nothing was read; save it again)")
    return read_record(zf, fh, info, end, mapped)


def unpickle(f, storages=None) -> Any:
    """One pickle from ``f`` through the weights-only unpickler; a refused global raises
    ``pickle.UnpicklingError`` (``Refused``), a damaged pickle an error of PyTorch's type
    that is also a ``RuntimeError`` (Note [Errors for files that are no checkpoint])."""
    try:
        return WeightsUnpickler(f, storages).load()
    except (Refused, FromUser, RuntimeError):
        raise
    except EOFError:
        raise EOFRuntimeError("Ran out of input: the checkpoint is truncated (a pickle ends "
                              "early): it was cut off while being saved or copied; save or "
                              "copy it again") from None
    except (pickle.UnpicklingError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, MemoryError, zipfile.BadZipFile,
            RecursionError, struct.error) as e:
        raise UnpicklingRuntimeError(
            f"the checkpoint is corrupted ({type(e).__name__}: {e}): its pickle, which "
            "describes the saved objects, is damaged or cut off; save or copy the file "
            "again") from None


# ----------------------------------------------------------------------------------
# writing


class _Global:
    """A name to write as a pickle GLOBAL (``module``, ``name``) without importing it."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


class _Reduce:
    """An object to write as ``func(*args)``."""

    def __init__(self, func: _Global, args: tuple) -> None:
        self.func, self.args = func, args


class _StorageRef:
    def __init__(self, key: str, dtype, numel: int) -> None:
        self.key, self.dtype, self.numel = key, dtype, numel


_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_ODICT = _Global("collections", "OrderedDict")


class _Pickler(pickle._Pickler):  # the Python pickler: it lets us write GLOBAL ourselves
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, storages) -> None:
        super().__init__(file, protocol=2)
        self._storages = storages
        self._globals: dict[tuple[str, str], None] = {}

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", _STORAGE_OF[obj.dtype.name]), obj.key, "cpu",
                    obj.numel)
        return None

    def _save_global(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")

    dispatch[_Global] = _save_global

    def _save_reduce_obj(self, obj: _Reduce) -> None:
        self.save(obj.func)
        self.save(obj.args)
        self.write(pickle.REDUCE)
        self.memoize(obj)

    dispatch[_Reduce] = _save_reduce_obj


_byte_bounds = getattr(np.lib, "array_utils", np).byte_bounds  # moved in NumPy 2


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class _Storages:
    """Groups saved tensors by the memory they view (Note [Saving storages])."""

    # Note [Saving storages]
    # Tensors whose arrays view one root NumPy array with the same dtype, nonnegative
    # strides and element-aligned offsets are written over one storage (the span of the
    # root they cover), so torch.load gives them one storage back. Anything else (a
    # negative stride, a dtype reinterpretation) is written as its own contiguous copy.

    def __init__(self) -> None:
        self.groups: dict[tuple[int, str], list] = {}
        self.keep: list = []
        self.placed: dict[int, tuple] = {}  # id(tensor) -> (group, array written)
        self.refs: dict[str, _StorageRef] = {}
        self.active: set[int] = set()  # containers being converted (cycle check)

    def add(self, arr: np.ndarray):
        self.keep.append(arr)
        item = arr.itemsize
        root = _root(arr)
        if arr.size and (any(s < 0 or s % item for s in arr.strides)
                         or not root.flags.c_contiguous):
            root = arr = np.ascontiguousarray(arr)
            self.keep.append(arr)
        key = (id(root), arr.dtype.str)
        self.groups.setdefault(key, [root, []])[1].append(arr)
        return key, arr

    def layout(self):
        """``{group: (key, span bytes, lo address)}`` for writing."""
        out = {}
        for n, (gk, (root, arrs)) in enumerate(self.groups.items()):
            lo_root, hi_root = _byte_bounds(root)
            bounds = [_byte_bounds(a) for a in arrs if a.size]
            lo = min((b[0] for b in bounds), default=lo_root)
            hi = max((b[1] for b in bounds), default=lo_root)
            item = arrs[0].itemsize
            if any((b[0] - lo) % item for b in bounds):
                raise AssertionError("unaligned views")  # add() copies these
            raw = root.reshape(-1).view(np.uint8)[lo - lo_root:hi - lo_root]
            out[gk] = (str(n), raw, lo, item)
        return out


def _tensor_arrays(obj, storages: _Storages, seen: set) -> None:
    """Collect every tensor array reachable from ``obj`` (first pass)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            if id(o) not in seen:
                seen.add(id(o))
                storages.placed[id(o)] = storages.add(o._data)
        elif isinstance(o, (dict, list, tuple, set, frozenset)) and id(o) not in seen:
            seen.add(id(o))  # a cycle is reported by _convert
            if isinstance(o, dict):
                stack.extend(o.keys())
                stack.extend(o.values())
            else:
                stack.extend(o)


def _convert(obj, storages: _Storages, layout, made: dict, where: str = "root"):
    """Replace tensors by ``_Reduce`` rebuild calls, keeping object identity."""
    if isinstance(obj, (dict, list, tuple, set)):
        if id(obj) in storages.active:
            raise ValueError(f"retrograd.save: {where} contains itself (a reference cycle); "
                             "torch.load(weights_only=True) cannot rebuild cycles")
        storages.active.add(id(obj))
        try:
            return _convert_one(obj, storages, layout, made, where)
        finally:
            storages.active.discard(id(obj))
    return _convert_one(obj, storages, layout, made, where)


def _convert_one(obj, storages: _Storages, layout, made: dict, where: str):
    if isinstance(obj, Tensor):
        if id(obj) in made:
            return made[id(obj)]
        gk, arr = storages.placed[id(obj)]
        item = arr.itemsize
        key, raw, lo, _ = layout[gk]
        dt = D.FROM_NP[arr.dtype.newbyteorder("=")]
        offset = (_byte_bounds(arr)[0] - lo) // item if arr.size else 0
        stride = tuple(s // item for s in arr.strides)
        ref = storages.refs.setdefault(key, _StorageRef(key, dt, raw.nbytes // item))
        is_param = bool(getattr(type(obj), "_is_param", False))
        rebuilt = _Reduce(_REBUILD, (ref, offset, tuple(arr.shape), stride,
                                     bool(obj.requires_grad) and not is_param,
                                     _Reduce(_ODICT, ())))
        if is_param:
            rebuilt = _Reduce(_REBUILD_PARAM, (rebuilt, bool(obj.requires_grad),
                                               _Reduce(_ODICT, ())))
        made[id(obj)] = rebuilt
        return rebuilt
    if isinstance(obj, D.dtype):
        return _Global("torch", obj.name)
    if isinstance(obj, Size):
        return _Reduce(_Global("torch", "Size"), (tuple(int(s) for s in obj),))
    if isinstance(obj, collections.OrderedDict):
        return _Reduce(_ODICT, ([[_convert(k, storages, layout, made, where),
                                  _convert(v, storages, layout, made, f"{where}[{k!r}]")]
                                 for k, v in obj.items()],))
    if isinstance(obj, dict):
        return {_convert(k, storages, layout, made, where):
                _convert(v, storages, layout, made, f"{where}[{k!r}]") for k, v in obj.items()}
    if isinstance(obj, list):
        return [_convert(v, storages, layout, made, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return tuple(_convert(v, storages, layout, made, f"{where}[{i}]")
                     for i, v in enumerate(obj))
    if isinstance(obj, (set, frozenset)) and type(obj) is set:
        return {_convert(v, storages, layout, made, where) for v in obj}
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes, bytearray)):
        return obj
    if isinstance(obj, np.generic) and isinstance(obj.item(), (bool, int, float)):
        return obj.item()
    hint = (" Save model.state_dict() and rebuild the model in code instead."
            if hasattr(obj, "state_dict") else "")
    raise TypeError(f"retrograd.save can't save an object of type {type(obj).__name__} at "
                    f"{where}: torch.load(weights_only=True) could not read it back; the "
                    f"format holds tensors, dtypes, sizes, numbers, strings, bytes, None and "
                    f"dicts/lists/tuples/sets of them (a NumPy array: save "
                    f"torch.from_numpy(array)).{hint}")


def write_zip(obj, f) -> None:
    """Write ``obj`` to the binary file ``f`` in ``torch.save``'s zip format."""
    storages = _Storages()
    _tensor_arrays(obj, storages, set())
    layout = storages.layout()
    try:
        tree = _convert(obj, storages, layout, {})
    except RecursionError:
        raise ValueError("retrograd.save: the object nests too deeply to save") from None
    pkl = io.BytesIO()
    _Pickler(pkl, storages).dump(tree)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pkl.getvalue())
        zf.writestr("archive/byteorder", sys.byteorder)  # raw bytes are native
        for key, raw, _, _ in layout.values():
            if key in storages.refs:
                zf.writestr(f"archive/data/{key}", raw.tobytes())
        zf.writestr("archive/version", "3\n")
