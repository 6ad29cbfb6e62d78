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
    # x[idx] = v, index_put_ and x[idx]: "dimension" (the tensor index's ordinal, Note
    # [Index error dimensions]), not NumPy's "axis"
    "x = T.zeros(3, 4); x[T.tensor([5])] = 1.",
    "x = T.zeros(2, 3, 4); x[:, T.tensor([9])] = 1.",
    "x = T.zeros(2, 3, 4); x[T.tensor([0]), :, T.tensor([9])] = 1.",
    "x = T.zeros(2, 3, 4); x[0, T.tensor([-9])] = 1.",
    "x = T.zeros(2, 3, 4); x[..., T.tensor([9])] = 1.",
    "x = T.zeros(2, 3, 4, requires_grad=True).clone(); x[:, T.tensor([9])] = 1.",
    "x = T.zeros(2, 3, 4); x[T.tensor([True, False, True])] = 1.",
    "x = T.zeros(2, 3, 4); x[:, :, T.tensor([9])]",
    "x = T.zeros(2, 3, 4); x[T.tensor([0]), :, T.tensor([9])]",
    "T.zeros(2, 3, 4).index_put_((T.tensor([0]), T.tensor([0]), T.tensor([9])), T.tensor(1.))",
    "T.zeros(2, 3, 4).index_put((T.tensor([7]),), T.tensor(1.), accumulate=True)",
    # take, index_copy
    "T.zeros(3, 4).take(T.tensor([12]))",
    "T.zeros(3, 4).take(T.tensor([-13]))",
    "T.zeros(0).take(T.tensor([0]))",
    "T.zeros(3, 4).index_copy(0, T.tensor([5]), T.ones(1, 4))",
    "T.zeros(3, 4).index_copy(0, T.tensor([-4]), T.ones(1, 4))",
    "T.zeros(3, 4).index_copy(0, T.tensor([0]), T.ones(2, 4))",
    "T.zeros(3, 4).index_copy(0, T.tensor([0, 1]), T.ones(2, 5))",
    "T.zeros(3, 4).index_copy(0, T.tensor([0, 1]), T.ones(2))",
    # gather/scatter shape checks (ScatterGatherChecks.h)
    "T.zeros(3, 4).gather(1, T.zeros(4, 2, dtype=T.long))",
    "T.zeros(3, 4).gather(0, T.zeros(2, 2, 2, dtype=T.long))",
    "T.zeros(3, 4).gather(0, T.zeros(2, dtype=T.long))",
    "T.zeros(3, 4).scatter_add(0, T.zeros(2, 4, dtype=T.long), T.ones(2, 3))",
    "T.zeros(3, 4).scatter_add(0, T.zeros(2, 4, dtype=T.long), T.ones(1, 4))",
    "T.zeros(3, 4).scatter_add(0, T.zeros(2, dtype=T.long), T.ones(2))",
    "T.zeros(3, 4).scatter_add(0, T.zeros(2, 4, dtype=T.long), T.ones(8))",
    "T.zeros(3, 4).scatter(1, T.zeros(4, 2, dtype=T.long), T.ones(4, 2))",
    "T.zeros(3, 4).scatter(0, T.zeros(2, 5, dtype=T.long), 1.0)",
    "T.zeros(3, 4).scatter_reduce(0, T.zeros(2, 4, dtype=T.long), T.ones(1, 4), 'sum')",
    # in-place ops that read the tensor they write
    "x = T.arange(6.); x.scatter_(0, T.tensor([1, 0]), x)",
    "x = T.arange(6.); x.scatter_add_(0, T.tensor([1, 0]), x)",
    "x = T.arange(6.); x.index_add_(0, T.tensor([1, 0, 2, 3, 4, 5]), x)",
    "x = T.arange(6.); x.put_(T.tensor([1, 0, 2, 3, 4, 5]), x)",
    # tensor_split
    "T.zeros(3, 4).tensor_split(2, dim=4)",
    "T.zeros(3, 4).tensor_split(2, dim=-3)",
    "T.zeros(3, 4).tensor_split(0)",
    "T.zeros(()).tensor_split(2)",
    "T.zeros(5).tensor_split(T.tensor([[1, 3]]))",
    "T.zeros(5).tensor_split(T.tensor([1.0]))",
    # factories: negative and int64-overflowing sizes
    "T.eye(-1)",
    "T.eye(2, -1)",
    "T.zeros(-1)",
    "T.zeros(2, -1)",
    "T.empty(2**63)",
    "T.zeros(2, 2**63)",
    "T.full((3, 2**63), 1.)",
    "T.zeros(3).new_empty(2**64)",
    "T.empty(-2**63 - 1)",
    "T.tensor([2**63])",
    "T.tensor(2**63)",
    "T.tensor([-2**63 - 1])",
    "T.tensor(range(2**63, 2**63 + 2))",
    # reshape, unflatten
    "T.arange(6.).reshape(-2, 3)",
    "T.zeros(3).view(-2)",
    "T.zeros(6).unflatten(0, (4, 2))",
    "T.zeros(2, 6).unflatten(-1, (4, 2))",
    "T.zeros(6).unflatten(0, (-1, -1))",
    "T.zeros(6).unflatten(0, ())",
    # matrix products: the words of the product matmul calls
    "T.mv(T.zeros(3, 4), T.zeros(5))",
    "T.mv(T.zeros(3), T.zeros(3))",
    "T.dot(T.zeros(3), T.zeros(4))",
    "T.inner(T.zeros(2, 3), T.zeros(4, 5))",
    "T.zeros(3) @ T.zeros(4, 5)",
    "T.zeros(2, 3, 4) @ T.zeros(5)",
    "T.zeros(2, 3, 4) @ T.zeros(5, 6)",
    "T.zeros(2, 3, 4) @ T.zeros(2, 5, 6)",
    # pooling (Note [Pooling errors])
    "T.nn.functional.max_pool2d(T.zeros(1, 1, 2, 2), 3)",
    "T.nn.functional.max_pool2d(T.zeros(1, 1, 4, 4), 2, padding=2)",
    "T.nn.functional.max_pool2d(T.zeros(1, 1, 5, 5), 3, padding=2, dilation=2)",
    "T.nn.functional.max_pool2d(T.zeros(4), 2)",
    "T.nn.functional.max_pool2d(T.zeros(1, 1, 4, 4), 2, stride=0)",
    "T.nn.functional.max_pool1d(T.zeros(1, 1, 2), 3)",
    "T.nn.functional.max_pool1d(T.zeros(1, 1, 4), 0)",
    "T.nn.functional.max_pool1d(T.zeros(4), 2)",
    "T.nn.functional.max_pool3d(T.zeros(1, 1, 5, 5, 5), (3, 3, 5), padding=(2, 1, 2), "
    "dilation=2)",
    "T.nn.functional.avg_pool1d(T.zeros(4), 2)",
    "T.nn.functional.avg_pool1d(T.zeros(1, 1, 2), 3)",
    "T.nn.functional.avg_pool2d(T.zeros(4), 2)",
    "T.nn.functional.avg_pool2d(T.zeros(1, 1, 2, 2), 3)",
    "T.nn.functional.avg_pool3d(T.zeros(1, 1, 2, 2, 2), 3)",
    # found by the misuse sweep over the op database (NumPy's wording or exception type)
    "T.linalg.solve_ex(T.zeros(2, 2, 2), T.zeros(0, 2, 1))",
    "T.linalg.solve_triangular(T.zeros(0, 2, 2), T.zeros(2, 2, 1), upper=True)",
    "T.masked_scatter(T.zeros(3, 4), T.zeros(3, 6, dtype=T.bool), T.zeros(12))",
    "T.zeros(()).unbind(0)",
    "T.zeros(()).split(1)",
    "T.zeros(()).chunk(2)",
    "T.zeros(2, 3).median(9)",
    "T.zeros(3, 4).repeat(-9, 1)",
    "T.zeros(3, 4).repeat(2, -1)",
    "T.zeros(3, 5).kthvalue(9)",
    "T.zeros(3, 5).kthvalue(0)",
    "T.zeros(0, 5).kthvalue(1, 0)",
    "T.bitwise_and(T.zeros(3), T.ones(3, dtype=T.long))",
    "T.zeros(3).bitwise_or_(T.ones(3, dtype=T.long))",
    "T.bitwise_xor(T.tensor([1, 2]), 1.5)",
    "T.tensor([1.]) & T.tensor([1.])",
    "T.linalg.cross(T.zeros(4, 3), T.zeros(4, 3), dim=9)",
    "T.linalg.cross(T.zeros(4, 3), T.zeros(0, 3))",
]


