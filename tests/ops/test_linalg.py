"""torch.linalg beyond the op database (tests/support/opdb_linalg.py): PyTorch's errors for
singular and non-positive-definite inputs (``LinAlgError``) and for bad arguments, the
``info`` of the ``_ex`` forms, the node names of the decompositions, gradients where the
op database cannot go (singular det, the QR modes without a derivative), forward mode.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(m) for m = torch and m = retrograd: (result or exception) of each."""
    out = []
    for m in (torch, R):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(m))
        except Exception as e:
            out.append(e)
    return out


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
NOT_PD = [[1.0, 0.0], [0.0, -1.0]]


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.tensor(SINGULAR)),
    lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor(SINGULAR)])),
    lambda m: m.inverse(m.zeros(3, 3)),
    lambda m: m.linalg.solve(m.tensor(SINGULAR), m.ones(2)),
    lambda m: m.linalg.solve(m.stack([m.eye(2), m.tensor(SINGULAR)]), m.ones(2, 2, 1)),
    lambda m: m.linalg.cholesky(m.tensor(NOT_PD)),
    lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor(NOT_PD)])),
    lambda m: m.linalg.inv_ex(m.tensor(SINGULAR), check_errors=True),
    lambda m: m.linalg.matrix_power(m.tensor(SINGULAR), -1),
], ids=["inv", "inv-batched", "inverse", "solve", "solve-batched", "cholesky",
        "cholesky-batched", "inv_ex-check", "matrix_power"])
def test_linalg_error_has_torchs_message(call):
    t, r = _both(call)
    assert type(t).__name__ == "_LinAlgError" and isinstance(t, torch.linalg.LinAlgError)
    assert isinstance(r, R.linalg.LinAlgError) and isinstance(r, RuntimeError), r
    assert str(r).startswith(str(t)), (str(r), str(t))  # then our sentence with the fix


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.ones(2, 3)),
    lambda m: m.linalg.inv(m.ones(3)),
    lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.det(m.ones(2, 3)),
    lambda m: m.linalg.solve(m.eye(2), m.ones(3)),
    lambda m: m.linalg.qr(m.eye(2), mode="x"),
    lambda m: m.linalg.eigh(m.eye(2), UPLO="X"),
    lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.linalg.multi_dot([m.eye(2)]),
], ids=["non-square", "1-d", "integer", "det-non-square", "solve-shapes", "qr-mode",
        "eigh-uplo", "cross-length", "multi_dot-one"])
def test_argument_errors_match_torch(call):
    t, r = _both(call)
    assert isinstance(t, Exception) and type(r) is type(t), (t, r)
    assert str(r).startswith(str(t).split(" (")[0]), (str(r), str(t))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv_ex(m.stack([m.eye(2), m.tensor(SINGULAR)])).info,
    lambda m: m.linalg.cholesky_ex(m.stack([m.tensor(NOT_PD), m.eye(2)])).info,
    lambda m: m.linalg.solve_ex(m.tensor(SINGULAR), m.ones(2)).info,
    lambda m: m.linalg.cholesky_ex(m.eye(3) * 2).info,
], ids=["inv_ex", "cholesky_ex", "solve_ex", "cholesky_ex-ok"])
def test_ex_info_matches_torch(call):
    t, r = _both(call)
    assert str(r.dtype) == str(t.dtype)
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_decomposition_node_names_and_output_grad_flags():
    a = np.random.default_rng(0).standard_normal((3, 3))
    spd = a @ a.T + 3 * np.eye(3)

    def names(m):
        x = m.tensor(a, requires_grad=True)
        s = m.tensor(spd, requires_grad=True)
        outs = [*m.linalg.eigh(s), *m.linalg.svd(x), *m.svd(x), *m.linalg.qr(x),
                m.linalg.eigvalsh(s), m.linalg.svdvals(x), *m.linalg.slogdet(x),
                *m.linalg.inv_ex(x), *m.linalg.cholesky_ex(s)]
        return [(o.grad_fn.name() if o.grad_fn else None, o.requires_grad) for o in outs]

    t, r = _both(names)
    assert r == t


def test_det_gradient_at_singular_matrices_matches_torch():
    for M in (SINGULAR, [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]):
        def grads(m, M=M):
            a = m.tensor(M, dtype=m.float64, requires_grad=True)
            (g,) = m.autograd.grad(m.linalg.det(a), a, create_graph=True)
            (gg,) = m.autograd.grad((g * g).sum(), a)
            return _np(g), _np(gg)
        t, r = _both(grads)
        np.testing.assert_allclose(r[0], t[0], atol=1e-12)
        np.testing.assert_allclose(r[1], t[1], atol=1e-12)


def test_slogdet_backward_at_a_singular_matrix_explains():
    a = R.tensor(SINGULAR, requires_grad=True)
    with pytest.raises(R.linalg.LinAlgError, match="linalg.slogdet: the backward pass"):
        R.linalg.slogdet(a).logabsdet.backward()


def test_qr_modes_without_a_derivative_raise_torchs_error():
    def mode_r(m):
        m.linalg.qr(m.ones(3, 2, requires_grad=True) + m.eye(3, 2), mode="r").R.sum().backward()

    def complete_tall(m):
        q, r = m.linalg.qr(m.ones(3, 2, requires_grad=True) + m.eye(3, 2), mode="complete")
        (q.sum() + r.sum()).backward()

    for call in (mode_r, complete_tall):
        t, r = _both(call)
        assert isinstance(t, RuntimeError) and isinstance(r, RuntimeError)
        assert str(r).startswith(str(t).split(" (")[0][:60]), (str(r), str(t))


