"""The deprecated and TorchScript-only names of ``torch.testing``: ``assert_allclose``
and ``FileCheck``.

Example:
    >>> import warnings
    >>> import retrograd as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.testing.assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.00001])
"""

from __future__ import annotations

import warnings
from typing import Any

from .._core import dtype as D
from .._functions.creation import tensor
from .._tensor.tensor import Tensor
from ._comparison import assert_close

__all__ = ["FileCheck", "assert_allclose"]

# assert_allclose's own defaults (looser than assert_close's), PyTorch's table
_ALLCLOSE_PRECISIONS = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5),
                        D.float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (FutureWarning, as PyTorch's): ``assert_close`` with ``expected`` made
    a tensor of ``actual``'s dtype, dtypes not compared, NaNs equal, and looser default
    tolerances (float32: rtol 1e-4, atol 1e-5; float64: 1e-5, 1e-8; float16: 1e-3, 1e-3;
    other dtypes: exact).

    Example:
        >>> import warnings
        >>> import retrograd as torch
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.testing.assert_allclose(torch.tensor([1.0]), [1.1])
        Traceback (most recent call last):
        AssertionError: Tensor-likes are not close!
        ...
    """
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


class FileCheck:
    """TorchScript's IR pattern checker (LLVM FileCheck run on TorchScript graphs).

    retrograd has no TorchScript, so there is no IR to check: constructing one raises
    PyTorch's error for a missing TorchScript feature with the reason.

    Example:
        >>> import retrograd as torch
        >>> torch.testing.FileCheck()
        Traceback (most recent call last):
        RuntimeError: FileCheck checks TorchScript IR, and retrograd has no TorchScript ...
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("FileCheck checks TorchScript IR, and retrograd has no TorchScript "
                           "(torch.jit.script/trace are not supported): check the eager "
                           "results instead, e.g. with torch.testing.assert_close, or plain "
                           "text with re.search")
