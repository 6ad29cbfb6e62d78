"""Records of the scans and scatter-reductions: ``cummax``/``cummin``, ``logcumsumexp``,
``scatter_reduce``, ``index_reduce``, ``masked_scatter``, ``put`` and ``nanmedian``, one
rule per input in Tensor ops (PyTorch's derivatives.yaml formulas), so second
derivatives come from the rules themselves. The public functions are in ``_functions/scans.py``,
``_functions/scatter_reduce.py`` and ``_functions/statistics.py``.

Note [Scan records outside the table]
``ops/records/table.py`` does not gather these records: this module's ``scatter_reduce``
(the record with ``include_self``) would shadow ``shape.py``'s record of the same name under
``T``. Their public functions import this module directly (alias ``TSC``), as
``_functions/special.py`` does ``ops/records/special.py``. Each record has its ``jvp=``
all the same.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([1., 3., 2.], requires_grad=True)
    >>> torch.cummax(x, 0).values.grad_fn.name()
    'CummaxBackward0'
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import STATE
from ..._tensor.tensor import _make
from ..dispatch import apply
from ..jvp_rules import jvp_by_double_vjp, jvp_elementwise, jvp_linear, jvp_reduction
from ..op import _LOW, Op
from .elementwise import _where, _where0
from .helpers import _no_derivative, _no_forward_ad, rule_zeros
from .reductions import _evenly_rule, _norm_fwd, norm_backward, vector_norm
from .shape import _gather_grid, _take_fwd, _value_at_index_rule

# ---------------------------------------------------------------------------------
# cummax / cummin: the values at indices the public function found (p = (dim, indices))


def _at_indices_fwd(a, p):
    if a.ndim == 0:
        return a.copy()
    return np.take_along_axis(a, p[1]._data, axis=p[0])


def _cummaxmin_rule(g, s, n):
    # PyTorch's cummaxmin_backward: g added into zeros at the indices (repeated ones sum)
    if not len(n.input_shape(0)):
        return g
    return rule_zeros(n.input_shape(0), g._data.dtype).scatter_add(n._p[0], s[0], g)


def _cummaxmin_jvp(t, s, n, out):
    return t[0].clone() if t[0].ndim == 0 else t[0].gather(n._p[0], s[0])


cummax = Op("cummax", _at_indices_fwd, (_cummaxmin_rule,), ("p1",), jvp=_cummaxmin_jvp)
cummin = Op("cummin", _at_indices_fwd, (_cummaxmin_rule,), ("p1",), jvp=_cummaxmin_jvp)


# ---------------------------------------------------------------------------------
# logcumsumexp (p = (dim,))


def _logcumsumexp_fwd(a, p):
    if a.ndim == 0:
        return a.copy()
    x = a.astype(np.float32) if a.dtype in _LOW else a
    return np.logaddexp.accumulate(x, axis=p[0]).astype(a.dtype, copy=False)


def _rev_logcumsumexp(x, dim):
    return apply(logcumsumexp, (x.flip(dim),), (dim,)).flip(dim)


def _logcumsumexp_rule(g, s, n):
    # PyTorch's logcumsumexp_backward: the positive and negative parts of g go through
    # reversed logcumsumexps in log space (no exp of a large result)
    a, out = s
    if a.ndim == 0:
        return g
    dim = n._p[0]
    lowest = float(np.finfo(g._data.dtype).min) if g._data.dtype.kind == "f" else -3.4e38
    log_abs = g.abs().log()
    pos = _where(g > 0, log_abs, lowest)
    neg = _where(g < 0, log_abs, lowest)
    return ((_rev_logcumsumexp(pos - out, dim) + a).exp()
            - (_rev_logcumsumexp(neg - out, dim) + a).exp())


def _logcumsumexp_jvp(t, s, n, out):
    a = s[0]
    if a.ndim == 0:
        return t[0].clone()
    dim = n._p[0]
    e = (a - a.amax(dim, True)).exp() if a.numel() else a.exp()
    return (e * t[0]).cumsum(dim) / e.cumsum(dim)


logcumsumexp = Op("logcumsumexp", _logcumsumexp_fwd, (_logcumsumexp_rule,), (0, "out"),
                  jvp=_logcumsumexp_jvp)


# ---------------------------------------------------------------------------------
# scatter_reduce.two and index_reduce: p = (dim, reduce, include_self); index_reduce's
# 1-D index is expanded to the source's shape and shares scatter_reduce's kernel and rules

_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
          "amin": np.minimum}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    if dtype.kind == "b":
        return reduce == "amin"
    return -big if reduce == "amax" else big


def scatter_reduce_kernel(a, idx, src, dim: int, reduce: str, include_self: bool):
    """``a`` with ``src`` reduced into it at ``idx`` along ``dim`` (NumPy arrays).

    Example:
        >>> import numpy as np
        >>> scatter_reduce_kernel(np.ones(3), np.array([0, 0]), np.array([2., 3.]), 0,
        ...                       "prod", True)
        array([6., 1., 1.])
    """
    out = a.copy()
    if a.ndim == 0:
        out = out.reshape(1)
        idx, src = idx.reshape(-1), np.asarray(src).reshape(-1)
    if idx.size == 0:
        return out.reshape(a.shape)
    src = src[tuple(slice(0, k) for k in idx.shape)]
    grid = tuple(np.broadcast_arrays(*_gather_grid(idx, dim)))
    if not include_self:
        out[grid] = _identity(reduce, a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        _UFUNC[reduce].at(out, grid, src)
        if reduce == "mean":
            count = np.zeros(out.shape, np.int64)
            if include_self:
                count += 1
            np.add.at(count, grid, 1)
            count = np.maximum(count, 1)
            if out.dtype.kind == "f":
                out = (out / count).astype(a.dtype)
            else:
                out = np.floor_divide(out, count).astype(a.dtype)
    return out.reshape(a.shape)


def _scatter_reduce_fwd(a, idx, src, p):
    return scatter_reduce_kernel(a, idx, src, *p)


def _index_reduce_full(index, dim, src_shape):
    """index_reduce's 1-D ``index`` as scatter_reduce's index of the source's shape."""
    shape = [1] * len(src_shape)
    if shape:
        shape[dim] = -1
    return np.ascontiguousarray(np.broadcast_to(np.reshape(index, shape), src_shape))


