"""Shape and view functions: ``view``/``reshape``, ``squeeze``, ``permute``, ``expand``,
``cat``/``stack``/``split``, ``narrow``/``select``/``diagonal``, ``repeat``, ``flip``,
``roll``, ``tril``/``triu``; ``sum_to`` (undoing broadcasting) is in ops/records/helpers.py.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(6.).view(2, 3)
    >>> x.t().shape, torch.cat([x, x]).shape
    (torch.Size([3, 2]), torch.Size([4, 3]))
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._core.hints import Shape, ShapeLike
from .._core.size import Size
from .._graph.forward_state import FW as _FW
from .._graph.forward_state import fw_op as _fw_op
from .._tensor.tensor import _LEGACY_NAMES, Tensor, _make, _wrap_dim, result_type, track_view
from ..ops.argcheck import broadcast_checked
from ..ops.batch_rules import per_element_under_vmap
from ..ops.dispatch import _mismatch, apply, view_apply
from ..ops.op import record
from ..ops.public import FP32, alias, public
from ..ops.records import table as T
from ..ops.records.helpers import sum_to
from .arguments import _dims, _py_abs, _py_max, _py_sum
from .conversion import _legacy_type_str, clone
from .creation import zeros

# ----------------------------------------------------------------------------------
# shape and view ops


def _shape_arg(shape):
    if len(shape) == 1 and shape[0].__class__ in (tuple, list, Size):
        shape = shape[0]
    for s in shape:
        if s.__class__ is not int:
            return tuple(int(s) for s in shape)
    return tuple(shape)


def _infer_shape(shape, numel: int, orig):
    known = 1
    neg = -1
    for i, s in enumerate(shape):
        if s == -1:
            if neg >= 0:
                raise RuntimeError("only one dimension can be inferred")
            neg = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)} "
                               "(sizes are non-negative, or -1 for the one inferred)")
        else:
            known *= s
    if neg >= 0:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[:neg] + (numel // known,) + shape[neg + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel} "
                           f"(input shape {list(orig)})")
    return shape


@public
def view(input: Tensor, *shape: int | Sequence[int] | D.dtype) -> Tensor:
    """The same data seen with a new shape (no copy; see ``reshape`` otherwise).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.).view(2, 3).shape
        torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _make(input._data.view(shape[0].np))
    shp = _infer_shape(_shape_arg(shape), input._data.size, input._data.shape)
    try:
        return view_apply(T.view, input, shp)
    except (ValueError, AttributeError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
            f"(input shape {list(input.shape)}, stride {list(input.stride())}, asked for "
            f"{list(shp)})") from None


@public
def reshape(input: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """A tensor with the same data and a new shape (a view when possible).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6).reshape(3, -1).shape
        torch.Size([3, 2])
    """
    shp = _infer_shape(_shape_arg(shape), input._data.size, input._data.shape)
    # PyTorch: a view of a contiguous tensor (ViewBackward0), an alias with new strides of
    # another one when its strides allow (ReshapeAliasBackward0), else a contiguous clone
    # viewed (CloneBackward0, then UnsafeViewBackward0)
    try:
        return view_apply(T.view if input._data.flags.c_contiguous else T.reshape_alias,
                          input, shp)
    except (ValueError, AttributeError):
        return apply(T.unsafe_view, (clone(input),), shp)


@public
def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, other.shape)


@public
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, other.shape)


