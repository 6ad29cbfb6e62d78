"""gradcheck and gradgradcheck: analytical derivatives against finite differences.

Same signature, defaults and error wording as ``torch.autograd.gradcheck``; a
failure also names the worst element (its place in the input and the output, the
two values and their relative error) and what to try next.

Example:
    >>> import retrograd as torch
    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(torch.sin, (x,))
    True
    >>> torch.autograd.gradgradcheck(torch.sin, (x,))
    True
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .._core.dtype import FROM_NP
from .._functions.creation import rand, randn, zeros_like
from .._functions.make_tensor import make_tensor
from .._random.rng import Generator
from .._tensor.tensor import Tensor, _make
from . import forward_ad as fwAD
from . import grad as autograd_grad
from .function import _UndefinedGrad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a check fails (a ``RuntimeError``)."""


# Note [gradcheck layout]
# As in PyTorch, a Jacobian block for (input i, output j) is stored transposed, with
# one row per input element and one column per output element: the numerical block
# is filled a row at a time (perturb one input element, read every output), the
# analytical block a column at a time (one backward per output element). The blocks
# are plain float arrays assembled with NumPy: they are test data, never part of a
# graph, so the "no NumPy outside the kernels" rule does not apply to them.


def _tensor_cls():

    return Tensor


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float(o) -> bool:
    return isinstance(o, _tensor_cls()) and o.is_floating_point()


def _diff_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, _tensor_cls()) and o.requires_grad)


def _diff_input_indices(inputs) -> list:
    T = _tensor_cls()
    return [i for i, t in enumerate(inputs) if isinstance(t, T) and t.requires_grad]


def _wrap(arr):

    return _make(np.array(arr, order="C"))


# ----------------------------------------------------------------------------------
# checks on the arguments


def _check_inputs(tupled_inputs) -> None:
    T = _tensor_cls()
    any_rg = False
    for idx, inp in enumerate(tupled_inputs):
        if isinstance(inp, T) and inp.requires_grad:
            if inp._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not "
                    "of double precision floating point or complex. ", stacklevel=3)
            if inp._data.size and not all(st > 0 or sz <= 1
                                          for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            any_rg = True
    if not any_rg:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _check_same_dtype_and_shape(o1, o2, eps, idx=None) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if o1.shape != o2.shape:
        raise AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"{on_index}by {eps}, but got: shapes {o1.shape} and {o2.shape}.")
    if o1.dtype != o2.dtype:
        raise AssertionError(
            "Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"{on_index}by {eps}, but got: dtypes {o1.dtype} and {o2.dtype}.")


# ----------------------------------------------------------------------------------
# numerical side (central differences, perturbing the input's memory in place)


def _eval_outputs(fn, inputs) -> list:
    """Run ``fn`` and copy every output's array (so later perturbations can't alias it)."""
    T = _tensor_cls()
    outs = _as_tuple(fn(*inputs))
    return [o._data.copy() if isinstance(o, T) else o for o in outs]


def _numerical_jvp(fn, inputs, x, delta, eps, idx=None) -> list:
    """(f(x + delta) - f(x - delta)) / (2 eps) for each output, flattened (``delta`` an array
    or a scalar written at ``idx``)."""
    data = x._data
    if idx is None:
        orig = data.copy()
        data[...] = orig - delta
        outa = _eval_outputs(fn, inputs)
        data[...] = orig + delta
        outb = _eval_outputs(fn, inputs)
        data[...] = orig
    else:
        orig = data[idx].copy()
        data[idx] = orig - delta
        outa = _eval_outputs(fn, inputs)
        data[idx] = orig + delta
        outb = _eval_outputs(fn, inputs)
        data[idx] = orig
    res = []
    for a, b in zip(outa, outb):
        if not isinstance(a, np.ndarray):
            res.append(None)
            continue
        _check_same_dtype_and_shape(a, b, eps, idx)
        if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
            res.append(None)
            continue
        d = (b - a) / (2 * eps)
        res.append(np.asarray(d, dtype=a.dtype).reshape(-1))
    return res


def _numerical_jacobian(fn, inputs, func_out, eps) -> list:
    """numerical[i][j]: (numel of diff input i, numel of float output j) array."""
    float_outs = [o for o in _as_tuple(func_out) if _is_float(o)]
    result = []
    for k in _diff_input_indices(inputs):
        x = inputs[k]
        blocks = [np.zeros((x._data.size, o._data.size), dtype=o._data.dtype)
                  for o in float_outs]
        for row, idx in enumerate(itertools.product(*[range(m) for m in x._data.shape])):
            cols = [c for c in _numerical_jvp(fn, inputs, x, eps, eps, idx) if c is not None]
            for b, c in zip(blocks, cols):
                b[row] = c
        result.append(blocks)
    return result


# ----------------------------------------------------------------------------------
# analytical side (one backward per output element)


def _vjp_rows(output, diff_inputs) -> list:
    """rows[i][r]: gradient of output element r w.r.t. diff input i (None if unused)."""

    n = output._data.size
    rows = [[] for _ in diff_inputs]
    flat = np.zeros(n, dtype=output._data.dtype)
    for r in range(n):
        flat[:] = 0
        flat[r] = 1
        go = _wrap(flat.reshape(output._data.shape).copy())
        gs = autograd_grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)
        for i, g in enumerate(gs):
            rows[i].append(None if g is None else g.detach().clone())
    return rows


