"""Loss functions of ``retrograd.nn.functional`` (re-exported there).

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.mse_loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
    tensor(2.)
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._core.grad_mode import is_grad_enabled, no_grad
from ..._functions.creation import zeros_like
from ..._functions.pointwise import where
from ..._functions.reductions import vector_norm
from ..._functions.shape import broadcast_shapes, broadcast_tensors
from ..._functions.softmax import log_softmax
from ..._tensor.tensor import Tensor, _make, result_type
from ...ops.dispatch import apply
from ...ops.op import FLOAT_NP
from ...ops.public import FP32, autocast_category
from ...ops.records import losses as TLO
from ...ops.records import nn as TN
from .common import (
    _TARGET_DTYPES,
    _UNSIGNED,
    _check_reduction,
    _const,
    _legacy,
    _legacy_reduction,
    _max_reduce,
    _reduce,
)

# ---------------------------------------------------------------------------------
# losses


def _check_same_size(input, target, stacklevel=3):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=stacklevel)


@autocast_category(TLO.mse_loss)
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.mse_loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
        tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target)
    input, target = _expanded(input, target)
    if weight is not None:  # PyTorch's weighted form is a composite (torch.nn.functional)
        _check_weight_size(weight, input)
        d = input - target
        return _weighted_reduce(d.pow(2) * weight, weight, reduction)
    return _loss_record(TLO.mse_loss, input, target, reduction)


@autocast_category(FP32)
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.l1_loss(torch.tensor([1., 2.]), torch.tensor([1., 4.]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_size(input, target)
    input, target = _expanded(input, target)
    loss = (input - target).abs()  # (PyTorch's l1_loss is this composite: AbsBackward0)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted_reduce(loss * weight, weight, reduction)
    return _reduce(loss, reduction)


@autocast_category(TLO.huber_loss)
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """0.5 d² for |d| < delta, delta (|d| - delta / 2) beyond.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.huber_loss(torch.tensor([0., 3.]), torch.zeros(2))
        tensor(1.2500)
    """
    _check_same_size(input, target)
    input, target = _expanded(input, target)
    if weight is None:
        return _loss_record(TLO.huber_loss, input, target, reduction, delta)
    _check_weight_size(weight, input)  # PyTorch: the unreduced loss times the weight
    loss = _loss_record(TLO.huber_loss, input, target, "none", delta) * weight
    return _reduce(loss, reduction)


@autocast_category(TLO.smooth_l1_loss)
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d² / beta for |d| < beta, |d| - beta / 2 beyond (L1 when beta = 0).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0., 3.]), torch.zeros(2))
        tensor(1.2500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target)
    input, target = _expanded(input, target)
    if beta == 0:  # PyTorch: l1_loss (AbsBackward0)
        return _reduce((input - target).abs(), reduction)
    return _loss_record(TLO.smooth_l1_loss, input, target, reduction, beta)


def _expanded(input: Tensor, target: Tensor) -> tuple:
    """PyTorch's ``torch.broadcast_tensors(input, target)`` before a loss kernel (expand
    nodes only where the shapes differ)."""
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    return broadcast_tensors(input, target)


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


def _weighted_reduce(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """The reductions of PyTorch's weighted mse/l1 composites: a mean is sum / weight sum."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _no_weight_grad(fn: str, w: Tensor, name: str) -> None:
    if w.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{name}'. This input cannot have requires_grad True. (Pass "
                           f"{name}.detach(), or write the loss with tensor ops to train it.)")


def _loss_record(op, input: Tensor, target: Tensor, reduction: str, *extra) -> Tensor:
    """One loss node (Note [Loss records] in ops/records/losses.py): p = (reduction enum,
    *extra)."""
    red = TLO.REDUCTION.get(reduction)
    if red is None:
        _check_reduction(reduction)
    return apply(op, (input, target), (red, *extra))


def _nll_by_ops(input, target, weight, ignore_index, reduction, cdim):
    """nll_loss written with ops that have batching rules, for batched tensors inside vmap
    (Note [Batched tensors] in _functorch/batched.py): the same formula as below, with the
    target's values never read in Python (so no range check: PyTorch's vmap has none)."""
    keep = target != ignore_index
    safe = where(keep, target, 0)
    picked = input.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    w = keep.to(input.dtype)
    if weight is not None:
        w = w * weight.gather(0, safe.reshape(-1)).reshape(safe.shape)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


