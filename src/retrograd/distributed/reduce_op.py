"""``ReduceOp``: how a reduction combines the ranks' tensors, and its MPI counterpart.

Example:
    >>> import retrograd.distributed as dist
    >>> dist.ReduceOp.SUM, dist.ReduceOp.AVG
    (<RedOpType.SUM: 0>, <RedOpType.AVG: 1>)
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = ["ReduceOp", "RedOpType", "mpi_op"]


class RedOpType(enum.IntEnum):
    """The reduction kinds, numbered as PyTorch numbers them.

    Example:
        >>> from retrograd.distributed import ReduceOp
        >>> int(ReduceOp.MAX)
        4
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """The reductions: ``SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``,
    ``BXOR`` (``ReduceOp.RedOpType`` is their enum, as in PyTorch).

    Example:
        >>> from retrograd.distributed import ReduceOp
        >>> ReduceOp.PRODUCT.name
        'PRODUCT'
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


# Note [Reductions on MPI]
# MPI has SUM, PROD, MIN, MAX and the bitwise ops for numbers; AVG is a SUM divided by the
# group's size afterwards (integers: truncating, as NCCL does). bool tensors use the
# logical ops (SUM and MAX are "or", PRODUCT and MIN are "and"), as PyTorch's backends
# do. float16 and bfloat16 have no standard MPI type: they are reduced in float32 and
# rounded back once, which equals PyTorch's half-precision sum for two ranks and can
# differ in the last bit for more.
_NUMERIC = {RedOpType.SUM: "SUM", RedOpType.AVG: "SUM", RedOpType.PRODUCT: "PROD",
            RedOpType.MIN: "MIN", RedOpType.MAX: "MAX", RedOpType.BAND: "BAND",
            RedOpType.BOR: "BOR", RedOpType.BXOR: "BXOR"}
_LOGICAL = {RedOpType.SUM: "LOR", RedOpType.MAX: "LOR", RedOpType.BOR: "LOR",
            RedOpType.PRODUCT: "LAND", RedOpType.MIN: "LAND", RedOpType.BAND: "LAND",
            RedOpType.BXOR: "LXOR"}


def mpi_op(MPI, op, dtype: np.dtype):
    """The ``MPI.Op`` for ``op`` on arrays of ``dtype`` (Note [Reductions on MPI])."""
    try:
        op = RedOpType(op)
    except ValueError:
        raise ValueError(f"Unknown reduce op {op!r}; use a member of "
                         "retrograd.distributed.ReduceOp") from None
    if dtype == np.bool_:
        name = _LOGICAL.get(op)
        if name is None:
            raise ValueError(f"Cannot use ReduceOp.{op.name} with bool tensors (there is no "
                             "average of booleans); cast the tensor to a number type first")
        return getattr(MPI, name)
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind == "f":
        raise ValueError(f"Cannot use ReduceOp.{op.name} with floating-point tensors (bitwise "
                         "reductions need integers); cast the tensor to an integer type first")
    return getattr(MPI, _NUMERIC[op])
