"""The device-state and debugging names of ``torch.utils.checkpoint``:
``DefaultDeviceType``, ``get_device_states``/``set_device_states``,
``set_checkpoint_debug_enabled`` and ``GraphExecGroup``.

Note [Checkpoint device states]
PyTorch saves and restores the RNG state of each accelerator that a checkpointed
function's tensor arguments live on; the CPU generator is handled by itself
(``preserve_rng_state``). Every retrograd tensor is on the CPU, so the per-device lists
are empty, as PyTorch's are for CPU tensors, and the default device type is ``"cpu"``
(what PyTorch reports with no accelerator).

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.checkpoint import get_device_states
    >>> get_device_states(torch.ones(2), 3)
    ([], [])
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from .._tensor.tensor import Tensor

__all__ = ["DefaultDeviceType", "GraphExecGroup", "get_device_states", "set_device_states",
           "set_checkpoint_debug_enabled"]


class DefaultDeviceType:
    """The device type whose RNG states checkpointing saves when no argument names one.

    Example:
        >>> from retrograd.utils.checkpoint import DefaultDeviceType
        >>> DefaultDeviceType.get_device_type()
        'cpu'
    """

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"  # no accelerator here
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list[int], list[Tensor]]:
    """The ids and RNG states of the accelerators the tensor arguments are on: none
    (Note [Checkpoint device states]).

    Example:
        >>> from retrograd.utils.checkpoint import get_device_states
        >>> get_device_states()
        ([], [])
    """
    return [], []


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore accelerator RNG states saved by ``get_device_states``: with no accelerator
    there are none to restore; a non-empty list for a device type other than ``"meta"``
    raises, as PyTorch's does for the CPU (Note [Checkpoint device states]).

    Example:
        >>> from retrograd.utils.checkpoint import set_device_states
        >>> set_device_states([], [])
    """
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta" or not devices:
        return
    raise AttributeError(f"module 'torch.{device_type}' has no attribute 'device' (retrograd "
                         "has no accelerator whose RNG state could be set: the CPU generator is "
                         "restored by checkpoint's preserve_rng_state)")


_checkpoint_debug_enabled: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Within the block, override ``checkpoint(debug=...)`` (``None``: defer to it).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.checkpoint import checkpoint, set_checkpoint_debug_enabled
        >>> x = torch.ones(2, requires_grad=True)
        >>> with set_checkpoint_debug_enabled(False):
        ...     checkpoint(lambda t: t.sum(), x, use_reentrant=False, debug=True)
        tensor(2., grad_fn=<SumBackward0>)
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


def _debug_override(debug: bool) -> bool:
    return debug if _checkpoint_debug_enabled is None else _checkpoint_debug_enabled


class _Group(threading.local):
    def __init__(self) -> None:
        self.current: GraphExecGroup | None = None


_GROUP = _Group()


class GraphExecGroup:
    """Backward calls under one instance recompute each checkpointed region at most once.

    retrograd's non-reentrant checkpoint already does so: the first unpack in a region
    recomputes it and fills every saved tensor still alive in it, which later backward
    calls then use. The context keeps PyTorch's rule that groups do not nest.

    Example:
        >>> from retrograd.utils.checkpoint import GraphExecGroup
        >>> with GraphExecGroup() as g:
        ...     GraphExecGroup._get_current_group() is g
        True
    """

    def __enter__(self) -> GraphExecGroup:
        if _GROUP.current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_GROUP.current}")
        _GROUP.current = self
        return self

    def __exit__(self, *args: object) -> None:
        _GROUP.current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return _GROUP.current
