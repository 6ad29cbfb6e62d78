"""``Parameter`` and ``Buffer``: tensors that a Module registers when assigned.

Example:
    >>> import retrograd as torch
    >>> p = torch.nn.Parameter(torch.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> isinstance(p, torch.Tensor), p.is_leaf
    (True, True)
"""

from __future__ import annotations

from .._tensor import Tensor, _make

__all__ = ["Parameter", "Buffer", "UninitializedParameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: ``requires_grad=True`` by default.

    It shares memory and the version counter with ``data`` (as PyTorch's
    ``_make_subclass``) and is always a leaf. Results of operations on it are plain
    Tensors.

    Example:
        >>> import retrograd as torch
        >>> w = torch.nn.Parameter(torch.zeros(2, 2))
        >>> w.requires_grad, type(w * 2).__name__
        (True, 'Tensor')
    """

    # Note [Parameter is a Tensor subclass]
    # ``Tensor.__new__`` builds plain tensors for ``Tensor(...)`` calls and defers to
    # subclasses that set ``_is_param``; here we fill the slots ourselves so the
    # Parameter aliases ``data`` (same ndarray, same version counter) and is a leaf.
    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, got {type(data).__name__}; "
                            "wrap it first: nn.Parameter(torch.tensor(...))")
        t = Tensor.__new__(cls)
        t._data = data._data
        t._rg = False
        t.grad_fn = None
        t._vc = data._vc
        t._base = None
        t._vfn = None
        t._out_nr = 0
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data.copy(), self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = type(self)(_make(self._data.copy()), self._rg)
        if self._grad is not None:
            t._grad = self._grad.detach().clone()
        memo[id(self)] = t
        return t


def _rebuild_parameter(data, requires_grad):
    return Parameter(_make(data), requires_grad)


class UninitializedParameter(Parameter):
    """Placeholder for lazy modules; unsupported here (raises when used)."""

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        raise NotImplementedError("retrograd has no lazy modules (UninitializedParameter): "
                                  "give the layer its input size explicitly")


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module.

    Assigning ``self.name = nn.Buffer(t)`` registers ``t`` (a plain Tensor) as a
    buffer; ``persistent=False`` keeps it out of the ``state_dict``.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Module()
        >>> m.steps = torch.nn.Buffer(torch.zeros(1))
        >>> list(dict(m.named_buffers()))
        ['steps']
    """

    _is_param = True

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        t = Tensor.__new__(cls)
        t._data = data._data
        t._rg = data._rg
        t.grad_fn = None
        t._vc = data._vc
        t._base = None
        t._vfn = None
        t._out_nr = 0
        t.persistent = persistent
        return t