def _index_reduce_fwd(a, idx, src, p):
    return scatter_reduce_kernel(a, _index_reduce_full(idx, p[0], src.shape), src, *p)


def _raise_error_node(g, s, n):
    raise RuntimeError(n._p)


# PyTorch's Error node: a gradient computed with create_graph=True whose own derivative is
# not (p = the message its backward raises)
double_backward_error = Op("double_backward_error", lambda a, p: a.copy(), (_raise_error_node,),
                           node_name="torch::autograd::Error",
                           jvp=lambda t, s, n, out: _raise_error_node(t, s, n))
_TWO_ZEROS = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
              "are scattered to the same position in self (the second derivative of a "
              "product with two zero factors is not computed: differentiate once)")


def _scatter_reduce_grads(g, a, idx, src, out, p, needs):
    """PyTorch's scatter_reduce_backward (index ``idx`` of the source's shape)."""
    dim, reduce, include_self = p
    gs = gsrc = None
    if reduce == "sum":
        gs, gsrc = g, g.gather(dim, idx)
    elif reduce == "prod":
        masked_self = a.masked_fill(a == 0, 1)
        gs = g * apply(scatter_reduce, (masked_self, idx, src), p) / masked_self
        if needs[2]:
            src_zero = src == 0
            zeros = rule_zeros(tuple(a.shape), a._data.dtype)
            nzeros = zeros.scatter_add(dim, idx, src_zero.to(a.dtype)).gather(dim, idx)
            single = src_zero & (nzeros == 1)
            masked_src_result = apply(scatter_reduce, (a, idx, src.masked_fill(single, 1)), p)
            gsrc = _where(single, (g * masked_src_result).gather(dim, idx),
                          (g * out).gather(dim, idx) / src.masked_fill(src_zero, 1))
            if STATE.enabled and bool((nzeros > 1).any()):
                gsrc = apply(double_backward_error, (gsrc,), _TWO_ZEROS)
    elif reduce == "mean":
        count = (_make(np.ones(tuple(g.shape), g._data.dtype)) if include_self
                 else rule_zeros(tuple(g.shape), g._data.dtype))
        count = count.scatter_add(dim, idx, _make(np.ones(tuple(idx.shape), g._data.dtype)))
        count = count.masked_fill(count == 0, 1)
        gs, gsrc = g / count, g.gather(dim, idx) / count.gather(dim, idx)
    else:  # amax / amin: g shared evenly by the elements equal to the result
        value = out.gather(dim, idx)
        self_is = (a == out).to(a.dtype)
        src_is = (src == value).to(a.dtype)
        share = g / self_is.scatter_add(dim, idx, src_is)
        gs = _where0(a == out, share)
        gsrc = _where0(src == value, share.gather(dim, idx))
    if not include_self and gs is not None:
        gs = gs.scatter(dim, idx, 0.0)
    return gs, gsrc


