"""The legacy hook form of weight normalization: ``nn.utils.weight_norm`` and
``remove_weight_norm`` (deprecated in PyTorch in favour of
``nn.utils.parametrizations.weight_norm``, with the same FutureWarning here).

Note [Legacy reparametrization hooks]
The legacy forms keep the reparametrized tensor as a plain attribute that a forward
pre-hook recomputes from the new parameters (``weight_g``/``weight_v`` here,
``weight_orig`` with the ``weight_u``/``weight_v`` buffers for spectral norm and
``weight_orig``/``weight_mask`` for pruning) before every call; the hook object itself
is the record of what was done, found again by its class and ``name`` when removed.

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    >>> sorted(n for n, _ in m.named_parameters())
    ['bias', 'weight_g', 'weight_v']
"""

from __future__ import annotations

import warnings

from ..modules.module import Module
from ..parameter import Parameter, UninitializedParameter
from . import _norms
from ._hooks import drop_forward_pre_hook

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm` (Note [Legacy reparametrization
    hooks]).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2), dim=None)
        >>> [type(h).__name__ for h in m._forward_pre_hooks.values()], m.weight_g.shape
        (['WeightNorm'], torch.Size([]))
    """

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module):
        """``g * v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``."""
        return _norms.weight_norm(getattr(module, self.name + "_v"),
                                  getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Reparametrize ``module.<name>`` and register the hook (FutureWarning)."""
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norms.norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put ``<name>`` back as a parameter holding its current value."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replace ``module.<name>`` by ``g * v / ||v||`` recomputed before every forward from
    the parameters ``<name>_g`` and ``<name>_v`` (deprecated: FutureWarning).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
        >>> m.weight_g.shape, m.weight_v.shape
        (torch.Size([2, 1]), torch.Size([2, 3]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` is a parameter again, with its current value.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
        >>> [n for n, _ in torch.nn.utils.remove_weight_norm(m).named_parameters()]
        ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            drop_forward_pre_hook(module, k)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
