"""What the parts of ``retrograd.nn.functional`` share: argument helpers, the reduction of
a loss, legacy ``size_average``/``reduce`` arguments.

Example:
    >>> from retrograd.nn.functional.common import _ntuple
    >>> _ntuple(3, 2)
    (3, 3)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._graph.node import _LEGACY
from ..._tensor.tensor import Tensor, _make
from ...amp.state import AMP as _AMP
from ...ops.dispatch import apply
from ...ops.op import FLOAT_NP
from ...ops.records import nn as TN

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


def _check_float(x: Tensor, fn: str, error: type[Exception] = NotImplementedError) -> None:
    """PyTorch's refusal of a non-floating input by kernel ``fn`` (its dtype dispatch raises
    NotImplementedError; ``error``: another type, where retrograd refuses a dtype that
    PyTorch's kernel takes)."""
    if x._data.dtype not in FLOAT_NP:
        raise error(f'"{fn}" not implemented for \'{_legacy(x.dtype)}\': convert the input to a '
                    "floating dtype first (x.float())")


def _adaptive_output_size(input: Tensor, output_size, nsp: int, name: str,
                          pool: str) -> tuple:
    """The output size of adaptive pooling over the last ``nsp`` dims (an int, or a
    sequence where None keeps that dim), after PyTorch's checks and messages, which differ
    between ``pool="avg"`` and ``pool="max"``; 1-D pooling passes its 2-D form's name, as
    PyTorch reports it."""
    shape = list(input.shape)
    if input.ndim not in (nsp + 1, nsp + 2):
        got = "but got:" if pool == "max" else "but got"
        raise RuntimeError(f"{name}(): Expected {nsp + 1}D or {nsp + 2}D tensor, {got} {shape}")
    for d in range(input.ndim - nsp - 1 + (input.ndim == nsp + 1), input.ndim):
        if shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape} with dimension {d} "
                               "being empty")
    osz = tuple(output_size) if isinstance(output_size, (list, tuple)) else (output_size,) * nsp
    if len(osz) != nsp:
        raise RuntimeError(f"{name}: output_size must be {nsp}" if pool == "avg" else
                           f"{name}(): internal error: output_size.size() must be {nsp}")
    osz = tuple(shape[d - nsp] if o is None else int(o) for d, o in enumerate(osz))
    if min(osz, default=0) < 0:
        if pool == "avg":  # PyTorch's formatting, the missing space of the 3-D form included
            got = ", ".join(map(str, osz[:2])) + "".join(f",{o}" for o in osz[2:])
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {{{got}}}")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(osz)}: "
                           f"{shape[:-nsp] + list(osz)} (output_size must be >= 0)")
    return osz


def _check_normalized_shape(input: Tensor, normalized_shape,
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


_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str, suffix: str = " is not a valid value for reduction") -> None:
    """PyTorch's ValueError for an unknown ``reduction`` (``suffix``: its wording, which
    differs between losses)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + suffix)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    _check_reduction(reduction)
    return loss


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

