"""Reading by index: ``x[key]`` (Note [Basic indexing as view steps]), ``index_put``,
``gather``/``scatter``, ``index_select``/``index_add``/``index_copy``/``index_fill``,
``masked_fill``/``masked_select``, ``take``, ``repeat_interleave``. The writes
(``x[key] = v``) are in ``_functions/writes.py``.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(6.).view(2, 3)
    >>> x[1, 1:], x.gather(1, torch.tensor([[2], [0]]))
    (tensor([4., 5.]), tensor([[2.],
            [3.]]))
"""

from __future__ import annotations

import builtins
import re
import sys
import types
import warnings
from collections.abc import Sequence

import numpy as np

from .._core.hints import Number
from .._graph.node import is_library_file
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim
from ..ops.argcheck import broadcast_checked, values_to_check
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import _is_number, apply, view_apply
from ..ops.public import PROMOTE, public
from ..ops.records import table as T
from .arguments import _py_sum
from .reductions import _legacy_name
from .shape import expand

#: what ``x[key]`` takes: an int, a slice, None, ``...``, a bool, a tensor, a sequence of ints,
#: or a tuple of these
IndexKey = int | slice | types.EllipsisType | None | bool | Tensor | Sequence | tuple


@public
def repeat_interleave(input: Tensor, repeats: Tensor | int, dim: int | None = None) -> Tensor:
    if dim is None:
        input, dim = input.reshape(-1), 0
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(input.shape[dim]), reps)
    return index_select(input, dim, _make(idx.astype(np.int64)))


# ----------------------------------------------------------------------------------
# indexing


# Note [Index keys as PyTorch reads them]
# PyTorch's ``x[key]`` (torch/csrc/autograd/python_variable_indexing.cpp) reads the key
# before indexing:
# * a key that is not a tuple but a sequence (a list, a range) shorter than 32 whose items
#   include a tensor, a sequence, a slice, None or ``...`` is read as a tuple, with a
#   deprecation warning (``x[[[0, 1], [2, 3]]]`` is ``x[[0, 1], [2, 3]]``); any other
#   sequence is one index (``x[range(3), y]``, ``x[[0, 2]]``);
# * a sequence part becomes a long tensor (floats truncated: ``x[[0.5, 1]]`` is rows 0
#   and 1; bools stay a mask: ``x[[True, False, True]]``);
# * a 0-d integer tensor (not uint8) is an int: ``x[t0]`` is a view, ``x[t0] += v`` writes
#   through it, and ``x[t0] = x[t0]`` copies a tensor onto itself, which the overlap
#   checks allow (Note [Memory overlap in in-place ops] in overlap.py);
# * a uint8 tensor is a mask, with PyTorch's deprecation warning.
_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result")
_UINT8_MASK = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
               "torch.bool instead.")


def _warn_at_user(message: str) -> None:
    """A UserWarning pointing at the first frame outside retrograd (the user's indexing
    line, whichever path of the library raised it)."""
    f, level = sys._getframe(1), 2  # (stacklevel 2: the caller's frame)
    while f is not None and is_library_file(f.f_code.co_filename):
        f, level = f.f_back, level + 1
    warnings.warn(message, UserWarning, stacklevel=level)


def _is_sequence(k) -> bool:
    """A Python sequence PyTorch's key parser reads as one (lists, tuples, ranges)."""
    return isinstance(k, (list, tuple, range))


def _sequence_as_tuple(key) -> bool:
    """PyTorch's ``treatSequenceAsTuple`` for a key that is not a tuple (Note [Index keys as
    PyTorch reads them])."""
    if not _is_sequence(key) or len(key) >= 32:
        return False
    return any(isinstance(k, (Tensor, slice)) or k is None or k is Ellipsis
               or _is_sequence(k) for k in key)


