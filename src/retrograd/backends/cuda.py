"""``torch.backends.cuda``: CUDA's matmul flags, settable and read back, with no effect
(retrograd has no CUDA, Note [Backend flags]).

Example:
    >>> import retrograd as torch
    >>> torch.backends.cuda.matmul.allow_tf32 = True
    >>> torch.get_float32_matmul_precision()
    'high'
    >>> torch.backends.cuda.matmul.allow_tf32 = False
    >>> torch.backends.cuda.is_built()
    False
"""

from __future__ import annotations

from . import _precision

_REDUCTIONS = ("allow_fp16_reduced_precision_reduction",
               "allow_bf16_reduced_precision_reduction")


class cuBLASModule:
    """``backends.cuda.matmul``: ``allow_tf32`` (tied to
    ``torch.set_float32_matmul_precision``) and the reduced-precision reduction flags;
    another name raises ``AttributeError`` as in PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
        True
    """

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return _precision.allow_tf32()
        if name in _REDUCTIONS:
            return _reductions[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            _precision.set_allow_tf32(value)
        elif name in _REDUCTIONS:
            if not isinstance(value, (bool, tuple, list)):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                                f"{type(value)}")
            _reductions[name] = value if isinstance(value, bool) else bool(value[0])
        else:
            raise AttributeError("Unknown attribute " + name)


_reductions = dict.fromkeys(_REDUCTIONS, True)
matmul = cuBLASModule()


def is_built() -> bool:
    """False: retrograd is not built with CUDA.

    Example:
        >>> import retrograd as torch
        >>> torch.backends.cuda.is_built()
        False
    """
    return False