@autocast_category(FP32)
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the target classes (input holds log-probabilities).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.nll_loss(torch.tensor([[-1., -2.]]), torch.tensor([1]))
        tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input._data.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input._data.ndim})")
    cdim = 1 if input._data.ndim >= 2 else 0
    if input._data.ndim >= 2 and target._data.ndim >= 1 and \
            input._data.shape[0] != target._data.shape[0]:
        raise ValueError(f"Expected input batch_size ({input._data.shape[0]}) to match target "
                         f"batch_size ({target._data.shape[0]}).")
    expected = input._data.shape[:cdim] + input._data.shape[cdim + 1:]
    if tuple(target._data.shape) != tuple(expected):
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if target._data.dtype not in _TARGET_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_legacy(target.dtype)}: class indices are int64 (target.long())")
    nc = input._data.shape[cdim]
    t = target._data
    if not isinstance(t, np.ndarray) or not isinstance(input._data, np.ndarray):
        # batched tensors inside vmap (their data is no array); a compile trace's arrays
        # (ndarray subclasses) take the fused path, its value read becoming a check
        if t.dtype == np.uint8:  # PyTorch's vmap gathers, which takes no Byte index
            raise RuntimeError("gather(): Expected dtype int32/int64 for index (nll_loss "
                               "under vmap takes int64 targets: pass target.long())")
        if weight is None and input._data.ndim == 2 and reduction in ("none", "sum", "mean"):
            return apply(TN.nll_nd, (input, target), (ignore_index, reduction))
        return _nll_by_ops(input, target, weight, ignore_index, reduction, cdim)
    if t.size and (ignore_index < 0 or ignore_index >= nc) and \
            _max_reduce(t.view(_UNSIGNED[t.dtype]), axis=None) < nc:
        valid = None  # the common case: every target in [0, nc), checked with one reduction
        # over the targets viewed as unsigned (negative ones become huge)
        safe = t.astype(np.int64, copy=False)
    else:
        valid = t != ignore_index
        bad = valid & ((t < 0) | (t >= nc))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
        safe = np.where(valid, t, 0).astype(np.int64)
    if input._data.ndim == 2 and reduction in ("none", "sum", "mean") and (
            weight is None or not weight._rg):  # Note [Fused NLL] in ops/records/nn.py
        if weight is None:
            w = None if valid is None else _make(valid.astype(input._data.dtype))
        else:
            w = weight._data[safe]
            w = _make(w if valid is None else w * valid.astype(weight._data.dtype))
        return apply(TN.nll, (input, w), (safe, reduction, valid))
    if valid is None:
        valid = np.ones(t.shape, bool)
    picked = input.gather(cdim, _make(np.expand_dims(safe, cdim))).squeeze(cdim)
    if weight is not None:
        w = weight.index_select(0, _make(safe.reshape(-1))).reshape(safe.shape)
        w = w * _make(valid.astype(weight._data.dtype))
    else:
        w = _make(valid.astype(input._data.dtype))
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / w.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


@autocast_category(FP32, op="cross_entropy_loss")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax + nll_loss (class indices), or the cross entropy with class
    probabilities when ``target`` is floating and has the input's shape.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cross_entropy(torch.tensor([[0., 0.]]), torch.tensor([0]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 1 if input._data.ndim >= 2 else 0
    logp = log_softmax(input, cdim)
    nc = input._data.shape[cdim]
    wshape = [1] * input._data.ndim
    wshape[cdim] = nc
    if target._data.dtype in FLOAT_NP and target._data.shape == input._data.shape:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / nc
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        if reduction == "mean":
            return -prod.sum() / (input._data.size / nc)
        raise ValueError(f"{reduction} is not a valid value for reduction")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    ignore = target._data == ignore_index
    if weight is not None:
        smooth = -(logp * weight.reshape(wshape)).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth = smooth.masked_fill(_make(ignore), 0.0)
    if reduction == "mean":
        if weight is not None:
            tw = weight._data[target._data[~ignore]]
            ret = smooth.sum() / _const(tw.sum(), smooth)
        else:
            ret = smooth.sum() / float((~ignore).sum())
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / nc)


@autocast_category(TLO.binary_cross_entropy)
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), logs clamped at -100 as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        _no_weight_grad("binary_cross_entropy", weight, "weight")
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
    return _loss_record(TLO.binary_cross_entropy, input, target, reduction, weight)


@autocast_category(TLO.binary_cross_entropy_with_logits)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one stable expression (log-sigmoid form).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([1000.]),
        ...                                                      torch.tensor([0.]))
        tensor(1000.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    for w, name in ((weight, "weight"), (pos_weight, "pos_weight")):
        if w is not None:
            _no_weight_grad("binary_cross_entropy_with_logits", w, name)
    return _loss_record(TLO.binary_cross_entropy_with_logits, input, target, reduction,
                        weight, pos_weight)


@autocast_category(FP32)
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence with ``input`` as log-probabilities; ``reduction='batchmean'`` is the
    mathematical definition.

    Example:
        >>> import retrograd as torch
        >>> p = torch.tensor([[0.5, 0.5]])
        >>> torch.nn.functional.kl_div(p.log(), p, reduction='batchmean')
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        pos = target > 0
        safe = where(pos, target, 1.0)
        loss = where(pos, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input._data.ndim > 0 else 1)
    return _reduce(loss, reduction)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cosine_similarity(torch.tensor([[1., 0.]]),
        ...                                       torch.tensor([[1., 1.]]))
        tensor([0.7071])
    """
    # Note [Cosine similarity]: ATen's composite (Distance.cpp), op for op, so the graph is
    # PyTorch's: both operands expanded to one shape (unless they have it already), each
    # divided by its 2-norm (cloned, then clamped to eps in place under no_grad, so the
    # clamp records nothing), the product summed: SumBackward1, MulBackward0, DivBackward0,
    # CloneBackward0, LinalgVectorNormBackward0. Dividing first keeps the result in [-1, 1].
    dt = result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_legacy(dt)}")
    x1 = x1.to(dt) if not x1.dtype.is_floating_point else x1
    x2 = x2.to(dt) if not x2.dtype.is_floating_point else x2
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = broadcast_tensors(x1, x2)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = vector_norm(x2, 2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@autocast_category(FP32)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.cosine_embedding_loss(torch.tensor([[1., 0.]]),
        ...                                           torch.tensor([[1., 0.]]), torch.tensor([1]))
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    tdim = input1._data.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(tdim)
    m1 = (input1 * input1).sum(tdim) + eps
    m2 = (input2 * input2).sum(tdim) + eps
    cos = prod / (m1 * m2).sqrt()
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    zeros = zeros_like(cos)
    out = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce(out, reduction)


