"""Op records of views, shape ops and indexing: ``view``, ``expand``, ``permute``,
``diagonal``/``unfold``/``as_strided`` (Note [Views by index maps]), ``select`` and
slicing, advanced indexing and ``index_put``, ``gather``/``scatter``, ``index_*``,
``take``, ``cat``/``stack``/``split``, ``flip``/``roll``/``repeat``, constant padding.
Part of the one table (``ops/records/table.py`` gathers every record).

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.records import shape as TSH
    >>> TSH.view.name, torch.ones(2, 3).t().grad_fn is None
    ('view', True)
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import STATE
from ..._core.layouts import element_strides, view_strides
from ..._graph.node import RELEASED
from ..._tensor.tensor import _make
from ..batch_rules import (
    cat_rule,
    diagonal_rule,
    expand_rule,
    gather_rule,
    same,
    t_rule,
    view_dims,
    view_permute,
    view_prefix,
    view_shape,
    view_transpose,
)
from ..dispatch import apply
from ..jvp_rules import jvp_linear, jvp_view
from ..op import Op
from ..public import PROMOTE
from .helpers import _bdims, _not_implemented, arrays_suffice, rule_zeros, sum_to

_ndarray = np.ndarray


def _cat(ts, dim: int):
    """``torch.cat`` inside a rule (its operands share one dtype)."""
    d = dim % ts[0]._data.ndim
    return apply(cat, tuple(ts), (d, tuple(x._data.shape[d] for x in ts)))


def _stack(ts, dim: int):
    """``torch.stack`` inside a rule (its operands share one dtype and shape)."""
    return apply(stack, tuple(ts), dim % (ts[0]._data.ndim + 1))


# ---------------------------------------------------------------------------------
# views and shape ops.  A view op's output shares memory and version counter with
# its input (Note [Views and in-place] in _tensor/tensor.py).

def _back_to_input_shape(g, s, n):
    return g.reshape(_bdims(g) + tuple(n.input_shape(0)))


def _view_op(name, fwd, rule=_back_to_input_shape, node_name=None, jvp=None, batch_ok=False,
             batch=None):
    return Op(name, fwd, (rule,), node_name=node_name, view=True, jvp=jvp, batch_ok=batch_ok,
              batch=batch)


def _view_fwd(a, shape):
    # NumPy's no-copy reshape (a ValueError when there is no view), with PyTorch's
    # strides on dims of size 1 and of empty tensors (Note [View strides] in _core/layouts.py)
    r = a.reshape(shape, copy=False)
    if (1 in shape or r.size == 0) and r.__class__ is _ndarray and a.ndim:
        st = view_strides(a.shape, element_strides(a), r.shape)
        if st is not None and st != element_strides(r):
            return _strided_view(r, r.shape, st)
    return r


view = _view_op("view", _view_fwd, jvp=jvp_view, batch_ok=True, batch=view_shape)
# reshape of a non-contiguous tensor that can be viewed: PyTorch's _reshape_alias
reshape_alias = _view_op("reshape_alias", _view_fwd, node_name="ReshapeAliasBackward0",
                         jvp=jvp_view, batch_ok=True, batch=view_shape)
unsafe_view = Op("unsafe_view", lambda a, shape: a.reshape(shape), (_back_to_input_shape,),
                 jvp=jvp_linear, batch_ok=True, batch=view_shape)
def _squeeze_fwd(a, ax):
    return np.squeeze(a, axis=ax)


def _unsqueeze_to(g, s, n):
    """PyTorch's unsqueeze_to: the gradient itself when nothing was squeezed (so
    autograd.grad gives ``x`` and ``x.squeeze()`` one object, as there), else reshaped."""
    shape = _bdims(g) + tuple(n.input_shape(0))
    return g if g._data.shape == shape else g.reshape(shape)


# PyTorch's three overloads: squeeze() (SqueezeBackward0), squeeze(dim) (1), squeeze(dims) (2)
squeeze_all = _view_op("squeeze_all", _squeeze_fwd, _unsqueeze_to, node_name="SqueezeBackward0",
                       jvp=jvp_view, batch_ok=True, batch=view_dims)
squeeze = _view_op("squeeze", _squeeze_fwd, _unsqueeze_to, node_name="SqueezeBackward1",
                   jvp=jvp_view, batch_ok=True, batch=view_dims)
squeeze_dims = _view_op("squeeze_dims", _squeeze_fwd, _unsqueeze_to,
                        node_name="SqueezeBackward2", jvp=jvp_view, batch_ok=True,
                        batch=view_dims)
# squeeze_(dim) of a fresh result (matmul's vector-times-matrix): PyTorch changes that
# tensor's shape in place, so the result is no view; its node is SqueezeBackward4
squeeze_inplace = Op("squeeze_inplace", _squeeze_fwd, (_back_to_input_shape,),
                     node_name="SqueezeBackward4", jvp=jvp_linear)
def _unsqueeze_fwd(a, ax):
    if 1 not in a.shape:
        return np.expand_dims(a, ax)
    # NumPy's reshape gives an existing size-1 dim a stride of its own choosing; PyTorch's
    # unsqueeze keeps every stride (x[None, 1, ..., None] has the strides it has there)
    key = (slice(None),) * ax + (None,)
    return _unsqueeze_strides(a, key, a[key])


unsqueeze = _view_op("unsqueeze", _unsqueeze_fwd, jvp=jvp_view, batch_ok=True, batch=view_dims)
def _expand_fwd(a, shape):
    # a read-only stride-0 view, as np.broadcast_to makes, built directly (half the cost)
    lead = len(shape) - a.ndim
    if lead < 0 or a.size == 0:
        return np.broadcast_to(a, shape)
    strides = [0] * lead
    for s, t, st in zip(a.shape, shape[lead:], a.strides):
        if s != t and s != 1:
            return np.broadcast_to(a, shape)  # let NumPy raise its error
        strides.append(0 if s != t else st)  # (a size-1 dim kept keeps its stride)
    if lead and a.ndim and 1 in shape[:lead]:
        strides = _new_dim_strides(shape, strides, lead)
    if not a.flags.c_contiguous:
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    r = np.ndarray(shape, a.dtype, a, 0, strides)
    r.flags.writeable = False
    return r


def _new_dim_strides(shape, strides, lead: int) -> list:
    """PyTorch's strides for the dims expand adds in front: 0, except that a new dim of
    size 1 gets the next dim's size times its stride (``zeros(3).expand(1, 3).stride()`` is
    (3, 1)); in-place ops compare strides to tell full from partial overlap."""
    for i in range(lead - 1, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1] if shape[i] == 1 else 0
    return strides


expand = _view_op("expand", _expand_fwd,
                  lambda g, s, n: sum_to(g, n.input_shape(0), batch=STATE.batch),
                  jvp=jvp_view, batch_ok=True, batch=expand_rule)
permute = _view_op("permute", lambda a, dims: np.transpose(a, dims),
                   lambda g, s, n: g.permute(tuple(range(STATE.batch)) + tuple(
                       STATE.batch + int(d) for d in np.argsort(n._p))),
                   jvp=jvp_view, batch_ok=True, batch=view_permute)
transpose = _view_op("transpose",  # of a 0-d tensor (dims 0, 0): the tensor itself, as torch
                     lambda a, p: np.swapaxes(a, p[0], p[1]) if a.ndim else a.view(),
                     lambda g, s, n: g.transpose(STATE.batch + n._p[0], STATE.batch + n._p[1]),
                     jvp=jvp_view, batch_ok=True, batch=view_transpose)
def _t_rule(g, s, n):
    if len(n.input_shape(0)) != 2:  # a 0-d or 1-d tensor's t() is itself: the gradient
        return g if STATE.batch else g.t()  # is a view of g (a tensor of its own, as torch's)
    if arrays_suffice() and not STATE.batch:  # no graph, no tangent (nn.Linear's W.t())
        return _make(g._data.T)
    return g.transpose(-2, -1)


t_op = _view_op("t", lambda a, p: a.T, _t_rule, node_name="TBackward0", jvp=jvp_view, batch_ok=True,
                batch=t_rule)
alias = _view_op("alias", lambda a, p: a.view(), lambda g, s, n: g, jvp=jvp_view, batch_ok=True,
                 batch=same)


# Note [Views by index maps]
# diagonal, unfold and as_strided are views whose elements are a strided pick of the
# input's, some picked twice (overlapping unfold windows, as_strided with small
# strides). One rule serves all three: run the view's own forward kernel on the flat
# positions of the input (``arange(numel).reshape(shape)``) and the result says which
# input element each output element is; the gradient is then a scatter-add of g into
# those positions (``index_put(accumulate=True)``, itself differentiable, so double
# backward works).
def _index_map_rule(g, s, n):
    shape = tuple(n.input_shape(0))
    numel = int(np.prod(shape, dtype=np.int64))
    where = n._op.fwd(np.arange(numel, dtype=np.int64).reshape(shape), n._p)
    flat = rule_zeros((numel,), n.input_dtype(0))
    pos = _make(np.ascontiguousarray(where).reshape(-1))
    return flat.index_put((pos,), g.reshape(-1), accumulate=True).reshape(shape)


def _strided_view(a, shape, strides, start=0):
    """A writable view of ``a`` (the flat element ``start`` first) with element strides."""
    item = a.itemsize
    return np.lib.stride_tricks.as_strided(
        a.reshape(-1)[start:] if start else a, shape, tuple(st * item for st in strides),
        writeable=a.flags.writeable)


def _diagonal_fwd(a, p):
    offset, d1, d2 = p
    x = np.moveaxis(a, (d1, d2), (-2, -1))
    r0, c0 = max(0, -offset), max(0, offset)
    n = max(0, min(x.shape[-2] - r0, x.shape[-1] - c0))
    x = x[..., min(r0, x.shape[-2]):, min(c0, x.shape[-1]):]
    st = x.strides
    return np.lib.stride_tricks.as_strided(x, x.shape[:-2] + (n,), st[:-2] + (st[-2] + st[-1],),
                                           writeable=a.flags.writeable)


def _unfold_fwd(a, p):
    dim, size, step = p
    n = (a.shape[dim] - size) // step + 1 if a.ndim else 1
    if a.ndim == 0:
        return a.reshape(1)
    st = a.strides
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    overlap = size > step and n > 1  # windows share elements: read-only (no in-place)
    return np.lib.stride_tricks.as_strided(a, shape, strides,
                                           writeable=a.flags.writeable and not overlap)


def _as_strided_fwd(a, p):
    # p = (size, stride, offset) over a's elements in C order, or with a fourth entry:
    # the order of a's dims in memory (outermost first) when a is dense in another order
    # (a transposed or channels-last tensor: its storage is its memory, as in PyTorch)
    size, stride, offset = p[:3]
    if len(p) > 3:
        a = a.transpose(p[3])
    out = _strided_view(np.ascontiguousarray(a), size, stride, offset)
    n = out.size
    if n > 1 and out.flags.writeable:  # elements sharing memory: read-only (no in-place)
        where = _strided_view(np.arange(a.size, dtype=np.int64), size, stride, offset)
        if np.unique(where).size < n:
            out.flags.writeable = False
    return out


diagonal = _view_op("diagonal", _diagonal_fwd, _index_map_rule, jvp=jvp_view, batch=diagonal_rule)
unfold = _view_op("unfold", _unfold_fwd, _index_map_rule, jvp=jvp_view)
as_strided = _view_op("as_strided", _as_strided_fwd, _index_map_rule, jvp=jvp_view)


def whole_selection(key, shape, allow_none: bool) -> bool:
    """Does ``key`` (normalised, see ``norm_key``) select all of a tensor of ``shape``
    through full slices and ``...`` (and ``None`` if ``allow_none``; index arrays count as
    the dims they index)? PyTorch then does not slice: ``x[:]`` is ``x`` itself (an alias
    when read), ``x[None]`` only unsqueezes.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.records.shape import whole_selection
        >>> whole_selection((slice(None), Ellipsis), (2, 3), False)
        True
        >>> whole_selection((slice(1, None),), (2, 3), False), whole_selection((None,), (2,), True)
        (False, True)
    """
    nd = len(shape)
    used = 0
    for k in key:
        if isinstance(k, np.ndarray):
            used += k.ndim if k.dtype == np.bool_ else 1
        elif k is not None and k is not Ellipsis:
            used += 1
    pos = 0
    for k in key:
        if k is Ellipsis:
            pos += nd - used
        elif k is None:
            if not allow_none:
                return False
        elif isinstance(k, np.ndarray):
            pos += k.ndim if k.dtype == np.bool_ else 1
        elif (k.__class__ is slice and k.start in (None, 0) and k.step in (None, 1) and
              pos < nd and (k.stop is None or k.stop >= shape[pos])):
            pos += 1
        else:  # an int, a bool or a partial slice
            return False
    return True


def _index_rule(g, s, n):
    shape, dt = n.input_shape(0), n.input_dtype(0)
    b = _bdims(g)
    # (a slice that keeps everything is no exception: PyTorch's slice_backward makes a new
    # tensor even then, so the gradient of ``x[:]`` is never the object of ``x``'s)
    # basic keys only are batched (Note [Batched rules]): a leading full
    key = (slice(None),) * len(b) + tuple(n._p) if b else n._p  # slice keeps their meaning
    return rule_zeros(b + tuple(shape), dt).index_put(key, g,
                                                                          accumulate=True)


def _index_fwd(a, key):
    r = a[key]
    if r.__class__ is not np.ndarray:  # all ints: NumPy gives a scalar copy; a 0-d view
        r = a[key + (Ellipsis,)] if key.__class__ is tuple else a[key, ...]
    if key.__class__ is tuple:
        for k in key:
            if k is None:
                return _unsqueeze_strides(a, key, r)
    return r


def _unsqueeze_strides(a, key, r):
    """``r = a[key]`` with PyTorch's strides for the dims ``None`` inserts (NumPy gives them
    stride 0): ``x[None]`` is ``x.unsqueeze(0)``, whose new dim has the stride of the next dim
    times its size (1 element at the end), so that ``stride()`` and the overlap checks of
    in-place ops (Note [Memory overlap in in-place ops] in overlap.py) see PyTorch's layout."""
    nd = a.ndim
    used = len([k for k in key if k is not None and k is not Ellipsis])
    strides = list(r.strides)
    i = j = 0  # the next dim of r, of a
    for k in key:
        if k is None:
            strides[i] = a.shape[j] * a.strides[j] if j < nd else a.itemsize
            i += 1
        elif k is Ellipsis:
            i += nd - used
            j += nd - used
        elif k.__class__ is slice:
            i += 1
            j += 1
        else:  # an int
            j += 1
    if tuple(strides) == r.strides:
        return r
    owner = r
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    try:  # a plain view of the owner (keeps the base chain simple)
        off = r.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        out = np.ndarray(r.shape, r.dtype, owner, off, tuple(strides))
    except (TypeError, ValueError, BufferError):
        return np.lib.stride_tricks.as_strided(r, strides=strides, writeable=r.flags.writeable)
    if not r.flags.writeable and out.flags.writeable:
        out.flags.writeable = False
    return out