def _norm_index(k):
    if isinstance(k, Tensor):
        d = k._data
        if d.dtype == np.bool_:
            return d
        if d.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if d.dtype == np.uint8:  # a mask (Note [Index keys as PyTorch reads them])
            _warn_at_user(_UINT8_MASK)
            return d.astype(np.bool_)
        if d.__class__ is np.ndarray and d.ndim == 0:
            return int(d)  # an int (Note [Index keys as PyTorch reads them])
        return d.astype(np.intp, copy=False)
    if _is_sequence(k):
        arr = np.array([_norm_index(x) if isinstance(x, Tensor) else x for x in k])
        if arr.dtype == np.bool_:
            return arr
        if arr.dtype.kind not in "iuf":
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(k).__name__} of "
                             f"{arr.dtype.name}: index with a list of ints)")
        return arr.astype(np.intp)  # PyTorch's long tensor: floats truncated
    if isinstance(k, np.ndarray):
        return k
    if k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)):
        if isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
        return k
    if isinstance(k, bool):
        return k
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(k).__name__})")


def norm_key(key):
    """A NumPy-ready indexing key (tensors become integer or bool arrays, a 0-d integer
    tensor an int, sequences index arrays: Note [Index keys as PyTorch reads them]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions.indexing import norm_key
        >>> norm_key((torch.tensor(1), range(2)))
        (1, array([0, 1]))
    """
    if not isinstance(key, tuple):
        if _sequence_as_tuple(key):
            _warn_at_user(_SEQUENCE_AS_TUPLE)
            key = tuple(key)
        else:
            key = (key,)
    return tuple(_norm_index(k) for k in key)


def _basic(key) -> bool:
    for k in key:
        if not (k is None or k is Ellipsis or k.__class__ is slice or k.__class__ is int
                or isinstance(k, np.integer)):
            return False
    return True


# Note [Basic indexing as view steps]
# PyTorch applies a basic key (ints, slices, None, ...) one part at a time, left to right:
# an int selects (SelectBackward0), a slice slices (SliceBackward0) unless, inside a
# tuple, it keeps its dim whole as written (start None or 0, step None or 1, stop None
# or at least the size), None unsqueezes (UnsqueezeBackward0), and a key that changes
# nothing gives an alias (AliasBackward0). ``x[a:b]`` alone always slices. Each part is
# one view op here too, so the graph and the recipe a view is re-derived from (Note
# [View grad_fn regeneration]) are PyTorch's. A single int, the commonest key, is tested
# first and costs one view op.
_FULL = slice(None)
_SLICE, _SELECT, _UNSQUEEZE = T.slice_op, T.select, T.unsqueeze


def _basic_steps(key: tuple, shape: tuple):
    """The view steps ``[(op, p), ...]`` of a basic tuple ``key`` on a tensor of ``shape``
    (Note [Basic indexing as view steps]); None when ``key`` has other parts."""
    nd = len(shape)
    steps = []
    d = src = 0  # the dim in the result so far, in the input
    for k in key:
        c = k.__class__
        if c is slice:
            if src >= nd:
                _too_many_indices(key, shape)
            step = k.step
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop = k.start, k.stop
            if start or (step is not None and step != 1) or (stop is not None and
                                                            stop < shape[src]):
                steps.append((_SLICE, (k,) if not d else (_FULL,) * d + (k,)))
            d += 1
            src += 1
        elif c is int or (c is not bool and isinstance(k, np.integer)):
            if src >= nd:
                _too_many_indices(key, shape)
            size = shape[src]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {src} with size "
                                 f"{size} (tensor of shape {list(shape)})")
            steps.append((_SELECT, (k,) if not d else (_FULL,) * d + (k,)))
            src += 1
        elif k is None:
            steps.append((_UNSQUEEZE, d))
            d += 1
        elif k is Ellipsis:
            rest = 0
            for k2 in key[key.index(Ellipsis) + 1:]:
                if k2 is Ellipsis:
                    return None  # (NumPy's message)
                if k2 is not None:
                    rest += 1
            skip = nd - src - rest
            if skip > 0:
                d += skip
                src += skip
        else:
            return None
    return steps


def _too_many_indices(key, shape):
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                         "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    used = _py_sum(1 for k in key if k is not None and k is not Ellipsis)
    raise IndexError(f"too many indices for tensor of dimension {len(shape)} (tensor of shape "
                     f"{list(shape)}, {used} indices)")


