"""The dtype objects of PyTorch 2.13 that retrograd names without making tensors of them
(Note [Tensorless dtypes]): attributes against torch, and a clear error on creation."""

import pickle

import numpy as np
import pytest
import torch

import retrograd as rt

NAMES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
         "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "int1", "int2", "int3",
         "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6",
         "uint7"]
BITS = ["bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"]


@pytest.mark.parametrize("name", NAMES)
def test_attributes_match_torch(name):
    ours, theirs = getattr(rt, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) == f"torch.{name}"
    assert (ours.itemsize, ours.is_floating_point, ours.is_signed, ours.is_complex) == \
        (theirs.itemsize, theirs.is_floating_point, theirs.is_signed, theirs.is_complex)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert ours != rt.float32 and ours == ours


@pytest.mark.parametrize("name", BITS)
def test_bits_types(name):
    ours, theirs = getattr(rt, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and ours.itemsize == theirs.itemsize
    assert ours.is_floating_point is theirs.is_floating_point is False
    for d in (ours, theirs):
        with pytest.raises(RuntimeError, match="Bits types are undefined"):
            assert d.is_signed is not None


def test_numpy_types_behind_them():
    assert rt.uint16.np == np.uint16 and rt.uint64.np == np.uint64
    assert rt.float8_e4m3fn.np.name == "float8_e4m3fn" and rt.float8_e8m0fnu.np.itemsize == 1
    assert rt.int3.np is None and rt.float4_e2m1fn_x2.np is None


@pytest.mark.parametrize("name", ["uint16", "uint64", "float8_e5m2", "int4", "bits8"])
def test_making_a_tensor_raises_with_the_fix(name):
    d = getattr(rt, name)
    for make in (lambda: rt.zeros(2, dtype=d), lambda: rt.tensor([1], dtype=d),
                 lambda: rt.ones(2).to(d), lambda: rt.arange(3, dtype=d)):
        with pytest.raises(TypeError, match=f"retrograd has no tensors of dtype torch.{name}"):
            make()
