"""The dtype objects of PyTorch 2.13 that retrograd names but makes no tensors of:
unsigned 16/32/64-bit integers, the float8/float4 formats, the ``bits*`` types and the
sub-byte ``int1``..``int7``/``uint1``..``uint7``.

Example:
    >>> import retrograd as torch
    >>> torch.uint16.itemsize, torch.float8_e4m3fn.is_floating_point, torch.uint16.is_signed
    (2, True, False)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtype as D

__all__ = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits1x8", "bits2x4",
           "bits4x2", "bits8", "bits16", "int1", "int2", "int3", "int4", "int5", "int6", "int7",
           "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7"]

# Note [Tensorless dtypes]
# PyTorch 2.13 makes tensors of these dtypes but runs few ops on them (``+`` of two
# uint16 tensors raises NotImplementedError "add_stub" not implemented for 'UInt16'):
# they are storage formats for quantization kernels and accelerators. retrograd gives
# each its dtype object with PyTorch's attributes (``itemsize``, ``is_floating_point``,
# ``is_signed``; the ``bits*`` types raise "Bits types are undefined" for the last one,
# as PyTorch does) and the NumPy type behind it where one exists (``np``: NumPy's
# unsigned integers, ml_dtypes' float8 formats), so code that names or compares them
# works. Making a tensor of one raises TypeError from ``as_dtype`` with the cause and
# the fix (convert to a supported dtype first): no retrograd kernel handles them.


class _TensorlessDtype(D.dtype):
    """A dtype retrograd names but makes no tensors of (Note [Tensorless dtypes])."""

    __slots__ = ("_bits",)

    def __init__(self, name: str, np_type, itemsize: int, floating: bool, signed: bool,
                 bits: bool = False) -> None:
        self.name = name
        self.np = None if np_type is None else np.dtype(np_type)
        self.category = -1
        self.itemsize = itemsize
        self._bits = bits
        self.is_floating_point = floating
        if not bits:
            self.is_signed = signed

    def __getattribute__(self, attr: str):
        if attr == "is_signed" and object.__getattribute__(self, "_bits"):
            raise RuntimeError("Bits types are undefined")
        return object.__getattribute__(self, attr)

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name: str) -> _TensorlessDtype:
    return globals()[name]


uint16 = _TensorlessDtype("uint16", np.uint16, 2, False, False)
uint32 = _TensorlessDtype("uint32", np.uint32, 4, False, False)
uint64 = _TensorlessDtype("uint64", np.uint64, 8, False, False)
float8_e4m3fn = _TensorlessDtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 1, True, True)
float8_e5m2 = _TensorlessDtype("float8_e5m2", ml_dtypes.float8_e5m2, 1, True, True)
float8_e4m3fnuz = _TensorlessDtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 1, True, True)
float8_e5m2fnuz = _TensorlessDtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 1, True, True)
float8_e8m0fnu = _TensorlessDtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, 1, True, False)
# two float4 values packed in a byte: NumPy has no packed type (ml_dtypes' float4_e2m1fn
# spends a byte on each value)
float4_e2m1fn_x2 = _TensorlessDtype("float4_e2m1fn_x2", None, 1, True, True)
bits1x8 = _TensorlessDtype("bits1x8", None, 1, False, False, bits=True)
bits2x4 = _TensorlessDtype("bits2x4", None, 1, False, False, bits=True)
bits4x2 = _TensorlessDtype("bits4x2", None, 1, False, False, bits=True)
bits8 = _TensorlessDtype("bits8", None, 1, False, False, bits=True)
bits16 = _TensorlessDtype("bits16", None, 2, False, False, bits=True)
int1, int2, int3, int4, int5, int6, int7 = (
    _TensorlessDtype(f"int{n}", None, 1, False, True) for n in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    _TensorlessDtype(f"uint{n}", None, 1, False, False) for n in range(1, 8))
