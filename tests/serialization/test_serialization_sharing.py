"""Tensors that share memory when saved share it when loaded: views of one tensor, a
model whose parameters are views of one flat buffer, tied weights. Checked in retrograd's
own round trip and in both directions with torch 2.13's zip format."""

import io

import pytest
import torch

import retrograd as rt


def _roundtrip(obj, save, load):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


def _rt_load(buf):
    return rt.load(buf)


def _torch_load(buf):
    return torch.load(buf, weights_only=True)


WRITERS = {"retrograd": rt.save, "torch": torch.save}
READERS = {"retrograd": _rt_load, "torch": _torch_load}
PAIRS = [("retrograd", "retrograd"), ("retrograd", "torch"), ("torch", "retrograd")]


def _lib(name):
    return rt if name == "retrograd" else torch


@pytest.mark.parametrize("writer,reader", PAIRS)
def test_views_load_as_views_of_one_storage(writer, reader):
    lib = _lib(writer)
    x = lib.arange(12.0).reshape(3, 4)
    obj = {"x": x, "row": x[1], "t": x.t(), "strided": x[:, ::2], "copy": x.clone()}
    d = _roundtrip(obj, WRITERS[writer], READERS[reader])
    assert d["row"].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert d["t"].shape == (4, 3) and d["t"].stride() == (1, 4)
    d["x"].add_(100)
    assert d["row"].tolist() == [104.0, 105.0, 106.0, 107.0]
    assert d["t"][0].tolist() == [100.0, 104.0, 108.0]
    assert d["strided"][0].tolist() == [100.0, 102.0]
    assert d["copy"][0].tolist() == [0.0, 1.0, 2.0, 3.0]  # a clone stays its own memory
    assert d["x"].untyped_storage().data_ptr() == d["strided"].untyped_storage().data_ptr()
    assert d["x"].untyped_storage().data_ptr() != d["copy"].untyped_storage().data_ptr()


def _flat_model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 2))
    flat = lib.zeros(sum(p.numel() for p in model.parameters()))
    offset = 0
    for layer in model:
        for name, p in list(layer.named_parameters()):
            n = p.numel()
            setattr(layer, name, lib.nn.Parameter(flat[offset:offset + n].view_as(p)))
            offset += n
    return model, flat


@pytest.mark.parametrize("writer,reader", PAIRS)
def test_parameters_viewing_one_flat_buffer(writer, reader):
    lib = _lib(writer)
    model, flat = _flat_model(lib)
    d = _roundtrip({"model": model.state_dict(), "flat": flat}, WRITERS[writer], READERS[reader])
    d["flat"].fill_(7.0)
    for value in d["model"].values():
        assert set(value.flatten().tolist()) == {7.0}
    assert d["model"]["1.bias"].storage_offset() == 6 + 3 + 6


@pytest.mark.parametrize("writer,reader", PAIRS)
def test_tied_weights_stay_tied(writer, reader):
    lib = _lib(writer)
    emb = lib.nn.Embedding(4, 3)
    head = lib.nn.Linear(3, 4, bias=False)
    head.weight = emb.weight
    d = _roundtrip({"emb": emb.state_dict(), "head": head.state_dict()},
                   WRITERS[writer], READERS[reader])
    assert d["emb"]["weight"].data_ptr() == d["head"]["weight"].data_ptr()
    d["emb"]["weight"].zero_()
    assert d["head"]["weight"].abs().sum().item() == 0.0


def test_parameter_list_and_detached_alias_roundtrip():
    x = rt.nn.Parameter(rt.ones(4))
    d = _roundtrip([x, x.detach()[1:], x], rt.save, rt.load)
    assert type(d[0]) is rt.nn.Parameter and d[0] is d[2]
    with rt.no_grad():
        d[0].mul_(3)
    assert d[1].tolist() == [3.0, 3.0, 3.0]
