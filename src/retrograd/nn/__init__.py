"""``retrograd.nn``: modules, parameters, layers, losses, functional, init and utils.

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> loss = nn.MSELoss()(model(torch.ones(4, 2)), torch.zeros(4, 1))
    >>> loss.backward()
    >>> [tuple(p.grad.shape) for p in model.parameters()]
    [(3, 2), (3,), (1, 3), (1,)]
"""

from __future__ import annotations

from . import functional, init, utils
from .modules import *
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional",
           "init", "utils", "factory_kwargs"] + list(_modules_all)


def factory_kwargs(kwargs: dict | None) -> dict:
    """The factory keyword arguments (``device``, ``dtype``, ``memory_format``) of
    ``kwargs`` as one dict, merged with an explicit ``factory_kwargs`` entry; unknown keys
    raise ``TypeError`` (PyTorch's ``torch.nn.factory_kwargs``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.factory_kwargs({"dtype": torch.float64, "factory_kwargs": {"device": "cpu"}})
        {'device': 'cpu', 'dtype': torch.float64}
        >>> torch.nn.factory_kwargs({"bias": True})
        Traceback (most recent call last):
        TypeError: unexpected kwargs {'bias'}
    """
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in sorted(simple_keys):
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out


def __getattr__(name: str):
    # Note [Lazy parallel]: nn.parallel (DDP) uses the distributed package; it loads when
    # first touched, so ``import retrograd`` does not load it.
    # (import_module, not ``from . import parallel``: the latter asks hasattr(nn,
    # "parallel") first, which comes back here, recursing without end)
    if name == "parallel":
        import importlib

        return importlib.import_module(f"{__name__}.parallel")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
