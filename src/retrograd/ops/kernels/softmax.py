"""softmax and log_softmax, forward and backward (PyTorch's _softmax_backward_data and
_log_softmax_backward_data), in few passes (Note [Softmax kernels]).

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.softmax import softmax_kernel
    >>> softmax_kernel(np.array([[0.0, 0.0], [0.0, np.log(3.0)]]), 1)
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
"""

from __future__ import annotations

import math

import numpy as np

from .. import buffers as _buffers
from .sum import row_dots as _row_dots
from .sum import row_sums as _row_sums

_max_reduce = np.maximum.reduce
_add_reduce = np.add.reduce

# Note [Softmax kernels]
# softmax and log_softmax over the last dim of a float32/float64 array, the common case
# (attention scores, logits), see the array as rows and make few passes, each into the one
# output buffer (Note [Kernel passes] in activations.py):
#  * forward: the row maxima, x - max into the output, exp in place, the row sums, then
#    one division (softmax) or the log of the sums subtracted (log_softmax, whose exp
#    goes into a block-sized scratch array, row block by row block);
#  * backward: softmax's y * (g - sum(g * y)) and log_softmax's g - exp(y) * sum(g),
#    the sums without a temporary on short rows.
# Row sums are those of Note [Row sums] (sum.py): einsum's on short rows. Row maxima of
# short rows whose length is a power of two are found by halving (the maximum of the even
# and the odd elements of the flat array, a single strided pass each: 8x faster than
# maximum.reduce on 4096 rows of 64); other rows use maximum.reduce. Both propagate nan.
# A row of -inf takes 0 as its maximum (its exponentials are then 0: softmax nan,
# log_softmax -inf, as PyTorch); a +inf (or nan) maximum is kept, and inf - inf makes the
# row nan, as PyTorch's kernel does. Other dims and dtypes take the general path: the same
# formulas with NumPy reductions along ``dim``.
_PAIRWISE_MAX_LEN = 1024  # rows up to this length (a power of two) are halved
_BLOCK = 1 << 16  # elements of log_softmax's exp scratch


def _fix_inf_max(m):
    """-inf maxima replaced by 0 (Note [Softmax kernels]); one sum on the common path: the
    sum of squares of finite maxima is finite (or overflows, which only sends us to the
    exact slow path)."""
    tot = np.vdot(m, m)
    if not math.isfinite(tot):  # (not tot - tot: inf - inf warns in NumPy)
        m = np.where(m == -np.inf, 0, m)
    return m


def row_max(x, dim):
    """The max along ``dim`` (kept), -inf maxima replaced by 0 (Note [Softmax kernels]).
    An empty dim gives zeros (the rows are empty, or their sum of exponentials is 0, as
    PyTorch: logsumexp of nothing is -inf)."""
    try:
        m = _max_reduce(x, axis=dim, keepdims=True)
    except ValueError:  # zero-size reduction: no identity for maximum
        shape = list(x.shape)
        shape[dim] = 1
        return np.zeros(shape, x.dtype)
    return _fix_inf_max(m)


def _rows_max(x2):
    """Row maxima (a column) of the C-contiguous 2-d ``x2`` (Note [Softmax kernels])."""
    n = x2.shape[1]
    if 2 <= n <= _PAIRWISE_MAX_LEN and n & (n - 1) == 0:
        a = x2.reshape(-1)
        while n > 1:
            a = np.maximum(a[0::2], a[1::2])
            n >>= 1
        return _fix_inf_max(a.reshape(-1, 1))
    return _fix_inf_max(_max_reduce(x2, axis=1, keepdims=True))


# below this many elements the row kernels' extra steps (blocks, scratch rows, einsum)
# cost more than they save: a 16x1 log_softmax with its backward took 15 us longer than
# the plain NumPy path (W3's loss; timeit on the process-time clock)
_ROWS_MIN = 4096


