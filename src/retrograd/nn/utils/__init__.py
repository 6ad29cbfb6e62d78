"""``retrograd.nn.utils``: gradient clipping and parameter/vector conversion.

Example:
    >>> import retrograd as torch
    >>> sorted(n for n in torch.nn.utils.__all__ if n.startswith('clip'))[:2]
    ['clip_grad_norm', 'clip_grad_norm_']
"""

from __future__ import annotations

from . import stateless
from .clip_grad import (
                        clip_grad_norm,
                        clip_grad_norm_,
                        clip_grad_value_,
                        clip_grads_with_norm_,
                        get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters"]
