"""``torch.testing.make_tensor``: a tensor of random values in a dtype's default range,
drawn as PyTorch draws them (``randint`` for bools and integers, ``uniform_`` for floats),
so a seeded call gives PyTorch's values.

Example:
    >>> import retrograd as torch
    >>> t = torch.testing.make_tensor(2, 3, dtype=torch.int64, device="cpu")
    >>> t.shape, bool(((t >= -9) & (t < 10)).all())
    (torch.Size([2, 3]), True)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import ml_dtypes

from .._core import dtype as D
from .._tensor.tensor import Tensor
from . import creation

__all__ = ["make_tensor"]

_INTEGRAL = (D.uint8, D.int8, D.int16, D.int32, D.int64)
_FLOATING = (D.float16, D.bfloat16, D.float32, D.float64)


def make_tensor(*shape: int | Sequence[int], dtype: D.dtype, device, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """Values drawn uniformly from ``[low, high)`` (defaults by dtype, PyTorch's: bool
    [0, 2), unsigned [0, 10), signed integers [-9, 10), floats [-9, 9)); bounds outside
    the dtype's finite range are clamped to it. ``noncontiguous`` gives a strided view
    (more than one element), ``exclude_zero`` replaces zeros with 1 (bools, integers) or the
    dtype's smallest normal number (floats).

    Example:
        >>> import retrograd as torch
        >>> x = torch.testing.make_tensor((3,), dtype=torch.float32, device="cpu", low=-1,
        ...                               high=1, requires_grad=True)
        >>> x.requires_grad, bool(((x >= -1) & (x < 1)).all())
        (True, True)
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    dtype = D.as_dtype(dtype)
    integral = dtype is D.bool or dtype in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is D.bool or dtype in _INTEGRAL:
        if dtype is D.bool:
            bounds = (0, 2, 0, 2)
        else:
            info = ml_dtypes.iinfo(dtype.np)
            bounds = (int(info.min), int(info.max) + (dtype is not D.int64), -9 if
                      info.min < 0 else 0, 10)
        low, high = _low_high(low, high, dtype, *bounds)
        result = creation.randint(low, high, shape, device=device, dtype=dtype)
    else:  # every other retrograd dtype is a floating one
        info = ml_dtypes.finfo(dtype.np)
        low, high = _low_high(low, high, dtype, float(info.min), float(info.max), -9, 9)
        result = creation.empty(shape, device=device, dtype=dtype)
        if high - low >= float(info.max):  # the width would overflow: draw half, double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        tiny = 1 if integral else float(ml_dtypes.finfo(dtype.np).tiny)
        result[result == 0] = tiny
    if not integral:
        result.requires_grad_(requires_grad)
    return result


def _low_high(low, high, dtype: D.dtype, lowest: float, highest: float, default_low: float,
              default_high: float) -> tuple:
    """``low`` and ``high`` checked, defaulted and clamped to ``[lowest, highest)``, as
    PyTorch's make_tensor (integer bounds rounded up)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                         f"{high}), but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype is D.bool or dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high
