"""The process-level names of ``torch`` at the top of real scripts, against torch."""

import pickle
import warnings

import pytest
import torch

import retrograd as rt


def test_build_facts_and_threads():
    assert rt.has_lapack is torch.has_lapack is True
    assert rt.has_spectral is torch.has_spectral is True
    assert rt.has_mkl is False and rt.has_openmp is False  # NumPy's kernels (Note [Build facts])
    assert rt.get_num_interop_threads() >= 1
    assert rt.init_num_threads() is None and torch.init_num_threads() is None
    with pytest.raises(RuntimeError, match="Expected positive number of threads"):
        rt.set_num_interop_threads(0)


def test_flush_denormal_warn_always_device():
    assert rt.set_flush_denormal(False) is torch.set_flush_denormal(False) is True
    assert rt.set_flush_denormal(True) is False  # not honoured (Note [Flush denormal])
    torch.set_flush_denormal(False)
    assert rt.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    rt.set_warn_always(True)
    assert rt.is_warn_always_enabled()
    rt.set_warn_always(False)
    assert rt.get_device(rt.ones(1)) == torch.get_device(torch.ones(1)) == -1


@pytest.mark.parametrize("name", ["OutOfMemoryError", "AcceleratorError", "FatalError"])
def test_exception_classes(name):
    ours, theirs = getattr(rt, name), getattr(torch, name)
    assert [c.__name__ for c in ours.__mro__[1:]] == [c.__name__ for c in theirs.__mro__[1:]]
    with pytest.raises(ours):
        raise ours("boom")


def test_thread_safe_generator_grad_scaler_anomaly():
    assert rt.thread_safe_generator() is None is torch.thread_safe_generator()
    assert rt.GradScaler is rt.amp.GradScaler
    rt.set_anomaly_enabled(True)
    assert rt.is_anomaly_enabled() and rt.is_anomaly_check_nan_enabled()
    rt.set_anomaly_enabled(False, check_nan=False)
    assert not rt.is_anomaly_enabled() and not rt.is_anomaly_check_nan_enabled()
    rt.set_anomaly_enabled(False)


@pytest.mark.parametrize("call", [
    ("is_autocast_cpu_enabled", ()), ("get_autocast_cpu_dtype", ()),
    ("get_autocast_gpu_dtype", ()), ("set_autocast_cpu_enabled", (False,)),
    ("set_autocast_cpu_dtype", ("bfloat16",)), ("set_autocast_gpu_dtype", ("float16",)),
])
def test_legacy_autocast_names_warn_as_torch(call):
    name, args = call
    results, messages = [], []
    for lib in (rt, torch):
        real = tuple(getattr(lib, a) if isinstance(a, str) else a for a in args)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            results.append(getattr(lib, name)(*real))
        assert [x.category for x in w] == [DeprecationWarning]
        messages.append(str(w[0].message).split(" (Triggered")[0])
    assert messages[0] == messages[1]
    assert str(results[0]) == str(results[1])


def test_autocast_nesting():
    assert rt.autocast_increment_nesting() == torch.autocast_increment_nesting() == 1
    assert rt.autocast_decrement_nesting() == torch.autocast_decrement_nesting() == 0


def test_layout_memory_format_typename_newaxis():
    assert rt.ones(1).layout is rt.strided and repr(rt.strided) == repr(torch.strided)
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        ours = getattr(rt, name)
        assert isinstance(ours, rt.memory_format) and repr(ours) == repr(getattr(torch, name))
        assert pickle.loads(pickle.dumps(ours)) is ours
    assert isinstance(rt.strided, rt.layout)
    assert rt.ones(2, 3, 1, 1).clone(memory_format=rt.channels_last).shape == (2, 3, 1, 1)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        rt.ones(2, 3).clone(memory_format=rt.channels_last)  # (as torch: test_memory_format)
    for t, tt in [(rt.ones(1), torch.ones(1)), (rt.ones(1, dtype=rt.int64), torch.ones(1).long())]:
        assert rt.typename(t) == torch.typename(tt)
    for obj in (1, [1], len, "s"):
        assert rt.typename(obj) == torch.typename(obj)
    assert rt.typename(rt.nn.Linear(1, 1)) == "retrograd.nn.modules.linear.Linear"
    assert rt.newaxis is torch.newaxis is None
    assert rt.ones(3)[rt.newaxis].shape == (1, 3)
