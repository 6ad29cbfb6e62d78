"""What the parts of ``retrograd.nn.functional`` share: argument helpers, the reduction of
a loss, legacy ``size_average``/``reduce`` arguments.

Example:
    >>> from retrograd.nn._functional_common import _ntuple
    >>> _ntuple(3, 2)
    (3, 3)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._graph.node import _LEGACY
from .._tensor import Tensor, _make
from ..amp.state import AMP as _AMP
from ..ops import table_nn as TN
from ..ops._core import FLOAT_NP
from ..ops.dispatch import apply

_max_reduce = np.maximum.reduce
_TARGET_DTYPES = frozenset((np.dtype(np.int64), np.dtype(np.uint8)))
_UNSIGNED = {np.dtype(f"{k}{n}"): np.dtype(f"u{n}") for k in "iu" for n in (1, 2, 4, 8)}


def _ntuple(x, n: int, name: str = "argument") -> tuple:
    if isinstance(x, (list, tuple)):
        if len(x) == 1:
            return tuple(x) * n
        if len(x) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(x)}: {tuple(x)}")
        return tuple(int(v) for v in x)
    return (int(x),) * n


def _check_float(x: Tensor, fn: str) -> None:
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(f'"{fn}" not implemented for \'{_legacy(x.dtype)}\': convert the '
                           "input to a floating dtype first (x.float())")


def _check_normalized_shape(input: Tensor, normalized_shape,  # noqa: A002
                            star: str = "*, ") -> tuple:
    """The trailing dims that ``normalized_shape`` names (layer_norm, rms_norm), with
    PyTorch's error when the input's trailing sizes differ (``star``: what precedes the
    sizes there; PyTorch's rms_norm writes ``[*4]``, its layer_norm ``[*, 4]``)."""
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if tuple(input._data.shape[input._data.ndim - k:]) != ns or input._data.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(ns)}, expected input with shape [{star}"
            f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    return tuple(range(input._data.ndim - k, input._data.ndim))


def _legacy(dt) -> str:
    return _LEGACY[dt.name]


def _same_dtype(fn: str, x: Tensor, *others) -> None:
    if _AMP.on:  # under autocast the dispatcher casts input and weights to one dtype first
        return
    for o in others:
        if o is not None and o._data.dtype != x._data.dtype:
            raise RuntimeError(
                f"{fn}: expected the input and the weights to have the same dtype, but got "
                f"input of type {x.dtype} and weight of type {o.dtype}. Convert one of them "
                f"(model.to({x.dtype}) or input.to({o.dtype})).")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{_legacy_get_string(size_average, reduce)}' instead.", stacklevel=3)
    return _legacy_get_string(size_average, reduce)


def _legacy_get_string(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


def _const(arr, like: Tensor) -> Tensor:
    return _make(np.asarray(arr, dtype=like._data.dtype))


def _log_sigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)) as -softplus(-x): stable for large |x| (F.logsigmoid and the BCE
    with logits share it)."""
    return -apply(TN.softplus, (-x,), (1.0, math.inf))

