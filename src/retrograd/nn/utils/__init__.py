"""``retrograd.nn.utils``: gradient clipping, parameter/vector conversion, variable-length
sequences (``rnn``), parametrizations (``parametrize``, ``parametrizations``), the legacy
``weight_norm``/``spectral_norm`` hooks, pruning (``prune``) and conv/linear + batch-norm
fusion.

Example:
    >>> import retrograd as torch
    >>> sorted(n for n in torch.nn.utils.__all__ if n.startswith('clip'))[:2]
    ['clip_grad_norm', 'clip_grad_norm_']
"""

from __future__ import annotations

from . import parametrizations, parametrize, rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters", "rnn",
           "parametrize", "parametrizations", "weight_norm", "remove_weight_norm",
           "spectral_norm", "remove_spectral_norm"]
