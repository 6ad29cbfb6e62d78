"""``F.grid_sample`` and ``F.affine_grid``: sampling an input at arbitrary normalized
coordinates (spatial transformers, warping, deformable sampling).

Example:
    >>> import retrograd as torch
    >>> import retrograd.nn.functional as F
    >>> theta = torch.tensor([[[1., 0., 0.], [0., 1., 0.]]])  # the identity
    >>> x = torch.arange(4.).reshape(1, 1, 2, 2)
    >>> grid = F.affine_grid(theta, (1, 1, 2, 2), align_corners=False)
    >>> F.grid_sample(x, grid, align_corners=False)
    tensor([[[[0., 1.],
              [2., 3.]]]])
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from ..._core.hints import Shape
from ..._functions.pointwise import where
from ..._tensor.tensor import Tensor, _make
from ...ops.public import FP32, autocast_category

__all__ = ["grid_sample", "affine_grid"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _default_align(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=3)
        return False
    return align_corners


# Note [Grid sampling as gathers]
# grid_sample is written with Tensor ops, as PyTorch's CPU kernel computes it: each grid
# point's normalized coordinate is unnormalized (align_corners), moved inside the input
# by the padding mode (border clamps; reflection folds the coordinate back and forth,
# then clamps), and the output is a weighted sum of the input at neighbouring integer
# points: 2^d corners with (bi/tri)linear weights, the nearest point (ties to even), or
# 4x4 points with the cubic-convolution weights (A = -0.75; there the padding mode acts
# on each tap's integer coordinate). The integer corners come from the data (floor, not
# differentiated); the weights are Tensor expressions of the grid, and the input values
# are one flat gather per corner, so the gradients w.r.t. input and grid are the
# kernel's (a sum over corners of weight x gradient, and value x d(weight)/d(grid)),
# second derivatives come free, and out-of-range corners under zeros padding contribute
# nothing. The grid gradient of nearest sampling is zero in PyTorch and None here (the
# output does not depend on the grid). Ties at exact padding boundaries may give the
# grid a one-sided gradient where PyTorch's kernel gives zero.

def _unnormalize(coord: Tensor, size: int, align: bool) -> Tensor:
    if align:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    """Fold ``coord`` (a Tensor or an array) into [low, high] by reflections."""
    is_t = isinstance(coord, Tensor)
    if twice_low == twice_high:
        return coord * 0 if is_t else np.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - low).abs() if is_t else np.abs(coord - low)
    flips = np.floor((c._data if is_t else c) / span)
    even = (flips % 2) == 0
    if is_t:
        extra = c - _make((flips * span).astype(flips.dtype))
        return where(_make(even), extra + low, (extra * -1) + (span + low))
    extra = c - flips * span
    return np.where(even, extra + low, span - extra + low)


def _clip(coord, size: int):
    if isinstance(coord, Tensor):
        return coord.clamp(0, size - 1)
    return np.clip(coord, 0, size - 1)


def _pad_coord(coord, size: int, padding: str, align: bool):
    """PyTorch's compute_coordinates: the padding mode applied to a source coordinate."""
    if padding == "border":
        return _clip(coord, size)
    if padding == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align else \
            _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


class _Gather:
    """Values of ``input`` (N, C, *sizes) at integer points (N, *out) per spatial dim,
    zero outside the input."""

    def __init__(self, input: Tensor) -> None:
        self.n, self.c = input.shape[0], input.shape[1]
        self.sizes = tuple(input.shape[2:])
        self.flat = input.reshape(self.n, self.c, -1)

    def __call__(self, idx: list) -> Tensor:
        inside = np.ones(idx[0].shape, dtype=bool)
        flat = np.zeros(idx[0].shape, dtype=np.int64)
        for i, size in zip(idx, self.sizes):
            inside &= (i >= 0) & (i < size)
            flat = flat * size + np.clip(i, 0, size - 1).astype(np.int64)
        out_shape = idx[0].shape[1:]
        pos = np.where(inside, flat, 0).reshape(self.n, 1, -1)
        vals = self.flat.gather(2, _make(np.broadcast_to(pos, (self.n, self.c, pos.shape[2]))
                                         .copy()))
        vals = vals.reshape(self.n, self.c, *out_shape)
        if inside.all():
            return vals
        mask = _make(inside.reshape(self.n, 1, *out_shape))
        return where(mask, vals, _make(np.zeros((), dtype=vals._data.dtype)))


def _cubic_weights(t: Tensor) -> list:
    a = _CUBIC_A

    def near(x):
        return ((x * (a + 2) - (a + 3)) * x) * x + 1

    def far(x):
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near((t * -1) + 1), far((t * -1) + 2)]


