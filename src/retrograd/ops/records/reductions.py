"""The derivative table of the reductions: sum, mean, var, std, prod, amax/amin, max/min of
all elements, median of all elements, logsumexp, cumsum/cumprod and vector_norm.
Same contract as ``ops/records/elementwise.py`` (Note [One table] in
``ops/records/table.py``): a NumPy forward kernel and derivative rules in Tensor ops.
``p = (axes or None, keepdim)`` for the reductions over dims.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    >>> x.sum(0).grad_fn.name()
    'SumBackward1'
"""

from __future__ import annotations

import math

import numpy as np

from ..._core.grad_mode import STATE
from ..._tensor.tensor import _make
from ..batch_rules import dim_at, reduction
from ..dispatch import view_apply
from ..jvp_rules import jvp_linear, jvp_reduction
from ..kernels import minmax
from ..kernels.cumulative import torch_cumulative
from ..kernels.sum import reduced_count as _count
from ..kernels.sum import sum_kernel
from ..kernels.var import var_kernel
from ..op import Op
from ..public import FP32
from .elementwise import _where
from .helpers import _bdims, arrays_suffice, ones_like_of, zeros_like_of
from .shape import _cat, expand

# Note [Batched rules]
# autograd.grad(..., is_grads_batched=True) runs the graph once with output
# gradients that carry one extra leading dim (STATE.batch == 1). Records marked
# ``batch_ok=True`` have rules that address dims from the right or offset them by
# STATE.batch, so the same rule serves both; the engine runs any other rule once per
# row. The flag is part of each record, next to its rules.


def _restore(g, n, i=0, saved=False):
    """Reshape a reduced gradient (or a ``saved`` reduced output, which never has batch
    dims) so it broadcasts against input i (keepdim shape)."""
    axes, keepdim = n._p[0], n._p[1]
    shape = n.input_shape(i)
    b = () if saved else _bdims(g)
    if keepdim or axes is None and g.ndim == len(shape) + len(b):
        return g
    if axes is None:
        return g.reshape(b + (1,) * len(shape))
    ks = list(shape)
    for ax in axes:
        ks[ax] = 1
    return g.reshape(b + tuple(ks))


def _expand_back(g, s, n):
    if n._p[0] is None and not STATE.batch and not n._p[1]:  # a full reduction: g is 0-d
        return view_apply(expand, g, n.input_shape(0))  # (a 0-d g expands to any shape)
    return _restore(g, n).expand(_bdims(g) + tuple(n.input_shape(0)))


_sum_fwd = sum_kernel  # (the summing records' kernel: ops/kernels/sum.py)


sum = Op("sum", _sum_fwd, (_expand_back,), jvp=jvp_linear, batch_ok=True, batch=reduction)


def _mean_fwd(a, p):
    axes, keepdim, dt = p
    return np.mean(a, axis=axes, keepdims=keepdim, dtype=dt)


mean = Op("mean", _mean_fwd, (lambda g, s, n: _expand_back(g, s, n)
                              / _count(n.input_shape(0), n._p[0]),), jvp=jvp_linear, batch_ok=True,
          batch=reduction)



# Note [var and std]: one node each (VarBackward0, StdBackward0), saving the input
# (std: and its result), as PyTorch: a later in-place write into the input is caught,
# and the rules are PyTorch's var_backward/std_backward point for point, singular
# points included (dof <= 0: nan where x equals the mean, inf elsewhere; std 0: zero).
_var_fwd = var_kernel  # (Note [var of equal values] in ops/kernels/var.py)


def _var_grad(g, x, n):
    axes, keepdim, c = n._p
    if x.ndim == 0 or axes is None:
        dof = x.numel() - c
        if dof <= 0:
            # torch.where of two numbers: the default dtype (float32), no gradient
            return g * _make(np.where((x == x.mean())._data, np.float32("nan"), np.float32("inf")))
        return (2.0 / dof) * g * (x - x.mean())
    if not keepdim and x.ndim > 1:
        for ax in axes:  # ascending: each lands where it was reduced
            g = g.unsqueeze(ax)
    dof = _count(x.shape, axes) - c
    return (2.0 / dof if dof else math.inf) * g * (x - x.mean(axes, keepdim=True))


var = Op("var", _var_fwd, (lambda g, s, n: _var_grad(g, s[0], n),), (0,), jvp=jvp_reduction,
         batch=reduction)
