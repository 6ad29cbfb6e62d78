"""torch.linalg's LAPACK calls and checks, each against torch: lstsq runs LAPACK once;
ldl_factor checks LAPACK's info with PyTorch's error; linalg.norm's dim/ord checks; the
singular-value tolerances of pinv / matrix_rank (Note [Singular-value tolerances])."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
from retrograd.ops.kernels import linalg as K

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
A43 = RNG.standard_normal((2, 4, 3))
B42 = RNG.standard_normal((2, 4, 2))


def _raises_like_torch(call, torch_text=None):
    """Both raise one exception type; retrograd's message starts with torch's (up to its
    first " (" or, with ``torch_text``, that part of torch's message)."""
    errs = []
    for m in (torch, R):
        with pytest.raises(Exception) as info:
            call(m)
        errs.append(info.value)
    t, r = errs
    assert type(r) is type(t) or isinstance(r, type(t)), (t, r)
    head = torch_text(str(t)) if torch_text else str(t).split(" (")[0]
    assert str(r).startswith(head), (str(r), str(t))


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_runs_lapack_once_and_matches_torch(driver, monkeypatch):
    calls = []
    real = K.lstsq
    monkeypatch.setattr(K, "lstsq", lambda *a: calls.append(1) or real(*a))
    outs = {}
    for m in (torch, R):
        a = m.tensor(A43, requires_grad=True)
        b = m.tensor(B42, requires_grad=True)
        outs[m] = (m.linalg.lstsq(a, b, driver=driver), a, b)
    assert len(calls) == 1
    (t, ta, tb), (r, ra, rb) = outs[torch], outs[R]
    for field in ("solution", "residuals", "rank", "singular_values"):
        tv, rv = getattr(t, field), getattr(r, field)
        assert str(rv.dtype) == str(tv.dtype) and tuple(rv.shape) == tuple(tv.shape), field
        assert rv.requires_grad == tv.requires_grad, field
        np.testing.assert_allclose(rv.detach().numpy(), tv.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    for res, _, _ in outs.values():
        loss = res.solution.sum() + (res.residuals.sum() if res.residuals.numel() else 0)
        loss.backward()
    np.testing.assert_allclose(ra.grad.numpy(), ta.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(rb.grad.numpy(), tb.grad.numpy(), rtol=1e-9, atol=1e-10)


SINGULAR_SYM = [[1.0, 0.0], [0.0, 0.0]]


def _after_assert(text: str) -> str:
    # PyTorch raises these from an internal assert: compare what follows its boilerplate
    return text.split("please report a bug to PyTorch. ")[-1]


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.ldl_factor(m.tensor(SINGULAR_SYM)),
    lambda m: m.linalg.ldl_factor(m.zeros(2, 2)),
    lambda m: m.linalg.ldl_factor(m.stack([m.eye(2), m.tensor(SINGULAR_SYM)])),
    lambda m: m.linalg.ldl_factor_ex(m.tensor(SINGULAR_SYM), check_errors=True),
    lambda m: m.linalg.ldl_factor_ex(m.stack([m.tensor(SINGULAR_SYM), m.eye(2)]),
                                     check_errors=True),
], ids=["ldl_factor", "zeros", "batched", "ex-check", "ex-check-batched"])
def test_ldl_factor_checks_info_as_torch(call):
    _raises_like_torch(call, _after_assert)


def test_ldl_factor_ex_without_check_gives_torchs_info():
    a = np.stack([SINGULAR_SYM, np.eye(2), np.zeros((2, 2))])
    r, t = (m.linalg.ldl_factor_ex(m.tensor(a)).info.numpy() for m in (R, torch))
    np.testing.assert_array_equal(r, t)


X3 = RNG.standard_normal((3, 4, 5))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.norm(m.tensor(X3), 2),
    lambda m: m.linalg.norm(m.tensor(X3), "fro"),
    lambda m: m.linalg.norm(m.tensor(X3), "nuc"),
    lambda m: m.linalg.norm(m.tensor(X3), float("inf")),
    lambda m: m.linalg.norm(m.tensor(X3), dim=(0, 1, 2)),
    lambda m: m.linalg.norm(m.tensor(X3), 2, dim=(0, 1, 2)),
    lambda m: m.linalg.norm(m.tensor(X3), "fro", dim=(0, 1, 2)),
    lambda m: m.linalg.norm(m.tensor(X3), dim=()),
    lambda m: m.linalg.norm(m.tensor(X3), "fro", dim=(0,)),
    lambda m: m.linalg.norm(m.tensor(X3), 3, dim=(0, 1)),
    lambda m: m.linalg.norm(m.ones(3), "fro"),
    lambda m: m.linalg.matrix_norm(m.ones(3)),
], ids=["3d-ord2", "3d-fro", "3d-nuc", "3d-inf", "dim3", "dim3-ord", "dim3-fro", "dim0",
        "fro-one-dim", "matrix-ord3", "fro-1d", "matrix_norm-1d"])
def test_norm_argument_errors_match_torch(call):
    _raises_like_torch(call)


@pytest.mark.parametrize("kw", [dict(ord=None), dict(ord=2), dict(ord=3, dim=1),
                                dict(ord="fro", dim=(0, 2)), dict(ord="nuc", dim=(2, 1)),
                                dict(ord=1, dim=[0, 1], keepdim=True), dict(dim=(0, 1, 2)[:2])])
def test_norm_values_still_match_torch(kw):
    x = X3 if kw.get("dim") is not None or kw.get("ord") is None else X3[0]
    r, t = (m.linalg.norm(m.tensor(x), **kw).numpy() for m in (R, torch))
    np.testing.assert_allclose(r, t, rtol=1e-12)


SV = np.diag([3.0, 1.0, 1e-3, 1e-17])


@pytest.mark.parametrize("kw", [
    {}, dict(atol=0.5), dict(rtol=0.1), dict(atol=0.5, rtol=0.1), dict(atol=0.0),
    dict(atol="batch"), dict(rtol="batch"), dict(hermitian=True), dict(hermitian=True, atol=2.0),
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "defaults")
def test_tolerances_match_torch(kw):
    a = np.stack([SV, 2 * SV, SV[::-1, ::-1].copy()])

    def run(m):
        args = {k: (m.tensor([0.0, 2.5, 0.0]) if v == "batch" and k == "atol" else
                    m.tensor([1e-2, 0.5, 0.0]) if v == "batch" else v) for k, v in kw.items()}
        t = m.tensor(a)
        return m.linalg.matrix_rank(t, **args).numpy(), m.linalg.pinv(t, **args).numpy()

    (rr, rp), (tr, tp) = run(R), run(torch)
    np.testing.assert_array_equal(rr, tr)
    np.testing.assert_allclose(rp, tp, rtol=1e-12, atol=1e-12)
