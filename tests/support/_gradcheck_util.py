"""A small central-difference gradient checker for the tests (float64).

``gradcheck(fn, inputs)`` compares the analytic vector-Jacobian product vᵀJ (one
``autograd.grad`` call with a random v) with the numerical one, built column by column
from central differences: for each input element j, (f(x + eps e_j) - f(x - eps e_j)) / 2eps
dotted with v. ``gradgradcheck`` runs the same check on the function that returns
the first gradients (with ``create_graph=True``), differentiated with respect to
both the inputs and v, as PyTorch's gradgradcheck does.

Every floating output of ``fn`` counts (also outputs that do not require grad: a
missing derivative shows up as an analytic zero against a numerical non-zero).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    >>> gradcheck(lambda t: t.sin() * t, [x])
    True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import retrograd as R

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(AssertionError):
    """The analytic and numerical gradients disagree."""


def _outputs(out) -> list:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_outputs(o))
        return res
    return [out]


def _floating(outs) -> list:
    return [i for i, o in enumerate(outs)
            if isinstance(o, R.Tensor) and o.dtype.is_floating_point]


def _evaluate(fn, arrays, rgs, pick) -> list:
    ins = []
    for a, rg in zip(arrays, rgs):
        t = R.tensor(a)
        if rg:
            t.requires_grad_(True)
        ins.append(t)
    outs = _outputs(fn(*ins))
    return [outs[i].detach().numpy().astype(np.float64) if outs[i] is not None else None
            for i in pick]


def gradcheck(fn: Callable, inputs: list, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-4, seed: int = 0) -> bool:
    """Check d fn / d inputs numerically; raise ``GradcheckError`` on a mismatch.

    ``inputs``: float64 retrograd tensors that require grad. ``fn(*inputs)`` returns
    a tensor or a (nested) tuple of tensors.
    """
    rng = np.random.default_rng(seed)
    for t in inputs:
        if t.dtype != R.float64:
            raise TypeError("gradcheck needs float64 inputs")
    outs = _outputs(fn(*inputs))
    pick = _floating(outs)
    fouts = [outs[i] for i in pick]
    vs = [rng.standard_normal(tuple(o.shape)) for o in fouts]
    # analytic vᵀJ
    diff = [(o, v) for o, v in zip(fouts, vs) if o.requires_grad]
    if diff:
        analytic = R.autograd.grad([o for o, _ in diff],
                                   [x for x in inputs],
                                   [R.tensor(v, dtype=o.dtype) for o, v in diff],
                                   allow_unused=True)
    else:
        analytic = [None] * len(inputs)
    analytic = [np.zeros(tuple(x.shape)) if g is None else g.detach().numpy().astype(np.float64)
                for g, x in zip(analytic, inputs)]
    # numerical vᵀJ, one input element at a time
    arrays = [x.detach().numpy().copy() for x in inputs]
    rgs = [x.requires_grad for x in inputs]
    for k, x in enumerate(arrays):
        num = np.zeros(x.shape)
        flat = x.reshape(-1)
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            fp = _evaluate(fn, arrays, rgs, pick)
            flat[j] = orig - eps
            fm = _evaluate(fn, arrays, rgs, pick)
            flat[j] = orig
            d = 0.0
            for a, b, v in zip(fp, fm, vs):
                if a is None:
                    continue
                d += float(np.sum((a - b) * v)) / (2 * eps)
            num.reshape(-1)[j] = d
        if not np.allclose(analytic[k], num, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(analytic[k] - num)) if num.size else 0.0
            raise GradcheckError(
                f"Jacobian mismatch for input {k} (shape {x.shape}), max abs error {err:.3g}:\n"
                f"analytic vᵀJ:\n{analytic[k]}\nnumerical vᵀJ:\n{num}")
    return True


def gradgradcheck(fn: Callable, inputs: list, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-4, seed: int = 0) -> bool:
    """Check the second derivatives of ``fn`` (through ``create_graph=True``) numerically."""
    rng = np.random.default_rng(seed + 1)
    outs = _outputs(fn(*inputs))
    pick = [i for i in _floating(outs) if outs[i].requires_grad]
    if not pick:
        return True
    vs = [R.tensor(rng.standard_normal(tuple(outs[i].shape)), dtype=R.float64,
                   requires_grad=True) for i in pick]
    n = len(inputs)

    def first(*xs_and_vs):
        xs, gvs = xs_and_vs[:n], xs_and_vs[n:]
        os_ = _outputs(fn(*xs))
        os_ = [os_[i] for i in pick]
        keep = [(o, v) for o, v in zip(os_, gvs) if o.requires_grad]
        if not keep:
            return tuple(R.zeros_like(x) for x in xs)
        gs = R.autograd.grad([o for o, _ in keep], list(xs), [v for _, v in keep],
                             create_graph=True, allow_unused=True)
        return tuple(R.zeros_like(x) if g is None else g for g, x in zip(gs, xs))

    return gradcheck(first, list(inputs) + vs, eps=eps, atol=atol, rtol=rtol, seed=seed + 2)
