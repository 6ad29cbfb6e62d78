"""``torch.layout`` and ``torch.memory_format``: the singleton objects PyTorch code
passes around (``torch.strided``, ``torch.contiguous_format``, ``torch.channels_last``...).

Every retrograd tensor is dense (``layout`` has one value in use, ``strided``) and has
the strides PyTorch would give it where a ``memory_format`` decides them (Note [Memory
formats]): copies keep their input's layout, ``channels_last`` puts the channels
innermost.

Example:
    >>> import retrograd as torch
    >>> torch.ones(2).layout, torch.channels_last
    (torch.strided, torch.channels_last)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["layout", "memory_format", "strided", "contiguous_format", "channels_last",
           "channels_last_3d", "preserve_format", "memory_format_strides", "like_strides",
           "is_contiguous_as", "suggest_memory_format", "check_format_rank",
           "empty_strided_array", "relayout", "layout_copy", "cast_copy", "grad_obeys_layout",
           "ti_permutation", "element_strides", "target_strides",
           "grad_array_like"]


class _Named:
    """An interned value printed as ``torch.<name>`` (shared by layout and memory_format)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):  # pickles as the module-level singleton
        return self._name


class layout(_Named):
    """How a tensor's elements are laid out; retrograd tensors are all ``strided``."""

    __slots__ = ()