def getitem(self, key: IndexKey) -> Tensor:
    """``tensor[key]``: basic indexing gives a view, advanced indexing a copy.

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(6.).reshape(2, 3)
        >>> x[1], x[:, ::2].shape, x[x > 3]
        (tensor([3., 4., 5.]), torch.Size([2, 2]), tensor([4., 5.]))
    """
    c = key.__class__
    if c is int:  # Note [Basic indexing as view steps]: the commonest key first
        shape = self._data.shape
        if shape and -shape[0] <= key < shape[0]:
            return view_apply(T.select, self, (key,))
        steps = _basic_steps((key,), shape)  # (raises PyTorch's error)
    elif c is tuple:
        steps = _basic_steps(key, self._data.shape)
    elif c is slice:  # alone, a slice always slices
        if not self._data.ndim:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if key.step is not None and key.step <= 0:
            raise ValueError("step must be greater than zero")
        return view_apply(T.slice_op, self, (key,))
    elif key is None:
        return view_apply(T.unsqueeze, self, 0)
    elif key is Ellipsis:
        return view_apply(T.alias, self, None)
    else:
        steps = None
    if steps is None:
        key = norm_key(key)
        steps = _basic_steps(key, self._data.shape) if _basic(key) else None
    if steps is not None:
        if not steps:
            return view_apply(T.alias, self, None)
        t = self
        for op, p in steps:
            t = view_apply(op, t, p)
        return t
    parts = _advanced_parts(key, self._data.shape)
    t = self
    if parts is not None:  # the basic parts first, as views (Note [Basic indexing as view steps])
        steps, idx = parts
        for op, p in steps:
            t = view_apply(op, t, p)
        if not idx:
            return t
    else:
        idx = key
    try:
        return apply(T.index, (t,), idx)
    except IndexError as e:
        _mask_shape_error(self._data.shape, key)
        raise index_error(e, idx, t._data.shape, f"tensor of shape {list(self.shape)}, "
                                                 f"index {key}") from None


# Note [Index error dimensions]
# PyTorch's index kernels number an out-of-range index by the tensor index it came from,
# not by the dim it indexes: ``x[:, t]`` with t out of range says "for dimension 0", and
# ``x[i, :, t]`` "for dimension 1" (measured with torch 2.13, for x[key], x[key] = v and
# index_put_). The basic parts of the key (ints, slices, ...) are applied as views first
# and count for nothing; a boolean mask counts one per dim it covers.
_OUT_OF_BOUNDS = re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")


def _tensor_index_ordinal(key: tuple, nd: int, axis: int) -> int:
    """How many dims of a tensor of ``nd`` dims that ``key`` indexes with index arrays lie
    before ``axis`` (Note [Index error dimensions])."""
    used = _py_sum(k.ndim if k.__class__ is np.ndarray and k.dtype == np.bool_ else 1
                   for k in key if k is not None and k is not Ellipsis)
    src = count = 0
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            src += nd - used
            continue
        n = k.ndim if k.__class__ is np.ndarray and k.dtype == np.bool_ else 1
        if src >= axis:
            break
        if k.__class__ is np.ndarray and (k.ndim or k.dtype == np.bool_):
            count += n
        src += n
    return count


def index_error(e: IndexError, key: tuple, shape: tuple, where: str) -> IndexError:
    """NumPy's IndexError from indexing an array of ``shape`` with ``key`` in PyTorch's
    words (Note [Index error dimensions]), then ``where`` and the valid range."""
    m = _OUT_OF_BOUNDS.search(str(e))
    if m is None:
        return IndexError(f"{_torch_wording(str(e))} ({where})")
    i, axis, size = int(m.group(1)), int(m.group(2)), int(m.group(3))
    dim = _tensor_index_ordinal(key if isinstance(key, tuple) else (key,), len(shape), axis)
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size} "
                      f"({where}: the index indexes dim {axis}, whose indices must lie in "
                      f"[{-size}, {size - 1}])")


