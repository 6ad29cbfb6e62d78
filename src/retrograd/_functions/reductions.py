"""Reductions: ``sum``, ``mean``, ``prod``, ``max``/``min`` (with indices), ``all``/``any``,
``var``/``std``, ``logsumexp``, ``softmax``, cumulative ops and norms; PyTorch's
``torch.return_types`` named tuples.

Example:
    >>> import retrograd as torch
    >>> torch.tensor([[1., 5.], [3., 2.]]).max(dim=1)
    torch.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

import collections
import warnings

import numpy as np

from .._core import dtype as D
from .._core.hints import Number, ShapeLike
from .._graph.node import _LEGACY
from .._tensor.tensor import Tensor, _make, _wrap_dim
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply
from ..ops.kernels.sum import reduced_count
from ..ops.op import _LOW, FLOAT_NP
from ..ops.public import public
from ..ops.records import table as T
from .arguments import _dims
from .pointwise import isnan, logical_not, maximum, minimum, where
from .softmax import log_softmax as _log_softmax
from .softmax import softmax as _softmax

# ----------------------------------------------------------------------------------
# reductions

ReturnTypes = {}


def _rt(name: str, fields: tuple = ("values", "indices")):
    """PyTorch's ``torch.return_types.<name>`` named tuple (``fields``: (values, indices)
    unless given; one class a name, shared by the reductions and torch.linalg)."""
    if name not in ReturnTypes:
        base = collections.namedtuple(name, fields)

        def __repr__(self):
            body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
            return f"torch.return_types.{name}(\n{body})"
        ReturnTypes[name] = type(name, (base,), {"__repr__": __repr__, "__slots__": ()})
    return ReturnTypes[name]


def _sum_dtype(x, dtype):
    if dtype is not None:
        return D.as_dtype(dtype).np
    if x._data.dtype.kind in "biu":
        return np.dtype(np.int64)
    return None


@public
def sum(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False, *,
        dtype: D.dtype | None = None) -> Tensor:
    """Sum over all elements or over ``dim`` (ints and bools sum to int64).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
        tensor([4., 6.])
    """
    axes = _dims(dim, input._data.ndim)
    x = input
    dt = _sum_dtype(x, dtype)
    if dt is not None and dt in FLOAT_NP and x._data.dtype != dt:
        x, dt = x.to(dt), None
    op = T.sum if axes is None and not keepdim and dim is None else T.sum_dims
    return apply(op, (x,), (axes, keepdim, dt))




@public
def mean(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False, *,
         dtype: D.dtype | None = None) -> Tensor:
    """Mean over all elements or over ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).mean()
        tensor(2.5000)
    """
    x = input if dtype is None else input.to(dtype)
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_legacy_name(x.dtype)}. Convert first: x.float().mean()")
    axes = _dims(dim, x._data.ndim)
    op = T.mean if dim is None else T.mean_dims
    if x._data.dtype in _LOW:
        r = apply(op, (x,), (axes, keepdim, np.float32))
        return r.to(x.dtype) if not r._rg else _cast_keep(r, x.dtype)
    return apply(op, (x,), (axes, keepdim, None))




def _cast_keep(r, dt):
    return r.to(dt)


def _legacy_name(dt) -> str:
    return _LEGACY[dt.name] if dt.name in _INT_NAMES else dt.name


_INT_NAMES = frozenset(("int64", "int32", "int16", "int8", "uint8", "bool"))


@public
def nansum(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False) -> Tensor:
    return sum(where(isnan(input), 0.0, input), dim, keepdim)


@public
def nanmean(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False) -> Tensor:
    keep = logical_not(isnan(input))
    return nansum(input, dim, keepdim) / keep.sum(dim, keepdim)


@public(autocast=T.prod)
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: D.dtype | None = None) -> Tensor:
    """Product over all elements or over one ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).prod()
        tensor(6.)
    """
    x = input if dtype is None else input.to(dtype)
    dt = _sum_dtype(x, None)
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError("prod(): dim must be a single int")
    axes = _dims(dim, x._data.ndim)
    return apply(T.prod if dim is None else T.prod_dims, (x,), (axes, keepdim, dt))




def _reduce_minmax(input, dim, keepdim, which, fn_name, other=None):
    if other is not None:
        return maximum(input, other) if which == "max" else minimum(input, other)
    x = input
    if x._data.size == 0 and dim is None:
        raise _no_dim_error(fn_name, x)
    if dim is None:
        return apply(T.max_all if which == "max" else T.min_all, (x,), (None, False))
    d = _wrap_dim(dim, x._data.ndim)
    data = x._data
    if not data.size and data.shape[d] == 0:  # Note [Empty reductions]
        raise _empty_dim_error(fn_name, x, d)
    if data.ndim == 0:
        idx = np.zeros((), np.int64)
    else:
        # first occurrence of the extreme value; NaN propagates as in PyTorch
        idx = np.argmax(data, axis=d) if which == "max" else np.argmin(data, axis=d)
        nanmask = np.isnan(data).any(axis=d) if data.dtype in FLOAT_NP else None
        if nanmask is not None and nanmask.any():
            idx = np.where(nanmask, np.argmax(np.isnan(data), axis=d), idx)
        if keepdim:
            idx = np.expand_dims(idx, d)
    it = _make(np.asarray(idx, dtype=np.int64))
    vals = apply(T.take_ops[which], (x, it), (d, keepdim))
    return _rt(which)(vals, it)


@public
@per_element_under_vmap
def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        other: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """Largest element; with ``dim``, (values, indices); with a tensor, elementwise maximum.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 5.], [7., 2.]]).max(dim=1)
        torch.return_types.max(
        values=tensor([5., 7.]),
        indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _reduce_minmax(input, dim, keepdim, "max", "max", other)


@public
@per_element_under_vmap
def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        other: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    """Smallest element; with ``dim``, (values, indices); with a tensor, elementwise minimum.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([3., 1., 2.]).min()
        tensor(1.)
    """
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _reduce_minmax(input, dim, keepdim, "min", "min", other)


@public
def amax(input: Tensor, dim: ShapeLike = (), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims by default); ties share the gradient.

    Example:
        >>> import retrograd as torch
        >>> torch.amax(torch.tensor([[1., 5.], [7., 2.]]), dim=0)
        tensor([7., 5.])
    """
    if not input._data.size:
        _check_empty_reduction("amax", input, dim)
    return apply(T.amax, (input,), (_dims(dim, input._data.ndim), keepdim))


@public
def amin(input: Tensor, dim: ShapeLike = (), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims by default).

    Example:
        >>> import retrograd as torch
        >>> torch.amin(torch.tensor([[1., 5.], [7., 2.]]), dim=1)
        tensor([1., 2.])
    """
    if not input._data.size:
        _check_empty_reduction("amin", input, dim)
    return apply(T.amin, (input,), (_dims(dim, input._data.ndim), keepdim))


# Note [Empty reductions]
# max, min, amax, amin, argmax, argmin and aminmax have no identity element, so PyTorch
# refuses a reduction over a size-0 dim: an IndexError naming the dim ("Expected
# reduction dim 1 to have non-zero size."; amax/amin name it as given, max/min/argmax
# wrapped), or a RuntimeError when an empty tensor is reduced over all dims. Reducing
# an empty tensor over a dim of nonzero size is fine (the result is empty). The checks
# run only for empty inputs.
def _empty_dim_error(fn: str, x: Tensor, d, sep: str = "():") -> IndexError:
    return IndexError(f"{fn}{sep} Expected reduction dim {d} to have non-zero size. (the "
                      f"tensor has shape {list(x.shape)}: there is no {fn} of zero elements; "
                      "reduce over another dim, or test x.numel() first)")


def _no_dim_error(fn: str, x: Tensor) -> RuntimeError:
    return RuntimeError(f"{fn}(): Expected reduction dim to be specified for input.numel() == "
                        "0. Specify the reduction dim with the 'dim' argument. (the tensor has "
                        f"shape {list(x.shape)}: there is no {fn} of zero elements)")


def _check_empty_reduction(fn: str, x: Tensor, dim) -> None:
    """amax/amin of an empty tensor: PyTorch's error if a reduced dim has size 0 (Note
    [Empty reductions]); dims are checked in the order given."""
    if dim is None or (not isinstance(dim, (int, np.integer)) and not len(dim)):
        raise _no_dim_error(fn, x)
    shape = x._data.shape
    for d in ((dim,) if isinstance(dim, (int, np.integer)) else dim):
        w = _wrap_dim(int(d), len(shape))
        if shape and shape[w] == 0:
            raise _empty_dim_error(fn, x, d)


@public
def aminmax(input: Tensor, *, dim: int | None = None,
            keepdim: bool = False) -> tuple[Tensor, Tensor]:
    if not input._data.size:  # Note [Empty reductions]
        if dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               f"operation has no identity. (the tensor has shape "
                               f"{list(input.shape)}: pass a dim of nonzero size)")
        d = _wrap_dim(dim, input._data.ndim)
        if input._data.ndim and input._data.shape[d] == 0:
            raise _empty_dim_error("aminmax", input, d, sep=":")
    return collections.namedtuple("aminmax", ["min", "max"])(
        amin(input, () if dim is None else dim, keepdim),
        amax(input, () if dim is None else dim, keepdim))


