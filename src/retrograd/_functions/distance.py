"""``torch.cdist``: the p-norm distance between every row of one (batch of) matrices and
every row of another (Note [cdist records] in ops/records/distance.py).

Example:
    >>> import retrograd as torch
    >>> torch.cdist(torch.tensor([[0., 0.]]), torch.tensor([[3., 4.]]))
    tensor([[5.]])
"""

from __future__ import annotations

import math

from .._tensor.tensor import _LEGACY_NAMES, Tensor
from ..ops.dispatch import _mismatch, apply
from ..ops.public import FP32, public
from ..ops.records import table as T
from .matmul import _dt_name
from .shape import broadcast_shapes

__all__ = ["cdist"]

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


@public(method=False, autocast=FP32)
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (..., r1, c) and each row of ``x2``
    (..., r2, c): a (..., r1, r2) tensor, batch dims broadcast. For p = 2, compute_mode
    'use_mm_for_euclid_dist' (and the default when either input has more than 25 rows)
    uses ``|x|^2 - 2 x.y + |y|^2``, faster and twice differentiable, less exact for
    near rows.

    Example:
        >>> import retrograd as torch
        >>> torch.cdist(torch.tensor([[0., 0.], [1., 1.]]), torch.tensor([[1., 0.]]), p=1)
        tensor([[1.],
                [1.]])
    """
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D (rows are the second-to-last dim: use "
                               "x.unsqueeze(0) for one row)")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_LEGACY_NAMES[x.dtype.name]} (convert first, e.g. "
                               "x.float())")
    p = float(p)
    if not p >= 0:  # (nan too)
        raise RuntimeError("cdist only supports non-negative p values")
    batch1, batch2 = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    a, b, dim = _mismatch(batch1, batch2)
    if a != b:
        raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                           f"at non-singleton dimension {dim} (cdist broadcasts the batch "
                           f"dims {batch1} and {batch2}: make them equal or 1)")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mode = _MODES[compute_mode]
    euclid = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if euclid and x1.numel() and x2.numel():
        return _euclidean(x1, x2)
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_LEGACY_NAMES[x1.dtype.name]} but found "
                           f"{_LEGACY_NAMES[x2.dtype.name]} (convert one operand, e.g. "
                           "x2.to(x1.dtype))")
    if x1.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(
            f"\"cdist\" not implemented for '{_LEGACY_NAMES[x1.dtype.name]}' (the direct "
            "kernel runs in float32/float64: convert first, or for p=2 pass "
            "compute_mode='use_mm_for_euclid_dist')")
    return apply(T.cdist, (x1, x2), p)


def _euclidean(x1: Tensor, x2: Tensor) -> Tensor:
    """cdist's matrix-product path, with PyTorch's graph: the inputs expanded to the
    common batch and flattened to one batch dim (when it is not 1), EuclideanDistBackward0,
    then a view to the output shape."""
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dt_name(x1.dtype)} != {_dt_name(x2.dtype)} (convert one "
                           "operand, e.g. x2.to(x1.dtype))")
    batch = tuple(broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    (r1, c), r2 = x1.shape[-2:], x2.shape[-2]
    n = math.prod(batch)
    if n != 1:
        x1 = x1.expand(batch + (r1, c)).contiguous().view(n, r1, c)
        x2 = x2.expand(batch + (r2, c)).contiguous().view(n, r2, c)
    return apply(T.euclidean_dist, (x1, x2)).view(batch + (r1, r2))

