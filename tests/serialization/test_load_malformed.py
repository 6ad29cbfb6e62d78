"""retrograd.load of damaged files, and temporary files left by killed saves.

A malformed file (hand-crafted headers, random byte flips, truncations) always raises
``RuntimeError`` naming the file and what is wrong, never ValueError, RecursionError or
anything else. A save killed mid-write leaves a temporary file that the next save of the
same path removes (Note [Temporary files] in serialization.py).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import retrograd as rg
from retrograd import serialization as S
from retrograd._serialization import atomic_write
from retrograd._serialization.checkpoint_file import EOFRuntimeError, UnpicklingRuntimeError

# these files are in retrograd's previous own format, which loads with a warning
pytestmark = pytest.mark.filterwarnings("ignore:this checkpoint is in retrograd's previous")


def _file(header, data: bytes = b"") -> bytes:
    """A checkpoint with this header (a dict, or JSON text) and data section, framed and
    checksummed correctly."""
    h = header.encode() if isinstance(header, str) else json.dumps(
        header, separators=(",", ":")).encode()
    out = S._PRE.pack(S.MAGIC, S.VERSION, zlib.crc32(h), len(h), len(data)) + h
    out += b"\0" * S._pad(S._PRE.size + len(h))
    return out + data + S.END


def _header(root, arrays=()) -> dict:
    return {"format": "retrograd.save", "version": 1, "byteorder": "little",
            "arrays": list(arrays), "root": root}


def _entry(shape, nbytes=0, dtype="float32", offset=0, data=b"") -> dict:
    return {"dtype": dtype, "shape": shape, "offset": offset, "nbytes": nbytes,
            "crc32": zlib.crc32(data), "kind": "tensor", "requires_grad": False,
            "parameter": False}


def _deep(depth: int, kind: str = "list") -> str:
    """Header text whose root nests ``depth`` levels (built as text: json.dumps recurses)."""
    open_, close = {"list": ("[", "]"), "tuple": ('{"$tuple":[', "]}"),
                    "dict": ('{"$dict":[["k",', "]]}")}[kind]
    root = open_ * depth + "1" + close * depth
    return '{"format":"retrograd.save","version":1,"arrays":[],"root":' + root + "}"


CRAFTED = {
    "65 dims": (_file(_header({"$tensor": 0}, [_entry([1] * 65, 4, data=b"\0" * 4)]),
                      b"\0" * 4 + b"\0" * 60), "65 dimensions"),
    "shape too big (zero dim)": (_file(_header({"$tensor": 0}, [_entry([0, 2 ** 62, 2 ** 62])])),
                                 "too big"),
    "shape too big": (_file(_header({"$tensor": 0}, [_entry([2 ** 40, 2 ** 40], 2 ** 82)])),
                      "too big"),
    "wrong byte count": (_file(_header({"$tensor": 0}, [_entry([2, 3], 2 ** 40)])),
                         "do not hold"),
    "negative dim": (_file(_header({"$tensor": 0}, [_entry([-1, 4], 0)])), "negative"),
    "bool dim": (_file(_header({"$tensor": 0}, [_entry([True], 4)])), "bad shape"),
    "float dim": (_file(_header({"$tensor": 0}, [_entry([1.5], 4)])), "bad shape"),
    "list dtype": (_file(_header({"$tensor": 0}, [_entry([1], 4, dtype=["x"])])),
                   "unknown dtype"),
    "deeply nested lists": (_file(_deep(100_000)), "not valid JSON.*nests deeper"),
    "deeply nested dicts": (_file(_deep(100_000, "dict")), "not valid JSON.*nests deeper"),
    "unhashable $dtype": (_file(_header({"$dtype": ["float32"]})), "unknown dtype"),
    "bool array reference": (_file(_header({"$tensor": True})), "bad array reference"),
    "array reference out of range": (_file(_header({"$tensor": 3})), "bad array reference"),
    "$size of floats": (_file(_header({"$size": [1.5]})), "bad \\$size"),
    "unknown tag": (_file(_header({"$eval": "os.system('x')"})), "unknown tag"),
    "unhashable key": (_file(_header({"$dict": [[[1, 2], 3]]})), "not hashable"),
    "two-key object": (_file(_header({"a": 1, "b": 2})), "unexpected value"),
    "header not an object": (_file([1, 2]), "does not describe"),  # type: ignore[arg-type]
}


def _bad_json() -> bytes:
    h = b'{"format": "retrograd.save", "arrays": [], "root": [1, 2'
    return (S._PRE.pack(S.MAGIC, S.VERSION, zlib.crc32(h), len(h), 0) + h
            + b"\0" * S._pad(S._PRE.size + len(h)) + S.END)


CRAFTED["bad JSON"] = (_bad_json(), "not valid JSON")


@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_malformed_files_raise_runtime_error(name, tmp_path):
    blob, pattern = CRAFTED[name]
    with pytest.raises(RuntimeError, match=pattern) as info:
        rg.load(io.BytesIO(blob))
    assert type(info.value) is RuntimeError
    assert str(info.value).startswith("retrograd.load")
    path = tmp_path / "bad.pt"
    path.write_bytes(blob)
    with pytest.raises(RuntimeError, match="bad.pt"):  # the message names the file
        rg.load(path)


@pytest.mark.parametrize("kind", ["list", "tuple", "dict"])
@pytest.mark.parametrize("depth", [200, 450, 900, 3000])
def test_deep_nesting_loads_without_recursion(depth, kind):
    """A header as deep as JSON itself can parse decodes without recursion; deeper ones
    are the clear RuntimeError."""
    try:
        out = rg.load(io.BytesIO(_file(_deep(depth, kind))))
    except RuntimeError as e:
        assert "nests deeper" in str(e) and depth > 200
        return
    for _ in range(depth):
        out = out["k"] if kind == "dict" else out[0]
    assert out == 1


def _valid_blob() -> bytes:
    buf = io.BytesIO()
    g = np.random.default_rng(0)
    S._save_v1({"w": rg.tensor(g.standard_normal((3, 4)).astype(np.float32)),
             "b": rg.arange(5), "step": 7, "name": "run", "shape": rg.Size([2, 3]),
             "nested": [(1, 2.5, float("inf")), {"k": b"\x00\x01"}],
             "dtype": rg.float16}, buf)
    return buf.getvalue()


_DAMAGED = (RuntimeError, UnpicklingRuntimeError, EOFRuntimeError)


def test_random_corruptions_raise_runtime_error():
    """Seeded byte flips, truncations and insertions: RuntimeError, or (if the damage
    missed every checked byte, i.e. header padding) the original value."""
    blob = _valid_blob()
    ref = rg.load(io.BytesIO(blob))
    g = np.random.default_rng(12)
    cases = [blob[:k] for k in g.integers(0, len(blob), 40)]
    for _ in range(200):
        b = bytearray(blob)
        for pos in g.integers(0, len(b), g.integers(1, 4)):
            b[pos] = int(g.integers(0, 256))
        cases.append(bytes(b))
    for _ in range(20):
        pos = int(g.integers(0, len(blob)))
        cases.append(blob[:pos] + bytes(g.integers(0, 256, 3).astype(np.uint8)) + blob[pos:])
    for k, case in enumerate(cases):
        try:
            out = rg.load(io.BytesIO(case))
        except RuntimeError as e:
            # damage to the magic bytes makes a file no checkpoint at all: PyTorch's type
            # for that (UnpicklingError), which is a RuntimeError as well
            assert type(e) in _DAMAGED and str(e).startswith("retrograd.load: "), (k, e)
            assert len(str(e)) > len("retrograd.load: ") + 10
            continue
        assert out.keys() == ref.keys(), k
        assert rg.equal(out["w"], ref["w"]) and out["nested"] == ref["nested"], k


def test_header_corruption_with_a_matching_checksum():
    """A header rewritten by hand (checksum fixed up) is checked field by field."""
    blob = _valid_blob()
    header, data_start = S._parse(bytearray(blob))
    data = blob[data_start:-len(S.END)]
    for mutate, pattern in [
        (lambda h: h["arrays"][0].update(shape=[3, 5]), "do not hold"),
        (lambda h: h["arrays"][0].update(offset=-64), "bad offset"),
        (lambda h: h["arrays"][0].update(offset=10 ** 6), "outside the data"),
        (lambda h: h["arrays"][0].update(crc32=1), "checksum"),
        (lambda h: h["arrays"][0].update(dtype="complex1024"), "unknown dtype"),
        (lambda h: h["arrays"].append(7), "not an object"),
        (lambda h: h.update(root={"$float": "big"}), "bad \\$float"),
        (lambda h: h.update(root={"$bytes": "!!"}), "base64"),
    ]:
        h = json.loads(json.dumps(header))
        mutate(h)
        with pytest.raises(RuntimeError, match=pattern):
            rg.load(io.BytesIO(_file(h, data)))


def test_map_location_errors_pass_through():
    """An exception raised by the caller's map_location is the caller's, not a corrupt
    file: it reaches the caller unchanged."""
    blob = _valid_blob()

    def boom(t, loc):
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        rg.load(io.BytesIO(blob), map_location=boom)


# ----------------------------------------------------------------------------------
# temporary files of killed saves


def _temps(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".retrograd-tmp"))


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temp_file_is_removed_by_the_next_save(tmp_path):
    path = tmp_path / "ckpt.pt"
    host = atomic_write._host_tag()
    stale = tmp_path / f".ckpt.pt.{host}.{_dead_pid()}.0badc0de.retrograd-tmp"
    stale.write_bytes(b"half a checkpoint")
    alive = tmp_path / f".ckpt.pt.{host}.{os.getpid()}.12345678.retrograd-tmp"
    alive.write_bytes(b"someone is writing this")  # a live writer (this process)
    other_host = tmp_path / f".ckpt.pt.0000abcd.{_dead_pid()}.12345678.retrograd-tmp"
    other_host.write_bytes(b"another machine")
    other_file = tmp_path / f".other.pt.{host}.{_dead_pid()}.12345678.retrograd-tmp"
    other_file.write_bytes(b"another target")
    rg.save({"v": 1}, path)
    assert rg.load(path) == {"v": 1}
    left = _temps(tmp_path)
    assert stale.name not in left
    assert alive.name in left and other_file.name in left
    assert (other_host.name in left) == (host != "0000abcd")


_CHILD = textwrap.dedent("""
    import os, sys, time
    import retrograd as rg
    from retrograd import serialization as S

    real = S._write

    def slow(f, *args):
        f.write(b"partial bytes")
        f.flush()
        print("WRITING", flush=True)
        time.sleep(60)
        real(f, *args)

    S._write = slow
    rg.save({"w": rg.ones(1000)}, sys.argv[1])
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_save_killed_mid_write_leaves_a_temp_that_the_next_save_removes(tmp_path, sig):
    path = tmp_path / "ckpt.pt"
    rg.save({"v": "old"}, path)
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.strip() == "WRITING", line
        left = _temps(tmp_path)
        assert len(left) == 1 and f".{child.pid}." in left[0]
        child.send_signal(sig)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    assert child.returncode == -sig
    assert rg.load(path) == {"v": "old"}  # the old file is intact
    assert len(_temps(tmp_path)) == 1  # the killed writer's temporary file is left over
    rg.save({"v": "new"}, path)
    assert rg.load(path) == {"v": "new"}
    assert _temps(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
