"""cumsum and cumprod as PyTorch's CPU kernels compute them (Note [Cumulative kernels]).

Example:
    >>> import numpy as np
    >>> from retrograd.ops.kernels.cumulative import torch_cumulative
    >>> torch_cumulative(np.cumsum, np.array([1.0, 2.0, 3.0], np.float32), 0)
    array([1., 3., 6.], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from ..._core.dtype import bfloat16

# Note [Cumulative kernels]
# PyTorch's CPU cumsum and cumprod are one sequential loop per slice that starts from
# the identity and accumulates in the accumulate type (float64 for float32, float32 for
# float16/bfloat16), rounding each partial result to the output dtype. NumPy starts
# from the first element and accumulates in the output dtype: float32 partial sums
# differ in the last bits, and a cumsum of -0.0 is -0.0 where 0 + (-0.0) gives +0.0.
_CUM_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


def torch_cumulative(fn, a: np.ndarray, axis: int, dtype=None) -> np.ndarray:
    """``np.cumsum`` or ``np.cumprod`` (``fn``) as PyTorch's CPU kernel computes it
    (Note [Cumulative kernels]).

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.kernels.cumulative import torch_cumulative
        >>> np.signbit(torch_cumulative(np.cumsum, np.array([-0.0]), 0))
        array([False])
    """
    if a.ndim == 0:  # a 0-d input gives a 0-d result (NumPy's would be 1-d)
        return torch_cumulative(fn, a.reshape(1), 0, dtype).reshape(())
    if not a.flags.c_contiguous:  # a C-order result for any input layout, as PyTorch's
        a = np.ascontiguousarray(a)
    out_dt = np.dtype(dtype) if dtype is not None else a.dtype
    if out_dt.kind != "f":
        return fn(a, axis=axis, dtype=dtype)
    acc = _CUM_ACC.get(out_dt) or (np.float32 if out_dt == bfloat16.np else None)
    r = fn(a, axis=axis, dtype=acc or out_dt)
    if acc is not None:
        r = r.astype(out_dt)
    if fn is np.cumsum:
        r += 0.0  # the loop starts from +0.0
    return r
