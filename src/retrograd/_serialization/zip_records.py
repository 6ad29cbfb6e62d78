"""Reading one record of a zip checkpoint straight into the array that keeps it, after
checking what the archive says about it against what the file can really hold.

Example:
    >>> import io, zipfile
    >>> from retrograd._serialization.zip_records import read_record
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as zf:
    ...     zf.writestr("archive/data/0", bytes(range(8)))
    >>> zf = zipfile.ZipFile(buf)
    >>> read_record(zf, buf, zf.getinfo("archive/data/0"), len(buf.getvalue()))
    array([0, 1, 2, 3, 4, 5, 6, 7], dtype=uint8)
"""

from __future__ import annotations

import struct
import zipfile
import zlib

import numpy as np

from .checkpoint_file import CHUNK, read_into

__all__ = ["read_record", "check_method", "MINIZ_HINT"]

# Note [Reading zip records]
# A storage's record is read into the NumPy buffer that becomes the storage, once: a
# stored record (torch.save writes every record stored, 64-byte aligned) is read with
# ``readinto`` from its offset in the file, a deflated one (another zip writer) is
# inflated in chunks into the buffer, and with ``mmap=True`` a stored record is a window
# on the mapping. Nothing is read before it is checked: the caller compares the
# record's size in the zip directory with the element count and dtype the pickle
# declares (PyTorch's "record size ... does not match expected size" check; each
# tensor's offset, sizes and strides are then checked against its storage in
# ``_rebuild_tensor_v2``); a record must lie inside the file; a deflated one may not
# declare more than
# deflate can produce from its compressed bytes (1032 to 1, so a zip bomb is refused
# before it inflates) and is inflated no further than its declared size. The record's
# CRC-32 is checked as it is read (PyTorch skips this; a flipped bit in a weight would
# otherwise load silently), except for mapped records, whose pages are read only when
# touched. Compression methods other than stored and deflated are refused, as
# PyTorch's zip reader (miniz) refuses them.

_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., name length, extra length
_DEFLATE_MAX_RATIO = 1032  # the most bytes deflate can produce from one compressed byte
MINIZ_HINT = ("This is an internal miniz error. If you are seeing this error, there is a "
              "high likelihood that your checkpoint file is corrupted.")


def _name(info: zipfile.ZipInfo) -> str:
    """A record's name as PyTorch's reader names it (inside the archive's folder)."""
    return info.filename.split("/", 1)[-1]


def check_method(info: zipfile.ZipInfo) -> None:
    """Refuse a record PyTorch cannot read, or one that claims to inflate to more than
    deflate can produce, before anything is read."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise RuntimeError(
            f"PytorchStreamReader failed retrieving file meta-data for {_name(info)}: "
            f"unsupported method. {MINIZ_HINT} The record is compressed with method "
            f"{info.compress_type}; PyTorch's zip reader takes only stored and deflated "
            "records (torch.save stores them): re-save the checkpoint with torch.save or "
            "retrograd.save")
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        raise RuntimeError(f"the zip record {info.filename!r} is stored uncompressed but its "
                           f"sizes differ ({info.compress_size} bytes in the file, "
                           f"{info.file_size} declared): the zip directory is corrupted")
    if (info.compress_type == zipfile.ZIP_DEFLATED
            and info.file_size > _DEFLATE_MAX_RATIO * info.compress_size + 1024):
        raise RuntimeError(
            f"PytorchStreamReader failed reading file {_name(info)}: unexpected decompressed "
            f"size. {MINIZ_HINT} The zip record {info.filename!r} declares {info.file_size} "
            f"bytes but holds {info.compress_size} compressed bytes, which deflate cannot "
            f"inflate to more than {_DEFLATE_MAX_RATIO} times their size: the zip directory "
            "is forged or corrupted (a zip bomb); nothing was inflated")


def _data_offset(fh, info: zipfile.ZipInfo, end: int) -> int:
    """Where a record's bytes start, checked to lie inside the file."""
    start = info.header_offset
    fh.seek(start)
    header = fh.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size:
        raise RuntimeError(f"the zip entry {info.filename!r} lies past the end of the file: "
                           "the file is truncated")
    sig, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    if sig != b"PK\x03\x04":
        raise RuntimeError(f"the zip entry {info.filename!r} has no local header: the file is "
                           "corrupted")
    begin, n = start + _LOCAL_HEADER.size + name_len + extra_len, info.compress_size
    if begin + n > end:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: invalid header or "
                           f"archive is corrupted. {MINIZ_HINT} The zip entry "
                           f"{info.filename!r} runs past the end of the file (it needs bytes "
                           f"{begin}..{begin + n}, the file has {end}): the file is truncated "
                           "or its zip directory forged; nothing was read")
    return begin


def read_record(zf: zipfile.ZipFile, fh, info: zipfile.ZipInfo, end: int,
                mapped=None) -> np.ndarray:
    """The bytes of record ``info`` of ``zf`` (read from ``fh``, ``end`` bytes long, or
    from ``mapped``) as a uint8 array of ``info.file_size`` bytes (Note [Reading zip
    records])."""
    check_method(info)
    n = info.file_size
    begin = _data_offset(fh, info, end)
    if info.compress_type == zipfile.ZIP_STORED:
        if mapped is not None:
            return np.frombuffer(memoryview(mapped)[begin:begin + n], np.uint8)
        out = np.empty(n, np.uint8)
        fh.seek(begin)
        got, crc = read_into(fh, out, crc=0)
        if got < n:
            raise RuntimeError(f"the zip entry {info.filename!r} ends after {got} of its {n} "
                               "bytes: the file is truncated")
        if crc != info.CRC:
            raise RuntimeError(f"the zip entry {info.filename!r} fails its CRC-32 check: its "
                               "bytes were damaged after saving (copy the file again)")
        return out
    out = np.empty(n, np.uint8)
    got = 0
    try:
        with zf.open(info) as member:  # stops at the declared size, checks the CRC there
            while got < n:
                chunk = member.read(min(CHUNK, n - got))
                if not chunk:
                    break
                out[got:got + len(chunk)] = np.frombuffer(chunk, np.uint8)
                got += len(chunk)
    except (EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise RuntimeError(f"the zip entry {info.filename!r} cannot be inflated "
                           f"({type(e).__name__}: {e}): the file is corrupted") from None
    if got < n:
        raise RuntimeError(f"the zip entry {info.filename!r} inflates to {got} bytes, not the "
                           f"{n} it declares: the file is corrupted")
    return out
