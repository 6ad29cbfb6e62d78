"""A small central-difference gradient checker for the nn tests (float64).

``gradcheck(fn, wrt)`` compares the analytic vector-Jacobian product vᵀJ of ``fn()``
(one ``autograd.grad`` call with a fixed random v per output) with the numerical one,
built element by element from central differences of <fn(), v>. The tensors in ``wrt``
(inputs and module parameters alike) are perturbed in place, so ``fn`` simply closes
over them. ``gradgradcheck(fn, wrt)`` runs the same check on the scalar
h = sum_i <grad_i, u_i>, where grad_i are the first gradients taken with
``create_graph=True``: it checks every second derivative that reaches ``wrt``.
"""

from __future__ import annotations

import numpy as np

import retrograd as R


def _outs(out) -> list:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_outs(o))
        return res
    return [out]


def _float_outs(out) -> list:
    return [o for o in _outs(out) if isinstance(o, R.Tensor) and o.dtype.is_floating_point]


def _check(fn_scalar, analytic, wrt, eps, atol, rtol, what):
    for k, t in enumerate(wrt):
        num = np.zeros(t.shape, dtype=np.float64)
        flat = t._data.reshape(-1)
        nflat = num.reshape(-1)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + eps
            fp = fn_scalar()
            flat[j] = old - eps
            fm = fn_scalar()
            flat[j] = old
            nflat[j] = (fp - fm) / (2 * eps)
        a = analytic[k]
        a = np.zeros_like(num) if a is None else a._data.astype(np.float64)
        if not np.allclose(a, num, atol=atol, rtol=rtol):
            raise AssertionError(
                f"{what}: analytic and numerical gradients differ for wrt[{k}] of shape "
                f"{tuple(t.shape)}\nanalytic:\n{a}\nnumerical:\n{num}\nmax abs diff "
                f"{np.abs(a - num).max()}")
    return True


def gradcheck(fn, wrt, eps: float = 1e-6, atol: float = 1e-6, rtol: float = 1e-5,
              seed: int = 0) -> bool:
    """Check first derivatives of ``fn()`` with respect to the tensors in ``wrt``."""
    rng = np.random.default_rng(seed)
    outs = _float_outs(fn())
    vs = [rng.standard_normal(o.shape) for o in outs]
    vts = [R.tensor(v, dtype=o.dtype) for v, o in zip(vs, outs)]
    diff = [(o, v) for o, v in zip(outs, vts) if o.requires_grad]
    if diff:
        analytic = R.autograd.grad([o for o, _ in diff], wrt, [v for _, v in diff],
                                   allow_unused=True)
    else:
        analytic = [None] * len(wrt)

    def scalar():
        with R.no_grad():
            os_ = _float_outs(fn())
            return float(sum(np.sum(o._data.astype(np.float64) * v) for o, v in zip(os_, vs)))

    return _check(scalar, analytic, wrt, eps, atol, rtol, "gradcheck")


def gradgradcheck(fn, wrt, eps: float = 1e-6, atol: float = 1e-6, rtol: float = 1e-5,
                  seed: int = 1) -> bool:
    """Check second derivatives: the gradient of sum_i <dL/dwrt_i, u_i> with
    L = <fn(), v>, against central differences of that scalar."""
    rng = np.random.default_rng(seed)
    outs0 = _float_outs(fn())
    vs = [R.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs0]
    us = [R.tensor(rng.standard_normal(t.shape), dtype=t.dtype) for t in wrt]

    def h(create_graph: bool):
        outs = _float_outs(fn())
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if not pairs:
            return None
        grads = R.autograd.grad([o for o, _ in pairs], wrt, [v for _, v in pairs],
                                create_graph=True, allow_unused=True)
        total = None
        for g, u in zip(grads, us):
            if g is None:
                continue
            term = (g * u).sum()
            total = term if total is None else total + term
        return total

    hv = h(True)
    if hv is None or not hv.requires_grad:
        analytic = [None] * len(wrt)
    else:
        analytic = R.autograd.grad(hv, wrt, allow_unused=True)

    def scalar():
        r = h(False)
        return 0.0 if r is None else float(r.item())

    return _check(scalar, analytic, wrt, eps, atol, rtol, "gradgradcheck")
