"""Argument normalisation shared by the public functions: numbers to tensors, ``dim``
arguments to sorted axes, and Python's builtins under names that the functions
``sum``, ``max``, ``min``, ``abs`` and ``round`` do not shadow.

Example:
    >>> from retrograd._functions.arguments import _dims
    >>> _dims(-1, 3), _dims((2, 0), 3), _dims(None, 3)
    ((2,), (0, 2), None)
"""

from __future__ import annotations

import builtins

import numpy as np

from .._tensor.tensor import Tensor, _make, _wrap_dim, result_type
from .creation import tensor

_py_sum = builtins.sum
_py_max = builtins.max
_py_min = builtins.min
_py_abs = builtins.abs
_py_round = builtins.round


def _t(x, like=None) -> Tensor:
    """A Tensor for ``x`` (numbers become 0-d tensors of the promoted dtype)."""
    if isinstance(x, Tensor):
        return x
    if like is not None and isinstance(x, (int, float, bool)):
        dt = result_type(like, x)
        return _make(np.asarray(x, dtype=dt.np))
    return tensor(x)


def _dims(dim, ndim: int):
    """Normalise a ``dim`` argument to a sorted tuple of non-negative axes or None."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        d = _wrap_dim(int(dim), ndim)
        return None if ndim == 0 else (d,)  # dim 0/-1 of a 0-d tensor: all of it
    dims = tuple(_wrap_dim(int(d), ndim) for d in dim)
    if not dims or ndim == 0:
        return None
    if len(set(dims)) != len(dims):
        dup = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims (list each "
                           "dim once)")
    return tuple(sorted(dims))
