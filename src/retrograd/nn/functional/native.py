"""The native ``torch.*`` forms of nn kernels whose outputs or arguments differ from
nn.functional's (issue 16): ``native_layer_norm``/``native_batch_norm``/
``native_group_norm`` (the output with the saved statistics), ``native_dropout`` (the
output with its bool mask), the recurrent cells ``lstm_cell``/``gru_cell``/
``rnn_tanh_cell``/``rnn_relu_cell`` in ATen's argument order, ``constant_pad_nd``,
``embedding_renorm_``, the generic ``convolution``, ``conv_tbc``, the ``grid_sampler``
family with its integer modes, ``affine_grid_generator`` and ``ctc_loss`` with an
integer reduction. Re-exported by ``retrograd/__init__.py``.

# Note [Native statistics]
# PyTorch's native norm kernels also return the statistics they save for backward: the
# mean and the reciprocal standard deviation (biased variance plus eps). Here the output
# is nn.functional's (same values and gradients) and the statistics are computed beside
# it without a graph: PyTorch marks them not differentiable for layer and batch norm
# (grad_fn None); for group norm it lists them as outputs of the node, and a gradient
# through them is not supported here (they come back detached). batch norm in eval mode
# returns empty statistics, as PyTorch.

Example:
    >>> import retrograd as torch
    >>> out, mean, rstd = torch.native_layer_norm(torch.tensor([[1., 3.]]), [2], None, None,
    ...                                           0.0)
    >>> mean, rstd
    (tensor([[2.]]), tensor([[1.]]))
"""

from __future__ import annotations

import numpy as np

from ..._core.grad_mode import no_grad
from ..._core.hints import Shape
from ..._functions.shape import cat, stack
from ..._tensor.tensor import Tensor, _make
from ...ops.dispatch import apply
from ...ops.public import FP32, LOWER_PRECISION_FP, autocast_category
from ...ops.records import nn as TN
from .. import functional as F
from ..modules.rnn import _gru_step, _lstm_step, _rnn_step
from . import _dropout
from .embedding_bag import embedding_renorm_ as _renorm_rows

__all__ = ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout",
           "native_norm", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
           "constant_pad_nd", "embedding_renorm_", "convolution", "conv_tbc", "grid_sampler",
           "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator", "ctc_loss",
           "embedding_bag", "lstm", "gru", "rnn_tanh", "rnn_relu"]


def _stats(x: Tensor, dims: tuple, eps: float, keepdim: bool) -> tuple:
    """(mean, 1/sqrt(biased var + eps)) over ``dims``, without a graph."""
    with no_grad():
        mean = x.mean(dims, keepdim=keepdim)
        rstd = (x.var(dims, unbiased=False, keepdim=keepdim) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input: Tensor, normalized_shape: Shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple:
    """``(layer_norm(...), mean, rstd)``, the statistics shaped to broadcast against the
    input (Note [Native statistics]).

    Example:
        >>> import retrograd as torch
        >>> [t.shape for t in torch.native_layer_norm(torch.ones(2, 3), [3], None, None, 1e-5)]
        [torch.Size([2, 3]), torch.Size([2, 1]), torch.Size([2, 1])]
    """
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(tuple(normalized_shape))
    mean, rstd = _stats(input, tuple(range(input.ndim - k, input.ndim)), eps, True)
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None,
                      training: bool, momentum: float, eps: float) -> tuple:
    """``(batch_norm(...), save_mean, save_invstd)``: the batch statistics per channel in
    training (running stats updated as batch_norm does), empty tensors in eval.

    Example:
        >>> import retrograd as torch
        >>> out, m, s = torch.native_batch_norm(torch.tensor([[1.], [3.]]), None, None, None,
        ...                                     None, True, 0.1, 0.0)
        >>> m, s
        (tensor([2.]), tensor([1.]))
    """
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)
    if not training:
        empty = _make(np.empty((0,), dtype=input._data.dtype))
        return out, empty, _make(np.empty((0,), dtype=input._data.dtype))
    mean, invstd = _stats(input, (0,) + tuple(range(2, input.ndim)), eps, False)
    return out, mean, invstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      N: int, C: int, HxW: int, group: int, eps: float) -> tuple:
    """``(group_norm(...), mean, rstd)`` with the statistics of shape ``(N, group)``.

    Example:
        >>> import retrograd as torch
        >>> out, m, s = torch.native_group_norm(torch.ones(2, 4, 3), None, None, 2, 4, 3, 2,
        ...                                     1e-5)
        >>> m.shape
        torch.Size([2, 2])
    """
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to be of size N * C * HxW = {N * C * HxW}, got "
                           f"{input.numel()} elements (N, C, HxW describe the input)")
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input.reshape(N, group, -1), (2,), eps, False)
    return out, mean, rstd


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple:
    """``(output, mask)``: dropout's output (``NativeDropoutBackward0``) and the bool mask of
    the kept elements, PyTorch's mask after the same seed; ``train=False`` keeps all.

    Example:
        >>> import retrograd as torch
        >>> torch.native_dropout(torch.ones(2), 0.5, False)
        (tensor([1., 1.]), tensor([True, True]))
    """
    data = input._data
    if train is False:  # None trains, as in PyTorch's forward
        noise = np.ones_like(data)
    else:  # the scaled keep-mask, drawn as F.dropout draws it (one Bernoulli per element)
        noise = _dropout(_make(np.ones_like(data)), p, True, False)._data
    return apply(TN.dropout, (input,), noise), _make(noise != 0)


