"""Read and write the safetensors format (plain dicts of named tensors).

safetensors is the weight format shared by PyTorch, JAX, TensorFlow, MLX and the
Hugging Face hub: an 8-byte little-endian header length, a JSON header mapping each
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (plus an optional
``"__metadata__"`` dict of strings), then the raw little-endian bytes. It holds no
code. The API mirrors ``safetensors.torch``.

Example:
    >>> import retrograd as torch
    >>> from retrograd import safetensors
    >>> blob = safetensors.save({'w': torch.ones(2, 2), 'b': torch.zeros(2)})
    >>> safetensors.load(blob)['w']
    tensor([[1., 1.],
            [1., 1.]])
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from typing import Any

import numpy as np

from . import _dtype as D
from ._tensor import Tensor, _make

__all__ = ["save", "save_file", "load", "load_file", "safe_open"]

# safetensors dtype codes <-> retrograd dtypes, in the specification's order of
# alignment (the reference writer stores larger alignments first)
_CODES = {"F64": D.float64, "I64": D.int64, "F32": D.float32, "I32": D.int32,
          "BF16": D.bfloat16, "F16": D.float16, "I16": D.int16, "I8": D.int8, "U8": D.uint8,
          "BOOL": D.bool}
_NAMES = {d.name: code for code, d in _CODES.items()}
_UNSUPPORTED = ("U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3",
                "F6_E3M2", "C64", "E8M0")
_MAX_HEADER = 100_000_000


class SafetensorError(RuntimeError):
    """A safetensors file that breaks the format (the message says how)."""


def _fail(msg: str, where: str = "") -> SafetensorError:
    return SafetensorError(f"{where}: {msg}" if where else msg)


def _prepare(tensors: dict[str, Tensor], metadata: dict[str, str] | None):
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors.save expects a dict of name -> Tensor, got "
                        f"{type(tensors).__name__}")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("metadata must be a dict of str -> str (convert values with str())")
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be strings, got {type(name).__name__}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved for metadata; rename the tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"safetensors stores tensors only; {name!r} is a "
                            f"{type(t).__name__}")
        items.append((name, t))
    order = list(_CODES)
    items.sort(key=lambda it: (order.index(_NAMES[it[1].dtype.name]), it[0]))
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name, t in items:
        arr = t._data if t._data.flags.c_contiguous else t._data.copy(order="C")
        if sys.byteorder != "little":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        raw = arr.reshape(-1).view(np.uint8)
        header[name] = {"dtype": _NAMES[t.dtype.name], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + raw.nbytes]}
        offset += raw.nbytes
        blobs.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((-(8 + len(text))) % 8)  # pad so the data starts 8-aligned
    return text, blobs


def _write(f, text: bytes, blobs) -> None:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for raw in blobs:
        f.write(memoryview(raw))


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors bytes of a dict of tensors.

    Example:
        >>> import retrograd as torch
        >>> from retrograd import safetensors
        >>> blob = safetensors.save({'x': torch.tensor([1, 2], dtype=torch.int32)})
        >>> blob[8:9], len(blob) % 8
        (b'{', 0)
    """
    import io

    text, blobs = _prepare(tensors, metadata)
    buf = io.BytesIO()
    _write(buf, text, blobs)
    return buf.getvalue()


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write a dict of tensors to ``filename`` in the safetensors format (atomically).

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, load_file
        >>> path = os.path.join(tempfile.mkdtemp(), 'model.safetensors')
        >>> save_file({'w': torch.eye(2)}, path, metadata={'format': 'pt'})
        >>> load_file(path)['w']
        tensor([[1., 0.],
                [0., 1.]])
    """
    from .serialization import atomic_write

    text, blobs = _prepare(tensors, metadata)
    atomic_write(filename, lambda out: _write(out, text, blobs))


def _parse(buf, where: str) -> tuple[dict, dict, int]:
    """Validate a safetensors buffer; returns (entries, metadata, data start)."""
    n = len(buf)
    if n < 8:
        raise _fail(f"the file is too short ({n} bytes) to hold the 8-byte header length",
                    where)
    (hlen,) = struct.unpack_from("<Q", buf, 0)
    if hlen > _MAX_HEADER:
        raise _fail(f"the header length field says {hlen} bytes (the format allows at most "
                    f"{_MAX_HEADER}): this is not a safetensors file, or it is corrupted",
                    where)
    if 8 + hlen > n:
        raise _fail(f"the file is truncated: the header needs {8 + hlen} bytes but the file "
                    f"has {n}", where)
    raw = bytes(buf[8:8 + hlen])
    if not raw.startswith(b"{"):
        raise _fail("the header does not start with '{'", where)

    def no_duplicates(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                raise _fail(f"the header names {k!r} twice", where)
            d[k] = v
        return d

    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        if isinstance(e, SafetensorError):
            raise
        raise _fail(f"the header is not valid UTF-8 JSON ({e})", where) from None
    if not isinstance(header, dict):
        raise _fail("the header is not a JSON object", where)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise _fail("__metadata__ must map strings to strings", where)
    data_start = 8 + hlen
    data_len = n - data_start
    spans = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _fail(f"tensor {name!r}: an entry needs exactly dtype, shape and "
                        "data_offsets", where)
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code in _UNSUPPORTED:
            raise _fail(f"tensor {name!r} has dtype {code}, which retrograd has no dtype for "
                        f"(supported: {', '.join(_CODES)})", where)
        if code not in _CODES:
            raise _fail(f"tensor {name!r}: unknown dtype {code!r}", where)
        if not (isinstance(shape, list) and all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape)):
            raise _fail(f"tensor {name!r}: bad shape {shape!r}", where)
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(
                isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                and 0 <= offsets[0] <= offsets[1]):
            raise _fail(f"tensor {name!r}: bad data_offsets {offsets!r}", where)
        nbytes = math.prod(shape) * np.dtype(_CODES[code].np).itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise _fail(f"tensor {name!r}: data_offsets {offsets} span "
                        f"{offsets[1] - offsets[0]} bytes but {code} of shape {tuple(shape)} "
                        f"needs {nbytes}", where)
        spans.append((offsets[0], offsets[1], name))
    # the tensors must tile the data section exactly: no gaps, no overlaps, no extra bytes
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            raise _fail(f"tensor {name!r} starts at byte {begin} of the data, expected {pos} "
                        "(the tensors must cover the data without gaps or overlaps)", where)
        pos = end
    if pos != data_len:
        kind = "truncated" if pos > data_len else "followed by unreferenced bytes"
        raise _fail(f"the data section has {data_len} bytes but the tensors need {pos}: the "
                    f"file is {kind}", where)
    return header, metadata, data_start


def _tensor(buf, info: dict, data_start: int) -> Tensor:
    d = _CODES[info["dtype"]]
    dt = np.dtype(d.np).newbyteorder("<")
    begin = data_start + info["data_offsets"][0]
    arr = np.frombuffer(buf, dtype=dt, count=math.prod(info["shape"]), offset=begin)
    arr = arr.reshape(info["shape"])
    if sys.byteorder != "little":
        arr = arr.astype(dt.newbyteorder("="))
    return _make(arr)


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors in safetensors ``data`` (bytes), by name.

    Example:
        >>> import retrograd as torch
        >>> from retrograd import safetensors
        >>> safetensors.load(safetensors.save({'a': torch.arange(3)}))
        {'a': tensor([0, 1, 2])}
    """
    buf = bytearray(data)
    header, _, start = _parse(buf, "safetensors.load")
    return {name: _tensor(buf, info, start) for name, info in header.items()}


