"""Misuse that used to leak NumPy's exception types and wording ("operands could not be
broadcast", "array is too big", "axis ... is out of bounds", MemoryError): each raises
PyTorch's type with PyTorch's message first, then retrograd's hint."""

from __future__ import annotations

import warnings

import pytest
import torch

import retrograd as R

CASES = [
    "T.zeros(4, 3).masked_fill(T.zeros(2, 3) > 0, 0.)",
    "T.zeros(4, 3).masked_fill(T.zeros(2, 3) > 0, T.tensor(0.))",
    "T.zeros(3, 4).masked_select(T.zeros(2, 4) > 0)",
    "T.broadcast_tensors(T.zeros(3, 4), T.zeros(5))",
    "T.broadcast_shapes((3, 4), (5,))",
    "T.broadcast_shapes((3, 1, 4), (2, 5))",
    "T.zeros(4).mT",
    "T.zeros(4).mH",
    "T.empty(2**62)",
    "T.empty(2**40, 2**40)",
    "T.zeros(2**61)",
    "T.ones(2**40, 2**40)",
    "T.full((2**62,), 1.)",
    "T.rand(2**40, 2**40)",
    "T.randn(2**62)",
    "T.zeros(3, 4).index_select(0, T.tensor([7]))",
    "T.zeros(3).index_select(0, T.tensor([-1]))",
    "T.zeros(3).index_add(0, T.tensor([-1]), T.ones(1))",
    "T.zeros(3).index_add(0, T.tensor([3]), T.ones(1))",
    "T.zeros(3, 4).index_add(0, T.tensor([9]), T.ones(1, 4))",
    "T.zeros(3, 4).index_add(0, T.tensor([-1]), T.ones(1, 4))",
]


def _raise(m, code):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            eval(code, {"T": m})
        except Exception as e:
            return e
    raise AssertionError(f"{code} did not raise with {m.__name__}")


@pytest.mark.parametrize("code", CASES)
def test_type_and_message_are_pytorchs(code):
    want, got = _raise(torch, code), _raise(R, code)
    assert type(got) is type(want), (code, got)
    assert str(got).startswith(str(want).split(" (Triggered")[0]), (str(got), str(want))


def test_no_allocation_is_refused_by_numpy_first():
    # a size too big for memory but not for int64: PyTorch's allocator message, a
    # RuntimeError (NumPy's MemoryError said "Unable to allocate")
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory: you "
                                           "tried to allocate 1152921504606846976 bytes"):
        R.empty(2**58, dtype=R.float32)


def test_valid_calls_still_work():
    assert R.zeros(4, 3).masked_fill(R.zeros(4, 1) >= 0, 1.0).sum().item() == 12
    assert R.broadcast_shapes((3, 1), 4) == torch.broadcast_shapes((3, 1), 4)
    assert R.zeros(3, 4).index_select(1, R.tensor([3, 0])).shape == (3, 2)
    assert R.zeros(2, 3).mT.shape == (3, 2)
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        assert R.tensor(3.0).mT.item() == 3.0
