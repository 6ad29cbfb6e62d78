"""Creating tensors: tensor, zeros, ones, arange, rand, ... (NumPy allocates).

Example:
    >>> import retrograd as torch
    >>> torch.zeros(2, 3).shape, torch.arange(5).dtype
    (torch.Size([2, 3]), torch.int64)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core import dtype as D
from .._core import layouts as L
from .._core.deterministic import fill_uninitialized
from .._core.device import META, check_device, parse_device
from .._core.hints import DeviceLike, Number, Shape
from .._core.meta import MetaArray
from .._core.size import Size
from .._graph.node import _LEGACY
from .._random import distributions as random_dist
from .._random import rng
from .._random.avx_math import mul_add
from .._tensor.tensor import Tensor, _make
from ..ops.argcheck import type_name
from ..ops.batch_rules import random_under_vmap
from ..ops.out_arg import write_out

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "logspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like",
           "rand", "randn", "randint", "randperm",
           "normal", "scalar_tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
           "BoolTensor", "HalfTensor", "ByteTensor", "BFloat16Tensor", "ShortTensor",
           "CharTensor", "set_default_tensor_type", "asarray"]


def _finish(arr, requires_grad: bool, device) -> Tensor:
    if parse_device(device) is META:  # Note [Meta tensors]: keep the shape and dtype only
        arr = MetaArray(arr.shape, arr.dtype)
    t = _make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fV":  # V: bfloat16
            raise RuntimeError(f"Only Tensors of floating point and complex dtype can require "
                               f"gradients (this one is {t.dtype}); pass a float dtype, e.g. "
                               "dtype=torch.float32")
        t.requires_grad_(True)
    return t


_NEGATIVE_SIZE = {"zeros": "zeros: Dimension size must be non-negative."}  # (at::zeros' own)


def _shape(size, fn: str | None = None) -> tuple:
    """The shape of a factory's ``size`` arguments, with PyTorch's errors: a size past
    int64 is the argument parser's TypeError (``fn()``'s, when ``fn`` is given), a negative
    one a RuntimeError."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a sequence of ints, got {size!r}")
        if not -2 ** 63 <= s < 2 ** 63:
            raise TypeError(f"{fn or 'a factory'}(): argument 'size' failed to unpack the object "
                            f"at pos {pos} with error \"Overflow when unpacking long long\" "
                            f"(size {s} does not fit in int64)")
        if s < 0:
            if fn in _NEGATIVE_SIZE:
                raise RuntimeError(f"{_NEGATIVE_SIZE[fn]} (got size {list(size)})")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


_MAX_BYTES = 2 ** 63 - 1


def allocate(make, shape: tuple, np_dt):
    """``make(shape, np_dt)`` with PyTorch's errors where the storage cannot exist: a byte
    count past int64 (computeStorageNbytes: "Storage size calculation overflowed") and an
    allocation the system refuses (DefaultCPUAllocator), each a RuntimeError, never
    NumPy's ValueError/MemoryError.

    Example:
        >>> allocate(np.zeros, (2, 3), np.dtype(np.float32)).shape
        (2, 3)
    """
    nbytes = math.prod(shape) * np.dtype(np_dt).itemsize
    if nbytes > _MAX_BYTES:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} "
                           f"({nbytes} bytes does not fit in int64: a size is probably wrong)")
    try:
        return make(shape, np_dt)
    except MemoryError:
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{nbytes} bytes. Error code 12 (Cannot allocate memory) (sizes="
                           f"{list(shape)}: reduce the size or the batch)") from None


def _np_dtype(dtype, default=None):
    if dtype is None:
        return (default or D.DEFAULTS.float).np
    return D.as_dtype(dtype).np


