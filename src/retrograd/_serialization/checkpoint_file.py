"""What ``retrograd.load`` was given, opened as a seekable binary file whose format is
decided from its first bytes before anything else is read; the errors for files that
are no checkpoint at all.

Example:
    >>> import io
    >>> from retrograd._serialization.checkpoint_file import CheckpointFile
    >>> with CheckpointFile.open(io.BytesIO(b"PK\\x03\\x04 and the rest")) as src:
    ...     src.format, src.size
    ('zip', 17)
    >>> CheckpointFile.open(io.BytesIO(b"\\x00" * 64))
    Traceback (most recent call last):
    ...
    retrograd._serialization.checkpoint_file.UnpicklingRuntimeError: invalid load key, '\\x00'. ...
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import zlib
from typing import Any

__all__ = ["CheckpointFile", "UnpicklingRuntimeError", "EOFRuntimeError", "V1_MAGIC",
           "describe_foreign", "MappedFile", "read_into"]

# Note [Reading the head first]
# ``load`` reads the first ``HEAD`` bytes of a file, decides its format from them, and
# only then reads on, each reader taking no more than the format says is there: a zip's
# central directory and the records it lists, a legacy file's pickles and the storages
# they declare. A file that is none of the formats (``/dev/zero``, random bytes, a text
# file, an empty file) is refused after those few bytes, so nothing unbounded is read
# before deciding. A path or a seekable file object is read in place; a stream that
# cannot seek (a pipe) is read whole once its head shows a checkpoint, as zip archives
# keep their directory at the end.

# Note [Errors for files that are no checkpoint]
# ``torch.load`` reads any file that is not a zip as a legacy pickle, so garbage raises
# ``pickle.UnpicklingError`` ("invalid load key, '\x00'.") and an empty file
# ``EOFError`` ("Ran out of input"); a damaged pickle inside a checkpoint raises
# ``UnpicklingError`` too. retrograd's documented contract is that a damaged file raises
# ``RuntimeError`` naming the file and what is wrong. These errors are both: each class
# below derives from PyTorch's type and from ``RuntimeError``, so ``except
# pickle.UnpicklingError`` (code written for PyTorch) and ``except RuntimeError`` (code
# written for retrograd) both catch them, and the message keeps PyTorch's words, then
# says what the file is and what to do.

V1_MAGIC = b"\x89RGRD\r\n\x1a"  # retrograd's previous own format (Note [Checkpoint format])
HEAD = 512  # enough for every format's signature (a tar header's 'ustar' is at 257)
CHUNK = 1 << 24  # bytes per read when filling a storage


class UnpicklingRuntimeError(pickle.UnpicklingError, RuntimeError):
    """Not a pickle, or a damaged one (Note [Errors for files that are no checkpoint])."""


class EOFRuntimeError(EOFError, RuntimeError):
    """An empty file, or a pickle that ends early (Note [Errors for files that are no
    checkpoint])."""


def describe_foreign(head: bytes) -> str:
    """What a file that is no checkpoint looks like, from its first bytes."""
    if head[:2] == b"PK":
        return "it is a zip archive but not a complete one (a truncated or damaged file)"
    if len(head) >= 8 and struct.unpack("<Q", head[:8])[0] < (1 << 32) and head[8:9] == b"{":
        return "it is a safetensors file: read it with retrograd.safetensors.load_file"
    if head[:HEAD].count(0) == len(head[:HEAD]):
        return ("its first bytes are all zero (a device such as /dev/zero, or a file that was "
                "allocated but never written)")
    return ("it is none of the formats retrograd.load reads (torch.save's zip and legacy "
            "formats, retrograd's previous own format): it is damaged or another kind of file")


def format_of(head: bytes) -> str | None:
    """``'zip'``, ``'v1'``, ``'tar'``, ``'legacy'`` or None, from a file's first bytes."""
    if head[:4] == b"PK\x03\x04":
        return "zip"
    if head[:8] == V1_MAGIC:
        return "v1"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    if head[:1] == b"\x80":  # a pickle of protocol 2 or later: the legacy magic number
        return "legacy"
    return None


def _load_key(byte: int) -> str:
    """A byte as CPython's unpickler quotes it in "invalid load key, '...'."."""
    return chr(byte) if 0x20 <= byte < 0x7F else f"\\x{byte:02x}"


def refuse(head: bytes) -> Exception:
    """The error for a file whose first bytes are no checkpoint's (PyTorch's type)."""
    if not head:
        return EOFRuntimeError(
            "Ran out of input: the file is empty (0 bytes), too short to be a checkpoint; it "
            "was not saved completely or the path names another file (check it, then save "
            "the checkpoint again)")
    return UnpicklingRuntimeError(
        f"invalid load key, '{_load_key(head[0])}'. This is not a retrograd checkpoint: "
        f"{describe_foreign(head)}. Pass the path of a file written by torch.save or "
        "retrograd.save")