@public
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).flatten(1).shape
        torch.Size([2, 12])
    """
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, 1)
    s = _wrap_dim(start_dim, nd)
    e = _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:  # nothing to merge: PyTorch returns the tensor itself (same object)
        return input
    shp = input._data.shape
    new = shp[:s] + (int(np.prod(shp[s:e + 1], dtype=np.int64)),) + shp[e + 1:]
    return reshape(input, new)


@public
def unflatten(input: Tensor, dim: int, sizes: Shape) -> Tensor:
    """Split dim ``dim`` into ``sizes``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 12).unflatten(1, (3, 4)).shape
        torch.Size([2, 3, 4])
    """
    d = _wrap_dim(dim, input._data.ndim)
    shp = input._data.shape
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty (the sizes dim "
                           f"{d} becomes, e.g. ({shp[d]},))")
    try:  # PyTorch's handle_unflatten_exception rewords infer_size's errors
        sizes = _infer_shape(sizes, shp[d], shp[d:d + 1])
    except RuntimeError as e:
        if "is invalid for input of size" in str(e):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                               f"size of dim {d} ({shp[d]}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


@public
def squeeze(input: Tensor, dim: ShapeLike | None = None) -> Tensor:
    """Remove dims of size 1 (all, or those in ``dim``).

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(1, 2, 1).squeeze().shape
        torch.Size([2])
    """
    shp = input._data.shape
    if dim is None:
        return view_apply(T.squeeze_all, input, tuple(i for i, s in enumerate(shp) if s == 1))
    axes = tuple(d for d in (_dims(dim, len(shp)) or ()) if shp[d] == 1) if shp else ()
    # one dim or a tuple of dims: PyTorch's SqueezeBackward1 or SqueezeBackward2
    return view_apply(T.squeeze_dims if isinstance(dim, (tuple, list)) else T.squeeze, input,
                      axes)


@public
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(3).unsqueeze(0).shape
        torch.Size([1, 3])
    """
    return view_apply(T.unsqueeze, input, _wrap_dim(dim, input._data.ndim + 1))


@public
def permute(input: Tensor, *dims: int | Sequence[int]) -> Tensor:
    """Reorder dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).permute(2, 0, 1).shape
        torch.Size([4, 2, 3])
    """
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims" (pass '
                        'the new order of the dims, e.g. x.permute(1, 0), or () for a 0-d '
                        'tensor)')
    dims = _shape_arg(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(wrapped)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed. (got dims {tuple(dims)} "
                           f"for a {nd}-d tensor, i.e. {wrapped} after wrapping negative dims; "
                           f"name each dim 0..{nd - 1} exactly once)")
    return view_apply(T.permute, input, wrapped)


@public
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).transpose(0, 1).shape
        torch.Size([3, 2])
    """
    nd = input._data.ndim
    return view_apply(T.transpose, input, (_wrap_dim(dim0, nd), _wrap_dim(dim1, nd)))


swapaxes = alias("swapaxes", transpose)
swapdims = alias("swapdims", transpose)


@public
def t(input: Tensor) -> Tensor:
    """Transpose of a tensor with at most 2 dims.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3).t().shape
        torch.Size([3, 2])
    """
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return view_apply(T.t_op, input, None)


@public
def movedim(input: Tensor, source: ShapeLike, destination: ShapeLike) -> Tensor:
    """Move dims from ``source`` positions to ``destination`` positions.

    Example:
        >>> import retrograd as torch
        >>> torch.zeros(2, 3, 4).movedim(0, -1).shape
        torch.Size([3, 4, 2])
    """
    nd = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_wrap_dim(s, nd) for s in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = alias("moveaxis", movedim)


@public
def expand(input: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """A broadcast view with ``sizes`` (-1 keeps a dim); no copy.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1.], [2.]]).expand(2, 3)
        tensor([[1., 1., 1.],
                [2., 2., 2.]])
    """
    sizes = _shape_arg(sizes)
    shp = input._data.shape
    _check_expand(input, shp, sizes)
    lead = len(sizes) - len(shp)
    target = tuple(shp[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return view_apply(T.expand, input, target)


def _check_expand(t: Tensor, shp: tuple, sizes) -> None:
    """PyTorch's checks (and messages) for expanding ``t``, of shape ``shp``, to ``sizes``:
    dims are matched from the right, the first mismatch from the right is reported."""
    nd = len(sizes)
    if nd < len(shp):
        raise RuntimeError(f"expand({_legacy_type_str(t)}{{{list(shp)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({nd}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shp)})")
    lead = nd - len(shp)
    for i in range(nd - 1, -1, -1):
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        cur = shp[i - lead]
        if s != cur and s != -1 and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shp)}")


@public
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other.shape)


@public
def broadcast_to(input: Tensor, size: Shape) -> Tensor:
    """``input`` broadcast to ``size`` (a view).

    Example:
        >>> import retrograd as torch
        >>> torch.broadcast_to(torch.tensor([1., 2.]), (3, 2)).shape
        torch.Size([3, 2])
    """
    return expand(input, tuple(size))


@public(method=False)
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = broadcast_checked("broadcast_tensors", tuple(f"tensors[{i}]" for i in
                                                         range(len(tensors))),
                              tuple(t._data.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


@public(method=False)
def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    shape: tuple = ()
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        try:
            shape = np.broadcast_shapes(shape, s)
        except ValueError:
            n = max(len(shape), len(s))
            want = (1,) * (n - len(shape)) + tuple(shape)
            a, b, k = _mismatch(want, s)
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {b} at {k - n}! Mismatching "
                f"argument at index {i} had {s}; but expected shape should be broadcastable to "
                f"{list(want)} (line the dimensions up from the right; each pair must be equal "
                "or one of them 1)") from None
    return Size(shape)


@public
def sum_to_size(input: Tensor, *size: int | Sequence[int]) -> Tensor:
    """Sum ``input`` down to ``size`` (undoes broadcasting).

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
    """
    size = _shape_arg(size)
    return sum_to(input, size)


@public
def repeat(input: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """Tile the tensor ``sizes`` times along each dim (a copy).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2.]).repeat(2)
        tensor([1., 2., 1., 2.])
    """
    sizes = _shape_arg(sizes)
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in sizes):
        padded = (1,) * (len(sizes) - input._data.ndim) + input._data.shape
        target = [r * n for r, n in zip(sizes, padded)]
        bad = next(t for t in target if t < 0) if any(t < 0 for t in target) else min(sizes)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {target} "
                           f"(repeat counts must be non-negative, got {list(sizes)})")
    return apply(T.repeat, (input,), sizes)


@public
def tile(input: Tensor, dims: Shape) -> Tensor:
    """Like ``repeat``; missing leading dims count as 1.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1., 2.]]).tile((2,)).shape
        torch.Size([1, 4])
    """
    dims = tuple(dims)
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


@public
def flip(input: Tensor, dims: ShapeLike) -> Tensor:
    """Reverse the order of elements along ``dims``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).flip(0)
        tensor([3., 2., 1.])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return apply(T.flip, (input,), tuple(_wrap_dim(d, input._data.ndim) for d in dims))