select = _view_op("select", _index_fwd, _index_rule, jvp=jvp_view, batch_ok=True, batch=view_prefix)
slice_op = _view_op("slice", _index_fwd, _index_rule, jvp=jvp_view, batch_ok=True,
                    batch=view_prefix)
def _adv_index_fwd(a, key):
    # PyTorch's advanced-indexing result is a fresh contiguous tensor (so .view() works on
    # it); NumPy lays out x[:, idx] with the indexed dim first in memory. Already-contiguous
    # results are returned as they are (no copy).
    r = a[key]
    if r.__class__ is not np.ndarray:  # a NumPy scalar: a 0-d result
        return np.asarray(r)
    if not r.flags.c_contiguous:
        return np.ascontiguousarray(r)
    if 1 in r.shape and r.size:  # NumPy calls it contiguous whatever a size-1 dim's stride
        return np.ndarray(r.shape, r.dtype, r)  # is; PyTorch's strides are the row-major ones
    return r


# advanced indexing: a copy. PyTorch's IndexBackward (as IndexFillBackward) saves the index
# tensor(s), freed by the backward pass: a second one raises there, and here (the index
# lives in the parameters)
index = Op("index", _adv_index_fwd, (_index_rule,), jvp=jvp_linear, unsaved=RELEASED)