def _raise(m, code):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"T": m})
        except Exception as e:
            return e
    raise AssertionError(f"{code} did not raise with {m.__name__}")


@pytest.mark.parametrize("code", CASES)
def test_type_and_message_are_pytorchs(code):
    want, got = _raise(torch, code), _raise(R, code)
    assert type(got) is type(want), (code, got)
    # torch's first line (its C++ errors go on with "Exception raised from ...")
    first = str(want).split(" (Triggered")[0].split("\n")[0]
    assert str(got).startswith(first), (str(got), str(want))


def test_no_allocation_is_refused_by_numpy_first():
    # a size too big for memory but not for int64: PyTorch's allocator message, a
    # RuntimeError (NumPy's MemoryError said "Unable to allocate")
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory: you "
                                           "tried to allocate 1152921504606846976 bytes"):
        R.empty(2**58, dtype=R.float32)


def test_tensor_of_a_range_too_long_for_memory():
    # torch.tensor(range(n)) infers its dtype by reading every element first: for 2**59
    # elements torch does not return. retrograd makes a range with np.arange, whose storage
    # is PyTorch's allocator error when it cannot exist (nothing is allocated)
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        R.tensor(range(2**59))
    for r in (range(5, 0, -2), range(0), range(2**62, 2**63, 2**61), range(-2**63, -2**63 + 2)):
        t, g = torch.tensor(r), R.tensor(r)
        assert g.dtype == R.float32 if not len(r) else g.dtype == R.int64
        assert g.tolist() == t.tolist()
    assert R.tensor(range(3), dtype=R.float32).tolist() == [0.0, 1.0, 2.0]


