"""Writes into a tensor: ``x[key] = value`` (Note [Setitem checks]), ``fill_``, ``zero_``
and ``copy_``, built on the in-place machinery of ``inplace.py``.

Example:
    >>> import retrograd as torch
    >>> x = torch.zeros(3)
    >>> x[1:] = 2.
    >>> x.copy_(x + 1)
    tensor([1., 3., 3.])
"""

from __future__ import annotations

import numpy as np

from .._core.grad_mode import STATE
from .._core.hints import Number
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import inplace_tangent as _inplace_tangent
from .._graph.provenance import mark as _cut_mark
from .._tensor.tensor import Tensor, _make, check_inference_write
from ..ops import overlap as _overlap
from ..ops.dispatch import _mismatch, apply, check_view_rebase
from ..ops.public import public
from ..ops.records import table as T
from .arguments import _py_sum
from .conversion import to
from .creation import tensor
from .indexing import (
    IndexKey,
    _basic,
    _basic_steps,
    _check_put_dtype,
    _index_put_shape_error,
    _indexed_shape,
    _mask_shape_error,
    getitem,
    index_error,
    norm_key,
)
from .inplace import (
    _WRITING,
    _aliased_write,
    _check_inplace_leaf,
    _inplace,
    _may_share,
    _overlapping_self,
    _raise_view_of_leaf,
    _refuse_batched_result,
    _views_itself,
    batched_write,
    is_batched_data,
)
from .shape import _check_expand, expand, view


def _setitem(self, key: IndexKey, value: Tensor | Number) -> None:
    if self._data.__class__ is not np.ndarray and is_batched_data(self._data):
        return batched_write("setitem", self, None, (key, value), {})
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(self)
    key = norm_key(key)
    vt = isinstance(value, Tensor)
    basic = _basic(key)
    graph = STATE.enabled and (self._rg or (vt and value._rg))
    if not graph and not _FW.active:
        if vt and value._data.dtype != self._data.dtype:
            _check_put_dtype(self, key, value, False)
        _check_inplace_leaf(self)
        if _writes_into_itself(self, value, vt):
            return _setitem_overlapping(self, key, value)
        try:
            self._data[key] = value._data if vt else value
        except ValueError:  # NumPy refused the value's shape: PyTorch's rules and messages
            if not vt:
                raise
            shape = _setitem_value_shape(self, key, basic, value)
            vd = value._data if shape is None else value._data.reshape(shape)
            try:
                self._data[key] = vd
            except ValueError:
                if basic:
                    raise
                raise _index_put_shape_error(self, key, vd.shape) from None
        self._vc[0] += 1
        if vt and value._rg and not self._rg and STATE.cut_watch:
            _cut_mark("inplace", "__setitem__ under no_grad", value, self)
        return
    shape = _setitem_value_shape(self, key, basic, value) if vt and value._data.ndim else None
    via = _setitem_check_inplace(self, key) if graph else "Slice"
    if vt and value._data.dtype != self._data.dtype:  # after the in-place checks (PyTorch)
        _check_put_dtype(self, key, value, False)
    if _writes_into_itself(self, value, vt):
        return _setitem_overlapping(self, key, value)
    v = value if vt else _make(np.asarray(value, dtype=self._data.dtype))
    if basic and vt and value._data.ndim:
        ds = self._data[key].shape
        if value._data.shape != ds:  # PyTorch's copy_to: the value viewed without its
            # leading 1s (ViewBackward0, always), then expanded to the view's shape
            v = view(v, _strip_leading_ones(value._data.shape))
            if v._data.shape != ds:
                v = expand(v, ds)
    elif shape is not None:
        v = v.reshape(shape)  # PyTorch views the value without its leading 1s too
    if v._data.dtype != self._data.dtype:
        v = to(v, self.dtype)
    # Note [Setitem nodes]: the node PyTorch records depends on where the write goes: into
    # self itself (a key of ``...``, ``:``, ``0:n``) a 0-d value is fill_ (FillBackward3)
    # and any other a copy_ (CopyBackwards); tensor indices on self are index_put_
    # (IndexPutBackward0); a write into a view of self is CopySlices. The last two are
    # freed after a backward without retain_graph, the first two may run again.
    if via is None and basic:
        full = not vt or not value._data.ndim
        _inplace(self, apply(T.fill_tensor if full else T.copy_from, (self, v)))
        return
    try:
        res = apply(T.index_put if via is None else T.index_put_setitem, (self, v), (key, False))
    except ValueError:
        if basic:
            raise
        raise _index_put_shape_error(self, key, v._data.shape) from None
    _inplace(self, res)