def _pad_src(t, shape):
    if tuple(t.shape) == tuple(shape):
        return t
    return rule_zeros(tuple(shape), t._data.dtype).index_put(
        tuple(slice(0, k) for k in t.shape), t)


def _scatter_reduce_vjp(g, s, n, needs):
    a, idx, src, out = s
    if needs[2] and tuple(idx.shape) != tuple(src.shape):
        raise RuntimeError(
            f"Function ScatterReduceBackward0 returned an invalid gradient at index 1 - got "
            f"{list(idx.shape)} but expected shape compatible with {list(src.shape)} (as in "
            "PyTorch, src's gradient has index's shape: pass src[:k] sliced to index's shape)")
    if a.ndim == 0:  # 0-d: the rules run on one-element vectors
        gs, gsrc = _scatter_reduce_grads(g.reshape(1), a.reshape(1), idx.reshape(1),
                                         src.reshape(1), out.reshape(1), n._p, needs)
        return [gs.reshape(()) if needs[0] else None, None,
                gsrc.reshape(()) if needs[2] else None]
    gs, gsrc = _scatter_reduce_grads(g, a, idx, src, out, n._p, needs)
    return [gs if needs[0] else None, None, gsrc if needs[2] else None]


def _index_reduce_vjp(g, s, n, needs):
    a, idx, src, out = s
    full = _make(_index_reduce_full(idx._data, n._p[0], tuple(src.shape)))
    gs, gsrc = _scatter_reduce_grads(g, a, full, src, out, n._p, needs)
    return [gs if needs[0] else None, None, gsrc if needs[2] else None]


def _reduce_jvp(t, s, n, out):
    # sum and mean are linear in (self, src); the other reductions take the JVP from the
    # rules above (Note [JVP rules])
    if n._p[1] in ("sum", "mean"):
        return jvp_linear(t, s, n, out)
    return jvp_by_double_vjp(t, s, n, out)


scatter_reduce = Op("scatter_reduce_two", _scatter_reduce_fwd, _scatter_reduce_vjp,
                    (0, 1, 2, "out"), nondiff=(1,), node_name="ScatterReduceBackward0",
                    jvp=_reduce_jvp)
index_reduce = Op("index_reduce", _index_reduce_fwd, _index_reduce_vjp, (0, 1, 2, "out"),
                  nondiff=(1,), jvp=_reduce_jvp)


# ---------------------------------------------------------------------------------
# masked_scatter (self and mask already broadcast) and put (p = (accumulate,))


def _masked_scatter_fwd(a, mask, src):
    out = a.copy()
    k = int(np.count_nonzero(mask))
    out[mask] = src.reshape(-1)[:k]
    return out


def _masked_scatter_src_rule(g, s, n):
    # PyTorch's masked_scatter_backward: the masked elements of g, in order, then zeros
    picked = g.masked_select(s[0])
    shape = n.input_shape(2)
    total = int(np.prod(shape))
    if total > picked.numel():
        picked = _pad_src(picked, (total,))
    return picked.reshape(shape)