def _infer(data):
    """NumPy array of Python data with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        return data._data.copy()
    if isinstance(data, np.ndarray):
        return data.copy()
    if isinstance(data, range):
        return _range_array(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _tensors_to_values(data)
    try:
        arr = np.array(data)
    except ValueError:
        _ragged_error(data)
        raise
    k = arr.dtype.kind
    if (k == "u" and not isinstance(data, np.integer)) or (k == "O" and _big_ints(data)):
        raise ValueError("Overflow when unpacking long long (an integer outside int64's range "
                         "[-2**63, 2**63 - 1]; pass dtype=torch.float64 for a float tensor)")
    if k == "O" and all(isinstance(x, (int, float)) for x in _flat(data)):
        arr = np.array(data, dtype=np.float64)  # ints past int64 beside floats: floats
        k = "f"
    if k == "f":
        if isinstance(data, np.floating):
            return arr
        return arr.astype(D.DEFAULTS.float.np)
    if k in "iu":
        if isinstance(data, np.integer):
            return arr
        return arr.astype(np.int64)
    if k == "b":
        return arr
    if k == "O" or k == "U":
        raise TypeError(f"Could not infer dtype of {type(data).__name__}: retrograd.tensor takes "
                        "numbers, (nested) lists of numbers, NumPy arrays or Tensors")
    if k == "c":
        raise TypeError("retrograd does not support complex numbers")
    return arr


_RAGGED_FIX = (": tensor() needs a rectangular nested list (every row of a dim the same "
               "length); pad the short rows, or make one tensor per row and use "
               "torch.nn.utils.rnn.pad_sequence")


def _ragged_error(data) -> None:
    """Raise PyTorch's error for nested data that is not rectangular (NumPy's says
    "inhomogeneous shape"): the shape is read down the first elements, then every
    sequence is checked against it, depth first, in order, as PyTorch does."""
    seq = (list, tuple, np.ndarray)
    sizes = []
    x = data
    while isinstance(x, seq) and getattr(x, "ndim", 1):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    stack = [(data, 0)]
    while stack:
        x, d = stack.pop()
        is_seq = isinstance(x, seq) and getattr(x, "ndim", 1) > 0
        if d == len(sizes):
            if is_seq:
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an "
                                f"integer (a sequence at dim {d}, where the first elements "
                                f"give a {d}-d shape {tuple(sizes)}){_RAGGED_FIX}")
            continue
        if not is_seq:
            raise TypeError(f"not a sequence (a {type(x).__name__} at dim {d}, where the first "
                            f"elements give the shape {tuple(sizes)}){_RAGGED_FIX}")
        if len(x) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got "
                             f"{len(x)}){_RAGGED_FIX}")
        stack.extend((y, d + 1) for y in reversed(list(x)))


# Note [Tensors of ranges]
# torch.tensor(range(n)) reads the range as a sequence of Python ints: int64 (float32 when
# empty), and "Overflow when unpacking long long" for a value outside int64. Its length is
# known up front, so it is made with np.arange (no Python int per element) and its storage
# goes through ``allocate``: a range too long for memory is PyTorch's allocator error, a
# RuntimeError raised before anything is allocated, not NumPy's MemoryError (torch itself
# first iterates the whole range to infer its dtype: for range(2**59) it does not return).
def _range_array(r: range) -> np.ndarray:
    """``np.arange`` of the range ``r`` in int64 (Note [Tensors of ranges])."""
    if not len(r):
        return np.zeros(0, D.DEFAULTS.float.np)
    if not (-2 ** 63 <= r[0] < 2 ** 63 and -2 ** 63 <= r[-1] < 2 ** 63):
        raise ValueError("Overflow when unpacking long long (an integer outside int64's range "
                         "[-2**63, 2**63 - 1]; pass dtype=torch.float64 for a float tensor)")
    return allocate(lambda shape, dt: np.arange(r.start, r.start + len(r) * r.step, r.step,
                                                dtype=dt), (len(r),), np.dtype(np.int64))


def _big_ints(data) -> bool:
    """Whether ``data`` (NumPy made an object array of it) holds only ints (no floats),
    one of them outside int64: PyTorch's overflow."""
    vals = list(_flat(data))
    return all(isinstance(x, int) for x in vals) and \
        any(not -2 ** 63 <= x < 2 ** 63 for x in vals)


def _flat(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _tensors_to_values(data):
    if isinstance(data, Tensor):
        if data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._data.reshape(()).item()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_values(x) for x in data]
    return data


def check_pin_memory(pin_memory: bool) -> None:
    """Refuse ``pin_memory=True`` in a constructor, as PyTorch without an accelerator.

    Example:
        >>> from retrograd._functions.creation import check_pin_memory
        >>> check_pin_memory(False)
    """
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.\n(retrograd "
                           "runs on the CPU only, where pinning has no use: drop "
                           "pin_memory=True)")


def tensor(data: Any, dtype: D.dtype | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (dtype inferred as PyTorch does).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1.0, 2.0], requires_grad=True)
        tensor([1., 2.], requires_grad=True)
    """
    check_pin_memory(pin_memory)
    if dtype is not None and not isinstance(data, (Tensor, np.ndarray)):
        dt = D.as_dtype(dtype).np
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
            data = _tensors_to_values(data)
        try:
            arr = np.array(data, dtype=dt)
        except (TypeError, ValueError):
            if isinstance(data, (list, tuple)):
                _ragged_error(data)
            arr = _infer(data).astype(dt)
        return _finish(arr, requires_grad, device)
    arr = _infer(data)
    if dtype is not None:
        arr = arr.astype(D.as_dtype(dtype).np, copy=False)
    return _finish(arr, requires_grad, device)


def as_tensor(data: Any, dtype: D.dtype | None = None, device: DeviceLike | None = None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or Tensor when it can.

    Example:
        >>> import numpy as np, retrograd as torch
        >>> a = np.zeros(2, dtype=np.float32); t = torch.as_tensor(a); a[0] = 5; t
        tensor([5., 0.])
    """
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == D.as_dtype(dtype) else data.to(dtype)
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(D.as_dtype(dtype).np, copy=False)
        if arr.dtype not in D.FROM_NP:
            arr = _infer(arr)
        return _make(arr)
    return tensor(data, dtype=dtype)


