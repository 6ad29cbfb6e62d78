"""einsum in each of PyTorch's call forms: equation and operands, equation and one list, and
the sublist form with an optional output list and ellipses (Note [einsum's call forms] in
_functions/matmul.py), against torch: values, dtypes, shapes, gradients, grad_fn, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg


def _operands(lib):
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.standard_normal(s), dtype=lib.float32, requires_grad=True)
            for s in ((2, 3), (3, 4), (2, 3, 4), (3, 3))]


FORMS = {
    "equation": lambda L, a, b, c, d: L.einsum("ij,jk->ik", a, b),
    "equation_list": lambda L, a, b, c, d: L.einsum("ij,jk->ik", [a, b]),
    "equation_tuple": lambda L, a, b, c, d: L.einsum("ij,jk->ik", (a, b)),
    "equation_one_list": lambda L, a, b, c, d: L.einsum("ij->ji", [a]),
    "sublist": lambda L, a, b, c, d: L.einsum(a, [0, 1], b, [1, 2]),
    "sublist_output": lambda L, a, b, c, d: L.einsum(a, [0, 1], b, [1, 2], [0, 2]),
    "sublist_output_transposed": lambda L, a, b, c, d: L.einsum(a, [0, 1], b, [1, 2], [2, 0]),
    "sublist_tuples": lambda L, a, b, c, d: L.einsum(a, (0, 1), b, (1, 2)),
    "sublist_high_subscripts": lambda L, a, b, c, d: L.einsum(a, [30, 51], [51]),
    "sublist_numpy_ints": lambda L, a, b, c, d: L.einsum(a, [np.int64(0), 1], [0]),
    "sublist_trace": lambda L, a, b, c, d: L.einsum(d, [0, 0]),
    "sublist_one_operand_output": lambda L, a, b, c, d: L.einsum(a, [0, 1], [1]),
    "sublist_ellipsis": lambda L, a, b, c, d: L.einsum(c, [..., 1], b.T, [1, 2], [..., 2]),
    "sublist_ellipsis_no_output": lambda L, a, b, c, d: L.einsum(c, [Ellipsis, 2], b.T, [2, 3]),
    "sublist_ellipsis_middle": lambda L, a, b, c, d: L.einsum(c, [0, ..., 2], [2, ..., 0]),
    "sublist_three_operands": lambda L, a, b, c, d: L.einsum(a, [0, 1], d, [1, 2], b,
                                                             [2, 3], [3, 0]),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_einsum_forms_as_torch(name):
    results = []
    for lib in (rg, torch):
        ops = _operands(lib)
        out = FORMS[name](lib, *ops)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        results.append((out, [o.grad for o in ops], out.grad_fn.name()))
    (r, rg_grads, rn), (t, t_grads, tn) = results
    assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
    np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert rn == tn
    for g1, g2 in zip(rg_grads, t_grads):
        assert (g1 is None) == (g2 is None)
        if g1 is not None:
            np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-5, atol=1e-6)


def test_sublist_form_is_the_equation_it_stands_for():
    a, b = rg.randn(2, 3), rg.randn(3, 4)
    assert rg.equal(rg.einsum(a, [0, 1], b, [1, 2], [2, 0]), rg.einsum("AB,BC->CA", a, b))


ERRORS = {
    "no_arguments": (lambda L, a: L.einsum(), ValueError,
                     "einsum(): must specify the equation string and at least one operand, or "
                     "at least one operand and its subscripts list"),
    "no_operands": (lambda L, a: L.einsum("ij->i"), ValueError,
                    "einsum(): must specify the equation string and at least one operand"),
    "subscript_52": (lambda L, a: L.einsum(a, [0, 52], [52]), ValueError,
                     "einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)"),
    "subscript_negative": (lambda L, a: L.einsum(a, [0, -1], [0]), ValueError,
                           "einsum(): subscript in subscript list is not within the valid "
                           "range [0, 52)"),
    "subscript_not_a_number": (lambda L, a: L.einsum(a, [0, "a"]), TypeError,
                               "'>=' not supported between instances of 'str' and 'int'"),
    "tensor_as_output_list": (lambda L, a: L.einsum(a, [0, 1], a), RuntimeError,
                              "Boolean value of Tensor with more than one value is ambiguous"),
    "too_few_subscripts": (lambda L, a: L.einsum(a, [0], [0]), RuntimeError,
                           "einsum(): the number of subscripts in the equation (1) does not "
                           "match the number of dimensions (2) for operand 0 and no ellipsis "
                           "was given"),
    "two_ellipses": (lambda L, a: L.einsum(a, [..., 0, ...]), RuntimeError,
                     "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    "operand_not_a_tensor": (lambda L, a: L.einsum("ij->ji", 3), TypeError,
                             "expected Tensor as element 0 in argument 1, but got int"),
    "too_few_operands": (lambda L, a: L.einsum("ij,jk->ik", a), RuntimeError,
                         "einsum(): fewer operands were provided than specified in the "
                         "equation"),
    "too_many_operands": (lambda L, a: L.einsum("ij->i", a, a), RuntimeError,
                          "einsum(): more operands were provided than specified in the "
                          "equation"),
    "sizes_disagree": (lambda L, a: L.einsum(a, [0, 1], a, [1, 0]), RuntimeError,
                       "einsum(): subscript B has size 2 for operand 1 which does not "
                       "broadcast with previously seen size 3"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_einsum_errors_as_torch(name):
    call, kind, message = ERRORS[name]
    for lib in (torch, rg):
        with pytest.raises(kind) as e:
            call(lib, lib.ones(2, 3))
        assert str(e.value).startswith(message), (lib.__name__, str(e.value))


@pytest.mark.parametrize("form", ["equation", "equation_list", "sublist_output"])
def test_autocast_category_in_every_form(form):
    dtypes = []
    for lib in (rg, torch):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            dtypes.append(str(FORMS[form](lib, *_operands(lib)).dtype))
    assert dtypes[0] == dtypes[1] == "torch.bfloat16"
