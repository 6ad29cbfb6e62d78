"""``torch.sym_*``: PyTorch's symbolic-shape helpers on plain Python numbers.

# Note [Symbolic numbers]
# PyTorch's ``sym_int``, ``sym_max``... dispatch to a SymInt/SymFloat/SymBool's own method
# when tracing (torch.compile, export) and are Python's builtins otherwise. retrograd has
# no tracer, so every argument is a plain number and each helper is the eager branch of
# PyTorch's: the same results and types (``sym_max(2, 3.0)`` is the float 3.0, ``sym_sqrt``
# a float), the same assertion for a bad ``sym_ite`` and the same range errors.

Example:
    >>> import retrograd as torch
    >>> torch.sym_int(-3.7), torch.sym_max(2, 3.5), torch.sym_ite(False, 1, 2)
    (-3, 3.5, 2)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterable
from typing import TypeVar

import numpy as np

from .hints import Number

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum",
           "sym_ite", "sym_constrain_range", "sym_constrain_range_for_size",
           "sym_fresh_size"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NUMBERS = (builtins.int, builtins.float, np.integer, np.floating)
_T = TypeVar("_T")
_FLOATS = (builtins.float, np.floating)


def sym_int(a: Number) -> int:
    """``int(a)``, truncating toward zero.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_int(3.9)
        3
    """
    return builtins.int(a)


def sym_float(a: Number) -> float:
    """``float(a)``.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_float(3)
        3.0
    """
    return builtins.float(a)


def _minmax(fn, a, b):
    assert isinstance(a, _NUMBERS), type(a)
    assert isinstance(b, _NUMBERS), type(b)
    if isinstance(a, _FLOATS) or isinstance(b, _FLOATS):
        return builtins.float(fn(a, b))
    return fn(a, b)


def sym_max(a: Number, b: Number) -> int | float:
    """``max(a, b)``, a float when either is one.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_max(2.0, 3)
        3.0
    """
    return _minmax(builtins.max, a, b)


def sym_min(a: Number, b: Number) -> int | float:
    """``min(a, b)``, a float when either is one.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_min(2, 3)
        2
    """
    return _minmax(builtins.min, a, b)


def sym_not(a: bool) -> bool:
    """``not a``.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_not(True)
        False
    """
    return not a


def sym_sqrt(a: Number) -> float:
    """``math.sqrt(a)``.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_sqrt(4)
        2.0
    """
    return math.sqrt(a)


def sym_sum(args: Iterable[Number]) -> int | float:
    """``sum(args)`` (0 for none).

    Example:
        >>> import retrograd as torch
        >>> torch.sym_sum([1, 2, 3])
        6
    """
    return builtins.sum(args)


def sym_ite(b: bool, t: _T, f: _T) -> _T:
    """``t if b else f``; ``b`` a bool and ``t``, ``f`` of one type, as PyTorch asserts.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_ite(True, 1, 2)
        1
    """
    assert isinstance(b, builtins.bool), f"expected SymBool or bool, got {type(b)}"
    assert type(t) is type(f), f"type mismatch: {type(t)} vs {type(f)}"
    return t if b else f


def sym_constrain_range(size: int, *, min: int | None = None, max: int | None = None) -> None:
    """Check that ``size`` lies in ``[min, max]`` (int64's range where left out).

    Example:
        >>> import retrograd as torch
        >>> torch.sym_constrain_range(3, min=0, max=5) is None
        True
    """
    lo = _INT64_MIN if min is None else min
    hi = _INT64_MAX if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size: int, *, min: int | None = None,
                                 max: int | None = None) -> None:
    """``sym_constrain_range`` for a size: ``min`` defaults to 0.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_constrain_range_for_size(3) is None
        True
    """
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr: int) -> int:
    """A fresh size symbol equal to ``expr`` when tracing; ``expr`` itself here.

    Example:
        >>> import retrograd as torch
        >>> torch.sym_fresh_size(3)
        3
    """
    return expr
