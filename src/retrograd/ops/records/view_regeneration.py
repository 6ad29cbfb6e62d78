"""The record of a re-derived view's node (Note [View grad_fn regeneration] in
ops/dispatch.py): PyTorch's AsStridedBackward0 from the base, whose gradient is a fresh
tensor of the base's shape, and ``base_positions``, where each element of a view lies in
its base. Only NumPy, the kernels of the view records and Tensor methods are used here:
dispatch reads this record, so it imports nothing above the op record.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.records.view_regeneration import as_strided_regen
    >>> as_strided_regen.node_name
    'AsStridedBackward0'
    >>> x = torch.ones(4, requires_grad=True) * 1
    >>> v = x[1:3]
    >>> _ = x.mul_(2)  # v's node is stale: it is re-derived from x
    >>> v.grad_fn.name()
    'AsStridedBackward0'
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..op import Op


def base_positions(recipe, shape) -> np.ndarray:
    """For each element of the view ``recipe`` makes from a base of ``shape``: its flat
    (C-order) position in the base (the view ops' kernels replayed on the positions).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records.view_regeneration import base_positions
        >>> x = torch.zeros(2, 3)
        >>> base_positions(x.t()[1:]._vfn, (2, 3))
        array([[1, 4],
               [2, 5]])
    """
    steps = []
    while recipe is not None:
        parent, op, p = recipe
        steps.append((op, p))
        recipe = parent
    numel = int(np.prod(shape, dtype=np.int64))
    positions = np.arange(numel, dtype=np.int64).reshape(shape)
    for op, p in reversed(steps):  # (what view_apply computes, without a graph)
        positions = np.asarray(op.fwd(positions, p))
    return positions


def _as_strided_regen_rule(g, s, n):
    """The gradient of a re-derived view with respect to its base: PyTorch's
    AsStridedBackward0, a fresh tensor of the base's shape holding g at the view's
    elements (summed where they share memory)."""
    recipe, shape, dt, _ = n._p
    numel = int(np.prod(shape, dtype=np.int64))
    where = base_positions(recipe, shape)
    b = tuple(g._data.shape[:g._data.ndim - where.ndim])  # leading batch dims (vmap)
    flat = _make(np.zeros(b + (numel,), dtype=dt))
    key = (slice(None),) * len(b) + (_make(np.ascontiguousarray(where).reshape(-1)),)
    return flat.index_put(key, g.reshape(b + (-1,)), accumulate=True).reshape(b + tuple(shape))


# Note [View grad_fn regeneration]: as in PyTorch, a re-derived view's node is one
# AsStridedBackward0 from the base (its gradient a fresh tensor, not a view of g)
as_strided_regen = Op("as_strided_regen", lambda a, p: p[3], (_as_strided_regen_rule,),
                      node_name="AsStridedBackward0")
