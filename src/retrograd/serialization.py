"""``retrograd.save`` / ``retrograd.load``: PyTorch's checkpoint formats, loaded without
running anything the file names.

Example:
    >>> import io
    >>> import retrograd as torch
    >>> buf = io.BytesIO()
    >>> torch.save({'w': torch.ones(2), 'epoch': 3, 'name': 'run1'}, buf)
    >>> _ = buf.seek(0)
    >>> torch.load(buf)
    {'w': tensor([1., 1.]), 'epoch': 3, 'name': 'run1'}
"""

from __future__ import annotations

import base64
import collections
import io
import json
import math
import os
import pickle
import struct
import sys
import warnings
import zipfile
import zlib
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ._core import dtype as D
from ._core.device import device
from ._core.size import Size
from ._serialization.atomic_write import _TMP_SUFFIX, _remove_stale_temps, atomic_write  # noqa: F401
from ._serialization.checkpoint_file import (
    V1_MAGIC,
    CheckpointFile,
    EOFRuntimeError,
    UnpicklingRuntimeError,
    describe_foreign,
)
from ._serialization.legacy_checkpoint import read_legacy
from ._serialization.zip_checkpoint import FromUser, Refused, read_zip, write_zip
from ._tensor.tensor import Tensor, _make

__all__ = ["save", "load"]

# Note [Checkpoint format]
# retrograd's previous own format, which ``load`` still reads (with a DeprecationWarning)
# and ``save`` no longer writes (it writes PyTorch's zip format, Note [PyTorch zip
# checkpoints]). It held data only, never a pickle:
#
#   offset 0   8 bytes  magic b"\x89RGRD\r\n\x1a" (PNG-style: catches text-mode mangling)
#          8   4        format version (uint32, little-endian)
#         12   4        CRC-32 of the header
#         16   8        header length H (uint64)
#         24   8        data length N (uint64)
#         32   H        header: UTF-8 JSON (the structure, and a table of arrays)
#                       zero padding to a multiple of 64
#              N        data: raw little-endian array bytes, each at a 64-aligned offset
#              8        end marker b"RGRDEND\x00"
#
# The header is {"format": ..., "version": 1, "arrays": [...], "root": value}. Each
# array entry has dtype, shape, offset, nbytes, crc32 (of its bytes), kind ("tensor"
# or "ndarray"), requires_grad and parameter. A value is JSON null/bool/int/float/
# string/array (a list) or an object with exactly one "$tag" key: $tensor/$ndarray
# (an index into the array table; a tensor saved twice is stored once and loads as
# one object), $tuple, $dict/$odict (a list of [key, value] pairs, so keys keep their
# types), $float ("inf", "-inf", "nan"), $bytes (base64), $size, $dtype. Any other
# tag, a wrong length, a bad checksum or an out-of-range offset is an error that says
# what is wrong. Writing to a path goes to a temporary file in the same directory that
# replaces the target only once complete (os.replace), so a crash mid-save leaves the
# old file intact.

MAGIC = V1_MAGIC
END = b"RGRDEND\x00"
VERSION = 1
_ALIGN = 64
_PRE = struct.Struct("<8sIIQQ")
_MAX_HEADER = 1 << 30
_MAX_NDIM = 64  # NumPy's (and PyTorch's) limit
_MAX_BYTES = (1 << 63) - 1  # the most bytes one array can span, even with a zero dim

_DTYPES = {d.name: d for d in D.ALL}
_TAGS = ("$tensor", "$ndarray", "$tuple", "$dict", "$odict", "$float", "$bytes", "$size",
         "$dtype")


def _pad(n: int) -> int:
    return (-n) % _ALIGN