def setitem(self, key: IndexKey, value: Tensor | Number) -> None:
    """``tensor[key] = value`` as an in-place op (differentiable in both).

    Example:
        >>> import retrograd as torch
        >>> x = torch.zeros(3); x[1] = 5; x
        tensor([0., 5., 0.])
    """
    try:
        return _setitem(self, key, value)
    except IndexError as e:  # NumPy's words for an index out of range: PyTorch's
        if not any(w in str(e) for w in (" for axis ", "indexing arrays", "boolean index")):
            raise
        key = norm_key(key)
        _mask_shape_error(self._data.shape, key)
        raise index_error(e, key, self._data.shape, f"x[key] = v on a tensor of shape "
                                                    f"{list(self.shape)}") from None


# Note [Setitem checks]
# PyTorch's ``x[key] = v`` first applies the basic part of ``key`` (ints, slices, None,
# ...), which makes a view of x unless every part keeps x whole (``...``, ``:``, ``0:n``).
# Without tensor indices it then copies v into that view, expanding v to the view's shape
# first: a shape error comes before the in-place checks (a leaf, a view of one). With
# tensor indices it calls ``index_put_`` on the view: the in-place checks come first, then
# the shape check of the value against the indexing result. Either way, the value is
# viewed without its leading 1-sized dims. The checks below follow that order in grad
# mode; a plain write (no graph) tries NumPy first, whose broadcasting agrees with
# PyTorch's but for those leading 1s, and checks only when NumPy refuses. The indexing
# result's shape (a copy, for tensor indices) is computed only for a message.
def _setitem_value_shape(self, key, basic, value):
    """The value's shape without its leading 1s if that differs from its shape, else None;
    for a basic key, PyTorch's expand check of the value against ``self[key]``."""
    vs = value._data.shape
    if basic:
        r = self._data[key]
        ds = r.shape
        if vs == ds:
            return None
    stripped = _strip_leading_ones(vs)
    if basic and stripped != ds:
        _check_expand(value, stripped, ds)
    return stripped if len(stripped) != len(vs) else None


def _setitem_check_inplace(self, key):
    """PyTorch's in-place checks for ``self[key] = v`` in grad mode (Note [Setitem checks]):
    those of ``self`` when the write goes into ``self`` itself, else those of the view of
    ``self`` the basic part of ``key`` makes, named after its last view op. Returns that
    view op's name ("Select", "Slice", "Unsqueeze"), or None for ``self`` itself."""
    via = None
    shape = self._data.shape
    dims = len(shape) - _py_sum(0 if k is None or k is Ellipsis else
                                k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_
                                else 1 for k in key)
    d = 0
    for k in key:
        if k is None or k is True:
            via = "Unsqueeze"
        elif k is Ellipsis:
            d += dims
        elif k.__class__ is slice:
            if not (k.start in (None, 0) and k.step in (None, 1) and
                    (k.stop is None or d >= len(shape) or k.stop >= shape[d])):
                via = "Slice"
            d += 1
        elif isinstance(k, np.ndarray):
            d += k.ndim if k.dtype == np.bool_ else 1
        else:
            via = "Select"
            d += 1
    if via is None:
        _check_inplace_leaf(self, True)
        return None
    base = self._base
    if base is not None:
        check_view_rebase(self, indirect=False, via=via if self._rg else None)
    else:
        base = self
    if (self._rg or base._rg) and base._gfn is None:
        _raise_view_of_leaf()
    return via


def _strip_leading_ones(shape) -> tuple:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def _writes_into_itself(self, value, vt: bool) -> bool:
    """``self[key] = value`` needs the overlap rules: NumPy holds self's memory read-only
    (an expanded or overlapping view) or the value shares it (Note [Memory overlap in
    in-place ops] in overlap.py); not while ``_setitem_overlapping`` itself writes."""
    d = self._data
    return self is not _WRITING[0] and (not d.flags.writeable or (vt and (
        value._data is d or _overlap.may_alias(d, value._data))))


def _basic_view_data(d: np.ndarray, key: tuple) -> np.ndarray:
    """``d[key]`` for a basic key, laid out as PyTorch's view steps lay it out (Note [Basic
    indexing as view steps]): NumPy gives ``x[None]``'s new dim stride 0 where PyTorch's
    unsqueeze gives another, and the overlap checks compare strides (``x[None, i] +=
    v`` writes a view onto its own memory, which PyTorch's copy_ skips)."""
    steps = _basic_steps(key, d.shape)
    if steps is None:
        return d[key]
    for op, p in steps:
        d = op.fwd(d, p)
    return d


