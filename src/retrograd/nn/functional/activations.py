"""Shrink and randomized activations of ``retrograd.nn.functional``, the in-place
functional form ``rrelu_`` and ``gumbel_softmax`` (re-exported there; ``F.elu_`` & co live
in functional.py next to the functions they call).

Note [RReLU draws]: PyTorch's CPU ``rrelu_with_noise`` walks the input in order and,
for each element <= 0 only, draws one double ``uniform_real_distribution(lower, upper)``
(``random64()``: 53 bits) from the generator, casts it to the input's dtype and
multiplies; positive elements get slope 1 and no draw. ``rrelu`` here draws the same
numbers from retrograd's generator, so after the same ``manual_seed`` it prints
PyTorch's values; the gradient is the noise (Note [RReLU record]). In eval mode the
slope is the mean ``(lower + upper) / 2`` (a leaky_relu), drawing nothing.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> F.softshrink(torch.tensor([-1., 0.2, 2.]))
    tensor([-0.5000,  0.0000,  1.5000])
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._functions.creation import empty_like, zeros_like
from ..._functions.inplace import _inplace
from ..._functions.native_forms import prelu
from ..._functions.shrink import hardshrink, softshrink
from ..._functions.softmax import softmax
from ..._random import rng
from ..._tensor.tensor import Tensor, _make
from ...ops.batch_rules import random_under_vmap
from ...ops.dispatch import apply
from ...ops.records import table as T
from .common import _check_float

__all__ = ["hardshrink", "softshrink", "rrelu", "rrelu_", "gumbel_softmax", "prelu"]


def _rrelu_slopes(input: Tensor, lower: float, upper: float, training: bool,
                  generator=None) -> Tensor:
    """The per-element slopes of RReLU: drawn in training (Note [RReLU draws]), the mean
    slope on the non-positive elements in eval (Note [RReLU record])."""
    x = input._data
    nonpos = x <= 0
    if not training:
        return _make(np.where(nonpos, (lower + upper) / 2, 1).astype(x.dtype))
    u = rng.uniform(generator, int(nonpos.sum()), np.float64)
    noise = np.ones(x.size, dtype=x.dtype)
    noise[nonpos.reshape(-1)] = (u * (upper - lower) + lower).astype(x.dtype)
    return _make(noise.reshape(x.shape))


def _check_rrelu(input: Tensor, lower: float, upper: float, training: bool) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    # PyTorch's kernel: rrelu_with_noise in training, leaky_relu (the mean slope) in eval
    _check_float(input, "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu")


@random_under_vmap
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] per element in training, the
    mean slope in eval (Note [RReLU draws]).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.rrelu(torch.tensor([-3., 3.]), 0.1, 0.3)
        tensor([-0.6000,  3.0000])
    """
    _check_rrelu(input, lower, upper, training)
    slopes = _rrelu_slopes(input, lower, upper, training)
    if inplace:  # the node of the in-place form saves no input (RreluWithNoiseBackward1)
        return _inplace(input, apply(T.rrelu_with_noise_result, (input, slopes)))
    return apply(T.rrelu_with_noise, (input, slopes))


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place ``rrelu``.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.rrelu_(torch.tensor([-3., 3.]), 0.1, 0.3)
        tensor([-0.6000,  3.0000])
    """
    return rrelu(input, lower, upper, training, inplace=True)


@random_under_vmap
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) drawn as PyTorch's
    ``-empty_like(logits).exponential_().log()``; ``hard``: the one-hot of the argmax in
    the forward, the soft sample's gradient (straight-through).

    Example:
        >>> import retrograd as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.nn.functional.gumbel_softmax(torch.zeros(3), hard=True)
        tensor([0., 0., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