def _std_rule(g, s, n):
    with np.errstate(divide="ignore", invalid="ignore"):  # masked where std is 0 (PyTorch's
        return _var_grad(_where(s[1] == 0, 0.0, g / (s[1] * 2)), s[0], n)  # masked_fill)


std = Op("std", lambda a, p: np.sqrt(_var_fwd(a, p)), (_std_rule,), (0, "out"),
         jvp=jvp_reduction, batch=reduction)


def _prod_rule(g, s, n):
    # PyTorch's prod_backward: g itself for a 0-d input, g * (result / input) without zeros
    a, out = s
    if a.ndim == 0:
        return g
    axes = n._p[0]
    gk, ok = _restore(g, n), _restore(out, n, saved=True)
    if not bool((a == 0).any()):
        return gk * (ok / a)
    # zeros present: product of the others, by exclusive cumulative products per axis;
    # g itself over one element (PyTorch's prod_safe_zeros_backward: no graph through a)
    if (a.numel() if axes is None else a.shape[axes[0]]) == 1:
        return gk
    if axes is None and not STATE.enabled and int((a == 0).sum()) > 1:
        return zeros_like_of(a)  # PyTorch's shortcut (no create_graph): zeros, even for a nan g
    if axes is None:
        flat = a.reshape(-1)
        others = _prod_others(flat, 0).reshape(a.shape)
    else:
        (ax,) = axes
        others = _prod_others(a, ax)
    return gk * others