def _setitem_overlapping(self, key, value) -> None:
    """``self[key] = value`` where NumPy holds self's memory read-only (an expanded or
    overlapping view) or ``value`` shares it: PyTorch's checks (a basic key is a copy_ into
    the view ``self[key]``; an advanced one index_put_, or masked_fill_ for one mask and a
    single value), then the write (Note [Memory overlap in in-place ops] in overlap.py)."""
    d = self._data
    vd = value._data if isinstance(value, Tensor) else None
    if _basic(key):
        try:
            target = _basic_view_data(d, key)
        except (IndexError, ValueError, TypeError):  # the write reports it
            return _aliased_write(self, lambda: setitem(self, key, value))
        src = same = ()
        if vd is not None:  # PyTorch: target.copy_(value), target.fill_(a 0-d value), or
            if vd.shape == target.shape:  # the copy_ of the value without its leading 1s
                src = (vd,)  # and expanded
            elif vd.ndim == 0:  # (fill_ clones a value that shares memory: not compared)
                pass
            else:  # (stride 0 along a dim of size > 1 makes it "too hard": not compared)
                try:
                    src = (T._expand_fwd(vd.reshape(_strip_leading_ones(vd.shape)),
                                         target.shape),)
                except ValueError:
                    pass
            same = src
        if not (same and _overlap.same_memory(target, same[0])):  # onto itself: a no-op
            _overlap.check(target, src)

        if STATE.enabled and (self._rg or (vd is not None and value._rg)):
            # as PyTorch, a copy_ into the view self[key]: the base's gradient is then
            # CopySlices' over that view, which differs from an index_put on self when the
            # view's elements share memory
            # (a key that keeps self whole writes into self itself, as in PyTorch: a copy_
            # or fill_ of self, no CopySlices; Note [Setitem nodes])
            into = self if T.whole_selection(key, d.shape, False) else getitem(self, key)
            if vd is None:
                value = _make(np.asarray(value, dtype=d.dtype))
            elif vd.ndim == 0 and target.shape != ():
                fill_(into, value)
                return None
            elif vd.shape != target.shape:
                value = value.reshape(_strip_leading_ones(vd.shape)).expand(target.shape)
            copy_(into, value)
            return None

        # the value without its leading 1s, as PyTorch's copy_to reads it
        vs = vd.reshape(_strip_leading_ones(vd.shape)) if vd is not None and \
            vd.ndim > target.ndim else vd

        def compute():
            return np.broadcast_to(vs if vs is not None else np.asarray(value, d.dtype),
                                   target.shape)
        return _aliased_write(self, lambda: setitem(self, key, value), compute,
                              (vs,) if vs is not None else (), out=target)
    sliced_key = []
    for k in key:
        if isinstance(k, np.ndarray):
            sliced_key += [slice(None)] * (k.ndim if k.dtype == np.bool_ else 1)
        else:
            sliced_key.append(k)
    sliced = d[tuple(sliced_key)]
    if vd is not None:  # PyTorch's index_put_ checks the value's shape first
        try:
            np.broadcast_shapes(vd.shape, _indexed_shape(self, key))
        except ValueError:
            raise _index_put_shape_error(self, key, vd.shape) from None
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    as_mask = (len(arrays) == 1 and arrays[0].dtype == np.bool_ and
               (vd is None or vd.size == 1))  # PyTorch's masked_fill_ dispatch
    cmp = vd
    if vd is not None and vd.ndim and vd.shape[0] == 1:
        # PyTorch views the value without its leading 1s: a tensor of its own, compared
        # with self by its memory and strides (an expanded one is "too hard": allowed)
        cmp = vd.reshape(_strip_leading_ones(vd.shape))
    elif vd is not None and value is self and T.whole_selection(key, d.shape, False):
        cmp = sliced  # PyTorch writes into the value tensor itself: "full" overlap
    _overlap.check(sliced, (cmp,) if cmp is not None and not as_mask else (), "index_put",
                   "index_put_")
    if as_mask and not sliced.flags.writeable and _overlap.internal(sliced):
        _overlap.warn_expanded("masked_fill_")

    def body():
        return setitem(self, key, value)
    if STATE.enabled and (self._rg or (vd is not None and value._rg)) and \
            _views_itself(self):  # Note [In-place ops on overlapping views] (inplace.py)
        def body():
            v = value if vd is not None else _make(np.asarray(value, dtype=d.dtype))
            if v._data.dtype != d.dtype:
                v = to(v, self.dtype)
            _inplace(self, apply(T.index_put_setitem, (_overlapping_self(self), v),
                                 (key, False)))
    return _aliased_write(self, body,
                          rewrite=lambda w: w.__setitem__(key, vd if vd is not None else value))