def asarray(obj: Any, *, dtype: D.dtype | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor: a Tensor or NumPy array of the wanted dtype is shared (not
    copied) unless ``copy=True``; ``copy=False`` refuses a conversion that would copy;
    numbers and sequences are converted as by ``tensor``.

    Example:
        >>> import numpy as np, retrograd as torch
        >>> a = np.zeros(2); t = torch.asarray(a); a[0] = 5; t
        tensor([5., 0.], dtype=torch.float64)
        >>> torch.asarray([1, 2], dtype=torch.float32)
        tensor([1., 2.])
    """
    check_device(device)
    if isinstance(obj, (Tensor, np.ndarray)):
        src = obj._data.dtype if isinstance(obj, Tensor) else obj.dtype
        want = src if dtype is None else D.as_dtype(dtype).np
        if copy is False and want != src:
            raise ValueError(f"can't alias tensor with dtype '{_LEGACY.get(src.name, src.name)}'"
                             f" into dtype '{_LEGACY[want.name]}'.\n(copy=False asks for the "
                             "very memory of the input: leave copy=None to allow a converted "
                             "copy)")
        if isinstance(obj, Tensor):
            out = obj.to(D.FROM_NP[want]) if want != src else obj
            out = out.clone() if copy and out is obj else out
        else:
            arr = obj.astype(want, copy=bool(copy))
            out = _make(arr if arr.dtype in D.FROM_NP else _infer(arr))
    else:
        out = tensor(obj, dtype=dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing memory with a NumPy array.

    Example:
        >>> import numpy as np, retrograd as torch
        >>> torch.from_numpy(np.arange(3)).dtype
        torch.int64
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if a.dtype not in D.FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type {a.dtype}. The only supported types "
                        "are: float64, float32, float16, bfloat16, int64, int32, int16, int8, "
                        "uint8, and bool.")
    return _make(a)


def _filled(size, value, dtype, requires_grad, device, fn: str | None = None):
    shape = _shape(size, fn)
    if dtype is None and value is not None and not isinstance(value, float):
        dt = D.result_type_of([], [], [value])
    else:
        dt = D.as_dtype(dtype) if dtype is not None else D.DEFAULTS.float
    if parse_device(device) is META:
        arr = MetaArray(shape, dt.np)
    elif value is None:
        arr = allocate(np.zeros, shape, dt.np)
    else:
        arr = allocate(lambda sh, d: np.full(sh, value, dtype=d), shape, dt.np)
    return _finish(arr, requires_grad, device)


# Note [Factory keywords]
# PyTorch's factories take their shape by position (``randn(2, 3)``, ``randn((2, 3))``) or
# as the keyword ``size=`` (a tuple or list only: ``randn(size=3)`` is a TypeError), never
# both (``_size``). With ``out=`` the values are made in ``out``'s dtype (an explicit
# ``dtype`` must be it, ``_out_dtype``), then ``out`` is resized to the result's shape
# without a warning (a factory's result has no shape to keep; arange alone warns, as
# PyTorch's does) and filled in place, keeping its identity (``_fill_out``). A seeded call
# draws the same numbers whichever form it takes, and ``generator=`` is taken wherever
# PyTorch takes it.
def _size(fn: str, positional: tuple, size, combination: bool = True) -> tuple:
    """The shape a factory was given: ``positional`` (``2, 3`` or ``(2, 3)``) or ``size=``."""
    if size is None:
        return _shape(positional, fn)
    if positional:
        got = ", ".join(type_name(a) for a in positional)
        first = (f"{fn}() received an invalid combination of arguments - got ({got}, "
                 f"size={type_name(size)})" if combination else
                 f"{fn}() got multiple values for argument 'size'")
        raise TypeError(f"{first} (the shape was given twice: pass it by position, "
                        f"{fn}(2, 3), or as size=(2, 3), not both)")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'size' must be tuple of ints, not "
                        f"{type_name(size)} (write size=({size!r},) for a 1-d shape)")
    return _shape((size,), fn)


def _out_dtype(dtype, out: Tensor | None):
    """The dtype a factory computes in: ``out``'s when one is given (an explicit ``dtype``
    must match it, as in PyTorch)."""
    if out is None:
        return dtype
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type_name(out)}")
    if dtype is not None and D.as_dtype(dtype).np != out._data.dtype:
        raise RuntimeError(f"dtype {_LEGACY[D.as_dtype(dtype).np.name]} does not match dtype of "
                           f"out parameter ({_LEGACY[out._data.dtype.name]}) (drop dtype=, or "
                           "pass an out tensor of that dtype)")
    return out.dtype


def _fill_out(out: Tensor, shape: tuple, values, requires_grad: bool) -> Tensor:
    """``out`` resized to ``shape`` (silently: Note [Factory keywords]) and filled with
    ``values`` (a number or an array of that shape)."""
    if out._data.shape != shape:
        out._data = allocate(np.empty, shape, out._data.dtype)
    np.copyto(out._data, values, casting="unsafe")
    out._vc[0] += 1
    if requires_grad:
        out.requires_grad_(True)
    return out


def _made_into(out: Tensor | None, t: Tensor) -> Tensor:
    """``t``, or its values written into ``out`` (Note [Factory keywords])."""
    if out is None:
        return t
    return _fill_out(out, t._data.shape, t._data, t.requires_grad)


def zeros(*shape: int | Sequence[int], size: Sequence[int] | None = None,
          dtype: D.dtype | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False, out: Tensor | None = None,
          layout: L.layout | None = None, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros; the shape by position or as ``size=`` (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2), torch.zeros(size=(1, 2))
        (tensor([0., 0.]), tensor([[0., 0.]]))
    """
    check_pin_memory(pin_memory)
    size = _size("zeros", shape, size, combination=False)
    if out is not None:
        _out_dtype(dtype, out)
        return _fill_out(out, size, 0, requires_grad)
    return _filled(size, None, dtype or D.DEFAULTS.float, requires_grad, device)


def ones(*shape: int | Sequence[int], size: Sequence[int] | None = None,
         dtype: D.dtype | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False, out: Tensor | None = None, layout: L.layout | None = None,
         pin_memory: bool = False) -> Tensor:
    """A tensor of ones; the shape by position or as ``size=`` (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, dtype=torch.int64), torch.ones(size=[1])
        (tensor([1, 1]), tensor([1.]))
    """
    check_pin_memory(pin_memory)
    size = _size("ones", shape, size, combination=False)
    if out is not None:
        _out_dtype(dtype, out)
        return _fill_out(out, size, 1, requires_grad)
    return _filled(size, 1, dtype or D.DEFAULTS.float, requires_grad, device)


