"""dtype objects and PyTorch's type-promotion rules.

Example:
    >>> import retrograd as torch
    >>> (torch.ones(2) * 2.5).dtype
    torch.float32
    >>> (torch.arange(3) / 2).dtype
    torch.float32
"""

from __future__ import annotations

import builtins as _b

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16",
    "int32", "int64", "bool", "half", "float", "double", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "promote_types",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type, printed as ``torch.float32`` like PyTorch.

    Example:
        >>> import retrograd as torch
        >>> torch.float64.is_floating_point, torch.float64.itemsize
        (True, 8)
    """

    __slots__ = ("name", "np", "category", "itemsize", "is_floating_point", "is_signed")

    def __init__(self, name: str, np_dtype, category: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_signed = name != "uint8" and name != "bool"

    @property
    def is_complex(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self) -> dtype:
        return self


float16 = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
bool = dtype("bool", np.bool_, _BOOL)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

ALL = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool)
_BY_NAME = {d.name: d for d in ALL}
#: numpy dtype -> retrograd dtype; the Tensor keeps only its ndarray, so this is
#: how ``Tensor.dtype`` is answered.
FROM_NP: dict = {d.np: d for d in ALL}


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


class _Defaults:
    __slots__ = ("float",)

    def __init__(self):
        self.float = float32


DEFAULTS = _Defaults()


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32 unless changed).

    Example:
        >>> import retrograd as torch
        >>> torch.get_default_dtype()
        torch.float32
    """
    return DEFAULTS.float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float16, bfloat16, float32 or float64).

    Example:
        >>> import retrograd as torch
        >>> torch.set_default_dtype(torch.float64); torch.tensor([1.5]).dtype
        torch.float64
        >>> torch.set_default_dtype(torch.float32)
    """
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    DEFAULTS.float = d
    for cache in CACHES:
        cache.clear()


#: dispatch caches whose entries depend on the default dtype (cleared when it changes)
CACHES: list = []


def as_dtype(d) -> dtype:
    """Accept a retrograd dtype, a NumPy dtype or a Python type and return a dtype."""
    if d.__class__ is dtype:
        return d
    if d is builtins_float:
        return DEFAULTS.float
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if isinstance(d, dtype):  # Note [Tensorless dtypes] (_core/tensorless_dtypes.py)
        raise TypeError(f"retrograd has no tensors of dtype {d}: PyTorch keeps it as a storage "
                        "format with few ops, and no retrograd kernel handles it; make the "
                        "tensor in a supported dtype (e.g. torch.float32 or torch.int64)")
    if d.__class__ is str:  # PyTorch takes no dtype names (NumPy does): a TypeError
        raise TypeError(f"argument 'dtype' must be torch.dtype, not str (got {d!r}; pass the "
                        f"dtype object, e.g. torch.{d if d in _BY_NAME else 'float32'}, or "
                        f"getattr(torch, {d!r}))")
    try:
        return FROM_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"retrograd does not support dtype {d!r}; supported: "
                        + ", ".join(repr(x) for x in ALL)) from None


builtins_float, builtins_int, builtins_bool = _b.float, _b.int, _b.bool


# Note [Type promotion]
# PyTorch promotes in three tiers: tensors with dimensions, zero-dim tensors, and
# Python scalars. Within one tier types promote by the lattice below. A lower tier
# only matters when its *category* (bool < integer < floating) is higher than every
# higher tier's: ``float32 tensor * 2.5`` stays float32, ``int tensor * 2.5`` becomes
# the default float dtype, ``float32 tensor + float64 0-d tensor`` stays float32.
def _promote_same_tier(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    return FROM_NP[np.promote_types(a.np, b.np)]


_PROMOTE_CACHE: dict = {}


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both can be cast to, as ``torch.promote_types``.

    Example:
        >>> import retrograd as torch
        >>> torch.promote_types(torch.float16, torch.bfloat16)
        torch.float32
    """
    key = (a, b)
    r = _PROMOTE_CACHE.get(key)
    if r is None:
        r = _PROMOTE_CACHE[key] = _promote_same_tier(as_dtype(a), as_dtype(b))
    return r


def scalar_dtype(x) -> dtype:
    """dtype a Python scalar gets when it is the only participant."""
    if x.__class__ is _b.bool:
        return bool
    if isinstance(x, _b.int):
        return int64
    if isinstance(x, _b.float):
        return DEFAULTS.float
    if isinstance(x, np.generic):
        return as_dtype(x.dtype)
    if isinstance(x, complex):
        raise TypeError("retrograd does not support complex numbers")
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def _category_of_scalar(x) -> int:
    if x.__class__ is _b.bool or isinstance(x, np.bool_):
        return _BOOL
    if isinstance(x, (_b.int, np.integer)):
        return _INT
    return _FLOAT


def result_type_of(dims: list, zero_dims: list, scalars: list) -> dtype:
    """Apply Note [Type promotion] to the dtypes of each tier (scalars as Python values)."""
    out = None
    for d in dims:
        out = d if out is None else promote_types(out, d)
    zd = None
    for d in zero_dims:
        zd = d if zd is None else promote_types(zd, d)
    if zd is not None:
        if out is None:
            out = zd
        elif zd.category > out.category:
            out = zd
    if scalars:
        cat = max(_category_of_scalar(s) for s in scalars)
        if out is None:
            sd = None
            for s in scalars:
                t = scalar_dtype(s)
                sd = t if sd is None else promote_types(sd, t)
            out = sd
        elif cat > out.category:
            out = DEFAULTS.float if cat == _FLOAT else (int64 if cat == _INT else bool)
    return out


def machine_limits(d: dtype) -> tuple[float, float, float]:
    """``(eps, tiny, max)`` of a floating dtype, the numbers of PyTorch's ``torch.finfo``.

    Example:
        >>> from retrograd._core import dtype as D
        >>> D.machine_limits(D.bfloat16)[0], D.machine_limits(D.float32)[0]
        (0.0078125, 1.1920928955078125e-07)
    """
    info = ml_dtypes.finfo(d.np)
    return _b.float(info.eps), _b.float(info.tiny), _b.float(info.max)