@public
def fliplr(input: Tensor) -> Tensor:
    return flip(input, 1)


@public
def flipud(input: Tensor) -> Tensor:
    return flip(input, 0)


@public
def roll(input: Tensor, shifts: ShapeLike, dims: ShapeLike | None = None) -> Tensor:
    """Rotate elements along ``dims`` by ``shifts``.

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([1., 2., 3.]).roll(1)
        tensor([3., 1., 2.])
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required (roll takes one shift per dim, or one shift "
                           "of the flattened tensor when no dims are given)")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)} (give one shift per dim, or a single shift without "
                           "dims to roll the flattened tensor)")
    # no dims: the flattened tensor rolls (one RollBackward0 node, as in PyTorch)
    return apply(T.roll, (input,), (shifts, tuple(_wrap_dim(d, input.ndim) for d in dims)
                                    if dims else None))


def _promote_list(tensors, fn_name):
    tensors = list(tensors)
    if not tensors:  # PyTorch's types and wording differ between cat and stack
        if fn_name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList (got an empty sequence; "
                               "check that the list of tensors to stack was filled)")
        raise ValueError(f"torch.{fn_name}(): expected a non-empty list of Tensors (got an "
                         "empty sequence; check that the list of tensors was filled)")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn_name}(): argument 'tensors' must be a sequence of Tensors, but "
                            f"element {i} is {type(x).__name__}")
    rdt = result_type(*tensors) if len(tensors) > 1 else tensors[0].dtype
    return [x if x.dtype == rdt else x.to(rdt) for x in tensors]


@public(method=False, autocast=T.cat)
def cat(tensors: tuple[Tensor, ...] | list[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim.

    Example:
        >>> import retrograd as torch
        >>> torch.cat([torch.zeros(2, 1), torch.ones(2, 2)], dim=1).shape
        torch.Size([2, 3])
    """
    ts = _promote_list(tensors, "cat")
    # legacy empty 1-D tensors are skipped (and get an empty gradient), as in PyTorch
    legacy = [x._data.ndim == 1 and x._data.size == 0 for x in ts]
    if builtins.all(legacy):
        legacy[0] = False
    first = ts[legacy.index(False)]
    nd = first._data.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, nd)
    ref = first._data.shape
    for k, x in enumerate(ts):
        if legacy[k]:
            continue
        s = x._data.shape
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{len(s)}")
        for j in range(nd):
            if j != d and s[j] != ref[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref[j]} but got size {s[j]} for tensor number {k} in the list.")
    sizes = tuple(None if e else x._data.shape[d] for x, e in zip(ts, legacy))
    return apply(T.cat, ts, (d, sizes))


