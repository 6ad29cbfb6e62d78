"""retrograd.special and the special elementwise math beyond the op database
(tests/support/opdb_special.py): the namespace against torch.special, SciPy's lazy import, the
errors PyTorch raises, the gradients PyTorch refuses, and edge values."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import retrograd as R

_SPECIAL = ["airy_ai", "bessel_y0", "bessel_y1", "gammainc", "gammaincc", "modified_bessel_i0",
            "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
            "bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
            "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
            "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
            "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]


def test_namespace_matches_torch_special():
    import retrograd.special as S

    assert R.special is S
    for name in _SPECIAL:
        assert hasattr(torch.special, name), name
        assert hasattr(S, name), name


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv", "copysign", "nextafter",
                                  "heaviside", "polygamma", "mvlgamma", "igamma", "igammac"])
def test_exposure_matches_torch(name):
    for suffix in ("", "_"):
        assert hasattr(R, name + suffix) == hasattr(torch, name + suffix), name + suffix
        assert hasattr(R.Tensor, name + suffix) == hasattr(torch.Tensor, name + suffix)


def test_import_does_not_load_scipy():
    code = ("import sys, retrograd; assert 'scipy' not in sys.modules; "
            "retrograd.lgamma(retrograd.tensor([2.])); assert 'scipy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# edge values: poles, branch limits and nan, compared with torch in float64 and float32
_EDGES = {
    "lgamma": [0.0, -1.0, -2.5, float("inf"), float("nan")],
    "digamma": [0.0, -0.0, -1.0, -2.5, float("inf")],
    "erfinv": [-1.0, 1.0, 1.5, 0.0],
    "erfc": [-30.0, 30.0, float("-inf")],
    "i0": [0.0, 50.0, -50.0],
    "sinc": [0.0, 1.0, -2.0, 1e-20],
    "logit": [0.0, 1.0, -0.5, 1.5],
    "acosh": [1.0, 0.5],
    "atanh": [1.0, -1.0, 2.0],
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(_EDGES))
def test_edge_values(name, dtype):
    x = np.array(_EDGES[name], dtype=dtype)
    r = getattr(R, name)(R.tensor(x)).numpy()
    t = getattr(torch, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(r, t, rtol=2e-6, equal_nan=True)


def test_special_edge_values():
    x = np.array([0.0, 1.0, -1.0, 0.5, float("nan")])
    for name in ("ndtri", "entr", "log_ndtr", "erfcx", "i1e", "bessel_j1"):
        r = getattr(R.special, name)(R.tensor(x)).numpy()
        t = getattr(torch.special, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(r, t, rtol=1e-12, equal_nan=True, err_msg=name)


def test_integer_inputs_promote_to_float():
    for fn in ("lgamma", "digamma", "erfc", "i0", "sinc", "deg2rad", "asinh", "logit"):
        r = getattr(R, fn)(R.tensor([1, 2]))
        assert r.dtype == R.float32, fn
    assert R.xlogy(R.tensor([0, 2]), R.tensor([0, 3])).dtype == R.float32
    assert R.copysign(R.tensor([1, 2]), -1).dtype == R.float32
    assert R.heaviside(R.tensor([1, 0, -1]), R.tensor([5])).dtype == R.int64
    m, e = R.frexp(R.tensor([8.0, 0.75]))
    assert e.dtype == R.int32 and e.tolist() == [4, 0] and m.tolist() == [0.5, 0.75]


def _same_error(fr, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as er:
        fr()
    assert str(er.value).startswith(str(et.value).split(" (")[0].rstrip(".")), (er.value,
                                                                                  et.value)


@pytest.mark.parametrize("call", [
    lambda m: m.logaddexp(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.nextafter(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.frexp(m.tensor([1, 2])),
    lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])),
    lambda m: m.heaviside(m.tensor([1.0]), 1),
    lambda m: m.ldexp(m.tensor([1.0]), 3),
    lambda m: m.polygamma(-1, m.tensor([1.0])),
    lambda m: m.mvlgamma(m.tensor([1.0]), 0),
    lambda m: m.xlogy(2, 3),
    lambda m: m.special.zeta(2.0, 3.0),
    lambda m: m.special.round(m.tensor([1, 2])),
    lambda m: m.igamma(m.tensor([1]), m.tensor([2])),
    lambda m: m.special.gammaincc(m.tensor([1.0]), 2.0),
], ids=["logaddexp-int", "nextafter-int", "frexp-int", "heaviside-dtypes", "heaviside-number",
        "ldexp-number", "polygamma-neg", "mvlgamma-p0", "xlogy-numbers", "zeta-numbers",
        "special-round-int", "igamma-int", "gammaincc-number"])
def test_errors_match_torch(call):
    _same_error(lambda: call(R), lambda: call(torch))


def test_gradients_pytorch_refuses():
    for m in (torch, R):
        x = m.tensor([2.5], dtype=m.float64, requires_grad=True)
        y = m.tensor([1.5], dtype=m.float64, requires_grad=True)
        # zeta: no derivative in its first operand; the second's is -x * zeta(x + 1, q)
        with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not "
                                                      "implemented"):
            m.special.zeta(x, y).sum().backward()
        (gy,) = m.autograd.grad(m.special.zeta(x.detach(), y).sum(), y)
        assert abs(float(gy) + 2.5 * float(m.special.zeta(x.detach() + 1, y.detach()))) < 1e-12
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not "
                                               "implemented"):
            m.heaviside(x, y).sum().backward()
        assert m.special.bessel_j0(x).grad_fn is None
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is "
                                                      "not implemented"):
            m.igamma(x, y).sum().backward()
        # asinh_/acosh_/atanh_: PyTorch's in-place overloads have no derivative
        for name, v in (("asinh_", 0.5), ("acosh_", 1.5), ("atanh_", 0.5)):
            z = m.tensor([v], dtype=m.float64, requires_grad=True)
            w = getattr(z * 1, name)()
            assert w.grad_fn.name() == name[:-1].capitalize() + "Backward1"
            with pytest.raises(NotImplementedError, match="the derivative for 'inplace "
                                                          f"version of {name[:-1]}' is not"):
                w.sum().backward()
        # nextafter: the gradient passes to self where self != other, none to other
        a = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([3.0, 2.0], dtype=m.float64, requires_grad=True)
        ga, gb = m.autograd.grad(m.nextafter(a, b).sum(), (a, b))
        assert ga.tolist() == [1.0, 0.0] and gb.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name", ["digamma", "erfinv", "lgamma", "i0"])
def test_third_derivative(name):
    """The rules are Tensor ops all the way down: a third derivative matches torch's."""
    outs = []
    for m in (torch, R):
        x = m.tensor([0.3, 0.7], dtype=m.float64, requires_grad=True)
        y = getattr(m, name)(x).sum()
        for _ in range(3):
            (y,) = m.autograd.grad(y, x, create_graph=True)
            y = y.sum()
        outs.append(float(y))
    assert outs[1] == pytest.approx(outs[0], rel=1e-8)


