"""The autograd Function behind ``nn.SyncBatchNorm`` in training (PyTorch's
``torch.nn.modules._functions.SyncBatchNorm``).

Its forward gathers every rank's per-channel (mean, variance, count) and combines them
into the statistics of the whole global batch; its backward all-reduces the two
per-channel gradient sums that the input gradient needs. The collectives run only when
the Function is applied, so importing this module loads no MPI.

Example:
    >>> from retrograd.nn.modules._functions import SyncBatchNorm
    >>> SyncBatchNorm.__name__
    'SyncBatchNorm'
"""

from __future__ import annotations

import numpy as np

from ..._core import dtype as D
from ..._functions.creation import zeros
from ..._tensor.tensor import Tensor, _make
from ...autograd.function import Function, once_differentiable
from ..functional import _scale_shift, _update_running_stats

__all__ = ["SyncBatchNorm", "combine_stats"]


def _dims_and_shape(x: Tensor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The reduced dims (all but 1) and the (1, C, 1, ...) shape per-channel values take."""
    nd = x.dim()
    return (0,) + tuple(range(2, nd)), (1, x.shape[1]) + (1,) * (nd - 2)


# Note [SyncBatchNorm statistics]
# Each rank sends (mean, biased variance, count) of its own slice, as float64, in one
# all_gather of 2C + 1 values; ranks with an empty slice send count 0 and are skipped.
# The pairs are folded in rank order with Chan's parallel update (PyTorch's
# batch_norm_gather_stats_with_counts folds them the same way), which handles unequal
# counts: an all_reduce of means would not. PyTorch sends 1/sqrt(var + eps) and recovers
# var from it; we send var itself, which is the same value without the rounding of the
# round trip (the wire format is internal: only retrograd ranks read it). The running
# statistics then get the global mean and the unbiased global variance var_n / (n - 1)
# through the same helper as F.batch_norm, so one rank's buffers equal those of one
# process over the whole batch.

def combine_stats(means: np.ndarray, variances: np.ndarray,
                  counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Global (mean, biased variance, count) from per-rank rows of mean, variance, count.

    Example:
        >>> import numpy as np
        >>> from retrograd.nn.modules._functions import combine_stats
        >>> m, v, n = combine_stats(np.array([[0.], [2.]]), np.array([[0.], [0.]]),
        ...                         np.array([1., 3.]))
        >>> float(m[0]), float(v[0]), n
        (1.5, 0.75, 4.0)
    """
    avg = np.zeros(means.shape[1])
    var_n = np.zeros(means.shape[1])
    n = 0.0
    for m, v, c in zip(means, variances, counts):
        if c < 1:
            continue
        factor = 1.0 / (n + c)
        var_n += v * c + (avg - m) ** 2 * (n * c * factor)
        avg = avg * (n * factor) + m * (c * factor)
        n += c
    with np.errstate(divide="ignore", invalid="ignore"):
        return avg, var_n / n, float(n)


class SyncBatchNorm(Function):
    """Batch norm over the union of the group's batches (what ``nn.SyncBatchNorm`` applies).

    ``apply(input, weight, bias, running_mean, running_var, eps, momentum, process_group,
    world_size)``; see the module docstring.

    Example:
        >>> from retrograd.nn.modules._functions import SyncBatchNorm
        >>> callable(SyncBatchNorm.apply)
        True
    """

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps,
                momentum, process_group, world_size):
        from ... import distributed as dist

        dims, shape = _dims_and_shape(input)
        channels = input.shape[1]
        count = input.numel() // channels
        if count == 1 and world_size < 2:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {count}")
        combined = zeros(2 * channels + 1, dtype=D.float64)
        if count > 0:
            x = input.detach().double()
            mean = x.mean(dims)
            d = x - mean.reshape(shape)
            combined._data[:channels] = mean._data
            combined._data[channels:-1] = (d * d).mean(dims)._data
            combined._data[-1] = count
        gathered = zeros(world_size, 2 * channels + 1, dtype=D.float64)
        dist.all_gather_into_tensor(gathered, combined, process_group)
        rows = gathered._data
        mean, var, n = combine_stats(rows[:, :channels], rows[:, channels:-1], rows[:, -1])
        mean_t = _make(mean).to(input.dtype)
        _update_running_stats(running_mean, running_var, mean_t, _make(var).to(input.dtype),
                              momentum, n)
        invstd = _make(1.0 / np.sqrt(var + eps))
        ctx.save_for_backward(input, weight)
        ctx.stats = (mean, invstd._data, n)
        ctx.process_group = process_group
        if count == 0:
            return input.detach().clone()
        out = (input - mean_t.reshape(shape)) * invstd.to(input.dtype).reshape(shape)
        return _scale_shift(out, weight, bias, shape)

    @staticmethod
    @once_differentiable  # the gradient sums are plain arrays: no double backward
    def backward(ctx, grad_output):
        from ... import distributed as dist

        x, weight = ctx.saved_tensors
        mean, invstd, n = ctx.stats
        needs = ctx.needs_input_grad
        channels = x.shape[1]
        if x.numel() == 0:
            # an empty slice still joins the all_reduce its peers wait for
            if needs[0]:
                dist.all_reduce(zeros(2 * channels, dtype=D.float64), group=ctx.process_group)
            return (None,) * 9
        dims, shape = _dims_and_shape(x)
        dy = grad_output.double()
        xmu = x.detach().double() - _make(mean).reshape(shape)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        istd = _make(invstd)
        grad_input = grad_weight = grad_bias = None
        if needs[0]:
            both = _make(np.concatenate([sum_dy._data, sum_dy_xmu._data]))
            dist.all_reduce(both, group=ctx.process_group)
            mean_dy = _make(both._data[:channels] / n).reshape(shape)
            mean_dy_xmu = _make(both._data[channels:] / n).reshape(shape)
            scale = istd if weight is None else weight.detach().double() * istd
            g = dy - mean_dy - xmu * (istd * istd).reshape(shape) * mean_dy_xmu
            grad_input = (g * scale.reshape(shape)).to(x.dtype)
        if weight is not None and needs[1]:
            grad_weight = (sum_dy_xmu * istd).to(weight.dtype)
        if weight is not None and needs[2]:
            grad_bias = sum_dy.to(weight.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None
