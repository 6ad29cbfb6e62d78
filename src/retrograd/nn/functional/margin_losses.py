"""Margin, ranking, Gaussian/Poisson NLL and triplet losses of ``retrograd.nn.functional``
(re-exported there).

Note [Loss compositions]: every loss here is the composition PyTorch's ATen (or Python)
source computes (Loss.cpp's margin_ranking / hinge_embedding / poisson_nll / triplet, the
Python gaussian_nll / multilabel_soft_margin / triplet_with_distance), so the values,
gradients and double gradients follow from the ops' own rules. The kernels with loops
(multilabel_margin, multi_margin) become masked sums of ``relu(margin - x_target + x)``;
their gradients, zero where the hinge is exactly zero, equal the kernels'.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.soft_margin_loss(torch.tensor([0.]), torch.tensor([1.]))
    tensor(0.6931)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..._core.grad_mode import no_grad
from ..._functions.creation import ones_like, zeros_like
from ..._functions.pointwise import where
from ..._tensor.tensor import Tensor
from ...ops.batch_rules import per_element_under_vmap
from ...ops.dispatch import apply
from ...ops.public import FP32, autocast_category
from ...ops.records import table as T
from .common import _check_reduction, _legacy_reduction, _log_sigmoid, _reduce
from .distance import pairwise_distance

__all__ = ["gaussian_nll_loss", "poisson_nll_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "multilabel_margin_loss", "multi_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]

def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,
                      full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log(max(var, eps)) + (input - target)² / max(var, eps)) (+ 0.5 log 2π if full).

    ``var`` may have the input's shape, lack its last dim, or differ from it in one dim
    of size 1 (homoscedastic cases); a float is broadcast.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.gaussian_nll_loss(torch.tensor([1.]), torch.tensor([0.]),
        ...                                       torch.tensor([1.]))
        tensor(0.5000)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    ishape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif not (len(ishape) == len(vshape)
                  and sum(v for i, v in zip(ishape, vshape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction, " is not valid")
    var = var.clone()
    with no_grad():  # clamped without a node: the gradient reaches var unclamped, as torch
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@autocast_category(FP32)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (``log_input``) or input - target * log(input + eps),
    plus Stirling's term target log target - target + 0.5 log(2π target) where target > 1
    when ``full``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.poisson_nll_loss(torch.tensor([0.]), torch.tensor([1.]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


@autocast_category(FP32)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.margin_ranking_loss(torch.tensor([1.]), torch.tensor([2.]),
        ...                                         torch.tensor([1.]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {input1.size()}, input2: {input2.size()}, target: "
            f"{target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@autocast_category(FP32)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where target is -1.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.hinge_embedding_loss(torch.tensor([0.3, 2.]),
        ...                                          torch.tensor([-1., 1.]))
        tensor(1.3500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    out = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce(out, reduction)


@autocast_category(T.soft_margin_loss)
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.soft_margin_loss(torch.tensor([0.]), torch.tensor([1.]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with "
                           "respect to argument 'target'. This input cannot have "
                           "requires_grad True.")
    # the kernel multiplies into a tensor of the input's dtype: the result keeps it
    return apply(T.soft_margin_loss, (input, target.to(input.dtype)), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,
                                weight: Tensor | None = None, size_average: bool | None = None,
                                reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Mean over classes of the (weighted) binary cross-entropy with logits.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.multilabel_soft_margin_loss(torch.zeros(1, 2),
        ...                                                 torch.tensor([[1., 0.]]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    _check_reduction(reduction, " is not valid")
    return _reduce(loss, reduction)


def _class_target(input: Tensor, target: Tensor, name: str) -> tuple:
    """(input as 2-D, target as 1-D/2-D int64 array, number of classes) for the margin
    kernels, which accept 0-D/1-D inputs as one sample."""
    if input.dim() > 2 or (name == "multilabel_margin_loss" and input.numel() == 0
                           and input.dim() != 2):
        raise RuntimeError(f"{name}: Expected non-empty vector or matrix with optional "
                           f"0-dim batch size, but got: {list(input.shape)}")
    if str(target.dtype) != "torch.int64":
        raise RuntimeError(f"expected scalar type Long but found {str(target.dtype)[6:]}: "
                           "class indices are int64 (target.long())")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    return x, target._data.astype(np.int64), x.shape[1]


@autocast_category(T.multilabel_margin_loss)
@per_element_under_vmap
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """sum over target classes j (the indices before the first -1) and non-target
    classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.multilabel_margin_loss(
        ...     torch.tensor([[0.1, 0.2, 0.4, 0.8]]), torch.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    x, t, c = _class_target(input, target, "multilabel_margin_loss")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    t2 = t.reshape(x.shape)
    prefix = np.cumprod(t2 >= 0, axis=1).astype(bool)  # the kernel reads up to the first -1
    if (t2[prefix] >= c).any():
        bad = int(t2[prefix][t2[prefix] >= c][0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension 0 with size {c}")
    return apply(T.multilabel_margin_loss, (input, target), (reduction, input.dim() < 2))


@autocast_category(T.multi_margin_loss)
@per_element_under_vmap
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """sum over classes i != y of weight[y] * max(0, margin - x[y] + x[i]) ** p, divided
    by the number of classes (p is 1 or 2).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.multi_margin_loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]),
        ...                                       torch.tensor([3]))
        tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad:
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    x, t, c = _class_target(input, target, "multi_margin_loss")
    t = t.reshape(-1)
    if t.shape[0] != x.shape[0] or target.dim() > 1:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got "
                           f"{list(target.shape)}")
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    w = weight if weight is not None else ones_like(x[0])
    return apply(T.multi_margin_loss, (input, target, w),
                 (reduction, input.dim() < 2, p, float(margin)))


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def _triplet(anchor, positive, negative, distance, margin, swap, reduction) -> Tensor:
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


@autocast_category(FP32)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm pairwise distance (``swap``:
    d(a, n) replaced by min(d(a, n), d(p, n))).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.triplet_margin_loss(torch.zeros(1, 2), torch.zeros(1, 2),
        ...                                         torch.ones(1, 2), eps=0.)
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """The triplet margin loss with any distance (default: ``pairwise_distance``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.triplet_margin_with_distance_loss(
        ...     torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2),
        ...     distance_function=lambda a, b: (a - b).abs().sum(-1))
        tensor(0.)
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance,
                    margin, swap, reduction)
