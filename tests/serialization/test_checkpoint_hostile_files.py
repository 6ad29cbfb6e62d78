"""retrograd.load of hostile and broken files, and of big ones, in bounded memory.

Each hostile file (a zip bomb, records shorter or longer than their storage, a forged
element count, /dev/zero, an empty file, garbage, truncated files) is refused before
anything big is read or allocated, with the exception type torch.load raises and its
wording, plus the cause and the fix; the peak memory of loading is measured in a child
process (Note [Reading zip records], Note [Reading the head first]).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib

import numpy as np
import pytest
import torch

import retrograd as rg

MB = 1 << 20


def _torch_bytes(obj, zip_format: bool = True) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=zip_format)
    return buf.getvalue()


GOOD = _torch_bytes({"w": torch.arange(6.0)})  # one float32 storage '0' of 24 bytes


def _rezip(blob: bytes, record=None, pkl=None, method=zipfile.ZIP_STORED, drop=()) -> bytes:
    """``blob`` rewritten: storage 0's bytes replaced by ``record`` (written with
    ``method``), data.pkl by ``pkl``, the entries ending in ``drop`` left out."""
    src, out = zipfile.ZipFile(io.BytesIO(blob)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            if name.endswith(tuple(drop)) and drop:
                continue
            data, how = src.read(name), zipfile.ZIP_STORED
            if name.endswith("/data/0"):
                data, how = (data if record is None else record), method
            elif name.endswith("data.pkl") and pkl is not None:
                data = pkl
            dst.writestr(name, data, compress_type=how)
    return out.getvalue()


def _declare_numel(numel: int, size: int | None = None) -> bytes:
    """GOOD's data.pkl with storage 0 declared as ``numel`` elements (and the tensor as
    ``size`` elements)."""
    pkl = zipfile.ZipFile(io.BytesIO(GOOD)).read("archive/data.pkl")
    new = pkl.replace(b"cpuq\x06K\x06", b"cpuq\x06J" + struct.pack("<i", numel))
    if size is not None:
        new = new.replace(b"K\x00K\x06\x85", b"K\x00J" + struct.pack("<i", size) + b"\x85")
    assert new.count(struct.pack("<i", numel)) >= 1 and new != pkl
    return new


def _central_entry(blob, name: str) -> int:
    """Where entry ``name``'s record in the zip's central directory starts."""
    at = blob.find(b"PK\x01\x02")
    while bytes(blob[at + 46:at + 46 + len(name)]) != name.encode():
        at = blob.find(b"PK\x01\x02", at + 4)
    return at


def _forge(blob: bytes, name: str, file_size: int, crc: int | None = None) -> bytes:
    """``blob`` with entry ``name``'s size (both sizes, if it is stored) and CRC set in
    its local header and in the central directory, its bytes unchanged."""
    out = bytearray(blob)
    info = zipfile.ZipFile(io.BytesIO(blob)).getinfo(name)
    stored = info.compress_type == zipfile.ZIP_STORED
    for at, size_at in ((info.header_offset, 18), (_central_entry(blob, name), 20)):
        # the CRC, then the compressed and the uncompressed sizes
        struct.pack_into("<I", out, at + size_at + 4, file_size)
        if stored:
            struct.pack_into("<I", out, at + size_at, file_size)
        if crc is not None:
            struct.pack_into("<I", out, at + size_at - 4, crc)
    return bytes(out)


def _bomb() -> bytes:
    """A 64 KB zip whose 6-element storage record inflates to 64 MB, honestly declared."""
    return _rezip(GOOD, record=bytes(64 * MB), method=zipfile.ZIP_DEFLATED)


def _lying_bomb() -> bytes:
    """A record that declares 24 bytes (and the CRC of 24 zeros) whose deflate stream
    goes on to 64 MB: only the declared 24 bytes may be inflated, as torch does."""
    return _forge(_bomb(), "archive/data/0", 24, zlib.crc32(bytes(24)))


def _forged_numel(method: int) -> bytes:
    """A 24-byte record whose storage and record both claim 2**29 - 1 float32 elements
    (2 GB): stored, the bytes are not in the file; deflated, they are more than deflate
    can produce from the record's compressed bytes."""
    numel = 2 ** 29 - 1
    blob = _rezip(GOOD, record=bytes(24), pkl=_declare_numel(numel, numel), method=method)
    return _forge(blob, "archive/data/0", numel * 4)


