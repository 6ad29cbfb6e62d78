"""The batch-norm kernels behind ``SyncBatchNorm`` at ``torch.*`` level: per-process
statistics, their reduction across processes, the elementwise normalisation and the two
halves of its backward.

# Note [SyncBatchNorm kernels]
# PyTorch builds these for CUDA only: its CPU build raises NotImplementedError for all
# but ``batch_norm_update_stats``. They are plain arithmetic on per-channel statistics,
# so here they run on the CPU, written with Tensor ops (differentiable like any
# composite), and are held to what they stand for: stats + elemt give batch_norm's
# training output, backward_reduce + backward_elemt give batch_norm's input, weight and
# bias gradients, and gather_stats merges per-process statistics into those of the whole
# batch (tests/ops/test_tensor_ops_torchops.py). Statistics: the mean and ``invstd =
# 1/sqrt(var + eps)`` with the biased variance; the running variance is updated with the
# unbiased one, as batch_norm.

Example:
    >>> import retrograd as torch
    >>> mean, invstd = torch.batch_norm_stats(torch.tensor([[1.], [3.]]), 0.0)
    >>> mean, invstd
    (tensor([2.]), tensor([1.]))
"""

from __future__ import annotations

from ..._core.grad_mode import no_grad
from ..._functions.creation import full
from ..._tensor.tensor import Tensor

__all__ = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _reduce_dims(x: Tensor) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(v: Tensor, x: Tensor) -> Tensor:
    """A (C,) tensor shaped to broadcast along ``x``'s channel dim."""
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _update_running(running_mean, running_var, mean, var, n, momentum) -> None:
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            unbiased = var.detach() * (n / max(n - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)


def batch_norm_stats(input: Tensor, eps: float) -> tuple:
    """Per-channel ``(mean, invstd)`` of ``input`` (N, C, ...) (Note [SyncBatchNorm kernels]).

    Example:
        >>> import retrograd as torch
        >>> [t.shape for t in torch.batch_norm_stats(torch.ones(4, 3, 2), 1e-5)]
        [torch.Size([3]), torch.Size([3])]
    """
    dims = _reduce_dims(input)
    return input.mean(dims), (input.var(dims, unbiased=False) + eps).rsqrt()


def batch_norm_elemt(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                     mean: Tensor, invstd: Tensor, eps: float) -> Tensor:
    """``(input - mean) * invstd * weight + bias`` per channel (``eps`` is unused, as in
    PyTorch: it is already in ``invstd``).

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm_elemt(torch.tensor([[1.], [3.]]), None, None,
        ...                        torch.tensor([2.]), torch.tensor([1.]), 0.0)
        tensor([[-1.],
                [ 1.]])
    """
    out = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
    if weight is not None:
        out = out * _per_channel(weight, input)
    if bias is not None:
        out = out + _per_channel(bias, input)
    return out


def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor,
                                        invstd: Tensor, running_mean: Tensor | None,
                                        running_var: Tensor | None, momentum: float,
                                        eps: float, counts: Tensor) -> tuple:
    """Merge per-process statistics (``mean``/``invstd`` of shape (world, C), ``counts``
    elements per channel in each) into the whole batch's ``(mean, invstd)``; updates the
    running statistics in place.

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm_gather_stats_with_counts(
        ...     torch.ones(1, 1), torch.tensor([[1.], [3.]]), torch.tensor([[1.], [1.]]),
        ...     None, None, 0.1, 0.0, torch.tensor([2., 2.]))
        (tensor([2.]), tensor([0.7071]))
    """
    c = counts.to(mean.dtype).reshape(-1, 1)
    n = c.sum()
    var_each = invstd.pow(-2) - eps
    total_mean = (mean * c).sum(0) / n
    var = ((var_each + (mean - total_mean) ** 2) * c).sum(0) / n
    _update_running(running_mean, running_var, total_mean, var, float(n.item()), momentum)
    return total_mean, (var + eps).rsqrt()


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor,
                            running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: float, eps: float, count: int) -> tuple:
    """``batch_norm_gather_stats_with_counts`` with the same ``count`` in every process.

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm_gather_stats(torch.ones(1, 1), torch.tensor([[1.], [3.]]),
        ...                               torch.tensor([[1.], [1.]]), None, None, 0.1, 0.0, 2)
        (tensor([2.]), tensor([0.7071]))
    """
    counts = full((mean.shape[0],), float(count), dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean,
                                               running_var, momentum, eps, counts)


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor,
                               invstd: Tensor, weight: Tensor | None, input_g: bool,
                               weight_g: bool, bias_g: bool) -> tuple:
    """Per-channel ``(sum_dy, sum_dy_xmu, grad_weight, grad_bias)``, each None where its
    flag (``input_g`` for the first two) is off.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[1.], [3.]])
        >>> torch.batch_norm_backward_reduce(torch.ones(2, 1), x, torch.tensor([2.]),
        ...                                  torch.tensor([1.]), None, True, True, True)
        (tensor([2.]), tensor([0.]), tensor([0.]), tensor([2.]))
    """
    dims = _reduce_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _per_channel(mean, input))).sum(dims)
    return (sum_dy if input_g else None, sum_dy_xmu if input_g else None,
            sum_dy_xmu * invstd if weight_g else None, sum_dy if bias_g else None)


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor,
                              invstd: Tensor, weight: Tensor | None, sum_dy: Tensor,
                              sum_dy_xmu: Tensor, count: Tensor) -> Tensor:
    """The input gradient from the all-reduced ``sum_dy``/``sum_dy_xmu`` and the element
    counts of every process.

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm_backward_elemt(torch.ones(2, 1), torch.tensor([[1.], [3.]]),
        ...     torch.tensor([2.]), torch.tensor([1.]), None, torch.tensor([2.]),
        ...     torch.tensor([0.]), torch.tensor([2]))
        tensor([[0.],
                [0.]])
    """
    n = count.sum().to(input.dtype)
    inv = _per_channel(invstd, input)
    xmu = input - _per_channel(mean, input)
    g = grad_out - _per_channel(sum_dy, input) / n \
        - xmu * inv * inv * _per_channel(sum_dy_xmu, input) / n
    scale = inv if weight is None else inv * _per_channel(weight, input)
    return g * scale


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float) -> tuple:
    """``(mean, biased var)`` per channel; updates the running statistics in place (the
    variance unbiased), as batch_norm does in training.

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm_update_stats(torch.tensor([[1.], [3.]]), None, None, 0.1)
        (tensor([2.]), tensor([1.]))
    """
    dims = _reduce_dims(input)
    mean, var = input.mean(dims), input.var(dims, unbiased=False)
    n = input.numel() // max(input.shape[1], 1)
    _update_running(running_mean, running_var, mean, var, n, momentum)
    return mean, var
