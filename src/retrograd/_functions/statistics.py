"""Statistics: ``nanmedian``, ``mode``, ``msort``, ``quantile``/``nanquantile``, ``cov``,
``corrcoef`` and the trapezoidal rule (``trapezoid``, ``trapz``, ``cumulative_trapezoid``).

Example:
    >>> import retrograd as torch
    >>> torch.nanmedian(torch.tensor([1., float("nan"), 3., 2.]))
    tensor(2.)
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import apply, unary
from ..ops.kernels.selection import nanmedian_indices
from ..ops.op import FLOAT_NP
from ..ops.out_arg import with_out
from ..ops.public import FP32, public
from ..ops.records import scans as TSC
from ..ops.records import table as T
from ..ops.records.special import mul_scalar
from .reductions import _rt
from .sorting import sort


def _slices(data: np.ndarray, d: int) -> np.ndarray:
    """``data`` with ``d`` moved last and the other dims flattened: (rows, size)."""
    x = np.moveaxis(data, d, -1)
    return x.reshape(-1, x.shape[-1])


def _indices_back(idx: np.ndarray, data: np.ndarray, d: int, keepdim: bool) -> Tensor:
    """Per-row indices back in ``data``'s shape without (or keeping) dim ``d``."""
    shape = list(np.moveaxis(data, d, -1).shape[:-1])
    idx = idx.reshape(shape)
    if keepdim:
        idx = np.expand_dims(idx, d)
    return _make(np.array(idx, dtype=np.int64))  # (ascontiguousarray makes 0-d 1-d)


def _check_reduction_dim(fn: str, input: Tensor, d: int) -> None:
    if input._data.ndim and input._data.shape[d] == 0 and input._data.size == 0 \
            and np.prod([s for k, s in enumerate(input._data.shape) if k != d]) != 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size. (the "
                         f"tensor has shape {list(input.shape)}: reduce over a dim of "
                         "nonzero size)")


@public
@per_element_under_vmap
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
              out: tuple[Tensor, Tensor] | None = None
             ) -> Tensor | tuple[Tensor, Tensor]:
    """The lower median of the elements that are not nan, of all elements or along ``dim``
    with its index (nan where a slice is all nan).

    Example:
        >>> import retrograd as torch
        >>> torch.nanmedian(torch.tensor([[1., float("nan")], [4., 2.]]), 1).values
        tensor([1., 2.])
    """
    if dim is None:
        if out is not None:
            raise TypeError("nanmedian() received an invalid combination of arguments: out= "
                            "needs a dim (the median of all elements has no out= form)")
        return apply(TSC.nanmedian_all, (input,), (None, False))
    d = _wrap_dim(dim, input._data.ndim)
    data = input._data
    if data.ndim == 0:
        it = _make(np.zeros((), np.int64))
        return with_out("nanmedian", _rt("nanmedian")(
            apply(TSC.nanmedian_dim, (input,), (0, True, it)), it), out, (input,))
    _check_reduction_dim("nanmedian", input, d)
    idx = nanmedian_indices(data, d)
    it = _make(np.array(np.expand_dims(idx, d) if keepdim else idx, dtype=np.int64))
    return with_out("nanmedian", _rt("nanmedian")(
        apply(TSC.nanmedian_dim, (input,), (d, bool(keepdim), it)), it), out, (input,))


def _mode_row(row: np.ndarray) -> int:
    """Index of the most frequent value of ``row`` (the smallest of equally frequent ones,
    its last occurrence), as PyTorch's CPU kernel scans the sorted row."""
    order = np.argsort(row, kind="stable")
    s = row[order]
    ends = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    counts = np.diff(np.append(-1, ends))
    return int(order[ends[int(np.argmax(counts))]])


@public
@per_element_under_vmap
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *,
         out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """The most frequent value along ``dim`` (the smallest if several are as frequent) and
    the index of its last occurrence.

    Example:
        >>> import retrograd as torch
        >>> torch.mode(torch.tensor([1., 2., 2., 1., 3., 1.]))
        torch.return_types.mode(
        values=tensor(1.),
        indices=tensor(5))
    """
    data = input._data
    if data.ndim == 0:
        it = _make(np.zeros((), np.int64))
        return with_out("mode", _rt("mode")(apply(T.take_ops["mode"], (input, it), (0, True)),
                                            it), out, (input,))
    d = _wrap_dim(dim, data.ndim)
    _check_reduction_dim("mode", input, d)
    rows = _slices(data, d)
    idx = np.array([_mode_row(r) for r in rows] if rows.shape[1] else [0] * len(rows),
                   dtype=np.int64)
    it = _indices_back(idx, data, d, keepdim)
    return with_out("mode", _rt("mode")(
        apply(T.take_ops["mode"], (input, it), (d, bool(keepdim))), it), out, (input,))