def test_special_round_and_aliases():
    x = R.tensor([0.5, 1.5, 2.567], requires_grad=True)
    assert R.special.round(x).grad_fn.name() == "RoundBackward1"
    assert R.special.expit is R.sigmoid and R.special.psi is R.digamma
    assert R.special.gammaln is R.lgamma
    assert R.special.softmax(R.tensor([0.0, 0.0]), 0).tolist() == [0.5, 0.5]


# forward mode (each record's jvp rule) and batched gradients (batch_ok rules) vs torch
_FWD = {
    "gamma": lambda m, a, b: (m.lgamma(a), m.digamma(a), m.polygamma(2, a), m.mvlgamma(a, 2)),
    "erf": lambda m, a, b: (m.erfc(b), m.erfinv(b * 0.5), m.special.erfcx(b),
                            m.special.ndtri(a * 0.2), m.special.log_ndtr(b)),
    "bessel": lambda m, a, b: (m.i0(b), m.special.i0e(b), m.special.i1(b), m.special.i1e(b)),
    "logs": lambda m, a, b: (m.special.entr(a), m.sinc(b), m.logit(a * 0.2), m.xlogy(b, a),
                             m.special.xlog1py(b, a), m.special.bessel_j0(b)),
    "binary": lambda m, a, b: (m.logaddexp(a, b), m.logaddexp2(a, b), m.copysign(a, b),
                               m.ldexp(a, b), m.nextafter(a, b), m.frexp(b)[0]),
    "angles": lambda m, a, b: (m.deg2rad(b), m.rad2deg(b), m.asinh(b), m.acosh(a + 1),
                               m.atanh(b * 0.5), m.special.ndtr(b)),
}
_A = np.array([[0.7, 1.3, 2.1], [3.2, 0.4, 1.9]])  # positive, away from the poles
_B = np.array([[-1.2, 0.3, 0.9], [1.7, -0.6, 0.2]])


