"""``F.linear_cross_entropy``: the cross entropy of ``linear(input, linear_weight)``
logits, whole or in chunks of batch rows (``options``).

Note [Chunked linear cross entropy]
PyTorch 2.13's reference path (``options=None``) is ``cross_entropy(linear(...))`` with
the logits shaped ``(N, C, *out_features)``; this module does the same. With
``options`` (class-index int64 targets, no label smoothing, no out_features, reduction
mean/sum/none) PyTorch runs a fused op that never holds all logits at once; here the
batch is cut into the chunk size PyTorch would pick (``LinearCrossEntropyOptions._adjust``),
each chunk's losses are computed with ``reduction='none'`` in ``acc_dtype`` and joined,
then reduced as cross_entropy reduces (mean: divided by the summed class weights of the
targets not ignored). The values and gradients are those of the reference path; the
chunking bounds the size of each logits block, while autograd keeps each block for
backward. Other configurations fall back to the reference path with PyTorch's warning.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> x, w = torch.ones(2, 3), torch.eye(4, 3)
    >>> F.linear_cross_entropy(x, w, torch.tensor([0, 3]))
    tensor(1.7143)
"""

from __future__ import annotations

import math
import warnings

from ..._functions.shape import cat
from ..._tensor.tensor import Tensor
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .losses import cross_entropy

__all__: list[str] = []  # F.linear_cross_entropy (functional.py) calls _linear_cross_entropy


def _linear_cross_entropy(linear, input: Tensor, linear_weight: Tensor, target: Tensor,
                          linear_bias: Tensor | None, weight: Tensor | None, reduction: str,
                          ignore_index: int | None, label_smoothing: float,
                          options: LinearCrossEntropyOptions | None) -> Tensor:
    """F.linear_cross_entropy's body; ``linear`` is F.linear (passed in: this module is
    imported by functional.py, Note [Chunked linear cross entropy])."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunkable = (not out_features and reduction in {"mean", "sum", "none"}
                     and label_smoothing == 0.0 and str(target.dtype) == "torch.int64")
        if chunkable:
            return _chunked(linear, input, linear_weight, target, linear_bias, weight,
                            reduction, ignore_index, options)
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs "
                      "reduction in {'mean','sum','none'}, label_smoothing == 0, target.dtype"
                      " == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, "
                      f"target.dtype={target.dtype}, out_features={out_features}"
                      f", tracing=False, linear_bias.shape={bias_shape}.", stacklevel=2)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _chunked(linear, input, linear_weight, target, linear_bias, weight, reduction,
             ignore_index, options) -> Tensor:
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n = input.shape[0]
    opts = options._adjust(num_batches=n, in_features=input.shape[1],
                           num_classes=linear_weight.shape[0], dtype=input.dtype)
    acc = opts.acc_dtype
    w = linear_weight.to(acc)
    b = None if linear_bias is None else linear_bias.to(acc)
    cw = None if weight is None else weight.to(acc)
    parts = []
    for start in range(0, n, opts.batch_chunk_size):
        rows = slice(start, start + opts.batch_chunk_size)
        logits = linear(input[rows].to(acc), w, b)
        parts.append(cross_entropy(logits, target[rows], weight=cw, reduction="none",
                                   ignore_index=ignore_index))
    losses = cat(parts) if parts else input.new_zeros((0,), dtype=acc)
    if reduction == "none":
        out = losses
    elif reduction == "sum":
        out = losses.sum()
    else:
        kept = target.ne(ignore_index)
        per_row = kept.to(acc) if cw is None else \
            cw[target.masked_fill(~kept, 0)].masked_fill(~kept, 0)
        out = losses.sum() / per_row.sum()
    out = out.to(input.dtype)
    return out if batched or reduction != "none" else out.squeeze(0)
