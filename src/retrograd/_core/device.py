"""Devices: retrograd runs on the CPU (and makes shape-only 'meta' tensors). As in PyTorch,
``device("cuda")`` is a plain description; making or moving a tensor there raises what a
CPU-only PyTorch build raises, with the way out appended (Note [Devices without a backend]).

Example:
    >>> import retrograd as torch
    >>> torch.device("cpu"), torch.cuda.is_available()
    (device(type='cpu'), False)
"""

from __future__ import annotations

__all__ = ["device", "set_default_device", "get_default_device", "check_device",
           "parse_device", "check_map_location", "unavailable", "cuda_unavailable", "CPU",
           "META", "DEVICE_TYPES", "CPU_ONLY_HINT"]

#: the device types PyTorch's ``torch.device`` accepts, in the order its error lists them
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")

# Note [Devices without a backend]
# PyTorch's CPU-only build accepts torch.device("cuda") (a description, compared and
# printed like any other) and raises only when a tensor is made on or moved to it:
# AssertionError "Torch not compiled with CUDA enabled" for cuda (xpu and mtia alike),
# RuntimeError "Cannot access accelerator device when none is available." for a bare
# index (.cuda(0), .to(0)), RuntimeError "PyTorch is not linked with support for mps
# devices" for the others. retrograd has only the CPU (and 'meta'), so it raises the same
# types with the same first line, which is what people search for, and appends
# CPU_ONLY_HINT, the fix. Checks at run time such as `torch.cuda.is_available()` and
# `x.device == torch.device("cuda")` work unchanged. (Two differences: a factory given
# device="mps" raises the RuntimeError where PyTorch's says NotImplementedError "Could not
# run 'aten::empty.memory_format' ...", and set_default_device("cuda") raises at once where
# PyTorch's fails at the next factory call.)

#: appended to every 'no such device' error (Note [Devices without a backend])
CPU_ONLY_HINT = ("\n(retrograd runs on the CPU only, with NumPy kernels: use device=\"cpu\", or "
                 "choose the device at run time with `device = \"cuda\" if "
                 "torch.cuda.is_available() else \"cpu\"`.)")

_NOT_COMPILED = {"cuda": "CUDA", "xpu": "XPU", "mtia": "MTIA"}


class device:
    """A device description: ``'cpu'`` (optionally ``'cpu:0'``), or ``'meta'``, whose
    tensors have a shape and a dtype but no data (Note [Meta tensors] in ``_core/meta.py``).
    Any other device type PyTorch knows (``'cuda:0'``, ``'mps'``) can be described and
    compared, but a tensor made there raises (Note [Devices without a backend]).

    Example:
        >>> import retrograd as torch
        >>> torch.device("cpu").type, torch.device("meta")
        ('cpu', device(type='meta'))
        >>> torch.device("cuda", 0), torch.ones(1).device == torch.device("cuda")
        (device(type='cuda', index=0), False)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if isinstance(type, int) and not isinstance(type, bool):  # device(0): an accelerator
            raise unavailable(type)
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu', got {type!r}")
        kind, colon, idx = type.partition(":")
        if kind not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                               f"of device string: {type}")
        if colon:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
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


def unavailable(d: device | int) -> Exception:
    """The error PyTorch's CPU-only build raises for a tensor made on or moved to ``d`` (a
    device other than the CPU and 'meta', or an accelerator index), with the fix appended
    (Note [Devices without a backend]).

    Example:
        >>> from retrograd._core.device import device, unavailable
        >>> e = unavailable(device("cuda"))
        >>> type(e).__name__, str(e).splitlines()[0]
        ('AssertionError', 'Torch not compiled with CUDA enabled')
    """
    if isinstance(d, int):
        if d < 0:
            return RuntimeError("Device index must not be negative")
        return RuntimeError("Cannot access accelerator device when none is available."
                            + CPU_ONLY_HINT)
    if d.type in _NOT_COMPILED:
        return AssertionError(f"Torch not compiled with {_NOT_COMPILED[d.type]} enabled"
                              + CPU_ONLY_HINT)
    return RuntimeError(f"PyTorch is not linked with support for {d.type} devices"
                        + CPU_ONLY_HINT)


def cuda_unavailable(d=None) -> Exception:
    """What PyTorch's CPU-only build raises for ``Tensor.cuda(d)`` (``d`` None, an index,
    or a CUDA device): ``unavailable`` of that target.

    Example:
        >>> from retrograd._core.device import cuda_unavailable
        >>> type(cuda_unavailable()).__name__, type(cuda_unavailable(0)).__name__
        ('AssertionError', 'RuntimeError')
    """
    if d is None:
        return unavailable(device("cuda"))
    if isinstance(d, int) and not isinstance(d, bool):
        return unavailable(d)
    dev = device(d)
    if dev.type != "cuda":
        return RuntimeError("Invalid device, must be cuda device")
    return unavailable(dev)


def parse_device(d) -> device | None:
    """None, ``CPU`` or ``META`` for a device argument; any other device raises what a
    CPU-only PyTorch raises (``unavailable``).

    Example:
        >>> from retrograd._core.device import parse_device
        >>> parse_device("meta"), parse_device(None)
        (device(type='meta'), None)
    """
    if d is None or d is CPU or d is META:
        return d
    if isinstance(d, int) and not isinstance(d, bool):
        raise unavailable(d)
    dev = d if isinstance(d, device) else device(d)
    if dev.type == "cpu":
        return CPU
    if dev.type == "meta":
        return META
    raise unavailable(dev)


def check_device(d) -> None:
    """Raise what a CPU-only PyTorch raises for any device that is not the CPU (the
    places that take ``'meta'`` call ``parse_device`` instead).

    Example:
        >>> from retrograd._core.device import check_device
        >>> check_device("cpu")
    """
    if parse_device(d) is META:
        raise NotImplementedError(
            "retrograd makes 'meta' tensors only with torch.empty/zeros/ones/full/rand/randn/"
            "tensor and the *_like functions, Tensor.to('meta') and Module.to('meta'): this "
            "call does not take device='meta'. Make the tensor on the CPU, or create it with "
            "one of those and move it.")


_LOAD_ON_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                 "is False. If you are running on a CPU-only machine, please use torch.load with "
                 "map_location=torch.device('cpu') to map your storages to the CPU.")


def check_map_location(d) -> None:
    """``check_device`` for a ``map_location`` target of ``torch.load`` (a string or a
    device): a CUDA target raises PyTorch's load error, RuntimeError "Attempting to
    deserialize object on a CUDA device ...", with the fix appended.

    Example:
        >>> from retrograd._core.device import check_map_location
        >>> check_map_location("cpu")
    """
    dev = device(d) if isinstance(d, str) else d
    if isinstance(dev, device) and dev.type == "cuda":
        raise RuntimeError(_LOAD_ON_CUDA + CPU_ONLY_HINT)
    check_device(dev)


def set_default_device(d: device | str | int | None) -> None:
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
