"""``torch.set_float32_matmul_precision`` and its getter: the setting is kept and read
back (it also drives ``backends.cuda.matmul.allow_tf32``, as in PyTorch), and changes no
result: retrograd's float32 matmuls are NumPy's, always in full float32.

Example:
    >>> import retrograd as torch
    >>> torch.set_float32_matmul_precision("high")
    >>> torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32
    ('high', True)
    >>> torch.set_float32_matmul_precision("highest")
"""

from __future__ import annotations

import warnings

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest"}


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matmuls: ``"highest"``, ``"high"`` or
    ``"medium"`` (PyTorch's TF32/bfloat16 modes for CUDA and oneDNN). Kept and read back;
    no effect on retrograd's CPU matmuls, which stay in float32. Another string warns and
    changes nothing, as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.set_float32_matmul_precision("medium")
        >>> torch.get_float32_matmul_precision()
        'medium'
        >>> torch.set_float32_matmul_precision("highest")
    """
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}\n(pass 'highest', 'high' or 'medium')")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The value last set with ``set_float32_matmul_precision`` (``"highest"`` at start).

    Example:
        >>> import retrograd as torch
        >>> torch.get_float32_matmul_precision()
        'highest'
    """
    return _state["precision"]


def allow_tf32() -> bool:
    """``backends.cuda.matmul.allow_tf32``: True unless the precision is ``"highest"``.

    Example:
        >>> from retrograd.backends._precision import allow_tf32
        >>> allow_tf32()
        False
    """
    return _state["precision"] != "highest"


def set_allow_tf32(value: bool) -> None:
    """Setting ``backends.cuda.matmul.allow_tf32`` sets the precision to ``"high"`` (True)
    or ``"highest"`` (False), as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.backends._precision import set_allow_tf32
        >>> set_allow_tf32(True); torch.get_float32_matmul_precision()
        'high'
        >>> set_allow_tf32(False)
    """
    if not isinstance(value, bool):
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                           f"{type(value).__name__}\n(retrograd: set "
                           "backends.cuda.matmul.allow_tf32 to True or False; it has no "
                           "effect on retrograd's CPU matmuls)")
    _state["precision"] = "high" if value else "highest"