def _torch_wording(message: str) -> str:
    """NumPy's indexing error in PyTorch's words: "for dimension 0", "indexing tensors ...
    with shapes [2], [3]"."""
    message = message.replace(" for axis ", " for dimension ")
    m = re.match(r"shape mismatch: indexing arrays could not be broadcast together with "
                 r"shapes (.*)", message)
    if m:
        shapes = ", ".join("[" + ", ".join(re.findall(r"\d+", t)) + "]"
                           for t in re.findall(r"\([^)]*\)", m.group(1)))
        message = ("shape mismatch: indexing tensors could not be broadcast together with "
                   f"shapes {shapes}")
    return message


def _advanced_parts(key: tuple, shape: tuple):
    """For a key with index arrays: PyTorch's view steps of its basic parts (ints select,
    slices slice, None unsqueezes: Note [Basic indexing as view steps]; a 0-d integer index
    is an int) and the key of arrays left for the advanced index of that view; None for
    keys left to NumPy whole (bools, several ellipses, errors)."""
    nd = len(shape)
    used = 0
    for k in key:
        if k.__class__ is np.ndarray:
            used += k.ndim if k.dtype == np.bool_ else 1
        elif k is not None and k is not Ellipsis:
            used += 1
    if used > nd:
        return None
    steps, idx = [], []
    d = src = pos = 0  # dims of the view so far, of the input, covered by idx
    ellipsis = False
    for k in key:
        c = k.__class__
        if c is np.ndarray and (k.ndim or k.dtype == np.bool_):
            if not k.ndim:
                return None
            while pos < d:
                idx.append(_FULL)
                pos += 1
            n = k.ndim if k.dtype == np.bool_ else 1
            idx.append(k)
            pos += n
            d += n
            src += n
        elif c is slice:
            if k.start or (k.step is not None and k.step != 1) or (
                    k.stop is not None and k.stop < shape[src]):
                steps.append((_SLICE, (_FULL,) * d + (k,)))
            d += 1
            src += 1
        elif c is int or c is np.ndarray or (c is not bool and isinstance(k, np.integer)):
            size = shape[src]
            if not -size <= k < size:
                return None
            steps.append((_SELECT, (_FULL,) * d + (int(k),)))
            src += 1
        elif k is None:
            steps.append((_UNSQUEEZE, d))
            d += 1
        elif k is Ellipsis and not ellipsis:
            ellipsis = True
            d += nd - used
            src += nd - used
        else:
            return None
    return steps, tuple(idx)


