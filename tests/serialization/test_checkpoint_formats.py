"""Every checkpoint format retrograd.load reads, against real torch 2.13: torch.save's zip and
legacy (pre-1.6) formats, mmap and map_location, retrograd's previous own format, and
safetensors files read and written both ways."""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import tarfile
import zipfile

import numpy as np
import pytest
import torch

import retrograd as rg

FORMATS = ["zip", "legacy"]


def _torch_bytes(obj, fmt: str) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=(fmt == "zip"))
    return buf.getvalue()


def _load(blob: bytes, **kw):
    return rg.load(io.BytesIO(blob), **kw)


def _storage_offset(r) -> int:
    """Where a loaded tensor starts in its storage (the array it was rebuilt over)."""
    storage = r._data
    while isinstance(storage.base, np.ndarray):
        storage = storage.base
    start = storage.__array_interface__["data"][0]
    return (r._data.__array_interface__["data"][0] - start) // r._data.itemsize


def _same(r, t) -> None:
    """A retrograd tensor equals a torch tensor: dtype, shape, strides, storage offset,
    values."""
    assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
    assert r.stride() == t.stride() and r.tolist() == t.tolist()
    if t.numel():
        assert _storage_offset(r) == t.storage_offset()


def _objects():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(4, 5, generator=g)
    return {
        "views": {"a": a, "rows": a[1:3], "cols": a[:, 1::2], "t": a.t(), "elem": a[2, 3],
                  "flat": a.view(-1)[7:]},
        "dtypes": {d: (torch.arange(-3, 3) * 1.5).to(getattr(torch, d)) for d in
                   ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                    "int8", "uint8", "bool")},
        "shapes": {"scalar": torch.tensor(2.5), "iscalar": torch.tensor(7),
                   "empty": torch.ones(0, 3), "empty_int": torch.zeros(2, 0, dtype=torch.int32),
                   "deep": torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)},
        "nested": [(torch.ones(2), {"k": [torch.zeros(1), None, 3, 2.5, "s", b"b"]}),
                   collections.OrderedDict(x=torch.arange(2)), {1, 2}, 1 + 2j,
                   torch.float16, torch.Size([2, 3])],
    }


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["views", "dtypes", "shapes"])
def test_torch_files_load_with_dtypes_geometry_and_shared_storage(fmt, kind):
    obj = _objects()[kind]
    out = _load(_torch_bytes(obj, fmt))
    assert list(out) == list(obj)
    for k in obj:
        _same(out[k], obj[k])
    if kind == "views":  # one storage, as in torch: a write shows through every view
        with rg.no_grad():
            out["a"][2, 3] = 100.0
        obj["a"][2, 3] = 100.0
        for k in obj:
            _same(out[k], obj[k])


@pytest.mark.parametrize("fmt", FORMATS)
def test_torch_nested_containers_load(fmt):
    obj = _objects()["nested"]
    out = _load(_torch_bytes(obj, fmt))
    (t, d), od, s, c, dt, size = out
    assert t.tolist() == [1.0, 1.0] and d["k"][0].tolist() == [0.0]
    assert d["k"][1:] == [None, 3, 2.5, "s", b"b"]
    assert isinstance(od, collections.OrderedDict) and od["x"].tolist() == [0, 1]
    assert (s, c, dt, size) == ({1, 2}, 1 + 2j, rg.float16, rg.Size([2, 3]))
    assert isinstance(size, rg.Size)


