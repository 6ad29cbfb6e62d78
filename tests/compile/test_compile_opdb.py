"""The op database through retrograd.compile (issue 19's acceptance): for every entry, a
compiled function that runs the op, backpropagates a weighted sum of its outputs and
returns the outputs and the leaves' gradients gives eager's numbers, on the traced
inputs and, replayed, on new values of the same shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R
from opdb import DB, build, flat, is_tensor, sample_rng
from retrograd._compile.api import CompiledFunction


def _cases():
    for e in DB:
        base = e.samples(sample_rng(e.name))
        other = e.samples(sample_rng(e.name, "compile"))
        for k, s in enumerate(base):
            o = other[k] if len(other) == len(base) else s
            yield pytest.param(e, s, o, id=f"{e.name}-{k}")


def _program(entry, sample):
    """The function compiled: the op, then backward of a weighted sum of its floating
    outputs that require grad; returns the outputs (detached) and the leaves' grads."""

    def program(*leaves):
        args, kwargs, _ = build(R, sample, "float64", leaves=list(leaves))
        outs = flat(entry.fn(R, *args, **kwargs))
        diff = [o for o in outs if is_tensor(o) and o.requires_grad and o.numel()]
        if diff:
            loss = sum(((o * (k + 1.5)).sum() for k, o in enumerate(diff)), R.zeros(()))
            loss.backward()
        return ([o.detach() if is_tensor(o) else o for o in outs],
                [t.grad for t in leaves])
    return program


def _leaves(sample):
    _, _, made = build(R, sample, "float64")
    return made


def _run(fn, leaves, seed):
    for t in leaves:
        t.grad = None
    R.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*leaves)


def _same(a, b, where):
    if is_tensor(a) or is_tensor(b):
        assert is_tensor(a) and is_tensor(b), where
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype, where
        x, y = a.numpy(), b.numpy()
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(x, y, err_msg=where)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), where


@pytest.mark.parametrize("entry,sample,other", list(_cases()))
def test_compiled_op_equals_eager(entry, sample, other):
    program = _program(entry, sample)
    leaves = _leaves(sample)
    try:
        want = _run(program, leaves, 0)
    except Exception as exc:
        compiled = CompiledFunction(program)
        with pytest.raises(type(exc)):
            _run(compiled, leaves, 0)
        return
    compiled = CompiledFunction(program)
    for call in range(3):  # trace, second trace, replay
        got = _run(compiled, leaves, call)
        want = _run(program, leaves, call)
        _same(got, want, f"call {call}")
    # new values of the same shapes: a replay must compute from them, not from constants
    fresh = _leaves(other)
    if [tuple(t.shape) for t in fresh] != [tuple(t.shape) for t in leaves]:
        return
    for call in range(2):
        want = None
        try:
            want = _run(program, fresh, 7 + call)
        except Exception as exc:
            with pytest.raises(type(exc)):
                _run(compiled, fresh, 7 + call)
            continue
        got = _run(compiled, fresh, 7 + call)
        _same(got, want, f"new values, call {call}")
