"""Argument helpers shared by the layer modules (PyTorch's ``torch.nn.modules.utils``).

Example:
    >>> from retrograd.nn.modules.utils import _tuple
    >>> _tuple(3, 2), _tuple([1, 2], 2), _tuple([4], 3, repeat_single=True)
    ((3, 3), (1, 2), (4, 4, 4))
"""

from __future__ import annotations

__all__: list[str] = []


def _tuple(x, n: int, repeat_single: bool = False) -> tuple:
    """``x`` as a tuple: a number repeated ``n`` times, a sequence as it is (with
    ``repeat_single``, a one-element sequence repeated ``n`` times, as the conv layers
    read ``padding=[1]``).

    Example:
        >>> from retrograd.nn.modules.utils import _tuple
        >>> _tuple(1, 4), _tuple((1, 2, 3, 4), 4)
        ((1, 1, 1, 1), (1, 2, 3, 4))
    """
    if isinstance(x, (tuple, list)):
        return tuple(x) * n if repeat_single and len(x) == 1 else tuple(x)
    return (x,) * n
