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

import sys

import numpy as np

from .._core import dtype as D
from .._tensor.tensor import Tensor, _make

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "UninitializedTensorMixin", "is_lazy"]


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
            from .._functions.creation import empty

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
            from .._functions.creation import empty

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


# Note [Uninitialized tensors]
# A lazy module's parameters start as UninitializedParameter (buffers as
# UninitializedBuffer): a tensor with a dtype and requires_grad but no shape and no data.
# Its ``_data`` is a property that refuses to be read, so every op, method and printing
# path that would use the data raises PyTorch's ValueError, while the identity survives:
# an optimizer built before the first forward holds the same object. ``materialize``
# stores an array in the Tensor's slot and turns the object, in place, into its
# ``cls_to_become`` (Parameter, or a plain Tensor for a buffer), as PyTorch does; from
# then on the slot is read directly and nothing costs more than for any other tensor.
# Dtype conversions before that (module.double(), .to(dtype)) change the recorded dtype.

_TENSOR_DATA = Tensor.__dict__["_data"]  # the slot of Tensor (Note [Uninitialized tensors])


def _uninitialized_error():
    where = sys._getframe(2).f_code.co_name
    return ValueError(
        f"Attempted to use an uninitialized parameter in {where}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch "
        "functions")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: a dtype, no data yet,
    and ``materialize``.

    Example:
        >>> import retrograd as torch
        >>> p = torch.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', torch.Size([2, 3]))
    """

    cls_to_become: type = Tensor

    @property
    def _data(self):
        raise _uninitialized_error()

    @_data.setter
    def _data(self, value) -> None:
        _TENSOR_DATA.__set__(self, value)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (its values uninitialized, as ``torch.empty``) and turn
        it into ``cls_to_become``."""
        dt = self._lazy_dtype if dtype is None else dtype
        _TENSOR_DATA.__set__(self, np.empty(tuple(shape), dtype=D.as_dtype(dt).np))
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    @property
    def dtype(self):
        return self._lazy_dtype

    def is_floating_point(self) -> bool:
        return self._lazy_dtype.is_floating_point

    def _with_dtype(self, dtype):
        self._lazy_dtype = dtype
        return self

    def to(self, *args, **kwargs):
        from .._functions.conversion import parse_to_args

        dtype, _ = parse_to_args(args, kwargs)
        return self if dtype is None else self._with_dtype(dtype)

    def float(self):
        return self._with_dtype(D.float32)

    def double(self):
        return self._with_dtype(D.float64)

    def half(self):
        return self._with_dtype(D.float16)

    def bfloat16(self):
        return self._with_dtype(D.bfloat16)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, dtype=self._lazy_dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad, None, self._lazy_dtype))


def _uninitialized(cls, requires_grad: bool, dtype):
    t = Tensor.__new__(cls)
    _TENSOR_DATA.__set__(t, None)
    t._lazy_dtype = dtype if dtype is not None else D.DEFAULTS.float
    t._rg = bool(requires_grad)
    t.grad_fn = None
    t._vc = [0]
    t._base = None
    t._vfn = None
    t._out_nr = 0
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape a lazy module learns from its first input; it becomes a
    ``Parameter`` in place when materialized. Using it before raises PyTorch's ValueError.

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.LazyLinear(2)
        >>> m.weight
        <UninitializedParameter>
        >>> _ = m(torch.ones(1, 3))
        >>> m.weight.shape
        torch.Size([2, 3])
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        _check_cpu(device)
        return _uninitialized(cls, requires_grad, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module learns from its first input; it becomes a plain
    Tensor in place when materialized.

    Example:
        >>> import retrograd as torch
        >>> b = torch.nn.UninitializedBuffer()
        >>> b.requires_grad, type(b).cls_to_become.__name__
        (False, 'Tensor')
    """

    cls_to_become = Tensor
    _is_param = True

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        _check_cpu(device)
        t = _uninitialized(cls, requires_grad, dtype)
        t.persistent = persistent
        return t


def _check_cpu(device) -> None:
    if device is not None:
        from .._core.device import check_device

        check_device(device)


def is_lazy(param) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.nn.parameter import is_lazy
        >>> is_lazy(torch.nn.UninitializedParameter()), is_lazy(torch.ones(1))
        (True, False)
    """
    return isinstance(param, UninitializedTensorMixin)