def _check_grid_args(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dim() not in (4, 5) or input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    nsp = input.dim() - 2
    if grid.dim() != input.dim() or grid.shape[-1] != nsp:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nsp} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                           f"{_scalar_name(grid)} (grid_sample needs input and grid of one "
                           "dtype: convert the grid, e.g. grid.to(input.dtype))")
    if not input.is_floating_point():
        raise RuntimeError(f"grid_sampler(): expected a floating-point input, got "
                           f"{input.dtype}")
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)}")


def _scalar_name(t: Tensor) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half",
            "bfloat16": "BFloat16"}.get(t.dtype.name, t.dtype.name)


@autocast_category(FP32, op="grid_sampler")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized coordinates of
    ``grid`` (N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3), in [-1, 1] (x first); gradients
    w.r.t. both (Note [Grid sampling as gathers]).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[[[0., 10.], [20., 30.]]]])
        >>> grid = torch.tensor([[[[0., 0.]]]])  # the centre
        >>> torch.nn.functional.grid_sample(x, grid, align_corners=True)
        tensor([[[[15.]]]])
    """
    _check_grid_args(input, grid, mode, padding_mode)
    align = _default_align(align_corners)
    sizes = tuple(input.shape[2:])
    nsp = len(sizes)
    gather = _Gather(input)
    # grid's last axis runs x, y(, z): spatial dim d (of D, H, W) is grid[..., nsp-1-d]
    coords = [_unnormalize(grid[..., nsp - 1 - d], sizes[d], align) for d in range(nsp)]
    if mode == "bicubic":
        return _bicubic(gather, coords, sizes, padding_mode, align)
    coords = [_pad_coord(c, s, padding_mode, align) for c, s in zip(coords, sizes)]
    if mode == "nearest":
        return gather([np.rint(c._data) for c in coords])
    lows = [np.floor(c._data) for c in coords]
    fracs = [c - _make(lo.astype(c._data.dtype)) for c, lo in zip(coords, lows)]
    out = None
    for corner in itertools.product((0, 1), repeat=nsp):
        weight = None
        for d, bit in enumerate(corner):
            w = fracs[d] if bit else (fracs[d] * -1) + 1
            weight = w if weight is None else weight * w
        term = gather([lo + bit for lo, bit in zip(lows, corner)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _bicubic(gather: _Gather, coords: list, sizes: tuple, padding: str, align: bool):
    (cy, cx), (h, w) = coords, sizes
    y0, x0 = np.floor(cy._data), np.floor(cx._data)
    wy = _cubic_weights(cy - _make(y0.astype(cy._data.dtype)))
    wx = _cubic_weights(cx - _make(x0.astype(cx._data.dtype)))
    out = None
    for j in range(4):
        yj = _pad_coord(y0 - 1 + j, h, padding, align)
        row = None
        for i in range(4):
            xi = _pad_coord(x0 - 1 + i, w, padding, align)
            term = gather([yj, xi]) * wx[i].unsqueeze(1)
            row = term if row is None else row + term
        term = row * wy[j].unsqueeze(1)
        out = term if out is None else out + term
    return out


def _base_coords(n: int, align: bool, dtype) -> np.ndarray:
    """PyTorch's linspace_from_neg_one: n points over [-1, 1] (0 for n = 1), pulled in
    by (n - 1) / n without align_corners."""
    if n <= 1:
        return np.zeros(1, dtype=dtype)
    r = np.linspace(-1.0, 1.0, n)
    return (r if align else r * (n - 1) / n).astype(dtype)


def affine_grid(theta: Tensor, size: Shape, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: ``theta`` (N, 2, 3) for a 4-D
    ``size`` (N, C, H, W) gives (N, H, W, 2); (N, 3, 4) for 5-D gives (N, D, H, W, 3).

    Example:
        >>> import retrograd as torch
        >>> theta = torch.tensor([[[1., 0., 0.5], [0., 1., 0.]]])  # shift right
        >>> torch.nn.functional.affine_grid(theta, (1, 1, 1, 2), align_corners=True)[0, 0]
        tensor([[-0.5000,  0.0000],
                [ 1.5000,  0.0000]])
    """
    align = _default_align(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {theta.shape[2]}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    dt = theta._data.dtype
    axes = [_base_coords(s, align, dt) for s in reversed(spatial)]  # x, y(, z)
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each of shape spatial
    base = np.stack(list(mesh) + [np.ones(spatial, dtype=dt)], axis=-1).reshape(1, -1,
                                                                          len(spatial) + 1)
    grid = _make(np.broadcast_to(base, (size[0],) + base.shape[1:]).copy()).matmul(
        theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, len(spatial))
