"""Devices: retrograd runs on the CPU; 'cuda' is refused with a clear message.

Example:
    >>> import retrograd as torch
    >>> torch.device("cpu"), torch.cuda.is_available()
    (device(type='cpu'), False)
"""

from __future__ import annotations

__all__ = ["device", "set_default_device", "get_default_device", "check_device"]

_NO_CUDA = ("retrograd runs on the CPU only (NumPy kernels); device {!r} is not available. "
            "Drop device= or use device='cpu'; `retrograd.cuda.is_available()` is False.")


class device:
    """A device description; only ``'cpu'`` (optionally ``'cpu:0'``) exists.

    Example:
        >>> import retrograd as torch
        >>> torch.device("cpu").type
        'cpu'
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu', got {type!r}")
        kind, _, idx = type.partition(":")
        if idx:
            index = int(idx)
        if kind != "cpu":
            if kind in ("cuda", "mps", "xpu", "meta", "hip", "xla"):
                raise RuntimeError(_NO_CUDA.format(type))
            raise RuntimeError(f"Expected one of cpu, cuda, ... device type at start of device "
                               f"string: {type}")
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return "device(type='cpu')"
        return f"device(type='cpu', index={self.index})"

    def __str__(self) -> str:
        return "cpu" if self.index is None else f"cpu:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self) -> int:
        return hash(("cpu", self.index))

    def __reduce__(self):
        return (device, (str(self),))


CPU = device("cpu")
_DEFAULT = [CPU]


def check_device(d) -> None:
    """Raise the clear 'CPU only' error for any device that is not the CPU."""
    if d is None or d is CPU:
        return
    if isinstance(d, int):
        raise RuntimeError(_NO_CUDA.format(f"cuda:{d}"))
    device(d)


def set_default_device(d) -> None:
    """Set the default device; only ``'cpu'`` (or None) is accepted.

    Example:
        >>> import retrograd as torch
        >>> torch.set_default_device("cpu")
    """
    check_device(d)


def get_default_device() -> device:
    """The default device (always the CPU).

    Example:
        >>> import retrograd as torch
        >>> torch.get_default_device()
        device(type='cpu')
    """
    return _DEFAULT[0]
