"""Storages and the tensor methods over them, against torch 2.13."""

import multiprocessing as mp
import os
import warnings

import numpy as np
import pytest
import torch

import retrograd as rt
import retrograd.storage as rs


def _both(fn):
    return fn(rt), fn(torch)


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_untyped_storage_of_views_is_the_base_memory():
    for lib in (rt, torch):
        x = lib.arange(12.0).reshape(3, 4)
        views = [x[1], x.t(), x[:, 1::2], x.view(-1)[3:], x.detach()]
        for v in views:
            s = v.untyped_storage()
            assert s.data_ptr() == x.untyped_storage().data_ptr() == x.data_ptr()
            assert s.nbytes() == len(s) == s.size() == 48 and s.element_size() == 1
        assert [v.storage_offset() for v in views] == [4, 0, 1, 3, 0]
        assert x.clone().untyped_storage().data_ptr() != x.data_ptr()


def test_untyped_storage_contents_and_writes():
    ours, theirs = _both(lambda lib: lib.tensor([1, 258], dtype=lib.int16).untyped_storage())
    assert ours.tolist() == theirs.tolist() == [1, 0, 2, 1]
    assert ours[2] == theirs[2] == 2
    assert ours[1:3].tolist() == theirs[1:3].tolist()
    x = rt.zeros(2, dtype=rt.int16)
    s = x.untyped_storage()
    s[0] = 7
    s[1:].fill_(1)
    assert x.tolist() == [263, 257]
    s.copy_(rt.tensor([1, 2], dtype=rt.int16).untyped_storage())
    assert x.tolist() == [1, 2]
    assert rt.UntypedStorage([1, 2, 3]).tolist() == torch.UntypedStorage([1, 2, 3]).tolist()
    assert rt.UntypedStorage(5).nbytes() == torch.UntypedStorage(5).nbytes() == 5
    assert str(rt.UntypedStorage(0)) == str(torch.UntypedStorage(0))
    with pytest.raises(RuntimeError, match="size mismatch"):
        s.copy_(rt.UntypedStorage(3))


def test_typed_storage_warns_once_and_reads_elements(monkeypatch):
    monkeypatch.setattr(rs, "_WARNED", [False])
    x = rt.arange(6.0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = x[2:].storage()
        x.storage()
    assert len(w) == 1 and w[0].category is UserWarning
    assert str(w[0].message).startswith("TypedStorage is deprecated. It will be removed")
    t = _quiet(lambda: torch.arange(6.0)[2:].storage())
    assert (s.dtype, s.size(), len(s), s[1], s.tolist(), s.element_size(), s.nbytes()) == \
        (rt.float32, t.size(), len(t), t[1], t.tolist(), t.element_size(), t.nbytes())
    assert isinstance(s, rt.FloatStorage) and not isinstance(s, rt.DoubleStorage)
    assert isinstance(s, rt.TypedStorage) and rt.is_storage(s)
    s[0] = 10.0
    assert x[0].item() == 10.0
    s.fill_(1.0)
    assert x.tolist() == [1.0] * 6


@pytest.mark.parametrize("name", ["FloatStorage", "DoubleStorage", "LongStorage", "IntStorage",
                                  "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage"])
def test_legacy_storage_classes(name):
    ours, theirs = getattr(rt, name), getattr(torch, name)
    a, b = _quiet(lambda: ours([1, 0, 1])), _quiet(lambda: theirs([1, 0, 1]))
    assert a.tolist() == b.tolist() and str(a.dtype) == str(b.dtype)
    assert _quiet(lambda: ours(4)).size() == 4
    assert rt.ones(1, dtype=a.dtype).storage_type() is ours
    assert torch.ones(1, dtype=b.dtype).storage_type() is theirs
    assert a.type() == b.type() == f"torch.{name}"


def test_is_storage():
    for lib in (rt, torch):
        assert lib.is_storage(lib.ones(1).untyped_storage())
        assert not lib.is_storage(lib.ones(1)) and not lib.is_storage([1])


def test_set_to_storage_and_tensor():
    results = []
    for lib in (rt, torch):
        s = lib.arange(6.0)
        b = lib.zeros(2)
        b.set_(s.untyped_storage(), 2, (2,), (2,))
        out = [b.tolist(), b.storage_offset(), b.stride(), b.is_set_to(s)]
        s.add_(10)  # b sees the write: one memory
        out.append(b.tolist())
        c = lib.zeros(1).set_(s)
        out += [c.is_set_to(s), c.tolist(), s.is_set_to(s[:]), s.is_set_to(s[1:])]
        e = lib.ones(3).set_()
        out += [tuple(e.shape), b._version]
        results.append(out)
    assert results[0] == results[1]


def test_set_errors():
    for lib in (rt, torch):
        with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a "
                                               "tensor of type float"):
            lib.ones(2).set_(lib.ones(2, dtype=lib.int64))
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.ones(3, requires_grad=True).set_(lib.zeros(2))
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 24"):
        rt.zeros(1).set_(rt.arange(6.0).untyped_storage(), 2, (5,), (1,))
    with rt.no_grad():  # as PyTorch: allowed outside grad mode
        p = rt.ones(3, requires_grad=True)
        p.set_(rt.zeros(2))
    assert p.shape == (2,)


