"""Op-database entries of the special functions (ops/records/special.py): samples on each
function's domain, run by test_ops.py against torch (values, dtypes, gradients, gradcheck,
gradgradcheck, in-place forms). Loaded by the last line of opdb.py."""

from __future__ import annotations

from opdb import SHAPES_2, A, S, binary, one, op, unary, vals

_F32 = (2e-5, 2e-6)  # float32 kernels: SciPy rounds from double, PyTorch computes in float

def _second_only(rng, dom_a, dom_b) -> list:
    """Broadcast samples of a two-tensor op differentiable in its second operand only
    (zeta, igamma: PyTorch has no derivative in the first; test_special.py checks that
    error)."""
    out = [S(A(vals(rng, sa, dom_a), grad=False), A(vals(rng, sb, dom_b)))
           for sa, sb in SHAPES_2]
    out.append(S(A(vals(rng, (3, 4), dom_a), grad=False, layout="T"),
                 A(vals(rng, (4, 3), dom_b), layout="T"), desc="non-contiguous"))
    return out


# one input: (entry name, call, domain, records, in-place method, int inputs meaningful)
_UNARY = [
    ("lgamma", lambda m, x: m.lgamma(x), (0.3, 4.0), ("lgamma",), "lgamma_", True),
    ("lgamma_neg", lambda m, x: m.lgamma(x), (-2.9, -2.1), ("lgamma",), None, False),
    ("digamma", lambda m, x: m.digamma(x), (0.3, 4.0), ("digamma",), "digamma_", True),
    ("special_psi", lambda m, x: m.special.psi(x), (0.3, 4.0), ("digamma",), None, False),
    ("special_gammaln", lambda m, x: m.special.gammaln(x), (0.3, 4.0), ("lgamma",), None,
     False),
    ("erfc", lambda m, x: m.erfc(x), "real", ("erfc",), "erfc_", True),
    ("erfinv", lambda m, x: m.erfinv(x), "unit", ("erfinv",), "erfinv_", False),
    ("i0", lambda m, x: m.i0(x), "real", ("i0",), "i0_", True),
    ("special_i0e", lambda m, x: m.special.i0e(x), "real", ("i0e",), None, True),
    ("special_i1", lambda m, x: m.special.i1(x), "real", ("i1",), None, True),
    ("special_i1e", lambda m, x: m.special.i1e(x), "real", ("i1e",), None, True),
    ("special_erfcx", lambda m, x: m.special.erfcx(x), "real", ("erfcx",), None, True),
    ("special_ndtri", lambda m, x: m.special.ndtri(x), (0.05, 0.95), ("ndtri",), None, False),
    ("special_log_ndtr", lambda m, x: m.special.log_ndtr(x), "real", ("log_ndtr",), None,
     True),
    ("special_ndtr", lambda m, x: m.special.ndtr(x), "real", ("erf", "mul", "add"), None, True),
    ("special_entr", lambda m, x: m.special.entr(x), "pos", ("entr",), None, False),
    ("sinc", lambda m, x: m.sinc(x), "nz", ("sinc",), "sinc_", False),
    ("logit", lambda m, x: m.logit(x), (0.05, 0.95), ("logit",), "logit_", False),
    ("logit_eps", lambda m, x: m.logit(x, 0.2), (0.05, 0.95), ("logit",), None, False),
    ("deg2rad", lambda m, x: m.deg2rad(x), "real", ("deg2rad",), "deg2rad_", True),
    ("rad2deg", lambda m, x: m.rad2deg(x), "real", ("rad2deg",), "rad2deg_", True),
    ("asinh", lambda m, x: m.asinh(x), "real", ("asinh",), None, True),
    ("acosh", lambda m, x: m.acosh(x), (1.2, 3.0), ("acosh",), None, False),
    ("atanh", lambda m, x: m.atanh(x), "unit", ("atanh",), None, False),
    ("special_expit", lambda m, x: m.special.expit(x), "real", ("sigmoid",), None, False),
    ("polygamma1", lambda m, x: m.polygamma(1, x), (0.3, 4.0), ("polygamma",), None, True),
    ("polygamma_method", lambda m, x: x.polygamma(2), (0.3, 4.0), ("polygamma",),
     "polygamma_", False),
    ("polygamma0", lambda m, x: m.special.polygamma(0, x), (0.3, 4.0), ("polygamma",), None,
     False),
    ("mvlgamma", lambda m, x: m.mvlgamma(x, 3), (1.2, 4.0), ("mvlgamma",), "mvlgamma_", False),
    ("special_multigammaln", lambda m, x: m.special.multigammaln(x, 1), (0.3, 4.0),
     ("mvlgamma",), None, False),
]
# entries whose derivatives reach polygamma(n >= 1): SciPy's zeta-based polygamma and
# PyTorch's trigamma series agree to ~1e-10 in float64
_TRIGAMMA = ("polygamma", "lgamma", "special_gammaln", "digamma", "special_psi", "mvlgamma",
             "special_multi")