@public(function=False)
def fill_(self, value: Tensor | Number) -> Tensor:
    """Fill with ``value`` in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2).fill_(3)
        tensor([3., 3.])
    """
    if self._data.__class__ is not np.ndarray and is_batched_data(self._data):
        return batched_write("fill_", self, None, (value,), {})  # Note [Batched writes]
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:
        # Note [Memory overlap in in-place ops] (overlap.py): a scalar is written unchecked
        if isinstance(value, Tensor):  # PyTorch: self.copy_(value), which checks self
            _overlap.check(self._data, ())
        return _aliased_write(self, lambda: fill_(self, value))
    vt = value if isinstance(value, Tensor) else None
    if vt is not None:
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if STATE.enabled and (self._rg or value._rg):
            return _inplace(self, apply(T.fill_tensor, (self, value.to(self.dtype))))
        value = value.item()
    if STATE.enabled and self._rg:
        return _inplace(self, apply(T.fill, (self, value)))
    _check_inplace_leaf(self)
    self._data[...] = value
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, vt if vt is not None else _make(self._data))
    return self


@public(function=False)
def zero_(self) -> Tensor:
    """Set every element to zero in place.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2).zero_()
        tensor([0., 0.])
    """
    if self._data.__class__ is not np.ndarray and is_batched_data(self._data):
        return batched_write("zero_", self, None, (), {})  # Note [Batched writes]
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(self)
    if not self._data.flags.writeable and self is not _WRITING[0]:  # (unchecked in PyTorch)
        return _aliased_write(self, lambda: zero_(self))
    if STATE.enabled and self._rg:
        return _inplace(self, apply(T.zero, (self,)))
    _check_inplace_leaf(self)
    self._data[...] = 0
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, _make(self._data))
    return self


@public(function=False)
def copy_(self, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast and cast) into this tensor in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 2).copy_(torch.tensor([1., 2.]))
        tensor([[1., 2.],
                [1., 2.]])
    """
    if self._data.__class__ is not np.ndarray and is_batched_data(self._data):
        return batched_write("copy_", self, None, (src,), {})  # Note [Batched writes]
    if self._vc.__class__ is not list:  # Note [Inference tensors] (_tensor/tensor.py)
        check_inference_write(self)
    if not isinstance(src, Tensor):
        src = tensor(src)
    if src._data.__class__ is not np.ndarray and is_batched_data(src._data):
        _refuse_batched_result(src)  # Note [Batched writes]: self is not batched
    d, sd = self._data, src._data
    ds, ss = d.shape, sd.shape
    if ds != ss:
        try:
            bshape = np.broadcast_shapes(ds, ss)
        except ValueError:
            a, b, i = _mismatch(ds, ss)
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                               f"at non-singleton dimension {i}: copy_ from {list(ss)} into "
                               f"{list(ds)} (src must broadcast to the destination)") from None
        if bshape != ds:
            raise RuntimeError(f"output with shape {list(ds)} doesn't match the broadcast shape "
                               f"{list(bshape)}")
    if self is not _WRITING[0] and (not d.flags.writeable or (
            sd is not d and (d.base is not None or sd.base is not None) and _may_share(d, sd))):
        # Note [Memory overlap in in-place ops] (overlap.py); copying a tensor onto itself
        # (the same tensor, or the same memory and layout) is a no-op PyTorch allows
        if src is not self and not _overlap.same_memory(d, sd):
            _overlap.check(d, (sd,))
        return _aliased_write(self, lambda: copy_(self, src),
                              lambda: np.broadcast_to(sd, d.shape), (sd,))
    if STATE.enabled and (self._rg or src._rg):
        return _inplace(self, apply(T.copy_from, (self, src)))
    _check_inplace_leaf(self)
    if src._rg and not self._rg and STATE.cut_watch:
        _cut_mark("inplace", "copy_ under no_grad", src, self)
    try:
        np.copyto(self._data, np.broadcast_to(sd, self._data.shape), casting="unsafe")
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must "
                           f"match the size of tensor b ({src.shape[-1] if src.ndim else 1}): "
                           f"copy_ from {list(src.shape)} into {list(self.shape)}") from None
    self._vc[0] += 1
    if _FW.active:
        _inplace_tangent(self, src)
    return self