@public
@per_element_under_vmap
def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input`` sorted along its first dim (``sort(input, dim=0).values``).

    Example:
        >>> import retrograd as torch
        >>> torch.msort(torch.tensor([[3., 1.], [1., 2.]]))
        tensor([[1., 1.],
                [3., 2.]])
    """
    return with_out("msort", sort(input, 0).values, out, (input,))


# ---------------------------------------------------------------------------------
# quantiles: PyTorch's quantile_compute in Tensor ops (sort, gather, lerp), so the
# gradient flows to the two order statistics each quantile lies between

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(fn: str, input: Tensor, q, dim, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{fn}() input tensor must be either float or double dtype (got "
                           f"{input.dtype}: convert first, e.g. x.double())")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{fn}() q must be a scalar or 1D tensor")
        if q._data.dtype != input._data.dtype:
            raise RuntimeError(f"{fn}() q tensor must be same dtype as the input tensor")
        qt, qv = q, q._data
    else:
        qv = np.asarray(float(q))
        if not 0 <= qv <= 1:
            raise RuntimeError(f"{fn}() q must be in the range [0, 1] but got {float(q)}")
        qt = _make(qv.astype(input._data.dtype))
    if not input._data.size:
        raise RuntimeError(f"{fn}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fn}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not bool(((qv >= 0) & (qv <= 1)).all()):
        raise RuntimeError(f"{fn}() q values must be in the range [0, 1]")
    shape = list(input._data.shape)
    if dim is None:
        out_shape = [1] * len(shape) if keepdim else []
        ordered = sort(input.flatten()).values
    else:
        d = _wrap_dim(dim, input._data.ndim)
        out_shape = list(shape)
        if out_shape:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        last = input._data.ndim - 1
        ordered = (sort(input).values if d == last
                   else sort(input.unsqueeze(-1).transpose(d, -1)).values)
    ordered = ordered.view(out_shape + [-1])
    n = ordered.shape[-1]
    if ignore_nan:
        ranks = qt * (ordered.isnan().logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        ranks = (qt * (n - 1)).masked_fill(ordered.isnan().any(-1, keepdim=True), n - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(ranks.shape, 0.5) if interpolation == "midpoint" \
            else ranks - below
        values = values.lerp(ordered.gather(-1, ranks.ceil().long()), weights)
    if qt._data.ndim:  # the quantiles first, as PyTorch's transpose_ puts them
        values = apply(TSC.unsqueeze_inplace, (values,), 0)
        values = apply(TSC.transpose_inplace, (values,), (0, values.ndim - 1))
    # PyTorch squeezes its fresh result in place (SqueezeBackward4)
    return apply(T.squeeze_inplace, (values,), (values.ndim - 1,))


@public(autocast=FP32)  # PyTorch's CPU autocast runs quantiles in float32
@per_element_under_vmap
def quantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The ``q``-th quantiles (a number or a 1-D tensor in [0, 1]) of all elements or along
    ``dim``, between order statistics by ``interpolation`` ('linear', 'lower', 'higher',
    'midpoint' or 'nearest'); nan where a slice holds a nan.

    Example:
        >>> import retrograd as torch
        >>> torch.quantile(torch.tensor([1., 2., 4., 8.]), 0.5)
        tensor(3.)
    """
    return with_out("quantile", _quantile("quantile", input, q, dim, keepdim, interpolation,
                                          False), out, (input, q), through_copy=True)


@public(autocast=FP32)
@per_element_under_vmap
def nanquantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """``quantile`` of the elements that are not nan (nan where a slice is all nan).

    Example:
        >>> import retrograd as torch
        >>> torch.nanquantile(torch.tensor([1., float("nan"), 4., 8.]), 0.5)
        tensor(4.)
    """
    return with_out("nanquantile", _quantile("nanquantile", input, q, dim, keepdim,
                                             interpolation, True), out, (input, q),
                    through_copy=True)


# ---------------------------------------------------------------------------------
# covariance and integration: PyTorch's composites, op for op (their grad_fn too)


