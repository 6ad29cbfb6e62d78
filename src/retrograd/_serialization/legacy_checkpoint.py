"""PyTorch's legacy (pre-1.6) checkpoint format, read through the weights-only unpickler.

Example:
    >>> import io, pickle
    >>> from retrograd._serialization.legacy_checkpoint import read_legacy
    >>> buf = io.BytesIO()
    >>> for part in (0x1950a86a20f9469cfc6c, 1001, {'little_endian': True}, {'epoch': 3}, []):
    ...     pickle.dump(part, buf, protocol=2)
    >>> read_legacy(buf.getvalue(), None)
    {'epoch': 3}
"""

from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np

from .checkpoint_file import read_into
from .zip_checkpoint import map_storage, unpickle

__all__ = ["read_legacy"]

# Note [PyTorch legacy checkpoints]
# ``torch.save(obj, f, _use_new_zipfile_serialization=False)`` (the only format before
# PyTorch 1.6) writes five protocol-2 pickles back to back, then raw storages:
#   1. the magic number 0x1950a86a20f9469cfc6c, 2. the protocol version 1001,
#   3. sys_info (a dict of byte order and type sizes; PyTorch ignores it on load),
#   4. the object, where each storage is a persistent id ``('storage', torch.FloatStorage,
#      key, location, numel, view_metadata)`` and tensors are the same rebuild calls as
#      in the zip format, 5. the list of storage keys in the order their bytes follow;
# then for each key an int64 element count and the storage's bytes, little-endian.
# Every pickle goes through the same weights-only unpickler as the zip format, so a
# file that names any other global raises ``pickle.UnpicklingError`` before anything
# runs. Storages are allocated while the object is unpickled (the tensors are views of
# them, so views that shared a storage share it here) and filled once the keys are
# read, as PyTorch does. Each storage's size is checked against the bytes that are
# really in the file before anything is allocated, so a forged size cannot exhaust
# memory. The pickles are read from the file as the unpickler asks, and each storage
# straight into its array (``readinto``), so loading holds the storages once. The even
# older tar format (PyTorch before 0.4) is refused as PyTorch refuses it under
# ``weights_only=True``.

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_COUNT = struct.Struct("<q")


def read_legacy(f, map_location, size: int | None = None) -> Any:
    """Load a legacy ``torch.save`` checkpoint from the seekable binary file ``f`` (or a
    bytes-like object) of ``size`` bytes from its position, reading the pickles as they
    ask and each storage straight into its array."""
    if not hasattr(f, "read"):
        f = io.BytesIO(f)
    start = f.tell()
    total = f.seek(0, io.SEEK_END) - start if size is None else size
    f.seek(start)
    if unpickle(f) != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = unpickle(f)
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {str(protocol)[:40]}")
    unpickle(f)  # sys_info: the data is little-endian whatever it says
    storages: dict[str, tuple[np.ndarray, Any]] = {}

    def storage(dtype, key: str, location: str, numel) -> np.ndarray:
        if key not in storages:
            n = int(numel)
            itemsize = np.dtype(dtype.np).itemsize
            if n < 0 or n * itemsize > total:
                raise RuntimeError(f"storage {key!r} claims {numel} elements of {dtype.name}, "
                                   f"more than the file's {total} bytes hold: the file is "
                                   "corrupted")
            arr = np.empty(n, dtype.np)
            storages[key] = (map_storage(arr, location, map_location), dtype)
        arr = storages[key][0]
        return arr if arr.dtype == dtype.np else arr.view(dtype.np)

    result = unpickle(f, storage)
    keys = unpickle(f)
    if not isinstance(keys, list) or sorted(map(str, keys)) != sorted(storages):
        raise RuntimeError("the list of storage keys does not match the storages the object "
                           "uses: the file is corrupted")
    for key in keys:
        arr, dtype = storages[str(key)]
        _fill(f, key, arr, np.dtype(dtype.np).newbyteorder("<"), f.tell() - start, total)
    return result


def _fill(f, key, arr: np.ndarray, le: np.dtype, pos: int, total: int) -> None:
    """Read storage ``key`` (its element count, then its bytes) into ``arr`` in place."""
    head = f.read(_COUNT.size)
    if len(head) < _COUNT.size:
        raise RuntimeError(_eof(_COUNT.size - len(head), key, pos + _COUNT.size, total))
    (count,) = _COUNT.unpack(head)
    if count != arr.size:
        raise RuntimeError(f"storage has wrong byte size: expected {arr.size * le.itemsize} "
                           f"got {count * le.itemsize} (storage {key!r}): the file is "
                           "corrupted")
    nbytes = count * le.itemsize
    direct = (arr.flags.c_contiguous and arr.flags.writeable and arr.ndim == 1
              and arr.dtype == le)
    target = arr if direct else np.empty(nbytes, np.uint8)
    got, _ = read_into(f, target.view(np.uint8))
    if got < nbytes:
        raise RuntimeError(_eof(nbytes - got, key, pos + _COUNT.size + nbytes, total))
    if not direct:  # a storage placed by map_location, or a big-endian machine
        arr[...] = target.view(le)


def _eof(missing: int, key, end: int, total: int) -> str:
    return (f"unexpected EOF, expected {missing} more bytes. The file might be corrupted. "
            f"Storage {key!r} needs the file to run to byte {end}, and it has {total}: the "
            "file is truncated (cut off while being saved or copied; save or copy it again)")