def _prod_others(a, dim):
    n = a.shape[dim]
    ones = ones_like_of(a.narrow(dim, 0, 1))
    left = _cat([ones, a.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = _cat([a.narrow(dim, 1, n - 1), ones], dim).flip(dim).cumprod(dim).flip(dim)
    return left * right


def _prod_fwd(a, p):
    axes, keepdim, dt = p
    return np.prod(a, axis=axes, keepdims=keepdim, dtype=dt)


prod = Op("prod", _prod_fwd, (_prod_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          autocast=FP32, batch=reduction)
# sum/mean/prod over given dims: PyTorch's dim_IntList overloads, the same kernels and
# rules under the node names PyTorch gives them (SumBackward1, MeanBackward1, ProdBackward1)
sum_dims = Op("sum", _sum_fwd, sum.vjp, node_name="SumBackward1", jvp=jvp_linear, batch_ok=True,
              batch=reduction)
mean_dims = Op("mean", _mean_fwd, mean.vjp, node_name="MeanBackward1", jvp=jvp_linear,
               batch_ok=True, batch=reduction)
prod_dims = Op("prod", _prod_fwd, prod.vjp, prod.save, node_name="ProdBackward1",
               jvp=jvp_reduction, batch_ok=True, autocast=FP32, batch=reduction)


def _amax_rule(g, s, n):
    a, out = s
    mask = a == _restore(out, n, saved=True)
    cnt = mask.sum(dim=n._p[0], keepdim=True) if n._p[0] is not None else mask.sum()
    return (_restore(g, n) / cnt) * mask


def _amax_fwd(a, p):
    return minmax.reduce_ties(a, p[0], np.amax(a, axis=p[0], keepdims=p[1]), True)


def _amin_fwd(a, p):
    return minmax.reduce_ties(a, p[0], np.amin(a, axis=p[0], keepdims=p[1]), False)


def _max_all_fwd(a, p):  # Note [Signed zeros on ties]: vec::reduce_all's order
    return minmax.reduce_all_ties(a, np.amax(a, axis=p[0], keepdims=p[1]), True)


def _min_all_fwd(a, p):
    return minmax.reduce_all_ties(a, np.amin(a, axis=p[0], keepdims=p[1]), False)


amax = Op("amax", _amax_fwd, (_amax_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          batch=reduction)
amin = Op("amin", _amin_fwd, (_amax_rule,), (0, "out"), jvp=jvp_reduction, batch_ok=True,
          batch=reduction)
def _evenly_rule(g, s, n):
    # PyTorch's evenly_distribute_backward (max(), min(), median() of all elements): g
    # shared by the elements equal to the result (the nans, for a nan result) and written
    # into zeros, so a nan g reaches those elements only (not nan * 0 everywhere)
    a, out = s
    mask = a.isnan() if bool(out.isnan()) else a == out
    return _where(mask, g / mask.sum(), 0.0)


max_all = Op("max_all", _max_all_fwd, (_evenly_rule,), (0, "out"), node_name="MaxBackward1",
             jvp=jvp_reduction, batch_ok=True)
min_all = Op("min_all", _min_all_fwd, (_evenly_rule,), (0, "out"), node_name="MinBackward1",
             jvp=jvp_reduction, batch_ok=True)


def _median_all_fwd(a, p):
    # the lower median of all elements; nan if any element is nan (PyTorch)
    flat = a.reshape(-1)
    if flat.size == 0 or np.isnan(flat).any():
        with np.errstate(invalid="ignore"):  # an empty integer tensor: nan cast, as torch
            return np.array(np.nan).astype(a.dtype)
    return np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])


# torch.median() with no dim: the gradient is spread evenly over the elements equal to the
# median (median(dim) picks one index and has its own rule, in take_ops)
median_all = Op("median_all", _median_all_fwd, (_evenly_rule,), (0, "out"),
                node_name="MedianBackward0", jvp=jvp_reduction)


def _logsumexp_fwd(a, p):
    axes, keepdim = p[0], p[1]
    if a.size == 0:  # PyTorch: the log of an empty sum, -inf (NumPy's amax has no identity)
        m = np.zeros([1 if axes is None or d in axes else k for d, k in enumerate(a.shape)],
                     a.dtype)
    else:
        m = np.amax(a, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=axes)
    return r.astype(a.dtype, copy=False)


# own entry for numerical stability (max-shifted), see Note [One table]
logsumexp = Op("logsumexp", _logsumexp_fwd,
               (lambda g, s, n: _restore(g, n) * (s[0] - _restore(s[1], n, saved=True)).exp(),),
               (0, "out"), jvp=jvp_reduction, batch_ok=True, batch=reduction)


def _cumsum_fwd(a, p):
    return torch_cumulative(np.cumsum, a, p[0], p[1])


cumsum = Op("cumsum", _cumsum_fwd, (lambda g, s, n: g if not len(n.input_shape(0)) else
                                    g.flip(n._p[0]).cumsum(n._p[0]).flip(n._p[0]),), jvp=jvp_linear,
            batch=dim_at(0))


def _cumprod_rule(g, s, n):
    # PyTorch's cumprod_backward, both algorithms, so that values (signed zeros too)
    # match: with zeros in the input, an O(n) one when no graph is built, else the
    # O(n^2) one whose derivative is cumprod's second derivative
    a, out = s
    dim = n._p[0]
    if a.numel() <= 1 or a.shape[dim] == 1:
        return g
    size = a.shape[dim]
    w = out * g
    if not bool((a == 0).any()):
        return w.flip(dim).cumsum(dim).flip(dim) / a
    if arrays_suffice():
        return _make(_cumprod_grad_zeros(g._data, a._data, out._data, dim))
    # prod_{i <= j, i != k} a_i = prod(a[:k]) * cumprod(a[k+1:j+1]), one k at a time
    cols = []
    for k in range(size):
        if k == 0:
            omitted = _cat([ones_like_of(a.narrow(dim, 0, 1)),
                            a.narrow(dim, 1, size - 1).cumprod(dim)], dim)
        else:
            until = a.narrow(dim, 0, k).prod(dim, keepdim=True)
            if k == size - 1:
                omitted = until
            else:
                after = a.narrow(dim, k + 1, size - k - 1).cumprod(dim)
                omitted = _cat([until, until.expand_as(after) * after], dim)
        cols.append((g.narrow(dim, k, size - k) * omitted).sum(dim, keepdim=True))
    return _cat(cols, dim)


def _cumprod_grad_zeros(g, a, out, dim):
    """PyTorch's O(n) cumprod gradient for an input with zeros (no graph): before the
    first zero of a slice, reversed_cumsum(out * g) / a; at the first zero, the products
    after it up to the second zero; after it, zero."""
    def rcumsum(x):
        return np.flip(torch_cumulative(np.cumsum, np.flip(x, dim), dim), dim)

    grad = np.zeros(a.shape, g.dtype)
    cs = np.cumsum(a == 0, axis=dim)
    before = cs == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        part = rcumsum(np.where(before, out * g, 0)).astype(g.dtype) / a
    grad[before] = part[before]
    between = cs == 1
    first = np.argmax(between, axis=dim, keepdims=True)
    first_mask = np.zeros(a.shape, bool)
    np.put_along_axis(first_mask, first, True, axis=dim)
    first_mask &= between
    between &= ~first_mask
    prods = torch_cumulative(np.cumprod, np.where(between, a, 1).astype(a.dtype), dim)
    tail = (prods * np.where(cs != 1, 0, g)).sum(axis=dim, keepdims=True, dtype=g.dtype)
    lead = np.take_along_axis(out, np.maximum(first - 1, 0), axis=dim)
    lead = np.where(first == 0, 1, lead).astype(g.dtype)
    grad[first_mask] = np.broadcast_to(tail * lead, a.shape)[first_mask]
    return grad


def _cumprod_fwd(a, p):
    return torch_cumulative(np.cumprod, a, p[0], p[1])


def _cumprod_jvp(t, s, n, out):
    a = s[0]
    ta = t[0].to(out.dtype) if t[0].dtype != out.dtype else t[0]
    if a.ndim == 0:
        return ta
    dim = n._p[0]
    if not bool((a == 0).any()):
        return out * (ta / a).cumsum(dim)
    # zeros present: out'_i = sum_{j <= i} t_j prod_{k <= i, k != j} a_k, one cumprod per j
    size = a.shape[dim]
    pos = _make(np.arange(size)).reshape([size if d == dim else 1 for d in range(a.ndim)])
    res = None
    for j in range(size):
        term = _where(pos >= j, _where(pos == j, ta, a).cumprod(dim), 0.0)
        res = term if res is None else res + term
    return res


cumprod = Op("cumprod", _cumprod_fwd, (_cumprod_rule,), (0, "out"), jvp=_cumprod_jvp,
             batch=dim_at(0))


def _norm_rule(g, s, n):
    a, out = s
    return norm_backward(_restore(g, n), a, _restore(out, n, saved=True), n._p[2], n._p[0])


def norm_backward(gk, a, ok, ordv, dims):
    """PyTorch's norm_backward: the gradient ``gk`` of the ``ordv``-norm ``ok`` of ``a`` over
    ``dims`` (None: all), both kept broadcastable against ``a`` (vector_norm, renorm)."""
    # case by case: the masks sit where PyTorch puts them, so the first derivative at a
    # zero norm is 0 and the second is nan (0/0 behind the mask)
    if ordv == 2:
        with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 behind the mask, silent
            q = a / ok                                         # as PyTorch's masked_fill_
        return gk * _where(ok == 0, 0.0, q)
    if ordv == 1:
        return gk * a.sign()
    if ordv == 0:
        return None  # PyTorch leaves it undefined (grad None), not zeros
    if ordv == float("inf") or ordv == float("-inf"):
        aa = a.abs()
        mask = (aa == ok) | aa.isnan()
        cnt = mask.sum(dim=dims, keepdim=True) if dims is not None else mask.sum()
        return a.sign() * ((gk / cnt) * mask)
    if ordv < 1:
        scaled = a.sign() * _where(a == 0, 0.0, a.abs().pow(ordv - 1))
        return scaled * gk * ok.pow(1 - ordv)
    scaled = a.sign() * a.abs().pow(ordv - 1) if ordv < 2 else a * a.abs().pow(ordv - 2)
    with np.errstate(divide="ignore", invalid="ignore"):  # (as above)
        q = gk / ok.pow(ordv - 1)
    return scaled * _where(ok == 0, 0.0, q)


def _norm_fwd(a, p):
    axes, keepdim, ordv, dt = p
    out_dt = a.dtype if dt is None else np.dtype(dt)  # float16/bfloat16 sum in float32 (opmath)
    x = np.abs(a).astype(np.float32 if out_dt.itemsize == 2 else out_dt, copy=False)
    if ordv == 2:
        r = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    elif ordv == float("inf"):
        r = np.amax(x, axis=axes, keepdims=keepdim)
    elif ordv == float("-inf"):
        r = np.amin(x, axis=axes, keepdims=keepdim)
    elif ordv == 0:
        r = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif ordv == 1:
        r = np.sum(x, axis=axes, keepdims=keepdim)
    else:
        r = np.power(np.sum(np.power(x, ordv), axis=axes, keepdims=keepdim), 1.0 / ordv)
    return np.asarray(r).astype(out_dt, copy=False)


# own entry: the p=2 rule masks norm == 0 to a zero gradient instead of 0/0 (PyTorch)
vector_norm = Op("vector_norm", _norm_fwd, (_norm_rule,), (0, "out"),
                 node_name="LinalgVectorNormBackward0", jvp=jvp_reduction, batch_ok=True,
                 batch=reduction)
