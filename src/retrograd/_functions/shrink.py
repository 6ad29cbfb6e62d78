"""``torch.hardshrink`` / ``Tensor.hardshrink`` and the shrink functions that
``nn.functional`` calls (records in ``ops/records/activations.py``).

Example:
    >>> import retrograd as torch
    >>> torch.tensor([-1., 0.2, 2.]).hardshrink()
    tensor([-1.,  0.,  2.])
"""

from __future__ import annotations

import numpy as np

from .._tensor.tensor import _LEGACY_NAMES, Tensor
from ..ops.dispatch import apply
from ..ops.op import FLOAT_NP
from ..ops.public import public
from ..ops.records.activations import hardshrink as _hardshrink_op
from ..ops.records.activations import softshrink as _softshrink_op

__all__ = ["hardshrink", "softshrink"]

_LOW_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38}  # (no NumPy finfo)


def _check_float(input: Tensor, kernel: str) -> None:
    if input._data.dtype not in FLOAT_NP:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_LEGACY_NAMES[input.dtype.name]}': the shrink "
                                  "activations take floating tensors (x.float())")


@public
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (HardshrinkBackward0).

    Example:
        >>> import retrograd as torch
        >>> torch.hardshrink(torch.tensor([-1., 0.2, 2.]), 0.5)
        tensor([-1.,  0.,  2.])
    """
    _check_float(input, "hardshrink_cpu")
    return apply(_hardshrink_op, (input,), (float(lambd),))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0 (SoftshrinkBackward0);
    ``nn.functional.softshrink`` (PyTorch has no ``torch.softshrink``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions.shrink import softshrink
        >>> softshrink(torch.tensor([-1., 0.2, 2.]), 0.5)
        tensor([-0.5000,  0.0000,  1.5000])
    """
    _check_float(input, "softshrink_check")
    name = input.dtype.name
    top = _LOW_MAX[name] if name in _LOW_MAX else float(np.finfo(input._data.dtype).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_LEGACY_NAMES[name]}, "
                           f"but found {lambd:g}: softshrink needs a non-negative threshold")
    return apply(_softshrink_op, (input,), (float(lambd),))