concat = alias("concat", cat, method=False)
concatenate = alias("concatenate", cat, method=False)


@public(method=False, autocast=T.stack)
def stack(tensors: tuple[Tensor, ...] | list[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along a new dim.

    Example:
        >>> import retrograd as torch
        >>> torch.stack([torch.zeros(3), torch.ones(3)]).shape
        torch.Size([2, 3])
    """
    ts = _promote_list(tensors, "stack")
    ref = ts[0]._data.shape
    for k, x in enumerate(ts):
        if x._data.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} "
                               f"at entry 0 and {list(x._data.shape)} at entry {k}")
    d = _wrap_dim(dim, len(ref) + 1)
    return apply(T.stack, ts, d)


@public(method=False)
def hstack(tensors: tuple[Tensor, ...] | list[Tensor]) -> Tensor:
    ts = list(tensors)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@public(method=False)
def vstack(tensors: tuple[Tensor, ...] | list[Tensor]) -> Tensor:
    return cat([x.reshape(1, -1) if x.ndim == 1 else x for x in tensors], 0)


def _pieces(input, d, bounds, kind, sizes):
    """Multi-output view op (split/unbind): pieces share memory with ``input``."""
    outs = []
    base = input._base if input._base is not None else input
    ver = input._vc[0]
    meta = "multi" if STATE.enabled else "no_grad"  # check_view_rebase (ops/dispatch.py)
    for lo, hi in bounds:
        key = (slice(None),) * d + ((lo if kind == "unbind" else slice(lo, hi)),)
        arr = T.select.fwd(input._data, key)  # a 0-d piece too is a view, not a copy
        t = _make(arr)
        t._vc = input._vc
        t._base = base
        t._vfn = (input._vfn, T.slice_op if kind != "unbind" else T.select, key)
        t._vmeta = meta
        if ver:
            t._vver = ver
        if not input._rg:
            track_view(base, t)
        elif not STATE.enabled:
            t._rg = True  # as view_apply: a view of a tensor that requires grad does too
        outs.append(t)
    if STATE.enabled and input._rg:
        op = T.unbind if kind == "unbind" else T.split if kind == "split" else \
            T.split_with_sizes
        record(op, outs[0] if len(outs) == 1 else tuple(outs), (input,), (kind, d, sizes),
               nout=len(outs))
    if _FW.active:  # forward-mode AD: the pieces' tangents are the same pieces of the tangent
        _fw_op(T.unbind if kind == "unbind" else T.split, (input,), tuple(outs),
              (kind, d, sizes), 0)
    return tuple(outs)


@public
@per_element_under_vmap
def split(tensor: Tensor, split_size_or_sections: ShapeLike, dim: int = 0
          ) -> tuple[Tensor, ...]:
    """Split into pieces of a given size (an int) or sizes (a list); views.

    Example:
        >>> import retrograd as torch
        >>> [p.shape[0] for p in torch.arange(5).split(2)]
        [2, 2, 1]
    """
    if not tensor._data.ndim:
        raise RuntimeError("split expects at least a 1-dimensional tensor (got a 0-d one)")
    d = _wrap_dim(dim, tensor._data.ndim)
    sizes, bounds = split_bounds(tensor._data.shape[d], split_size_or_sections, d)
    kind = "split" if isinstance(split_size_or_sections, (int, np.integer)) else "sizes"
    return _pieces(tensor, d, bounds, kind, tuple(sizes))


def split_bounds(n: int, split_size_or_sections, d: int) -> tuple[list, list]:
    """The sizes and the (start, stop) bounds of split's pieces of a dim of size ``n``
    (``d``: the dim, for the message); shared by split and unsafe_split."""
    if isinstance(split_size_or_sections, (int, np.integer)):
        s = int(split_size_or_sections)
        if s <= 0 and n > 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        # one empty piece of a size-0 dim, as PyTorch (max(ceil(n / s), 1) pieces)
        sizes = [s] * (n // s) + ([n % s] if n % s else []) if s and n else [0]
    else:
        sizes = [int(x) for x in split_size_or_sections]
        if _py_sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got split_sizes="
                               f"{sizes}")
    bounds, off = [], 0
    for s in sizes:
        bounds.append((off, off + s))
        off += s
    return sizes, bounds


@public
def tensor_split(input: Tensor, indices_or_sections: Tensor | int | Sequence[int], dim: int = 0
                 ) -> tuple[Tensor, ...]:
    """Views of ``input`` along ``dim``: ``sections`` nearly equal pieces (the first
    ``n % sections`` one longer), or the pieces between ``indices``, each
    ``input[..., start:end]`` as a Python slice (negative indices count from the end; an
    end before its start gives an empty piece), as PyTorch's (SliceBackward0 nodes).

    Example:
        >>> import retrograd as torch
        >>> [t.tolist() for t in torch.arange(5).tensor_split([1, -1])]
        [[0], [1, 2, 3], [4]]
    """
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, nd)
    n = input._data.shape[d]
    ios = _tensor_split_arg(indices_or_sections)
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios} (the "
                               "number of pieces; to cut at positions pass a list of indices)")
        q, r = divmod(n, ios)
        bounds, start = [], 0
        for i in range(ios):
            end = start + q + (1 if i < r else 0)
            bounds.append((start, end))
            start = end
    else:
        cuts = [0] + [int(i) for i in ios] + [None]
        bounds = list(zip(cuts[:-1], cuts[1:]))
    lead = (slice(None),) * d
    return tuple(view_apply(T.slice_op, input, lead + (slice(a, b),)) for a, b in bounds)


def _tensor_split_arg(ios):
    """tensor_split's sections (an int) or indices (a sequence), checked as PyTorch does
    for a tensor."""
    if not isinstance(ios, Tensor):
        return ios if isinstance(ios, (int, np.integer)) and not isinstance(ios, bool) else \
            list(ios)
    if ios._data.dtype != np.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of "
                           f"long, but got {_LEGACY_NAMES[ios.dtype.name]} (pass "
                           f"an int64 tensor, e.g. indices.long())")
    if ios._data.ndim > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                           f"zero-dimensional or one-dimensional tensor, but got a tensor with "
                           f"{ios._data.ndim} dims")
    return int(ios._data) if ios._data.ndim == 0 else ios._data.tolist()


@public
@per_element_under_vmap
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` pieces (the last may be smaller).

    Example:
        >>> import retrograd as torch
        >>> len(torch.arange(6).chunk(3))
        3
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks} (the "
                           "number of pieces; for pieces of a given size use split(size))")
    if not input._data.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor (got a 0-d one)")
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    if n == 0:  # PyTorch: ``chunks`` empty pieces of a size-0 dim
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@public
@per_element_under_vmap
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Slices along ``dim`` as a tuple of views.

    Example:
        >>> import retrograd as torch
        >>> a, b = torch.tensor([[1., 2.], [3., 4.]]).unbind(0); b
        tensor([3., 4.])
    """
    d = _wrap_dim(dim, input._data.ndim)
    if not input._data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions (unbind "
                         "takes a tensor of at least 1 dim)")
    n = input._data.shape[d]
    return _pieces(input, d, [(i, i + 1) for i in range(n)], "unbind", None)


@public
def narrow(input: Tensor, dim: int, start: Tensor | int, length: int) -> Tensor:
    """A view of ``length`` elements from ``start`` along ``dim``.

    Example:
        >>> import retrograd as torch
        >>> torch.arange(5).narrow(0, 1, 2)
        tensor([1, 2])
    """
    d = _wrap_dim(dim, input._data.ndim)
    start = int(start)
    n = input._data.shape[d]
    if start < 0:
        start += n
    if start < 0 or start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return view_apply(T.slice_op, input, key)


@public
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along ``dim`` (a view, one dim fewer).

    Example:
        >>> import retrograd as torch
        >>> torch.tensor([[1, 2], [3, 4]]).select(1, 0)
        tensor([1, 3])
    """
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    key = (slice(None),) * d + (index,)
    return view_apply(T.select, input, key)


@public
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the ``dim1``/``dim2`` planes, as a view (it shares memory).

    Example:
        >>> import retrograd as torch
        >>> x = torch.arange(9.).reshape(3, 3)
        >>> x.diagonal(), x.diagonal(1)
        (tensor([0., 4., 8.]), tensor([1., 5.]))
    """
    nd = input._data.ndim
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2} (a tensor "
                           f"of shape {list(input.shape)}: pick two different dims)")
    return view_apply(T.diagonal, input, (int(offset), d1, d2))


@public(function=False)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """All slices of length ``size`` along ``dimension``, ``step`` apart, as a view with a new
    last dim (``Tensor.unfold``).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(5.).unfold(0, 2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    nd = input._data.ndim
    d = _wrap_dim(dimension, nd)
    n = input._data.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}"
                           f" (unfold of a tensor of shape {list(input.shape)}: use size <= {n})")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return view_apply(T.unfold, input, (d, int(size), int(step)))


@public
def as_strided(input: Tensor, size: Shape, stride: Shape,
               storage_offset: int | None = None) -> Tensor:
    """A view of the memory under ``input`` with the given sizes and element strides, from
    element ``storage_offset`` of the storage on (default: where ``input`` starts).

    Example:
        >>> import retrograd as torch
        >>> torch.arange(6.).as_strided((2, 2), (1, 2))
        tensor([[0., 2.],
                [1., 3.]])
    """
    base = input._base if input._base is not None else input
    storage = base._data
    order = None
    if not storage.flags.c_contiguous:  # dense in another order (transposed, channels_last)?
        order = tuple(sorted(range(storage.ndim), key=lambda d: -storage.strides[d]))
        if not storage.transpose(order).flags.c_contiguous:
            raise RuntimeError(f"as_strided: the memory under this tensor (shape "
                               f"{list(base.shape)}) is not one contiguous block in "
                               "retrograd; call .contiguous() first and take the view of that")
    start = (input.data_ptr() - base.data_ptr()) // storage.itemsize
    offset = start if storage_offset is None else int(storage_offset)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for "
                           f"{len(size)} sizes")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)} (take the view with positive strides, "
                           "then .flip() the dims that should run backwards)")
    need = offset + builtins.sum((n - 1) * st for n, st in zip(size, stride)) + 1 \
        if builtins.all(size) else 0
    if need > storage.size or offset < 0:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {storage.itemsize} requiring a "
                           f"storage size of {need * storage.itemsize} are out of bounds for "
                           f"storage of size {storage.size * storage.itemsize}")
    if order is None and input._data.flags.c_contiguous and offset >= start and \
            need - start <= input._data.size:  # within input's own block: a view of input
        return view_apply(T.as_strided, input, (size, stride, offset - start))
    return view_apply(T.as_strided, base, (size, stride, offset) if order is None else
                      (size, stride, offset, order))


@public
def diag(input: Tensor, diagonal_: int = 0) -> Tensor:
    if input.ndim == 1:
        n = input.shape[0] + _py_abs(diagonal_)
        z = zeros(n, n, dtype=input.dtype)
        i = np.arange(input.shape[0])
        r, c = i + _py_max(0, -diagonal_), i + _py_max(0, diagonal_)
        return z.index_put((_make(r), _make(c)), input)
    return diagonal(input, diagonal_)


@public(autocast=FP32)
def trace(input: Tensor) -> Tensor:
    return diagonal(input).sum()


def _triangle(op, name: str, input, diagonal: int) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions (got shape "
                           f"{list(input.shape)}: {name} keeps a triangle of the last two "
                           "dims; unsqueeze a vector into a matrix first)")
    return apply(op, (input,), int(diagonal))


@public(inplace=True)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below ``diagonal``), zeros above.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 2).tril()
        tensor([[1., 0.],
                [1., 1.]])
    """
    return _triangle(T.tril, "tril", input, diagonal)


@public(inplace=True)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above ``diagonal``), zeros below.

    Example:
        >>> import retrograd as torch
        >>> torch.ones(2, 2).triu(1)
        tensor([[0., 1.],
                [0., 0.]])
    """
    return _triangle(T.triu, "triu", input, diagonal)
