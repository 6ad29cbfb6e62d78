"""The op database: one entry per public op, driving the generated tests in test_ops.py.

This is PyTorch's OpInfo idea (DESIGN.md, "Tests"). An entry holds

- ``fn(m, *args, **kwargs)``: the call, written so that the same lambda runs with
  ``m = retrograd`` and ``m = torch`` (function, method and operator forms alike);
- ``samples(rng)``: sample inputs. Tensor arguments are ``A`` specs (a float64 NumPy
  array, its value domain, whether it is differentiable, its layout); every other
  argument is passed as is (``DT('float64')`` becomes the module's dtype);
- ``ops``: the names of the table ops (``retrograd.ops.op.REGISTRY``) the entry
  exercises; the meta-test in test_ops.py checks each name is really reached and that
  every op of the table is reached by some entry;
- flags: differentiable, twice-differentiable (gradgradcheck), the in-place method
  name, whether integer inputs are meaningful, and skips (test name -> reason).

Shapes follow DESIGN.md: ``()``, ``(3, 4)``, ``(3, 1)``, ``(1, 4)``, ``(2, 3, 4)``,
``(2, 1, 4)``, empty, 0-d and non-contiguous (transposed) inputs, kept small so the
numerical gradient checks stay fast.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import numpy as np

__all__ = ["A", "DT", "Sample", "OpInfo", "DB", "INTERNAL_OPS", "build", "flat", "is_tensor",
           "sample_rng", "to_numpy"]


# ----------------------------------------------------------------------------------
# sample specs


class A:
    """A tensor argument: ``arr`` (float64 values) in ``dom``; ``grad`` if differentiable.

    ``dtype=None`` follows the test's dtype; ``'int64'``/``'bool'`` fix it (indices,
    masks). ``layout='T'`` builds the tensor as the transpose of a contiguous one, so
    the op sees a non-contiguous input (the leaf is the contiguous tensor).
    """

    __slots__ = ("arr", "dom", "grad", "dtype", "layout")

    def __init__(self, arr, dom="real", grad=True, dtype=None, layout=None):
        self.arr = np.asarray(arr, dtype=np.float64 if dtype is None else None)
        self.dom = dom
        self.grad = grad and (dtype is None or dtype in _FLOAT_NAMES)
        self.dtype = dtype
        self.layout = layout

    def __repr__(self) -> str:
        lay = "ᵀ" if self.layout == "T" else ""
        return f"A{tuple(self.arr.shape)}{lay}" + ("" if self.dtype is None else f":{self.dtype}")


class DT:
    """A dtype argument, resolved per module (``DT('float64')`` -> ``m.float64``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"DT({self.name})"


@dataclasses.dataclass
class Sample:
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    desc: str = ""
    check_grad: bool = True  # numerical gradcheck (off at kinks, where only torch decides)
    torch_grad: bool = True  # False: torch has no derivative here (checked numerically only)
    inplace: bool = True  # False: left out of the in-place tests (see desc)

    def __repr__(self) -> str:
        kw = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        a = ", ".join(_short(x) for x in self.args)
        return f"({a}{', ' if kw and a else ''}{kw}){' ' + self.desc if self.desc else ''}"


def _short(x) -> str:
    if isinstance(x, (list, tuple)) and any(isinstance(y, A) for y in x):
        return "[" + ", ".join(_short(y) for y in x) + "]"
    return repr(x)


def S(*args, desc: str = "", check_grad: bool = True, torch_grad: bool = True,
      inplace: bool = True, **kwargs) -> Sample:
    return Sample(args, kwargs, desc, check_grad, torch_grad, inplace)


@dataclasses.dataclass
class OpInfo:
    name: str
    fn: Callable
    samples: Callable[[np.random.Generator], list]
    ops: tuple = ()
    differentiable: bool = True
    twice: bool = True
    inplace: str | None = None  # in-place method called as x.<inplace>(*rest, **kwargs)
    int_ok: bool = False  # forward with integer inputs is meaningful (compared with torch)
    skips: dict = dataclasses.field(default_factory=dict)  # test name -> reason
    f32_tol: tuple = (1.3e-6, 1e-6)  # (rtol, atol) for float32 values and gradients
    f64_tol: tuple = (1e-12, 1e-13)

    def __repr__(self) -> str:
        return f"OpInfo({self.name})"


DB: list = []


def op(name, fn, samples, ops=(), **kw) -> OpInfo:
    info = OpInfo(name, fn, samples, tuple(ops), **kw)
    if any(e.name == name for e in DB):
        raise ValueError(f"duplicate op database entry {name!r}")
    DB.append(info)
    return info


#: Table ops no public call reaches on its own, with the reason. Every other op of the
#: table must be reached by some entry (test_ops.py::test_every_table_op_has_an_entry).
INTERNAL_OPS = {
    "mode": "take_ops['mode'] (values-at-indices for a future torch.mode) has no public "
            "function yet",
    "constant_pad": "the kernel behind nn.functional.pad (an nn-layer op, tested with nn)",
    "overlap_self": "an overlapping view's values under an in-place op (Note "
                    "[In-place ops on overlapping views]); tested in test_inplace_overlap.py",
    "matmul_keep_layout": "vmap's product for an expanded column-major matrix "
                          "(Note [Linear under vmap]); tested in test_func_functional_call.py",
}


# ----------------------------------------------------------------------------------
# values


def sample_rng(name: str, salt: str = "") -> np.random.Generator:
    return np.random.default_rng(zlib.crc32((name + "/" + salt).encode()))


def vals(rng, shape, dom="real"):
    """float64 values of ``shape`` in the domain ``dom``."""
    shape = tuple(shape)
    if dom == "real":
        a = rng.uniform(-2.0, 2.0, shape)
    elif dom == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    elif dom == "nz":  # away from zero, both signs
        a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    elif dom == "unit":  # inside (-1, 1)
        a = rng.uniform(-0.9, 0.9, shape)
    elif dom == "small":
        a = rng.uniform(-1.0, 1.0, shape)
    elif dom == "away0":  # kinks at 0 (abs, relu, sign): stay 0.1 away
        a = rng.uniform(0.1, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    elif dom == "frac":  # away from the integers and the half-integers (floor, round)
        a = np.floor(rng.uniform(-3, 3, shape)) + rng.choice([0.2, 0.3, 0.7, 0.8], shape)
    elif isinstance(dom, tuple):
        a = rng.uniform(dom[0], dom[1], shape)
    else:
        raise ValueError(dom)
    return np.asarray(a, dtype=np.float64)


def ints_of(a: np.ndarray, dom) -> np.ndarray:
    """Integer stand-ins for float samples (for integer-dtype forward tests)."""
    if dom in ("pos",):
        return np.ceil(a * 2)
    if dom in ("nz", "away0"):
        return np.sign(a) * np.ceil(np.abs(a) * 2)
    return np.round(a * 3)


_FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


def build(m, sample: Sample, dtype: str, requires_grad: bool = True, leaves=None):
    """(args, kwargs, leaves) for module ``m``; tensors are made from the sample specs.

    With ``leaves`` given (a list of tensors in spec order), those are used as the
    differentiable leaves instead of fresh ones (gradcheck perturbs them).
    """
    made = []
    given = iter(leaves) if leaves is not None else None

    def conv(x):
        if isinstance(x, A):
            dt = x.dtype or dtype
            if x.dtype is None and dt not in _FLOAT_NAMES:
                data = ints_of(x.arr, x.dom)
            else:
                data = x.arr
            if x.layout == "T":
                data = np.ascontiguousarray(np.swapaxes(data, -1, -2))
            npdt = np.bool_ if dt == "bool" else np.dtype(dt)
            diff = x.grad and dt in _FLOAT_NAMES
            if diff and given is not None:
                t = next(given)
            else:
                t = m.tensor(np.asarray(data).astype(npdt))
                if diff and requires_grad:
                    t.requires_grad_(True)
            if diff:
                made.append(t)
            if x.layout == "T":
                t = t.transpose(-1, -2)
            return t
        if isinstance(x, DT):
            return getattr(m, x.name)
        if isinstance(x, (list, tuple)) and any(isinstance(y, (A, DT)) for y in x):
            return type(x)(conv(y) for y in x)
        return x

    args = tuple(conv(x) for x in sample.args)
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    return args, kwargs, made


def is_tensor(x) -> bool:
    return hasattr(x, "_version") and hasattr(x, "requires_grad")


def flat(out) -> list:
    """Outputs as a flat list (tuples, named tuples and lists flattened)."""
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat(o))
        return res
    return [out]


def to_numpy(t) -> np.ndarray:
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.asarray(t.numpy(force=True))  # force: torch's ZeroTensor (double backward)


# ----------------------------------------------------------------------------------
# sample generators

SHAPES_1 = [(), (3, 4), (2, 3, 4), (0, 3), (1,)]
SHAPES_2 = [((3, 4), (3, 4)), ((3, 4), ()), ((), (3, 4)), ((3, 1), (1, 4)),
            ((2, 3, 4), (2, 1, 4)), ((2, 1, 4), (3, 1)), ((), ()), ((0, 4), (1, 4)),
            ((4,), (3, 4))]


def unary(dom="real", extra=None):
    """Samples for an elementwise op of one tensor."""
    def gen(rng):
        out = [S(A(vals(rng, s, dom), dom)) for s in SHAPES_1]
        out.append(S(A(vals(rng, (3, 4), dom), dom, layout="T"), desc="non-contiguous"))
        if extra:
            out.extend(extra(rng))
        return out
    return gen


def binary(dom_a="real", dom_b="real", scalars=(2.5, 2), rscalars=(), extra=None,
           rscalar_torch_grad=True):
    """Samples for an elementwise op of two operands (tensors, or a Python scalar)."""
    def gen(rng):
        out = [S(A(vals(rng, sa, dom_a), dom_a), A(vals(rng, sb, dom_b), dom_b))
               for sa, sb in SHAPES_2]
        out.append(S(A(vals(rng, (3, 4), dom_a), dom_a, layout="T"),
                     A(vals(rng, (4, 3), dom_b), dom_b, layout="T"), desc="non-contiguous"))
        for s in scalars:
            out.append(S(A(vals(rng, (3, 4), dom_a), dom_a), s, desc="scalar other"))
            out.append(S(A(vals(rng, (), dom_a), dom_a), s, desc="0-d, scalar other"))
        for s in rscalars:
            out.append(S(s, A(vals(rng, (3, 4), dom_b), dom_b), desc="scalar self",
                         torch_grad=rscalar_torch_grad))
        if extra:
            out.extend(extra(rng))
        return out
    return gen


def one(shape, dom="real", **kw):
    """Samples of one tensor of ``shape`` and each extra-args tuple in ``kw['variants']``."""
    variants = kw.pop("variants", [((), {})])

    def gen(rng):
        out = []
        for shp in ([shape] if isinstance(shape, tuple) else shape):
            for args, kwargs in variants:
                out.append(Sample((A(vals(rng, shp, dom), dom),) + tuple(args), dict(kwargs)))
        return out
    return gen


def reduce_samples(dom="real", dims=True, empty=True, keepdim=True, extra=None, multi=True):
    """Samples for a reduction: all elements, one dim, several dims, keepdim."""
    def gen(rng):
        out = [S(A(vals(rng, (3, 4), dom), dom)), S(A(vals(rng, (2, 3, 4), dom), dom)),
               S(A(vals(rng, (), dom), dom)),
               S(A(vals(rng, (3, 4), dom), dom, layout="T"), desc="non-contiguous")]
        if empty:
            out.append(S(A(vals(rng, (0, 3), dom), dom)))
        if dims:
            out += [S(A(vals(rng, (3, 4), dom), dom), 1),
                    S(A(vals(rng, (2, 3, 4), dom), dom), -1),
                    S(A(vals(rng, (2, 3, 4), dom), dom), 0),
                    S(A(vals(rng, (), dom), dom), 0, desc="0-d with dim"),
                    S(A(vals(rng, (3, 4), dom), dom, layout="T"), 0, desc="non-contiguous")]
            if keepdim:
                out += [S(A(vals(rng, (3, 4), dom), dom), 1, True),
                        S(A(vals(rng, (2, 3, 4), dom), dom), 1, keepdim=True)]
            if multi:
                out += [S(A(vals(rng, (2, 3, 4), dom), dom), (0, 2)),
                        S(A(vals(rng, (2, 3, 4), dom), dom), (-1, 0), True)]
            if empty:
                out.append(S(A(vals(rng, (0, 3), dom), dom), 0))
        if extra:
            out.extend(extra(rng))
        return out
    return gen


def _i64(a) -> A:
    return A(np.asarray(a), dtype="int64")


def _mask(a) -> A:
    return A(np.asarray(a, dtype=bool), dtype="bool")


# ----------------------------------------------------------------------------------
# arithmetic

op("add", lambda m, x, y: x + y, binary(rscalars=(1.5,)), ("add",), inplace="add_",
   int_ok=True)
op("add_alpha", lambda m, x, y: m.add(x, y, alpha=2), binary(scalars=(2.5, 2), rscalars=(1.5,)),
   ("add_alpha",), inplace="add_", int_ok=True)
op("sub", lambda m, x, y: x - y, binary(rscalars=(1.5,)), ("sub",), inplace="sub_",
   int_ok=True)
op("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=0.5), binary(scalars=(2.5,), rscalars=(1.5,)),
   ("sub_alpha",), inplace="sub_")
op("mul", lambda m, x, y: x * y, binary(rscalars=(1.5, 3)), ("mul",), inplace="mul_",
   int_ok=True)
op("div", lambda m, x, y: x / y, binary(dom_b="nz", rscalars=(1.5,)), ("div",),
   inplace="div_", int_ok=True)
op("div_fn", lambda m, x, y: m.div(x, y), binary(dom_b="nz", scalars=(4,)), ("div",),
   int_ok=True)
op("floor_divide", lambda m, x, y: x // y, binary(dom_b="nz", rscalars=(5.0,)),
   ("floor_divide",), differentiable=False, int_ok=True)
op("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
   binary(dom_b="nz", scalars=(2,)), ("trunc_divide",), differentiable=False, int_ok=True)
op("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor"),
   binary(dom_b="nz", scalars=(2,)), ("div_floor",), differentiable=False, int_ok=True)
