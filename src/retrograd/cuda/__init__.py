"""retrograd.cuda: there is no GPU backend; these answer as a CPU-only PyTorch build does.

The queries answer (``is_available()`` is False, ``device_count()`` is 0, the memory
counters are 0), the seeding calls are accepted and ignored, and a call that needs a GPU
raises what PyTorch 2.13's CPU build raises, with the way out appended (Note [Devices
without a backend] in ``_core/device.py``).

Example:
    >>> import retrograd as torch
    >>> torch.cuda.is_available(), torch.cuda.device_count()
    (False, 0)
    >>> device = "cuda" if torch.cuda.is_available() else "cpu"
    >>> torch.ones(2, device=device).device
    device(type='cpu')
"""

from __future__ import annotations

import collections

from .._core.device import CPU_ONLY_HINT, unavailable
from .._core.device import device as _device
from .._core.runtime_flags import OutOfMemoryError

__all__ = ["OutOfMemoryError", "Event", "Stream", "amp", "can_device_access_peer",
           "current_device", "current_stream", "default_stream", "device", "device_count",
           "empty_cache", "get_arch_list", "get_device_capability", "get_device_name",
           "get_device_properties", "get_gencode_flags", "get_rng_state", "get_rng_state_all",
           "init", "initial_seed", "ipc_collect", "is_available", "is_bf16_supported",
           "is_initialized", "is_tf32_supported", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_peak_memory_stats", "seed", "seed_all",
           "set_device", "set_per_process_memory_fraction", "set_rng_state",
           "set_rng_state_all", "synchronize"]


def _not_compiled() -> AssertionError:
    """PyTorch's CPU-build error for a call that needs CUDA, with the fix appended."""
    return unavailable(_device("cuda"))


# ----------------------------------------------------------------------------------
# queries that answer


def is_available() -> bool:
    """Always False: retrograd computes with NumPy on the CPU.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.is_available()
        False
    """
    return False


def device_count() -> int:
    """Always 0.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.device_count()
        0
    """
    return 0


def is_initialized() -> bool:
    """Always False: CUDA is never initialised.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.is_initialized()
        False
    """
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as on a CPU-only PyTorch (bfloat16 works on the CPU: ``torch.autocast('cpu')``).

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.is_bf16_supported()
        False
    """
    return False


def is_tf32_supported() -> bool:
    """False: there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.is_tf32_supported()
        False
    """
    return False


def get_arch_list() -> list[str]:
    """``[]``: no CUDA architectures were compiled in.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.get_arch_list()
        []
    """
    return []


def get_gencode_flags() -> str:
    """``''``: no CUDA architectures were compiled in.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.get_gencode_flags()
        ''
    """
    return ""


def memory_allocated(device=None) -> int:
    """0 bytes: no tensor lives on a GPU.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.memory_allocated()
        0
    """
    return 0


def max_memory_allocated(device=None) -> int:
    """0 bytes, as ``memory_allocated``.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.max_memory_allocated()
        0
    """
    return 0


def memory_reserved(device=None) -> int:
    """0 bytes: there is no caching allocator.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.memory_reserved()
        0
    """
    return 0


def max_memory_reserved(device=None) -> int:
    """0 bytes, as ``memory_reserved``.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.max_memory_reserved()
        0
    """
    return 0


def memory_stats(device=None) -> collections.OrderedDict:
    """An empty ``OrderedDict``, as on a CPU-only PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.memory_stats()
        OrderedDict()
    """
    return collections.OrderedDict()


def get_rng_state_all() -> list:
    """``[]``: one state per GPU, and there are none.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.get_rng_state_all()
        []
    """
    return []


# ----------------------------------------------------------------------------------
# calls accepted and ignored (PyTorch defers them until CUDA starts, which it never does)


def manual_seed(seed: int) -> None:
    """Accepted and ignored (no GPU generators), as on a CPU-only PyTorch; seed the CPU
    with ``torch.manual_seed``.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.manual_seed(0)
    """


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as ``manual_seed``.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.manual_seed_all(0)
    """


def seed() -> None:
    """Accepted and ignored.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.seed()
    """


def seed_all() -> None:
    """Accepted and ignored.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.seed_all()
    """


def set_rng_state(new_state, device="cuda") -> None:
    """Accepted and ignored (PyTorch queues it for a CUDA start that never comes).

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.set_rng_state(torch.zeros(16, dtype=torch.uint8))
    """


