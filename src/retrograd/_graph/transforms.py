"""Whether a ``retrograd.func`` transform is running the user's function (per thread).

Example:
    >>> import retrograd as torch
    >>> from retrograd._graph.transforms import LEVELS
    >>> seen = []
    >>> _ = torch.func.grad(lambda x: seen.append(LEVELS.depth) or x.sum())(torch.ones(2))
    >>> LEVELS.depth, seen
    (0, [1])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LEVELS", "call_transformed"]


# Note [Transform depth]
# torch.func refuses some things only while a transform runs the user's function
# (torch._C._are_functorch_transforms_active()): an autograd.Function without
# setup_context, for one, since the transform must be able to run its forward
# without ctx. retrograd's transforms work on the one tape (Note [Transforms on the
# tape]) and need no levels of wrapped tensors, so all that is kept is how many
# transforms are running the user's code on this thread; `Function.apply` reads it.


class _Levels(threading.local):
    """Per thread: how many func transforms are inside the user's function."""

    def __init__(self):
        self.depth = 0


LEVELS = _Levels()


def call_transformed(func: Callable, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` counted as running under a transform (Note [Transform depth]).

    Example:
        >>> from retrograd._graph.transforms import LEVELS, call_transformed
        >>> call_transformed(lambda: LEVELS.depth)
        1
    """
    LEVELS.depth += 1
    try:
        return func(*args, **kwargs)
    finally:
        LEVELS.depth -= 1
