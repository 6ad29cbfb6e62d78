"""retrograd.Size: a tensor's shape, a tuple printed as ``torch.Size([2, 3])``.

Example:
    >>> import retrograd as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
"""

from __future__ import annotations

from functools import reduce
from operator import mul


class Size(tuple):
    """Shape of a tensor; a tuple of ints.

    Example:
        >>> import retrograd as torch
        >>> torch.Size([2, 3]).numel()
        6
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        return reduce(mul, self, 1)

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))
