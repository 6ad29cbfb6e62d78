"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a floating or integer dtype.

Example:
    >>> import retrograd as torch
    >>> torch.finfo(torch.float16).eps, torch.iinfo(torch.int8).max
    (0.0009765625, 127)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtype as D

__all__ = ["finfo", "iinfo"]


class finfo:
    """Limits of a floating dtype (the default dtype when none is given): ``bits``,
    ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution``, ``dtype``.

    Example:
        >>> import retrograd as torch
        >>> torch.finfo(torch.bfloat16).eps
        0.0078125
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __init__(self, type: D.dtype | None = None) -> None:
        dt = D.get_default_dtype() if type is None else type
        if not isinstance(dt, D.dtype) or not dt.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            f"torch.iinfo to handle 'torch.finfo' (got {dt})")
        info = ml_dtypes.finfo(dt.np) if dt.name == "bfloat16" else np.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(10.0 ** -info.precision)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype``.

    Example:
        >>> import retrograd as torch
        >>> torch.iinfo(torch.uint8)
        iinfo(min=0, max=255, dtype=uint8)
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: D.dtype) -> None:
        if type is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo (a bool holds "
                            "False and True)")
        if not isinstance(type, D.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            f"to handle 'torch.iinfo' (got {type})")
        info = np.iinfo(type.np)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), \
            int(info.min), type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