op("remainder", lambda m, x, y: x % y,
   binary("frac", "nz", scalars=(1.5,), rscalars=(5.0,), rscalar_torch_grad=False),
   ("remainder", "div_floor"), inplace="remainder_", int_ok=True)
op("fmod", lambda m, x, y: m.fmod(x, y), binary("frac", "nz", scalars=(1.5,)),
   ("fmod", "trunc_divide"), inplace="fmod_", int_ok=True)
op("pow", lambda m, x, y: x ** y, binary("pos", "real", scalars=(2, 0.5, 3, 0, -1),
                                         rscalars=(2, 2.5)),
   ("pow",), inplace="pow_",
   skips={"test_forward_int": "integer ** negative integer raises in torch; covered by "
                              "pow_int"})


def _pow_int_samples(rng):
    out = []
    for sa, sb in [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (3, 4)), ((2, 3, 4), ())]:
        # d/dy of x**y is nan for x < 0 (in torch too): compared with torch, not numerically
        out.append(S(A(vals(rng, sa)), A(rng.integers(0, 4, sb).astype(float), "pos"),
                     check_grad=False))
    out += [S(A(vals(rng, (3, 4))), k, desc="int exponent") for k in (2, 3, 0, 1)]
    return out


op("pow_int", lambda m, x, y: x ** y, _pow_int_samples, ("pow",), int_ok=True)
op("pow_fn", lambda m, x, y: m.pow(x, y),
   binary("pos", "real", scalars=(2,), extra=lambda rng: [
       S(A(np.array([0.0, 1.0, 2.0, 0.0])), A(np.array([2.0, 0.0, 1.5, 0.0])),
         desc="zero base", check_grad=False),
       S(A(np.array([0.0, 1.5, 0.0])), 2, desc="zero base, scalar exponent"),
       S(A(np.array([0.0, 1.5, 0.0])), 0.0, desc="exponent 0", check_grad=False),
       S(A(np.array([-0.0, 0.0, 4.0])), 0.5, desc="-0.0 ** 0.5: sqrt, gradient -inf",
         check_grad=False),
       S(A(np.array([-0.0, 0.0, 4.0])), -0.5, desc="-0.0 ** -0.5: rsqrt", check_grad=False),
       S(A(np.array([-0.0, 0.0, 4.0])), 1.5, desc="-0.0 ** 1.5", check_grad=False)]),
   ("pow",))
# (float64 samples: .double() is a no-op, so to_copy is not reached here)
op("float_power", lambda m, x, y: m.float_power(x, y), binary("pos", "real", scalars=(2,)),
   ("pow",))
op("atan2", lambda m, x, y: m.atan2(x, y), binary("nz", "nz", scalars=(), extra=lambda rng: [
    S(A([0.0, -0.0, 1.0]), A([0.0, 0.0, -0.0]), check_grad=False,
      desc="(0, 0): gradients 0 and -0 (atan2_backward's mask)")]), ("atan2",),
   inplace="atan2_", int_ok=True)
op("hypot", lambda m, x, y: m.hypot(x, y), binary("nz", "nz", scalars=(), extra=lambda rng: [
    S(A([0.0, 3.0]), A([0.0, -4.0]), check_grad=False,
      desc="(0, 0): both gradients nan (grad * self / result)")]), ("hypot",),
   inplace="hypot_")
op("maximum", lambda m, x, y: m.maximum(x, y),
   binary(scalars=(), extra=lambda rng: [S(A([1.0, 2.0, 3.0]), A([1.0, 0.0, 3.0]),
                                           desc="ties", check_grad=False)]),
   ("maximum",), int_ok=True)
op("minimum", lambda m, x, y: m.minimum(x, y),
   binary(scalars=(), extra=lambda rng: [S(A([1.0, 2.0, 3.0]), A([1.0, 0.0, 3.0]),
                                           desc="ties", check_grad=False)]),
   ("minimum",), int_ok=True)
op("max_binary", lambda m, x, y: m.max(x, y), binary(scalars=()), ("maximum",))
for _name in ("fmax", "fmin"):  # NaN loses to a number; two NaNs give NaN
    op(_name, (lambda n: lambda m, x, y: getattr(m, n)(x, y))(_name),
       binary(scalars=(), extra=lambda rng: [S(A([1.0, float("nan"), float("nan"), 2.0]),
                                               A([float("nan"), 2.0, float("nan"), 2.0]),
                                               desc="NaN and ties", check_grad=False)]),
       (_name,), int_ok=True)


