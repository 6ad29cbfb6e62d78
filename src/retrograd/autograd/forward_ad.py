"""Forward-mode AD: dual tensors (a primal and its tangent) pushed through every op.

Inside ``dual_level()``, ``make_dual(x, t)`` gives a tensor that carries the tangent
``t``; every op then computes its output's tangent (the Jacobian-vector product
J t) from its JVP rule, and ``unpack_dual(y)`` returns ``(primal, tangent)``.

Example:
    >>> import retrograd as torch
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> x = torch.tensor([0.0, 1.0])
    >>> with fwAD.dual_level():
    ...     y = torch.sin(fwAD.make_dual(x, torch.ones(2))) * 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([2.0000, 1.0806])
"""

from __future__ import annotations

from typing import NamedTuple

from .._core.grad_mode import _DecoratorContextManager
from .._graph.forward_state import FW, get_tangent, set_tangent
from .._tensor.tensor import Tensor
from ..ops.dispatch import view_apply
from ..ops.records import table as T

# PyTorch's API, above the op layer; the state lives in _graph/forward_state.py and the
# JVP rules with the dispatch interceptor in ops/jvp_rules.py (Note [Forward AD
# interceptor]).
__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` returned by ``unpack_dual``; ``tangent`` is None when absent.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.forward_ad import unpack_dual
        >>> unpack_dual(torch.ones(1)).tangent is None
        True
    """

    primal: object
    tangent: object


def enter_dual_level() -> int:
    """Open a forward-AD level and return its index (0: levels do not nest).

    Example:
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> lvl = fwAD.enter_dual_level(); fwAD.exit_dual_level(); lvl
        0
    """
    if FW.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    FW.level = 0
    FW.owners = []
    FW.active = True
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current forward-AD level; every tangent made inside it is dropped.

    Example:
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> _ = fwAD.enter_dual_level(); fwAD.exit_dual_level()
    """
    if level is None:
        level = FW.level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != FW.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in FW.owners:
        obj = ref()
        if obj is not None:
            d = obj.__dict__
            d.pop("_fw_grad", None)
            d.pop("_fw_out", None)
    FW.owners = []
    FW.level = -1
    FW.active = False


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) that opens a forward-AD level for its block.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(torch.tensor([3.0]), torch.tensor([1.0]))
        ...     fwAD.unpack_dual(d * d).tangent
        tensor([6.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: an alias of ``tensor`` (differentiable) carrying ``tangent``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(torch.tensor([2.0]), torch.tensor([1.0]))
        ...     fwAD.unpack_dual(d.exp()).tangent
        tensor([7.3891])
    """
    if level is None:
        level = FW.level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level != FW.level:
        raise RuntimeError(f"Trying to make a dual Tensor at level {level}, but the open level "
                           f"is {FW.level}: levels do not nest in forward-mode AD.")
    if not isinstance(tensor, Tensor) or not tensor.is_floating_point():
        dt = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise ValueError(f"Expected primal to be floating point or complex, but got: {dt}")
    if not isinstance(tangent, Tensor) or not tangent.is_floating_point():
        dt = tangent.dtype if isinstance(tangent, Tensor) else type(tangent).__name__
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {dt}")
    if get_tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    prev = FW.active
    FW.active = False
    try:
        out = view_apply(T.alias, tensor, None)
    finally:
        FW.active = prev
    set_tangent(out, tangent)
    return out


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; the primal is a differentiable alias.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     p, t = fwAD.unpack_dual(fwAD.make_dual(torch.ones(2), torch.zeros(2)))
        >>> p, t
        (tensor([1., 1.]), tensor([0., 0.]))
    """
    if level is None:
        level = FW.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tan = get_tangent(tensor)
    prev = FW.active
    FW.active = False
    try:
        primal = view_apply(T.alias, tensor, None)
    finally:
        FW.active = prev
    return UnpackedDualTensor(primal, tan)