class MappedFile:
    """A read-only file object over a mapped file (``mmap`` objects are not seekable
    file objects before Python 3.13), for ``zipfile``."""

    def __init__(self, mapped) -> None:
        self._m, self._pos = mapped, 0

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        self._pos = max(0, pos + (0, self._pos, len(self._m))[whence])
        return self._pos

    def read(self, n: int = -1) -> bytes:
        end = len(self._m) if n is None or n < 0 else min(self._pos + n, len(self._m))
        out = bytes(self._m[self._pos:end])
        self._pos = max(self._pos, end)
        return out


def _map_file(path):
    """The file at ``path`` mapped copy-on-write (Note [mmap loading] in
    zip_checkpoint.py); an empty file maps to empty bytes."""
    import mmap as _mmap

    with open(path, "rb") as fh:
        if not os.fstat(fh.fileno()).st_size:
            return b""
        return _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)


def read_into(f, view, crc: int | None = None) -> tuple[int, int | None]:
    """Fill the writable byte buffer ``view`` from ``f`` in place (``readinto``, no
    intermediate copy where ``f`` has it), in chunks; returns the bytes read (fewer at
    the end of the file) and, if ``crc`` is an int, the CRC-32 of what was read,
    computed chunk by chunk while it is in cache."""
    view = memoryview(view).cast("B")
    readinto = getattr(f, "readinto", None)
    got, n = 0, len(view)
    while got < n:
        part = view[got:got + CHUNK]
        if readinto is not None:
            k = readinto(part)
        else:
            data = f.read(len(part))
            k = len(data)
            part[:k] = data
        if not k:
            break
        if crc is not None:
            crc = zlib.crc32(part[:k], crc)
        got += k
    return got, crc


def _read_head(f) -> bytes:
    """Up to ``HEAD`` bytes from ``f`` (a stream may return fewer per call)."""
    parts: list[bytes] = []
    got = 0
    while got < HEAD:
        part = f.read(HEAD - got)
        if isinstance(part, str):
            raise TypeError("retrograd.load needs a file opened in binary mode ('rb')")
        if not part:
            break
        parts.append(bytes(part))
        got += len(part)
    return b"".join(parts)


def _seekable(f) -> bool:
    try:
        return bool(f.seekable()) if hasattr(f, "seekable") else False
    except (OSError, ValueError):
        return False


class CheckpointFile:
    """A checkpoint to read: ``fh`` (a seekable binary file positioned at its start),
    ``size`` (its bytes from there), ``format`` and, for ``mmap=True``, ``mapped``."""

    def __init__(self, fh, size: int, head: bytes, mapped=None, own: bool = False) -> None:
        self.fh, self.size, self.head, self.mapped, self._own = fh, size, head, mapped, own
        self.start = fh.tell()
        self.format = format_of(head)

    @classmethod
    def open(cls, f, mmap: bool = False) -> CheckpointFile:
        """Open a path, a bytes-like object or a binary file object; a head that is no
        checkpoint's raises at once (Note [Reading the head first])."""
        own = isinstance(f, (str, os.PathLike))
        if own and mmap:
            mapped = _map_file(f)
            return cls._checked(MappedFile(mapped), mapped=mapped)
        if own:
            fh = open(f, "rb")
        elif isinstance(f, (bytes, bytearray, memoryview)):
            fh = io.BytesIO(f)
        elif hasattr(f, "read"):
            fh = f
        else:
            raise TypeError(f"retrograd.load expects a path or a binary file object, got "
                            f"{type(f).__name__}")
        try:
            if not _seekable(fh):  # a pipe: decide from the head, then read the rest
                head = _read_head(fh)
                if format_of(head) is None:
                    raise refuse(head)
                whole = io.BytesIO(head + bytes(fh.read()))
                if own:
                    fh.close()
                fh, own = whole, False
            return cls._checked(fh, own=own)
        except BaseException:
            if own:
                fh.close()
            raise

    @classmethod
    def _checked(cls, fh, mapped=None, own: bool = False) -> CheckpointFile:
        start = fh.tell()
        head = _read_head(fh)
        size = fh.seek(0, io.SEEK_END) - start
        fh.seek(start)
        kind = format_of(head)
        if kind is None:
            raise refuse(head)
        if size < len(head):  # /dev/urandom and the like: reading could never end
            raise RuntimeError(
                f"the file reports {max(size, 0)} bytes but its first bytes read as a {kind} "
                "checkpoint: it is a device or special file, not a saved checkpoint, and "
                "reading it might never end; copy the checkpoint to a regular file and load "
                "that")
        return cls(fh, size, head, mapped, own)

    def read_all(self) -> Any:
        """The whole checkpoint as a buffer (the mapping itself when mapped); its size
        is the file's real size, known before anything is read."""
        if self.mapped is not None:
            return self.mapped
        buf = bytearray(self.size)
        got, _ = read_into(self.fh, buf)
        return buf if got == self.size else buf[:got]

    def close(self) -> None:
        if self._own:
            self.fh.close()

    def __enter__(self) -> CheckpointFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