def full(size: Shape, fill_value: Tensor | Number, dtype: D.dtype | None = None,
         device: DeviceLike | None = None, requires_grad: bool = False, *,
         out: Tensor | None = None, layout: L.layout | None = None,
         pin_memory: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from it, as PyTorch), or ``out``
    filled (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.full((2,), 7), torch.full(size=(1,), fill_value=0.5)
        (tensor([7, 7]), tensor([0.5000]))
    """
    check_pin_memory(pin_memory)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = (size,) if isinstance(size, int) else tuple(size)
    if out is not None:
        _out_dtype(dtype, out)
        return _fill_out(out, _shape(shape, "full"), fill_value, requires_grad)
    return _filled(shape, fill_value, dtype, requires_grad, device, "full")


def empty(*shape: int | Sequence[int], size: Sequence[int] | None = None,
          dtype: D.dtype | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False, memory_format: L.memory_format | None = None,
          pin_memory: bool = False, out: Tensor | None = None,
          layout: L.layout | None = None) -> Tensor:
    """An uninitialised tensor (zeros here, so results never depend on garbage), row-major
    or in ``memory_format``.

    Example:
        >>> import retrograd as torch
        >>> torch.empty(2, 3).shape
        torch.Size([2, 3])
        >>> torch.empty(1, 3, 2, 2, memory_format=torch.channels_last).stride()
        (12, 1, 6, 3)
        >>> torch.empty(size=(2,), dtype=torch.int32).dtype
        torch.int32
    """
    check_pin_memory(pin_memory)
    size = _size("empty", shape, size)
    if out is not None:  # out keeps its values where its shape already fits, as PyTorch's
        _out_dtype(dtype, out)
        return out if out._data.shape == size else _fill_out(out, size, 0, requires_grad)
    t = _filled(size, None, dtype or D.DEFAULTS.float, requires_grad, device)
    if memory_format is not None and memory_format is not L.contiguous_format:
        if memory_format is L.preserve_format:
            raise RuntimeError("unsupported memory format Preserve (empty() has no tensor "
                               "whose layout to keep: pass torch.contiguous_format or "
                               "torch.channels_last, or use empty_like)")
        L.check_format_rank(memory_format, t.dim())
        if t._data.__class__ is not MetaArray:
            t._data = L.relayout(t._data, memory_format)  # (zeros, in that layout)
    return uninitialized(t)


def uninitialized(t: Tensor) -> Tensor:
    """``t`` (a fresh tensor standing for uninitialised memory), filled with NaN or the
    dtype's largest value while deterministic algorithms are on, as PyTorch's
    ``fill_uninitialized_memory`` does; zeros otherwise.

    Example:
        >>> import retrograd as torch
        >>> torch.use_deterministic_algorithms(True)
        >>> torch.empty(2, dtype=torch.int8), torch.empty(1)
        (tensor([127, 127], dtype=torch.int8), tensor([nan]))
        >>> torch.use_deterministic_algorithms(False)
    """
    if fill_uninitialized():
        arr = t._data
        if arr.dtype.kind in "fV":  # V: bfloat16
            arr[...] = np.nan
        else:
            arr[...] = True if arr.dtype.kind == "b" else np.iinfo(arr.dtype).max
    return t


def scalar_tensor(s: Number, dtype: D.dtype | None = None,
                  device: DeviceLike | None = None) -> Tensor:
    return _finish(np.array(s, dtype=_np_dtype(dtype)), False, device)


def _like(t: Tensor, dtype):
    return t._data.dtype if dtype is None else D.as_dtype(dtype).np


def _like_filled(input: Tensor, value, dtype, requires_grad: bool, device,
                 memory_format=None) -> Tensor:
    """``*_like``: ``value`` (None: zeros) in ``input``'s shape and layout (or
    ``memory_format``), on ``input``'s device unless ``device`` is given (Note [Meta
    tensors])."""
    if device is None and input._data.__class__ is MetaArray:
        device = META
    t = _filled(input._data.shape, value, _like(input, dtype), requires_grad, device)
    return _lay_out_like(t, input, memory_format)


def _like_strides(input: Tensor, memory_format) -> tuple | None:
    """The element strides PyTorch's ``empty_like(input, memory_format=...)`` gives, or
    None for row-major (Note [Memory formats] in _core/layouts.py)."""
    if memory_format is not None and memory_format is not L.preserve_format:
        L.check_format_rank(memory_format, input.dim())
    src = input._data
    if src.__class__ is MetaArray:
        return None
    return L.target_strides(src, memory_format)


def _lay_out_like(t: Tensor, input: Tensor, memory_format) -> Tensor:
    """``t``, a new row-major tensor of ``input``'s shape, moved into the layout of
    ``_like_strides``."""
    strides = _like_strides(input, memory_format)
    if strides is not None and t._data.__class__ is not MetaArray:  # (meta: no strides)
        a = t._data
        out = L.empty_strided_array(a.shape, strides, a.dtype)
        out[...] = a
        t._data = out
    return t


def zeros_like(input: Tensor, dtype: D.dtype | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False, memory_format: L.memory_format | None = None) -> Tensor:
    """Zeros with the shape and dtype of ``input``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros_like(torch.ones(2, dtype=torch.float64))
        tensor([0., 0.], dtype=torch.float64)
    """
    return _like_filled(input, None, dtype, requires_grad, device, memory_format)


def ones_like(input: Tensor, dtype: D.dtype | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False, memory_format: L.memory_format | None = None) -> Tensor:
    """Ones with the shape and dtype of ``input``.

    Example:
        >>> import retrograd as torch
        >>> torch.ones_like(torch.zeros(2))
        tensor([1., 1.])
    """
    return _like_filled(input, 1, dtype, requires_grad, device, memory_format)


def full_like(input: Tensor, fill_value: Tensor | Number, dtype: D.dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False,
              memory_format: L.memory_format | None = None) -> Tensor:
    """``fill_value`` with the shape and dtype of ``input``.

    Example:
        >>> import retrograd as torch
        >>> torch.full_like(torch.zeros(2), 3)
        tensor([3., 3.])
    """
    return _like_filled(input, fill_value, dtype, requires_grad, device, memory_format)


def empty_like(input: Tensor, dtype: D.dtype | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False, memory_format: L.memory_format | None = None) -> Tensor:
    """Like ``zeros_like`` (retrograd never hands out uninitialised memory).

    Example:
        >>> import retrograd as torch
        >>> torch.empty_like(torch.ones(2)).shape
        torch.Size([2])
    """
    return uninitialized(zeros_like(input, dtype=dtype, requires_grad=requires_grad,
                                    device=device, memory_format=memory_format))


def arange(start: Number, end: Number | None = None, step: Number = 1, dtype: D.dtype | None = None,
           device: DeviceLike | None = None, requires_grad: bool = False, *,
           out: Tensor | None = None, layout: L.layout | None = None,
           pin_memory: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``, or written into ``out``
    (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(0, 1, 0.25)
        tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    check_pin_memory(pin_memory)
    if out is not None:
        t = arange(start, end, step, _out_dtype(dtype, out))
        if out._data.size != t._data.size:
            warnings.warn(
                f"The number of elements in the out tensor of shape {list(out._data.shape)} is "
                f"{out._data.size} which does not match the computed number of elements "
                f"{t._data.size}. Note that this may occur as a result of rounding error. The "
                f"out tensor will be resized to a tensor of shape ({t._data.size},).",
                UserWarning, stacklevel=2)
        return _made_into(out, t)
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dt = D.DEFAULTS.float if is_float else D.int64
    else:
        dt = D.as_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign "
                           f"(arange({start}, {end}, {step}) would count away from its end: "
                           "swap the bounds or change the sign of the step)")
    if not dt.is_floating_point:
        return _finish(np.arange(start, end, step, dtype=np.int64).astype(dt.np), requires_grad,
                       device)
    n = int(np.ceil((end - start) / step))
    return _finish(_arange_values(float(start), float(step), max(n, 0), dt.np), requires_grad,
                   device)


# Note [arange as PyTorch computes it]
# PyTorch's CPU arange computes in double (float's accumulate type) with fused
# multiply-adds (plain ones on its DEFAULT CPU capability: mul_add): whole pairs of
# 256-bit vectors (8 float32, 4 float64 or 16 half lanes each) start at
# base = start + step * j, rounded to the dtype, and their lanes are
# base + k * step; the remaining elements are start + step * i, each rounded once. The
# same arithmetic here gives PyTorch's values bit for bit for float32 and float64
# (tests/ops/test_linspace_torch.py); float16/bfloat16 lanes differ in rare last bits.
def _arange_values(start: float, step: float, n: int, np_dt) -> np.ndarray:
    i = np.arange(n)
    lanes = 32 // np_dt.itemsize
    nvec = n // (2 * lanes) * (2 * lanes)
    tail = mul_add(step, i.astype(np.float64), start, np.float64)
    if not nvec:
        return tail.astype(np_dt)
    j = (i[:nvec] // lanes * lanes).astype(np.float64)
    k = (i[:nvec] % lanes).astype(np.float64)
    base = mul_add(step, j, start, np.float64).astype(np_dt).astype(np.float64)
    lane = np.where(k == 0, base, mul_add(k, step, base, np.float64))
    return np.concatenate([lane, tail[nvec:]]).astype(np_dt)


def _steps(steps) -> int:
    """linspace's and logspace's ``steps``, checked as PyTorch checks it."""
    steps = int(steps)
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative (got steps={steps}: pass "
                           "the number of points wanted, 0 for an empty tensor)")
    return steps


def linspace(start: Tensor | Number, end: Tensor | Number, steps: int, dtype: D.dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False, *,
             out: Tensor | None = None, layout: L.layout | None = None,
             pin_memory: bool = False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive, or written into
    ``out`` (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    check_pin_memory(pin_memory)
    if out is not None:
        return _made_into(out, linspace(start, end, steps, _out_dtype(dtype, out)))
    dt = D.as_dtype(dtype) if dtype is not None else D.DEFAULTS.float
    steps = _steps(steps)
    return _finish(_linspace_values(start, end, steps, dt.np), requires_grad, device)


# Note [linspace as PyTorch computes it]
# PyTorch's CPU kernel fills the first half (index < steps // 2) from start and the rest
# from end: start + step * i and end - step * (steps - 1 - i), step = (end - start) /
# (steps - 1), all in the tensor's dtype (double for integer dtypes, then truncated).
# For float32 and float64 the compiler fuses each multiply-add (one rounding: an fma;
# two roundings on PyTorch's DEFAULT CPU capability, compiled without FMA: mul_add);
# float16 and bfloat16 round after every operation (c10::Half arithmetic goes through
# float), the index included. Computed the same way here, the values are PyTorch's bit
# for bit (tests/ops/test_linspace_torch.py).
def _linspace_values(start, end, steps: int, np_dt) -> np.ndarray:
    if steps == 0:
        return np.empty(0, np_dt)
    if steps == 1:
        return np.array([start]).astype(np_dt)
    idx = np.arange(steps)
    low = idx < steps // 2
    back = (steps - 1 - idx)
    if np_dt == np.float32 or np_dt == np.float64:
        t = np_dt.type
        s, e = t(start), t(end)
        step = (e - s) / t(steps - 1)
        return np.where(low, mul_add(step, idx.astype(np_dt), s, np_dt),
                        mul_add(-step, back.astype(np_dt), e, np_dt)).astype(np_dt)
    if np_dt.kind == "f" or np_dt.name == "bfloat16":  # float16, bfloat16
        def r(x):  # one operation of PyTorch's Half/BFloat16 arithmetic: float, rounded
            return np.asarray(x, np.float32).astype(np_dt).astype(np.float32)
        s, e = r(start), r(end)
        step = r(r(e - s) / r(steps - 1))
        return np.where(low, r(s + r(step * r(idx))), r(e - r(step * r(back)))).astype(np_dt)
    s, e = float(np_dt.type(start)), float(np_dt.type(end))  # integers: in double, truncated
    step = (e - s) / (steps - 1)
    vals = np.where(low, mul_add(step, idx.astype(np.float64), s, np.float64),
                    mul_add(-step, back.astype(np.float64), e, np.float64))
    return np.trunc(vals).astype(np_dt)


def logspace(start: Tensor | Number, end: Tensor | Number, steps: int, base: float = 10.0,
             dtype: D.dtype | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False, *, out: Tensor | None = None,
             layout: L.layout | None = None, pin_memory: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, or written into ``out`` (Note [Factory
    keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    check_pin_memory(pin_memory)
    if out is not None:
        return _made_into(out, logspace(start, end, steps, base, _out_dtype(dtype, out)))
    dt = D.as_dtype(dtype) if dtype is not None else D.DEFAULTS.float
    steps = _steps(steps)
    return _finish(_logspace_values(start, end, steps, float(base), dt.np), requires_grad,
                   device)


# Note [logspace as PyTorch computes it]
# PyTorch's CPU logspace is a scalar loop: start and end in the tensor's dtype, step =
# (end - start) / (steps - 1) in double, then pow(base, start + step * i) for the first
# half and pow(base, end - step * (steps - 1 - i)) for the rest, in double with the C
# library's pow (no fused multiply-add here), rounded to the dtype. math.pow is that pow.
def _logspace_values(start, end, steps: int, base: float, np_dt) -> np.ndarray:
    if steps == 0:
        return np.empty(0, np_dt)
    floating = np_dt.kind == "f" or np_dt.name == "bfloat16"
    ts, te = (np_dt.type(start), np_dt.type(end)) if floating else (int(start), int(end))
    s, e = float(ts), float(te)
    if steps == 1:
        return np.array([math.pow(base, s)]).astype(np_dt)
    step = float(te - ts) / (steps - 1)  # (the difference in the dtype, as PyTorch's)
    half = steps // 2
    pw = math.pow
    vals = [pw(base, s + step * i) if i < half else pw(base, e - step * (steps - i - 1))
            for i in range(steps)]
    out = np.array(vals, dtype=np.float64)
    if np_dt.itemsize == 2 and floating:  # a double stored into Half/BFloat16 goes via float
        out = out.astype(np.float32)
    return out.astype(np_dt)


def eye(n: int, m: int | None = None, dtype: D.dtype | None = None,
        device: DeviceLike | None = None, requires_grad: bool = False, *,
        out: Tensor | None = None, layout: L.layout | None = None,
        pin_memory: bool = False) -> Tensor:
    """The identity matrix (``n`` x ``m``), or written into ``out`` (Note [Factory
    keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    check_pin_memory(pin_memory)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v} (eye(n, m) makes "
                               "an n x m matrix)")
    if out is not None:
        return _made_into(out, eye(n, m, _out_dtype(dtype, out)))
    return _finish(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad, device)


@random_under_vmap
def rand(*shape: int | Sequence[int], size: Sequence[int] | None = None,
         generator: rng.Generator | None = None, dtype: D.dtype | None = None,
         device: DeviceLike | None = None, requires_grad: bool = False,
         out: Tensor | None = None, layout: L.layout | None = None,
         pin_memory: bool = False) -> Tensor:
    """Uniform samples in [0, 1); the shape by position or as ``size=``, and ``out=``
    (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.rand(2, 3).shape, torch.rand(size=(2,)).shape
        (torch.Size([2, 3]), torch.Size([2]))
    """
    check_pin_memory(pin_memory)
    shape = _size("rand", shape, size)
    if out is not None:
        return _made_into(out, rand(shape, generator=generator, dtype=_out_dtype(dtype, out),
                                    requires_grad=requires_grad))
    dt = _np_dtype(dtype)
    n = math.prod(shape)
    allocate(lambda sh, d: None, shape, dt)  # (the size checks only)
    if parse_device(device) is META:  # draws nothing, as PyTorch's meta rand
        return _filled(shape, None, D.as_dtype(dt), requires_grad, device)
    if dt in _F32_F64:
        arr = rng.uniform(generator, n, dt)
    else:
        _check_floating(dt, "check_uniform_bounds")
        arr = random_dist.uniform_range(generator, n, dt, 0.0, 1.0)
    return _finish(arr.reshape(shape), requires_grad, device)


_F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))