for _name, _fn, _dom, _ops, _inp, _int in _UNARY:
    _tol = (1e-9, 1e-12) if _name.startswith(_TRIGAMMA) else (1e-12, 1e-13)
    op(_name, _fn, unary(_dom), _ops, inplace=_inp, int_ok=_int, f32_tol=_F32, f64_tol=_tol)

op("special_bessel_j0", lambda m, x: m.special.bessel_j0(x), unary("real"), ("bessel_j0",),
   differentiable=False, int_ok=True, f32_tol=_F32)
op("special_bessel_j1", lambda m, x: m.special.bessel_j1(x), unary("real"), ("bessel_j1",),
   differentiable=False, int_ok=True, f32_tol=_F32)
op("special_round", lambda m, x: m.special.round(x), one([(3, 4), ()], "frac"),
   ("round_decimals",))
op("frexp", lambda m, x: m.frexp(x), unary("nz"), ("frexp",))
op("special_i1_at_0", lambda m, x: m.special.i1(x),
   lambda rng: [S(A([0.0, 1e-20, 2.0]), check_grad=False, desc="|x| <= eps: gradient 0.5")],
   ("i1",))
op("special_entr_edges", lambda m, x: m.special.entr(x),
   lambda rng: [S(A([-1.0, 0.0, 2.0]), check_grad=False, desc="below 0: -inf; 0: 0")],
   ("entr",), twice=False)

# two operands
op("xlogy", lambda m, x, y: m.xlogy(x, y), binary("real", "pos", scalars=(2.5,),
   rscalars=(2.5,), extra=lambda rng: [
       S(A([0.0, 0.0, 1.5]), A([0.0, 2.0, 3.0]), check_grad=False,
         desc="x == 0: 0; self's gradient log(y), 0 at (0, y <= 0)")]),
   ("xlogy",), inplace="xlogy_", f32_tol=_F32)
op("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y),
   binary("real", "pos", scalars=(2.5,), rscalars=(2.5,), extra=lambda rng: [
       S(A([0.0, 0.0, 1.5]), A([-1.0, 2.0, 3.0]), check_grad=False,
         desc="x == 0: 0; self's gradient log1p(y), 0 at (0, y <= -1)"),
       S(A([0.0, 1.0]), -1.0, check_grad=False, desc="scalar other at the pole")]),
   ("xlog1py",), f32_tol=_F32)
op("special_zeta", lambda m, x, y: m.special.zeta(x, y), lambda rng: _second_only(
    rng, (2.0, 4.0), (0.5, 3.0)) + [
        S(A(vals(rng, (3, 4), (2.0, 4.0)), grad=False), 1.5, desc="scalar other"),
        S(3.0, A(vals(rng, (3, 4), (0.5, 3.0))), desc="scalar self")],
   ("zeta",), f32_tol=_F32,
   skips={"test_gradcheck": "PyTorch has no forward-mode rule for zeta (test_special.py "
                            "checks the error); test_grad compares the gradients with torch"})
