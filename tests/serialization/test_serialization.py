"""retrograd.save/load (a format without code) and the safetensors reader/writer."""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import struct
import zlib

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd import safetensors as st
from retrograd import serialization as S

pytestmark = pytest.mark.filterwarnings("ignore:this checkpoint is in retrograd's previous")

ALL_DTYPES = [rg.float16, rg.bfloat16, rg.float32, rg.float64, rg.uint8, rg.int8, rg.int16,
              rg.int32, rg.int64, rg.bool]


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    rg.save(obj, buf)
    buf.seek(0)
    return rg.load(buf, **kw)


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4)])
def test_tensor_round_trip_every_dtype(dt, shape):
    t = (rg.arange(int(np.prod(shape))) % 3).reshape(shape).to(dt)
    out = _roundtrip(t)
    assert out.dtype == dt and out.shape == t.shape and rg.equal(out, t)


def test_nested_structures_round_trip():
    w = rg.randn(3, 2)
    obj = {
        "state": {0: {"step": rg.tensor(3.0), "exp_avg": w}, 1: {}},
        "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None,
                          "amsgrad": False}],
        "odict": collections.OrderedDict([("b", 1), ("a", 2)]),
        "floats": [float("inf"), -float("inf"), 1e-300, -0.0, 1.0, 2 ** 70],
        "text": "héllo", "blob": b"\x00\x01", "size": rg.Size([2, 3]), "dtype": rg.bfloat16,
        (1, "k"): "tuple key", 2.5: "float key", None: "none key",
        "set": {1, "a"}, "np_scalar": np.float32(1.5),
        "tied": [w, w],
    }
    out = _roundtrip(obj)
    assert isinstance(out["odict"], collections.OrderedDict) and list(out["odict"]) == ["b", "a"]
    assert out["param_groups"] == obj["param_groups"]
    assert out["floats"][:2] == [float("inf"), -float("inf")]
    assert out["floats"][2:] == obj["floats"][2:] and str(out["floats"][3]) == "-0.0"
    assert out["text"] == "héllo" and out["blob"] == b"\x00\x01"
    assert out["size"] == rg.Size([2, 3]) and isinstance(out["size"], rg.Size)
    assert out["dtype"] is rg.bfloat16
    assert out[(1, "k")] == "tuple key" and out[2.5] == "float key" and out[None] == "none key"
    assert out["set"] == {1, "a"}
    assert out["np_scalar"] == 1.5
    assert out["tied"][0] is out["tied"][1] and out["tied"][0] is out["state"][0]["exp_avg"]
    assert rg.equal(out["tied"][0], w)
    assert math_nan(_roundtrip(float("nan")))


def math_nan(x) -> bool:
    return x != x


def test_requires_grad_is_kept_and_loaded_tensors_are_independent():
    a = rg.ones(2, requires_grad=True)
    out = _roundtrip({"a": a, "b": rg.zeros(2)})
    assert out["a"].requires_grad and out["a"].is_leaf and not out["b"].requires_grad
    with rg.no_grad():
        out["b"].add_(1)
    assert out["a"].tolist() == [1.0, 1.0]


def test_save_to_path_and_load_with_compat_arguments(tmp_path):
    path = tmp_path / "x.pt"
    rg.save({"w": rg.arange(3)}, path)
    assert rg.load(path, map_location="cpu", weights_only=True)["w"].tolist() == [0, 1, 2]
    assert rg.load(str(path), map_location=rg.device("cpu"))["w"].tolist() == [0, 1, 2]
    assert rg.load(path, map_location={"cuda:0": "cpu"})["w"].tolist() == [0, 1, 2]
    assert rg.load(path, map_location=lambda t, loc: t * 2)["w"].tolist() == [0, 2, 4]
    assert rg.load(path, mmap=True)["w"].tolist() == [0, 1, 2]
    assert rg.load(path, weights_only=False)["w"].tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="cuda"):
        rg.load(path, map_location="cuda")


def test_unsupported_objects_are_refused_with_the_reason():
    class Model:
        def state_dict(self):
            return {}

    with pytest.raises(TypeError, match="can't save an object of type Model at root\\['m'\\].*"
                                        "Save model.state_dict\\(\\)"):
        rg.save({"m": Model()}, io.BytesIO())
    with pytest.raises(TypeError, match="type function at root\\[0\\]"):
        rg.save([lambda: 0], io.BytesIO())
    with pytest.raises(TypeError, match="type ndarray.*torch.from_numpy"):
        rg.save({"a": np.zeros(2)}, io.BytesIO())
    cyc: list = []
    cyc.append(cyc)
    with pytest.raises(ValueError, match="contains itself"):
        rg.save(cyc, io.BytesIO())


