"""``torch.backends.opt_einsum``: retrograd's einsum contracts left to right, as PyTorch
does without the opt-einsum package (Note [einsum as PyTorch records it]), so opt_einsum
is never available: ``enabled`` is False and ``strategy`` None, as in a PyTorch without
opt-einsum installed.

Example:
    >>> import retrograd as torch
    >>> torch.backends.opt_einsum.is_available(), torch.backends.opt_einsum.enabled
    (False, False)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

# Plain attributes, as in PyTorch without opt-einsum: assigning them is accepted (and
# changes nothing); only flags(enabled=True) is refused.
enabled = False
strategy = None


def is_available() -> bool:
    """False: retrograd never uses opt-einsum (its einsum contracts left to right).

    Example:
        >>> import retrograd as torch
        >>> torch.backends.opt_einsum.is_available()
        False
    """
    return False


def get_opt_einsum() -> None:
    """None: no opt_einsum package is used.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.opt_einsum.get_opt_einsum() is None
        True
    """
    return None


def _check_enabled(value: bool) -> None:
    if value:
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. torch.einsum will fall back "
            "to contracting from left to right. To enable this optimal path calculation, "
            "please install opt-einsum.\n(retrograd's einsum always contracts left to right, "
            "as PyTorch does without opt-einsum; leave `enabled` False)")


@contextlib.contextmanager
def flags(enabled: bool | None = None, strategy: str | None = None) -> Iterator[None]:
    """Set ``enabled`` for a ``with`` block; restored after. ``enabled=True`` raises
    ValueError, as in PyTorch without opt-einsum.

    Example:
        >>> import retrograd as torch
        >>> with torch.backends.opt_einsum.flags(enabled=False):
        ...     torch.backends.opt_einsum.enabled
        False
    """
    module = sys.modules[__name__]
    saved = module.enabled
    if enabled is not None:
        _check_enabled(enabled)
        module.enabled = enabled
    try:
        yield
    finally:
        module.enabled = saved
