"""Deterministic-algorithms mode: ``torch.use_deterministic_algorithms`` and its readers.

retrograd's kernels are NumPy's and give the same bits on every run, so the mode refuses
no op here (PyTorch's CPU kernels are deterministic too; its alerts are for CUDA). What it
does change, as in PyTorch: ``empty``, ``empty_like`` and ``new_empty`` fill their memory
with NaN (floats) or the dtype's largest value (integers) while it is on, so code that
reads memory it never wrote fails the same way in both.

Example:
    >>> import retrograd as torch
    >>> torch.use_deterministic_algorithms(True)
    >>> torch.are_deterministic_algorithms_enabled(), torch.empty(2)
    (True, tensor([nan, nan]))
    >>> torch.use_deterministic_algorithms(False)
"""

from __future__ import annotations

_state = {"enabled": False, "warn_only": False, "fill": True}
_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Turn the deterministic-algorithms mode on or off (``warn_only``: PyTorch warns
    instead of raising for an op without a deterministic kernel; every retrograd op is
    deterministic, so neither happens here).

    Example:
        >>> import retrograd as torch
        >>> torch.use_deterministic_algorithms(True, warn_only=True)
        >>> torch.is_deterministic_algorithms_warn_only_enabled()
        True
        >>> torch.use_deterministic_algorithms(False)
    """
    for name, value in (("mode' (position 1)", mode), ("warn_only'", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name} must be bool, "
                            f"not {type(value).__name__}\n(pass True or False)")
    _state["enabled"] = mode
    _state["warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """True while ``use_deterministic_algorithms(True)`` is in force.

    Example:
        >>> import retrograd as torch
        >>> torch.are_deterministic_algorithms_enabled()
        False
    """
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """True while the mode is on with ``warn_only=True``.

    Example:
        >>> import retrograd as torch
        >>> torch.is_deterministic_algorithms_warn_only_enabled()
        False
    """
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """The same switch by level: ``"default"``/0 (off), ``"warn"``/1 (on, warn only),
    ``"error"``/2 (on).

    Example:
        >>> import retrograd as torch
        >>> torch.set_deterministic_debug_mode("error")
        >>> torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode()
        (True, 2)
        >>> torch.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(bool(debug_mode), warn_only=int(debug_mode) == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (on, warn only) or 2 (on).

    Example:
        >>> import retrograd as torch
        >>> torch.get_deterministic_debug_mode()
        0
    """
    if not _state["enabled"]:
        return 0
    return 1 if _state["warn_only"] else 2


def fill_uninitialized() -> bool:
    """Whether ``empty``-like constructors fill their memory (the mode is on and
    ``torch.utils.deterministic.fill_uninitialized_memory`` is True).

    Example:
        >>> from retrograd._core.deterministic import fill_uninitialized
        >>> fill_uninitialized()
        False
    """
    return _state["enabled"] and _state["fill"]
