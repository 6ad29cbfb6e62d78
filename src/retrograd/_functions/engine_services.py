"""The tensor functions and the buffer pool the backward engine uses, handed to it by the
function layer.

The engine sits below the op layer and imports nothing from it; ``install()``, called
by ``import retrograd`` once the op layer is loaded (as ``methods.install()`` is), gives
it what it needs (Note [Engine services] in _graph/engine.py).

Example:
    >>> import retrograd as torch
    >>> from retrograd._functions import namespace
    >>> from retrograd._graph import engine
    >>> engine._sum_to is namespace.sum_to
    True
"""

from __future__ import annotations

from .._graph import engine
from .._tensor.tensor import Tensor, _make, track_view
from ..ops import buffers
from .creation import tensor, zeros
from .namespace import stack, sum_to


def install() -> None:
    """Register the engine's tensor functions (Note [Engine services]).

    Example:
        >>> from retrograd._functions import engine_services
        >>> engine_services.install()  # done by ``import retrograd``; repeating is harmless
    """
    engine.register_tensor_ops(tensor_type=Tensor, make=_make, as_tensor=tensor, zeros=zeros,
                               sum_to=sum_to, stack=stack, pool=buffers,
                               track_view=track_view)