class _Encoder:
    """Turns a Python object into the header value and a list of arrays to write."""

    def __init__(self) -> None:
        self.arrays: list[dict] = []
        self.blobs: list[np.ndarray] = []
        self.seen: dict[int, int] = {}
        self.keep: list = []  # keeps saved objects alive, so ids stay unique
        self.offset = 0
        self.active: set[int] = set()

    def _array(self, obj, arr: np.ndarray, kind: str) -> dict:
        key = id(obj)
        if key in self.seen:
            return {f"${kind}": self.seen[key]}
        if arr.dtype not in D.FROM_NP:
            raise TypeError(f"can't save a {kind} of dtype {arr.dtype}: the format stores "
                            f"{', '.join(_DTYPES)}")
        arr = arr if arr.flags.c_contiguous else arr.copy(order="C")  # keeps 0-d shapes
        if sys.byteorder != "little" or arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        raw = arr.reshape(-1).view(np.uint8)
        entry = {"dtype": D.FROM_NP[arr.dtype.newbyteorder("=")].name,
                 "shape": list(arr.shape), "offset": self.offset, "nbytes": int(raw.nbytes),
                 "crc32": zlib.crc32(raw), "kind": kind}
        if kind == "tensor":
            entry["requires_grad"] = bool(obj._rg)
            entry["parameter"] = bool(getattr(type(obj), "_is_param", False))
        self.offset += raw.nbytes + _pad(raw.nbytes)
        index = len(self.arrays)
        self.arrays.append(entry)
        self.blobs.append(raw)
        self.seen[key] = index
        self.keep.append(obj)
        return {f"${kind}": index}

    def encode(self, obj, where: str):
        if obj is None or obj is True or obj is False:
            return obj
        if isinstance(obj, str):
            return str(obj)
        if isinstance(obj, Tensor):
            return self._array(obj, obj._data, "tensor")
        if isinstance(obj, (bool, np.bool_)):
            return bool(obj)
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            v = float(obj)
            if math.isfinite(v):
                return v
            return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        if isinstance(obj, np.ndarray):
            return self._array(obj, obj, "ndarray")
        if isinstance(obj, (bytes, bytearray)):
            return {"$bytes": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, D.dtype):
            return {"$dtype": obj.name}
        if id(obj) in self.active:
            raise ValueError(f"retrograd.save: {where} contains itself (a reference cycle); "
                             "the format stores trees of values")
        if isinstance(obj, Size):
            return {"$size": [int(s) for s in obj]}
        self.active.add(id(obj))
        try:
            if isinstance(obj, dict):
                tag = "$odict" if isinstance(obj, collections.OrderedDict) else "$dict"
                pairs = []
                for k, v in obj.items():
                    if not isinstance(k, (str, int, float, bool, tuple, type(None))):
                        raise TypeError(f"retrograd.save can't save a dict key of type "
                                        f"{type(k).__name__} at {where}: keys must be "
                                        "strings, numbers, None or tuples of them")
                    pairs.append([self.encode(k, f"{where} (a key)"),
                                  self.encode(v, f"{where}[{k!r}]")])
                return {tag: pairs}
            if isinstance(obj, list):
                return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]
            if isinstance(obj, tuple):
                return {"$tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        finally:
            self.active.discard(id(obj))
        hint = (" Save model.state_dict() and rebuild the model in code instead."
                if hasattr(obj, "state_dict") else "")
        raise TypeError(f"retrograd.save can't save an object of type {type(obj).__name__} at "
                        f"{where}: the format stores only tensors, NumPy arrays, numbers, "
                        f"strings, bytes, None and dicts/lists/tuples of them, never code."
                        f"{hint}")


def _encode_file(obj) -> tuple[bytes, list[np.ndarray], int]:
    enc = _Encoder()
    try:
        root = enc.encode(obj, "root")
    except RecursionError:
        raise ValueError("retrograd.save: the object nests too deeply to save") from None
    header = json.dumps({"format": "retrograd.save", "version": VERSION, "byteorder": "little",
                         "arrays": enc.arrays, "root": root}, allow_nan=False,
                        separators=(",", ":")).encode("utf-8")
    return header, enc.blobs, enc.offset


def _save_v1(obj, f) -> None:
    """Write ``obj`` in retrograd's previous own format (Note [Checkpoint format]); only
    the tests use it, to make files that ``load`` must keep reading."""
    _write_v1(f, *_encode_file(obj))


def _write_v1(f, header: bytes, blobs: list[np.ndarray], data_len: int) -> None:
    f.write(_PRE.pack(MAGIC, VERSION, zlib.crc32(header), len(header), data_len))
    f.write(header)
    f.write(b"\0" * _pad(_PRE.size + len(header)))
    for raw in blobs:
        f.write(memoryview(raw))
        f.write(b"\0" * _pad(raw.nbytes))
    f.write(END)


def _write(out, obj) -> None:
    write_zip(obj, out)


def save(obj: Any, f: str | os.PathLike | IO[bytes], pickle_module: Any = None,
         pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save tensors, dtypes, sizes, numbers, strings, bytes and None, in any nesting of
    dicts, lists, tuples and sets (state dicts of modules and optimizers), to a path or
    a binary file object, in PyTorch's zip checkpoint format (Note [PyTorch zip
    checkpoints] in _serialization/zip_checkpoint.py): ``torch.load(path, weights_only=True)`` reads
    it, and tensors that share memory share one storage in the file. Writing to a path
    is atomic (Note [Temporary files]). ``pickle_module``/``pickle_protocol`` are
    accepted for compatibility; the pickle is always protocol 2, as PyTorch writes.

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> path = os.path.join(tempfile.mkdtemp(), 'ckpt.pt')
        >>> torch.save({'step': 10, 'w': torch.arange(3)}, path)
        >>> torch.load(path)['w']
        tensor([0, 1, 2])
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("retrograd.save writes only the zip format "
                           "(_use_new_zipfile_serialization=True); PyTorch reads it since 1.6")
    if isinstance(f, (str, os.PathLike)):
        atomic_write(f, lambda out: _write(out, obj))
        return
    if not hasattr(f, "write"):
        raise TypeError(f"retrograd.save expects a path or a binary file object, got "
                        f"{type(f).__name__}")
    buf = io.BytesIO()
    _write(buf, obj)  # an unsavable object raises before anything reaches ``f``
    f.write(buf.getbuffer())