def _mask_shape_error(shape, key) -> None:
    """Raise PyTorch's IndexError for a boolean mask in ``key`` whose shape does not match
    the dims it covers (NumPy's message says "boolean index did not match")."""
    nd = len(shape)
    used = _py_sum(1 if not isinstance(k, np.ndarray) else (k.ndim if k.dtype == np.bool_ else 1)
                   for k in key if k is not None and k is not Ellipsis)
    pos = 0
    shape = list(shape)  # None inserts a dim first, as PyTorch reports it
    for k in key:
        if k is None:
            shape.insert(pos, 1)
            pos += 1
            continue
        if k is Ellipsis:
            pos += nd - used
            continue
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j, m in enumerate(k.shape):
                if pos + j < len(shape) and m != shape[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {pos + j} (a "
                        f"boolean mask must have the shape of the dims it selects from; "
                        f"build it from the tensor itself, e.g. x[x > 0], or index with "
                        f"integer positions, e.g. mask.nonzero())")
            pos += k.ndim
            continue
        pos += 1


@public(inplace=True, inplace_function=True)
def index_put(input: Tensor, indices: Sequence[IndexKey] | None,
              values: Tensor | Number, accumulate: bool = False) -> Tensor:
    """Out-of-place ``input[indices] = values`` (or ``+=`` with ``accumulate``).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_put((torch.tensor([0, 0]),), torch.tensor(1.), accumulate=True)
        tensor([2., 0., 0.])
    """
    key = norm_key(tuple(indices) if isinstance(indices, list) else indices)
    if not isinstance(values, Tensor):
        values = _make(np.asarray(values, dtype=input._data.dtype))
    elif values._data.dtype != input._data.dtype:
        _check_put_dtype(input, key, values, accumulate)
        values = values.to(input.dtype)
    try:
        return apply(T.index_put, (input, values), (key, bool(accumulate)))
    except ValueError:  # NumPy's broadcast error: PyTorch's RuntimeError, its wording
        raise _index_put_shape_error(input, key, values._data.shape) from None
    except IndexError as e:
        _mask_shape_error(input._data.shape, key)
        raise index_error(e, key, input._data.shape,
                          f"index_put_ on a tensor of shape {list(input.shape)}") from None


# Note [index_put dtypes]
# PyTorch's index_put_ (``x[idx] = v`` with a tensor or list index) requires ``v`` to
# have x's dtype ("Index put requires the source and destination dtypes match"), after
# checking that v broadcasts to the indexed shape. Two cases cast instead: an index
# without tensors (ints and 0-d integer tensors select, slices view: a copy_), and one
# boolean mask of one or more dims with a one-element value (PyTorch dispatches that to
# masked_fill_).
def _check_put_dtype(self: Tensor, key: tuple, value: Tensor, accumulate: bool) -> None:
    """Raise PyTorch's error for ``self[key] = value`` (or index_put) when ``value``'s
    dtype differs from self's and PyTorch would not cast it (Note [index_put dtypes]).
    Called only on a dtype mismatch."""
    arrays = [k for k in key if isinstance(k, np.ndarray) and (k.ndim or k.dtype == np.bool_)]
    if not arrays:
        return
    if not accumulate and value._data.size == 1 and len(arrays) == 1 and \
            arrays[0].dtype == np.bool_ and arrays[0].ndim:
        return
    try:
        shape = _indexed_shape(self, key)
    except IndexError:
        shape = None
    vs = value._data.shape
    if shape is not None and (len(vs) > len(shape) or builtins.any(
            a != b and a != 1 for a, b in zip(vs[::-1], shape[::-1]))):
        raise _index_put_shape_error(self, key, vs)
    raise RuntimeError(
        f"Index put requires the source and destination dtypes match, got "
        f"{_LEGACY_NAMES[self.dtype.name]} for the destination and "
        f"{_LEGACY_NAMES[value.dtype.name]} for the source. (writing through a tensor index "
        f"does not convert: use value.to({self.dtype}))")


def _indexed_shape(self, key) -> tuple:
    """The shape of ``self[key]``, from a zero-strided stand-in for self (no copy of self
    for tensor indices)."""
    return np.lib.stride_tricks.as_strided(
        np.zeros(1, np.int8), self._data.shape, (0,) * self._data.ndim)[key].shape


def _index_put_shape_error(self, key, vshape) -> RuntimeError:
    rshape = _indexed_shape(self, key)
    return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                        f"broadcast to indexing result of shape {list(rshape)} (the value must "
                        "broadcast to the shape of x[key])")