def _check_floating(dt: np.dtype, kernel: str) -> None:
    if dt.kind != "f" and dt.name != "bfloat16":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_LEGACY[dt.name]}'")


@random_under_vmap
def randn(*shape: int | Sequence[int], size: Sequence[int] | None = None,
          generator: rng.Generator | None = None, dtype: D.dtype | None = None,
          device: DeviceLike | None = None, requires_grad: bool = False,
          out: Tensor | None = None, layout: L.layout | None = None,
          pin_memory: bool = False) -> Tensor:
    """Standard normal samples; the shape by position or as ``size=``, and ``out=``
    (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.randn(4).dtype, torch.randn(size=(2, 3)).shape
        (torch.float32, torch.Size([2, 3]))
    """
    check_pin_memory(pin_memory)
    shape = _size("randn", shape, size)
    if out is not None:
        return _made_into(out, randn(shape, generator=generator, dtype=_out_dtype(dtype, out),
                                     requires_grad=requires_grad))
    dt = _np_dtype(dtype)
    _check_floating(dt, "normal_kernel_cpu")
    allocate(lambda sh, d: None, shape, dt)  # (the size checks only)
    if parse_device(device) is META:  # draws nothing, as PyTorch's meta randn
        return _filled(shape, None, D.as_dtype(dt), requires_grad, device)
    arr = rng.normal(generator, math.prod(shape), dt).reshape(shape)
    return _finish(arr, requires_grad, device)


