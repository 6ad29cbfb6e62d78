"""Utilities (``retrograd.utils.data``, ...); submodules are imported on first use.

Example:
    >>> import retrograd as torch
    >>> torch.utils.data.TensorDataset(torch.zeros(3, 1))[0]
    (tensor([0.]),)
"""

from __future__ import annotations

import importlib


def __getattr__(name: str):
    # Note [Lazy utils]: ``import retrograd`` stays cheap and each submodule (data,
    # checkpoint, ...) loads when first touched, so new submodules need no edit here.
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = module
    return module