# ----------------------------------------------------------------------------------
# loading


class _Corrupt(RuntimeError):
    pass


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise _Corrupt(msg)


def _parse(buf) -> tuple[dict, int]:
    n = len(buf)
    _check(n >= _PRE.size, f"the file is too short ({n} bytes) to be a retrograd checkpoint "
           f"(at least {_PRE.size + len(END)} bytes); it is empty or truncated")
    magic, version, hcrc, hlen, dlen = _PRE.unpack_from(buf, 0)
    if magic != MAGIC:
        raise _Corrupt("this is not a retrograd checkpoint: "
                       + describe_foreign(bytes(buf[:16])))
    _check(version == VERSION, f"the file has format version {version}; this retrograd reads "
           f"version {VERSION} (upgrade retrograd to read it)")
    _check(hlen <= _MAX_HEADER, f"the header length field says {hlen} bytes, which is not "
           "plausible: the file is corrupted")
    data_start = _PRE.size + hlen + _pad(_PRE.size + hlen)
    expected = data_start + dlen + len(END)
    _check(n >= expected, f"the file is truncated: it has {n} bytes, its header says "
           f"{expected} (it was probably cut off while being written or copied)")
    _check(n == expected, f"the file has {n - expected} unexpected bytes after its end "
           "(it is corrupted or two files were concatenated)")
    _check(bytes(buf[n - len(END):]) == END, "the end marker is missing: the file is "
           "corrupted")
    header_bytes = bytes(buf[_PRE.size:_PRE.size + hlen])
    _check(zlib.crc32(header_bytes) == hcrc, "the header checksum does not match: the header "
           "(which describes the saved structure) is corrupted")
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except RecursionError:
        raise _Corrupt("the header is not valid JSON: it nests deeper than any saved object "
                       "can (retrograd.save refuses such objects): the file is corrupted") \
            from None
    except (UnicodeDecodeError, ValueError) as e:
        raise _Corrupt(f"the header is not valid JSON ({e}): the file is corrupted") from None
    _check(isinstance(header, dict) and header.get("format") == "retrograd.save"
           and isinstance(header.get("arrays"), list) and "root" in header,
           "the header does not describe a retrograd checkpoint")
    return header, data_start