def _is_basic(key) -> bool:
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               for k in key)


def _index_put_fwd(a, v, p):
    key, acc = p
    out = a.copy()
    if acc and not _is_basic(key):
        np.add.at(out, key, v)
    elif acc:
        out[key] += v
    else:
        out[key] = v
    return out


def _index_put_vjp(g, s, n, needs):
    key, acc = n._p
    r = [None, None]
    if needs[0]:
        r[0] = g if acc else g.index_put(key, 0.0)
    if needs[1]:
        r[1] = g[key]
    return r


# unsaved=RELEASED: freed as PyTorch frees them
index_put = Op("index_put", _index_put_fwd, _index_put_vjp, node_name="IndexPutBackward0",
               jvp=jvp_linear, unsaved=RELEASED)
# ``x[key] = v``: the same kernel; PyTorch names this node CopySlices
index_put_setitem = Op("index_put_setitem", _index_put_fwd, _index_put_vjp,
                       node_name="torch::autograd::CopySlices", jvp=jvp_linear, unsaved=RELEASED)


def _gather_grid(index, dim):
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _gather_fwd(a, idx, dim):
    return a[_gather_grid(idx, dim)]


gather = Op("gather", _gather_fwd,
            (lambda g, s, n: rule_zeros(n.input_shape(0), g._data.dtype)
             .scatter_add(n._p, s[0], g), None), (1,), jvp=jvp_linear, batch=gather_rule)


