"""The legacy ``Variable`` wrapper: since PyTorch 0.4 a Variable is a Tensor, and
``Variable(t, requires_grad=...)`` is ``t.detach()`` with ``requires_grad`` set.

Example:
    >>> import retrograd as torch
    >>> from retrograd.autograd import Variable
    >>> v = Variable(torch.ones(2), requires_grad=True); v
    tensor([1., 1.], requires_grad=True)
    >>> isinstance(torch.ones(1), Variable)
    True
"""

from __future__ import annotations

import warnings

from .._functions.creation import empty
from .._tensor.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    """Makes ``isinstance(tensor, Variable)`` true, as in PyTorch."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: a Tensor sharing ``data``'s
    storage and version counter, with no history (``data.detach()``), requiring grad when
    asked. ``volatile`` has had no effect since PyTorch 0.4: it warns, as PyTorch does.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd import Variable
        >>> x = torch.ones(2, requires_grad=True) * 2
        >>> v = Variable(x); v.grad_fn is None, v.requires_grad
        (True, False)
        >>> Variable()
        tensor([])
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__} "
                            "(wrap it first: Variable(torch.tensor(data)), or just use "
                            "torch.tensor(data, requires_grad=True))")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
