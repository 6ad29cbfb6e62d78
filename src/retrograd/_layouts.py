"""``torch.layout`` and ``torch.memory_format``: the singleton objects PyTorch code
passes around (``torch.strided``, ``torch.contiguous_format``, ``torch.channels_last``...).

Every retrograd tensor is dense and row-major, so ``layout`` has one value in use
(``strided``) and a ``memory_format`` argument is accepted and changes nothing: a
channels-last tensor computes the same numbers, only its strides differ in PyTorch.

Example:
    >>> import retrograd as torch
    >>> torch.ones(2).layout, torch.channels_last
    (torch.strided, torch.channels_last)
"""

from __future__ import annotations

__all__ = ["layout", "memory_format", "strided", "contiguous_format", "channels_last",
           "channels_last_3d", "preserve_format"]


class _Named:
    """An interned value printed as ``torch.<name>`` (shared by layout and memory_format)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return self._name


class layout(_Named):
    """How a tensor's elements are laid out; retrograd tensors are all ``strided``."""

    __slots__ = ()


class memory_format(_Named):
    """The order of a tensor's dimensions in memory (accepted; retrograd is row-major)."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
