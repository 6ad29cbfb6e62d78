"""``torch.backends.mkldnn``: oneDNN's flags, settable and read back, with no effect here
(retrograd's kernels are NumPy's, Note [Backend flags]).

Example:
    >>> import retrograd as torch
    >>> torch.backends.mkldnn.enabled, torch.backends.mkldnn.is_available()
    (True, True)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from ._flags import bool_flag, flag_module, set_temporarily

_state = {"enabled": True, "deterministic": False}


def is_available() -> bool:
    """True, as PyTorch's CPU build reports (its oneDNN is compiled in); retrograd's
    kernels do not use it.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.mkldnn.is_available()
        True
    """
    return True


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Set oneDNN's flags for a ``with`` block (PyTorch's defaults: ``flags()`` alone turns
    it off); restored after. No effect on retrograd's kernels (``allow_tf32`` and
    ``fp32_precision`` concern Intel GPUs and are accepted and ignored).

    Example:
        >>> import retrograd as torch
        >>> with torch.backends.mkldnn.flags(enabled=False):
        ...     torch.backends.mkldnn.enabled
        False
    """
    with set_temporarily(sys.modules[__name__], {"enabled": enabled,
                                                 "deterministic": deterministic}):
        yield


flag_module(__name__,
            enabled=bool_flag("enabled", "set_enabled_mkldnn"),
            deterministic=bool_flag("deterministic", "set_deterministic_mkldnn"))
