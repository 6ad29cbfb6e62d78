"""``nn.utils.stateless``: the deprecated home of ``functional_call`` (use
``retrograd.func.functional_call``), and ``_reparametrize_module``.

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> from retrograd.nn.utils import stateless
    >>> m = torch.nn.Linear(1, 1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     stateless.functional_call(m, {"weight": torch.ones(1, 1), "bias": torch.zeros(1)},
    ...                               torch.tensor([[3.]]))
    tensor([[3.]])
"""

from __future__ import annotations

import warnings
from typing import Any

from ..._functorch import functional_call as _fc
from ..._functorch.member_accessor import NamedMemberAccessor  # noqa: F401  (torch has it here)
from ..._tensor.tensor import Tensor
from ..modules.module import Module

__all__ = ["functional_call"]

# PyTorch's private names in this module, which libraries reach for
_reparametrize_module = _fc.reparametrize_module
_untie_named_tensors_map = _fc.untie_named_tensors_map


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Deprecated: ``retrograd.func.functional_call`` is a drop-in replacement (this warns
    with PyTorch's FutureWarning, then calls it with a single dict).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     f = torch.nn.utils.stateless.functional_call
        ...     _ = f(torch.nn.Linear(1, 1), {}, torch.ones(1, 1))
        >>> w[0].category.__name__
        'FutureWarning'
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                     kwargs: dict | None = None, *, tie_weights: bool = True,
                     strict: bool = False) -> Any:
    return _fc.call_module(module, parameters_and_buffers, args, kwargs,
                       tie_weights=tie_weights, strict=strict)
