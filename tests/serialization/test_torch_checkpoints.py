"""Checkpoints in PyTorch's zip format: files from torch.save load in retrograd, files
from retrograd.save load in torch.load(weights_only=True), malicious files run nothing."""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile

import pytest
import torch

import retrograd as rg


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _rg_bytes(obj) -> bytes:
    buf = io.BytesIO()
    rg.save(obj, buf)
    return buf.getvalue()


def test_torch_state_dicts_and_views_load_with_shared_storage():
    a = torch.randn(3, 4)
    obj = {"a": a, "v": a[1:, ::2], "t": a.t(), "p": torch.nn.Parameter(torch.ones(2)),
           "bf": torch.arange(5).to(torch.bfloat16), "h": torch.ones(2, dtype=torch.float16),
           "i": torch.arange(3), "b": torch.tensor([True, False]), "e": torch.ones(0, 3),
           "g": torch.ones(2, requires_grad=True),
           "meta": (torch.float32, torch.Size([2, 3]), [1, 2.5, None, "s", b"xy"], {3, 4},
                    collections.OrderedDict(x=1), 1 + 2j)}
    out = rg.load(io.BytesIO(_torch_bytes(obj)))
    for k in ("a", "v", "t", "bf", "h", "i", "b", "e"):
        assert out[k].dtype.name == str(obj[k].dtype).split(".")[1], k
        assert out[k].tolist() == obj[k].tolist(), k
    assert isinstance(out["p"], rg.nn.Parameter) and out["p"].requires_grad
    assert out["g"].requires_grad and not out["a"].requires_grad
    assert out["meta"] == (rg.float32, rg.Size([2, 3]), [1, 2.5, None, "s", b"xy"], {3, 4},
                           collections.OrderedDict(x=1), 1 + 2j)
    assert isinstance(out["meta"][1], rg.Size) and isinstance(out["meta"][4],
                                                              collections.OrderedDict)
    with rg.no_grad():
        out["a"][2, 2] = -7.0
    assert out["v"][1, 1].item() == -7.0 and out["t"][2, 2].item() == -7.0


def test_torch_optimizer_state_dict_loads():
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    sd = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}
    out = rg.load(io.BytesIO(_torch_bytes(sd)))
    assert list(out["model"]) == ["weight", "bias"]
    assert out["model"]["weight"].tolist() == model.weight.tolist()
    st = out["opt"]["state"][0]
    assert st["exp_avg"].tolist() == sd["opt"]["state"][0]["exp_avg"].tolist()
    assert out["opt"]["param_groups"][0]["lr"] == 0.01 and out["epoch"] == 3


def test_retrograd_files_load_in_torch_weights_only(tmp_path):
    x = rg.arange(12.0).reshape(3, 4)
    p = rg.nn.Parameter(rg.ones(2))
    obj = {"x": x, "v": x[1:, 1::2], "tt": x.t(), "flip": rg.flip(x, [0]), "same": x,
           "rg": rg.ones(2, requires_grad=True), "p": p, "bf": rg.ones(3, dtype=rg.bfloat16),
           "h": rg.ones(1, dtype=rg.float16), "i": rg.arange(4), "m": rg.ones(2) > 0,
           "meta": (rg.float64, rg.Size([1, 2]), collections.OrderedDict(a=[1, None]), {5})}
    path = tmp_path / "ck.pt"
    rg.save(obj, path)
    back = torch.load(path, weights_only=True)
    for k in ("x", "v", "tt", "flip", "bf", "h", "i", "m"):
        assert back[k].tolist() == obj[k].tolist(), k
        assert str(back[k].dtype) == str(obj[k].dtype), k
    assert back["same"] is back["x"] and isinstance(back["p"], torch.nn.Parameter)
    assert back["rg"].requires_grad and not back["x"].requires_grad
    assert back["meta"] == (torch.float64, torch.Size([1, 2]),
                            collections.OrderedDict(a=[1, None]), {5})
    back["x"][1, 1] = 99.0
    assert back["v"][0, 0].item() == 99.0 and back["tt"][1, 1].item() == 99.0
    assert back["flip"][1, 1].item() == 5.0  # a flipped copy is its own storage
    # and back again: retrograd reads what it wrote, with the same sharing
    again = rg.load(path)
    with rg.no_grad():
        again["x"][0, 1] = -1.0
    assert again["tt"][1, 0].item() == -1.0


class _Evil:
    marker = ""

    def __reduce__(self):
        return (os.system, ("touch " + _Evil.marker,))


def test_malicious_zip_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    _Evil.marker = str(marker)
    blob = _torch_bytes({"w": torch.ones(1), "x": _Evil()})
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*"
                                                     "GLOBAL (posix|nt).system"):
        rg.load(io.BytesIO(blob))
    assert not marker.exists()


def _relocate(blob: bytes, old: bytes, new: bytes) -> bytes:
    """The same archive with ``old`` replaced by ``new`` in data.pkl (a storage location)."""
    src, out = zipfile.ZipFile(io.BytesIO(blob)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                assert old in data
                data = data.replace(old, new)
            dst.writestr(name, data)
    return out.getvalue()


def test_map_location_forms_and_cuda_locations(tmp_path):
    blob = _rg_bytes({"w": rg.arange(3)})
    cuda_blob = _relocate(blob, b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    for b in (blob, cuda_blob):
        assert rg.load(io.BytesIO(b))["w"].tolist() == [0, 1, 2]
        assert rg.load(io.BytesIO(b), map_location="cpu")["w"].tolist() == [0, 1, 2]
        assert rg.load(io.BytesIO(b), map_location={"cuda:0": "cpu"})["w"].tolist() == [0, 1, 2]
        seen = []
        out = rg.load(io.BytesIO(b), map_location=lambda s, loc, seen=seen: seen.append(loc))
        assert out["w"].tolist() == [0, 1, 2] and seen[0] in ("cpu", "cuda:0")
    assert torch.load(io.BytesIO(cuda_blob), weights_only=True,
                      map_location="cpu")["w"].tolist() == [0, 1, 2]


def test_corrupt_zip_raises_one_clear_error():
    blob = _rg_bytes({"w": rg.arange(64.0)})
    for bad in (blob[: len(blob) // 2], blob[:-30], blob[:200] + b"\xff" * 8 + blob[208:]):
        with pytest.raises((RuntimeError, pickle.UnpicklingError)):
            rg.load(io.BytesIO(bad))
