"""``torch.utils.deterministic.fill_uninitialized_memory``: whether ``empty``-like
constructors fill their memory (NaN, or the dtype's largest value) while deterministic
algorithms are on (True, as in PyTorch); with it False they return zeros here.

Example:
    >>> import retrograd as torch
    >>> torch.utils.deterministic.fill_uninitialized_memory
    True
"""

from __future__ import annotations

import types

from .._core import deterministic
from ..backends._flags import flag_module


def _get(module: types.ModuleType) -> bool:
    return deterministic._state["fill"]


def _set(module: types.ModuleType, value: bool) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"expected a bool, but got {type(value).__name__}\n(set "
                           "torch.utils.deterministic.fill_uninitialized_memory to True or "
                           "False)")
    deterministic._state["fill"] = value


flag_module(__name__, fill_uninitialized_memory=property(
    _get, _set, doc="Fill empty tensors under deterministic algorithms (default True)."))
