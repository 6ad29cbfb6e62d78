"""Padding layers: Zero/Constant/Reflection/Replication/CircularPad1d/2d/3d (on ``F.pad``).

Example:
    >>> import retrograd as torch
    >>> torch.nn.ZeroPad1d(1)(torch.tensor([[1., 2.]]))
    tensor([[0., 1., 2., 0.]])
"""

from __future__ import annotations

from ..._tensor.tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _tuple

__all__ = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication",
                                         "Circular") for n in (1, 2, 3)]


class _PadNd(Module):
    _mode = "constant"
    _n = 1

    def __init__(self, padding: int | tuple[int, int]) -> None:
        super().__init__()
        self.padding = _tuple(padding, 2 * self._n)  # (left, right, top, bottom, ...)

    def extra_repr(self) -> str:
        return f"{self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | tuple[int, int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | tuple[int, int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _make_pad(kind: str, n: int, base: type) -> type:
    mode = {"Reflection": "reflect", "Replication": "replicate", "Circular": "circular"}.get(kind)
    attrs = {"_n": n, "__module__": __name__, "__doc__": (
        f"Pad the last {n} dim(s) {'with ' + mode if mode else 'with a ' + kind.lower()} "
        f"padding (``F.pad(x, padding, {mode or 'constant'!r})``).\n\n"
        "    Example:\n        >>> import retrograd as torch\n"
        f"        >>> torch.nn.{kind}Pad{n}d({'1, 0.5' if kind == 'Constant' else 1})"
        f"(torch.ones({', '.join(['2'] * (n + 1))})).shape\n"
        f"        torch.Size([{', '.join(['2'] + ['4'] * n)}])\n")}
    if mode:
        attrs["_mode"] = mode
    return type(f"{kind}Pad{n}d", (base,), attrs)


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_make_pad("Zero", n, _ZeroPadNd) for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (_make_pad("Constant", n, _ConstantPadNd)
                                               for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_make_pad("Reflection", n, _PadNd)
                                                     for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_make_pad("Replication", n, _PadNd)
                                                        for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_make_pad("Circular", n, _PadNd)
                                               for n in (1, 2, 3))
