"""Layer normalization's kernels: the forward pass with its statistics computed once, and
PyTorch's layer_norm_backward in a few passes (Note [Layer norm kernels]).

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.norms import layer_norm_kernel
    >>> layer_norm_kernel(np.array([[1.0, 3.0]]), None, None, 1, 0.0)
    array([[-1.,  1.]])
"""

from __future__ import annotations

import numpy as np

from .. import buffers as _buffers
from .sum import row_dots, row_sums

# Note [Layer norm kernels]
# layer_norm over the last k dims is one record (NativeLayerNormBackward0, as PyTorch's)
# instead of nine composed ops. Viewed as rows of n elements:
#  * forward: d = x - mean (into the output buffer), var = the row sums of d*d over n
#    (Note [Row sums] in sum.py: no temporary on short rows), rstd = 1 / sqrt(var +
#    eps); out = d * rstd, then * weight, + bias, in place: five passes over the data
#    and one fresh buffer;
#  * backward (PyTorch's layer_norm_backward, in its x-hat form): xhat = (x - mean) *
#    rstd, gw = g * weight, gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),
#    dweight = column sums of g * xhat, dbias = column sums of g. The statistics are
#    computed again from the saved input (two passes) rather than kept on the node.
# The statistics of a row are computed in the input's dtype, with NumPy's pairwise mean;
# PyTorch's float32 rows use Welford's moments in float32: the two agree to a few ulps.


def _rows(x, k: int):
    n = 1
    for s in x.shape[x.ndim - k:]:
        n *= s
    return x.reshape(-1, n), n


def layer_norm_stats(x2, n: int, eps: float):
    """(mean, rstd, d) of the rows of the 2-d ``x2``: ``d`` = x - mean, a new array."""
    mean = row_sums(x2)[:, None]
    mean /= n
    d = np.subtract(x2, mean, out=_buffers.empty(x2.shape, x2.dtype))
    var = row_dots(d, d)[:, None]
    var /= n
    var += eps
    rstd = np.sqrt(var, out=var)
    np.divide(1, rstd, out=rstd)
    return mean, rstd, d


def layer_norm_kernel(x, w, b, k: int, eps: float):
    """layer_norm of ``x`` over its last ``k`` dims, with optional ``w`` and ``b`` of those
    dims' shape (Note [Layer norm kernels])."""
    x2, n = _rows(np.ascontiguousarray(x), k)
    if x2.size == 0:
        return np.empty(x.shape, x.dtype)
    _, rstd, out = layer_norm_stats(x2, n, eps)
    out *= rstd
    if w is not None:
        out *= w.reshape(-1)
    if b is not None:
        out += b.reshape(-1)
    return out.reshape(x.shape)


def layer_norm_backward_kernel(g, x, w, k: int, eps: float, needs):
    """(dx, dweight, dbias) of layer_norm (None where ``needs`` is false): Note [Layer norm
    kernels]."""
    x2, n = _rows(np.ascontiguousarray(x), k)
    g2 = np.ascontiguousarray(g).reshape(x2.shape)
    _, rstd, xhat = layer_norm_stats(x2, n, eps)
    xhat *= rstd
    gx = gw = gb = None
    if needs[1] and w is not None:
        gw = np.einsum("ij,ij->j", g2, xhat).reshape(w.shape)
    if needs[2]:
        gb = np.add.reduce(g2, axis=0).reshape(x.shape[x.ndim - k:])
    if needs[0]:
        gy = g2 if w is None else np.multiply(g2, w.reshape(-1))
        m1 = row_sums(gy)[:, None]
        m1 /= n
        m2 = row_dots(gy, xhat)[:, None]
        m2 /= n
        gx = np.multiply(xhat, m2, out=xhat)
        np.subtract(gy, gx, out=gx)
        gx -= m1
        gx *= rstd
        gx = gx.reshape(x.shape)
    return gx, gw, gb