def _scatter_fwd(a, idx, src, p):
    dim, reduce = p
    out = a.copy()
    grid = _gather_grid(idx, dim)
    if np.ndim(src) > 0:
        src = src[tuple(slice(0, k) for k in idx.shape)]
    if reduce == "add":
        np.add.at(out, grid, src)
    elif reduce == "multiply":
        np.multiply.at(out, grid, src)
    else:
        out[grid] = src
    return out


def _scatter_vjp(g, s, n, needs):
    idx = s[0]
    dim, reduce = n._p
    r = [None, None, None]
    if needs[0]:
        r[0] = g if reduce == "add" else g.scatter(dim, idx, 0.0)
    if needs[2]:
        r[2] = _pad_to(g.gather(dim, idx), n.input_shape(2))
    return r


def _pad_to(t, shape):
    """Zero-pad ``t`` at the end of each dim up to ``shape`` (scatter's src may be larger)."""
    if tuple(t.shape) == tuple(shape):
        return t
    z = rule_zeros(shape, t._data.dtype)
    return z.index_put(tuple(slice(0, k) for k in t.shape), t)


scatter = Op("scatter", _scatter_fwd, _scatter_vjp, (1,), nondiff=(1,), jvp=jvp_linear)
# scatter_add's self gradient is g itself: the index is saved only for src's, as PyTorch
# saves it (Note [Nodes that saved nothing] in _graph/node.py: such a node may run again)
scatter_add = Op("scatter_add", _scatter_fwd, _scatter_vjp, (1,), nondiff=(1,), jvp=jvp_linear,
                 save_if=((2,),))