masked_scatter = Op("masked_scatter", _masked_scatter_fwd,
                    (lambda g, s, n: g.masked_fill(s[0], 0), None, _masked_scatter_src_rule),
                    (1,), jvp=jvp_linear)


def _put_fwd(a, idx, src, p):
    out = np.ascontiguousarray(a).copy()
    flat = out.reshape(-1)
    if p[0]:
        np.add.at(flat, idx.reshape(-1), src.reshape(-1))
    else:
        flat[idx.reshape(-1)] = src.reshape(-1)
    return out


def _put_self_rule(g, s, n):
    if n._p[0]:
        return g
    return apply(put, (g, s[0], rule_zeros(tuple(s[0].shape), g._data.dtype)), n._p)


put = Op("put", _put_fwd, (_put_self_rule, None,
                           lambda g, s, n: g.take(s[0]).reshape(n.input_shape(2))),
         (1,), jvp=jvp_linear)


# ---------------------------------------------------------------------------------
# nanmedian: of all elements (gradient shared evenly, as median()'s), and along a dim
# (the values at the indices the public function picked, as median(dim))


def _nanmedian_all_fwd(a, p):  # p = (None, False): all dims, as median_all's
    v = a.reshape(-1)
    v = v[~np.isnan(v)] if v.dtype.kind == "f" else v
    if v.size == 0:  # nan; for integers, nan converted as the hardware does (PyTorch's)
        with np.errstate(invalid="ignore"):
            return np.asarray(np.nan).astype(a.dtype)
    return np.asarray(np.sort(v, kind="stable")[(v.size - 1) // 2], a.dtype)



def _kthvalue_fwd(a, p):  # p: (dim, keepdim, indices Tensor, already keepdim-shaped)
    return _take_fwd(a, p[2]._data, p[:2])


def _gather_at_indices_jvp(t, s, n, out):
    # PyTorch's gather_with_keepdimed_indices: the tangent at the chosen indices
    idx, (dim, keepdim) = s[0], n._p[:2]
    if t[0].ndim == 0:  # (a 1-D input's index is 0-d too: gathered below)
        return t[0].clone()
    full = idx if keepdim else idx.unsqueeze(dim)
    r = t[0].gather(dim, full)
    return r if keepdim else r.squeeze(dim)


# kthvalue(x, k, dim) and median(x, dim): the values at indices the kernel picked, saved
# as PyTorch saves them (its value_selecting_reduction_backward)
kthvalue = Op("kthvalue", _kthvalue_fwd, (_value_at_index_rule,), ("p2",),
              jvp=_gather_at_indices_jvp)
median_dim = Op("median_dim", _kthvalue_fwd, (_value_at_index_rule,), ("p2",),
                jvp=_gather_at_indices_jvp, node_name="MedianBackward1")


nanmedian_all = Op("nanmedian_all", _nanmedian_all_fwd, (_evenly_rule,), (0, "out"),
                   node_name="NanmedianBackward0", jvp=jvp_reduction)
nanmedian_dim = Op("nanmedian_dim", _kthvalue_fwd, (_value_at_index_rule,), ("p2",),
                   jvp=_gather_at_indices_jvp, node_name="NanmedianBackward1")


# ---------------------------------------------------------------------------------
# Note [Nodes without a derivative]
# unique, unique_consecutive, bincount (its weights) and histogram have no derivative in
# PyTorch, but a result computed from a tensor that requires grad still requires grad and
# has a node whose backward raises (Unique2Backward0 and co., or NotImplemented). The
# public functions compute these results with NumPy (_functions/counting.py) and pass them to the
# records below (p), whose forward hands them on: the records exist to give the result
# PyTorch's node.


def _computed(*args):
    """Forward of a record below: the result the public function computed (its ``p``)."""
    return args[-1]


def _underivable(name: str, node_name: str, torch_name: str) -> Op:
    """A record whose backward raises PyTorch's NotImplementedError for ``torch_name``."""
    def vjp(g, s, n, needs):
        raise NotImplementedError(
            f"the derivative for '{torch_name}' is not implemented. (as in PyTorch: compute "
            "it from a detached input, e.g. x.detach(), or differentiate the op you use "
            "its result in)")
    return Op(name, _computed, vjp, node_name=node_name,
              jvp=_no_forward_ad(torch_name, "It has no derivative in PyTorch either."))


def _not_implemented_n(name: str) -> Op:
    """PyTorch's NotImplemented node for ``aten::<name>`` with any number of inputs."""
    rule = _no_derivative(name, "It has no derivative in PyTorch either: detach() the input.")
    return Op(name, _computed, lambda g, s, n, needs: rule(g, s, n),
              node_name="torch::autograd::NotImplemented",
              jvp=_no_forward_ad(name, "It has no derivative in PyTorch either."))


unique2 = _underivable("unique2", "Unique2Backward0", "_unique2")
unique_dim = _underivable("unique_dim", "UniqueDimBackward0", "unique_dim")
unique_consecutive = _underivable("unique_consecutive", "UniqueConsecutiveBackward0",
                                  "unique_consecutive")
bincount = _not_implemented_n("bincount")
histogram = _not_implemented_n("histogram")
# histogramdd: the edges (one node for all dims) and the counts, as PyTorch's two ops
histogramdd_bin_edges = _not_implemented_n("_histogramdd_bin_edges")
histogramdd_counts = _not_implemented_n("_histogramdd_from_bin_cts")


# div.Scalar (DivBackward1): ``x / c`` of a Python number as PyTorch's C++ compositions
# call it (trapezoid's ``/ 2.``); Python's ``x / c`` is div.Tensor (DivBackward0). Its
# twin mul.Scalar is ``mul_scalar`` in ops/records/special.py.
div_scalar = Op("div", lambda a, c: a / a.dtype.type(c), (lambda g, s, n: g / n._p,),
                node_name="DivBackward1", jvp=jvp_elementwise)


# ---------------------------------------------------------------------------------
# renorm (p = (p, dim, maxnorm)): each slice along dim scaled down to norm maxnorm


def _renorm_dims(ndim: int, dim: int) -> tuple:
    return tuple(k for k in range(ndim) if k != dim)


def _renorm_fwd(a, p):
    ordv, dim, maxnorm = p
    norm = _norm_fwd(a, (_renorm_dims(a.ndim, dim), True, ordv, None))
    t = a.dtype.type
    with np.errstate(divide="ignore"):
        factor = np.where(norm > maxnorm, t(maxnorm) / (norm + t(1e-7)), t(1))
    return (a * factor.astype(a.dtype)).astype(a.dtype, copy=False)


def _renorm_rule(g, s, n):
    # PyTorch's renorm_backward: factor * g minus the norm's own gradient, where the
    # slice was scaled; g itself elsewhere
    a = s[0]
    ordv, dim, maxnorm = n._p
    dims = _renorm_dims(a.ndim, dim)
    norm = apply(vector_norm, (a,), (dims, True, ordv, None))
    nb = norm_backward((a * g).sum(dims, keepdim=True), a, norm, ordv, dims)
    inv = (norm + 1e-7).reciprocal()
    factor = inv * maxnorm
    return _where(norm > maxnorm, factor * g - (factor * inv) * nb, g)


renorm = Op("renorm", _renorm_fwd, (_renorm_rule,), (0,), jvp=jvp_by_double_vjp)


# unsqueeze_(dim) and transpose_(0, -1) of a fresh result (quantile with a 1-D q): PyTorch
# changes that tensor in place, so the results are no views; their nodes are
# UnsqueezeBackward1 and TransposeBackward1 (as squeeze_inplace is SqueezeBackward4)
unsqueeze_inplace = Op("unsqueeze_", lambda a, d: np.expand_dims(a, d),
                       (lambda g, s, n: g.squeeze(n._p),), node_name="UnsqueezeBackward1",
                       jvp=jvp_linear)
transpose_inplace = Op("transpose_", lambda a, p: np.swapaxes(a, *p),
                       (lambda g, s, n: g.transpose(*n._p),), node_name="TransposeBackward1",
                       jvp=jvp_linear)
