"""Resizing records: one per PyTorch upsample op (UpsampleNearest1D/2D/3D,
UpsampleNearestExact1D/2D/3D, UpsampleLinear1D, UpsampleBilinear2D, UpsampleBicubic2D,
UpsampleTrilinear3D, the antialiased UpsampleBilinear2DAa/Bicubic2DAa/Lanczos2DAa) and
adaptive average pooling (AdaptiveAvgPool2D/3D; 1-D is 2-D, as in ATen), each with its
backward op. Module alias ``TRS`` (Note [Module aliases] in ``ops/__init__.py``).

Note [Resize records]
Each of these ops is linear and separable: along every resized axis, output position o
is a weighted sum of a few input positions (the taps). ``p = (axes, meta)``: ``axes`` has
one entry per spatial axis, None (kept), ``("taps", idx, w)`` (k taps: idx and w of shape
(k, n_out), w None for nearest's single unweighted tap) or ``("mat", a)`` (a dense
(n_out, n_in) matrix: antialiased filters and adaptive windows); ``meta`` is what the node
shows (output_size, align_corners, scales). The forward kernel resizes the innermost axis
first and sums the taps in order, t0 w0 + t1 w1 + ..., as ATen's CPU kernel (its
Interpolate recursion over the dims, in the op's opmath type: float32 for the 16-bit
floats): a tap that is not read cannot spread an inf or a nan, as a dense matrix would.
The backward op multiplies by the transposed matrices (a scatter of the taps); the two
records are each other's derivative, so every order of derivative is again a resize.

Example:
    >>> import retrograd as torch
    >>> x = torch.ones(1, 1, 2, 2, requires_grad=True)
    >>> torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear").grad_fn.name()
    'UpsampleBilinear2DBackward0'
"""

from __future__ import annotations

import numpy as np

from ..dispatch import apply
from ..jvp_rules import jvp_linear
from ..op import _LOW, Op

_F32 = np.dtype(np.float32)


def opmath(dt):
    """ATen's opmath type: float32 for float16/bfloat16, the dtype itself otherwise."""
    return _F32 if dt in _LOW else np.dtype(dt)


def _axis_fwd(x, ax: int, spec):
    if spec[0] == "mat":
        return np.moveaxis(np.matmul(np.moveaxis(x, ax, -1), spec[1].T), -1, ax)
    _, idx, w = spec
    if w is None:  # nearest: one tap, no weight
        return np.take(x, idx[0], axis=ax)
    shape = [1] * x.ndim
    shape[ax] = -1
    acc = np.take(x, idx[0], axis=ax) * w[0].reshape(shape)
    for k in range(1, len(idx)):
        acc += np.take(x, idx[k], axis=ax) * w[k].reshape(shape)
    return acc


def dense(spec, n_in: int, dt) -> np.ndarray:
    """The (n_out, n_in) matrix of one axis's spec."""
    if spec[0] == "mat":
        return spec[1]
    _, idx, w = spec
    n_out = idx.shape[1]
    a = np.zeros((n_out, n_in), dt)
    rows = np.arange(n_out)
    for k in range(len(idx)):
        np.add.at(a, (rows, idx[k]), 1 if w is None else w[k])
    return a


def _resize_fwd(x, p):
    axes = p[0]
    nsp = len(axes)
    dt = x.dtype
    out = x.astype(opmath(dt), copy=False)
    for i in reversed(range(nsp)):  # the innermost axis first (Note [Resize records])
        if axes[i] is not None:
            out = _axis_fwd(out, x.ndim - nsp + i, axes[i])
    if out is x:
        out = x.copy()
    return out.astype(dt, copy=False)


def _resize_t_fwd(g, p):
    axes, meta = p
    nsp = len(axes)
    dt = g.dtype
    out = g.astype(opmath(dt), copy=False)
    for i, spec in enumerate(axes):
        if spec is None:
            continue
        ax = g.ndim - nsp + i
        a = dense(spec, meta[3][i], out.dtype)
        out = np.moveaxis(np.matmul(np.moveaxis(out, ax, -1), a), -1, ax)
    if out is g:
        out = g.copy()
    return out.astype(dt, copy=False)