def _scatter_value_fwd(a, idx, p):
    return _scatter_fwd(a, idx, np.asarray(p[2], a.dtype), p[:2])


def _scatter_value_rule(g, s, n):
    return g.scatter(n._p[0], s[0], 0.0)


# Note [Scalar overloads]: scatter.value (a number src, p = (dim, reduce, value)) has one
# edge; scatter.reduce and scatter.value_reduce have no derivative in PyTorch
scatter_value = Op("scatter", _scatter_value_fwd, (_scatter_value_rule, None), (1,),
                   node_name="ScatterBackward1",
                   jvp=lambda t, s, n, out: _scatter_value_rule(t[0], s, n))
_SCATTER_REDUCE_HINT = ("scatter with reduce= has no gradient: use scatter_add(dim, index, "
                        "src) for reduce='add', or detach() the operands.")
scatter_reduce = _not_implemented("scatter", _scatter_fwd, (True, None, True),
                                  _SCATTER_REDUCE_HINT)
scatter_value_reduce = _not_implemented("scatter", _scatter_value_fwd, (True, None),
                                        _SCATTER_REDUCE_HINT)


def _index_select_fwd(a, idx, dim):
    return np.take(a, idx, axis=dim)


index_select = Op("index_select", _index_select_fwd,
                  (lambda g, s, n: rule_zeros(n.input_shape(0), g._data.dtype)
                   .index_add(n._p, s[0], g), None), (1,), jvp=jvp_linear)


def _index_add_fwd(a, idx, src, p):
    dim, alpha = p
    out = a.copy()
    key = (slice(None),) * dim + (idx,)
    np.add.at(out, key, src * alpha if alpha != 1 else src)
    return out


