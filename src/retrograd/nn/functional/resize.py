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

from ..._core.hints import FloatOrFloats, ShapeLike
from ..._tensor.tensor import Tensor, _make
from ...ops.dispatch import apply
from ...ops.records import resize as TRS
from .common import _check_float
from .conv import _adaptive_avg


def _scale(n_in: int, n_out: int, align_corners: bool, scale) -> float:
    """PyTorch's area_pixel_compute_scale: input pixels per output pixel."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return (1.0 / scale) if (scale is not None and scale > 0) else n_in / n_out


def _cubic1(x, a):
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x, a):
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _aa_filter(mode: str):
    if mode == "bilinear":
        return lambda x: np.maximum(1.0 - np.abs(x), 0.0)
    if mode == "lanczos":  # Lanczos-3: sinc(x) sinc(x / 3) on (-3, 3), as PIL's
        return lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)

    def cubic(x):  # PIL's a = -0.5, as PyTorch's antialiased bicubic
        x = np.abs(x)
        return np.where(x < 1, _cubic1(x, -0.5), np.where(x < 2, _cubic2(x, -0.5), 0.0))
    return cubic


def _aa_matrix(n_in, n_out, align_corners, scale, mode, dtype):
    """(n_out, n_in) weights of PyTorch's antialiased resize along one axis: the filter
    widened by the downscale factor, cut to the input and normalized to sum 1."""
    s = _scale(n_in, n_out, align_corners, scale)
    size = {"bilinear": 2, "bicubic": 4, "lanczos": 6}[mode]
    support = size * 0.5 * s if s >= 1.0 else size * 0.5
    inv = 1.0 / s if s >= 1.0 else 1.0
    filt = _aa_filter(mode)
    a = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = w.sum()
        a[i, lo:hi] = w / total if total != 0 else w
    return _make(a.astype(dtype))


def _area_scale(n_in: int, n_out: int, align_corners: bool, scale, ot):
    """ATen's area_pixel_compute_scale in the opmath type ``ot``."""
    if align_corners:
        return ot(n_in - 1) / ot(n_out - 1) if n_out > 1 else ot(0)
    return ot(1.0 / scale) if scale is not None and scale > 0 else ot(n_in) / ot(n_out)