def _stack_rows(rows, diff_inputs, ncols):
    """Assemble rows into (numel input, numel output) blocks; report size/dtype mismatches."""
    blocks = []
    sizes_ok = types_ok = True
    for inp, col_list in zip(diff_inputs, rows):
        b = np.zeros((inp._data.size, ncols), dtype=inp._data.dtype)
        for c, g in enumerate(col_list):
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
                continue
            if g.dtype != inp.dtype:
                types_ok = False
            b[:, c] = g._data.reshape(-1)
        blocks.append(b)
    return blocks, sizes_ok, types_ok


_NONDET = """

NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes, v=None) -> list:
    """Blocks (numel input, numel output) of J^T for one output (or vJ columns when ``v``)."""

    diff_inputs = [inputs[k] for k in _diff_input_indices(inputs)]
    if v is None:
        rows1 = _vjp_rows(output, diff_inputs)
        rows2 = _vjp_rows(output, diff_inputs)
        ncols = output._data.size
    else:
        go = _wrap(v.reshape(output._data.shape))
        rows1 = [[None if g is None else g.detach().clone()] for g in autograd_grad(
            output, diff_inputs, go, retain_graph=True, allow_unused=True)]
        rows2 = [[None if g is None else g.detach().clone()] for g in autograd_grad(
            output, diff_inputs, go, retain_graph=True, allow_unused=True)]
        ncols = 1
    j1, sizes_ok, types_ok = _stack_rows(rows1, diff_inputs, ncols)
    j2, _, _ = _stack_rows(rows2, diff_inputs, ncols)
    reentrant = all(a.size == 0 or float(np.abs(a - b).max()) <= nondet_tol
                    for a, b in zip(j1, j2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}." + _NONDET)
    return j1


def _forward_ad_jacobian(fn, inputs, func_out, check_grad_dtypes=False, all_u=None) -> list:
    """jac[i][j]: J of float output j w.r.t. diff input i by forward AD, shape
    (numel input, numel output), or (1, numel output) rows J u when ``all_u`` is given."""

    float_outs = [o for o in _as_tuple(func_out) if _is_float(o)]
    diff_idx = _diff_input_indices(inputs)
    jacs = []
    with fwAD.dual_level():
        duals = list(inputs)
        tangents = {}
        for k in diff_idx:
            duals[k] = fwAD.make_dual(inputs[k].detach(), zeros_like(inputs[k]))
            tangents[k] = fwAD.unpack_dual(duals[k]).tangent

        def run():
            outs = [o for o in _as_tuple(fn(*duals)) if _is_float(o)]
            res = []
            for o in outs:
                primal, tan = fwAD.unpack_dual(o)
                if check_grad_dtypes and tan is not None and tan.dtype != primal.dtype:
                    raise GradcheckError("Forward AD gradient has dtype mismatch.")
                res.append(None if tan is None else tan._data.reshape(-1))
            return res

        for n, k in enumerate(diff_idx):
            tan = tangents[k]
            if all_u is not None:
                blocks = [np.zeros((1, o._data.size), dtype=o._data.dtype) for o in float_outs]
                tan._data[...] = all_u[n].reshape(tan._data.shape)
                for b, r in zip(blocks, run()):
                    if r is not None:
                        b[0] = r
                tan._data[...] = 0
            else:
                blocks = [np.zeros((tan._data.size, o._data.size), dtype=o._data.dtype)
                          for o in float_outs]
                for row in range(tan._data.size):
                    where = np.unravel_index(row, tan._data.shape)
                    tan._data[where] = 1
                    for b, r in zip(blocks, run()):
                        if r is not None:
                            b[row] = r
                    tan._data[where] = 0
            jacs.append(blocks)
    return jacs


# ----------------------------------------------------------------------------------
# comparing, and the failure message


def _allclose(a, n, rtol, atol) -> bool:
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if a.shape != n.shape:
        return False
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _fmt(arr) -> str:
    return repr(_wrap(arr))


def _worst_element(a, n, rtol, atol, in_shape, out_shape) -> str:
    """A sentence naming the element of the Jacobian that misses the tolerance the most."""
    a64 = np.asarray(a, dtype=np.float64)
    n64 = np.asarray(n, dtype=np.float64)
    diff = np.abs(a64 - n64)
    tol = atol + rtol * np.abs(n64)
    with np.errstate(invalid="ignore"):
        excess = np.where(np.isnan(diff), np.inf, diff - tol)
    r, c = np.unravel_index(int(np.argmax(excess)), a64.shape)
    ai, ni, di = a64[r, c], n64[r, c], diff[r, c]
    rel = di / abs(ni) if ni != 0 else float("inf") if di != 0 else 0.0
    in_el = tuple(int(k) for k in np.unravel_index(r, in_shape)) if in_shape else ()
    out_el = tuple(int(k) for k in np.unravel_index(c, out_shape)) if out_shape else ()
    return (f"The worst element is d output{list(out_el)} / d input{list(in_el)} (row {r}, "
            f"column {c} above): analytical {ai:.10g} vs numerical {ni:.10g}, difference "
            f"{di:.3g}, relative error {rel:.3g} (allowed: atol + rtol * |numerical| = "
            f"{tol[r, c]:.3g}).\nIf the analytical value is the wrong one, check the backward "
            "formula of the op(s) on that input; if the function is not differentiable there "
            "(relu/abs at 0, max with ties), move the input away from the kink; in float32 raise "
            "eps/atol or use float64 inputs.\n")


def _mismatch_msg(a, n, out_idx, in_idx, is_forward_ad=False) -> str:
    mode = "computed with forward mode " if is_forward_ad else ""
    return (f"Jacobian {mode}mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
            f"numerical:{n}\nanalytical:{a}\n")


# ----------------------------------------------------------------------------------
# slow mode: full Jacobians


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad=False) -> bool:
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, func_out, eps)
    numerical = _numerical_jacobian(func, inputs, func_out, eps)
    # numerical[i][j] (input i, float output j); keep the outputs that require grad
    float_outs = [o for o in func_out if _is_float(o)]
    keep = [j for j, o in enumerate(float_outs) if o.requires_grad]
    diff_idx = _diff_input_indices(inputs)
    if use_forward_ad:
        analytical = _forward_ad_jacobian(func, inputs, func_out, check_grad_dtypes)
        for oi, j in enumerate(keep):
            for i, k in enumerate(diff_idx):
                a, n = analytical[i][j], numerical[i][j]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(
                        _mismatch_msg(_fmt(a), _fmt(n), oi, i, True)
                        + _worst_element(a, n, rtol, atol, inputs[k].shape,
                                         float_outs[j].shape))
        return True
    for oi, o in enumerate(outputs):
        j = keep[oi]
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for i, k in enumerate(diff_idx):
            a, n = analytical[i], numerical[i][j]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(_fmt(a), _fmt(n), oi, i)
                                     + _worst_element(a, n, rtol, atol, inputs[k].shape,
                                                      o.shape))
    return True


def _check_no_differentiable_outputs(func, inputs, func_out, eps) -> bool:
    for blocks in _numerical_jacobian(func, inputs, func_out, eps):
        for b in blocks:
            if np.any(b != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


# ----------------------------------------------------------------------------------
# fast mode: compare v^T J u (backward) or J u (forward AD) for random u, v


def _rand_unit(n: int, dtype, gen) -> np.ndarray:

    v = rand(n, generator=gen, dtype=_tensor_dtype(dtype))._data
    nrm = np.sqrt(np.sum(v.astype(np.float64) ** 2))
    return (v / nrm).astype(dtype) if nrm > 0 else v


def _tensor_dtype(npdt):

    return FROM_NP[np.dtype(npdt)]


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, use_forward_ad=False) -> bool:

    gen = Generator()
    diff_idx = _diff_input_indices(inputs)
    all_u = [_rand_unit(inputs[k]._data.size, inputs[k]._data.dtype, gen) for k in diff_idx]
    all_v = None if use_forward_ad else [_rand_unit(o._data.size, o._data.dtype, gen)
                                         for o in outputs]
    func_out_t = _as_tuple(func_out)
    float_outs = [o for o in func_out_t if _is_float(o)]
    # numerical J u, one pass per input
    num_ju = []
    for k, u in zip(diff_idx, all_u):
        x = inputs[k]
        cols = _numerical_jvp(func, inputs, x, (u * eps).reshape(x._data.shape), eps)
        num_ju.append([c for c in cols if c is not None])
    if not use_forward_ad and not outputs:
        for cols in num_ju:
            for c in cols:
                if c.size and float(np.abs(c).max()) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    if use_forward_ad:
        ana = _forward_ad_jacobian(func, inputs, func_out, check_grad_dtypes, all_u=all_u)
        for i in range(len(diff_idx)):
            for j in range(len(float_outs)):
                a = ana[i][j].reshape(-1)
                n = num_ju[i][j]
                tol = atol * float(all_u[i].sum())
                if not _allclose(a, n, rtol, tol):
                    raise GradcheckError(
                        _mismatch_msg(_fmt(a), _fmt(n), j, i, True)
                        + _slow_mode_details(func, inputs, func_out, i, j, rtol, atol, eps,
                                             True))
        return True
    keep = [j for j, o in enumerate(float_outs) if o.requires_grad]
    for oi, (o, v) in enumerate(zip(outputs, all_v)):
        vj = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes, v=v)
        for i, u in enumerate(all_u):
            a = float(np.dot(vj[i][:, 0].astype(np.float64), u.astype(np.float64)))
            n = float(np.dot(v.astype(np.float64), num_ju[i][keep[oi]].astype(np.float64)))
            tol = atol * float(u.sum()) * float(v.sum())
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(
                    _mismatch_msg(repr(a), repr(n), oi, i)
                    + _slow_mode_details(func, inputs, func_out, i, oi, rtol, atol, eps, False))
    return True


def _slow_mode_details(func, inputs, func_out, i, j, rtol, atol, eps, is_forward_ad) -> str:
    numerical = _numerical_jacobian(func, inputs, func_out, eps)
    float_outs = [o for o in _as_tuple(func_out) if _is_float(o)]
    diff_idx = _diff_input_indices(inputs)
    if is_forward_ad:
        a = _forward_ad_jacobian(func, inputs, func_out)[i][j]
        n = numerical[i][j]
        out = float_outs[j]
    else:
        outs = _diff_outputs(func_out)
        keep = [jj for jj, o in enumerate(float_outs) if o.requires_grad]
        out = outs[j]
        a = _analytical_jacobian(inputs, out, float("inf"), False)[i]
        n = numerical[i][keep[j]]
    max_diff = float(np.abs(a.astype(np.float64) - n.astype(np.float64)).max()) if a.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "\nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
           "background \nabout fast mode. Below, we recompute numerical and analytical jacobians "
           f"in slow mode:\n\nNumerical:\n {_fmt(n)}\nAnalytical:\n{_fmt(a)}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if _allclose(a, n, rtol, atol):
        msg += ("\nFast gradcheck failed but element-wise differences are small. This means that "
                "the\ntest might've passed in slow_mode!\nCall gradcheck/gradgradcheck with "
                "`fast_mode=False` as a keyword argument.")
    else:
        msg += _worst_element(a, n, rtol, atol, inputs[diff_idx[i]].shape, out.shape)
    return msg


# ----------------------------------------------------------------------------------
# the extra checks PyTorch runs after the Jacobians


def _test_backward_mul_by_grad_output(outputs, inputs) -> bool:

    diff_inputs = [inputs[k] for k in _diff_input_indices(inputs)]
    gis = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs],
                        allow_unused=True)
    for gi, di in zip(gis, diff_inputs):
        if gi is None:
            continue
        if not bool(np.all(gi._data == 0)):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")
    return True


def _undefined_grad(t):
    """``t`` unchanged, but its backward sends an undefined (None) gradient upstream."""

    return _UndefinedGrad.apply(t)


def _test_undefined_backward_mode(func, outputs, inputs) -> bool:

    diff_inputs = [inputs[k] for k in _diff_input_indices(inputs)]

    def warn_bc():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this is "
            'true for you, you can call this function with "check_undefined_grad=False" to '
            "disable the feature", stacklevel=3)

    def check(outs) -> bool:
        try:
            gis = autograd_grad(outs, diff_inputs, [zeros_like(o) for o in outs],
                                allow_unused=True)
        except RuntimeError as e:
            warn_bc()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        for gi in gis:
            if gi is not None and not bool(np.all(gi._data == 0)):
                warn_bc()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"')
        return True

    T = _tensor_cls()
    to_check = [[_undefined_grad(o) for o in _diff_outputs(func(*inputs)) if isinstance(o, T)]]
    if len(to_check[0]) > 1:
        for k in range(len(outputs)):
            outs = _diff_outputs(func(*inputs))
            to_check.append([_undefined_grad(o) if i == k else o for i, o in enumerate(outs)])
    return all(check(outs) for outs in to_check)


def _test_undefined_forward_mode(func, outputs, inputs) -> bool:

    diff_idx = _diff_input_indices(inputs)
    with fwAD.dual_level():
        duals = list(inputs)
        for k in diff_idx:
            duals[k] = fwAD.make_dual(inputs[k].detach(), zeros_like(inputs[k]))
        for k in diff_idx:
            keep = duals[k]
            duals[k] = fwAD.make_dual(inputs[k].detach(), zeros_like(inputs[k]))
            out1 = [o for o in _as_tuple(func(*duals)) if _is_float(o)]
            duals[k] = inputs[k].detach()
            out2 = [o for o in _as_tuple(func(*duals)) if _is_float(o)]
            duals[k] = keep
            for idx, (o1, o2) in enumerate(zip(out1, out2)):
                r1 = fwAD.unpack_dual(o1).tangent
                r2 = fwAD.unpack_dual(o2).tangent
                if r1 is not None and r2 is not None and not _allclose(
                        r1._data, r2._data, 1e-5, 1e-8):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {idx} when input: "
                        f"{inputs[k]} has an undefined tangent value.  Got: {r1} but expected: "
                        f"{r2}")
    return True


def _test_batched_grad(inputs, output, output_idx) -> bool:
    """Batched vector-Jacobian products (``is_grads_batched=True``) equal one-at-a-time ones."""

    diff_inputs = [inputs[k] for k in _diff_input_indices(inputs)]
    grads = randn((2,) + tuple(output.shape), dtype=output.dtype)
    expected = [autograd_grad(output, diff_inputs, g, retain_graph=True, allow_unused=True)
                for g in grads.unbind(0)]
    try:
        batched = autograd_grad(output, diff_inputs, grads, retain_graph=True,
                                allow_unused=True, is_grads_batched=True)
    except RuntimeError as e:
        raise GradcheckError(
            f"While computing batched gradients, got: {e}\n\ngradcheck or gradgradcheck failed "
            "while testing batched gradient computation (check_batched_grad=True). Call "
            "gradcheck/gradgradcheck with `check_batched_grad=False` if this op's backward "
            "cannot be batched.") from e
    for i, b in enumerate(batched):
        for r in range(2):
            e = expected[r][i]
            if b is None and e is None:
                continue
            got = np.zeros(diff_inputs[i]._data.shape) if b is None else b._data[r]
            ref = np.zeros(diff_inputs[i]._data.shape) if e is None else e._data
            if not _allclose(got, ref, 1e-5, 1e-8):
                raise GradcheckError(
                    f"For output {output_idx} and input {i}:\n\nbatched grad (row {r}) "
                    f"{_fmt(got)} does not match the gradient computed one row at a time "
                    f"{_fmt(ref)}.\n\ngradcheck or gradgradcheck failed while testing batched "
                    "gradient computation. Call gradcheck/gradgradcheck with "
                    "`check_batched_grad=False` as a keyword argument.")
    return True


# ----------------------------------------------------------------------------------
# public API


def gradcheck(func: Callable, inputs: Tensor | Sequence[object], *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Check analytical gradients of ``func`` at ``inputs`` against finite differences.

    Every input with ``requires_grad=True`` is perturbed by ``±eps`` one element at a
    time (or along a random direction with ``fast_mode=True``); the central
    differences must match the gradients from backward (and from forward-mode AD
    with ``check_forward_ad=True``) within ``atol + rtol * |numerical|``. Returns
    True, or raises ``GradcheckError`` (returns False with ``raise_exception=False``).
    The defaults are meant for float64 inputs.

    Example:
        >>> import retrograd as torch
        >>> x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        >>> w = torch.randn(3, dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(lambda x, w: (x @ w).tanh(), (x, w), check_forward_ad=True)
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_batched_forward_grad:
        raise NotImplementedError(
            "retrograd: check_batched_forward_grad needs vmap over forward-mode AD, which "
            "retrograd does not have; call gradcheck with check_batched_forward_grad=False "
            "(check_forward_ad=True still checks every tangent one at a time).")
    if masked:
        raise NotImplementedError(
            "retrograd has no sparse tensors, so masked=True has no meaning here; leave it unset.")
    args = dict(func=func, inputs=inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                check_batched_grad=check_batched_grad, check_forward_ad=check_forward_ad,
                check_backward_ad=check_backward_ad, fast_mode=fast_mode)
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                      check_grad_dtypes, check_batched_grad, check_forward_ad,
                      check_backward_ad, fast_mode) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _diff_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    if check_backward_ad:
        check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
              nondet_tol)
    if check_forward_ad:
        check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
              nondet_tol, use_forward_ad=True)
        if check_undefined_grad:
            _test_undefined_forward_mode(func, outputs, tupled_inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def gradgradcheck(func: Callable, inputs: Tensor | Sequence[object],
                  grad_outputs: Tensor | Sequence[Tensor] | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of the function that computes ``func``'s
    vector-Jacobian product (with ``create_graph=True``) w.r.t. inputs and ``grad_outputs``.

    ``grad_outputs`` defaults to random tensors in [-1, 1) that require grad.

    Example:
        >>> import retrograd as torch
        >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradgradcheck(lambda x: (x ** 3).sum(), (x,))
        True
    """

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        # Note [gradgradcheck's grad_outputs]: drawn as PyTorch draws them, by
        # testing.make_tensor from the global generator (not a private one), so the random
        # numbers a program draws after the check are the ones it draws under PyTorch
        outs = _diff_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            make_tensor(tuple(o.shape),
                        dtype=o.dtype if o.is_floating_point() else _tensor_dtype(np.float64),
                        device="cpu", low=-1, high=1, requires_grad=True,
                        noncontiguous=gen_non_contig_grad_outputs)
            for o in outs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    T = _tensor_cls()
    diff_in = {i for i, x in enumerate(tupled_inputs) if isinstance(x, T) and x.requires_grad}
    diff_go = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        n_in = len(args) - num_outputs  # (PyTorch's args[:-n] drops everything when n == 0)
        input_args = tuple(x.requires_grad_() if i in diff_in else x
                           for i, x in enumerate(args[:n_in]))
        outputs = _diff_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_go else x
                    for i, x in enumerate(args[n_in:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_in)
        gis = autograd_grad(outputs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gis if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked or None)


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0):
    """Deprecated PyTorch helper: numerical Jacobians of ``fn(inputs)``'s first output.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.gradcheck import get_numerical_jacobian
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> get_numerical_jacobian(lambda xs: xs[0] * 3, (x,), eps=1e-6)[0].round(decimals=6)
        tensor([[3., 0.],
                [0., 3.]], dtype=torch.float64)
    """
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    tupled = _as_tuple(inputs)

    def fn_pack(*inps):
        return fn(inps)

    blocks = _numerical_jacobian(fn_pack, tupled, fn_pack(*tupled), eps)
    return tuple(_wrap(b[0]) for b in blocks)


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out: float = 1.0):
    """Deprecated PyTorch helper: (jacobians, reentrant, sizes_ok, types_ok) for ``output``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.gradcheck import get_analytical_jacobian
        >>> x = torch.ones(2, dtype=torch.float64, requires_grad=True)
        >>> get_analytical_jacobian((x,), x * 3)[0]
        (tensor([[3., 0.],
                [0., 3.]], dtype=torch.float64),)
    """
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    tupled = _as_tuple(inputs)
    diff_inputs = [tupled[k] for k in _diff_input_indices(tupled)]
    rows1 = _vjp_rows(output, diff_inputs)
    rows2 = _vjp_rows(output, diff_inputs)
    j1, sizes_ok, types_ok = _stack_rows(rows1, diff_inputs, output._data.size)
    j2, _, _ = _stack_rows(rows2, diff_inputs, output._data.size)
    reentrant = all(a.size == 0 or float(np.abs(a - b).max()) <= nondet_tol
                    for a, b in zip(j1, j2))
    return tuple(_wrap(b) for b in j1), reentrant, sizes_ok, types_ok