index_add = Op("index_add", _index_add_fwd,
               (lambda g, s, n: g, None,
                lambda g, s, n: g.index_select(n._p[0], s[0]) * n._p[1]), (1,), jvp=jvp_linear,
               save_if=((2,),))  # (the index only for source's gradient, as scatter_add)


# index_fill: p = (dim, index, raw, value) with ``value`` the number filled
# (IndexFillBackward0); p = (dim, index, raw) when the value is a 0-d tensor, the op's
# second input (index_fill_tensor, IndexFillBackward1). ``index`` is the int64 index as a
# 1-D array with negative entries wrapped, ``raw`` as given (PyTorch's value gradient
# reads it).
def _index_fill_into(a, v, p):
    dim, idx = p[0], p[1]
    out = a.copy()
    if a.ndim == 0:  # PyTorch fills a 0-d tensor as if it were 1-D of size 1
        if idx.size:
            out[()] = v
    else:
        out[(slice(None),) * dim + (idx,)] = v
    return out


def _index_fill_self_rule(g, s, n):
    dim, idx, raw = n._p[:3]
    return apply(index_fill, (g,), (dim, idx, raw, 0))


def _index_fill_value_rule(g, s, n):
    # PyTorch: grad.index_select(dim, unique(index)).sum(), each filled slice once. Its
    # index_select refuses the negative entries index_fill accepted: so does this rule.
    dim, idx, raw = n._p[:3]
    u = np.unique(raw)
    if u.size and u[0] < 0:
        size = n.input_shape(0)[dim] if len(n.input_shape(0)) else 1
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(u[0])} "
                           f"axis_dim={size} (the backward of index_fill with a tensor value "
                           "reads the index as given: pass non-negative indices, e.g. index % "
                           "size)")
    if g.ndim == 0:
        return g if u.size else rule_zeros(g._data.shape, g._data.dtype)
    return g.index_select(dim, _make(np.asarray(u, dtype=np.int64))).sum()


index_fill = Op("index_fill", lambda a, p: _index_fill_into(a, p[3], p),
                (_index_fill_self_rule,),
                jvp=lambda t, s, n, out: _index_fill_self_rule(t[0], s, n), unsaved=RELEASED)


def _index_fill_tensor_jvp(t, s, n, out):
    ts = rule_zeros(out._data.shape, out._data.dtype) if t[0] is None else t[0]
    if t[1] is None:  # a constant value: its tangent is zero
        return _index_fill_self_rule(ts, s, n)
    return apply(index_fill_tensor, (ts, t[1]), n._p)


index_fill_tensor = Op("index_fill_tensor", _index_fill_into,
                       (_index_fill_self_rule, _index_fill_value_rule),
                       node_name="IndexFillBackward1", jvp=_index_fill_tensor_jvp,
                       unsaved=RELEASED)


# tril/triu as PyTorch's own ops (TrilBackward0, TriuBackward0): nothing saved, the
# gradient is the same triangle of g (a where() would save its mask)
tril = Op("tril", np.tril, (lambda g, s, n: apply(tril, (g,), n._p),), jvp=jvp_linear,
          batch_ok=True, batch=same)
triu = Op("triu", np.triu, (lambda g, s, n: apply(triu, (g,), n._p),), jvp=jvp_linear,
          batch_ok=True, batch=same)


def _value_at_index_rule(g, s, n):
    """Gradient of values picked by indices along a dim (max/min(dim), sort, topk)."""
    idx = s[0]
    dim, keepdim = n._p[0], n._p[1]
    shape = n.input_shape(0)
    if not keepdim and len(shape) > 0 and idx.ndim < len(shape):
        g = g.unsqueeze(dim)
        idx = idx.unsqueeze(dim)
    if len(shape) == 0:
        return g.reshape(())
    return rule_zeros(shape, g._data.dtype).scatter(dim, idx, g)


def _take_fwd(a, idx, p):
    dim, keepdim = p
    if a.ndim == 0:
        return a.copy()
    i = idx if (keepdim or idx.ndim == a.ndim) else np.expand_dims(idx, dim)
    r = np.take_along_axis(a, i, axis=dim)
    return r if (keepdim or idx.ndim == a.ndim) else np.squeeze(r, dim)


take_ops = {k: Op(k, _take_fwd, (_value_at_index_rule, None), (1,),
                  node_name=f"{k.capitalize()}Backward0", jvp=jvp_linear)
            for k in ("max", "min", "sort", "topk", "mode")}