def test_resize_semantics():
    results = []
    for lib in (rt, torch):
        z = lib.arange(6.0)
        v = z[1:3]
        out = [v.resize_(5).tolist()]  # fits in the storage: a bigger view of it
        out.append(z.resize_(2, 2).tolist())
        out.append(lib.resize_as_(lib.arange(4.0), lib.zeros(2, 2)).shape)
        a = lib.arange(3.0)
        a.resize_(5)
        out += [a[:3].tolist(), a.untyped_storage().nbytes(), tuple(a.shape)]
        results.append(out)
    assert results[0] == results[1]
    for lib in (rt, torch):
        x = lib.ones(3, requires_grad=True)
        calls = [(x.resize_, (2,)), (x.resize_as_, (lib.ones(2),)),
                 (lib.resize_as_, (x * 2, lib.ones(3)))]
        for f, args in calls:
            with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
                f(*args)


def test_resize_growth_refused_while_memory_is_shared():
    z = rt.arange(3.0)
    view = z[1:]
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        z.resize_(10)
    assert view.tolist() == [1.0, 2.0]


def test_as_strided_in_place():
    ours, theirs = _both(lambda lib: lib.arange(6.0).as_strided_((2, 2), (1, 2), 1))
    assert ours.tolist() == theirs.tolist() and ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset() == 1
    o, t = _both(lambda lib: lib.as_strided_(lib.arange(6.0), (3,), (2,)))
    assert o.tolist() == t.tolist()


def test_empty_strided_and_new_empty_strided():
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 3), (3, 1)), ((4,), (0,))]:
        ours, theirs = _both(lambda lib, a=size, b=stride: lib.empty_strided(a, b))
        assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
        assert ours.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()
        assert ours.dtype == rt.float32
    o = rt.ones(1, dtype=rt.int64).new_empty_strided((2, 2), (1, 2))
    t = torch.ones(1, dtype=torch.int64).new_empty_strided((2, 2), (1, 2))
    assert str(o.dtype) == str(t.dtype) and o.stride() == t.stride()
    assert rt.empty_strided((2,), (1,), requires_grad=True).requires_grad


def test_frombuffer():
    for dt in ("int16", "uint8", "float32"):
        buf = bytearray(range(16))
        ours = rt.frombuffer(buf, dtype=getattr(rt, dt))
        theirs = torch.frombuffer(bytearray(range(16)), dtype=getattr(torch, dt))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    buf = bytearray(8)
    t = rt.frombuffer(buf, dtype=rt.int16, count=2, offset=2)
    t.fill_(1)
    assert list(buf) == [0, 0, 1, 0, 1, 0, 0, 0]  # no copy: writes reach the buffer
    for lib in (rt, torch):
        with pytest.raises(ValueError, match=r"must be a multiple of element size \(2\)"):
            lib.frombuffer(bytearray(3), dtype=lib.int16)


@pytest.mark.parametrize("shared", [False, True])
def test_from_file(tmp_path, shared):
    results = []
    for lib in (rt, torch):
        path = tmp_path / f"{lib.__name__}.bin"
        np.arange(4, dtype=np.float32).tofile(path)
        t = lib.from_file(str(path), shared=shared, size=4)
        out = [t.tolist()]
        t.fill_(5.0)
        out.append(np.fromfile(path, dtype=np.float32).tolist())  # reached the file?
        out.append(t.is_shared())
        results.append(out)
    assert results[0] == results[1]


def _child_write(t):
    t.fill_(3.0)


@pytest.mark.skipif(os.name != "posix", reason="shared memory across fork() is POSIX")
def test_share_memory_is_seen_by_forked_children():
    for lib in (rt, torch):
        x = lib.zeros(4)
        assert not x.is_shared()
        assert x.share_memory_() is x and x.is_shared() and x.untyped_storage().is_shared()
        p = mp.get_context("fork").Process(target=_child_write, args=(x,))
        p.start()
        p.join()
        assert x.tolist() == [3.0] * 4
    y = rt.zeros(3)
    _ = y[1:]
    with pytest.raises(RuntimeError, match="share_memory_"):
        y.share_memory_()


def test_storage_of_model_shares_memory_after_share_memory():
    model = rt.nn.Linear(2, 2)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    out = model(rt.ones(1, 2))
    out.sum().backward()
    assert model.weight.grad.shape == (2, 2)


def test_pooled_results_can_grow_and_be_shared():
    from retrograd.ops import buffers

    old = buffers.configure(enabled=True, threshold=64, max_free=1 << 20)
    try:
        x = rt.ones(100) * 2  # a block of the buffer pool
        x.resize_(200)
        assert x[:100].tolist() == [2.0] * 100 and x.shape == (200,)
        y = rt.ones(100) * 3
        y.share_memory_()
        assert y.is_shared() and y.sum().item() == 300.0
    finally:
        buffers.configure(**old)
