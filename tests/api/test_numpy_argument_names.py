"""NumPy's argument names (``axis=``, ``keepdims=``, ``a=``, ``x2=``) where PyTorch's
argument parser takes them (Note [NumPy argument names] in ops/public.py), against torch."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.ops.public import PUBLIC, PYTHON_DEFINED, PYTHON_DEFINED_METHODS


def _data():
    return np.arange(24.0).reshape(2, 3, 4) - 7.5


def _run(lib, call):
    """``call(lib, x)`` with ``x`` the shared data requiring grad, then its gradient."""
    x = lib.tensor(_data(), requires_grad=True)
    out = call(lib, x)
    outs = out if isinstance(out, tuple) else (out,)
    floats = [o for o in outs if o.dtype.is_floating_point]
    if floats:
        sum(o.sum() for o in floats).backward()
    return outs, x.grad


def _same(call):
    (r_out, r_grad), (t_out, t_grad) = _run(rg, call), _run(torch, call)
    assert len(r_out) == len(t_out)
    for r, t in zip(r_out, t_out):
        assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
        assert r.stride() == t.stride()
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    if t_grad is None:
        assert r_grad is None
    else:
        np.testing.assert_allclose(r_grad.numpy(), t_grad.numpy(), rtol=1e-6)


CALLS = {
    "sum": lambda L, x: L.sum(x, axis=1, keepdims=True),
    "sum_method": lambda L, x: x.sum(axis=(0, 2), keepdims=True),
    "sum_a": lambda L, x: L.sum(a=x, axis=0),
    "sum_x": lambda L, x: L.sum(x=x, axis=-1),
    "sum_x1_dtype": lambda L, x: L.sum(x1=x, axis=0, dtype=L.float64),
    "sum_axis_none": lambda L, x: L.sum(x, axis=None),
    "mean": lambda L, x: L.mean(x, axis=2, keepdims=True),
    "mean_method": lambda L, x: x.mean(axis=(0, 1)),
    "std": lambda L, x: L.std(x, axis=1, keepdims=True),
    "var_correction": lambda L, x: x.var(axis=1, correction=0),
    "prod": lambda L, x: L.prod(x, axis=1),
    "amax": lambda L, x: L.amax(x, axis=(1, 2), keepdims=True),
    "max": lambda L, x: tuple(L.max(x, axis=1, keepdims=True)),
    "min_method": lambda L, x: tuple(x.min(axis=2)),
    "max_x2": lambda L, x: L.max(x, x2=x.flip(0)),
    "argmax": lambda L, x: L.argmax(x, axis=1, keepdims=True),
    "argmin_method": lambda L, x: x.argmin(axis=0),
    "logsumexp": lambda L, x: L.logsumexp(x, axis=1, keepdims=True),
    "softmax": lambda L, x: L.softmax(x, axis=1),
    "log_softmax_method": lambda L, x: x.log_softmax(axis=-1),
    "cumsum": lambda L, x: L.cumsum(x, axis=2),
    "cumprod_method": lambda L, x: x.cumprod(axis=1),
    "cat": lambda L, x: L.cat([x, x * 2], axis=1),
    "concatenate": lambda L, x: L.concatenate([x, x], axis=2),
    "stack": lambda L, x: L.stack([x, x], axis=1),
    "sort": lambda L, x: tuple(L.sort(x, axis=1, descending=True)),
    "argsort": lambda L, x: L.argsort(x, axis=2),
    "topk": lambda L, x: tuple(L.topk(x, 2, axis=1)),
    "median": lambda L, x: tuple(L.median(x, axis=2)),
    "squeeze": lambda L, x: L.squeeze(x[:, :1], axis=1),
    "unsqueeze_method": lambda L, x: x.unsqueeze(axis=0),
    "chunk": lambda L, x: L.chunk(x, 2, axis=2),
    "unbind": lambda L, x: L.unbind(x, axis=1),
    "select": lambda L, x: L.select(x, axis=1, index=2),
    "index_select": lambda L, x: L.index_select(x, axis=2, index=L.tensor([3, 0])),
    "gather": lambda L, x: L.gather(x, axis=2, index=L.zeros(2, 3, 1, dtype=L.int64)),
    "narrow": lambda L, x: L.narrow(x, axis=2, start=1, length=2),
    "repeat_interleave": lambda L, x: L.repeat_interleave(x, 2, axis=0),
    "diff": lambda L, x: L.diff(x, axis=1),
    "count_nonzero": lambda L, x: L.count_nonzero(x, axis=1),
    "all_method": lambda L, x: (x > 0).all(axis=2, keepdims=True),
    "any": lambda L, x: L.any(x > 10, axis=1),
    "std_mean": lambda L, x: L.std_mean(x, axis=1, keepdims=True),
    "cummax": lambda L, x: tuple(L.cummax(x, axis=1)),
    "kthvalue": lambda L, x: tuple(L.kthvalue(x, 2, axis=2)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_numpy_names_compute_as_torch(name):
    _same(CALLS[name])


# both a name and its alias, or an alias beside the positional argument: PyTorch leaves the
# alias unconsumed and reports it (its wording, for functions with one signature)
CLASHES = {
    "dim_and_axis": (lambda L, x: L.sum(x, 0, axis=1), "sum", "axis"),
    "dim_kw_and_axis": (lambda L, x: L.softmax(x, dim=0, axis=0), "softmax", "axis"),
    "cat_dim_and_axis": (lambda L, x: L.cat([x], axis=0, dim=0), "cat", "axis"),
    "keepdim_and_keepdims": (lambda L, x: L.sum(x, 0, True, keepdims=True), "sum", "keepdims"),
    "method_positional_and_axis": (lambda L, x: x.sum(0, axis=0), "sum", "axis"),
    "method_keepdims_twice": (lambda L, x: x.sum(0, True, keepdims=True), "sum", "keepdims"),
}


@pytest.mark.parametrize("name", sorted(CLASHES))
def test_name_given_twice_raises_as_torch(name):
    call, fn, alias = CLASHES[name]
    message = f"{fn}() got an unexpected keyword argument '{alias}'"
    with pytest.raises(TypeError) as te:
        call(torch, torch.ones(2, 3))
    assert str(te.value) == message
    with pytest.raises(TypeError) as re_:
        call(rg, rg.ones(2, 3))
    assert str(re_.value).startswith(message + " (")
    assert "pass it once, under one name" in str(re_.value)


# PyTorch writes these in Python: no NumPy names (nn.functional's too)
REFUSED = {
    "split": lambda L, x: L.split(x, 1, axis=1),
    "split_method": lambda L, x: x.split(1, axis=1),
    "norm": lambda L, x: L.norm(x, axis=1),
    "unflatten_method": lambda L, x: x.unflatten(axis=1, sizes=(3, 1)),
    "F_softmax": lambda L, x: L.nn.functional.softmax(x, axis=1),
    "F_log_softmax": lambda L, x: L.nn.functional.log_softmax(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_python_defined_functions_refuse_numpy_names_as_torch(name):
    for lib in (torch, rg):
        with pytest.raises(TypeError, match="got an unexpected keyword argument 'axis'"):
            REFUSED[name](lib, lib.ones(2, 3))


def test_python_defined_lists_match_torch():
    """The public functions with a ``dim`` or ``keepdim`` parameter that PyTorch defines in
    Python (no NumPy names) are exactly the ones recorded as such."""
    def params(fn):
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        code = fn.__code__
        return set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])

    python_functions, python_methods = set(), set()
    for name, e in PUBLIC.items():
        if not params(e.fn) & {"dim", "keepdim"}:
            continue
        if e.function and not isinstance(getattr(torch, name, len), types.BuiltinFunctionType):
            python_functions.add(name)
        if e.method and isinstance(getattr(torch.Tensor, name), types.FunctionType):
            python_methods.add(name)
    assert python_functions <= PYTHON_DEFINED
    assert python_methods <= PYTHON_DEFINED_METHODS
    assert PYTHON_DEFINED_METHODS - PYTHON_DEFINED == {"unflatten"}


def test_calls_without_keywords_reach_the_function_unchanged():
    """Only functions with a ``dim``/``keepdim`` parameter are wrapped (Note [NumPy argument
    names]): the others are the op layer's functions themselves."""
    assert rg.exp is PUBLIC["exp"].fn and rg.Tensor.exp is PUBLIC["exp"].fn
    assert rg.add is PUBLIC["add"].fn
    assert rg.sum.__wrapped__ is PUBLIC["sum"].fn
    assert rg.Tensor.sum.__wrapped__ is PUBLIC["sum"].fn
    assert rg.sum.__doc__ == PUBLIC["sum"].fn.__doc__ and rg.sum.__name__ == "sum"


def test_library_calls_are_unwrapped():
    from retrograd._functions import namespace

    assert namespace.sum is PUBLIC["sum"].fn and namespace.cat is PUBLIC["cat"].fn