def _pair(name: str, title: str, save=()):
    """(op, backward op) of one resize (Note [Resize records])."""
    back = Op(f"{name}_backward", _resize_t_fwd,
              (lambda gg, s, n: apply(fwd, (gg,), n._p),), node_name=f"{title}BackwardBackward0",
              jvp=jvp_linear)
    fwd = Op(name, _resize_fwd, (lambda g, s, n: apply(back, (g,), n._p),), save,
             node_name=f"{title}Backward0", jvp=jvp_linear)
    return fwd, back


upsample_nearest1d, upsample_nearest1d_backward = _pair("upsample_nearest1d",
                                                        "UpsampleNearest1D")
upsample_nearest2d, upsample_nearest2d_backward = _pair("upsample_nearest2d",
                                                        "UpsampleNearest2D")
upsample_nearest3d, upsample_nearest3d_backward = _pair("upsample_nearest3d",
                                                        "UpsampleNearest3D")
upsample_nearest_exact1d, upsample_nearest_exact1d_backward = _pair(
    "upsample_nearest_exact1d", "UpsampleNearestExact1D")
upsample_nearest_exact2d, upsample_nearest_exact2d_backward = _pair(
    "upsample_nearest_exact2d", "UpsampleNearestExact2D")
upsample_nearest_exact3d, upsample_nearest_exact3d_backward = _pair(
    "upsample_nearest_exact3d", "UpsampleNearestExact3D")
upsample_linear1d, upsample_linear1d_backward = _pair("upsample_linear1d", "UpsampleLinear1D")
upsample_bilinear2d, upsample_bilinear2d_backward = _pair("upsample_bilinear2d",
                                                          "UpsampleBilinear2D")
upsample_bicubic2d, upsample_bicubic2d_backward = _pair("upsample_bicubic2d",
                                                        "UpsampleBicubic2D")
upsample_trilinear3d, upsample_trilinear3d_backward = _pair("upsample_trilinear3d",
                                                            "UpsampleTrilinear3D")
upsample_bilinear2d_aa, upsample_bilinear2d_aa_backward = _pair("upsample_bilinear2d_aa",
                                                                "UpsampleBilinear2DAa")
upsample_bicubic2d_aa, upsample_bicubic2d_aa_backward = _pair("upsample_bicubic2d_aa",
                                                              "UpsampleBicubic2DAa")
upsample_lanczos2d_aa, upsample_lanczos2d_aa_backward = _pair("upsample_lanczos2d_aa",
                                                              "UpsampleLanczos2DAa")
adaptive_avg_pool2d, adaptive_avg_pool2d_backward = _pair("adaptive_avg_pool2d",
                                                          "AdaptiveAvgPool2D", (0,))
adaptive_avg_pool3d, adaptive_avg_pool3d_backward = _pair("adaptive_avg_pool3d",
                                                          "AdaptiveAvgPool3D", (0,))

#: the record of each interpolate mode, by the number of spatial dims
UPSAMPLE = {("nearest", 1): upsample_nearest1d, ("nearest", 2): upsample_nearest2d,
            ("nearest", 3): upsample_nearest3d,
            ("nearest-exact", 1): upsample_nearest_exact1d,
            ("nearest-exact", 2): upsample_nearest_exact2d,
            ("nearest-exact", 3): upsample_nearest_exact3d,
            ("linear", 1): upsample_linear1d, ("bilinear", 2): upsample_bilinear2d,
            ("bicubic", 2): upsample_bicubic2d, ("trilinear", 3): upsample_trilinear3d,
            ("bilinear-aa", 2): upsample_bilinear2d_aa, ("bicubic-aa", 2): upsample_bicubic2d_aa,
            ("lanczos-aa", 2): upsample_lanczos2d_aa}
ADAPTIVE_AVG = {2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}  # (1-D pools as 2-D, as ATen)