@random_under_vmap
def randint(low: int | None = None, high: int | Shape | None = None, size: Shape | None = None,
            generator: rng.Generator | None = None, dtype: D.dtype | None = None,
            device: DeviceLike | None = None, requires_grad: bool = False, *,
            out: Tensor | None = None, layout: L.layout | None = None,
            pin_memory: bool = False) -> Tensor:
    """Integers uniformly drawn from [low, high) (``low`` defaults to 0: ``randint(10,
    (3,))``, ``randint(high=10, size=(3,))``), or into ``out`` (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> torch.randint(0, 10, (3,)).dtype, torch.randint(5, size=(2,)).shape
        (torch.int64, torch.Size([2]))
    """
    check_pin_memory(pin_memory)
    if out is not None:
        return _made_into(out, randint(low, high, size, generator, _out_dtype(dtype, out)))
    if low is None:
        low, high = (0, high) if high is not None else (low, high)
    if low is None:
        raise TypeError("randint() missing 1 required positional arguments: \"high\" (pass "
                        "the upper bound: randint(high, size) or randint(low, high, size))")
    if size is None:
        if isinstance(high, (tuple, list)):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing required argument 'size'")
    if high is None:
        low, high = 0, low
    shape = _shape((size,)) if isinstance(size, int) else tuple(size)
    arr = rng.randint(generator, math.prod(shape), int(low), int(high)).reshape(shape)
    dt = _np_dtype(dtype, D.int64)
    return _finish(arr.astype(dt), requires_grad, device)