def _read(filename) -> bytearray:
    with open(filename, "rb") as f:
        return bytearray(f.read())


def load_file(filename: str | os.PathLike, device: str = "cpu") -> dict[str, Tensor]:
    """The tensors stored in a safetensors file, by name (in file order).

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, load_file
        >>> path = os.path.join(tempfile.mkdtemp(), 'w.safetensors')
        >>> save_file({'b': torch.zeros(1), 'a': torch.ones(1)}, path)
        >>> sorted(load_file(path))
        ['a', 'b']
    """
    from ._device import check_device
    from ._device import device as _device

    check_device(_device(device) if isinstance(device, str) else device)
    buf = _read(filename)
    header, _, start = _parse(buf, f"safetensors.load_file({os.fspath(filename)!r})")
    return {name: _tensor(buf, info, start) for name, info in header.items()}


class safe_open:
    """Open a safetensors file and read tensors one at a time (``keys``, ``get_tensor``,
    ``metadata``), as ``safetensors.safe_open`` does.

    Example:
        >>> import os, tempfile
        >>> import retrograd as torch
        >>> from retrograd.safetensors import save_file, safe_open
        >>> path = os.path.join(tempfile.mkdtemp(), 'w.safetensors')
        >>> save_file({'w': torch.ones(2)}, path, metadata={'step': '7'})
        >>> with safe_open(path, framework='pt') as f:
        ...     f.keys(), f.metadata(), f.get_tensor('w')
        (['w'], {'step': '7'}, tensor([1., 1.]))
    """

    def __init__(self, filename: str | os.PathLike, framework: str = "pt",
                 device: str = "cpu") -> None:
        self._where = f"safe_open({os.fspath(filename)!r})"
        self._buf = _read(filename)
        self._header, self._metadata, self._start = _parse(self._buf, self._where)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def keys(self) -> list[str]:
        return sorted(self._header)

    def metadata(self) -> dict[str, str]:
        return dict(self._metadata)

    def get_tensor(self, name: str) -> Tensor:
        if name not in self._header:
            raise SafetensorError(f"{self._where}: no tensor named {name!r} (the file has "
                                  f"{', '.join(sorted(self._header)) or 'none'})")
        return _tensor(self._buf, self._header[name], self._start).clone()