def _mixed(rng):
    """Operands of different floating dtypes: results promote, gradients keep each dtype."""
    return [S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4)), dtype="float64")),
            S(A(vals(rng, (3, 4))), A(vals(rng, ()), dtype="float64"), desc="0-d float64"),
            S(A(vals(rng, ()), dtype="float32"), A(vals(rng, (3,)))),
            S(A(vals(rng, (2, 3))), A(vals(rng, (3,)), dtype="float16")),
            S(A(vals(rng, (2, 3))), A(np.round(vals(rng, (3,))), dtype="int64"))]


_MIXED_SKIPS = {"test_gradcheck": "a fixed float32/float16 operand: compared with torch only",
                "test_gradgradcheck": "as test_gradcheck"}
_F32ISH = (1.3e-6, 1e-6)  # a float64 gradient summed from a float32 product
op("mul_mixed_dtypes", lambda m, x, y: x * y, _mixed, ("mul",), skips=dict(_MIXED_SKIPS),
   f64_tol=_F32ISH)
op("add_mixed_dtypes", lambda m, x, y: m.add(x, y, alpha=2), _mixed, ("add_alpha",),
   skips=dict(_MIXED_SKIPS), f64_tol=_F32ISH)
op("div_mixed_dtypes", lambda m, x, y: y / (x.abs() + 1), _mixed, ("div",),
   skips=dict(_MIXED_SKIPS), f64_tol=_F32ISH)
op("where_mixed_dtypes", lambda m, x, y: m.where(x > 0, x, y), _mixed, ("where",),
   skips=dict(_MIXED_SKIPS), f64_tol=_F32ISH)
op("matmul_mixed_dtypes", lambda m, x, y: x @ y,
   lambda rng: [S(A(vals(rng, (2, 3))), A(vals(rng, (3, 2)), dtype="float64"),
                  desc="error: dtypes differ")], ("mm",))
op("min_binary", lambda m, x, y: m.min(x, y), binary(scalars=()), ("minimum",))
op("neg", lambda m, x: -x, unary(), ("neg",), inplace="neg_", int_ok=True)
op("neg_fn", lambda m, x: m.neg(x), unary(), ("neg",), int_ok=True)
op("abs", lambda m, x: abs(x), unary("away0"), ("abs",), inplace="abs_", int_ok=True)
op("abs_fn", lambda m, x: m.abs(x),
   unary("away0", extra=lambda rng: [S(A([0.0, 1.0, -2.0]), desc="kink at 0",
                                       check_grad=False)]), ("abs",))
op("sign", lambda m, x: m.sign(x),
   unary("away0", extra=lambda rng: [S(A([0.0, -1.0]), check_grad=False)]),
   ("sign",), inplace="sign_", int_ok=True)
op("square", lambda m, x: m.square(x), unary(), ("pow",), inplace="square_", int_ok=True)
op("nan_to_num", lambda m, x, *a, **k: m.nan_to_num(x, *a, **k),
   unary(extra=lambda rng: [
       S(A([float("nan"), float("inf"), -float("inf"), 1.5]), check_grad=False,
         desc="non-finite: replaced, gradient 0"),
       S(A([float("nan"), float("inf"), -float("inf"), 1.5]), 2.0, 3.0, -4.0,
         check_grad=False, desc="explicit replacements")]), ("nan_to_num",),
   inplace="nan_to_num_", int_ok=True)

_UNARY = [
    ("exp", "real"), ("exp2", "real"), ("log", "pos"), ("log2", "pos"), ("log10", "pos"),
    ("log1p", (-0.5, 2.0)), ("expm1", "real"), ("sqrt", "pos"), ("rsqrt", "pos"),
    ("reciprocal", "nz"), ("sin", "real"), ("cos", "real"), ("tan", (-1.2, 1.2)),
    ("asin", "unit"), ("acos", "unit"), ("atan", "real"), ("sinh", "real"),
    ("cosh", "real"), ("tanh", "real"), ("sigmoid", "real"), ("relu", "away0"),
    ("erf", "real"), ("floor", "frac"), ("ceil", "frac"), ("round", "frac"),
    ("trunc", "frac"),
]
_INT_UNARY = {"floor", "ceil", "round", "trunc", "relu", "exp", "sqrt", "sin", "log",
              "sigmoid", "reciprocal", "rsqrt", "tanh", "exp2", "log2", "atan"}
for _n, _dom in _UNARY:
    op(_n, (lambda name: lambda m, x: getattr(m, name)(x))(_n), unary(_dom), (_n,),
       inplace=_n + "_", int_ok=_n in _INT_UNARY)
    op(_n + "_method", (lambda name: lambda m, x: getattr(x, name)())(_n),
       one([(3, 4), ()], _dom), (_n,))
op("relu_kink", lambda m, x: m.relu(x), lambda rng: [S(A([-1.0, 0.0, 2.0]), check_grad=False)],
   ("relu",))
op("round_decimals", lambda m, x: m.round(x, decimals=2),
   one([(3, 4), ()], (-3.0, 3.0)), ("round_decimals",))
op("sigmoid_large", lambda m, x: m.sigmoid(x),
   lambda rng: [S(A([-100.0, -30.0, 0.0, 30.0, 100.0]))], ("sigmoid",))

# clamp: scalar or tensor bounds (values kept away from the bounds for gradcheck)
op("clamp", lambda m, x, *a, **k: m.clamp(x, *a, **k),
   lambda rng: [S(A(vals(rng, s, "frac"), "frac"), *b, **k)
                for s in [(3, 4), (), (2, 3, 4), (0, 2)]
                for b, k in [((-1.5, 0.5), {}), ((), {"min": -0.5}), ((), {"max": 0.5}),
                             ((None, 1.5), {}), ((-1, 1), {})]]
   + [S(A(vals(rng, (3, 4), "frac"), "frac", layout="T"), -0.5, 1.5, desc="non-contiguous"),
      S(A([-1.0, 0.0, 1.0]), 0.0, 1.0, desc="values at the bounds", check_grad=False)],
   ("clamp",), inplace="clamp_", int_ok=True)
op("clip", lambda m, x, lo, hi: m.clip(x, lo, hi),
   one([(3, 4)], "frac", variants=[((-1.5, 0.5), {})]), ("clamp",), inplace="clip_")
op("clamp_min", lambda m, x: x.clamp_min(0.5), one([(3, 4), ()], "frac"), ("clamp",),
   inplace=None)
op("clamp_max", lambda m, x: x.clamp_max(0.5), one([(3, 4), ()], "frac"), ("clamp",))


def _clamp_t(rng):
    out = []
    for sx, slo, shi in [((3, 4), (3, 4), (3, 4)), ((3, 4), (1, 4), (3, 1)), ((3, 4), (), ()),
                         ((), (3, 4), ()), ((2, 3, 4), (3, 4), (1, 4))]:
        x = vals(rng, sx, "real")
        lo = vals(rng, slo, (-2.0, -0.1))
        hi = vals(rng, shi, (0.1, 2.0))
        # torch's backward fails when the input broadcasts against a bound (its bug)
        out.append(S(A(x), A(lo), A(hi), torch_grad=sx == np.broadcast_shapes(sx, slo, shi)))
    x = vals(rng, (3, 4))
    out.append(S(A(x), min=A(vals(rng, (3, 4), (-2, 0))), desc="min only"))
    out.append(S(A(x), max=A(vals(rng, (1, 4), (0, 2))), desc="max only"))
    out.append(S(A(vals(rng, (3,))), A(np.array([0.5, 0.5, 0.5])), A(np.array([0.0, 0.0, 0.0])),
                 desc="min > max", check_grad=False))
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4), (-2, -0.1))), 1.0,
                 desc="error: tensor min, scalar max"))
    return out


op("clamp_tensor", lambda m, x, *a, **k: m.clamp(x, *a, **k), _clamp_t, ("clamp_tensor",),
   inplace="clamp_")


def _where_samples(rng):
    out = []
    for sc, sa, sb in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), ()), ((), (3, 4), (3, 4)),
                       ((2, 3, 4), (3, 4), (2, 1, 4)), ((0, 4), (0, 4), (4,))]:
        c = rng.random(sc) < 0.5
        out.append(S(_mask(c), A(vals(rng, sa)), A(vals(rng, sb))))
    c = rng.random((3, 4)) < 0.5
    out.append(S(_mask(c), A(vals(rng, (3, 4))), 0.0, desc="scalar other"))
    out.append(S(_mask(c), 2.0, A(vals(rng, (3, 4))), desc="scalar input"))
    out.append(S(_mask(c), A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (3, 4))),
                 desc="non-contiguous"))
    return out


op("where", lambda m, c, x, y: m.where(c, x, y), _where_samples, ("where",))
op("where_method", lambda m, c, x, y: x.where(c, y),
   lambda rng: [S(_mask(rng.random((3, 4)) < 0.5), A(vals(rng, (3, 4))), A(vals(rng, (1, 4))))],
   ("where",))