@public
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.gather(torch.tensor([[1., 2.], [3., 4.]]), 1, torch.tensor([[1], [0]]))
        tensor([[2.],
                [3.]])
    """
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "gather", input, d)
    return apply(T.gather, (input, index), d)


_GATHER = object()  # _check_index's ``src`` for gather (no src, gather's shape check)


def _check_index(index, fn, input=None, d=0, src=_GATHER):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise RuntimeError(f"{fn}(): Expected dtype int64 for index")
    if input is None or not index._data.size:
        return
    if src is _GATHER:
        _gather_shape_check(input._data.shape, d, index._data.shape)
    else:
        _scatter_shape_check(input._data.shape, d, index._data.shape,
                             src._data.shape if isinstance(src, Tensor) else None)
    idx = values_to_check(index._data)
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.min() < 0 or idx.max() >= size:  # PyTorch checks too (negative indices included)
        bad = int(idx[(idx < 0) | (idx >= size)].flat[0])
        raise RuntimeError(
            f"index {bad} is out of bounds for dimension {d} with size {size} (in {fn}: "
            f"every index along dim {d} must lie in [0, {size - 1}]; {fn} takes no negative "
            "indices, so wrap them first, e.g. index % size)")


def _gather_shape_check(shape: tuple, d: int, ishape: tuple) -> None:
    """PyTorch's gather_shape_check (ScatterGatherChecks.h): as many dims as the input
    (a 0-d one counts as 1-d), and no larger than it apart from ``d``."""
    if max(len(shape), 1) != max(len(ishape), 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input "
                           f"tensor (input {list(shape)}, index {list(ishape)})")
    for k in range(len(ishape)):
        if k != d and ishape[k] > (shape[k] if shape else 1):
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(ishape)} to be no "
                f"larger than self {list(shape)} apart from dimension {d} (gather takes "
                f"index[i][j] from row i: index needs no more rows than input along dim {k})")


def _scatter_shape_check(shape: tuple, d: int, ishape: tuple, sshape) -> None:
    """PyTorch's scatter_shape_check (ScatterGatherChecks.h) for a nonempty index: as many
    dims as self, no larger than self apart from ``d``, and no larger than src."""
    if max(len(shape), 1) != max(len(ishape), 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as self "
                           f"tensor (self {list(shape)}, index {list(ishape)})")
    wrong = any(k != d and ishape[k] > (shape[k] if shape else 1) for k in range(len(ishape)))
    if not wrong and sshape is not None:
        m = max(len(sshape), 1)
        for k in range(len(ishape)):
            if k >= m:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, "
                                 f"{m - 1}], but got {k}) (src {list(sshape)} needs index's "
                                 f"{len(ishape)} dims)")
            if ishape[k] > (sshape[k] if sshape else 1):
                wrong = True
                break
    if wrong:
        more = f" and to be no larger size than src {list(sshape)}" if sshape is not None else ""
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self "
                           f"{list(shape)} apart from dimension {d}{more} (index[i][j] says "
                           f"where src[i][j] goes: index may be smaller than src, never larger)")


def _check_index_copy(input: Tensor, d: int, index: Tensor, source: Tensor) -> None:
    """PyTorch's index_copy_ checks, in its order and words: the dimensionalities, the
    number of indices, the slice shapes (RuntimeError), the index range (IndexError)."""
    nd, snd = input._data.ndim, source._data.ndim
    if nd and snd and nd != snd:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({snd}), destination "
                         f"dimensionality ({nd}) (source must have input's {nd} dims, with "
                         f"size len(index) along dim {d})")
    num = index._data.size
    ssize = source._data.shape[d] if snd else 1
    if num != ssize:
        raise IndexError(f"index_copy_(): Number of indices ({num}) should be equal to "
                         f"source.size(dim) ({ssize}) (source has shape {list(source.shape)}; "
                         f"dim {d})")
    if nd and snd:
        dst = [n for k, n in enumerate(input._data.shape) if k != d]
        src = [n for k, n in enumerate(source._data.shape) if k != d]
        for k, (a, b) in enumerate(zip(dst, src)):
            if a != b:
                raise RuntimeError(
                    f"index_copy_(): Source/destination tensor must have same slice shapes. "
                    f"Destination slice shape: {a} at dimension {k} and source slice shape: "
                    f"{b} at dimension {k}. (input {list(input.shape)}, source "
                    f"{list(source.shape)}: all dims but {d} must agree)")
    if num:
        idx = values_to_check(index._data)
        size = input._data.shape[d] if nd else 1
        if idx.min() < 0 or idx.max() >= size:
            bad = int(idx[(idx < 0) | (idx >= size)].flat[0])
            raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} "
                             f"with size {size} (indices must lie in [0, {size - 1}]; no "
                             f"negative ones: wrap them first, e.g. index % {size})")


@public(inplace=True)
def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | Number | None = None, *,
            value: Number | None = None, reduce: str | None = None) -> Tensor:
    """Out-of-place scatter: ``out[index[i][j]][j] = src[i][j]`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).scatter(0, torch.tensor([2]), torch.tensor([5.]))
        tensor([0., 0., 5.])
    """
    if src is None:
        src = value
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "scatter", input, d, src if src is not None else value)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. (got {reduce!r}; "
                           "scatter_reduce has 'sum', 'prod', 'mean', 'amax' and 'amin')")
    if reduce is not None and isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                      "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                      "instead for more reduction options.", UserWarning, stacklevel=2)
    if not isinstance(src, Tensor):  # scatter.value / scatter.value_reduce (one edge)
        op = T.scatter_value if reduce is None else T.scatter_value_reduce
        return apply(op, (input, index), (d, reduce, src))
    # scatter.reduce records PyTorch's NotImplemented node (kernel: scatter_add's)
    return apply(T.scatter if reduce is None else T.scatter_reduce, (input, index, src),
                 (d, reduce))


@public(inplace=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Out-of-place scatter that adds: ``out[index[i][j]][j] += src[i][j]``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).scatter_add(0, torch.tensor([1, 1]), torch.tensor([1., 2.]))
        tensor([0., 3., 0.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    _check_index(index, "scatter_add", input, d, src)
    return apply(T.scatter_add, (input, index, src), (d, "add"))


@public
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Rows (or slices along ``dim``) picked by ``index``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).index_select(0, torch.tensor([1]))
        tensor([[3., 4.]])
    """
    d = _wrap_dim(dim, input._data.ndim)
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index_range(index, input._data.shape[d] if input._data.ndim else 1,
                       lambda i, n: IndexError(
                           f"index out of range in self (index_select: index {i} along dim "
                           f"{dim} of a tensor of shape {list(input.shape)}; valid indices are "
                           f"0 to {n - 1}, no negative ones: wrap them first, e.g. index % {n})"))
    return apply(T.index_select, (input, index), d)


def _check_index_range(index: Tensor, n: int, error) -> None:
    """Raise ``error(i, n)`` for an index ``i`` outside [0, n) (PyTorch's wording and
    range: index_select and index_add take no negative index, where NumPy would wrap it or
    say "axis ... is out of bounds")."""
    idx = values_to_check(index._data)
    if idx.size and idx.dtype.kind in "iu":
        lo, hi = idx.min(), idx.max()
        if lo < 0 or hi >= n:
            raise error(int(lo if lo < 0 else hi), n)


@public(inplace=True)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Number = 1) -> Tensor:
    """Out-of-place ``input[index] += alpha * source`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_add(0, torch.tensor([0, 0]), torch.ones(2))
        tensor([2., 0., 0.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    _check_index_range(index, input._data.shape[d] if input._data.ndim else 1,
                       lambda i, n: IndexError(
                           f"index out of range in self (index_add: index {i}; indices must "
                           f"lie in [0, {n - 1}], no negative ones: wrap them first, e.g. "
                           f"index % {n})") if input._data.ndim <= 1 else RuntimeError(
                           f"index {i} is out of bounds for dimension {d} with size {n} "
                           f"(index_add: every index must lie in [0, {n - 1}])"))
    return apply(T.index_add, (input, index, source), (d, alpha))


@public(inplace=True, autocast=PROMOTE)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Out-of-place ``input[..., index, ...] = source`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([5., 7.]))
        tensor([7., 0., 5.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor) or index._data.dtype != np.int64 or index._data.ndim > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 and be a LongTensor "
                         f"(got {type(index).__name__}"
                         f"{'' if not isinstance(index, Tensor) else ' ' + str(index.dtype)}; "
                         "pass a 1-D int64 tensor, e.g. torch.tensor([0, 2]))")
    _check_index_copy(input, d, index, source)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype} and (source) {source.dtype}")
    key = norm_key((slice(None),) * d + (index.reshape(-1),))
    src = source if source._data.ndim == input._data.ndim or index._data.ndim else \
        source.unsqueeze(d)
    return apply(T.index_put_setitem, (input, src), (key, False))


@public(inplace=True)
@per_element_under_vmap
def index_fill(input: Tensor, dim: int, index: Tensor, value: Tensor | Number) -> Tensor:
    """Out-of-place ``input[..., index, ...] = value`` along ``dim`` (``value``: a number or
    a 0-d tensor, which then gets the gradient of the filled positions).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).index_fill(1, torch.tensor([0, 2]), 5.)
        tensor([[5., 0., 5.],
                [5., 0., 5.]])
    """
    vt = isinstance(value, Tensor)
    if vt and value._data.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    int_dim = dim.__class__ is int or isinstance(dim, np.integer)
    number = vt or _is_number(value) or value.__class__ is complex
    if not (isinstance(index, Tensor) and int_dim and number):
        got = ", ".join(type(a).__name__ for a in (dim, index, value))
        raise TypeError(f"index_fill() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n * (int dim, Tensor index, Tensor value)"
                        "\n * (int dim, Tensor index, Number value)")
    if index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index. (pass an int64 "
                         "tensor, e.g. torch.tensor([0, 2]) or index.long())")
    if not vt and value.__class__ is complex and not input.is_complex():
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    nd = input._data.ndim
    d = _wrap_dim(int(dim), nd)
    if index._data.ndim > 1:
        raise RuntimeError(f"Index has to be a vector/scalar (got an index of shape "
                           f"{list(index.shape)}: flatten it first)")
    raw = index._data.reshape(-1)
    idx = raw
    if raw.size:
        size = input._data.shape[d] if nd else 1
        lo, hi = raw.min(), raw.max()
        if lo < -size or hi >= size:
            bad = int(raw[(raw < -size) | (raw >= size)][0])
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size} "
                             f"(index_fill takes indices in [{-size}, {size - 1}])")
        if lo < 0:
            idx = np.where(raw < 0, raw + size, raw)
    if vt:
        return apply(T.index_fill_tensor, (input, value), (d, idx, raw))
    return apply(T.index_fill, (input,), (d, idx, raw, value))


@public(inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    """``value`` where ``mask`` is True, ``input`` elsewhere.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(3).masked_fill(torch.tensor([True, False, True]), 0.)
        tensor([0., 1., 0.])
    """
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_legacy_name(mask.dtype).lower()}")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
    if mask._data.shape != input._data.shape:
        broadcast_checked("masked_fill", ("mask", "input"), (mask._data.shape, input._data.shape))
    if isinstance(value, Tensor):
        return apply(T.masked_fill_tensor, (input, value), (mask,))
    return apply(T.masked_fill, (input,), (mask, np.asarray(value, dtype=input._data.dtype)))


@public
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` is True, as a 1-D tensor.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).masked_select(torch.tensor([True, False, True]))
        tensor([1., 3.])
    """
    if mask._data.shape != input._data.shape:
        broadcast_checked("masked_select", ("mask", "input"),
                          (mask._data.shape, input._data.shape))
    return apply(T.masked_select, (input,), (mask,))


@public
@per_element_under_vmap
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the other dims).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[10., 30.], [40., 20.]])
        >>> torch.take_along_dim(x, x.argmax(1, keepdim=True), dim=1)
        tensor([[30.],
                [40.]])
    """
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim)
    si, sx = list(indices.shape), list(input.shape)
    si[d] = sx[d] = 1
    b = np.broadcast_shapes(tuple(si), tuple(sx))
    xs = list(b)
    xs[d] = input.shape[d]
    ishp = list(b)
    ishp[d] = indices.shape[d]
    return gather(expand(input, xs), d, _make(np.ascontiguousarray(
        np.broadcast_to(indices._data, ishp))))


@public
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index`` (negative indices count from
    the end), in ``index``'s shape.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).take(torch.tensor([0, -1]))
        tensor([1., 4.])
    """
    if isinstance(index, Tensor) and index._data.size:
        n = input._data.size
        if not n:
            raise IndexError("take(): tried to take from an empty tensor (the input has no "
                             "elements)")
        idx = values_to_check(index._data)
        if idx.dtype.kind in "iu" and (idx.min() < -n or idx.max() >= n):
            bad = int(idx[(idx < -n) | (idx >= n)].flat[0])
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             f"elements. (take indexes the flattened input of shape "
                             f"{list(input.shape)}: indices must lie in [{-n}, {n - 1}])")
    return input.reshape(-1)[index]
