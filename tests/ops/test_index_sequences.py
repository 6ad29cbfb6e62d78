"""Indexing with Python sequences (lists, ranges, tuples of lists) and 0-d integer tensors,
in reads, writes and augmented assignments, against torch (Note [Index keys as PyTorch
reads them] in _functions/indexing.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as rg


def _x(lib, requires_grad=False):
    return lib.tensor(np.arange(12.0).reshape(3, 4) - 4.5, dtype=lib.float32,
                      requires_grad=requires_grad)


def _keys(lib):
    """name -> key; tensors in keys are made with ``lib``."""
    y = lib.tensor([1, 3, 0])
    t0 = lib.tensor(1)
    return {
        "range_y": (range(3), y),
        "list_y": ([0, 1, 2], y),
        "tuple_of_lists": ([0, 1], [2, 3]),
        "list_of_lists": [[0, 1], [2, 3]],
        "list_of_tuples": [(0, 1), (2, 3)],
        "range": range(2),
        "range_step_slice": (range(0, 3, 2), slice(1, 3)),
        "list_none_slice": ([0, 2], None, slice(1, None)),
        "ellipsis_list": (Ellipsis, [3, 0]),
        "t0": t0,
        "t0_slice": (t0, slice(1, None)),
        "slice_t0": (slice(None), t0),
        "none_t0_ellipsis": (None, t0, Ellipsis),
        "ellipsis_t0": (Ellipsis, t0),
        "t0_t0": (t0, t0),
        "negative_t0": lib.tensor(-1),
        "int32_t0": lib.tensor(2, dtype=lib.int32),
        "list_t0": ([0, 2], t0),
        "t0_list": (t0, [0, 2]),
        "bool_list": [True, False, True],
        "float_list": [0.5, 1],
        "mixed_bool_int_list": [True, 2.0],
        "list_with_tensor": [t0, 0],
        "list_with_slice": [0, slice(None)],
        "empty_list_rows": ([], slice(None)),
        "range_in_list": [range(2)],
        "list_negative": [-1, 0],
        "tensor_and_list": (lib.tensor([0, 1]), [1, 2]),
    }


NAMES = sorted(_keys(torch))


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _same(a, b):
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    if a.numel():
        assert a.stride() == b.stride()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", NAMES)
def test_reads_as_torch(name):
    out = {}
    for lib in (rg, torch):
        x = _x(lib, requires_grad=True)
        r = _quiet(x.__getitem__, _keys(lib)[name])
        w = lib.arange(float(r.numel())).reshape(r.shape)
        (r * w).sum().backward()
        is_view = r._base is x
        out[lib] = (r, x.grad, is_view, r.grad_fn.name())
    (r1, g1, v1, n1), (r2, g2, v2, n2) = out[rg], out[torch]
    _same(r1, r2)
    _same(g1, g2)
    assert (v1, n1) == (v2, n2)


@pytest.mark.parametrize("name", NAMES)
def test_writes_as_torch(name):
    out = {}
    for lib in (rg, torch):
        x = _x(lib)
        key = _keys(lib)[name]
        shape = _quiet(x.__getitem__, key).shape
        value = lib.arange(float(np.prod(shape, dtype=int))).reshape(shape) * 10
        _quiet(x.__setitem__, key, value)
        out[lib] = x
    _same(out[rg], out[torch])


def _iadd(x, key):
    x[key] += 100.0


@pytest.mark.parametrize("name", NAMES)
def test_augmented_assignment_as_torch(name):
    out = {}
    for lib in (rg, torch):
        x = _x(lib)
        key = _keys(lib)[name]
        version = x._version

        _quiet(_iadd, x, key)
        out[lib] = (x, x._version > version)
    _same(out[rg][0], out[torch][0])
    assert out[rg][1] == out[torch][1]


@pytest.mark.parametrize("name", NAMES)
def test_write_gradients_as_torch(name):
    grads = []
    for lib in (rg, torch):
        x = _x(lib, requires_grad=True)
        v = lib.tensor(3.0, requires_grad=True)
        h = x * 1
        key = _keys(lib)[name]
        _quiet(h.__setitem__, key, v * 2)
        (h * lib.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append((x.grad, v.grad, h.grad_fn.name()))
    _same(grads[0][0], grads[1][0])
    _same(grads[0][1], grads[1][1])
    assert grads[0][2] == grads[1][2]


def test_zero_dim_index_is_a_view_written_through():
    """A 0-d integer tensor index is an int: ``x[t0]`` shares x's storage and ``x[t0] +=``
    writes through it (one version bump each)."""
    for lib in (rg, torch):
        x = _x(lib)
        t0 = lib.tensor(1)
        v = x[t0]
        assert v._base is x and v.storage_offset() == 4
        v += 1
        assert x[1, 0].item() == 0.5 and x._version == 1
        x[t0] += 1
        assert x[1, 0].item() == 1.5 and x._version == 3  # (the read's view, then setitem)


SELF_COPIES = {
    "t0_onto_itself": lambda L, x: x.__setitem__(L.tensor(1), x[L.tensor(1)]),
    "int_onto_itself": lambda L, x: x.__setitem__(1, x[1]),
    "t0_row_onto_another": lambda L, x: x.__setitem__(L.tensor(0), x[L.tensor(1)]),
    "t0_column_onto_another": lambda L, x: x.__setitem__((slice(None), L.tensor(0)), x[:, 1]),
    "expanded_row_onto_itself": lambda L, x: x.__setitem__(0, x[0:1].expand(1, 4)),
    "t0_iadd_through_view": lambda L, x: x.__setitem__(L.tensor(1), x[L.tensor(1)] + 1),
    "row_into_column": lambda L, x: x.__setitem__((0, slice(0, 3)), x[:, 1]),
}


@pytest.mark.parametrize("name", sorted(SELF_COPIES))
def test_self_copies_allowed_as_torch(name):
    out = []
    for lib in (rg, torch):
        x = _x(lib)
        SELF_COPIES[name](lib, x)
        out.append(x)
    _same(*out)


SELF_COPIES_REFUSED = {
    "rows_shifted_by_list": lambda L, x: x.__setitem__([0, 1], x[1:3]),
    "slices_overlapping": lambda L, x: x[0:2].copy_(x[1:3]),
}


@pytest.mark.parametrize("name", sorted(SELF_COPIES_REFUSED))
def test_partial_overlaps_refused_or_allowed_as_torch(name):
    outcomes = []
    for lib in (rg, torch):
        x = _x(lib)
        try:
            SELF_COPIES_REFUSED[name](lib, x)
            outcomes.append(("ok", x.numpy().tolist()))
        except RuntimeError as e:
            outcomes.append(("error", str(e).split(" (")[0].split(". ")[0]))
    assert outcomes[0] == outcomes[1]


def test_non_tuple_sequence_warns_as_torch_at_the_users_line():
    for lib in (rg, torch):
        x = _x(lib)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x[[[0, 1], [2, 3]]]
        assert len(w) == 1 and w[0].filename == __file__
        assert str(w[0].message).startswith(
            "Using a non-tuple sequence for multidimensional indexing is deprecated and will "
            "be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq].")


def test_uint8_index_is_a_mask_with_torchs_warning():
    for lib in (rg, torch):
        x = _x(lib)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = x[lib.tensor([1, 0, 1], dtype=lib.uint8)]
            r0 = x[lib.tensor(1, dtype=lib.uint8)]
        assert tuple(r.shape) == (2, 4) and tuple(r0.shape) == (1, 3, 4)
        messages = {str(m.message).split(" (Triggered")[0] for m in w}
        assert messages == {"indexing with dtype torch.uint8 is now deprecated, please use a "
                            "dtype torch.bool instead."}
        assert len(w) == 2 or lib is torch  # (torch warns once per call site)


ERRORS = {
    "t0_out_of_bounds": (lambda L, x: x[L.tensor(5)], IndexError,
                         "index 5 is out of bounds for dimension 0 with size 3"),
    "range_out_of_bounds": (lambda L, x: x[range(5)], IndexError,
                            "index 3 is out of bounds for dimension 0 with size 3"),
    "lists_not_broadcastable": (lambda L, x: x[[0, 1], [0, 1, 2]], IndexError,
                                "shape mismatch: indexing tensors could not be broadcast "
                                "together with shapes [2], [3]"),
    "float_in_tuple": (lambda L, x: x[[0.5, [1]]], IndexError,
                       "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                       "Variables are valid indices (got float)"),
    "float_tensor": (lambda L, x: x[L.tensor(1.0)], IndexError,
                     "tensors used as indices must be long, int, byte or bool tensors"),
    "too_many": (lambda L, x: x[L.tensor(0), 0, 0], IndexError,
                 "too many indices for tensor of dimension 2"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_index_errors_as_torch(name):
    call, kind, message = ERRORS[name]
    for lib in (torch, rg):
        with pytest.raises(kind) as e:
            _quiet(call, lib, _x(lib))
        assert str(e.value).startswith(message)