@public
@per_element_under_vmap
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (flattened when ``dim`` is None).

    Example:
        >>> import retrograd as torch
        >>> torch.argmax(torch.tensor([1., 9., 3.]))
        tensor(1)
    """
    return _argext(input, dim, keepdim, np.argmax)


@public
@per_element_under_vmap
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element.

    Example:
        >>> import retrograd as torch
        >>> torch.argmin(torch.tensor([4., 1., 3.]))
        tensor(1)
    """
    return _argext(input, dim, keepdim, np.argmin)


def _argext(x, dim, keepdim, fn):
    data = x._data
    if not data.size:  # Note [Empty reductions]
        if dim is None:
            raise IndexError(f"{fn.__name__}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0. (the tensor has shape {list(x.shape)}: "
                             "pass a dim of nonzero size)")
        d = _wrap_dim(dim, data.ndim)
        if data.ndim and data.shape[d] == 0:
            raise _empty_dim_error(fn.__name__, x, d)
    if dim is None:
        r = fn(data.reshape(-1))
        if keepdim:
            r = np.reshape(r, (1,) * data.ndim)
    else:
        r = fn(data, axis=_wrap_dim(dim, data.ndim), keepdims=keepdim)
    return _make(np.asarray(r, dtype=np.int64))


@public
@per_element_under_vmap
def all(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False) -> Tensor:
    """True where all elements are non-zero.

    Example:
        >>> import retrograd as torch
        >>> torch.all(torch.tensor([True, False]))
        tensor(False)
    """
    axes = _dims(dim, input._data.ndim)
    r = np.all(input._data, axis=axes, keepdims=keepdim)
    return _make(np.asarray(r if input._data.dtype != np.uint8 else r.astype(np.uint8)))


