"""Resizing in ``retrograd.nn.functional`` (re-exported there): ``interpolate`` and the
deprecated ``upsample``, ``upsample_nearest``, ``upsample_bilinear``.

Example:
    >>> import retrograd as torch
    >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), size=3, mode='linear')
    tensor([[[1.0000, 1.5000, 2.0000]]])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._tensor import Tensor, _make
from ._functional_common import _check_float
from .functional_conv import _adaptive_avg


def _interp_matrix(n_in, n_out, align_corners, scale, dtype):
    a = np.zeros((n_out, n_in), dtype=np.float64)
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = dst * s
    else:
        s = (1.0 / scale) if (scale is not None and scale > 0) else n_in / n_out
        src = np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = src - i0
    l0 = 1.0 - l1
    rows = np.arange(n_out)
    np.add.at(a, (rows, i0), l0)
    np.add.at(a, (rows, i1), l1)
    return _make(a.astype(dtype))


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims: modes 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'area'.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    nsp = input._data.ndim - 2
    if nsp < 1:
        raise ValueError(f"interpolate: expected a 3D, 4D or 5D input (N, C, spatial...), got "
                         f"{list(input.shape)}")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode in ("linear", "bilinear") and align_corners is None:
        align_corners = False
    xsp = input._data.shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None else
                         "only one of size or scale_factor should be defined")
    if size is not None:
        osz = tuple(size) if isinstance(size, (list, tuple)) else (size,) * nsp
        scales = (None,) * nsp
    else:
        sf = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else \
            (scale_factor,) * nsp
        osz = tuple(int(math.floor(float(xsp[i]) * sf[i])) for i in range(nsp))
        scales = (None,) * nsp if recompute_scale_factor else tuple(float(s) for s in sf)
    if len(osz) != nsp:
        raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                         f"but got input with spatial dimensions of {list(xsp)} and output size "
                         f"of {list(osz)}.")
    if mode == "area":
        return _adaptive_avg(input, osz, nsp, "interpolate")
    out = input
    if mode in ("nearest", "nearest-exact"):
        for i in range(nsp):
            n_in, n_out = xsp[i], osz[i]
            if n_in == n_out:
                continue
            sc = np.float32(1.0 / scales[i]) if scales[i] is not None and scales[i] > 0 else \
                np.float32(n_in) / np.float32(n_out)
            dst = np.arange(n_out, dtype=np.float32)
            if mode == "nearest":
                src = np.floor(dst * sc)
            else:
                src = np.floor((dst + np.float32(0.5)) * sc)
            idx = np.minimum(src.astype(np.int64), n_in - 1)
            out = out.index_select(2 + i, _make(idx))
        return out if out is not input else input.clone()
    if mode in ("linear", "bilinear", "trilinear"):
        expected = {"linear": 1, "bilinear": 2, "trilinear": 3}[mode]
        if nsp != expected:
            raise NotImplementedError(f"Got {input._data.ndim}D input, but {mode} mode needs "
                                      f"{expected + 2}D input")
        _check_float(input, "upsample")
        for i in range(nsp):
            if xsp[i] == osz[i] and (scales[i] is None or scales[i] == 1.0):
                continue
            a = _interp_matrix(xsp[i], osz[i], align_corners, scales[i], input._data.dtype)
            out = out.movedim(2 + i, -1).matmul(a.t()).movedim(-1, 2 + i)
        return out if out is not input else input.clone()
    raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, "
                              "nearest-exact, linear, bilinear, trilinear, area are)")


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode, align_corners)`` with
    PyTorch's deprecation warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.nn.functional.upsample(torch.tensor([[[1., 2.]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='nearest')`` with PyTorch's deprecation warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.nn.functional.upsample_nearest(torch.tensor([[[1., 2.]]]), 3)
        tensor([[[1., 1., 2.]]])
    """
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` with PyTorch's
    deprecation warning.

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.nn.functional.upsample_bilinear(torch.ones(1, 1, 1, 1), 2).shape
        torch.Size([1, 1, 2, 2])
    """
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
