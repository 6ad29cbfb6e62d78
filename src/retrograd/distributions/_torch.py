"""The retrograd names the distributions are written with, gathered in one namespace so
their code reads like PyTorch's (``torch.log1p(x)``, ``torch.rand(shape)``).

Example:
    >>> from retrograd.distributions import _torch as torch
    >>> torch.log1p(torch.zeros(2))
    tensor([0., 0.])
"""

from __future__ import annotations

from .._core.dtype import bool, float32, get_default_dtype, int64, long  # noqa: F401
from .._core.grad_mode import enable_grad, no_grad  # noqa: F401
from .._core.size import Size  # noqa: F401
from .._functions.creation import *  # noqa: F403
from .._functions.namespace import *  # noqa: F403
from .._functions.namespace import abs, max, min, pow, sum  # noqa: F401
from .._tensor.tensor import Tensor  # noqa: F401
from ..nn import functional as F  # noqa: F401