@public
@per_element_under_vmap
def any(input: Tensor, dim: ShapeLike | None = None, keepdim: bool = False) -> Tensor:
    """True where any element is non-zero.

    Example:
        >>> import retrograd as torch
        >>> torch.any(torch.tensor([True, False]))
        tensor(True)
    """
    axes = _dims(dim, input._data.ndim)
    r = np.any(input._data, axis=axes, keepdims=keepdim)
    return _make(np.asarray(r if input._data.dtype != np.uint8 else r.astype(np.uint8)))


@public
def count_nonzero(input: Tensor, dim: ShapeLike | None = None) -> Tensor:
    return _make(np.asarray(np.count_nonzero(input._data, axis=_dims(dim, input.ndim)),
                            dtype=np.int64))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


@public
def var(input: Tensor, dim: ShapeLike | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """Variance with Bessel's ``correction`` (1 by default).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).var()
        tensor(1.6667)
    """
    return _var_or_std(T.var, "var", input, dim, unbiased, keepdim, correction)


def _var_or_std(op, fname: str, input, dim, unbiased, keepdim, correction) -> Tensor:
    """var/std (``op``) after torch's checks and its warning, which names ``fname``."""
    if isinstance(unbiased, (int, tuple, list)) and not isinstance(unbiased, bool):
        dim, unbiased = unbiased, None
    a = input._data
    if a.dtype not in FLOAT_NP:
        raise RuntimeError(
            "std and var only support floating point and complex dtypes (got "
            f"{input.dtype}: convert first, e.g. x.float().var())")
    axes, c = _dims(dim, a.ndim), _correction(unbiased, correction)
    n = reduced_count(a.shape, axes)
    if n - c <= 0:
        warnings.warn(f"{fname}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel). "
                      f"(Here {n} element(s) per result and correction={c}: the result is "
                      "nan or inf; reduce over more elements or lower the correction.)",
                      UserWarning, stacklevel=3)
    return apply(op, (input,), (axes, bool(keepdim), c))


@public
def std(input: Tensor, dim: ShapeLike | None = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
    """Standard deviation (square root of ``var``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3., 4.]).std()
        tensor(1.2910)
    """
    return _var_or_std(T.std, "std", input, dim, unbiased, keepdim, correction)


@public(method=False)
def var_mean(input: Tensor, dim: ShapeLike | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Tensor, Tensor]:
    return (_var_or_std(T.var, "var_mean", input, dim, unbiased, keepdim, correction),
            mean(input, dim, keepdim) if dim is not None else mean(input))


@public(method=False)
def std_mean(input: Tensor, dim: ShapeLike | None = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Tensor, Tensor]:
    return (_var_or_std(T.std, "std_mean", input, dim, unbiased, keepdim, correction),
            mean(input, dim, keepdim) if dim is not None else mean(input))


@public
def softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably (``torch.softmax``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 1.]).softmax(0)
        tensor([0.5000, 0.5000])
    """
    return _softmax(input, dim, dtype=dtype)


@public
def log_softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    """``log(softmax(x))``, computed stably (``torch.log_softmax``).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([0., 0.]).log_softmax(0)
        tensor([-0.6931, -0.6931])
    """
    return _log_softmax(input, dim, dtype=dtype)


@public
def logsumexp(input: Tensor, dim: ShapeLike, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow.

    Example:
        >>> import retrograd as torch
        >>> torch.logsumexp(torch.tensor([1000., 1000.]), dim=0)
        tensor(1000.6932)
    """
    x = input if input._data.dtype in FLOAT_NP else input.float()
    return apply(T.logsumexp, (x,), (_dims(dim, x._data.ndim), keepdim))


@public(inplace=True)
def cumsum(input: Tensor, dim: int, *, dtype: D.dtype | None = None) -> Tensor:
    """Cumulative sum along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.cumsum(torch.tensor([1., 2., 3.]), dim=0)
        tensor([1., 3., 6.])
    """
    return apply(T.cumsum, (input,), (_wrap_dim(dim, input._data.ndim), _sum_dtype(input, dtype)))


@public(inplace=True)
def cumprod(input: Tensor, dim: int, *, dtype: D.dtype | None = None) -> Tensor:
    """Cumulative product along ``dim`` (zeros handled in the gradient).

    Example:
        >>> import retrograd as torch
        >>> torch.cumprod(torch.tensor([1., 2., 3.]), dim=0)
        tensor([1., 2., 6.])
    """
    return apply(T.cumprod, (input,), (_wrap_dim(dim, input._data.ndim), _sum_dtype(input, dtype)))


@public(method=False)
def vector_norm(x: Tensor, ord: float = 2, dim: ShapeLike | None = None, keepdim: bool = False, *,
                dtype: D.dtype | None = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements by default).

    Example:
        >>> import retrograd as torch
        >>> torch.linalg.vector_norm(torch.tensor([3., 4.]))
        tensor(5.)
    """
    if x._data.dtype not in FLOAT_NP:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_legacy_name(x.dtype)}")
    ordv = float(ord)
    dt = None if dtype is None else D.as_dtype(dtype).np
    return apply(T.vector_norm, (x,), (_dims(dim, x._data.ndim), keepdim, ordv, dt))


@public
def norm(input: Tensor, p: float | str | None = "fro", dim: ShapeLike | None = None,
         keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    """Vector norm (``p``: a number, 'fro' or inf) over ``dim`` or all elements.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[3., 4.]]).norm()
        tensor(5.)
    """
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("retrograd: the nuclear norm is not supported (no SVD rule)")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


@public
def dist(input: Tensor, other: Tensor, p: Number = 2) -> Tensor:
    return vector_norm(input - other, p)
