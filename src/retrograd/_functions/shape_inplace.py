"""PyTorch's shape-changing in-place methods: ``t_``, ``transpose_``/``swapaxes_``/
``swapdims_``, ``squeeze_`` and ``unsqueeze_``.

# Note [Shape-changing in-place methods]
# These rewrite a tensor's shape and strides, not its values: the NumPy array is
# replaced by a view of the same memory with the new layout, and, as in PyTorch, the
# version counter is bumped once. A leaf that requires grad is refused (PyTorch's
# check_inplace). A tensor with history gets a new node over its old one, named as
# PyTorch's (TBackward1, TransposeBackward1, SqueezeBackward3/4/5, UnsqueezeBackward1),
# and becomes its output. A view keeps its recipe from the base up to date (the same
# change appended, Note [Views and in-place] in dispatch.py), so that a later
# regeneration of its grad_fn from the base gives the new shape.

Example:
    >>> import retrograd as torch
    >>> x = torch.zeros(2, 1, 3)
    >>> x.squeeze_(1).shape, x._version
    (torch.Size([2, 3]), 1)
"""

from __future__ import annotations

import numpy as np

from .._core.grad_mode import STATE
from .._core.hints import ShapeLike
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import fw_op as _fw_op
from .._graph.forward_state import get_tangent, set_tangent
from .._tensor.tensor import Tensor, _make, _wrap_dim
from ..ops.op import record
from ..ops.records import scans as TSC
from ..ops.records import table as T
from .arguments import _dims
from .inplace import _check_inplace_leaf, batched_write, is_batched_data

__all__ = ["t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "install"]


def _relayout(self: Tensor, op, view_op, p) -> Tensor:
    """Give ``self`` the layout ``op.fwd`` makes (Note [Shape-changing in-place methods])."""
    if self._data.__class__ is not np.ndarray and is_batched_data(self._data):
        return batched_write("relayout", self, view_op, (p,), {})  # Note [Batched writes]
    _check_inplace_leaf(self)
    new = op.fwd(self._data, p)
    node = None
    holder = _make(new)
    if STATE.enabled and self._rg:
        node = record(op, holder, (self,), p)
    if _FW.active:  # forward-mode AD: the tangent is relaid out the same way
        _fw_op(op, (self,), holder, p, 0)
    self._data = new
    if _FW.active and get_tangent(holder) is not None:  # the tangent takes the new layout
        set_tangent(self, get_tangent(holder))
    self._vc[0] += 1
    if self._base is not None:
        self._vfn = (self._vfn, view_op, p)
        if node is not None:
            self._vver = self._vc[0]
    if node is not None:
        self._gfn = node
        self._out_nr = 0
    return self


def t_(self: Tensor) -> Tensor:
    """``t()`` in place (at most 2 dims).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).t_().shape
        torch.Size([3, 2])
    """
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D (use transpose_(dim0, dim1) for more dims)")
    return _relayout(self, T.t_inplace, T.t_op, None)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(dim0, dim1)`` in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).transpose_(0, 2).shape
        torch.Size([4, 3, 2])
    """
    nd = max(self.ndim, 1)
    p = (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd))
    if self.ndim == 0:
        return _relayout(self, T.t_inplace, T.t_op, None)
    return _relayout(self, TSC.transpose_inplace, T.transpose, p)


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose_`` under NumPy's name.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).swapaxes_(0, 1).shape
        torch.Size([3, 2])
    """
    return transpose_(self, axis0, axis1)


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose_`` under another name.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).swapdims_(0, 1).shape
        torch.Size([3, 2])
    """
    return transpose_(self, dim0, dim1)


def squeeze_(self: Tensor, dim: ShapeLike | None = None) -> Tensor:
    """``squeeze`` in place: all size-1 dims, one dim or a tuple of dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(1, 2, 1).squeeze_(0).shape
        torch.Size([2, 1])
    """
    shp = self._data.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
        return _relayout(self, T.squeeze_all_inplace, T.squeeze_all, axes)
    axes = tuple(d for d in (_dims(dim, len(shp)) or ()) if shp[d] == 1) if shp else ()
    if isinstance(dim, (tuple, list)):
        return _relayout(self, T.squeeze_dims_inplace, T.squeeze_dims, axes)
    return _relayout(self, T.squeeze_inplace, T.squeeze, axes)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """``unsqueeze(dim)`` in place.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).unsqueeze_(0).shape
        torch.Size([1, 3])
    """
    d = _wrap_dim(dim, self.ndim + 1)
    return _relayout(self, TSC.unsqueeze_inplace, T.unsqueeze, d)


def install() -> None:
    """Put the methods on ``Tensor`` (methods.py calls it).

    Example:
        >>> import retrograd as torch
        >>> torch.Tensor.t_.__name__
        't_'
    """
    for name in __all__[:-1]:
        setattr(Tensor, name, globals()[name])