class memory_format(_Named):
    """The order of a tensor's dimensions in memory (Note [Memory formats])."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


# Note [Memory formats]
# PyTorch decides a new tensor's strides in three ways, and retrograd follows each:
# - ``preserve_format`` (the default of clone, ``to`` and the ``*_like`` factories, as
#   empty_like decides): an input that is non-overlapping and dense keeps its strides
#   exactly (a transposed tensor's clone is transposed too); any other (a slice with
#   gaps, an expanded tensor) gets dense strides in the order of its own strides, sorted
#   as TensorIterator sorts them (infer_dense_strides: a stride of 0 is no evidence and
#   keeps its dim where a contiguous tensor has it; equal strides put the smaller size
#   inside);
# - ``contiguous_format``: row-major;
# - ``channels_last`` (rank 4, NCHW indexed, NHWC in memory) and ``channels_last_3d``
#   (rank 5, NDHWC): the channels innermost, with the sizes as they are (PyTorch's
#   strides for an empty channels-last tensor have zeros where a size is 0).
# NumPy's own order='K' agrees on dense inputs but sends a stride of 0 innermost, so
# copies of non-contiguous arrays go through ``relayout``. ``is_contiguous_as`` is
# PyTorch's is_contiguous(memory_format) (size-1 dims are free), and
# ``suggest_memory_format`` its guess from strides (what ``to(memory_format=...)``
# compares with before copying). Under vmap the physical array has its batch dims first:
# they stay outermost.
_FORMAT_RANK = {"channels_last": 4, "channels_last_3d": 5}


def check_format_rank(fmt, ndim: int) -> None:
    """Raise PyTorch's error when ``fmt`` (a memory_format or None) needs another rank.

    Example:
        >>> check_format_rank(channels_last, 4)
    """
    need = None if fmt is None else _FORMAT_RANK.get(fmt._name)
    if need is not None and ndim != need:
        raise RuntimeError(f"required rank {need} tensor to use {fmt._name} format (the "
                           f"tensor has {ndim} dims; {fmt._name} is for "
                           f"{'NCHW' if need == 4 else 'NCDHW'} tensors: pass "
                           "memory_format=torch.contiguous_format for others)")


def memory_format_strides(shape: tuple, fmt) -> tuple:
    """Element strides of a new tensor of ``shape`` in ``fmt`` (contiguous_format or a
    channels-last format; dims before the last 4 or 5 are batch dims, outermost).

    Example:
        >>> memory_format_strides((2, 3, 4, 5), channels_last)
        (60, 1, 15, 3)
    """
    n = len(shape)
    st = [0] * n
    acc = 1
    if fmt is channels_last or fmt is channels_last_3d:
        k = 4 if fmt is channels_last else 5
        for d in (n - k + d for d in _channels_last_order(k)):
            st[d] = acc
            acc *= shape[d]
        for d in range(n - k - 1, -1, -1):  # batch dims (under vmap)
            st[d] = acc
            acc *= max(shape[d], 1)
        return tuple(st)
    for d in range(n - 1, -1, -1):
        st[d] = acc
        acc *= max(shape[d], 1)
    return tuple(st)


def element_strides(a) -> tuple:
    """An array's strides in elements, as PyTorch reports a tensor's.

    Example:
        >>> element_strides(np.zeros((2, 3), np.float32).T)
        (1, 3)
    """
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


# Note [View strides]
# A view's strides are forced by memory on every dim longer than 1, and NumPy's no-copy
# reshape and PyTorch's computeStride agree there and on whether a view exists at all.
# A dim of size 1 (or any dim of an empty tensor) may take any stride: NumPy picks its
# own, PyTorch's computeStride gives it the stride of the chunk it falls in. The choice
# shows in ``stride()``, and in PyTorch's overlap checks, which compare strides dim by
# dim (``v.view(1, 1)[::2] = g`` for a one-element stride-0 g is a full overlap there,
# a partial one with NumPy's strides: fuzz seed 904357). So a view whose shape has a 1,
# or no elements, takes computeStride's strides.
def view_strides(shape, strides, new) -> tuple | None:
    """PyTorch's computeStride: the element strides of a view of ``shape``/``strides``
    (element strides) as ``new``, or None when no view exists.

    Example:
        >>> view_strides((3, 1, 1), (0, 1, 1), (3, 1)), view_strides((2, 3), (1, 2), (6,))
        ((0, 1), None)
    """
    if not shape:
        return (1,) * len(new)
    numel = math.prod(shape)
    if numel == 0:
        if tuple(shape) == tuple(new):
            return tuple(strides)
        out = [1] * len(new)
        for d in range(len(new) - 2, -1, -1):
            out[d] = max(new[d + 1], 1) * out[d + 1]
        return tuple(out)
    out = [0] * len(new)
    view_d = len(new) - 1
    base = strides[-1]
    t_numel = v_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        t_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != t_numel * base):
            while view_d >= 0 and (v_numel < t_numel or new[view_d] == 1):
                out[view_d] = v_numel * base
                v_numel *= new[view_d]
                view_d -= 1
            if v_numel != t_numel:
                return None
            if d > 0:
                base = strides[d - 1]
                t_numel = v_numel = 1
    return tuple(out) if view_d == -1 else None


def _channels_last_order(k: int) -> list:
    """The dims of a rank-``k`` channels-last tensor (4: NCHW, 5: NCDHW), innermost first:
    C, then the spatial dims from the last, then N."""
    return [1] + list(range(k - 1, 1, -1)) + [0]


def _packed(shape: tuple, strides: tuple, dims) -> bool:
    """Do ``dims`` (innermost first) tile memory with no gap: each stride the product of
    the sizes inside it?"""
    need = 1
    for d in dims:
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def _non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    return _packed(shape, strides, sorted((d for d in range(len(shape)) if shape[d] >= 2),
                                          key=lambda d: strides[d]))


def ti_permutation(shape: tuple, strides: list, reduction: bool = False) -> list:
    """TensorIterator's order of the dims of operands of ``shape`` (innermost first):
    sorted by their element ``strides`` (one tuple per operand, the output first; the
    first operand with evidence decides), a stride of 0 being no evidence, equal strides
    putting the smaller size inside, else C order. A stable insertion sort, as its. With
    ``reduction``, the dims the output does not step along (its stride 0: the reduced
    ones) go inside first, as in a reduction's TensorIterator.

    Example:
        >>> ti_permutation((5, 4), [(1, 5)])
        [0, 1]
    """
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def after(d0: int, d1: int) -> int:  # 1: d0 goes outside d1; -1: inside; 0: no evidence
        if reduction and (strides[0][d0] == 0) != (strides[0][d1] == 0):
            return 1 if strides[0][d1] == 0 else -1
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = after(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _infer_dense_strides(shape: tuple, strides: tuple) -> tuple:
    n = len(shape)
    perm = ti_permutation(shape, [strides])
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def like_strides(shape: tuple, strides: tuple) -> tuple:
    """The element strides ``preserve_format`` gives a copy of a tensor with these
    ``strides`` (Note [Memory formats]).

    Example:
        >>> like_strides((5, 4), (1, 5)), like_strides((3, 5), (0, 1))
        ((1, 5), (5, 1))
    """
    if 0 in shape or _non_overlapping_and_dense(shape, strides):  # (an empty one: as is)
        return tuple(strides)
    return _infer_dense_strides(shape, strides)


def is_contiguous_as(shape: tuple, strides: tuple, fmt=None) -> bool:
    """PyTorch's ``is_contiguous(memory_format=fmt)`` for these sizes and element strides.

    Example:
        >>> is_contiguous_as((2, 3, 4, 5), (60, 1, 15, 3), channels_last)
        True
    """
    n = len(shape)
    if fmt is channels_last or fmt is channels_last_3d:
        k = 4 if fmt is channels_last else 5
        if n != k:
            return False
        order = _channels_last_order(k)
    else:
        if 0 in shape:
            return True
        order = range(n - 1, -1, -1)
    return _packed(shape, strides, [d for d in order if shape[d] != 1])


def _strides_like_channels_last(shape: tuple, strides: tuple) -> bool:
    # PyTorch's is_channels_last_strides_2d/3d: the channels innermost, ties (size-1
    # dims with equal strides) read as the contiguous format
    k = len(shape)
    if k not in (4, 5) or strides[1] == 0:
        return False
    low = 0
    for d in _channels_last_order(k):
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d]
        if shape[d] > 1:
            low *= shape[d]
    return True


def suggest_memory_format(shape: tuple, strides: tuple) -> memory_format:
    """PyTorch's ``suggest_memory_format``: channels_last(_3d) when the strides look so.

    Example:
        >>> suggest_memory_format((2, 3, 4, 5), (60, 1, 15, 3))
        torch.channels_last
    """
    if _strides_like_channels_last(shape, strides):
        return channels_last if len(shape) == 4 else channels_last_3d
    return contiguous_format


def empty_strided_array(shape: tuple, strides: tuple, dtype) -> np.ndarray:
    """An uninitialised array with these element ``strides`` (non-negative).

    Example:
        >>> empty_strided_array((2, 3), (1, 2), np.float32).strides
        (4, 8)
    """
    dt = np.dtype(dtype)
    if 0 in shape:
        n = 0
    else:
        n = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    buf = np.empty(n, dt)
    return np.ndarray(shape, dt, buf, 0, tuple(st * dt.itemsize for st in strides))


def target_strides(a: np.ndarray, fmt=None) -> tuple | None:
    """The element strides of a new tensor like ``a`` in ``fmt`` (None or preserve_format:
    ``a``'s layout, Note [Memory formats]), or None for row-major.

    Example:
        >>> target_strides(np.zeros((4, 5)).T), target_strides(np.zeros((4, 5)))
        ((1, 5), None)
    """
    if fmt is None or fmt is preserve_format:
        if a.flags.c_contiguous:
            return None
        return like_strides(a.shape, element_strides(a))
    if fmt is contiguous_format:
        return None
    return memory_format_strides(a.shape, fmt)


def relayout(a: np.ndarray, fmt=None, dtype=None) -> np.ndarray:
    """A copy of ``a`` (cast to ``dtype``) laid out in ``fmt``: None or preserve_format
    keep ``a``'s layout as PyTorch's copies do (Note [Memory formats]).

    Example:
        >>> relayout(np.zeros((4, 5)).T).strides
        (8, 40)
    """
    dt = a.dtype if dtype is None else np.dtype(dtype)
    strides = target_strides(a, fmt)
    if strides is None:
        return np.array(a, dt, order="C")
    out = empty_strided_array(a.shape, strides, dt)
    np.copyto(out, a, casting="unsafe")
    return out


def layout_copy(a, p=None):
    """clone's kernel: a copy of ``a`` in its own layout (``p`` None) or memory format
    ``p``.

    Example:
        >>> layout_copy(np.zeros((4, 5)).T).strides
        (8, 40)
    """
    if a.__class__ is not np.ndarray or (p is None and a.flags.c_contiguous):
        return a.copy()
    return relayout(a, p)


def cast_copy(a, p):
    """to_copy's kernel: ``a`` cast to dtype ``p`` in its own layout, or to ``p[0]`` in
    memory format ``p[1]`` when ``p`` is a pair.

    Example:
        >>> cast_copy(np.zeros((4, 5), np.float32).T, np.float64).strides
        (8, 40)
    """
    if p.__class__ is tuple:
        return relayout(a, p[1], p[0])
    if a.__class__ is not np.ndarray or a.flags.c_contiguous:
        return a.astype(p)
    return relayout(a, None, p)


# Note [Gradient layout contract]
# PyTorch's AccumulateGrad gives a leaf's first .grad the leaf's own strides when the leaf
# is non-overlapping and dense (a transposed or channels-last parameter gets a gradient
# laid out as itself, so that optimizers can treat both as flat buffers in one order),
# and row-major strides otherwise. A gradient that already has them is stored as it is
# (when nothing else sees it); any other is copied into them. Size-1 dims may differ.
def grad_obeys_layout(var: np.ndarray, g: np.ndarray) -> bool:
    """Whether gradient ``g`` may be ``var``'s first .grad as it is laid out (Note
    [Gradient layout contract]).

    Example:
        >>> v = np.zeros((3, 2)).T
        >>> grad_obeys_layout(v, np.zeros((2, 3))), grad_obeys_layout(v, np.zeros((3, 2)).T)
        (False, True)
    """
    if var.flags.c_contiguous:
        return g.flags.c_contiguous
    vs = element_strides(var)
    if not _non_overlapping_and_dense(var.shape, vs):
        return g.flags.c_contiguous
    gs = element_strides(g)
    return all(n == 1 or a == b for n, a, b in zip(var.shape, vs, gs))


def grad_array_like(var: np.ndarray, g: np.ndarray) -> np.ndarray:
    """A copy of gradient ``g`` laid out as ``var``'s first .grad must be (Note [Gradient
    layout contract]).

    Example:
        >>> grad_array_like(np.zeros((3, 2)).T, np.ones((2, 3))).strides
        (8, 16)
    """
    if not var.flags.c_contiguous:
        vs = element_strides(var)
        if _non_overlapping_and_dense(var.shape, vs):
            out = empty_strided_array(var.shape, vs, g.dtype)
            np.copyto(out, g)
            return out
    return np.array(g, order="C")