@random_under_vmap
def randperm(n: int, generator: rng.Generator | None = None, dtype: D.dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False, *,
             out: Tensor | None = None, layout: L.layout | None = None,
             pin_memory: bool = False) -> Tensor:
    """A random permutation of 0..n-1, or written into ``out`` (Note [Factory keywords]).

    Example:
        >>> import retrograd as torch
        >>> sorted(torch.randperm(4).tolist()), torch.randperm(n=3).shape
        ([0, 1, 2, 3], torch.Size([3]))
    """
    check_pin_memory(pin_memory)
    if out is not None:
        return _made_into(out, randperm(n, generator, _out_dtype(dtype, out)))
    arr = rng.randperm(generator, int(n)).astype(_np_dtype(dtype, D.int64))
    return _finish(arr, requires_grad, device)


def _empty_keeping_layout(input: Tensor, dtype, kw: dict) -> Tensor:
    """``empty_like(input)`` keeping its memory layout, as PyTorch's ``*_like`` do."""
    check_device(kw.pop("device", None))
    kw.pop("layout", None)
    fmt = kw.pop("memory_format", None)
    if kw:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kw))}'")
    dt = input._data.dtype if dtype is None else D.as_dtype(dtype).np
    strides = _like_strides(input, fmt)
    if strides is None:
        return _make(np.empty(input._data.shape, dt))
    return _make(L.empty_strided_array(input._data.shape, strides, dt))


def _grad(t: Tensor, requires_grad: bool) -> Tensor:
    return _finish(t._data, requires_grad, None) if requires_grad else t