def test_eigenvector_gauge_invariant_loss_matches_torch():
    # |v_k|^2 weighted by eigenvalue: independent of each eigenvector's sign
    a = np.random.default_rng(1).standard_normal((2, 4, 4))

    def grad(m):
        x = m.tensor(a, requires_grad=True)
        w, v = m.linalg.eigh(x + x.mT)
        loss = ((v * v) * w.unsqueeze(-2)).sum() + (v @ v.mT).diagonal(0, -2, -1).sum()
        (g,) = m.autograd.grad(loss, x)
        return _np(g)

    t, r = _both(grad)
    np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-10)


def test_forward_mode_through_linalg_records():
    import torch.autograd.forward_ad as fwT

    import retrograd.autograd.forward_ad as fwR

    a = np.random.default_rng(2).standard_normal((3, 3)) + 3 * np.eye(3)
    da = np.random.default_rng(3).standard_normal((3, 3))

    def jvp(m, fw):
        with fw.dual_level():
            x = fw.make_dual(m.tensor(a), m.tensor(da))
            outs = [m.linalg.inv(x), m.linalg.det(x), m.linalg.solve(x, x.sum(-1)),
                    m.linalg.matrix_exp(x * 0.1), m.linalg.cholesky(x @ x.mT)]
            return [_np(fw.unpack_dual(o).tangent) for o in outs]

    t, r = jvp(torch, fwT), jvp(R, fwR)
    for x, y in zip(r, t):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-10)


def test_eigvals_and_svdvals_without_grad_skip_the_vectors():
    a = np.random.default_rng(4).standard_normal((3, 3))
    t, r = _both(lambda m: (_np(m.linalg.eigvalsh(m.tensor(a + a.T))),
                            _np(m.linalg.svdvals(m.tensor(a)))))
    np.testing.assert_allclose(r[0], t[0], rtol=1e-12)
    np.testing.assert_allclose(r[1], t[1], rtol=1e-12)


def test_pinv_tolerances_match_torch():
    a = np.diag([3.0, 1e-3, 0.5])
    for kw in ({}, {"rtol": 0.1}, {"atol": 0.6}, {"atol": 0.1, "rtol": 0.5},
               {"hermitian": True, "atol": 0.01}):
        t, r = _both(lambda m, kw=kw: _np(m.linalg.pinv(m.tensor(a), **kw)))
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12, err_msg=str(kw))


def test_linalg_namespace_and_top_level_methods():
    x = R.eye(2) * 2
    for name in ("inverse", "det", "slogdet", "logdet", "pinverse", "matrix_exp", "cholesky",
                 "cholesky_inverse", "svd", "qr"):
        assert callable(getattr(x, name)), name
    assert x.matrix_power(2).tolist() == [[4.0, 0.0], [0.0, 4.0]]
    assert issubclass(R.linalg.LinAlgError, RuntimeError)


def test_eig_and_eigvals_raise_for_want_of_complex_dtypes():
    for fn in (R.linalg.eig, R.linalg.eigvals):
        with pytest.raises(NotImplementedError, match="no complex dtypes.*eigh"):
            fn(R.eye(2))


def test_lu_factor_of_a_singular_matrix_and_lu_without_pivoting():
    for a in ([[0.0, 0.0], [0.0, 0.0]], [[[1.0, 0.0], [0.0, 1.0]], SINGULAR]):
        t, r = _both(lambda m, a=a: m.linalg.lu_factor(m.tensor(a)))
        assert type(r) is type(t) is RuntimeError and str(r) == str(t), (r, t)
    t, r = _both(lambda m: m.linalg.lu_factor_ex(m.tensor(SINGULAR)).info)
    np.testing.assert_array_equal(r.numpy(), t.numpy())
    t, r = _both(lambda m: m.linalg.lu(m.eye(2), pivot=False))
    assert type(r) is type(t) and str(r) == str(t), (r, t)


def test_lstsq_residuals_gradient_matches_torch():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))

    def grads(m):
        x, y = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        r = m.linalg.lstsq(x, y, driver="gelsd")
        return [_np(g) for g in m.autograd.grad(r.residuals.sum() + r.solution.sum(), (x, y))]

    t, r = _both(grads)
    for x, y in zip(r, t):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


def test_ldl_factor_has_no_derivative_as_in_torch():
    def back(m):
        a = m.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
        ld = m.linalg.ldl_factor(a).LD
        assert ld.grad_fn.name().endswith("NotImplemented")
        ld.sum().backward()

    t, r = _both(back)
    assert type(r) is type(t) is RuntimeError
    assert str(r).startswith(str(t)), (str(r), str(t))


def test_vander_refuses_fewer_than_two_columns():
    for m in (torch, R):
        for x, kw in ((m.tensor([1.0, 2.0]), {"N": 1}), (m.tensor([1.0]), {}),
                      (m.tensor(2.0), {}), (m.tensor([1.0, 2.0]), {"N": -1})):
            with pytest.raises(RuntimeError, match="N must be greater than 1"):
                m.linalg.vander(x, **kw)


def test_lu_factor_ex_check_errors_raises_pytorchs_error():
    a = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])])
    msgs = []
    for m in (torch, R):
        with pytest.raises(RuntimeError) as e:
            m.linalg.lu_factor_ex(m.tensor(a), check_errors=True)
        assert type(e.value) is RuntimeError  # not LinAlgError, as PyTorch
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]