def test_valid_calls_still_work():
    assert R.zeros(4, 3).masked_fill(R.zeros(4, 1) >= 0, 1.0).sum().item() == 12
    assert R.broadcast_shapes((3, 1), 4) == torch.broadcast_shapes((3, 1), 4)
    assert R.zeros(3, 4).index_select(1, R.tensor([3, 0])).shape == (3, 2)
    assert R.zeros(2, 3).mT.shape == (3, 2)
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        assert R.tensor(3.0).mT.item() == 3.0
    # the calls beside the misuse above
    for m in (torch, R):
        x = m.zeros(2, 3, 4)
        x[:, m.tensor([2])] = 1.0
        assert x.sum().item() == 8
        assert [t.shape[0] for t in m.zeros(5).tensor_split([-2, 1])] == [3, 0, 4]
        assert [t.shape[0] for t in m.zeros(5).tensor_split(m.tensor(2))] == [3, 2]
        assert m.inner(m.ones(2, 3), m.ones(4, 3)).shape == (2, 4)
        assert m.zeros(3, 4).scatter_add(0, m.zeros(1, 2, dtype=m.long), m.ones(2, 4)).sum() == 2
        assert m.nn.functional.max_pool2d(m.zeros(1, 1, 5, 5), 3, padding=1,
                                          dilation=2).shape == (1, 1, 1, 1)
        assert m.tensor([1.5, 2**70]).dtype == m.float32
    x = R.zeros(5, requires_grad=True)
    assert x.tensor_split(2)[0].grad_fn.name() == "SliceBackward0"