def _legacy() -> bytes:
    return _torch_bytes({"w": torch.arange(64.0)}, zip_format=False)


def _garbage() -> bytes:
    out = bytearray(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    out[0] = 0xD3  # no pickle opcode: both libraries report it as an invalid load key
    return bytes(out)


# name: (file bytes, PyTorch's exception type, PyTorch's words in the message)
HOSTILE = {
    "zip bomb record": (_bomb(), RuntimeError,
                        "record size (67108864 bytes) does not match expected size (24 bytes "
                        "= 24 elements * 1 bytes/element) for dtype Byte"),
    "record shorter than its storage": (
        _rezip(GOOD, record=bytes(8)), RuntimeError,
        "record size (8 bytes) does not match expected size (24 bytes"),
    "record longer than its storage": (
        _rezip(GOOD, record=bytes(40)), RuntimeError,
        "record size (40 bytes) does not match expected size (24 bytes"),
    "huge declared numel": (
        _rezip(GOOD, pkl=_declare_numel(2 ** 31 - 1)), RuntimeError,
        "record size (24 bytes) does not match expected size (8589934588 bytes"),
    "empty file": (b"", EOFError, "Ran out of input"),
    "garbage": (_garbage(), pickle.UnpicklingError, "invalid load key, '\\xd3'."),
    "truncated zip": (GOOD[:len(GOOD) // 2], RuntimeError,
                      "PytorchStreamReader failed reading zip archive: failed finding central "
                      "directory"),
    "zip without data.pkl": (_rezip(GOOD, drop=["data.pkl"]), RuntimeError,
                             "PytorchStreamReader failed locating file data.pkl: file not "
                             "found"),
    "zip without a storage record": (_rezip(GOOD, drop=["/data/0"]), RuntimeError,
                                     "PytorchStreamReader failed locating file data/0: file "
                                     "not found"),
    "bzip2 record": (_rezip(GOOD, record=bytes(24), method=zipfile.ZIP_BZIP2), RuntimeError,
                     "PytorchStreamReader failed retrieving file meta-data for data/0: "
                     "unsupported method"),
    "stored record forged to 2 GB": (
        _forged_numel(zipfile.ZIP_STORED), RuntimeError,
        "PytorchStreamReader failed reading zip archive: invalid header or archive is "
        "corrupted"),
    "deflated record forged to 2 GB": (
        _forged_numel(zipfile.ZIP_DEFLATED), RuntimeError,
        "PytorchStreamReader failed reading file data/0: unexpected decompressed size"),
    "legacy format, storages truncated": (
        _legacy()[:-40], RuntimeError,
        "unexpected EOF, expected 40 more bytes. The file might be corrupted."),
    "legacy format, pickle truncated": (
        _legacy()[:60], pickle.UnpicklingError, "pickle data was truncated"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_files_raise_torch_errors_with_the_cause(name, tmp_path):
    blob, kind, words = HOSTILE[name]
    path = tmp_path / "hostile.pt"
    path.write_bytes(blob)
    # torch.load is the oracle: its type, and its words (weights_only=False, where
    # weights_only=True wraps some in the generic "Weights only load failed" text)
    with pytest.raises(kind) as want:
        torch.load(path, weights_only=False)
    assert words in str(want.value)
    with pytest.raises((kind, EOFError)):
        torch.load(path, weights_only=True)
    for f, where in ((path, f"retrograd.load('{path}')"), (io.BytesIO(blob), "retrograd.load")):
        with pytest.raises(kind) as got:
            rg.load(f)
        message = str(got.value)
        assert isinstance(got.value, RuntimeError), type(got.value)  # retrograd's contract
        assert message.startswith(f"{where}: ") and words in message, message
        assert len(message) > len(where) + len(words) + 60, message  # the cause, the fix


def test_forged_sizes_are_refused_before_anything_is_allocated():
    with pytest.raises(RuntimeError, match="runs past the end of the file .*nothing was read"):
        rg.load(io.BytesIO(_forged_numel(zipfile.ZIP_STORED)))
    with pytest.raises(RuntimeError, match="declares 2147483644 bytes but holds .* compressed "
                                           "bytes.*zip bomb"):
        rg.load(io.BytesIO(_forged_numel(zipfile.ZIP_DEFLATED)))


def test_a_record_is_inflated_no_further_than_its_declared_size():
    """A deflate stream longer than its record's declared size: the declared bytes load,
    as in torch, and the rest is never inflated."""
    blob = _lying_bomb()
    want = torch.load(io.BytesIO(blob), weights_only=True)["w"]
    assert rg.load(io.BytesIO(blob))["w"].tolist() == want.tolist() == [0.0] * 6


def test_a_damaged_record_fails_its_crc():
    """torch loads a flipped bit in a weight silently; retrograd checks each record's
    CRC-32 as it reads it (Note [Reading zip records])."""
    blob = bytearray(GOOD)
    info = zipfile.ZipFile(io.BytesIO(GOOD)).getinfo("archive/data/0")
    name_len, extra_len = struct.unpack_from("<HH", blob, info.header_offset + 26)
    blob[info.header_offset + 30 + name_len + extra_len + 1] ^= 0x40
    assert torch.load(io.BytesIO(bytes(blob)), weights_only=True)["w"][0].item() != 0.0
    with pytest.raises(RuntimeError, match="'archive/data/0' fails its CRC-32 check"):
        rg.load(io.BytesIO(bytes(blob)))


def test_a_pipe_is_refused_from_its_head_and_read_when_it_is_a_checkpoint():
    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes, limit: int) -> None:
            self._data, self._pos, self.limit = data, 0, limit

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            n = min(len(b), len(self._data) - self._pos, 100)  # short reads, as pipes do
            if self._pos + n > self.limit:
                raise AssertionError("read past the head of a file that is no checkpoint")
            b[:n] = self._data[self._pos:self._pos + n]
            self._pos += n
            return n

    with pytest.raises(pickle.UnpicklingError, match="invalid load key, '\\\\x00'"):
        rg.load(Pipe(bytes(1 * MB), limit=4096))
    assert rg.load(Pipe(GOOD, limit=len(GOOD)))["w"].tolist() == list(range(6))


# ----------------------------------------------------------------------------------
# peak memory, measured in a child process (NumPy's buffers are not all visible to
# tracemalloc; VmHWM is the process's peak resident memory, reset per case)

_CHILD = textwrap.dedent("""
    import json, resource, sys
    import retrograd as rg

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024

    # a load that would grow without bound fails here instead of on the shared machine
    limit = status("VmSize") + (1 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    out = []
    for path, kw in json.loads(sys.argv[1]):
        for attempt in range(2):  # the first pass warms up imports and caches
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # the peak resident size starts again from the current one
            base = status("VmRSS")
            f = open(path, "rb") if kw.pop("file_object", False) else path
            try:
                value = rg.load(f, **kw)
                error = None
            except Exception as e:
                value = None
                error = [[c.__name__ for c in type(e).__mro__], str(e)[:500]]
            result = [status("VmHWM") - base, error]
            del value
            if f is not path:
                f.close()
        out.append(result)
    print(json.dumps(out))
""")


def _peaks(cases: list) -> list:
    """``[peak bytes over the pre-load baseline, error or None]`` for each ``(path,
    kwargs)``, loaded in a fresh process (``file_object=True``: an open file)."""
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("peak memory is measured with Linux's /proc/self/clear_refs")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cases)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_loading_a_64_mb_checkpoint_holds_its_storages_once(tmp_path):
    """The storages are read straight into their arrays: the peak over the baseline
    stays near the data's size (it was 3x before: whole-file buffers and copies)."""
    data = 64 * MB
    t = torch.arange(data // 4, dtype=torch.float32).reshape(8, -1)
    torch.save({f"l{i}": t[i].clone() for i in range(8)}, tmp_path / "torch.pt")
    rg_t = rg.arange(data // 4, dtype=rg.float32).reshape(8, -1)
    rg.save({f"l{i}": rg_t[i].clone() for i in range(8)}, tmp_path / "rg.pt")
    torch.save({f"l{i}": t[i].clone() for i in range(8)}, tmp_path / "legacy.pt",
               _use_new_zipfile_serialization=False)
    del t, rg_t
    cases = [(str(tmp_path / n), {}) for n in ("torch.pt", "rg.pt", "legacy.pt")]
    cases.append((str(tmp_path / "torch.pt"), {"mmap": True}))
    peaks = _peaks(cases)
    for (path, kw), (peak, error) in zip(cases, peaks):
        assert error is None, (path, error)
        limit = data * 1.5 if not kw else data * 0.25  # mmap maps, reads nothing
        assert peak < limit, f"{path} {kw}: peak {peak / MB:.0f} MB over baseline"


def test_hostile_files_load_in_bounded_memory_and_time(tmp_path):
    """A zip bomb, forged sizes and /dev/zero (a path and an open file) are refused before
    they can grow the process; before, each load here reached 64 MB to 3.5 GB."""
    files = {"bomb": _bomb(), "lying": _lying_bomb(),
             "stored": _forged_numel(zipfile.ZIP_STORED),
             "deflated": _forged_numel(zipfile.ZIP_DEFLATED)}
    for name, blob in files.items():
        (tmp_path / f"{name}.pt").write_bytes(blob)
    cases = [(str(tmp_path / f"{n}.pt"), {}) for n in files]
    zero = os.path.exists("/dev/zero")
    if zero:
        cases += [("/dev/zero", {}), ("/dev/zero", {"file_object": True})]
    peaks = _peaks(cases)
    for (path, _), (peak, error) in zip(cases, peaks):
        assert peak < 16 * MB, f"{path}: peak {peak / MB:.0f} MB over baseline ({error})"
        assert (error is None) == path.endswith("lying.pt"), (path, error)
    if zero:  # torch's type and words: pickle.UnpicklingError "invalid load key, '\x00'."
        with pytest.raises(pickle.UnpicklingError) as want:
            torch.load("/dev/zero", weights_only=False)
        for mro, message in (e for _, e in peaks[-2:]):
            assert "UnpicklingError" in mro and "RuntimeError" in mro, mro
            assert str(want.value) in message and "all zero" in message, message


def test_a_device_that_starts_like_a_pickle_is_refused():
    """/dev/urandom starts with b'\\x80' once in 256 tries; a device reports no size, so
    its pickles could be read forever: it is refused once its head is read."""

    class Device(io.RawIOBase):
        read_bytes = 0

        def readable(self) -> bool:
            return True

        def seekable(self) -> bool:
            return True

        def seek(self, pos: int, whence: int = 0) -> int:
            return 0  # as a character device answers

        def readinto(self, b) -> int:
            b[:] = b"\x80" * len(b)
            Device.read_bytes += len(b)
            return len(b)

    with pytest.raises(RuntimeError, match="reports 0 bytes but its first bytes read as a "
                                           "legacy checkpoint: it is a device"):
        rg.load(Device())
    assert Device.read_bytes <= 4096