def test_atomic_write_keeps_the_old_file_on_a_crash(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    rg.save({"v": 1}, path)
    before = path.read_bytes()

    def crash(f, obj):
        f.write(b"partial")
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(S, "_write", crash)
    with pytest.raises(KeyboardInterrupt):
        rg.save({"v": 2}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]
    monkeypatch.undo()
    rg.save({"v": 3}, path)
    assert rg.load(path) == {"v": 3} and os.listdir(tmp_path) == ["ckpt.pt"]


def _blob(obj) -> bytes:
    buf = io.BytesIO()
    S._save_v1(obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("damage,message", [
    (lambda b: b[:len(b) // 2], "the file is truncated"),
    (lambda b: b[:10], "too short"),
    (lambda b: b"", "too short"),
    (lambda b: b + b"junk", "unexpected bytes after its end"),
    (lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], "header checksum does not match"),
    (lambda b: b[:-20] + bytes([b[-20] ^ 0xFF]) + b[-19:], "fails its checksum"),
    (lambda b: b"XXXXXXXX" + b[8:], "not a retrograd checkpoint"),
    (lambda b: b"PK\x05\x06" + b[4:], "zip archive but not a complete one"),
    (lambda b: b[:8] + struct.pack("<I", 99) + b[12:], "format version 99"),
    (lambda b: b[:-1] + b"?", "end marker is missing"),
])
def test_damaged_files_raise_a_clear_error(damage, message):
    good = _blob({"w": rg.arange(64, dtype=rg.float32), "n": 1})
    with pytest.raises(RuntimeError, match=message):
        rg.load(io.BytesIO(damage(good)))


def _forge(header: dict, data: bytes = b"") -> bytes:
    """A file with a valid frame and checksums around an arbitrary header."""
    text = json.dumps(header).encode()
    pre = S._PRE.pack(S.MAGIC, S.VERSION, zlib.crc32(text), len(text), len(data))
    pad = b"\0" * S._pad(S._PRE.size + len(text))
    return pre + text + pad + data + S.END


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch " + _Evil.marker,))


def test_malicious_files_execute_nothing(tmp_path):
    marker = tmp_path / "pwned"
    _Evil.marker = str(marker)
    # 1. a PyTorch (zip + pickle) checkpoint whose unpickling would run a command
    evil_pt = tmp_path / "evil.pt"
    torch.save({"x": _Evil()}, evil_pt)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*"
                                                     "GLOBAL (posix|nt).system"):
        rg.load(evil_pt)
    # 2. a bare pickle (read as PyTorch's legacy format, whose first pickle is refused)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL (posix|nt).system"):
        rg.load(io.BytesIO(pickle.dumps(_Evil(), protocol=2)))
    # 3. retrograd's own frame with a header naming a callable
    forged = _forge({"format": "retrograd.save", "version": 1, "arrays": [],
                     "root": {"$class": ["os", "system"], "args": ["touch " + str(marker)]}})
    with pytest.raises(RuntimeError, match="unexpected value|unknown tag"):
        rg.load(io.BytesIO(forged))
    forged = _forge({"format": "retrograd.save", "version": 1, "arrays": [],
                     "root": {"$reduce": "os.system"}})
    with pytest.raises(RuntimeError, match="unknown tag '\\$reduce'"):
        rg.load(io.BytesIO(forged))
    # 4. an array entry pointing outside the data, and a lying shape
    forged = _forge({"format": "retrograd.save", "version": 1, "root": {"$tensor": 0},
                     "arrays": [{"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16,
                                 "crc32": 0, "kind": "tensor"}]}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="outside the data section"):
        rg.load(io.BytesIO(forged))
    forged = _forge({"format": "retrograd.save", "version": 1, "root": {"$tensor": 0},
                     "arrays": [{"dtype": "float32", "shape": [1000], "offset": 0, "nbytes": 8,
                                 "crc32": 0, "kind": "tensor"}]}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="do not hold 1000 elements"):
        rg.load(io.BytesIO(forged))
    forged = _forge({"format": "retrograd.save", "version": 1, "root": {"$tensor": 3},
                     "arrays": []})
    with pytest.raises(RuntimeError, match="bad array reference"):
        rg.load(io.BytesIO(forged))
    assert not marker.exists()


def test_optimizer_and_scheduler_state_round_trip():
    w = rg.ones(3, requires_grad=True)
    w.grad = rg.ones(3)
    opt = rg.optim.Adam([w], lr=0.1)
    sched = rg.optim.lr_scheduler.ReduceLROnPlateau(opt)
    opt.step()
    sched.step(1.0)
    out = _roundtrip({"opt": opt.state_dict(), "sched": sched.state_dict()})
    assert out["opt"]["param_groups"] == opt.state_dict()["param_groups"]
    assert out["sched"]["best"] == 1.0 and out["sched"]["mode_worse"] == float("inf")


# ----------------------------------------------------------------------------------
# safetensors

_CODE = {rg.float64: ("F64", "<f8"), rg.float32: ("F32", "<f4"), rg.float16: ("F16", "<f2"),
         rg.int64: ("I64", "<i8"), rg.int32: ("I32", "<i4"), rg.int16: ("I16", "<i2"),
         rg.int8: ("I8", "i1"), rg.uint8: ("U8", "u1"), rg.bool: ("BOOL", "?")}


def _hand_parse(data: bytes):
    """A safetensors reader written from the specification alone."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    return header, meta, body


def test_safetensors_written_bytes_follow_the_spec(tmp_path):
    tensors = {d.name: (rg.arange(6) - 2).reshape(2, 3).to(d) for d in _CODE}
    tensors["scalar"] = rg.tensor(2.5, dtype=rg.float64)
    tensors["empty"] = rg.zeros(0, 3)
    path = tmp_path / "m.safetensors"
    st.save_file(tensors, path, metadata={"format": "pt", "note": "x"})
    data = path.read_bytes()
    header, meta, body = _hand_parse(data)
    assert meta == {"format": "pt", "note": "x"}
    assert (8 + struct.unpack("<Q", data[:8])[0]) % 8 == 0
    covered = sorted(tuple(v["data_offsets"]) for v in header.values())
    assert covered[0][0] == 0 and covered[-1][1] == len(body)
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
    for name, t in tensors.items():
        info = header[name]
        code, np_dt = _CODE[t.dtype]
        assert info["dtype"] == code and info["shape"] == list(t.shape)
        b, e = info["data_offsets"]
        np.testing.assert_array_equal(np.frombuffer(body[b:e], dtype=np_dt).reshape(t.shape),
                                      t.numpy())
    # save() writes what save_file wrote (the safetensors package orders metadata keys as
    # its hash map does, so the bytes of two writes may differ in that order alone)
    again = _hand_parse(st.save(tensors, {"format": "pt", "note": "x"}))
    assert again == (header, meta, body)


def test_safetensors_reads_a_file_made_from_the_spec(tmp_path):
    import ml_dtypes

    parts = [("weight", "F32", [2, 2], np.array([[1, 2], [3, 4]], "<f4").tobytes()),
             ("ids", "I64", [3], np.array([7, 8, 9], "<i8").tobytes()),
             ("mask", "BOOL", [2], bytes([1, 0])),
             ("half", "BF16", [2], np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16).tobytes())]
    header, body = {"__metadata__": {"source": "hand"}}, b""
    for name, code, shape, raw in parts:
        header[name] = {"dtype": code, "shape": shape,
                        "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path = tmp_path / "hand.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)
    out = st.load_file(path)
    assert out["weight"].tolist() == [[1.0, 2.0], [3.0, 4.0]] and out["weight"].dtype == rg.float32
    assert out["ids"].tolist() == [7, 8, 9] and out["mask"].tolist() == [True, False]
    assert out["half"].dtype == rg.bfloat16 and out["half"].tolist() == [1.5, -2.0]
    with st.safe_open(path, framework="pt") as f:
        assert f.keys() == ["half", "ids", "mask", "weight"]
        assert f.metadata() == {"source": "hand"}
        assert f.get_tensor("ids").tolist() == [7, 8, 9]
        with pytest.raises(st.SafetensorError, match="no tensor named 'nope'"):
            f.get_tensor("nope")


def _st_file(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


@pytest.mark.parametrize("data,message", [
    (b"\x01\x02", "header too small"),
    (struct.pack("<Q", 10 ** 12) + b"{}", "header too large"),
    (struct.pack("<Q", 50) + b"{}", "invalid header length"),
    (struct.pack("<Q", 2) + b"[]", "invalid JSON in header"),
    (struct.pack("<Q", 3) + b"{x}", "invalid JSON in header"),
    (_st_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4),
     "file not fully covered"),
    (_st_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
     "file not fully covered"),
    (_st_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
     "invalid shape, data type, or offset"),
    (_st_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
               "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}}, b"\0" * 6),
     "invalid offset for tensor `b`"),
    (_st_file({"a": {"dtype": "U32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "U32, which retrograd has no dtype for"),
    (_st_file({"a": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "unknown variant `Q7`"),
    (_st_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "invalid value: integer `-1`"),
])
def test_safetensors_rejects_invalid_files(data, message):
    with pytest.raises(st.SafetensorError, match=message):
        st.load(data)


def test_safetensors_save_errors():
    with pytest.raises(TypeError, match="stores tensors only"):
        st.save({"a": [1, 2]})
    with pytest.raises(TypeError, match="metadata must be a dict of str -> str"):
        st.save({"a": rg.zeros(1)}, metadata={"n": 1})
    with pytest.raises(ValueError, match="reserved"):
        st.save({"__metadata__": rg.zeros(1)})


def test_safetensors_round_trip_non_contiguous_and_interop_with_torch_numpy():
    t = rg.arange(12, dtype=rg.float32).reshape(3, 4).t()
    out = st.load(st.save({"t": t}))["t"]
    assert rg.equal(out, t) and out.is_contiguous()
    # the same bytes read by torch (via NumPy) give the same tensor
    header, _, body = _hand_parse(st.save({"t": t}))
    b, e = header["t"]["data_offsets"]
    ref = torch.from_numpy(np.frombuffer(body[b:e], dtype="<f4").reshape(4, 3).copy())
    assert ref.tolist() == t.tolist()