def _cat_vjp(g, s, n, needs):
    dim, sizes = n._p
    out = []
    off = 0
    for i in range(len(n._edges)):
        size = sizes[i]
        if size is None:  # a legacy empty 1-D input: an empty gradient, as in PyTorch
            out.append(rule_zeros((0,), g._data.dtype) if needs[i] else None)
            continue
        out.append(g.narrow(dim + STATE.batch, off, size) if needs[i] else None)
        off += size
    return out


def _cat_fwd(*a):
    dim, sizes = a[-1]
    return np.concatenate([x for x, size in zip(a[:-1], sizes) if size is not None], axis=dim)


cat = Op("cat", _cat_fwd, _cat_vjp, jvp=jvp_linear, batch_ok=True, autocast=PROMOTE, batch=cat_rule)
stack = Op("stack", lambda *a: np.stack(a[:-1], axis=a[-1]),
           lambda g, s, n, needs: [g.select(n._p + STATE.batch, i) if need else None
                                   for i, need in enumerate(needs)], jvp=jvp_linear, batch_ok=True,
           autocast=PROMOTE, batch=cat_rule)


def _multi_out_vjp(g, s, n, needs):
    """split/unbind: put the pieces back together, zeros where a piece had no grad."""
    kind, dim, sizes = n._p
    shape = n.input_shape(0)
    if n._nout == 1:  # a single piece: the engine hands over the gradient itself
        g = [g]
    b = _bdims(next(gk for gk in g if gk is not None))  # Note [Batched rules]
    parts = []
    for k, gk in enumerate(g):
        if gk is None:
            pshape = list(shape)
            if kind == "unbind":
                del pshape[dim]
            else:
                pshape[dim] = sizes[k]
            gk = rule_zeros(b + tuple(pshape), n.input_dtype(0))
        parts.append(gk)
    d = dim + len(b)
    return [_stack(parts, d) if kind == "unbind" else _cat(parts, d)]


def _split_jvp(t, s, n, out):
    kind, dim, sizes = n._p
    return t[0].unbind(dim) if kind == "unbind" else t[0].split(list(sizes), dim)


split = Op("split", None, _multi_out_vjp, node_name="SplitBackward0", view=True,
           batch_ok=True, jvp=_split_jvp)  # int size
split_with_sizes = Op("split_with_sizes", None, _multi_out_vjp,
                      node_name="SplitWithSizesBackward0", view=True,
                      batch_ok=True, jvp=_split_jvp)  # a list of sizes
unbind = Op("unbind", None, _multi_out_vjp, node_name="UnbindBackward0", view=True, batch_ok=True,
            jvp=_split_jvp)

flip = Op("flip", lambda a, dims: np.flip(a, dims).copy(), (lambda g, s, n: g.flip(n._p),),
          jvp=jvp_linear)
def _roll_fwd(a, p):  # p: (shifts, dims), dims None: the flattened tensor, one shift
    return np.roll(a, p[0][0] if p[1] is None else p[0], p[1])


roll = Op("roll", _roll_fwd, (lambda g, s, n: g.roll(tuple(-x for x in n._p[0]), n._p[1]),),
          jvp=jvp_linear)


def _repeat_rule(g, s, n):
    reps = n._p
    shape = n.input_shape(0)
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    inter = []
    for r, d in zip(reps, padded):
        inter += [r, d]
    gs = g.reshape(inter).sum(dim=tuple(range(0, 2 * len(reps), 2)))
    return gs.reshape(shape)


repeat = Op("repeat", lambda a, reps: np.tile(a, reps), (_repeat_rule,), jvp=jvp_linear)


def _pad_fwd(a, p):
    pads, value = p
    return np.pad(a, pads, constant_values=value)


def _pad_rule(g, s, n):
    pads, _ = n._p
    key = tuple(slice(lo, g.shape[i] - hi) for i, (lo, hi) in enumerate(pads))
    return g[key]


def _pad_jvp(t, s, n, out):
    # constant padding is affine: the tangent is padded with zeros, not with the value
    return apply(constant_pad, (t[0],), (n._p[0], 0.0))


constant_pad = Op("constant_pad", _pad_fwd, (_pad_rule,), node_name="ConstantPadNdBackward0",
                  jvp=_pad_jvp)