op("logaddexp", lambda m, x, y: m.logaddexp(x, y), binary(scalars=()), ("logaddexp",))
op("logaddexp2", lambda m, x, y: m.logaddexp2(x, y), binary(scalars=()), ("logaddexp2",))
op("copysign", lambda m, x, y: m.copysign(x, y), binary("nz", "nz", scalars=(-1.5,)),
   ("copysign",), inplace="copysign_", int_ok=True)
op("nextafter", lambda m, x, y: m.nextafter(x, y), binary(scalars=()), ("nextafter",),
   inplace="nextafter_")
op("heaviside", lambda m, x, y: m.heaviside(x, y), lambda rng: [
    S(A([-1.0, 0.0, 2.0, float("nan")], grad=False), A([0.5, 0.5, 0.5, 0.5], grad=False))],
   ("heaviside",), differentiable=False, int_ok=True)
op("ldexp", lambda m, x, y: m.ldexp(x, y), binary("real", "small", scalars=()), ("ldexp",),
   inplace="ldexp_")

# asinh_/acosh_/atanh_: PyTorch's in-place overloads have no derivative (AsinhBackward1...)
for _n, _dom in (("asinh", "real"), ("acosh", (1.2, 3.0)), ("atanh", "unit")):
    op(_n + "_inplace", (lambda name: lambda m, x: getattr(x * 1, name + "_")())(_n),
       unary(_dom), (_n + "_",), twice=False,
       skips={t: "no derivative: backward raises (test_special.py compares the error)"
              for t in ("test_grad", "test_gradcheck", "test_gradgradcheck",
                        "test_double_backward")})
op("polygamma_inplace", lambda m, x: (x * 1).polygamma_(1), unary((0.3, 4.0)), ("polygamma",),
   f32_tol=_F32, f64_tol=(1e-9, 1e-12))
op("heaviside_inplace", lambda m, x, y: (x * 1).heaviside_(y), lambda rng: [
    S(A([-1.0, 0.0, 2.0]), A([0.5, 0.5, 0.5], grad=False))], ("heaviside_",),
   skips={t: "no derivative: backward raises (test_inplace_forms.py compares the error)"
          for t in ("test_grad", "test_gradcheck", "test_gradgradcheck",
                    "test_double_backward")})

# Bessel and Airy functions without a derivative in PyTorch (outputs never require grad)
for _n, _dom in (("bessel_y0", "pos"), ("bessel_y1", "pos"), ("modified_bessel_i0", "real"),
                 ("modified_bessel_i1", "real"), ("modified_bessel_k0", "pos"),
                 ("modified_bessel_k1", "pos"), ("scaled_modified_bessel_k0", "pos"),
                 ("scaled_modified_bessel_k1", "pos"), ("airy_ai", "real"),
                 ("spherical_bessel_j0", "real")):
    op("special_" + _n, (lambda name: lambda m, x: getattr(m.special, name)(x))(_n),
       unary(_dom), (_n,), differentiable=False, int_ok=True, f32_tol=_F32)


def _igamma_samples(rng):
    """P(a, x) / Q(a, x): differentiable in x only (PyTorch has no derivative in a)."""
    return _second_only(rng, (0.5, 3.0), (0.2, 4.0))


op("igamma", lambda m, a, x: m.igamma(a, x), _igamma_samples, ("igamma",), inplace="igamma_",
   f32_tol=_F32, f64_tol=(1e-10, 1e-12))
op("igammac", lambda m, a, x: m.igammac(a, x), _igamma_samples, ("igammac",),
   inplace="igammac_", f32_tol=_F32, f64_tol=(1e-10, 1e-12))
op("special_gammainc", lambda m, a, x: m.special.gammainc(a, x), _igamma_samples, ("igamma",),
   f32_tol=_F32, f64_tol=(1e-10, 1e-12))
op("special_gammaincc", lambda m, a, x: m.special.gammaincc(a, x), _igamma_samples,
   ("igammac",), f32_tol=_F32, f64_tol=(1e-10, 1e-12))
