"""The data of a tensor on the 'meta' device: a shape and a dtype, and no elements.

Example:
    >>> import numpy as np
    >>> from retrograd._core.meta import MetaArray
    >>> a = MetaArray((2, 3), np.float32)
    >>> a.shape, a.dtype, a.strides, a.nbytes
    ((2, 3), dtype('float32'), (12, 4), 24)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MetaArray", "is_meta_array", "NO_DATA", "NoDataError"]

NO_DATA = "Cannot copy out of meta tensor; no data!"

# Note [Meta tensors]
# A tensor on the 'meta' device (PyTorch's shape-only device: ``model.to('meta')`` in the
# ensembling recipe, ``torch.empty(..., device='meta')``) is a Tensor whose ``_data`` is a
# ``MetaArray`` instead of an ndarray: it has ``shape``, ``dtype``, ``strides`` and the
# rest of what Tensor reads for its metadata, and no elements, so a meta copy of a large
# model costs nothing. ``Tensor.device`` is read off the class of ``_data``; nothing in
# the op path knows about meta tensors. They are made by the creation functions (given
# ``device='meta'``, or a meta input for ``*_like``), ``Tensor.to('meta')`` and
# ``Module.to('meta')``, and left by ``Module.to_empty(device='cpu')`` or by swapping in
# real tensors (``torch.func.functional_call``).
# PyTorch runs operators on meta tensors (shape inference); retrograd does not: an op's
# NumPy kernel asks for the elements (``__array__``), and that raises PyTorch's "no data"
# error followed by the cause and the fix. Nothing ever computes on made-up values. (To
# give ops meta results, dispatch would pass a MetaArray result through where it now
# makes every non-ndarray result an ndarray, and MetaArray would answer NumPy's
# ``__array_ufunc__``/``__array_function__`` protocols from shapes and dtypes.)

_NO_OPS = (NO_DATA + " retrograd runs no operations on 'meta' tensors (a shape and a dtype, "
           "no elements). Give a meta module real tensors (torch.func.functional_call(model, "
           "params, args), or model.to_empty(device='cpu') and then initialize or "
           "load_state_dict), or make the tensor on the CPU.")


class NoDataError(NotImplementedError):
    """What a NumPy kernel meets when it reaches into a meta tensor's data. (Not an
    AttributeError: code that falls back on a missing attribute must not mistake a meta
    tensor for some other kind of array.)"""


def is_meta_array(x) -> bool:
    """Whether ``x`` is the data of a meta tensor.

    Example:
        >>> import numpy as np
        >>> from retrograd._core.meta import MetaArray, is_meta_array
        >>> is_meta_array(MetaArray((), np.int64)), is_meta_array(np.zeros(1))
        (True, False)
    """
    return x.__class__ is MetaArray


class _Flags:
    """The ``flags`` Tensor reads (a meta tensor is contiguous, as PyTorch's are)."""

    __slots__ = ("f_contiguous",)
    c_contiguous = writeable = owndata = aligned = True

    def __init__(self, ndim: int):
        self.f_contiguous = ndim <= 1


class MetaArray:
    """The shape and dtype of a meta tensor's data (Note [Meta tensors]).

    Example:
        >>> import numpy as np
        >>> from retrograd._core.meta import MetaArray
        >>> MetaArray((2, 3), np.float32).astype(np.float64).dtype
        dtype('float64')
    """

    __slots__ = ("shape", "dtype")
    base = None

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        out, step = [], self.dtype.itemsize
        for s in reversed(self.shape):
            out.append(step)
            step *= max(s, 1)
        return tuple(reversed(out))

    @property
    def flags(self) -> _Flags:
        return _Flags(self.ndim)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __reduce__(self):
        return (MetaArray, (self.shape, self.dtype))

    def __deepcopy__(self, memo) -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    def copy(self, order: str = "C") -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    def astype(self, dtype, *args, **kwargs) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def reshape(self, *shape, **kwargs):
        if shape in ((), ((),)) and self.size == 1:  # item() and bool() reshape to 0-d first
            return MetaArray((), self.dtype)
        raise NoDataError(_NO_OPS)

    # -- everything that needs the elements raises -----------------------------------
    def __array__(self, dtype=None, copy=None):
        raise NoDataError(_NO_OPS)

    def item(self, *args):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def __bool__(self) -> bool:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    __float__ = __int__ = __index__ = __complex__ = item

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def __getitem__(self, key):
        raise NoDataError(_NO_OPS)

    def __setitem__(self, key, value) -> None:
        pass  # a write into a meta tensor stores nothing, as in PyTorch

    def __getattr__(self, name: str):  # every other ndarray attribute a kernel reaches for
        raise NoDataError(f"{_NO_OPS} (a kernel asked the data for '{name}')")