def set_rng_state_all(new_states) -> None:
    """Accepted and ignored.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.set_rng_state_all([])
    """


def empty_cache() -> None:
    """Nothing to free.

    Example:
        >>> import retrograd as torch
        >>> torch.cuda.empty_cache()
    """


def set_device(device) -> None:
    """Raises AttributeError, as PyTorch's CPU build does (a negative index is a no-op).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.set_device(0)
        ... except AttributeError as e:
        ...     print(str(e).splitlines()[0])
        module 'torch._C' has no attribute '_cuda_setDevice'
    """
    if isinstance(device, int) and device < 0:
        return
    raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'" + CPU_ONLY_HINT)


def reset_peak_memory_stats(device=None) -> None:
    """Raises AttributeError, as PyTorch's CPU build does (there are no GPU statistics).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.reset_peak_memory_stats()
        ... except AttributeError as e:
        ...     print(str(e).splitlines()[0])
        module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'
    """
    raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'"
                         + CPU_ONLY_HINT)


# ----------------------------------------------------------------------------------
# calls that need a GPU: AssertionError "Torch not compiled with CUDA enabled"


def init() -> None:
    """Raises AssertionError "Torch not compiled with CUDA enabled", as PyTorch's CPU build.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.init()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def current_device() -> int:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.current_device()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def get_device_name(device=None) -> str:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.get_device_name(0)
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def get_device_capability(device=None) -> tuple[int, int]:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.get_device_capability()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def get_device_properties(device=None):
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.get_device_properties(0)
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def can_device_access_peer(device, peer_device) -> bool:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.can_device_access_peer(0, 1)
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def synchronize(device=None) -> None:
    """Raises AssertionError "Torch not compiled with CUDA enabled", as PyTorch's CPU build
    (a timing loop that synchronizes should do so only ``if torch.cuda.is_available()``).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.synchronize()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def mem_get_info(device=None) -> tuple[int, int]:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.mem_get_info()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.set_per_process_memory_fraction(0.5)
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def ipc_collect() -> None:
    """Raises AssertionError "Torch not compiled with CUDA enabled": there is no GPU.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.ipc_collect()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def get_rng_state(device="cuda"):
    """Raises AssertionError "Torch not compiled with CUDA enabled" (the CPU generator's
    state is ``torch.get_rng_state()``).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.get_rng_state()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def initial_seed() -> int:
    """Raises AssertionError "Torch not compiled with CUDA enabled" (the CPU generator's
    seed is ``torch.initial_seed()``).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.initial_seed()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def current_stream(device=None):
    """Raises AssertionError "Torch not compiled with CUDA enabled": there are no streams.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.current_stream()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


def default_stream(device=None):
    """Raises AssertionError "Torch not compiled with CUDA enabled": there are no streams.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.default_stream()
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[0])
        Torch not compiled with CUDA enabled
    """
    raise _not_compiled()


# ----------------------------------------------------------------------------------
# classes


class device:
    """Context manager selecting a GPU: made freely, but entering it with an index raises
    RuntimeError "PyTorch was compiled without CUDA support", as in PyTorch's CPU build (a
    negative index or None is a no-op).

    Example:
        >>> import retrograd as torch
        >>> with torch.cuda.device(-1):
        ...     torch.ones(1).device
        device(type='cpu')
    """

    def __init__(self, device):
        self.idx = device.index if isinstance(device, _device) else device

    def __enter__(self):
        if self.idx is not None and not (isinstance(self.idx, int) and self.idx < 0):
            raise RuntimeError("PyTorch was compiled without CUDA support" + CPU_ONLY_HINT)

    def __exit__(self, *exc) -> bool:
        return False


class Stream:
    """A CUDA stream: making one raises RuntimeError, as in PyTorch's CPU build.

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.Stream()
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[0])
        torch.cuda.Stream requires CUDA support
    """

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support" + CPU_ONLY_HINT)


class Event:
    """A CUDA event: making one raises RuntimeError, as in PyTorch's CPU build (time code
    on the CPU with ``time.perf_counter()``).

    Example:
        >>> import retrograd as torch
        >>> try:
        ...     torch.cuda.Event(enable_timing=True)
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[0])
        Tried to instantiate dummy base class Event
    """

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event" + CPU_ONLY_HINT)


from . import amp