@pytest.mark.parametrize("fmt", FORMATS)
def test_torch_model_and_optimizer_state_dicts_load(fmt):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 3)).square().sum().backward()
    opt.step()
    params = {"p": torch.nn.Parameter(torch.ones(2)),
              "g": torch.ones(2, requires_grad=True)}
    ckpt = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3, **params}
    out = _load(_torch_bytes(ckpt, fmt))
    assert isinstance(out["model"], collections.OrderedDict)
    assert list(out["model"]) == list(ckpt["model"])
    for k, v in ckpt["model"].items():
        _same(out["model"][k], v)
    assert out["model"]["1.num_batches_tracked"].dtype == rg.int64
    for i, st in ckpt["opt"]["state"].items():
        for k, v in st.items():
            _same(out["opt"]["state"][i][k], v)
    assert out["opt"]["param_groups"] == ckpt["opt"]["param_groups"]
    assert isinstance(out["p"], rg.nn.Parameter) and out["p"].requires_grad
    assert out["g"].requires_grad and not out["model"]["0.weight"].requires_grad
    # the state dicts drive retrograd's own modules and optimizers
    rg_model = rg.nn.Sequential(rg.nn.Linear(3, 4), rg.nn.BatchNorm1d(4), rg.nn.Linear(4, 2))
    rg_model.load_state_dict(out["model"])
    rg.optim.Adam(rg_model.parameters(), lr=0.01).load_state_dict(out["opt"])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    model.eval()
    rg_model.eval()
    np.testing.assert_allclose(rg_model(rg.tensor(x)).detach().numpy(),
                               model(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------------
# legacy files made by hand: storage views (view_metadata, PyTorch < 1.0) and devices


class _Storage:
    def __init__(self, key: str, values: list, location: str = "cpu", view=None,
                 numel: int | None = None):
        self.key, self.values, self.location, self.view = key, values, location, view
        self.numel = len(values) if numel is None else numel


class _T:
    """A float32 tensor over a _Storage, pickled as PyTorch pickles one."""

    def __init__(self, storage: _Storage, offset: int, size: tuple, stride: tuple):
        self.args = (storage, offset, size, stride)

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2,
                (*self.args, False, collections.OrderedDict()))


class _LegacyPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            view = obj.view
            root = view[0] if view else obj
            meta = (obj.key, view[1], len(obj.values)) if view else None
            return ("storage", torch.FloatStorage, root.key, root.location, root.numel, meta)
        return None


def _legacy_file(obj, roots: list[_Storage], keys=None, counts=None) -> bytes:
    """The legacy format, written from Note [PyTorch legacy checkpoints]."""
    buf = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001,
                 {"protocol_version": 1001, "little_endian": True,
                  "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(part, buf, protocol=2)
    _LegacyPickler(buf, protocol=2).dump(obj)
    pickle.dump([r.key for r in roots] if keys is None else keys, buf, protocol=2)
    for i, r in enumerate(roots):
        count = len(r.values) if counts is None else counts[i]
        buf.write(struct.pack("<q", count) + np.array(r.values, "<f4").tobytes())
    return buf.getvalue()


def test_hand_made_legacy_file_with_storage_views_and_cuda_location():
    root = _Storage("1", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], location="cuda:0")
    view = _Storage("2", [2.0, 3.0, 4.0], view=(root, 2))
    other = _Storage("3", [9.0, 8.0])
    obj = {"whole": _T(root, 0, (2, 3), (3, 1)), "part": _T(view, 1, (2,), (1,)),
           "other": _T(other, 0, (2,), (1,))}
    blob = _legacy_file(obj, [root, other])
    ref = torch.load(io.BytesIO(blob), weights_only=True, map_location="cpu")  # the oracle
    out = _load(blob)
    for k in obj:  # (offsets here count from the view's storage, not the root's)
        assert out[k].tolist() == ref[k].tolist() and out[k].stride() == ref[k].stride()
    with rg.no_grad():
        out["whole"][1, 0] = -1.0  # element 3 of the root: element 1 of the view
    assert out["part"].tolist() == [-1.0, 4.0]
    locations = []
    _load(blob, map_location=lambda s, loc: locations.append(loc))
    assert locations == ["cuda:0", "cpu"]
    bad = _legacy_file({"x": _T(_Storage("2", [0.0] * 3, view=(root, 5)), 0, (1,), (1,))},
                       [root])
    with pytest.raises(RuntimeError, match="storage view .* outside its storage"):
        _load(bad)


@pytest.mark.parametrize("fmt", FORMATS)
def test_map_location_forms(fmt):
    obj = {"w": torch.arange(6.0).reshape(2, 3), "v": torch.arange(3)}
    blob = _torch_bytes(obj, fmt)
    for ml in (None, "cpu", b"cpu", rg.device("cpu"), {"cpu": "cpu"}, {"cuda:1": "cpu"},
               lambda s, loc: None, lambda s, loc: s):
        out = _load(blob, map_location=ml)
        _same(out["w"], obj["w"])
        _same(out["v"], obj["v"])
    # a callable may return a copy: the tensors are built over it, as torch does; a
    # legacy file's storages are filled from the file after map_location placed them
    out = _load(blob, map_location=lambda s, loc: s.clone() + 1)
    want = obj["w"] + (1 if fmt == "zip" else 0)
    assert out["w"].tolist() == want.tolist()
    if fmt == "legacy":
        ref = torch.load(io.BytesIO(blob), weights_only=True,
                         map_location=lambda s, loc: s.clone().fill_(1))
        assert ref["w"].tolist() == want.tolist()
    # the caller's exception comes through unchanged; a request for a GPU is refused
    with pytest.raises(KeyError, match="mine"):
        _load(blob, map_location=lambda s, loc: {}["mine"])
    for ml in ("cuda", {"cpu": "cuda:0"}, "cuda:1"):
        with pytest.raises(RuntimeError, match="cuda"):
            _load(blob, map_location=ml)


def _cuda_zip(blob: bytes) -> bytes:
    """The same zip checkpoint with every storage's location set to 'cuda:0'."""
    src, out = zipfile.ZipFile(io.BytesIO(blob)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(name, data)
    return out.getvalue()


def test_cuda_saved_zip_tensors_load_on_the_cpu():
    buf = io.BytesIO()
    rg.save({"w": rg.arange(4.0), "n": rg.arange(4.0)[1:]}, buf)
    blob = _cuda_zip(buf.getvalue())
    with pytest.raises(RuntimeError, match="CUDA"):  # torch itself needs a map_location
        torch.load(io.BytesIO(blob), weights_only=True)
    ref = torch.load(io.BytesIO(blob), weights_only=True, map_location="cpu")
    for ml in (None, "cpu", {"cuda:0": "cpu"}):
        out = _load(blob, map_location=ml)
        _same(out["w"], ref["w"])
        _same(out["n"], ref["n"])
        assert out["w"].device == rg.device("cpu")
    seen = []
    _load(blob, map_location=lambda s, loc: seen.append(loc))
    assert seen == ["cuda:0", "cuda:0"]


# ----------------------------------------------------------------------------------
# mmap


def test_mmap_zip_maps_the_file_and_writes_stay_private(tmp_path):
    path = tmp_path / "m.pt"
    a = torch.arange(12.0).reshape(3, 4)
    torch.save({"a": a, "v": a[1:, 2:], "i": torch.arange(3)}, path)
    before = path.read_bytes()
    out = rg.load(path, mmap=True)
    ref = torch.load(path, mmap=True, weights_only=True)
    for k in ("a", "v", "i"):
        _same(out[k], ref[k])
    base = out["a"]._data
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and not isinstance(base.obj, (bytes, bytearray))
    # torch's default mmap is MAP_PRIVATE: a write changes the tensor, never the file
    with rg.no_grad():
        out["a"][1, 2] = -5.0
    ref["a"][1, 2] = -5.0
    _same(out["v"], ref["v"])
    assert path.read_bytes() == before
    assert rg.load(str(path), mmap=True, map_location="cpu")["a"][1, 2].item() == 6.0


def test_mmap_refusals_match_torch(tmp_path):
    legacy = tmp_path / "legacy.pt"
    torch.save({"a": torch.ones(1)}, legacy, _use_new_zipfile_serialization=False)
    for f in (str(legacy), lambda: open(legacy, "rb")):
        with pytest.raises(RuntimeError) as want:
            torch.load(f() if callable(f) else f, mmap=True, weights_only=True)
        with pytest.raises(RuntimeError) as got:
            rg.load(f() if callable(f) else f, mmap=True)
        assert str(got.value) == str(want.value)
    blob = _torch_bytes({"a": torch.ones(1)}, "zip")
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        rg.load(io.BytesIO(blob), mmap=True)


# ----------------------------------------------------------------------------------
# malicious and damaged legacy files


class _Evil:
    marker = ""

    def __reduce__(self):
        return (os.system, ("touch " + _Evil.marker,))


def test_malicious_legacy_pickles_run_nothing(tmp_path):
    marker = tmp_path / "pwned"
    _Evil.marker = str(marker)
    blobs = [_torch_bytes({"w": torch.ones(1), "x": _Evil()}, "legacy"),
             pickle.dumps(_Evil(), protocol=2),  # where the magic number goes
             _legacy_file({"w": 1}, [], keys=_Evil())]  # where the storage keys go
    for blob in blobs:
        with pytest.raises(pickle.UnpicklingError,
                           match="Weights only load failed.*GLOBAL (posix|nt).system was not "
                                 "an allowed global"):
            _load(blob)
    assert not marker.exists()


def _damaged():
    good = _torch_bytes({"w": torch.arange(64.0), "v": torch.arange(5)}, "legacy")
    root = _Storage("1", [1.0, 2.0])
    t = {"t": _T(root, 0, (2,), (1,))}
    return [
        (good[:5], "truncated|corrupted"),
        (good[:200], "truncated|corrupted"),
        (good[:-1], "truncated"),
        (good[:len(good) - 200], "truncated"),
        (pickle.dumps(42, protocol=2), "Invalid magic number; corrupt file"),
        (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(7, protocol=2),
         "Invalid protocol version: 7"),
        (_legacy_file(t, [root], counts=[3]), "storage has wrong byte size"),
        (_legacy_file(t, [root], keys=[]), "storage keys does not match"),
        (_legacy_file({"t": _T(_Storage("1", [], numel=10**12), 0, (1,), (1,))}, []),
         "claims 1000000000000 elements"),
        (_legacy_file({"t": _T(root, 1, (2,), (1,))}, [root]), "reaches past its storage"),
    ]


@pytest.mark.parametrize("blob,message", _damaged())
def test_damaged_legacy_files_raise_one_runtime_error(blob, message):
    with pytest.raises(RuntimeError, match=message):
        _load(blob)


def test_tar_checkpoints_are_refused_as_torch_refuses_them(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("pickle")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    with pytest.raises(RuntimeError, match="Cannot use ``weights_only=True`` with files saved "
                                           "in the legacy .tar format"):
        _load(buf.getvalue())


# ----------------------------------------------------------------------------------
# retrograd's previous own format


def test_previous_retrograd_format_still_loads_with_a_deprecation_warning():
    # written by retrograd.save as of commit 49dcf2e (magic bytes, JSON header, raw arrays)
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                        "retrograd_v1_checkpoint.pt")
    with pytest.warns(DeprecationWarning, match="previous own format"):
        out = rg.load(path)
    assert out["w"].tolist() == [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]
    assert out["same"] is out["w"]
    assert out["bf"].dtype == rg.bfloat16 and out["bf"].tolist() == [1.5, -2.0]
    assert out["h"].dtype == rg.float16 and out["i"].tolist() == [-3, 7]
    assert out["b"].tolist() == [True, False] and out["scalar"].item() == 2.25
    assert out["scalar"].shape == () and out["empty"].shape == (0, 3)
    assert isinstance(out["p"], rg.nn.Parameter) and out["g"].requires_grad
    assert out["nd"].dtype == np.int16 and out["nd"].tolist() == [1, 2]
    assert out["meta"] == (rg.float16, rg.Size([2, 3]), b"xy", float("inf"),
                           collections.OrderedDict(a=1), {(1, 2): None}, [1, "two", 3.5])
    with pytest.warns(DeprecationWarning):
        mapped = rg.load(path, mmap=True, map_location="cpu")
    assert mapped["w"].tolist() == out["w"].tolist()
    # saving writes torch's zip format, which torch reads
    buf = io.BytesIO()
    del out["nd"]
    rg.save(out, buf)
    assert torch.load(io.BytesIO(buf.getvalue()), weights_only=True)["w"].tolist() \
        == out["w"].tolist()


# ----------------------------------------------------------------------------------
# safetensors, read and written both ways with the real safetensors.torch

ST_DTYPES = ("float64", "float32", "bfloat16", "float16", "int64", "int32", "int16", "int8",
             "uint8", "bool")


def _st_tensors():
    ts = {d: (torch.arange(-3, 3) * 1.25).reshape(2, 3).to(getattr(torch, d)) for d in ST_DTYPES}
    ts["scalar"] = torch.tensor(2.5, dtype=torch.bfloat16)
    ts["empty"] = torch.zeros(0, 3)
    return ts


def _rg_of(t: torch.Tensor):
    dtype = getattr(rg, str(t.dtype).split(".")[1])
    return rg.tensor(t.tolist(), dtype=dtype).reshape(tuple(t.shape))


def test_safetensors_written_by_retrograd_are_read_by_safetensors_torch(tmp_path):
    from safetensors.torch import load, load_file

    from retrograd import safetensors as rst

    ref = _st_tensors()
    ours = {k: _rg_of(v) for k, v in ref.items()}
    ours["t"], ref["t"] = ours["float32"].t(), ref["float32"].t().contiguous()  # a view
    path = tmp_path / "rg.safetensors"
    rst.save_file(ours, path, metadata={"by": "retrograd"})
    for back in (load_file(path), load(rst.save(ours))):
        assert sorted(back) == sorted(ref)
        for k, v in ref.items():
            assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
            assert torch.equal(back[k], v), k
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        assert f.metadata() == {"by": "retrograd"}


def test_safetensors_written_by_safetensors_torch_are_read_by_retrograd(tmp_path):
    from safetensors.torch import save, save_file

    from retrograd import safetensors as rst

    ref = _st_tensors()
    path = tmp_path / "torch.safetensors"
    save_file(ref, path, metadata={"format": "pt"})
    with rst.safe_open(path, framework="pt") as f:
        assert f.metadata() == {"format": "pt"} and f.keys() == sorted(ref)
        from_open = {k: f.get_tensor(k) for k in f.keys()}
    for out in (rst.load_file(path), rst.load(save(ref)), from_open, rg.load(path),
                rg.load(path, map_location="cpu")):
        assert sorted(out) == sorted(ref)
        for k, v in ref.items():
            assert str(out[k].dtype) == str(v.dtype) and tuple(out[k].shape) == v.shape, k
            assert out[k].tolist() == v.tolist(), k
    # loaded tensors are the caller's own: writable, independent of the file
    t = rst.load_file(path)["float32"]
    with rg.no_grad():
        t[0, 0] = 9.0
    assert rst.load_file(path)["float32"][0, 0].item() == -3.75
    # torch.load dispatches .safetensors paths to safetensors; so does retrograd.load
    for ml in ({"cpu": "cpu"}, lambda s, loc: s):
        with pytest.raises(RuntimeError) as want:
            torch.load(path, map_location=ml)
        with pytest.raises(RuntimeError) as got:
            rg.load(path, map_location=ml)
        assert str(got.value) == str(want.value)


def test_safetensors_dtypes_retrograd_lacks_and_a_missing_package(tmp_path, monkeypatch):
    from safetensors.torch import save

    from retrograd import safetensors as rst

    with pytest.raises(rst.SafetensorError, match="'u' has dtype U16, which retrograd has no"):
        rst.load(save({"u": torch.ones(2, dtype=torch.uint16)}))
    path = tmp_path / "u.safetensors"
    path.write_bytes(save({"u": torch.ones(2, dtype=torch.uint32)}))
    with pytest.raises(rst.SafetensorError, match="'u' has dtype U32"):
        rst.load_file(path)
    with pytest.raises(rst.SafetensorError, match="header too small.*damaged or not a "
                                                  "safetensors file"):
        rst.load(b"\x01")
    monkeypatch.setitem(__import__("sys").modules, "safetensors", None)
    with pytest.raises(ModuleNotFoundError, match="pip install 'retrograd\\[safetensors\\]'"):
        rst.save({"a": rg.ones(1)})