def native_norm(input: Tensor, *args, **kwargs) -> Tensor:
    """Sparse tensors only in PyTorch; a dense tensor raises as there.

    Example:
        >>> import retrograd as torch
        >>> torch.native_norm(torch.ones(2))
        Traceback (most recent call last):
        ...
        NotImplementedError: Could not run 'aten::native_norm' with arguments from the 'CPU' backend. ...
    """  # noqa: E501
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. ... "
        "(native_norm is a sparse-tensor kernel; use torch.linalg.vector_norm or "
        "torch.norm on a dense tensor)")


def _cell_input(name: str, input: Tensor, w_ih: Tensor) -> None:
    if input.ndim == 1:  # ATen's cells take a batch only (nn.*Cell adds the batch dim)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"1) ({name} takes a (batch, input_size) input: unsqueeze(0) it)")
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} "
                           f"expected {w_ih.shape[1]}")


def lstm_cell(input: Tensor, hx: tuple[Tensor, ...] | list[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple:
    """One LSTM step in ATen's argument order; ``hx`` is ``(h, c)``, returns ``(h, c)``.

    Example:
        >>> import retrograd as torch
        >>> h, c = torch.lstm_cell(torch.ones(1, 2), (torch.zeros(1, 3), torch.zeros(1, 3)),
        ...                        torch.zeros(12, 2), torch.zeros(12, 3))
        >>> c
        tensor([[0., 0., 0.]])
    """
    h, c = hx
    _cell_input("lstm_cell", input, w_ih)
    return _lstm_step(h, c, F.linear(input, w_ih, b_ih), w_hh, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step in ATen's argument order.

    Example:
        >>> import retrograd as torch
        >>> torch.gru_cell(torch.ones(1, 2), torch.ones(1, 3), torch.zeros(9, 2),
        ...                torch.zeros(9, 3))
        tensor([[0.5000, 0.5000, 0.5000]])
    """
    _cell_input("gru_cell", input, w_ih)
    return _gru_step(hx, F.linear(input, w_ih, b_ih), w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with tanh, ATen's argument order.

    Example:
        >>> import retrograd as torch
        >>> torch.rnn_tanh_cell(torch.ones(1, 1), torch.zeros(1, 1), torch.ones(1, 1),
        ...                     torch.ones(1, 1))
        tensor([[0.7616]])
    """
    _cell_input("rnn_tanh_cell", input, w_ih)
    return _rnn_step(hx, F.linear(input, w_ih, b_ih), w_hh, b_hh, relu=False)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ReLU, ATen's argument order.

    Example:
        >>> import retrograd as torch
        >>> torch.rnn_relu_cell(torch.ones(1, 1), torch.zeros(1, 1), -torch.ones(1, 1),
        ...                     torch.ones(1, 1))
        tensor([[0.]])
    """
    _cell_input("rnn_relu_cell", input, w_ih)
    return _rnn_step(hx, F.linear(input, w_ih, b_ih), w_hh, b_hh, relu=True)


def constant_pad_nd(input: Tensor, pad: Shape, value: float = 0) -> Tensor:
    """``F.pad(input, pad, "constant", value)``: ``ConstantPadNdBackward0``.

    Example:
        >>> import retrograd as torch
        >>> torch.constant_pad_nd(torch.ones(2), [1, 0], 5.)
        tensor([5., 1., 1.])
    """
    return F.pad(input, list(pad), "constant", value)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rescale in place, without recording, the rows of ``input`` that ``indices`` reach
    whose ``norm_type``-norm exceeds ``max_norm``; returns ``input``.

    Example:
        >>> import retrograd as torch
        >>> torch.embedding_renorm_(torch.tensor([[3., 4.], [0., 1.]]), torch.tensor([0]),
        ...                         1.0, 2.0)
        tensor([[0.6000, 0.8000],
                [0.0000, 1.0000]])
    """
    _renorm_rows(input, indices._data, max_norm, norm_type)
    return input


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Shape, padding: Shape,
                dilation: Shape, transposed: bool, output_padding: Shape, groups: int) -> Tensor:
    """ATen's generic convolution: conv1d/2d/3d by the input's dims, or their transposes
    (``transposed``, the weight laid out (C_in, C_out / groups, ...)).

    Example:
        >>> import retrograd as torch
        >>> torch.convolution(torch.ones(1, 1, 3), torch.ones(1, 1, 2), None, [1], [0], [1],
        ...                   False, [0], 1)
        tensor([[[2., 2.]]])
    """
    nd = input.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D input to convolution, but got input of "
                           f"size: {list(input.shape)} (batch, channels, then 1 to 3 spatial "
                           "dims)")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, list(stride), list(padding), list(output_padding),
                  groups, list(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, list(stride), list(padding), list(dilation), groups)


@autocast_category(LOWER_PRECISION_FP)
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-D convolution of a (time, batch, channels) input with a (width, C_in, C_out)
    weight, padded by ``pad`` on both ends of time; the output is (time', batch, C_out).

    Example:
        >>> import retrograd as torch
        >>> torch.conv_tbc(torch.ones(3, 1, 1), torch.ones(2, 1, 1), torch.zeros(1)).shape
        torch.Size([2, 1, 1])
    """
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel (and the weight "
                           "3: width, in_channel, out_channel; the bias 1)")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


@autocast_category(FP32, op="grid_sampler")
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int,
                 padding_mode: int, align_corners: bool) -> Tensor:
    """``F.grid_sample`` with ATen's integer modes (interpolation 0 bilinear, 1 nearest, 2
    bicubic; padding 0 zeros, 1 border, 2 reflection).

    Example:
        >>> import retrograd as torch
        >>> torch.grid_sampler(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), 0, 0,
        ...                    False)
        tensor([[[[1.]]]])
    """
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                         _PADDING[padding_mode], align_corners)


def _grid_sampler_nd(nd: int):
    def sampler(input: Tensor, grid: Tensor, interpolation_mode: int,
                padding_mode: int, align_corners: bool) -> Tensor:
        if input.ndim != nd + 2:
            raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    sampler.__name__ = sampler.__qualname__ = f"grid_sampler_{nd}d"
    sampler.__doc__ = (f"``grid_sampler`` of a {nd + 2}-D input.\n\n    Example:\n"
                       f"        >>> import retrograd as torch\n"
                       f"        >>> torch.grid_sampler_{nd}d(torch.ones((1, 1) + (2,) * {nd}),"
                       f" torch.zeros((1,) + (1,) * {nd} + ({nd},)), 0, 0, False).numel()\n"
                       f"        1\n    ")
    return sampler


grid_sampler_2d = autocast_category(FP32)(_grid_sampler_nd(2))
grid_sampler_3d = autocast_category(FP32)(_grid_sampler_nd(3))


def affine_grid_generator(theta: Tensor, size: Shape, align_corners: bool) -> Tensor:
    """``F.affine_grid(theta, size, align_corners)``, ATen's required arguments.

    Example:
        >>> import retrograd as torch
        >>> torch.affine_grid_generator(torch.tensor([[[1., 0, 0], [0, 1, 0]]]),
        ...                             [1, 1, 1, 2], False).shape
        torch.Size([1, 1, 2, 2])
    """
    return F.affine_grid(theta, list(size), align_corners)


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


@autocast_category(FP32)
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Shape,
             target_lengths: Tensor | Shape, blank: int = 0, reduction: int = 1,
             zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss`` with ATen's integer ``reduction`` (0 none, 1 mean, 2 sum) and the
    log-probabilities as given (no log_softmax).

    Example:
        >>> import retrograd as torch
        >>> lp = torch.full((2, 1, 2), 0.5).log()
        >>> torch.ctc_loss(lp, torch.tensor([[1]]), [2], [1], 0, 2)
        tensor(0.2877)
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _REDUCTIONS[reduction], zero_infinity)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple:
    """ATen's embedding_bag: ``(output, offset2bag, bag_size, max_indices)``, the output
    ``F.embedding_bag``'s (mode 0 sum, 1 mean, 2 max) and the three bookkeeping tensors as
    PyTorch's CPU kernel fills them: for sum, zeros (and offset2bag empty for float32);
    otherwise
    each index's bag, each bag's count of non-padding indices, and for max the row that
    won each column (0 in an empty bag; for mean, the counts again).

    Example:
        >>> import retrograd as torch
        >>> out, o2b, size, idx = torch.embedding_bag(torch.eye(3), torch.tensor([0, 2, 1]),
        ...                                           torch.tensor([0, 2]), mode=2)
        >>> o2b, size, idx
        (tensor([0, 0, 1]), tensor([2, 1]), tensor([[0, 0, 2],
                [1, 1, 1]]))
    """
    if indices.ndim != 1:
        raise RuntimeError(f"torch.embedding_bag takes 1-D indices with offsets, got "
                           f"{indices.ndim}-D (use nn.functional.embedding_bag for a 2-D "
                           "input of fixed-size bags)")
    out = F.embedding_bag(indices, weight, offsets, None, 2.0, scale_grad_by_freq,
                          _BAG_MODES[mode], sparse, per_sample_weights, include_last_offset,
                          padding_idx)
    nbags = out.shape[0]
    idx = indices._data.astype(np.int64)
    starts = offsets._data.astype(np.int64)[:nbags]
    bag = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    if mode == 0:  # PyTorch's float32 sum kernel leaves offset2bag empty, float64's fills it
        zeros = np.zeros(nbags, dtype=np.int64)
        o2b = np.empty(0, dtype=np.int64) if weight._data.dtype == np.float32 else bag
        return out, _make(o2b), _make(zeros), _make(zeros.copy())
    keep = np.ones(idx.size, bool) if padding_idx is None else idx != padding_idx
    size = np.bincount(bag[keep], minlength=nbags).astype(np.int64)
    if mode == 1:
        return out, _make(bag), _make(size), _make(size.copy())
    w = weight._data
    best = np.zeros((nbags, w.shape[1]), dtype=np.int64)
    for b in range(nbags):
        rows = idx[(bag == b) & keep]
        if rows.size:
            best[b] = rows[np.argmax(w[rows], axis=0)]
    return out, _make(bag), _make(size), _make(best)


# Note [Native recurrent layers]
# torch.lstm/gru/rnn_tanh/rnn_relu run a whole stack of recurrent layers from a flat list
# of weights, PyTorch's order: per layer, per direction, w_ih, w_hh (then b_ih, b_hh when
# has_biases). Each step is the cell's step (modules/rnn.py); a reversed direction reads
# the sequence backwards; between layers, dropout in training. Packed sequences (the
# batch_sizes overloads) and LSTM projections are not taken here.
def _stacked(kind: str, input: Tensor, hx, params, has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple:
    if not isinstance(input, Tensor) or input.ndim != 3:
        raise RuntimeError(f"{kind}: expected a 3-D input (seq, batch, feature; batch first "
                           "with batch_first), not a packed sequence (use nn."
                           f"{kind.upper() if kind != 'rnn_tanh' else 'RNN'} for those)")
    ndir = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    params = list(params)
    if len(params) != num_layers * ndir * per:
        raise RuntimeError(f"{kind}: expected {num_layers * ndir * per} parameters "
                           f"({num_layers} layers x {ndir} directions x {per}), got "
                           f"{len(params)} (LSTM projections are not supported here)")
    h0, c0 = hx if kind == "lstm" else (hx, None)
    x = input.transpose(0, 1) if batch_first else input
    steps = x.shape[0]
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(ndir):
            k = layer * ndir + d
            w_ih, w_hh, *bias = params[k * per:(k + 1) * per]
            b_ih, b_hh = bias if bias else (None, None)
            pre = F.linear(x, w_ih, b_ih)
            h = h0[k]
            c = c0[k] if c0 is not None else None
            ys = [None] * steps
            for t in (reversed(range(steps)) if d else range(steps)):
                if kind == "lstm":
                    h, c = _lstm_step(h, c, pre[t], w_hh, b_hh)
                elif kind == "gru":
                    h = _gru_step(h, pre[t], w_hh, b_hh)
                else:
                    h = _rnn_step(h, pre[t], w_hh, b_hh, kind == "rnn_relu")
                ys[t] = h
            outs.append(stack(ys, 0))
            h_n.append(h)
            c_n.append(c)
        x = cat(outs, 2) if ndir == 2 else outs[0]
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first else x
    if kind == "lstm":
        return out, stack(h_n, 0), stack(c_n, 0)
    return out, stack(h_n, 0)


def lstm(input: Tensor, hx: tuple[Tensor, ...] | list[Tensor],
         params: tuple[Tensor, ...] | list[Tensor], has_biases: bool, num_layers: int,
         dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """A stack of LSTM layers from a flat weight list: ``(output, h_n, c_n)`` (Note
    [Native recurrent layers]).

    Example:
        >>> import retrograd as torch
        >>> z = torch.zeros(1, 1, 1)
        >>> out, h, c = torch.lstm(torch.ones(3, 1, 2), (z, z),
        ...                        [torch.zeros(4, 2), torch.zeros(4, 1)], False, 1, 0.0,
        ...                        False, False, False)
        >>> out.shape, h.shape
        (torch.Size([3, 1, 1]), torch.Size([1, 1, 1]))
    """
    return _stacked("lstm", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def gru(input: Tensor, hx: Tensor, params: tuple[Tensor, ...] | list[Tensor], has_biases: bool,
        num_layers: int, dropout: float, train: bool, bidirectional: bool,
        batch_first: bool) -> tuple[Tensor, Tensor]:
    """A stack of GRU layers from a flat weight list: ``(output, h_n)``.

    Example:
        >>> import retrograd as torch
        >>> out, h = torch.gru(torch.ones(3, 1, 2), torch.zeros(1, 1, 1),
        ...                    [torch.zeros(3, 2), torch.zeros(3, 1)], False, 1, 0.0, False,
        ...                    False, False)
        >>> out.shape
        torch.Size([3, 1, 1])
    """
    return _stacked("gru", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def rnn_tanh(input: Tensor, hx: Tensor, params: tuple[Tensor, ...] | list[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """A stack of Elman layers with tanh from a flat weight list: ``(output, h_n)``.

    Example:
        >>> import retrograd as torch
        >>> out, h = torch.rnn_tanh(torch.ones(2, 1, 1), torch.zeros(1, 1, 1),
        ...                         [torch.ones(1, 1), torch.zeros(1, 1)], False, 1, 0.0,
        ...                         False, False, False)
        >>> h
        tensor([[[0.7616]]])
    """
    return _stacked("rnn_tanh", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def rnn_relu(input: Tensor, hx: Tensor, params: tuple[Tensor, ...] | list[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """A stack of Elman layers with ReLU from a flat weight list: ``(output, h_n)``.

    Example:
        >>> import retrograd as torch
        >>> out, h = torch.rnn_relu(torch.ones(2, 1, 1), torch.zeros(1, 1, 1),
        ...                         [torch.ones(1, 1), torch.ones(1, 1)], False, 1, 0.0,
        ...                         False, False, False)
        >>> h
        tensor([[[2.]]])
    """
    return _stacked("rnn_relu", input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)