def _load_arrays(buf, header: dict, data_start: int, data_len: int) -> list[np.ndarray]:
    out = []
    for i, e in enumerate(header["arrays"]):
        _check(isinstance(e, dict), f"array {i}: entry is not an object")
        name = e.get("dtype")
        _check(isinstance(name, str) and name in _DTYPES, f"array {i}: unknown dtype "
               f"{_short(name)}")
        dt = np.dtype(_DTYPES[name].np).newbyteorder("<")
        shape = e.get("shape")
        _check(isinstance(shape, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                               for s in shape),
               f"array {i}: bad shape {_short(shape)} (expected a list of integers)")
        _check(len(shape) <= _MAX_NDIM, f"array {i}: its shape has {len(shape)} dimensions; "
               f"at most {_MAX_NDIM} are possible (the file is corrupted)")
        _check(all(s >= 0 for s in shape), f"array {i}: negative size in shape "
               f"{_short(shape)} (the file is corrupted)")
        _check(math.prod(max(s, 1) for s in shape) * dt.itemsize <= _MAX_BYTES,
               f"array {i}: shape {_short(shape)} is too big for any array (the file is "
               "corrupted)")
        offset, nbytes = e.get("offset"), e.get("nbytes")
        _check(isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0
               and nbytes >= 0, f"array {i}: bad offset/nbytes")
        count = math.prod(shape)
        _check(nbytes == count * dt.itemsize, f"array {i}: {nbytes} bytes do not hold "
               f"{count} elements of {name}")
        _check(offset + nbytes <= data_len, f"array {i} lies outside the data section (the "
               "file is corrupted)")
        start = data_start + offset
        view = memoryview(buf)[start:start + nbytes]
        _check(zlib.crc32(view) == e.get("crc32"), f"array {i} ({name}, shape {tuple(shape)}) "
               "fails its checksum: its bytes are corrupted")
        arr = np.frombuffer(buf, dtype=dt, count=count, offset=start).reshape(shape)
        if dt.byteorder == "<" and sys.byteorder != "little":
            arr = arr.astype(dt.newbyteorder("="))
        out.append(arr)
    return out


class _Decoder:
    def __init__(self, header: dict, arrays: list[np.ndarray], map_location) -> None:
        self.entries = header["arrays"]
        self.arrays = arrays
        self.made: dict[int, Any] = {}
        self.map_location = map_location

    def _tensor(self, i):
        _check(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(self.arrays),
               f"bad array reference {_short(i)}")
        if i in self.made:
            return self.made[i]
        e = self.entries[i]
        arr = self.arrays[i]
        if e.get("kind") == "ndarray":
            obj: Any = arr
        else:
            t = _make(arr)
            if e.get("parameter"):
                t = _as_parameter(t, bool(e.get("requires_grad")))
            elif e.get("requires_grad") and _is_float_name(e.get("dtype")):
                t._rg = True
            try:
                obj = _apply_map_location(t, self.map_location)
            except Exception as exc:
                raise _FromUser(exc) from None
        self.made[i] = obj
        return obj

    def decode(self, root):
        """The value ``root`` of the header stands for, built without recursion (a
        deeply nested header is data like any other)."""
        result: list = []
        # tasks: (value, sink) to decode a value, or (None, finish) to build a container
        # from the decoded children it collected; LIFO, children pushed in reverse
        tasks: list = [(root, result.append)]
        while tasks:
            v, sink = tasks.pop()
            if v is None and sink.__class__ is _Finish:
                sink.done()
                continue
            if v is None or isinstance(v, (bool, int, float, str)):
                sink(v)
                continue
            if isinstance(v, list):
                self._push(tasks, v, list, sink)
                continue
            _check(isinstance(v, dict) and len(v) == 1, f"unexpected value {_short(v)} in "
                   "header")
            (tag, x), = v.items()
            if tag == "$tensor" or tag == "$ndarray":
                sink(self._tensor(x))
            elif tag == "$tuple":
                _check(isinstance(x, list), "bad $tuple")
                self._push(tasks, x, tuple, sink)
            elif tag == "$dict" or tag == "$odict":
                _check(isinstance(x, list) and all(isinstance(p, list) and len(p) == 2
                                                   for p in x), f"bad {tag}")
                self._push(tasks, [y for p in x for y in p],
                           collections.OrderedDict if tag == "$odict" else dict, sink)
            else:
                sink(self._leaf(tag, x))
        return result[0]

    @staticmethod
    def _push(tasks: list, children: list, kind, sink) -> None:
        fin = _Finish(kind, sink)
        tasks.append((None, fin))
        tasks.extend((c, fin.items.append) for c in reversed(children))

    def _leaf(self, tag, x):
        if tag == "$float":
            _check(x in ("inf", "-inf", "nan"), f"bad $float {_short(x)}")
            return float(x)
        if tag == "$bytes":
            _check(isinstance(x, str), "bad $bytes")
            try:
                return base64.b64decode(x.encode("ascii"), validate=True)
            except (ValueError, UnicodeEncodeError):
                raise _Corrupt("bad base64 in $bytes") from None
        if tag == "$size":
            _check(isinstance(x, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                               for s in x), "bad $size")
            return Size(x)
        if tag == "$dtype":
            _check(isinstance(x, str) and x in _DTYPES, f"unknown dtype {_short(x)}")
            return _DTYPES[x]
        raise _Corrupt(f"unknown tag {_short(tag)} in header (known tags: {', '.join(_TAGS)}); "
                       "retrograd.load creates only data, never objects named by the file")


