"""Deprecated module classes PyTorch still ships: ``nn.Container`` and ``nn.NLLLoss2d``.

Each warns, with PyTorch's ``FutureWarning`` and words, when it is instantiated or
subclassed (as ``typing_extensions.deprecated`` on a class does in PyTorch).

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     loss = torch.nn.NLLLoss2d()
    >>> caught[0].category.__name__, isinstance(loss, torch.nn.NLLLoss)
    ('FutureWarning', True)
"""

from __future__ import annotations

import warnings
from typing import Any

from ..._tensor.tensor import Tensor
from .loss import NLLLoss
from .module import Module

__all__ = ["Container", "NLLLoss2d"]


class _WarnsWhenUsed:
    """Mixin: warn ``_deprecation`` (FutureWarning) on instantiation and on subclassing."""

    _deprecation = ""

    def __new__(cls, *args, **kwargs):
        warnings.warn(cls._deprecation, FutureWarning, stacklevel=2)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs):
        if "_deprecation" not in cls.__dict__:  # a user's subclass, not the class itself
            warnings.warn(cls._deprecation, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)


class Container(_WarnsWhenUsed, Module):
    """Deprecated: a Module whose keyword arguments become its submodules.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     c = torch.nn.Container(fc=torch.nn.Linear(2, 1))
        >>> [name for name, _ in c.named_children()]
        ['fc']
    """

    _deprecation = ("`nn.Container` is deprecated. All of its functionality is now implemented "
                    "in `nn.Module`. Subclass that instead.")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class NLLLoss2d(_WarnsWhenUsed, NLLLoss):
    """Deprecated alias of :class:`NLLLoss` (which handles 2-D targets itself).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     loss = torch.nn.NLLLoss2d()
        >>> loss(torch.zeros(1, 2, 1, 1), torch.zeros(1, 1, 1, dtype=torch.long))
        tensor(0.)
    """

    _deprecation = ("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
                    "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss "
                    "for more details.")

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