def _check_weights(kind: str, w: Tensor, n: int, integral: bool) -> None:
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {w._data.ndim} dimensions")
    ok = w._data.dtype.kind in "iu" if integral else w._data.dtype in FLOAT_NP
    if not ok:
        what = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {kind} to have {what} dtype but got {kind} with "
                           f"{_LEGACY_NAMES[w.dtype.name]} dtype")
    if w._data.size != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {w._data.size} != {n}")
    if n and w._data.min() < 0:
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@public
@per_element_under_vmap
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in
    columns), with ``correction`` (1: Bessel's) and frequency / analytic weights.

    Example:
        >>> import retrograd as torch
        >>> torch.cov(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input._data.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = _make(np.asarray(n, np.int64))
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - _mul_c((w * aweights).sum(), correction) / w_sum
    else:
        norm = w_sum - correction
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t())
    return c.true_divide(norm).squeeze()


@public
@per_element_under_vmap
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in ``input``'s rows, clipped
    to [-1, 1].

    Example:
        >>> import retrograd as torch
        >>> torch.corrcoef(torch.tensor([[0., 1., 2.], [4., 2., 0.]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:  # one variable: nan for a covariance of nan, inf or 0, else 1
        return c / c
    sd = c.diagonal().sqrt()
    c = c / sd.view(-1, 1)
    c = c / sd.view(1, -1)
    return c.clip(-1, 1)


def _mul_c(t: Tensor, c: float) -> Tensor:
    """``t * c`` as PyTorch's C++ compositions call it (mul.Scalar: MulBackward1)."""
    return unary(mul_scalar, t, c) if t._data.dtype in FLOAT_NP else t * c


def _div_c(t: Tensor, c: float) -> Tensor:
    """``t / c`` as PyTorch's C++ compositions call it (div.Scalar: DivBackward1)."""
    return unary(TSC.div_scalar, t, c) if t._data.dtype in FLOAT_NP else t / c


def _spacing(y: Tensor, x: Tensor, d: int) -> Tensor:
    """The differences of the sample points ``x`` along dim ``d`` of ``y``."""
    if x._data.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = x.view(shape)
    elif x._data.ndim < y._data.ndim:
        x = x.view([1] * (y.ndim - x.ndim) + list(x.shape))
    size = x.shape[d]
    return x.narrow(d, 1, size - 1) - x.narrow(d, 0, size - 1)


def _integration_args(fn: str, y: Tensor, x, dx, dim: int):
    if x is not None and dx is not None:
        raise TypeError(f"{fn}() received an invalid combination of arguments: pass either "
                        "x (the sample points) or dx (their spacing), not both")
    if y._data.dtype == np.bool_:
        raise RuntimeError(f"{fn}: received a bool input for `y`, but bool is not supported")
    return _wrap_dim(dim, y._data.ndim)


@public(method=False)
@per_element_under_vmap
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples ``y`` at the points ``x`` (or spaced
    ``dx`` apart, 1 by default).

    Example:
        >>> import retrograd as torch
        >>> torch.trapezoid(torch.tensor([1., 2., 4.]))
        tensor(4.5000)
        >>> torch.trapezoid(torch.tensor([1., 2., 4.]), torch.tensor([0., 1., 3.]))
        tensor(7.5000)
    """
    d = _integration_args("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:  # PyTorch's zeros_like_except: no graph
        return _make(np.zeros(y.shape[:d] + y.shape[d + 1:], y._data.dtype))
    if isinstance(x, Tensor):
        size = y.shape[d]
        left, right = y.narrow(d, 0, size - 1), y.narrow(d, 1, size - 1)
        return _div_c(((left + right) * _spacing(y, x, d)).sum(d), 2.0)
    step = 1.0 if dx is None else dx
    return _mul_c(y.sum(d) - _mul_c(y.select(d, 0) + y.select(d, -1), 0.5), step)


@public(method=False)
@per_element_under_vmap
def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    """``trapezoid`` under its NumPy name.

    Example:
        >>> import retrograd as torch
        >>> torch.trapz(torch.tensor([1., 2., 4.]), dx=2.0)
        tensor(9.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


@public(method=False)
@per_element_under_vmap
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim`` (one value fewer than ``y``).

    Example:
        >>> import retrograd as torch
        >>> torch.cumulative_trapezoid(torch.tensor([1., 2., 4.]))
        tensor([1.5000, 4.5000])
    """
    d = _integration_args("cumulative_trapezoid", y, x, dx, dim)
    size = y.shape[d]
    left, right = y.narrow(d, 0, max(size - 1, 0)), y.narrow(d, min(1, size), max(size - 1, 0))
    if isinstance(x, Tensor):
        return _div_c(((left + right) * _spacing(y, x, d)).cumsum(d), 2.0)
    step = 1.0 if dx is None else dx
    return _mul_c(left + right, step / 2.0).cumsum(d)


@public(inplace=True)
@per_element_under_vmap
def renorm(input: Tensor, p: float, dim: int, maxnorm: float, *,
           out: Tensor | None = None) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (the others unchanged).

    Example:
        >>> import retrograd as torch
        >>> torch.renorm(torch.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    if input._data.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got "
                           f"{input._data.ndim} dimensions")
    if input._data.dtype not in FLOAT_NP:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_LEGACY_NAMES[input.dtype.name]}")
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p = {p}: pass p > 0)")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    d = _wrap_dim(dim, input._data.ndim)
    return with_out("renorm", apply(TSC.renorm, (input,), (float(p), d, float(maxnorm))), out,
                    (input,))
