"""``F.embedding_bag``: sums, means or maxima of bags of embedding rows, without building
the per-row embeddings one bag at a time.

Example:
    >>> import retrograd as torch
    >>> w = torch.arange(8.).reshape(4, 2)
    >>> torch.nn.functional.embedding_bag(torch.tensor([0, 1, 3]), w, torch.tensor([0, 2]),
    ...                                   mode="sum")
    tensor([[2., 4.],
            [6., 7.]])
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import no_grad
from ..._tensor.tensor import Tensor, _make
from .common import _legacy

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def embedding_renorm_(weight: Tensor, indices: np.ndarray, max_norm: float,
                      norm_type: float) -> None:
    """Scale, in place and without recording, the rows of ``weight`` that ``indices``
    reach whose ``norm_type``-norm exceeds ``max_norm`` down to ``max_norm`` (PyTorch's
    embedding_renorm_, shared by embedding and embedding_bag)."""
    with no_grad():
        rows = np.unique(indices)
        w = weight._data[rows]
        norms = np.linalg.norm(w.astype(np.float64), ord=norm_type, axis=1)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight._data[rows] = (w * scale[:, None]).astype(weight._data.dtype)
        weight._vc[0] += 1


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """The flat indices and, per bag, its (start, end) into them."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        n, per = input.shape
        starts = np.arange(n, dtype=np.int64) * per
        return input._data.reshape(-1), starts, starts + per
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    idx = input._data
    offs = offsets._data.astype(np.int64)
    if offs.size and offs[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offs[0]}")
    if offs.size and offs[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but "
                           f"got offsets[-1] of {offs[-1]}")
    if np.any(np.diff(offs) < 0):
        raise RuntimeError(f"offsets must be non-decreasing, got {offs.tolist()} (each bag "
                           "starts where the previous one does or later)")
    if include_last_offset:
        return idx, offs[:-1], offs[1:]
    return idx, offs, np.append(offs[1:], idx.size)


# Note [Bag reductions]
# embedding_bag gathers the rows of weight that the bags use (one index_select over the
# flat indices, padding_idx entries dropped) and reduces them per bag with ordinary Tensor
# ops, so gradients (to weight and per_sample_weights), second derivatives and forward
# mode follow from those ops. Sum and mean add each row into its bag's slot (index_add;
# the mean then divides by the bag's count, at least 1); an empty bag is 0 in every mode.
# Max lays the bags out as a padded (bags, longest bag) grid, fills the holes with -inf
# and takes the max along the bag axis, so each output's gradient goes to the row that
# won, as PyTorch's kernel does; the grid costs bags x longest x dim values, so it is
# used for max only.

def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce (``"sum"``, ``"mean"`` or ``"max"``) the rows of ``weight`` picked by each bag
    of ``input``: the rows of a 2-D ``input``, or the runs of a 1-D one that start at
    ``offsets``. ``per_sample_weights`` scales each row (sum mode); ``padding_idx``
    entries are left out of their bag; an empty bag gives zeros.

    Example:
        >>> import retrograd as torch
        >>> w = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])
        >>> torch.nn.functional.embedding_bag(torch.tensor([[0, 2], [1, 1]]), w, mode="max")
        tensor([[5., 6.],
                [3., 4.]])
    """
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_legacy(input.dtype)}Tensor instead (while "
            "checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    idx, starts, ends = _bags(input, offsets, include_last_offset)
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse gradients are "
                                  "not supported in retrograd; use the defaults")
    num = weight.shape[0]
    bad = (idx < 0) | (idx >= num)
    if bad.any():
        i = int(np.argmax(bad))
        raise RuntimeError(f"Index {i} of input takes value {int(idx[i])} which is not in the "
                           f"valid range [0, {num})")
    if max_norm is not None:
        embedding_renorm_(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += num
    return _reduce_bags(weight, idx, starts, ends, mode, per_sample_weights, padding_idx)


def _reduce_bags(weight: Tensor, idx: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 mode: str, per_sample_weights: Tensor | None, padding_idx: int | None):
    """Note [Bag reductions]."""
    nbags, dim = len(starts), weight.shape[1]
    lengths = ends - starts
    if mode == "max":
        return _max_bags(weight, idx, starts, lengths, padding_idx)
    bag_of = np.repeat(np.arange(nbags), lengths)  # the bag of each flat position
    keep = np.arange(idx.size)
    if padding_idx is not None:
        keep = keep[idx != padding_idx]
    rows = weight.index_select(0, _make(idx[keep].astype(np.int64)))
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1).index_select(0, _make(keep))
        rows = rows * psw.unsqueeze(1)
    out = rows.new_zeros((nbags, dim)).index_add(0, _make(bag_of[keep]), rows)
    if mode == "mean":
        count = np.bincount(bag_of[keep], minlength=nbags)
        out = out / _make(np.maximum(count, 1).astype(weight._data.dtype)[:, None])
    return out


def _max_bags(weight: Tensor, idx: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
              padding_idx: int | None) -> Tensor:
    nbags, dim = len(starts), weight.shape[1]
    width = max(int(lengths.max()) if lengths.size else 0, 1)
    step = np.arange(width, dtype=np.int64)
    valid = step[None, :] < lengths[:, None]
    pos = np.where(valid, starts[:, None] + step[None, :], 0)
    grid = idx.astype(np.int64)[pos] if idx.size else np.zeros_like(pos)
    if padding_idx is not None:
        valid &= grid != padding_idx
    rows = weight.index_select(0, _make(grid.reshape(-1))).reshape(nbags, width, dim)
    out = rows.masked_fill(_make(~valid[:, :, None]), float("-inf")).max(1).values
    return out.masked_fill(_make(~valid.any(axis=1)[:, None]), 0.0)