class _Finish:
    """A container being decoded: its children's values, then ``done`` builds it."""

    __slots__ = ("kind", "sink", "items")

    def __init__(self, kind, sink) -> None:
        self.kind = kind
        self.sink = sink
        self.items: list = []

    def done(self) -> None:
        items = self.items
        if self.kind is list or self.kind is tuple:
            self.sink(self.kind(items))
            return
        d = self.kind()
        for j in range(0, len(items), 2):
            key = items[j]
            try:
                hash(key)
            except TypeError:
                raise _Corrupt(f"a dict key is not hashable: {_short(key)}") from None
            d[key] = items[j + 1]
        self.sink(d)


class _FromUser(Exception):
    """An exception raised by the caller's ``map_location``: passed on unchanged."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc


def _is_float_name(name) -> bool:
    return name in _DTYPES and _DTYPES[name].is_floating_point


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _as_parameter(t: Tensor, requires_grad: bool) -> Tensor:
    try:
        from .nn import Parameter
    except ImportError:
        t._rg = requires_grad and t.is_floating_point()
        return t
    return Parameter(t, requires_grad=requires_grad)


def _apply_map_location(t: Tensor, map_location):
    from ._core.device import check_map_location, device

    if map_location is None:
        return t
    if callable(map_location) and not isinstance(map_location, (str, device)):
        result = map_location(t, "cpu")
        return t if result is None else result
    if isinstance(map_location, dict):
        check_map_location(map_location.get("cpu", "cpu"))
        return t
    check_map_location(map_location)
    return t


_MMAP_LEGACY = ("mmap can only be used with files saved with "
                "`torch.save({}_use_new_zipfile_serialization=True), please torch.save your "
                "checkpoint with this option in order to use mmap.")
_TAR = ("Cannot use ``weights_only=True`` with files saved in the legacy .tar format. "
        "retrograd.load reads checkpoints only as PyTorch's weights_only=True does (no code "
        "from the file runs); load this file in PyTorch (torch.load(path, "
        "weights_only=False), only if you trust it) and re-save it with torch.save")


def _load_safetensors(path: str, map_location):
    from ._core.device import device

    if isinstance(map_location, dict):
        raise RuntimeError("Loading safetensors file with dict map_location is not supported. "
                           "Use a device string or torch.device instead.")
    if callable(map_location) and not isinstance(map_location, device):
        raise RuntimeError("Loading safetensors file with callable map_location is not "
                           "supported. Use a device string or torch.device instead.")
    from .safetensors import load_file

    target = map_location.decode() if isinstance(map_location, bytes) else map_location
    return load_file(path, device="cpu" if target is None else target)


def load(f: str | os.PathLike | IO[bytes],
         map_location: str | device | dict[str, str] | Callable | None = None,
         pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Load a checkpoint from a path or a binary file object: ``torch.save``'s zip format
    (what ``retrograd.save`` writes), its legacy pre-1.6 format, retrograd's previous own
    format (with a ``DeprecationWarning``), or a ``.safetensors`` path, as ``torch.load``
    does.

    Loading is PyTorch's ``weights_only=True`` mode whatever ``weights_only`` says: the
    pickle may name only what PyTorch's allowlist holds (tensors, parameters, dtypes,
    sizes, numbers, strings, containers) and anything else raises
    ``pickle.UnpicklingError`` before it runs; a damaged file raises ``RuntimeError``
    saying what is wrong (of PyTorch's type as well where PyTorch raises another:
    ``pickle.UnpicklingError`` for a file that is no checkpoint or a damaged pickle,
    ``EOFError`` for an empty file). A file is read only as far as its format says:
    its first bytes decide the format, and each storage is read once, straight into
    the array that keeps it. ``map_location`` may be None, ``'cpu'``, a CPU device, a dict
    of locations or a callable ``fn(storage, location)``; a storage saved on a GPU loads
    on the CPU (Note [Storage locations] in _serialization/zip_checkpoint.py).
    ``mmap=True`` maps a zip checkpoint (a path) instead of reading it: writes to the
    tensors stay in memory, never reach the file (Note [mmap loading]). ``pickle_module``
    is accepted for compatibility.

    Example:
        >>> import io
        >>> import retrograd as torch
        >>> buf = io.BytesIO(); torch.save([torch.zeros(1), (1, 2.5)], buf)
        >>> torch.load(io.BytesIO(buf.getvalue()), map_location='cpu', weights_only=True)
        [tensor([0.]), (1, 2.5)]
    """
    is_path = isinstance(f, (str, os.PathLike))
    name = os.fspath(f) if is_path else getattr(f, "name", None)
    where = f"retrograd.load({name!r})" if isinstance(name, str) else "retrograd.load"
    if is_path and str(name).endswith(".safetensors"):
        return _load_safetensors(name, map_location)
    try:
        src = CheckpointFile.open(f, bool(mmap and is_path))
    except RuntimeError as e:  # no checkpoint at all: refused from its first bytes
        raise _located(e, where) from None
    with src:
        return _load_from(src, f, where, map_location, mmap)


