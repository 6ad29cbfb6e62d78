"""Devices: retrograd runs on the CPU (and makes shape-only 'meta' tensors); 'cuda' is
refused with a clear message.

Example:
    >>> import retrograd as torch
    >>> torch.device("cpu"), torch.cuda.is_available()
    (device(type='cpu'), False)
"""

from __future__ import annotations

__all__ = ["device", "set_default_device", "get_default_device", "check_device",
           "parse_device", "CPU", "META"]

_NO_CUDA = ("retrograd runs on the CPU only (NumPy kernels); device {!r} is not available. "
            "Drop device= or use device='cpu'; `retrograd.cuda.is_available()` is False.")


class device:
    """A device description: ``'cpu'`` (optionally ``'cpu:0'``), or ``'meta'``, whose
    tensors have a shape and a dtype but no data (Note [Meta tensors] in ``_meta.py``).

    Example:
        >>> import retrograd as torch
        >>> torch.device("cpu").type, torch.device("meta")
        ('cpu', device(type='meta'))
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
        if kind not in ("cpu", "meta"):
            if kind in ("cuda", "mps", "xpu", "hip", "xla"):
                raise RuntimeError(_NO_CUDA.format(type))
            raise RuntimeError(f"Expected one of cpu, cuda, ... device type at start of device "
                               f"string: {type}")
        self.type = kind
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))


CPU = device("cpu")
META = device("meta")
_DEFAULT = [CPU]


def parse_device(d) -> device | None:
    """None, ``CPU`` or ``META`` for a device argument; any other device raises the
    clear 'CPU only' error.

    Example:
        >>> from retrograd._device import parse_device
        >>> parse_device("meta"), parse_device(None)
        (device(type='meta'), None)
    """
    if d is None or d is CPU or d is META:
        return d
    if isinstance(d, int):
        raise RuntimeError(_NO_CUDA.format(f"cuda:{d}"))
    return META if device(d).type == "meta" else CPU


def check_device(d) -> None:
    """Raise the clear 'CPU only' error for any device that is not the CPU (the places
    that take ``'meta'`` call ``parse_device`` instead).

    Example:
        >>> from retrograd._device import check_device
        >>> check_device("cpu")
    """
    if parse_device(d) is META:
        raise NotImplementedError(
            "retrograd makes 'meta' tensors only with torch.empty/zeros/ones/full/rand/randn/"
            "tensor and the *_like functions, Tensor.to('meta') and Module.to('meta'): this "
            "call does not take device='meta'. Make the tensor on the CPU, or create it with "
            "one of those and move it.")


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