def _lerp_samples(rng):
    out = []
    for sa, sb, sw in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((), (3, 4), ()),
                       ((2, 3, 4), (3, 4), (4,))]:
        out.append(S(A(vals(rng, sa)), A(vals(rng, sb)), A(vals(rng, sw, (-0.5, 1.5)))))
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4))), 0.25, desc="scalar weight"))
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4))), 0.75, desc="scalar weight >= .5"))
    out.append(S(A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (3, 4))), 0.3,
                 desc="non-contiguous"))
    return out


op("lerp", lambda m, x, y, w: m.lerp(x, y, w), _lerp_samples, ("lerp",), inplace="lerp_")

# comparisons and logic (bool results, no gradient)
for _n, _f in [("eq", lambda m, x, y: x == y), ("ne", lambda m, x, y: x != y),
               ("lt", lambda m, x, y: x < y), ("le", lambda m, x, y: x <= y),
               ("gt", lambda m, x, y: x > y), ("ge", lambda m, x, y: x >= y)]:
    op(_n, _f, binary("frac", "frac", scalars=(0.5, 1),
                      extra=lambda rng: [S(A([1.0, 2.0, 3.0]), A([1.0, 0.0, 3.0]),
                                           desc="equal elements")]),
       (_n,), differentiable=False, int_ok=True)
    op(_n + "_fn", (lambda name: lambda m, x, y: getattr(m, name)(x, y))(_n),
       binary("frac", "frac", scalars=(1,)), (_n,), differentiable=False, int_ok=True)


def _logic(rng):
    out = []
    for sa, sb in [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (3, 4)), ((0, 2), (2,))]:
        out.append(S(_mask(rng.random(sa) < 0.5), _mask(rng.random(sb) < 0.5)))
    out.append(S(A(vals(rng, (3, 4), "frac")), A(np.round(vals(rng, (3, 4)))),
                 desc="float operands"))
    return out


for _n in ("logical_and", "logical_or", "logical_xor"):
    op(_n, (lambda name: lambda m, x, y: getattr(m, name)(x, y))(_n), _logic, (_n,),
       differentiable=False, int_ok=True)
op("logical_not", lambda m, x: m.logical_not(x),
   lambda rng: [S(_mask(rng.random((3, 4)) < 0.5)), S(A(np.round(vals(rng, (3, 4)))))],
   (), differentiable=False, int_ok=True)


def _bits(rng):
    return [S(_mask(rng.random((3, 4)) < 0.5), _mask(rng.random((3, 4)) < 0.5)),
            S(_i64(rng.integers(-8, 8, (3, 4))), _i64(rng.integers(-8, 8, (1, 4)))),
            S(_i64(rng.integers(-8, 8, (3, 4))), 3, desc="scalar other")]


op("bitwise_and", lambda m, x, y: x & y, _bits, ("bitwise_and",), differentiable=False)
op("bitwise_or", lambda m, x, y: x | y, _bits, ("bitwise_or",), differentiable=False)
op("bitwise_xor", lambda m, x, y: x ^ y, _bits, ("bitwise_xor",), differentiable=False)
op("bitwise_not", lambda m, x: ~x,
   lambda rng: [S(_mask(rng.random((3, 4)) < 0.5)), S(_i64(rng.integers(-8, 8, (3, 4))))],
   (), differentiable=False)

# ----------------------------------------------------------------------------------
# reductions

op("sum", lambda m, x, *a, **k: m.sum(x, *a, **k), reduce_samples(
    extra=lambda rng: [S(A(vals(rng, (3, 4))), 1, dtype=DT("float64"), desc="dtype=")]),
   ("sum",), int_ok=True)
op("sum_method", lambda m, x, *a, **k: x.sum(*a, **k), reduce_samples(multi=False), ("sum",),
   int_ok=True)
op("mean", lambda m, x, *a, **k: m.mean(x, *a, **k), reduce_samples(), ("mean",))
op("prod", lambda m, x, *a, **k: m.prod(x, *a, **k), reduce_samples(
    "nz", multi=False, extra=lambda rng: [
        S(A([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]]), 1, desc="one zero"),
        S(A([[1.5, 0.0, 0.0], [0.5, -1.0, 3.0]]), 1, desc="two zeros"),
        S(A([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]]), desc="one zero, all"),
        S(A([[1.5, 0.0, 2.0], [0.0, -1.0, 3.0]]), desc="two zeros, all"),
        S(A([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]]), 0, True, desc="keepdim, zero")]),
   ("prod",), int_ok=True)