def _source_index(n_in, n_out, align_corners, scale, ot, cubic=False):
    """ATen's area_pixel_compute_source_index for every output position, then
    guard_index_and_lambda: (the index at or below, its weight lambda in [0, 1])."""
    ratio = _area_scale(n_in, n_out, align_corners, scale, ot)
    dst = np.arange(n_out).astype(ot)
    real = ratio * dst if align_corners else ratio * (dst + ot(0.5)) - ot(0.5)
    if not align_corners and not cubic:
        real = np.maximum(real, ot(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam = np.clip(real - i0.astype(ot), ot(0), ot(1)).astype(ot)
    return i0, lam


def _linear_taps(n_in, n_out, align_corners, scale, ot):
    """Two taps per output position (ATen's compute_source_index_and_lambda)."""
    i0, lam1 = _source_index(n_in, n_out, align_corners, scale, ot)
    i1 = i0 + (i0 < n_in - 1)
    return ("taps", np.stack([i0, i1]), np.stack([ot(1) - lam1, lam1]))


def _cubic_taps(n_in, n_out, align_corners, scale, ot):
    """Four taps per output position, clamped into the input, Keys' cubic with A = -0.75
    (ATen's HelperInterpCubic)."""
    i0, t = _source_index(n_in, n_out, align_corners, scale, ot, cubic=True)
    a = ot(-0.75)
    one = ot(1)
    w = np.stack([_cubic2(t + one, a), _cubic1(t, a), _cubic1(one - t, a),
                  _cubic2(one - t + one, a)]).astype(ot)
    idx = np.stack([np.clip(i0 - 1 + k, 0, n_in - 1) for k in range(4)])
    return ("taps", idx, w)


def _nearest_taps(n_in, n_out, scale, exact: bool):
    """One tap per output position: ATen's nearest_idx (nearest_exact_idx), the scale in
    float32."""
    sc = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * sc) if exact else np.floor(dst * sc)
    return ("taps", np.minimum(src.astype(np.int64), n_in - 1)[None], None)


def _resize(op, input: Tensor, osz, scales, spec, align_corners=None) -> Tensor:
    """One resize record (Note [Resize records] in ops/records/resize.py): ``spec(n_in,
    n_out, scale)`` gives each axis's taps or matrix; an axis of unchanged size with no
    scale (or scale 1) is kept."""
    xsp = input._data.shape[2:]
    axes = tuple(None if xsp[i] == osz[i] and (scales[i] is None or scales[i] == 1.0)
                 else spec(xsp[i], osz[i], scales[i]) for i in range(len(osz)))
    meta = (tuple(osz), align_corners, tuple(scales), tuple(xsp))
    return apply(op, (input,), (axes, meta))


def _interpolating(input: Tensor, osz, scales, mode: str, align_corners: bool,
                   antialias: bool) -> Tensor:
    """interpolate's linear, bilinear, bicubic, trilinear and lanczos modes: one upsample
    record (Note [Resize records] in ops/records/resize.py)."""
    nsp = input._data.ndim - 2
    expected = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}[mode]
    if nsp != expected:
        if mode in ("bicubic", "lanczos"):  # PyTorch's catch-all message
            raise NotImplementedError(
                f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                f"{input._data.ndim}D) for the modes: nearest | linear | bilinear | bicubic "
                f"| trilinear | lanczos | area | nearest-exact (got {mode})")
        raise NotImplementedError(f"Got {input._data.ndim}D input, but {mode} mode needs "
                                  f"{expected + 2}D input")
    _check_float(input, "upsample")
    ot = TRS.opmath(input._data.dtype).type
    if antialias:
        return _resize(TRS.UPSAMPLE[mode + "-aa", nsp], input, osz, scales,
                       lambda i, o, sc: ("mat", _aa_matrix(i, o, align_corners, sc, mode,
                                                           ot)._data), align_corners)
    taps = _cubic_taps if mode == "bicubic" else _linear_taps
    return _resize(TRS.UPSAMPLE[mode, nsp], input, osz, scales,
                   lambda i, o, sc: taps(i, o, align_corners, sc, ot), align_corners)


def interpolate(input: Tensor, size: ShapeLike | None = None,
                scale_factor: FloatOrFloats | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims: modes 'nearest', 'nearest-exact', 'linear', 'bilinear',
    'bicubic', 'trilinear', 'area', 'lanczos' (with ``antialias=True``); ``antialias=True``
    for bilinear, bicubic and lanczos (4-D).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.functional.interpolate(torch.tensor([[[1., 2.]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    nsp = input._data.ndim - 2
    if nsp < 1:
        raise ValueError(f"interpolate: expected a 3D, 4D or 5D input (N, C, spatial...), got "
                         f"{list(input.shape)}")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and nsp == 2):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and nsp == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode in ("linear", "bilinear", "bicubic", "trilinear", "lanczos") and \
            align_corners is None:
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
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        return _resize(TRS.UPSAMPLE[mode, nsp], input, osz, scales,
                       lambda i, o, sc: _nearest_taps(i, o, sc, exact))
    if mode in ("linear", "bilinear", "bicubic", "trilinear", "lanczos"):
        return _interpolating(input, osz, scales, mode, align_corners, antialias)
    raise NotImplementedError(f"interpolate: mode '{mode}' is not supported (nearest, "
                              "nearest-exact, linear, bilinear, bicubic, trilinear, lanczos, "
                              "area are)")


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size: ShapeLike | None = None,
             scale_factor: FloatOrFloats | None = None, mode: str = "nearest",
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


def upsample_nearest(input: Tensor, size: ShapeLike | None = None,
                     scale_factor: FloatOrFloats | None = None) -> Tensor:
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


def upsample_bilinear(input: Tensor, size: ShapeLike | None = None,
                      scale_factor: FloatOrFloats | None = None) -> Tensor:
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