@random_under_vmap
def normal(mean: Tensor | float = 0.0, std: Tensor | float = 1.0, size: Shape | None = None, *,
           generator: rng.Generator | None = None, dtype: D.dtype | None = None,
           out: Tensor | None = None, requires_grad: bool = False,
           device: DeviceLike | None = None) -> Tensor:
    """Normal samples with the given mean and std (numbers or tensors), PyTorch's numbers.

    ``normal(mean_tensor, std)`` draws ``normal_(0, std)`` and adds the means;
    ``normal(mean, std_tensor)`` and ``normal(mean_tensor, std_tensor)`` draw standard
    normals, multiply by the stds and add the means, as PyTorch's CPU kernels do.

    Example:
        >>> import retrograd as torch
        >>> torch.normal(0.0, 1.0, size=(2,)).shape
        torch.Size([2])
    """
    check_device(device)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if out is not None:  # the samples drawn in out's dtype (numbers) and copied into out
        if not (mt or st) and dtype is None and isinstance(out, Tensor):
            dtype = out.dtype
        res = normal(mean, std, size, generator=generator, dtype=dtype)
        return write_out("normal", out, res, (mean, std))
    if not st and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if st and std._data.size and (std._data < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not (mt or st):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: pass "
                            "size= when mean and std are numbers")
        shape = _shape((size,)) if isinstance(size, int) else tuple(size)
        dt = _np_dtype(dtype)
        _check_floating(dt, "normal_kernel_cpu")
        arr = rng.normal(generator, math.prod(shape), dt, float(mean), float(std))
        return _finish(arr.reshape(shape), requires_grad, None)
    dt = (mean if mt else std)._data.dtype
    if mt and not st:
        z = rng.normal(generator, mean._data.size, dt, 0.0, float(std))
        res = z.reshape(mean._data.shape) + mean._data
    else:
        m = mean._data if mt else np.asarray(mean, dt)
        shape = np.broadcast_shapes(np.shape(m), std._data.shape)
        z = rng.normal(generator, math.prod(shape), dt).reshape(shape)
        res = z * std._data.astype(dt, copy=False) + m
    return _finish(np.asarray(res, dt), requires_grad, None)


def _legacy(dt):
    def make(*args) -> Tensor:
        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=dt)
        return zeros(*args, dtype=dt)
    make.__name__ = f"{dt.name}_tensor"
    make.dtype = dt
    make.__doc__ = f"Legacy constructor: a {dt} tensor from data or a shape."
    return make


FloatTensor = _legacy(D.float32)
DoubleTensor = _legacy(D.float64)
HalfTensor = _legacy(D.float16)
BFloat16Tensor = _legacy(D.bfloat16)
LongTensor = _legacy(D.int64)
IntTensor = _legacy(D.int32)
ShortTensor = _legacy(D.int16)
CharTensor = _legacy(D.int8)
BoolTensor = _legacy(D.bool)
ByteTensor = _legacy(D.uint8)


def legacy_new(cls, *args, **kwargs) -> Tensor:
    """``Tensor(data)`` / ``Tensor(*shape)``, the legacy constructor, always of the default
    float dtype (``methods.install`` makes it ``Tensor.__new__``); a ``Parameter``-like
    subclass gets a bare instance to fill in.

    Example:
        >>> import retrograd as torch
        >>> torch.Tensor([1, 2]), torch.Tensor(2, 1).shape
        (tensor([1., 2.]), torch.Size([2, 1]))
    """
    if cls is not Tensor and cls._is_param:
        return object.__new__(cls)
    device = kwargs.pop("device", None)
    check_device(device)
    if len(args) == 1 and not isinstance(args[0], (int, Size)):  # data; ints/Size: a shape
        src = args[0]
        if isinstance(src, Tensor):
            t = _make(src._data)
            t._vc = src._vc
        else:
            t = tensor(src, dtype=D.DEFAULTS.float)
    else:
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if not args:
            shape = (0,)  # torch.Tensor() is an empty 1-D tensor
        t = _make(np.empty(tuple(shape), dtype=D.DEFAULTS.float.np))
        t._data[...] = 0
    if cls is not Tensor:
        t.__class__ = cls
    return t


_LEGACY_TYPES = {"torch.FloatTensor": FloatTensor, "torch.DoubleTensor": DoubleTensor,
                 "torch.HalfTensor": HalfTensor, "torch.BFloat16Tensor": BFloat16Tensor,
                 "torch.LongTensor": LongTensor, "torch.IntTensor": IntTensor,
                 "torch.ShortTensor": ShortTensor, "torch.CharTensor": CharTensor,
                 "torch.BoolTensor": BoolTensor, "torch.ByteTensor": ByteTensor}


def set_default_tensor_type(t: Callable[..., Tensor] | str) -> None:
    """Deprecated (PyTorch warns so): set the default floating dtype from a legacy tensor
    type, ``torch.DoubleTensor`` or its name ``"torch.DoubleTensor"``. Prefer
    ``torch.set_default_dtype``.

    Example:
        >>> import retrograd as torch, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     torch.set_default_tensor_type("torch.DoubleTensor")
        >>> torch.tensor([1.0]).dtype
        torch.float64
        >>> torch.set_default_dtype(torch.float32)
    """
    import warnings
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled. "
                            "(retrograd runs on the CPU only: use the CPU type, e.g. "
                            "'torch.FloatTensor')")
        if t not in _LEGACY_TYPES:
            raise TypeError(f"invalid type: '{t}' (pass a legacy tensor type such as "
                            "'torch.DoubleTensor', or call torch.set_default_dtype)")
        t = _LEGACY_TYPES[t]
    dt = t.dtype if any(t is f for f in _LEGACY_TYPES.values()) else None
    if dt is None or not dt.is_floating_point:
        raise TypeError(("only floating-point types are supported as the default type" if dt
                         else "invalid type object: only floating-point types are supported "
                         "as the default type") + " (pass torch.FloatTensor or "
                         "torch.DoubleTensor; for a dtype use torch.set_default_dtype)")
    D.set_default_dtype(dt)