def _last_dim_rows(x, dim):
    """``x`` as C-contiguous rows when ``dim`` is its last and it is a nonempty float32 or
    float64 array; else None."""
    if dim not in (-1, x.ndim - 1) or x.dtype.char not in "fd" or x.size < _ROWS_MIN or \
            x.shape[-1] == 0:
        return None
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def softmax_kernel(x, dim):
    if x.ndim == 0:  # a 0-d input: one element, the result 0-d too (as PyTorch)
        return softmax_kernel(x.reshape(1), 0).reshape(())
    x2 = _last_dim_rows(x, dim)
    if x2 is not None:
        e = np.subtract(x2, _rows_max(x2), out=_buffers.empty(x2.shape, x2.dtype))
        np.exp(e, out=e)
        e /= _row_sums(e)[:, None]
        return e.reshape(x.shape)
    if not x.flags.c_contiguous:  # as PyTorch, which runs on x.contiguous(): a C-order result
        x = np.ascontiguousarray(x)
    e = np.exp(np.subtract(x, row_max(x, dim)))
    e /= _add_reduce(e, axis=dim, keepdims=True)
    return e if e.dtype == x.dtype else e.astype(x.dtype)


def log_softmax_kernel(x, dim):
    if x.ndim == 0:  # a 0-d input: one element, the result 0-d too (as PyTorch)
        return log_softmax_kernel(x.reshape(1), 0).reshape(())
    x2 = _last_dim_rows(x, dim)
    if x2 is not None:
        sh = np.subtract(x2, _rows_max(x2), out=_buffers.empty(x2.shape, x2.dtype))
        s = np.empty((x2.shape[0], 1), x2.dtype)
        rows = max(1, _BLOCK // x2.shape[1])
        tmp = np.empty((min(rows, x2.shape[0]), x2.shape[1]), x2.dtype)
        for i in range(0, x2.shape[0], rows):
            b = sh[i:i + rows]
            t = tmp[:b.shape[0]]
            np.exp(b, out=t)
            _row_sums(t, out=s[i:i + rows, 0])
        np.log(s, out=s)
        sh -= s
        return sh.reshape(x.shape)
    if not x.flags.c_contiguous:  # as PyTorch, which runs on x.contiguous(): a C-order result
        x = np.ascontiguousarray(x)
    sh = np.subtract(x, row_max(x, dim))
    s = _add_reduce(np.exp(sh), axis=dim, keepdims=True)
    np.subtract(sh, np.log(s, out=s), out=sh)
    return sh if sh.dtype == x.dtype else sh.astype(x.dtype)


def _same_rows(g, y, dim):
    """``g`` and ``y`` as rows (Note [Softmax kernels]) when they have one shape and dtype
    and ``dim`` is their last; else None."""
    if g.shape != y.shape or g.dtype != y.dtype:
        return None
    y2 = _last_dim_rows(y, dim)
    if y2 is None:
        return None
    return np.ascontiguousarray(g).reshape(y2.shape), y2


def log_softmax_backward_kernel(g, y, dim):
    """g - exp(y) * sum(g) along ``dim``."""
    if y.ndim == 0:
        return log_softmax_backward_kernel(g.reshape(1), y.reshape(1), 0).reshape(())
    rows = _same_rows(g, y, dim)
    if rows is not None:
        g2, y2 = rows
        e = np.exp(y2, out=_buffers.empty(y2.shape, y2.dtype))
        e *= _row_sums(g2)[:, None]
        np.subtract(g2, e, out=e)
        return e.reshape(y.shape)
    e = np.exp(y)
    e *= _add_reduce(g, axis=dim, keepdims=True)
    return np.subtract(g, e, out=e)


def softmax_backward_kernel(g, y, dim):
    """y * (g - sum(g * y)) along ``dim``."""
    if y.ndim == 0:
        return softmax_backward_kernel(g.reshape(1), y.reshape(1), 0).reshape(())
    rows = _same_rows(g, y, dim)
    if rows is not None:
        g2, y2 = rows
        s = _row_dots(g2, y2)[:, None]
        out = _buffers.result_for(g, None, y.shape, y.dtype).reshape(y2.shape)
        np.subtract(g2, s, out=out)  # (out may be g itself: each element read first)
        out *= y2
        return out.reshape(y.shape)
    t = g * y
    np.subtract(g, _add_reduce(t, axis=dim, keepdims=True), out=t)
    t *= y
    return t
