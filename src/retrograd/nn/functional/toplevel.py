"""The ``torch.*`` names PyTorch gives its nn functions (``torch.conv2d``,
``torch.dropout``, ``torch.kl_div``, ...), re-exported by ``retrograd/__init__.py``.

Note [Top-level nn names]
Where ``torch.<name>`` takes the same arguments as ``torch.nn.functional.<name>`` the
top-level name *is* the nn.functional function (``torch.conv2d is F.conv2d`` here; in
PyTorch the functional form calls the native one). Where the native signature differs,
this module writes the native form and calls the functional one: the dropouts take a
required ``train`` flag (``torch.dropout(x, 0.5, True)``), the norms take their
arguments in ATen's order (``torch.batch_norm(input, weight, bias, running_mean,
running_var, training, momentum, eps, cudnn_enabled)``), ``torch.embedding`` takes the
weight first with ``padding_idx=-1`` for none, the losses take ``reduction`` as ATen's
integer (0 none, 1 mean, 2 sum; left out, it is 0 in PyTorch 2.13's bindings, so
``torch.kl_div(x, y)`` is elementwise where ``F.kl_div(x, y)`` averages),
``torch.max_pool1d`` never returns indices and ``torch.adaptive_max_pool1d`` always does.

Example:
    >>> import retrograd as torch
    >>> torch.dropout(torch.ones(3), 0.5, False)
    tensor([1., 1., 1.])
    >>> torch.kl_div(torch.zeros(2), torch.ones(2), 2)
    tensor(0.)
"""

from __future__ import annotations

from ..._core.hints import Shape, ShapeLike
from ..._tensor.tensor import Tensor
from .. import functional as F
from . import _dropout
from . import margin_losses as _loss

__all__ = [
    # the very functions of nn.functional (same signature as PyTorch's native form)
    "adaptive_avg_pool1d", "bilinear", "channel_shuffle", "native_channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "pixel_shuffle", "pixel_unshuffle",
    # the native forms
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "batch_norm",
    "instance_norm", "layer_norm", "group_norm", "embedding", "prelu", "conv_tbc", "selu",
    "selu_",
    "celu", "celu_", "threshold", "threshold_", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool3d", "adaptive_max_pool1d", "kl_div", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "poisson_nll_loss", "binary_cross_entropy_with_logits", "avg_pool1d",
]

adaptive_avg_pool1d = F.adaptive_avg_pool1d
bilinear = F.bilinear
channel_shuffle = F.channel_shuffle
native_channel_shuffle = F.channel_shuffle
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
conv_tbc = F.conv_tbc
prelu = F.prelu  # the op layer's (torch.prelu, Tensor.prelu): one PreluKernelBackward0 node

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction) -> str:
    """ATen's reduction enum (0 none, 1 mean, 2 sum) as nn.functional's string."""
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise TypeError(
            f"reduction must be an int (0: 'none', 1: 'mean', 2: 'sum') in the torch.* form, "
            f"but got {reduction!r}; nn.functional's form takes the string "
            "(torch.nn.functional.<loss>(..., reduction='mean'))")
    return _REDUCTIONS[reduction]


def _stride(kernel_size, stride):
    # ATen's default stride is the empty list: the kernel size (nn.functional's None)
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride


# ---------------------------------------------------------------------------------
# dropouts: (input, p, train), all required, as ATen's


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout in ATen's form: zero each element with probability ``p`` when ``train``.

    Example:
        >>> import retrograd as torch
        >>> torch.dropout(torch.ones(2), 0.0, True)
        tensor([1., 1.])
    """
    return _dropout(input, p, train, False)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`dropout`.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2); torch.dropout_(x, 1.0, True)
        tensor([0., 0.])
    """
    return _dropout(input, p, train, True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout (keeps selu's mean and variance) in ATen's form.

    Example:
        >>> import retrograd as torch
        >>> torch.alpha_dropout(torch.ones(2), 0.5, False)
        tensor([1., 1.])
    """
    return _dropout(input, p, train, False, alpha=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`alpha_dropout`.

    Example:
        >>> import retrograd as torch
        >>> torch.alpha_dropout_(torch.ones(2), 0.5, False)
        tensor([1., 1.])
    """
    return _dropout(input, p, train, True, alpha=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels (dims 2 and beyond share a draw), ATen's form.

    Example:
        >>> import retrograd as torch
        >>> torch.feature_dropout(torch.ones(1, 2, 3), 0.5, False).shape
        torch.Size([1, 2, 3])
    """
    return _dropout(input, p, train, False, feature=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_dropout`.

    Example:
        >>> import retrograd as torch
        >>> torch.feature_dropout_(torch.ones(1, 2), 1.0, True)
        tensor([[0., 0.]])
    """
    return _dropout(input, p, train, True, feature=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout of whole channels, ATen's form.

    Example:
        >>> import retrograd as torch
        >>> torch.feature_alpha_dropout(torch.ones(1, 2), 0.5, False)
        tensor([[1., 1.]])
    """
    return _dropout(input, p, train, False, feature=True, alpha=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_alpha_dropout`.

    Example:
        >>> import retrograd as torch
        >>> torch.feature_alpha_dropout_(torch.ones(1, 2), 0.5, False)
        tensor([[1., 1.]])
    """
    return _dropout(input, p, train, True, feature=True, alpha=True)


# ---------------------------------------------------------------------------------
# norms in ATen's argument order (the cudnn flags are accepted and have no effect)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """Batch normalization, ATen's argument order (weight and bias first).

    Example:
        >>> import retrograd as torch
        >>> torch.batch_norm(torch.tensor([[1.], [3.]]), None, None, None, None, True,
        ...                  0.1, 0.0, False)
        tensor([[-1.],
                [ 1.]])
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """Instance normalization, ATen's argument order (weight and bias first).

    Example:
        >>> import retrograd as torch
        >>> torch.instance_norm(torch.tensor([[[1., 3.]]]), None, None, None, None, True,
        ...                     0.1, 0.0, False)
        tensor([[[-1.,  1.]]])
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    """Layer normalization over the trailing ``normalized_shape`` dims.

    Example:
        >>> import retrograd as torch
        >>> torch.layer_norm(torch.tensor([1., 3.]), [2], eps=0.0)
        tensor([-1.,  1.])
    """
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """Group normalization over ``num_groups`` groups of channels.

    Example:
        >>> import retrograd as torch
        >>> torch.group_norm(torch.tensor([[1., 3.]]), 1, eps=0.0)
        tensor([[-1.,  1.]])
    """
    return F.group_norm(input, num_groups, weight, bias, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at ``indices`` (ATen's order: the weight first; a negative
    ``padding_idx`` means none).

    Example:
        >>> import retrograd as torch
        >>> torch.embedding(torch.eye(3), torch.tensor([2, 0]))
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# ---------------------------------------------------------------------------------
# activations without nn.functional's ``inplace`` flag


def selu(input: Tensor) -> Tensor:
    """SELU, ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``.

    Example:
        >>> import retrograd as torch
        >>> torch.selu(torch.tensor([0.]))
        tensor([0.])
    """
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`.

    Example:
        >>> import retrograd as torch
        >>> torch.selu_(torch.tensor([1.]))
        tensor([1.0507])
    """
    return F.selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """CELU, ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example:
        >>> import retrograd as torch
        >>> torch.celu(torch.tensor([0., 2.]))
        tensor([0., 2.])
    """
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`.

    Example:
        >>> import retrograd as torch
        >>> torch.celu_(torch.tensor([2.]))
        tensor([2.])
    """
    return F.celu(input, alpha, inplace=True)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``.

    Example:
        >>> import retrograd as torch
        >>> torch.threshold(torch.tensor([1., 3.]), 2., -1.)
        tensor([-1.,  3.])
    """
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`.

    Example:
        >>> import retrograd as torch
        >>> torch.threshold_(torch.tensor([1., 3.]), 2., 0.)
        tensor([0., 3.])
    """
    return F.threshold(input, threshold, value, inplace=True)


# ---------------------------------------------------------------------------------
# pooling: ATen's stride default is [] (the kernel size); indices as ATen returns them


def max_pool1d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike = (),
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False) -> Tensor:
    """1-D max pooling (values only).

    Example:
        >>> import retrograd as torch
        >>> torch.max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
        tensor([[3., 2.]])
    """
    return F.max_pool1d(input, kernel_size, _stride(kernel_size, stride), padding, dilation,
                        ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike = (),
                            padding: ShapeLike = 0, dilation: ShapeLike = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """1-D max pooling, values and the indices of the maxima.

    Example:
        >>> import retrograd as torch
        >>> torch.max_pool1d_with_indices(torch.tensor([[1., 3., 2., 0.]]), 2)[1]
        tensor([[1, 2]])
    """
    return F.max_pool1d(input, kernel_size, _stride(kernel_size, stride), padding, dilation,
                        ceil_mode, return_indices=True)


def max_pool2d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike = (),
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False) -> Tensor:
    """2-D max pooling (values only).

    Example:
        >>> import retrograd as torch
        >>> torch.max_pool2d(torch.arange(4.).reshape(1, 2, 2), 2)
        tensor([[[3.]]])
    """
    return F.max_pool2d(input, kernel_size, _stride(kernel_size, stride), padding, dilation,
                        ceil_mode)


def max_pool3d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike = (),
               padding: ShapeLike = 0, dilation: ShapeLike = 1, ceil_mode: bool = False) -> Tensor:
    """3-D max pooling (values only).

    Example:
        >>> import retrograd as torch
        >>> torch.max_pool3d(torch.arange(8.).reshape(1, 2, 2, 2), 2)
        tensor([[[[7.]]]])
    """
    return F.max_pool3d(input, kernel_size, _stride(kernel_size, stride), padding, dilation,
                        ceil_mode)


def avg_pool1d(input: Tensor, kernel_size: ShapeLike, stride: ShapeLike = (),
               padding: ShapeLike = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-D average pooling.

    Example:
        >>> import retrograd as torch
        >>> torch.avg_pool1d(torch.tensor([[1., 3., 2., 0.]]), 2)
        tensor([[2., 1.]])
    """
    return F.avg_pool1d(input, kernel_size, _stride(kernel_size, stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_max_pool1d(input: Tensor, output_size: ShapeLike) -> tuple[Tensor, Tensor]:
    """1-D adaptive max pooling: (values, indices), as ATen returns them.

    Example:
        >>> import retrograd as torch
        >>> torch.adaptive_max_pool1d(torch.tensor([[1., 3., 2., 0.]]), 1)
        (tensor([[3.]]), tensor([[1]]))
    """
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# ---------------------------------------------------------------------------------
# losses: reduction is ATen's integer (0 none, 1 mean, 2 sum)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """KL divergence with ``input`` as log-probabilities, elementwise unless ``reduction``
    says otherwise (1 averages over every element, nn.functional's ``'mean'``).

    Example:
        >>> import retrograd as torch
        >>> torch.kl_div(torch.zeros(2), torch.ones(2))
        tensor([0., 0.])
    """
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor,
                        margin: float = 0.0, reduction: int = 0) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced.

    Example:
        >>> import retrograd as torch
        >>> torch.margin_ranking_loss(torch.tensor([1.]), torch.tensor([2.]),
        ...                           torch.tensor([1.]))
        tensor([1.])
    """
    return _loss.margin_ranking_loss(input1, input2, target, margin,
                                     reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``, reduced.

    Example:
        >>> import retrograd as torch
        >>> torch.hinge_embedding_loss(torch.tensor([0.5, 0.25]), torch.tensor([1., -1.]), 1.0, 1)
        tensor(0.6250)
    """
    return _loss.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: int = 0) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos - margin)`` where ``-1``.

    Example:
        >>> import retrograd as torch
        >>> torch.cosine_embedding_loss(torch.ones(1, 2), torch.ones(1, 2), torch.ones(1))
        tensor([0.])
    """
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-06,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm distance, reduced.

    Example:
        >>> import retrograd as torch
        >>> torch.triplet_margin_loss(torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2),
        ...                           eps=0.0)
        tensor([0.])
    """
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool,
                     full: bool, eps: float, reduction: int) -> Tensor:
    """Poisson negative log likelihood; every argument required, as ATen's.

    Example:
        >>> import retrograd as torch
        >>> torch.poisson_nll_loss(torch.zeros(2), torch.zeros(2), True, False, 1e-8, 1)
        tensor(1.)
    """
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_reduction(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)``, ATen's order (``pos_weight`` before the
    integer ``reduction``).

    Example:
        >>> import retrograd as torch
        >>> torch.binary_cross_entropy_with_logits(torch.zeros(2), torch.ones(2), reduction=1)
        tensor(0.6931)
    """
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)
