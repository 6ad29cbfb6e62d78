"""``torch.testing``: ``assert_close`` and ``make_tensor``, as PyTorch's.

Example:
    >>> import retrograd as torch
    >>> x = torch.testing.make_tensor(3, dtype=torch.float64, device="cpu")
    >>> torch.testing.assert_close(x * 1, x)
"""

from __future__ import annotations

from .._functions.make_tensor import make_tensor
from ._comparison import assert_close
from ._legacy import FileCheck, assert_allclose

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]
