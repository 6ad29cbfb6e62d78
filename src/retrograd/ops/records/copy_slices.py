"""The records of in-place ops on views (Note [Views and in-place] in ops/dispatch.py):
PyTorch's CopySlices, the node an in-place op on a view puts on its base, in its two
forms (Note [CopySlices folding]), and the overwrite that gives an in-place op on an
overlapping view its self (Note [In-place ops on overlapping views]). ``_functions/inplace.py``
records them.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.records.copy_slices import copy_slices
    >>> copy_slices.node_name
    'torch::autograd::CopySlices'
    >>> b = torch.ones(3, requires_grad=True) * 1
    >>> _ = b[:2].mul_(2)
    >>> b.grad_fn.name()
    'torch::autograd::CopySlices'
"""

from __future__ import annotations

import numpy as np

from ..._graph.node import RELEASED
from ..._tensor.tensor import _make
from .. import overlap as _overlap
from ..dispatch import replay_view
from ..op import Op
from .elementwise import _where0


def _copy_slices_vjp(g, s, n, needs):
    recipe = n._p
    out = [None, None]
    if needs[0]:
        mask = _make(np.ones(g._data.shape, dtype=np.bool_))
        region = replay_view(recipe, mask)._data
        if _overlap.internal(region):  # PyTorch copies the view's gradient into this region
            raise RuntimeError(_overlap.INTERNAL_MSG + " (backward of an in-place op on an "
                               "expanded view: its gradient cannot be written back; make the "
                               "view with .clone() before the in-place op)")
        _overlap.writable(region)[...] = False  # (maybe overlapping)
        out[0] = _where0(mask, g)
    if needs[1]:  # on a contiguous g, as the mask above (PyTorch copies g into the base's
        out[1] = replay_view(recipe, g.contiguous())  # layout first): g may be transposed
    return out


# unsaved=RELEASED: PyTorch's CopySlices releases the node it wraps
copy_slices = Op("copy_slices", None, _copy_slices_vjp, node_name="torch::autograd::CopySlices",
                 unsaved=RELEASED)


# Note [CopySlices folding]
# An in-place op on a view rewrites the base's history. PyTorch records one CopySlices
# node on the base that holds the op's own node (``fn``): backward takes the base's
# gradient, gives the written region's part to ``fn`` as its output gradient, writes
# what ``fn`` returns for its self input back into that region (the region's old values
# were overwritten: only that path reaches them) and passes ``fn``'s other input
# gradients on. Its next_functions are the base's old history followed by ``fn``'s other
# inputs, and ``fn`` itself is no longer a node of the graph. retrograd does the same
# when ``fn`` is a one-output table node whose first edge is the view; otherwise (a
# custom Function's node, a hooked node, a multi-output op) the unfolded CopySlices
# above keeps ``fn`` as a node of its own, with the same gradients.
def _folded_copy_slices_vjp(g, s, n, needs):
    recipe, fn = n._p
    edges = n._edges
    if needs is None:
        needs = [e is not None for e in edges]
    mask = _make(np.ones(g._data.shape, dtype=np.bool_))
    region = replay_view(recipe, mask)._data
    if _overlap.internal(region):  # as _copy_slices_vjp
        raise RuntimeError(_overlap.INTERNAL_MSG + " (backward of an in-place op on an "
                           "expanded view: its gradient cannot be written back; make the "
                           "view with .clone() before the in-place op)")
    _overlap.writable(region)[...] = False
    grads = fn._op.backward(fn, [replay_view(recipe, g.contiguous())], list(needs))
    out = [None, *grads[1:]]
    if needs[0]:
        base = _where0(mask, g)
        if grads[0] is not None:
            replay_view(recipe, base).copy_(grads[0])
        out[0] = base
    return out


def _folded_record(nondiff: tuple, register: bool = False) -> Op:
    return Op("copy_slices_folded", None, _folded_copy_slices_vjp,
              node_name="torch::autograd::CopySlices", nondiff=nondiff, unsaved=RELEASED,
              register=register)


copy_slices_folded = _folded_record((), register=True)  # (the others are its variants)
_FOLDED_BY_NONDIFF = {(): copy_slices_folded}


def folded_copy_slices(nondiff: tuple) -> Op:
    """The folded CopySlices record whose hidden slots are ``fn``'s (Note [Non-differentiable
    inputs]): its edges are fn's with the first one replaced, so the positions agree. One
    record per ``nondiff``, made the first time it is asked for (Note [Complete records]).

    Example:
        >>> from retrograd.ops.records.copy_slices import folded_copy_slices
        >>> folded_copy_slices((1,)).nondiff, folded_copy_slices(()).nondiff
        ((1,), ())
        >>> folded_copy_slices((1,)) is folded_copy_slices((1,))
        True
    """
    op = _FOLDED_BY_NONDIFF.get(nondiff)
    if op is None:
        op = _FOLDED_BY_NONDIFF[nondiff] = _folded_record(nondiff)
    return op


# Note [In-place ops on overlapping views]
# PyTorch's CopySlices computes the base's gradient as: the incoming gradient, with the
# view's elements overwritten (``grad_slice.copy_(...)``) by the in-place op's gradient with
# respect to the view's old value. When the view's elements share memory (an overlapping
# unfold or as_strided view), that copy keeps, for each memory location, the value of the
# element written last (TensorIterator's order); our view ops' own rules would sum them
# instead. So an in-place op on such a view computes from ``_overlapping_self(view)`` (in
# _functions/inplace.py): the
# view's values, recorded from the base by an op whose rule is that overwrite. A saved
# result of the op is the view's memory, as PyTorch's. Known difference: PyTorch's double
# backward differentiates that saved result through the view's own node (a sum over shared
# elements), ours through the overwrite, so second derivatives at shared elements differ.
def _overlap_self_rule(g, s, n):
    _, shape, dt, pos, locs = n._p
    flat = _make(np.zeros(int(np.prod(shape, dtype=np.int64)), dt))
    b = g._data.ndim - len(n._p[0].shape)  # leading batch dims (vmap)
    vals = g.reshape(g.shape[:b] + (-1,))[(slice(None),) * b + (_make(pos),)]
    return flat.index_put((slice(None),) * b + (_make(locs),), vals).reshape(
        g.shape[:b] + tuple(shape))


overlap_self = Op("overlap_self", lambda a, p: p[0], (_overlap_self_rule,),
                  node_name="AsStridedBackward0")