@pytest.mark.parametrize("name", sorted(_FWD))
def test_forward_mode_matches_torch(name):
    rng = np.random.default_rng(0)
    tangents = [rng.standard_normal(_A.shape), rng.standard_normal(_B.shape)]
    res = []
    for m in (torch, R):
        prim = tuple(m.tensor(x, dtype=m.float64) for x in (_A, _B))
        tan = tuple(m.tensor(x, dtype=m.float64) for x in tangents)
        _, out = m.func.jvp(lambda a, b, m=m: _FWD[name](m, a, b), prim, tan)
        res.append([o.numpy() for o in out])
    for r, t in zip(*reversed(res)):
        np.testing.assert_allclose(r, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(_FWD))
def test_batched_grads_match_torch(name):
    res = []
    for m in (torch, R):
        a = m.tensor(_A, dtype=m.float64, requires_grad=True)
        b = m.tensor(_B, dtype=m.float64, requires_grad=True)
        y = sum((o * (k + 1)).sum() for k, o in enumerate(_FWD[name](m, a, b)))
        (ga, gb) = m.autograd.grad(y, (a, b), m.tensor([1.0, -2.0], dtype=m.float64),
                                   is_grads_batched=True, allow_unused=True)
        res.append([None if g is None else g.numpy() for g in (ga, gb)])
    for r, t in zip(*reversed(res)):
        assert (r is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(r, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("call", [lambda m, a: m.special.zeta(a + 1, a),
                                  lambda m, a: m.special.zeta(3.0, a),
                                  lambda m, a: (a * 1).asinh_(),
                                  lambda m, a: m.heaviside(a, a)])
def test_forward_mode_refused_as_torch(call):
    for m in (torch, R):
        a = m.tensor([0.5, 0.7], dtype=m.float64)
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
            m.func.jvp(lambda x, m=m: call(m, x), (a,), (m.ones_like(a),))


@pytest.mark.parametrize("call", [
    lambda m, x, o: m.lgamma(x, out=o), lambda m, x, o: m.special.erfcx(x, out=o),
    lambda m, x, o: m.polygamma(1, x, out=o), lambda m, x, o: m.xlogy(x, 2.0, out=o),
    lambda m, x, o: m.special.zeta(x + 1, x, out=o), lambda m, x, o: m.logit(x, 0.1, out=o),
    lambda m, x, o: m.ldexp(x, x.long(), out=o)])
def test_out_argument_matches_torch(call):
    res = []
    for m in (torch, R):
        x = m.tensor([0.25, 0.5, 3.0], dtype=m.float64)
        o = m.zeros(3, dtype=m.float64)
        assert call(m, x, o) is o
        res.append(o.numpy().copy())
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            call(m, x.requires_grad_(), m.zeros(3, dtype=m.float64))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


def test_ndtr_out_keeps_autograd_as_torch():
    """special.ndtr is a composite in PyTorch: out= is a copy_, with its CopyBackwards."""
    res = []
    for m in (torch, R):
        x = m.tensor([0.25, -1.0], dtype=m.float64, requires_grad=True)
        o = m.zeros(2, dtype=m.float64)
        assert m.special.ndtr(x, out=o) is o
        o.sum().backward()
        res.append((o.detach().numpy().copy(), o.grad_fn.name(), x.grad.numpy().copy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    assert res[1][1] == res[0][1]
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-12)


def test_out_refuses_a_keyword_tensor_that_requires_grad():
    # out= checks every tensor argument, positional or keyword, as PyTorch does
    for m in (torch, R):
        x = m.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="out=... arguments don't support"):
            m.lgamma(input=x, out=m.empty(2))
        with pytest.raises(RuntimeError, match="out=... arguments don't support"):
            m.xlogy(m.ones(2), other=x, out=m.empty(2))