def _load_from(src: CheckpointFile, f, where: str, map_location, mmap) -> Any:
    """Load from an opened checkpoint whose format its head decided (Note [Reading the
    head first] in _serialization/checkpoint_file.py)."""
    if src.format == "zip":
        if mmap and src.mapped is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        return _load_with(where, read_zip, src.fh, map_location, src.mapped)
    if src.format == "v1":
        warnings.warn("this checkpoint is in retrograd's previous own format, which "
                      "retrograd.load still reads but retrograd.save no longer writes; "
                      "re-save it with retrograd.save (PyTorch's zip format)",
                      DeprecationWarning, stacklevel=3)
        return _load_v1(src.read_all(), where, map_location)
    if mmap:
        raise RuntimeError(_MMAP_LEGACY.format(f"{f}, " if isinstance(f, str) else ""))
    if src.format == "tar":
        raise RuntimeError(f"{where}: {_TAR}")
    return _load_with(where, read_legacy, src.fh, map_location, src.size)


def _located(e: RuntimeError, where: str) -> RuntimeError:
    """``e`` with the file's name in front, keeping PyTorch's type where it has one."""
    kind = type(e) if isinstance(e, (UnpicklingRuntimeError, EOFRuntimeError)) else RuntimeError
    return kind(f"{where}: {e}")


def _load_with(where: str, reader, *args):
    """Run a pickle-based reader, reporting every damage as one ``RuntimeError``."""
    try:
        return reader(*args)
    except Refused as e:  # raised as PyTorch raises it: a plain UnpicklingError
        raise pickle.UnpicklingError(str(e)) from None
    except FromUser as e:
        raise e.exc from e.exc.__cause__
    except RuntimeError as e:
        raise _located(e, where) from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError, IndexError,
            struct.error) as e:
        raise RuntimeError(f"{where}: the checkpoint is corrupted ({type(e).__name__}: "
                           f"{e})") from None


def _load_v1(buf, where: str, map_location) -> Any:
    try:
        header, data_start = _parse(buf)
        _, _, _, _, dlen = _PRE.unpack_from(buf, 0)
        arrays = _load_arrays(buf, header, data_start, dlen)
        return _Decoder(header, arrays, map_location).decode(header["root"])
    except _Corrupt as e:
        raise RuntimeError(f"{where}: {e}") from None
    except _FromUser as e:
        raise e.exc from e.exc.__cause__
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError,
            MemoryError, struct.error) as e:
        # a backstop: every check above names what is wrong; whatever slipped past them
        # is still a damaged file, never a crash of another kind
        raise RuntimeError(f"{where}: the file is corrupted ({type(e).__name__}: {e})") \
            from None