def _distinct(rng, shape):
    """Distinct values (no ties) in random order: max/min/sort pick one index."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) - n / 2.0) / 3.0 + rng.uniform(0, 0.01, shape)


def _minmax_samples(rng):
    out = [S(A(_distinct(rng, (3, 4)))), S(A(_distinct(rng, (2, 3, 4)))),
           S(A(_distinct(rng, ()))),
           S(A(_distinct(rng, (3, 4)), layout="T"), desc="non-contiguous"),
           S(A([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), desc="ties", check_grad=False),
           S(A(_distinct(rng, (0, 3))), desc="empty: error")]
    return out


def _minmax_dim(rng):
    return [S(A(_distinct(rng, (3, 4))), 1), S(A(_distinct(rng, (2, 3, 4))), 0),
            S(A(_distinct(rng, (2, 3, 4))), -1, True), S(A(_distinct(rng, ())), 0),
            S(A(_distinct(rng, (3, 4)), layout="T"), 0, desc="non-contiguous"),
            S(A(_distinct(rng, (3, 4))), dim=1, keepdim=True)]


def _amax_samples(rng):
    return [S(A(_distinct(rng, (3, 4)))), S(A(_distinct(rng, (2, 3, 4))), 1),
            S(A(_distinct(rng, (2, 3, 4))), (0, 2)), S(A(_distinct(rng, (2, 3, 4))), -1, True),
            S(A(_distinct(rng, ()))), S(A(_distinct(rng, (3, 4)), layout="T"), 0),
            S(A([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), 1, desc="ties", check_grad=False),
            S(A([[1.0, 3.0, 3.0], [3.0, 2.0, 0.0]]), desc="ties, all", check_grad=False)]


op("max", lambda m, x: m.max(x), _minmax_samples, ("max_all",), int_ok=True)
op("min", lambda m, x: x.min(), _minmax_samples, ("min_all",), int_ok=True)
op("max_dim", lambda m, x, *a, **k: m.max(x, *a, **k), _minmax_dim, ("max",), int_ok=True)
op("min_dim", lambda m, x, *a, **k: x.min(*a, **k), _minmax_dim, ("min",), int_ok=True)
op("amax", lambda m, x, *a: m.amax(x, *a), _amax_samples, ("amax",), int_ok=True)
op("amin", lambda m, x, *a: x.amin(*a), _amax_samples, ("amin",), int_ok=True)
op("argmax", lambda m, x, *a, **k: m.argmax(x, *a, **k),
   lambda rng: [S(A(_distinct(rng, (3, 4)))), S(A(_distinct(rng, (2, 3, 4))), 1),
                S(A(_distinct(rng, (2, 3, 4))), 1, True),
                S(A(_distinct(rng, (2, 3, 4))), keepdim=True),
                S(A(_distinct(rng, ()))), S(A([[1.0, 3.0, 3.0]]), 1, desc="ties: first")],
   (), differentiable=False, int_ok=True)
op("argmin", lambda m, x, *a, **k: x.argmin(*a, **k),
   lambda rng: [S(A(_distinct(rng, (3, 4)))), S(A(_distinct(rng, (2, 3, 4))), -1),
                S(A([[1.0, 0.0, 0.0]]), 1, desc="ties: first")],
   (), differentiable=False, int_ok=True)


def _var_samples(rng):
    out = []
    for shape in [(3, 4), (2, 3, 4), (5,)]:
        x = A(vals(rng, shape))
        out += [S(x), S(x, 0), S(x, -1, keepdim=True), S(x, correction=0),
                S(x, -1, correction=2), S(x, unbiased=False)]
    out += [S(A(vals(rng, (2, 3, 4))), (0, 2)), S(A(vals(rng, (2, 3, 4))), dim=(1,), correction=0),
            S(A(vals(rng, (3, 4)), layout="T"), 1, desc="non-contiguous")]
    return out


op("var", lambda m, x, *a, **k: m.var(x, *a, **k), _var_samples, ("var",))
op("std", lambda m, x, *a, **k: x.std(*a, **k), lambda rng: _var_samples(rng) + [
    S(A(np.full((3, 4), 1.5)), check_grad=False, desc="constant: gradient 0 (std_backward)"),
    S(A(np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])), 1, correction=0, check_grad=False,
      desc="one constant row")], ("std",))


def _norm_samples(rng):
    out = []
    for p in [2, 1, float("inf"), 3, 0.5, "fro"]:
        out.append(S(A(vals(rng, (3, 4), "away0")), p))
    out += [S(A(vals(rng, (2, 3, 4), "away0")), 2, 1),
            S(A(vals(rng, (2, 3, 4), "away0")), 1, -1, True),
            S(A(vals(rng, (3, 4), "away0")), dim=(0, 1)),
            S(A(vals(rng, (3, 4), "away0"), layout="T"), 2, 0, desc="non-contiguous"),
            S(A(vals(rng, (), "away0"))), S(A(np.zeros((3,))), desc="zero vector",
                                             check_grad=False)]
    return out


op("norm", lambda m, x, *a, **k: x.norm(*a, **k), _norm_samples, ("vector_norm",))


def _vnorm_samples(rng):
    out = []
    for o in [2, 1, float("inf"), float("-inf"), 0, 3, 0.5, -1.5]:
        out.append(S(A(vals(rng, (3, 4), "away0")), o))
    out += [S(A(vals(rng, (2, 3, 4), "away0")), 2, 1),
            S(A(vals(rng, (2, 3, 4), "away0")), 2, (0, 2), True),
            S(A(vals(rng, (2, 3, 4), "away0")), float("inf"), -1),
            S(A(vals(rng, (), "away0"))), S(A(np.zeros((2, 3))), desc="zero", check_grad=False),
            S(A(vals(rng, (3, 4), "away0")), dtype=DT("float64"), desc="dtype=")]
    return out


op("linalg.vector_norm", lambda m, x, *a, **k: m.linalg.vector_norm(x, *a, **k),
   _vnorm_samples, ("vector_norm",))


def _lse_samples(rng):
    return [S(A(vals(rng, (3, 4))), 1), S(A(vals(rng, (2, 3, 4))), (0, 2)),
            S(A(vals(rng, (2, 3, 4))), -1, True), S(A(vals(rng, ())), 0),
            S(A(vals(rng, (3, 4)), layout="T"), 0, desc="non-contiguous"),
            S(A([[1000.0, 1000.0], [-1000.0, 0.0]]), 1, desc="large values"),
            S(A([[float("-inf"), 0.0], [float("-inf"), float("-inf")]]), 1, desc="-inf rows",
              check_grad=False)]


op("logsumexp", lambda m, x, *a: m.logsumexp(x, *a), _lse_samples, ("logsumexp",))


def _cum_samples(dom, zeros=False):
    def gen(rng):
        out = [S(A(vals(rng, (3, 4), dom)), 1), S(A(vals(rng, (2, 3, 4), dom)), 0),
               S(A(vals(rng, (2, 3, 4), dom)), -1), S(A(vals(rng, (), dom)), 0),
               S(A(vals(rng, (0, 3), dom)), 1),
               S(A(vals(rng, (3, 4), dom), layout="T"), 1, desc="non-contiguous")]
        if zeros:
            out += [S(A([[1.5, 0.0, 2.0, 3.0], [0.0, -1.0, 0.0, 2.0]]), 1, desc="zeros"),
                    S(A([2.0, 0.0, 3.0]), 0, desc="one zero")]
        return out
    return gen


op("cumsum", lambda m, x, d: m.cumsum(x, d), _cum_samples("real"), ("cumsum",), int_ok=True)
op("cumprod", lambda m, x, d: x.cumprod(d), _cum_samples("nz", zeros=True), ("cumprod",),
   int_ok=True)


def _allany(rng):
    return [S(_mask(rng.random((3, 4)) < 0.7)), S(_mask(rng.random((2, 3, 4)) < 0.5), 1),
            S(_mask(rng.random((3, 4)) < 0.5), 0, True), S(_mask(np.zeros((0, 3)))),
            S(A(np.round(vals(rng, (3, 4)))), desc="float input"),
            S(_i64(rng.integers(0, 2, (3, 4))), 1, desc="int input")]


op("all", lambda m, x, *a: m.all(x, *a), _allany, (), differentiable=False)
op("any", lambda m, x, *a: x.any(*a), _allany, (), differentiable=False)

# ----------------------------------------------------------------------------------
# matrix products


def _mm_samples(rng):
    pairs = [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)),
             ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (2, 4, 3)),
             ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]
    out = [S(A(vals(rng, a)), A(vals(rng, b))) for a, b in pairs]
    out.append(S(A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (4, 5)), layout="T"),
                 desc="non-contiguous"))
    out.append(S(A(vals(rng, (3, 4))), A(vals(rng, (3, 5))), desc="error: shapes"))
    return out


op("matmul", lambda m, x, y: m.matmul(x, y), _mm_samples, ("mm", "dot", "mv", "bmm"),
   int_ok=True)
op("matmul_op", lambda m, x, y: x @ y, _mm_samples, ("mm",), int_ok=True)
# no graph to record: one product for every rank combination (Note [What matmul saves])
_NO_GRAPH = "the operands are detached: no gradient to check"
op("matmul_no_graph", lambda m, x, y: m.matmul(x.detach(), y.detach()), _mm_samples,
   ("mm", "dot", "mv", "bmm", "matmul"), int_ok=True,
   skips={"test_gradcheck": _NO_GRAPH})
op("mm", lambda m, x, y: m.mm(x, y),
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (4, 2)))),
                S(A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (4, 2))))], ("mm",))
op("addmm", lambda m, c, x, y, **kw: m.addmm(c, x, y, **kw),
   lambda rng: [S(A(vals(rng, (3, 2))), A(vals(rng, (3, 4))), A(vals(rng, (4, 2)))),
                S(A(vals(rng, (2,))), A(vals(rng, (3, 4))), A(vals(rng, (4, 2))),
                  desc="broadcast input"),
                S(A(vals(rng, ())), A(vals(rng, (3, 4))), A(vals(rng, (4, 2)))),
                S(A(vals(rng, (3, 1))), A(vals(rng, (3, 4)), layout="T"), A(vals(rng, (4, 2))),
                  beta=0.5, alpha=2.0),
                S(A(vals(rng, (3, 2))), A(vals(rng, (3, 4))), A(vals(rng, (4, 2))), beta=0,
                  desc="beta 0")],
   ("addmm",), inplace="addmm_")
op("bmm", lambda m, x, y: x.bmm(y),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), A(vals(rng, (2, 4, 2)))),
                S(A(vals(rng, (2, 3, 4)), layout="T"), A(vals(rng, (2, 4, 2))))], ("bmm",))
op("mv", lambda m, x, y: m.mv(x, y),
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (4,))))], ("mv",))
op("dot", lambda m, x, y: m.dot(x, y),
   lambda rng: [S(A(vals(rng, (4,))), A(vals(rng, (4,)))),
                S(A(vals(rng, (0,))), A(vals(rng, (0,))))], ("dot",))
op("outer", lambda m, x, y: m.outer(x, y),
   lambda rng: [S(A(vals(rng, (3,))), A(vals(rng, (4,))))], ("mul", "view"))


def _einsum_samples(rng):
    specs = [("ij,jk->ik", (3, 4), (4, 2)), ("ij,ij->", (3, 4), (3, 4)),
             ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)), ("i,j->ij", (3,), (4,)),
             ("...ij,...jk", (2, 3, 4), (4, 2)), ("ij->ji", (3, 4), None),
             ("ijk->k", (2, 3, 4), None), ("ij,j", (3, 4), (4,)), ("ii->i", (3, 3), None),
             ("bii,bij->bj", (2, 3, 3), (2, 3, 4))]
    out = []
    for spec, sa, sb in specs:
        if sb is None:
            out.append(S(spec, A(vals(rng, sa))))
        else:
            out.append(S(spec, A(vals(rng, sa)), A(vals(rng, sb))))
    out.append(S("ij,jk,kl->il", A(vals(rng, (2, 3))), A(vals(rng, (3, 4))),
                 A(vals(rng, (4, 2))), desc="three operands"))
    return out


op("einsum", lambda m, spec, *xs: m.einsum(spec, *xs), _einsum_samples,
   ("bmm", "permute", "diagonal", "sum"))


def _tensordot_samples(rng):
    return [S(A(vals(rng, (2, 3, 4))), A(vals(rng, (3, 4, 2)))),
            S(A(vals(rng, (3, 4))), A(vals(rng, (4, 2))), dims=1),
            S(A(vals(rng, (2, 3, 4))), A(vals(rng, (4, 3, 2))), dims=([1, 2], [1, 0]))]


op("tensordot", lambda m, x, y, **k: m.tensordot(x, y, **k), _tensordot_samples,
   ("permute", "view", "mm"))

# ----------------------------------------------------------------------------------
# shape and view ops


def _view_samples(rng):
    return [S(A(vals(rng, (3, 4))), 12), S(A(vals(rng, (3, 4))), (2, 6)),
            S(A(vals(rng, (2, 3, 4))), -1, 4), S(A(vals(rng, ())), 1), S(A(vals(rng, (1,))), ()),
            S(A(vals(rng, (0, 3))), 3, 0),
            S(A(vals(rng, (3, 4)), layout="T"), 12, desc="non-contiguous: error")]


op("view", lambda m, x, *s: x.view(*s), _view_samples, ("view",), int_ok=True)


def _reshape_samples(rng):
    return [S(A(vals(rng, (3, 4))), (12,)), S(A(vals(rng, (2, 3, 4))), (4, -1)),
            S(A(vals(rng, ())), (1, 1)), S(A(vals(rng, (0, 3))), (3, 0)),
            S(A(vals(rng, (3, 4)), layout="T"), (-1,), desc="non-contiguous: a copy"),
            S(A(vals(rng, (3, 4)), layout="T"), (4, 1, 3), desc="non-contiguous: an alias")]


op("reshape", lambda m, x, s: m.reshape(x, s), _reshape_samples,
   ("view", "unsafe_view", "clone", "reshape_alias"),
   int_ok=True)
op("flatten", lambda m, x, *a: x.flatten(*a),
   lambda rng: [S(A(vals(rng, (2, 3, 4)))), S(A(vals(rng, (2, 3, 4))), 1),
                S(A(vals(rng, (2, 3, 4))), 0, 1), S(A(vals(rng, ()))),
                S(A(vals(rng, (3, 4)), layout="T"), desc="non-contiguous")], ("view",),
   int_ok=True)
op("unflatten", lambda m, x, d, s: x.unflatten(d, s),
   lambda rng: [S(A(vals(rng, (2, 12))), 1, (3, 4)), S(A(vals(rng, (6, 2))), 0, (-1, 2))],
   ("view",))
op("squeeze", lambda m, x, *a: x.squeeze(*a),
   lambda rng: [S(A(vals(rng, (1, 3, 1, 4)))), S(A(vals(rng, (1, 3, 1, 4))), 2),
                S(A(vals(rng, (1, 3, 1, 4))), 1), S(A(vals(rng, (1, 3, 1, 4))), (0, 2)),
                S(A(vals(rng, ()))), S(A(vals(rng, ())), 0)],
   ("squeeze", "squeeze_all", "squeeze_dims"), int_ok=True)
op("unsqueeze", lambda m, x, d: m.unsqueeze(x, d),
   lambda rng: [S(A(vals(rng, (3, 4))), 0), S(A(vals(rng, (3, 4))), -1),
                S(A(vals(rng, (3, 4))), 1), S(A(vals(rng, ())), 0)], ("unsqueeze",))
op("permute", lambda m, x, *d: x.permute(*d),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), 2, 0, 1), S(A(vals(rng, (2, 3, 4))), (1, 2, 0)),
                S(A(vals(rng, (3, 4))), -1, 0), S(A(vals(rng, ()))),
                S(A(vals(rng, (3, 4)), layout="T"), 1, 0)], ("permute",), int_ok=True)
op("transpose", lambda m, x, a, b: m.transpose(x, a, b),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), 0, 2), S(A(vals(rng, (3, 4))), -1, -2),
                S(A(vals(rng, ())), 0, 0), S(A(vals(rng, (3, 4))), 1, 1)],
   ("transpose",))
op("swapaxes", lambda m, x, a, b: x.swapaxes(a, b),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), 0, 1)], ("transpose",))
op("t", lambda m, x: x.t(),
   lambda rng: [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (4,)))), S(A(vals(rng, ())))], ("t",))
op("T_mT", lambda m, x: (x.T, x.mT),
   lambda rng: [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (2, 3, 4))))], ("permute", "transpose"))
op("movedim", lambda m, x, s, d: x.movedim(s, d),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), 0, -1), S(A(vals(rng, (2, 3, 4))), (0, 1), (2, 0))],
   ("permute",))


def _expand_samples(rng):
    return [S(A(vals(rng, (3, 1))), 3, 4), S(A(vals(rng, (3, 1))), (2, 3, 4)),
            S(A(vals(rng, ())), 2, 3), S(A(vals(rng, (1, 4))), -1, -1),
            S(A(vals(rng, (3, 4))), 2, -1, 4), S(A(vals(rng, (3, 1))), 3, 0)]


op("expand", lambda m, x, *s: x.expand(*s), _expand_samples, ("expand",), int_ok=True)
op("expand_as", lambda m, x, y: x.expand_as(y),
   lambda rng: [S(A(vals(rng, (3, 1))), A(vals(rng, (2, 3, 4)), grad=False))], ("expand",))
op("broadcast_to", lambda m, x, s: m.broadcast_to(x, s),
   lambda rng: [S(A(vals(rng, (1, 4))), (3, 4)), S(A(vals(rng, ())), (2, 2))], ("expand",))
op("repeat", lambda m, x, *r: x.repeat(*r),
   lambda rng: [S(A(vals(rng, (3, 4))), 2, 1), S(A(vals(rng, (3,))), 2, 2),
                S(A(vals(rng, (2, 3))), (1, 2, 3)), S(A(vals(rng, ())), 3),
                S(A(vals(rng, (3, 4)), layout="T"), 1, 2)], ("repeat",), int_ok=True)
op("tile", lambda m, x, r: m.tile(x, r),
   lambda rng: [S(A(vals(rng, (3, 4))), (2,)), S(A(vals(rng, (3,))), (2, 2))], ("repeat",))
op("flip", lambda m, x, d: m.flip(x, d),
   lambda rng: [S(A(vals(rng, (3, 4))), (0,)), S(A(vals(rng, (2, 3, 4))), (0, 2)),
                S(A(vals(rng, (3, 4))), [-1]), S(A(vals(rng, ())), ()),
                S(A(vals(rng, (3, 4)), layout="T"), (1,))], ("flip",), int_ok=True)
op("roll", lambda m, x, *a: x.roll(*a),
   lambda rng: [S(A(vals(rng, (3, 4))), 1, 1), S(A(vals(rng, (3, 4))), -2, 0),
                S(A(vals(rng, (2, 3, 4))), (1, 2), (0, 2)), S(A(vals(rng, (3, 4))), 5)],
   ("roll",), int_ok=True)


def _cat_samples(rng):
    return [S([A(vals(rng, (2, 3))), A(vals(rng, (1, 3)))]),
            S([A(vals(rng, (2, 3))), A(vals(rng, (2, 1))), A(vals(rng, (2, 2)))], 1),
            S([A(vals(rng, (2, 3))), A(vals(rng, (0,)))], desc="legacy empty 1-D"),
            S([A(vals(rng, (2, 3, 4))), A(vals(rng, (2, 3, 4)), layout="T")], -1),
            S([A(vals(rng, (2, 3))), A(vals(rng, (2, 3)), grad=False)], 0),
            S([A(vals(rng, (2, 3))), A(vals(rng, (3, 3)))], 1, desc="error: sizes")]


op("cat", lambda m, xs, *a: m.cat(xs, *a), _cat_samples, ("cat",), int_ok=True)


def _stack_samples(rng):
    return [S([A(vals(rng, (2, 3))), A(vals(rng, (2, 3)))]),
            S([A(vals(rng, (2, 3))), A(vals(rng, (2, 3))), A(vals(rng, (2, 3)))], -1),
            S([A(vals(rng, ())), A(vals(rng, ()))]),
            S([A(vals(rng, (2, 3))), A(vals(rng, (3, 2)), layout="T")], 1)]


op("stack", lambda m, xs, *a: m.stack(xs, *a), _stack_samples, ("stack",), int_ok=True)
op("split", lambda m, x, s, *a: x.split(s, *a),
   lambda rng: [S(A(vals(rng, (5, 3))), 2), S(A(vals(rng, (5, 3))), [1, 4]),
                S(A(vals(rng, (2, 6))), 3, 1), S(A(vals(rng, (2, 6))), [2, 0, 4], -1),
                S(A(vals(rng, (4, 3)), layout="T"), 2, 1)],
   ("split", "split_with_sizes"), int_ok=True)
op("chunk", lambda m, x, c, *a: m.chunk(x, c, *a),
   lambda rng: [S(A(vals(rng, (5, 3))), 2), S(A(vals(rng, (6, 3))), 3),
                S(A(vals(rng, (2, 5))), 2, 1)], ("split",))
op("unbind", lambda m, x, *a: x.unbind(*a),
   lambda rng: [S(A(vals(rng, (3, 4)))), S(A(vals(rng, (2, 3, 4))), 1),
                S(A(vals(rng, (3, 4)), layout="T"), -1)], ("unbind",), int_ok=True)
op("narrow", lambda m, x, d, s, n: x.narrow(d, s, n),
   lambda rng: [S(A(vals(rng, (3, 4))), 1, 1, 2), S(A(vals(rng, (3, 4))), 0, -2, 2),
                S(A(vals(rng, (2, 3, 4))), -1, 0, 0)], ("slice",))

op("diagonal", lambda m, x, o, d1, d2: x.diagonal(o, d1, d2),
   lambda rng: [S(A(vals(rng, (3, 4))), 0, 0, 1), S(A(vals(rng, (3, 4))), 1, 0, 1),
                S(A(vals(rng, (3, 4))), -2, 1, 0), S(A(vals(rng, (2, 3, 4))), 0, -1, 0),
                S(A(vals(rng, (3, 4)), layout="T"), 1, 0, 1), S(A(vals(rng, (2, 2))), 5, 0, 1)],
   ("diagonal",))
op("unfold", lambda m, x, d, size, step: x.unfold(d, size, step),
   lambda rng: [S(A(vals(rng, (5,))), 0, 2, 1), S(A(vals(rng, (3, 4))), 1, 2, 2),
                S(A(vals(rng, (3, 4))), 0, 3, 1), S(A(vals(rng, (2, 3, 4))), -1, 1, 3),
                S(A(vals(rng, ()),), 0, 1, 1), S(A(vals(rng, (4, 3)), layout="T"), 0, 2, 1)],
   ("unfold",))
op("as_strided", lambda m, x, size, stride, off: x.as_strided(size, stride, off),
   lambda rng: [S(A(vals(rng, (3, 4))), (2, 2), (1, 2), 1),
                S(A(vals(rng, (6,))), (3, 2), (1, 1), 0),
                S(A(vals(rng, (2, 3))), (3,), (2,), None)],
   ("as_strided",))

# __getitem__: basic indexing is a view, advanced a copy


def _getitem_samples(rng):
    x = lambda s=(3, 4): A(vals(rng, s))  # noqa: E731
    return [
        S(x(), 1), S(x(), -1), S(x(), (slice(None), 2)),
        S(x(), (slice(1, 3), slice(None, None, 2))),
        S(x((2, 3, 4)), (Ellipsis, 0)), S(x((2, 3, 4)), (None, 1, Ellipsis, None)),
        S(x(), (slice(None), slice(1, 1))), S(x((2, 3, 4)), (1, slice(None), -1)),
        S(x(), _i64([2, 0, 2]), desc="repeated indices"), S(x(), [0, 2], desc="list"),
        S(x(), (slice(None), _i64([[1, 3], [0, 0]]))), S(x(), (_i64([0, 2]), _i64([1, 3]))),
        S(x(), _mask(rng.random((3, 4)) < 0.5), desc="bool mask"),
        S(x(), _mask([True, False, True]), desc="row mask"),
        S(x((2, 3, 4)), (slice(None), _i64([1, 0]), slice(1, 3))),
        S(x((2, 3, 4)), (_i64([1, 0]), slice(None), _i64([3, 0])), desc="split advanced"),
        S(x(()), Ellipsis), S(x(()), None),
        S(A(vals(rng, (3, 4)), layout="T"), (_i64([0, 2]), slice(1, None)), desc="non-contig"),
        S(x(), (1, 5), desc="error: out of range"),
    ]


op("getitem", lambda m, x, k: x[k], _getitem_samples,
   ("select", "slice", "index", "unsqueeze", "alias"),
   int_ok=True)


def _setitem(x, key, v):
    y = x * 1
    y[key] = v
    return y


def _setitem_samples(rng):
    x = lambda s=(3, 4): A(vals(rng, s))  # noqa: E731
    return [
        S(x(), 1, x((4,))), S(x(), (slice(None), 2), x((3,))), S(x(), 0, 2.5, desc="scalar"),
        S(x(), (slice(0, 2), slice(1, 3)), x((1, 2)), desc="broadcast value"),
        S(x(), _i64([2, 0]), x((2, 4))), S(x(), _mask(rng.random((3, 4)) < 0.5), 0.0),
        S(x(), (_i64([0, 2]), _i64([1, 3])), x(())),
        S(x((2, 3, 4)), (Ellipsis, 1), x((2, 3))),
        S(x(), _mask([True, False, True]), x((4,)), desc="row mask"),
    ]


op("setitem", lambda m, x, k, v: _setitem(x, k, v), _setitem_samples,
   ("mul", "index_put_setitem"), int_ok=True)


def _index_put_samples(rng):
    return [S(A(vals(rng, (3, 4))), (_i64([2, 0]),), A(vals(rng, (2, 4)))),
            S(A(vals(rng, (3, 4))), (_i64([0, 2, 0]), _i64([1, 3, 1])), A(vals(rng, (3,))),
              accumulate=True, desc="repeated, accumulate"),
            S(A(vals(rng, (3, 4))), (_i64([0, 2]), _i64([1, 3])), A(vals(rng, ()))),
            S(A(vals(rng, (3, 4))), (_mask(rng.random((3, 4)) < 0.5),), A(vals(rng, ())))]


op("index_put", lambda m, x, i, v, **k: x.index_put(i, v, **k), _index_put_samples,
   ("index_put",), inplace="index_put_", int_ok=True)


def _setitem_view(m, x, v):
    y = x * 1
    row = y[1]
    row[1:3] = v  # in-place on a view of a non-leaf: CopySlices on y
    return y, row


op("setitem_view", _setitem_view,
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (2,)))),
                S(A(vals(rng, (3, 4))), 1.5, desc="scalar")], ("copy_slices_folded",))


def _inplace_view(m, x, w):
    y = x * 1
    v = y.t()[:, 1:]
    v.mul_(w)
    return y, v


op("inplace_on_view", _inplace_view,
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (4, 2)))),
                S(A(vals(rng, (3, 4))), A(vals(rng, (1, 2))))], ("copy_slices_folded", "t", "mul"))


def _gather_samples(rng):
    return [S(A(vals(rng, (3, 4))), 1, _i64(rng.integers(0, 4, (3, 2)))),
            S(A(vals(rng, (3, 4))), 0, _i64(rng.integers(0, 3, (2, 4)))),
            S(A(vals(rng, (2, 3, 4))), -1, _i64(rng.integers(0, 4, (2, 3, 5)))),
            S(A(vals(rng, (3, 4))), 1, _i64(rng.integers(0, 4, (2, 2))), desc="smaller index"),
            S(A(vals(rng, (3, 4)), layout="T"), 1, _i64(rng.integers(0, 4, (3, 3)))),
            S(A(vals(rng, (3, 4))), 1, _i64(np.zeros((3, 0))), desc="empty index")]


op("gather", lambda m, x, d, i: m.gather(x, d, i), _gather_samples, ("gather",), int_ok=True)


def _scatter_samples(rng):
    perm = np.stack([rng.permutation(4)[:3] for _ in range(2)])  # distinct per row
    return [S(A(vals(rng, (2, 4))), 1, _i64(perm), A(vals(rng, (2, 3)))),
            S(A(vals(rng, (3, 4))), 0, _i64(np.array([[2, 0, 1, 2]])), A(vals(rng, (1, 4)))),
            # torch's backward rejects a src larger than index (its own shape check)
            S(A(vals(rng, (2, 4))), 1, _i64(perm), A(vals(rng, (3, 5))), desc="larger src",
              torch_grad=False),
            S(A(vals(rng, (2, 4))), 1, _i64(perm), value=1.5, desc="value="),
            S(A(vals(rng, (2, 4))), 1, _i64(perm), 2.5, desc="scalar src")]


op("scatter", lambda m, x, d, i, *a, **k: x.scatter(d, i, *a, **k), _scatter_samples,
   ("scatter",), inplace="scatter_")


def _scatter_add_samples(rng):
    idx = rng.integers(0, 4, (3, 5))
    return [S(A(vals(rng, (3, 4))), 1, _i64(idx), A(vals(rng, (3, 5)))),
            S(A(vals(rng, (3, 4))), 0, _i64(rng.integers(0, 3, (5, 4))), A(vals(rng, (5, 4)))),
            S(A(vals(rng, (3, 4))), 1, _i64(idx[:, :2]), A(vals(rng, (3, 5))),
              desc="larger src", torch_grad=False)]  # torch's backward rejects it


op("scatter_add", lambda m, x, d, i, s: m.scatter_add(x, d, i, s), _scatter_add_samples,
   ("scatter_add",), inplace="scatter_add_", int_ok=True)
op("scatter_reduce_add", lambda m, x, d, i, *a, **k: x.scatter(d, i, *a, reduce="add", **k),
   lambda rng: [S(A(vals(rng, (3, 4))), 1, _i64(rng.integers(0, 4, (3, 5))), A(vals(rng, (3, 5)))),
                S(A(vals(rng, (3, 4))), 1, _i64(rng.integers(0, 4, (3, 5))), value=1.5,
                  desc="value=")],
   ("scatter",), differentiable=False)  # NotImplemented nodes in torch: backward raises
op("index_select", lambda m, x, d, i: m.index_select(x, d, i),
   lambda rng: [S(A(vals(rng, (3, 4))), 0, _i64([2, 0, 2])),
                S(A(vals(rng, (2, 3, 4))), -1, _i64([1])),
                S(A(vals(rng, (3, 4))), 1, _i64(np.zeros(0))),
                S(A(vals(rng, (3, 4)), layout="T"), 1, _i64([0, 3]))], ("index_select",),
   int_ok=True)
op("index_add", lambda m, x, d, i, s, **k: x.index_add(d, i, s, **k),
   lambda rng: [S(A(vals(rng, (3, 4))), 0, _i64([2, 0, 2]), A(vals(rng, (3, 4)))),
                S(A(vals(rng, (3, 4))), 1, _i64([1, 3]), A(vals(rng, (3, 2))), alpha=2.0),
                S(A(vals(rng, (2, 3, 4))), 1, _i64([0]), A(vals(rng, (2, 1, 4))))],
   ("index_add",), inplace="index_add_", int_ok=True)



def _index_fill_samples(rng):
    return [S(A(vals(rng, (3, 4))), 1, _i64([2, 0, 2]), -1.5),
            S(A(vals(rng, (3, 4))), -2, _i64([-1]), 2, desc="negative dim and index"),
            S(A(vals(rng, (2, 3, 4))), 2, _i64(3), 0.5, desc="0-d index"),
            S(A(vals(rng, (3, 4)), layout="T"), 0, _i64([1]), 1.0),
            S(A(vals(rng, ())), 0, _i64([0]), 2.0, desc="0-d self"),
            S(A(vals(rng, (3, 4))), 1, _i64(np.zeros(0)), 2.0, desc="empty index")]


def _index_fill_tensor_samples(rng):
    # the value's gradient sums each filled position once (torch: index_select of unique)
    return [S(A(vals(rng, (3, 4))), 1, _i64([2, 0, 2]), A(vals(rng, ()))),
            S(A(vals(rng, (2, 3, 4))), -1, _i64(1), A(vals(rng, ())), desc="0-d index"),
            S(A(vals(rng, (3, 4)), layout="T"), 0, _i64([1, 2]), A(vals(rng, ()))),
            S(A(vals(rng, ())), 0, _i64([0]), A(vals(rng, ())), desc="0-d self"),
            S(A(vals(rng, (3, 4))), 0, _i64(np.zeros(0)), A(vals(rng, ())), desc="empty index")]


op("index_fill", lambda m, x, d, i, v: x.index_fill(d, i, v), _index_fill_samples,
   ("index_fill",), inplace="index_fill_", int_ok=True)
op("index_fill_tensor", lambda m, x, d, i, v: m.index_fill(x, d, i, v),
   _index_fill_tensor_samples, ("index_fill_tensor",), inplace="index_fill_", int_ok=True)


def _masked_fill_samples(rng):
    return [S(A(vals(rng, (3, 4))), _mask(rng.random((3, 4)) < 0.5), 0.5),
            S(A(vals(rng, (3, 4))), _mask(rng.random((1, 4)) < 0.5), -1),
            S(A(vals(rng, (3, 4))), _mask(rng.random((3, 4)) < 0.5), A(vals(rng, ())),
              desc="0-d tensor value"),
            S(A(vals(rng, ())), _mask(True), 2.0),
            S(A(vals(rng, (3, 4)), layout="T"), _mask(rng.random((3, 4)) < 0.5), 1.0)]


op("masked_fill", lambda m, x, k, v: x.masked_fill(k, v), _masked_fill_samples,
   ("masked_fill", "masked_fill_tensor"),
   inplace="masked_fill_", int_ok=True)
op("masked_select", lambda m, x, k: m.masked_select(x, k),
   lambda rng: [S(A(vals(rng, (3, 4))), _mask(rng.random((3, 4)) < 0.5)),
                S(A(vals(rng, (3, 4))), _mask(rng.random((1, 4)) < 0.5)),
                S(A(vals(rng, (1, 4))), _mask(rng.random((3, 4)) < 0.5), desc="broadcast input")],
   ("masked_select",), int_ok=True)


def _tad_samples(rng):
    x = vals(rng, (3, 4))
    return [S(A(x), _i64(np.argsort(x, axis=1)), 1), S(A(x), _i64([[0], [3], [1]]), 1),
            S(A(vals(rng, (3, 4))), _i64(rng.integers(0, 3, (2, 4))), 0),
            S(A(vals(rng, (3, 4))), _i64([5, 0, 11]), desc="flattened (dim=None)"),
            S(A(vals(rng, (2, 3, 4))), _i64(rng.integers(0, 4, (1, 3, 2))), -1, desc="broadcast")]


op("take_along_dim", lambda m, x, i, *a: m.take_along_dim(x, i, *a), _tad_samples,
   ("gather",), int_ok=True)


def _sort_samples(rng):
    return [S(A(_distinct(rng, (3, 4)))), S(A(_distinct(rng, (3, 4))), 0),
            S(A(_distinct(rng, (2, 3, 4))), 1, True), S(A(_distinct(rng, (3, 4))), descending=True),
            S(A(_distinct(rng, ()))), S(A(_distinct(rng, (3, 4)), layout="T"), -1)]


op("sort", lambda m, x, *a, **k: m.sort(x, *a, **k), _sort_samples, ("sort",), int_ok=True)
op("argsort", lambda m, x, *a, **k: x.argsort(*a, **k), _sort_samples, (),
   differentiable=False, int_ok=True)


def _topk_samples(rng):
    return [S(A(_distinct(rng, (3, 5))), 2), S(A(_distinct(rng, (3, 5))), 2, 0),
            S(A(_distinct(rng, (2, 3, 5))), 3, largest=False), S(A(_distinct(rng, (5,))), 0),
            S(A(_distinct(rng, (3, 5))), 6, desc="error: k too large")]


op("topk", lambda m, x, k, *a, **kw: x.topk(k, *a, **kw), _topk_samples, ("topk",),
   int_ok=True)
op("kthvalue", lambda m, x, k, *a, **kw: m.kthvalue(x, k, *a, **kw),
   lambda rng: [S(A(_distinct(rng, (3, 5))), 2), S(A(_distinct(rng, (3, 5))), 1, 0),
                S(A(_distinct(rng, (2, 3, 5))), 3, 1, True)], ("kthvalue",))
op("median", lambda m, x, *a, **k: x.median(*a, **k),
   lambda rng: [S(A(_distinct(rng, (3, 5)))), S(A(_distinct(rng, (3, 4)))),
                S(A(_distinct(rng, (3, 4))), 1), S(A(_distinct(rng, (3, 5))), 0, True),
                S(A([[1.0, 2.0], [2.0, 3.0]]), check_grad=False,
                  desc="ties share the gradient (evenly_distribute_backward)")],
   ("median_dim", "median_all"))

# ----------------------------------------------------------------------------------
# in-place building blocks, copies, conversions


op("zero_", lambda m, x: (x * 1).zero_(), unary(), ("mul", "zero"), int_ok=True)
op("fill_", lambda m, x, v: (x * 1).fill_(v),
   lambda rng: [S(A(vals(rng, (3, 4))), 2.5), S(A(vals(rng, (3, 4))), A(vals(rng, ()))),
                S(A(vals(rng, ())), A(vals(rng, ()))), S(A(vals(rng, (0, 2))), 1.0),
                S(A(vals(rng, (3, 4))), A(vals(rng, ()), grad=False), desc="value no grad")],
   ("mul", "fill"))
op("copy_", lambda m, x, y: (x * 1).copy_(y),
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (3, 4)))),
                S(A(vals(rng, (3, 4))), A(vals(rng, (1, 4)))),
                S(A(vals(rng, (3, 4))), A(vals(rng, ()))),
                S(A(vals(rng, (3, 4))), A(vals(rng, (4, 3)), layout="T")),
                S(A(vals(rng, (3, 4))), A(vals(rng, (2, 4))), desc="error: shapes")],
   ("mul", "copy_from"))
op("clone", lambda m, x: m.clone(x), unary(), ("clone",), int_ok=True)
op("contiguous", lambda m, x: x.contiguous(),
   lambda rng: [S(A(vals(rng, (3, 4)), layout="T")), S(A(vals(rng, (3, 4))))], ("clone",))
op("to_dtype", lambda m, x, d: x.to(d),
   lambda rng: [S(A(vals(rng, (3, 4))), DT("float64")),
                # central differences in float64 cannot see through a float32/16 rounding
                S(A(vals(rng, (3, 4))), DT("float32"), check_grad=False),
                S(A(vals(rng, ())), DT("float16"), check_grad=False),
                S(A(vals(rng, (3, 4))), DT("int64")), S(A(vals(rng, (3, 4))), DT("bool"))],
   ("to_copy",))
op("to_methods", lambda m, x: (x.double(), x.float(), x.half().float(), x.long()),
   unary(), ("to_copy",),
   skips={"test_gradcheck": "central differences in float64 cannot see through the float32 "
                            "and float16 roundings; the casts' gradients are compared with "
                            "torch in test_grad",
          "test_gradgradcheck": "as test_gradcheck"})
op("type_as", lambda m, x, y: x.type_as(y),
   lambda rng: [S(A(vals(rng, (3, 4))), A(vals(rng, (2,)), dtype="float64"))],
   ())  # float64 -> float64 is a no-op (to_copy is reached by the "to" entry)


# ----------------------------------------------------------------------------------
# grad_fn names that differ from PyTorch's (values and gradients still match). PyTorch
# names composites it implements as one kernel; retrograd records one node per table
# primitive, so these names follow the primitives it composes.
NAME_SKIPS = {
}
for _e in DB:
    if _e.name in NAME_SKIPS:
        _e.skips.setdefault("test_grad_fn_name", NAME_SKIPS[_e.name])
import opdb_attention  # noqa: E402, F401  (scaled_dot_product_attention)
import opdb_cdist_polynomials  # noqa: E402, F401  (cdist, torch.special's polynomials)
import opdb_construct  # noqa: E402, F401  (construction, scatter, add-product, view copies)
import opdb_linalg  # noqa: E402, F401  (torch.linalg's entries)
import opdb_losses  # noqa: E402, F401  (the loss records' entries)
import opdb_nnloss  # noqa: E402, F401  (the nnloss family's entries)
import opdb_nnmods  # noqa: E402, F401  (the nnmods family's entries)
import opdb_nnnames  # noqa: E402, F401  (the nn-names records' entries)
import opdb_nnspatial  # noqa: E402, F401  (the spatial nn records' entries)
import opdb_normalization  # noqa: E402, F401  (batch_norm and group_norm)
import opdb_resize  # noqa: E402, F401  (interpolate and adaptive average pooling)
import opdb_samplers  # noqa: E402, F401  (the gamma-family samplers' entries)
import opdb_scans  # noqa: E402, F401  (scans, scatter-reductions, counting, statistics)
import opdb_torchops  # noqa: E402, F401  (the remaining torch tensor ops, issue 16)
from opdb_special import *  # noqa: E402, F403  (special functions)
