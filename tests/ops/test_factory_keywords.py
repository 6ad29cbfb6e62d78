"""Factories' keyword forms against torch: ``size=``, ``generator=``, ``out=``, randint's
and random_'s keywords (Note [Factory keywords] in _functions/creation.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as rg


def _gen(lib):
    return lib.Generator().manual_seed(3)


def _values(r):
    if isinstance(r, (tuple, list)):
        return [_values(x) for x in r]
    if hasattr(r, "numpy"):
        return (str(r.dtype), tuple(r.shape), r.stride(), r.detach().numpy().tolist())
    return r


def _same(call):
    results = []
    for lib in (rg, torch):
        lib.manual_seed(0)
        results.append(_values(call(lib)))
    assert results[0] == results[1]


CALLS = {
    "randn_size": lambda L: L.randn(size=(2, 3)),
    "randn_size_list": lambda L: L.randn(size=[4]),
    "randn_size_empty": lambda L: L.randn(size=()),
    "rand_size": lambda L: L.rand(size=(2, 3), dtype=L.float64),
    "zeros_size": lambda L: L.zeros(size=(2, 3), dtype=L.int32),
    "ones_size": lambda L: L.ones(size=[3]),
    "empty_size": lambda L: L.empty(size=(2, 3), dtype=L.int16).shape,
    "full_size": lambda L: L.full(size=(2, 3), fill_value=2.5),
    "randint_size": lambda L: L.randint(0, 10, size=(2, 3)),
    "randint_high_size": lambda L: L.randint(10, size=(5,)),
    "randint_keywords": lambda L: L.randint(low=2, high=10, size=(2, 3)),
    "randint_high_keyword": lambda L: L.randint(high=5, size=(3,)),
    "randint_generator": lambda L: L.randint(0, 10, (2, 3), generator=_gen(L)),
    "randint_high_generator": lambda L: L.randint(10, (3,), generator=_gen(L)),
    "randn_generator": lambda L: L.randn(2, 3, generator=_gen(L)),
    "randn_size_generator": lambda L: L.randn(size=(2, 3), generator=_gen(L)),
    "rand_size_generator": lambda L: L.rand((2,), generator=_gen(L)),
    "randperm_generator": lambda L: L.randperm(5, generator=_gen(L)),
    "randperm_n": lambda L: L.randperm(n=5),
    "normal_generator": lambda L: L.normal(0.0, 1.0, size=(3,), generator=_gen(L)),
    "normal_tensors_generator": lambda L: L.normal(mean=L.zeros(2), std=L.ones(2),
                                                  generator=_gen(L)),
    "bernoulli_generator": lambda L: L.bernoulli(L.full((4,), 0.5), generator=_gen(L)),
    "multinomial_generator": lambda L: L.multinomial(L.ones(4), 2, generator=_gen(L)),
    "random_to": lambda L: L.zeros(3).random_(to=9, generator=_gen(L)),
    "random_from_to": lambda L: L.zeros(3).random_(**{"from": 2, "to": 9}, generator=_gen(L)),
    "random_positional_from_to": lambda L: L.zeros(4).random_(2, to=9, generator=_gen(L)),
    "uniform_generator": lambda L: L.zeros(3).uniform_(generator=_gen(L)),
    "normal_method_generator": lambda L: L.zeros(3).normal_(generator=_gen(L)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_factory_keywords_as_torch(name):
    _same(CALLS[name])


def _into(make, *shape, dtype="float32"):
    def call(lib):
        out = lib.full(shape, 7, dtype=getattr(lib, dtype))
        result = make(lib, out)
        return result is out, out
    return call


OUT_CALLS = {
    "randn": _into(lambda L, o: L.randn(2, 3, out=o), 2, 3),
    "randn_size": _into(lambda L, o: L.randn(size=(2, 3), out=o), 2, 3),
    "randn_resized": _into(lambda L, o: L.randn(2, 3, out=o), 5),
    "randn_float64": _into(lambda L, o: L.randn(4, out=o), 4, dtype="float64"),
    "rand": _into(lambda L, o: L.rand(2, 3, out=o), 2, 3),
    "rand_generator": _into(lambda L, o: L.rand(3, out=o, generator=_gen(L)), 3),
    "zeros": _into(lambda L, o: L.zeros(2, 3, out=o), 2, 3),
    "ones_resized": _into(lambda L, o: L.ones((2, 3), out=o), 0),
    "full": _into(lambda L, o: L.full((2, 3), 4.0, out=o), 2, 3),
    "full_int": _into(lambda L, o: L.full((2,), 3, out=o), 2, dtype="int32"),
    "empty_same_shape": _into(lambda L, o: L.empty((2, 3), out=o), 2, 3),
    "randint": _into(lambda L, o: L.randint(5, (2, 3), out=o), 2, 3, dtype="int64"),
    "randint_float": _into(lambda L, o: L.randint(5, (3,), out=o), 3),
    "randperm": _into(lambda L, o: L.randperm(4, out=o), 4, dtype="int64"),
    "arange": _into(lambda L, o: L.arange(4, out=o), 4, dtype="int64"),
    "arange_float": _into(lambda L, o: L.arange(3, out=o), 3),
    "linspace": _into(lambda L, o: L.linspace(0, 1, 4, out=o), 4),
    "linspace_resized": _into(lambda L, o: L.linspace(0, 1, 5, out=o), 2),
    "logspace": _into(lambda L, o: L.logspace(0, 1, 3, out=o), 3),
    "eye": _into(lambda L, o: L.eye(2, out=o), 2, 2),
    "eye_resized": _into(lambda L, o: L.eye(3, out=o), 2),
    "normal": _into(lambda L, o: L.normal(0.0, 1.0, (3,), out=o), 3),
}


@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_forms_write_into_out_as_torch(name):
    results = []
    for lib in (rg, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # factories resize out silently
            results.append(_values(OUT_CALLS[name](lib)))
    assert results[0] == results[1]
    assert results[0][0] is True


def test_arange_out_resize_warns_as_torch():
    msgs = []
    for lib in (rg, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.arange(5, out=lib.empty(3))
        msgs.append([str(x.message).split(" (Triggered")[0] for x in w])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


ERRORS = {
    "randn_size_int": (lambda L: L.randn(size=3), TypeError,
                       "randn(): argument 'size' must be tuple of ints, not int"),
    "zeros_size_none": (lambda L: L.zeros(size=None) if L is torch else L.zeros(size=1.5),
                        TypeError, "zeros(): argument 'size' must be tuple of ints, not "),
    "randn_twice": (lambda L: L.randn(2, size=(2,)), TypeError,
                    "randn() received an invalid combination of arguments - got (int, "
                    "size=tuple)"),
    "zeros_twice": (lambda L: L.zeros(2, size=(2,)), TypeError,
                    "zeros() got multiple values for argument 'size'"),
    "randn_out_dtype": (lambda L: L.randn(2, dtype=L.float64, out=L.empty(2)), RuntimeError,
                        "dtype Double does not match dtype of out parameter (Float)"),
    "empty_out_dtype": (lambda L: L.empty(2, dtype=L.float64, out=L.empty(2)), RuntimeError,
                        "dtype Double does not match dtype of out parameter (Float)"),
    "rand_out_int": (lambda L: L.rand(2, out=L.empty(2, dtype=L.int64)), NotImplementedError,
                     '"check_uniform_bounds" not implemented for \'Long\''),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_factory_keyword_errors_as_torch(name):
    call, kind, message = ERRORS[name]
    for lib in (torch, rg):
        with pytest.raises(kind) as e:
            call(lib)
        assert str(e.value).startswith(message)


def test_seeded_forms_draw_the_same_numbers():
    """``randn(2, 3)``, ``randn((2, 3))``, ``randn(size=(2, 3))`` and the out= form draw the
    same stream."""
    draws = []
    for make in (lambda: rg.randn(2, 3), lambda: rg.randn((2, 3)),
                 lambda: rg.randn(size=(2, 3)), lambda: rg.randn(2, 3, out=rg.empty(6))):
        rg.manual_seed(11)
        draws.append(make().numpy().copy())
    for d in draws[1:]:
        np.testing.assert_array_equal(d, draws[0])
