"""The min/max family's kernels with PyTorch's signs of zero on +0/-0 ties: maximum, minimum,
fmax, fmin, clamp with tensor bounds (elementwise) and amax/amin, max()/min() (reductions).

Note [Signed zeros on ties]
+0 and -0 compare equal, so which of two tied zeros a min/max returns is its kernel's
choice, and PyTorch's CPU kernels choose differently in their vector and scalar loops
(measured with torch 2.13 under ATEN_CPU_CAPABILITY=default, avx2 and avx512; every kernel
here is registered with REGISTER_DISPATCH, so an AVX-512 machine runs the AVX2 build, and
the DEFAULT build's ``Vectorized<T>`` is 32 bytes too: the same rules on every x86-64):

* elementwise (``cpu_kernel_vec``): TensorIterator sorts the dims by the operands' strides
  and coalesces them (_core/layouts.ti_permutation); when the innermost run is contiguous
  in every operand (or one input has stride 0 there), each run is done in blocks of two
  32-byte vectors (16 float32, 8 float64, 32 float16/bfloat16), whose ``vec::maximum``
  (``_mm256_max_ps(a, b)``) returns the *second* operand on a tie, and the ``run % block``
  elements left go through the scalar loop, whose ``std::max(a, b)`` returns the *first*;
  other layouts go through the scalar loop only. From 32,769 elements the loop is split
  into ``get_num_threads()`` equal chunks (at most one per 32,768 elements), each run piece
  with its own tail. clamp(min=t, max=t) is ``minimum(maximum(x, lo), hi)`` either way;
  clamp with one tensor bound is maximum/minimum.
* fmax/fmin (``cpu_kernel``, scalar everywhere): ``std::fmax``, which keeps the first
  operand for float32/float64 and the second for bfloat16; float16 the first, except under
  ATEN_CPU_CAPABILITY=default (the second). clamp with number bounds keeps the input.
* amax/amin (``binary_kernel_reduce_vec``): a reduced run contiguous in memory goes through
  four vector accumulators of 8 float32 (4 float64, 16 float16/bfloat16) lanes in groups of
  ``4 * lanes`` elements (later wins in a lane), combined as ``max(max(acc0, acc1),
  max(acc2, acc3))`` (the second wins), then across lanes (the first wins), then the
  ``run % (4 * lanes)`` tail (the first wins); runs that are not contiguous are reduced by
  the scalar loop (the first wins), and so are the results across runs. A reduction over
  an outer dim with 32+ float32 (4 vectors of) contiguous columns takes each column group
  through the vector accumulators: the later zero of a column wins there. amax() of all
  elements above 32,768 is reduced per thread chunk, the first chunk winning.
* max()/min() of all elements (``vec::reduce_all`` on a contiguous copy): one vector
  accumulator (the later wins in a lane; the ``numel % lanes`` tail is folded into the
  first lanes), then the lanes through AVX2's shuffle tree for float32 (lanes 0-3 against
  4-7, then pairs, then neighbours; the second operand wins) or one by one into lane 0.

Only the sign of a zero result depends on this. The kernels compute with NumPy in the
order whose ties give the vector rule and recompute only the positions the scalar loop
owns (the tails); the reductions fix only results that are zero where the reduced run
holds both zeros. The common case, contiguous operands of one dtype and shape (or one of
them 0-d) up to GRAIN elements, takes ``_plain``: one NumPy call when the whole array is
a tail or has none, two when it has one (measured with timeit's process-time clock on
1000 float32 elements: 0.44 us for NumPy's maximum alone, 2.0 us with the tail written).
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._core.cpu_capability import cpu_capability
from retrograd._core.layouts import ti_permutation
from retrograd._core.threads import get_num_threads

GRAIN = 32768  # at::internal::GRAIN_SIZE
VEC_BYTES = 32  # Vectorized<T> of the AVX2 and DEFAULT builds


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def lanes(dt: np.dtype, vec_bytes: int = VEC_BYTES) -> int:
    """Elements of one ``Vectorized<T>`` (Note [Signed zeros on ties]); ``vec_bytes`` 64
    for a kernel PyTorch also builds for AVX-512, run under that capability."""
    return vec_bytes // dt.itemsize


# ---------------------------------------------------------------- NumPy's own tie choice
_NUMPY_TIES: dict = {}


def _numpy_keeps(ufunc, dt: np.dtype):
    """Which operand NumPy's ``ufunc`` returns on a +0/-0 tie for ``dt``: 0, 1, or None
    where it depends on the loop (probed once per ufunc and dtype)."""
    key = (ufunc.__name__, dt.name)
    if key not in _NUMPY_TIES:
        seen = set()
        for n in (1, 3, 8, 17, 33, 100, 1000, 5000):
            p = np.zeros(n, dt)
            m = -p
            for x, y in ((p, m), (m, p), (p[::2], m[::2]), (p, m[0]), (m, p[0]), (p[0], m)):
                r = np.signbit(np.asarray(ufunc(x, y)).astype(np.float32))
                sx = np.signbit(np.broadcast_to(x, r.shape).astype(np.float32))
                seen.add(0 if (r == sx).all() else 1 if (r != sx).all() else None)
        _NUMPY_TIES[key] = seen.pop() if len(seen) == 1 else None
    return _NUMPY_TIES[key]


def keep(ufunc, a, b, which: int):
    """``ufunc(a, b)`` (maximum, minimum, fmax, fmin) returning operand ``which`` on ties."""
    dt = np.result_type(a, b)
    if not _is_float(dt):  # integers and bools have no signed zeros
        return ufunc(a, b)
    k = _numpy_keeps(ufunc, dt)
    if k is not None:
        return ufunc(a, b) if k == which else ufunc(b, a)
    out = np.array(ufunc(a, b))  # a loop-dependent choice: repair the zeros
    z = out == 0
    if z.any():
        pick = np.broadcast_to(a if which == 0 else b, out.shape)
        other = np.broadcast_to(b if which == 0 else a, out.shape)
        out[z] = np.where(pick[z] == other[z], pick[z], out[z])
    return out


# ---------------------------------------------------------------- TensorIterator's loop
def _layout(shape: tuple, strides: list) -> tuple:
    """TensorIterator's iteration of ``shape`` for operands of element ``strides``: the
    permutation (innermost first), the size of the coalesced innermost run, and each
    operand's stride along it."""
    perm = ti_permutation(shape, strides)
    size0 = 1
    inner = [0] * len(strides)
    for d in perm:
        if shape[d] == 1:
            continue
        if size0 == 1:
            inner = [st[d] for st in strides]
        elif any(st[d] != size0 * s0 for st, s0 in zip(strides, inner)):
            break
        size0 *= shape[d]
    return perm, size0, inner


def _vectorized(inner: list) -> bool:
    """``VectorizedLoop2d``: every operand contiguous along the run, or one input of stride
    0 and the rest contiguous (the output is contiguous: it is made here)."""
    zeros = sum(1 for s in inner if s == 0)
    return all(s in (0, 1) for s in inner) and zeros <= 1


def _chunks(numel: int) -> list:
    """``at::parallel_for``'s split of ``range(numel)`` (Note [Signed zeros on ties])."""
    if numel <= GRAIN:
        return [0, numel]
    nt = get_num_threads()
    if nt == 1:
        return [0, numel]
    nt = min(nt, -(-numel // GRAIN))
    size = -(-numel // nt)
    return list(range(0, numel, size)) + [numel]


def scalar_positions(numel: int, size0: int, block: int) -> np.ndarray:
    """The flat iteration indices that ``vectorized_loop`` leaves to its scalar loop: the
    last ``len % block`` of every run piece (runs of ``size0``, cut at thread chunks)."""
    cuts = [c for c in _chunks(numel)[1:-1] if c % size0]
    r = size0 % block
    rows = numel // size0
    if rows == 1:  # one run: its pieces are the thread chunks
        bounds = [0] + cuts + [numel]
        return np.concatenate([np.arange(p1 - (p1 - p0) % block, p1, dtype=np.int64)
                               for p0, p1 in zip(bounds[:-1], bounds[1:])])
    tails = np.zeros(0, dtype=np.int64)
    if r:
        tails = (np.arange(rows, dtype=np.int64)[:, None] * size0
                 + np.arange(size0 - r, size0, dtype=np.int64)).reshape(-1)
    if not cuts:
        return tails
    cut_rows = sorted({c // size0 for c in cuts})
    starts = np.array(cut_rows, dtype=np.int64) * size0
    keep = ~np.isin(tails // size0, starts // size0)
    parts = [tails[keep]]
    for start in starts.tolist():
        bounds = [start] + [c for c in cuts if start < c < start + size0] + [start + size0]
        for p0, p1 in zip(bounds[:-1], bounds[1:]):
            parts.append(np.arange(p1 - (p1 - p0) % block, p1, dtype=np.int64))
    return np.sort(np.concatenate(parts))


def elementwise(compute, operands: list, dt: np.dtype, vec_bytes: int = VEC_BYTES):
    """Run ``compute(arrays, vector)`` as ``cpu_kernel_vec`` would over ``operands`` (NumPy
    arrays of dtype ``dt``, broadcastable; ``None`` entries skipped): with ``vector=True``
    on the vectorized blocks and ``vector=False`` on the positions of the scalar loop
    (``vec_bytes``: the width of one ``Vectorized<T>``, see ``lanes``)."""
    ops = [x for x in operands if x is not None]
    block = 2 * lanes(dt, vec_bytes)
    if all(x.shape == ops[0].shape and x.flags.c_contiguous for x in ops) and \
            ops[0].ndim == 1 and _is_float(dt) and ops[0].size >= block:
        return _contiguous(compute, operands, ops[0].size, block)  # the common case, fast
    shape = ops[0].shape
    if any(x.shape != shape for x in ops):
        shape = np.broadcast_shapes(*(x.shape for x in ops))
    numel = math.prod(shape)
    if numel < block or not _is_float(dt):
        return np.asarray(compute(operands, False))
    views = [None if x is None else np.broadcast_to(x, shape) for x in operands]
    strides = [tuple(s // dt.itemsize for s in v.strides) for v in views if v is not None]
    perm, size0, inner = _layout(shape, strides)
    if size0 < block or not _vectorized(inner):
        return compute(operands, False)
    order = perm[::-1]
    pv = [None if v is None else v.transpose(order) for v in views]
    out = np.asarray(compute(pv, True))
    lin = scalar_positions(numel, size0, block)
    if len(lin):
        idx = np.unravel_index(lin, out.shape)
        out[idx] = compute([None if v is None else v[idx] for v in pv], False)
    return out.transpose(np.argsort(order))


def _contiguous(compute, operands: list, numel: int, block: int):
    """``elementwise`` of 1-D contiguous operands: one run, tails at the thread chunks."""
    out = np.asarray(compute(operands, True))
    lin = scalar_positions(numel, numel, block)
    if len(lin):
        lo = int(lin[0])
        if len(lin) == numel - lo:  # one tail: a slice
            out[lo:] = compute([None if x is None else x[lo:] for x in operands], False)
        else:
            out[lin] = compute([None if x is None else x[lin] for x in operands], False)
    return out


_PLANS: dict = {}  # (ufunc, dtype) -> (NumPy's tie choice, block) or None: ``_plain``


def _plain(ufunc, a, b):
    """``ufunc`` (maximum or minimum) of C-contiguous operands of one dtype, of one shape or
    one of them 0-d, with at most GRAIN elements: one run, vector blocks then one tail
    (Note [Signed zeros on ties]); None where this does not apply."""
    dt = a.dtype
    if dt is not b.dtype or not (a.shape == b.shape or a.ndim == 0 or b.ndim == 0):
        return None
    key = (ufunc, dt)
    plan = _PLANS.get(key)
    if plan is None:
        if key in _PLANS or not _is_float(dt):
            return None
        k = _numpy_keeps(ufunc, dt)
        plan = _PLANS[key] = None if k is None else (k, 2 * lanes(dt))
        if plan is None:
            return None
    k, block = plan
    big = b if a.ndim == 0 else a
    n = big.size
    if n > GRAIN or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return None
    r = n % block
    if r == n:  # all in the scalar loop: the first operand on ties
        return ufunc(b, a) if k else ufunc(a, b)
    out = ufunc(a, b) if k else ufunc(b, a)  # the vector blocks: the second operand
    if r:  # the tail, in the scalar loop's order, written over the vector result
        s = slice(n - r, None)
        ta = a if a.ndim == 0 else (a if a.ndim == 1 else a.reshape(-1))[s]
        tb = b if b.ndim == 0 else (b if b.ndim == 1 else b.reshape(-1))[s]
        to = (out if out.ndim == 1 else out.reshape(-1))[s]
        if k:
            ufunc(tb, ta, out=to)
        else:
            ufunc(ta, tb, out=to)
    return out


def maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's maximum, signs of zero included (Note [Signed zeros on ties]).

    Example:
        >>> import numpy as np
        >>> np.signbit(maximum(np.float32(-0.0), np.float32(0.0)))
        np.True_
    """
    out = _plain(np.maximum, a, b)
    if out is not None:
        return out
    return elementwise(lambda x, v: keep(np.maximum, x[0], x[1], 1 if v else 0), [a, b],
                       np.result_type(a, b))


def minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's minimum, signs of zero included (Note [Signed zeros on ties])."""
    out = _plain(np.minimum, a, b)
    if out is not None:
        return out
    return elementwise(lambda x, v: keep(np.minimum, x[0], x[1], 1 if v else 0), [a, b],
                       np.result_type(a, b))


def _clamp(x: list, vector: bool):
    a, lo, hi = x
    w = 1 if vector else 0
    if lo is not None:
        a = keep(np.maximum, a, lo, w)
    if hi is not None:
        a = keep(np.minimum, a, hi, w)
    return a


def clamp(a: np.ndarray, lo, hi) -> np.ndarray:
    """clamp with tensor bounds (either may be None): ``minimum(maximum(a, lo), hi)`` with
    PyTorch's signs of zero (Note [Signed zeros on ties])."""
    return elementwise(_clamp, [a, lo, hi], a.dtype)


def fmax_keeps(dt: np.dtype) -> int:
    """The operand ``std::fmax`` keeps on a tie in PyTorch's kernel for ``dt``."""
    if dt.name == "bfloat16" or (dt.name == "float16" and cpu_capability() == "DEFAULT"):
        return 1
    return 0


def fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's fmax, signs of zero included (Note [Signed zeros on ties])."""
    return keep(np.fmax, a, b, fmax_keeps(np.result_type(a, b)))


def fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's fmin, signs of zero included (Note [Signed zeros on ties])."""
    return keep(np.fmin, a, b, fmax_keeps(np.result_type(a, b)))


# ---------------------------------------------------------------- reductions
def _pick(x: np.ndarray, big: bool, last: bool) -> np.ndarray:
    """The max (``big``) or min along the last axis of ``x`` (no NaN), taken from the first
    or the ``last`` element holding it: which zero a tie keeps."""
    m = x.max(axis=-1, keepdims=True) if big else x.min(axis=-1, keepdims=True)
    eq = x == m
    if last:
        pos = x.shape[-1] - 1 - eq[..., ::-1].argmax(axis=-1)
    else:
        pos = eq.argmax(axis=-1)
    return np.take_along_axis(x, pos[..., None], axis=-1)[..., 0]


def _vpick(a: np.ndarray, b: np.ndarray, big: bool) -> np.ndarray:
    """``vec::maximum``/``minimum`` without NaN: ``b`` on ties."""
    return np.where(a > b, a, b) if big else np.where(a < b, a, b)


def _inner_candidates(x: np.ndarray, big: bool, vl: int) -> np.ndarray:
    """``vectorized_inner_reduction`` of runs ``x[..., n]``: the value ``reduction128``
    leaves (four accumulators of ``vl`` lanes), then the tail, as the candidates the
    scalar loop reduces (first wins)."""
    n = x.shape[-1]
    count = n // (4 * vl)
    if not count:
        return x
    g = x[..., :count * 4 * vl].reshape(x.shape[:-1] + (count, 4, vl))
    acc = _pick(np.moveaxis(g, -3, -1), big, last=True)  # (..., 4, vl)
    m = _vpick(_vpick(acc[..., 0, :], acc[..., 1, :], big),
               _vpick(acc[..., 2, :], acc[..., 3, :], big), big)
    head = _pick(m, big, last=False)[..., None]
    return np.concatenate([head, x[..., count * 4 * vl:]], axis=-1)


def _reduce_perm(shape: tuple, out_st: tuple, in_st: tuple) -> list:
    """TensorIterator's dim order for a reduction (innermost first): reduced dims (output
    stride 0) inside, then by strides as ``ti_permutation``."""
    return ti_permutation(shape, [out_st, in_st], reduction=True)


def _runs(dims: list, shape: tuple, st: tuple) -> tuple:
    """The size and stride of the coalesced innermost run of ``dims`` (innermost first)."""
    size, stride = 1, 0
    for d in dims:
        if shape[d] == 1:
            continue
        if size == 1:
            stride = st[d]
        elif st[d] != size * stride:
            break
        size *= shape[d]
    return size, stride


def reduce_ties(a: np.ndarray, axes, out: np.ndarray, big: bool) -> np.ndarray:
    """amax/amin's result ``out`` (keepdims or not) of ``a`` over ``axes`` (None: all) with
    PyTorch's zero where the reduced run holds both +0 and -0 (Note [Signed zeros on
    ties]). Only zero results are looked at."""
    if not _is_float(a.dtype) or out.size == 0 or a.size == 0:
        return out
    zero = np.asarray(out == 0)
    if not zero.any():
        return out
    nd = a.ndim
    axes = tuple(range(nd)) if axes is None else tuple(d % nd for d in np.atleast_1d(axes))
    shape = a.shape
    kept = [d for d in range(nd) if d not in axes]
    out_st = [0] * nd
    acc = 1
    for d in reversed(kept):
        out_st[d] = acc
        acc *= shape[d]
    in_st = tuple(s // a.itemsize for s in a.strides)
    perm = _reduce_perm(shape, tuple(out_st), in_st)
    red = [d for d in perm if d in axes]
    kin = [d for d in perm if d not in axes]
    rows = np.nonzero(zero.reshape(-1))[0]
    x = a.transpose(kept + red[::-1]).reshape(acc, -1)[rows]
    size0, stride0 = _runs(red, shape, in_st)
    vl = lanes(a.dtype)
    numel = a.size
    if stride0 == 1 or size0 == 1:
        cuts = _chunks(numel) if len(kept) == 0 or acc == 1 else [0, numel]
        vals = _inner_all(x, size0, cuts, big, vl)
    else:
        size1, stride1 = _runs(kin, shape, in_st)
        _, ostride1 = _runs(kin, shape, tuple(out_st))
        vals = _pick(x, big, last=False)
        if kin and stride1 == 1 and ostride1 == 1 and size1 >= 4 * vl and \
                size0 == x.shape[1]:
            col = rows % size1
            grouped = col < size1 - size1 % (4 * vl)
            vals = np.where(grouped, _pick(x, big, last=True), vals)
    res = np.array(out, order="C")
    res.reshape(-1)[rows] = vals
    return res


def _inner_all(x: np.ndarray, size0: int, cuts: list, big: bool, vl: int) -> np.ndarray:
    """Reduce each row of ``x`` (the runs of ``size0`` of one result, in order) as
    ``binary_kernel_reduce_vec``: runs cut at the thread chunks ``cuts``, each run piece
    vectorized, the pieces' values and tails then in order, the first winning."""
    n = x.shape[1]
    inner = [c for c in cuts[1:-1]]
    if not inner:
        runs = x.reshape(len(x), n // size0, size0)
        return _pick(_inner_candidates(runs, big, vl).reshape(len(x), -1), big, last=False)
    bounds = sorted(set(list(range(0, n + 1, size0)) + inner))
    cands = [_inner_candidates(x[:, p0:p1], big, vl) for p0, p1 in zip(bounds[:-1], bounds[1:])]
    return _pick(np.concatenate(cands, axis=-1), big, last=False)


def reduce_all_ties(a: np.ndarray, out, big: bool):
    """max()/min() of all elements: ``vec::reduce_all`` per thread chunk of a contiguous
    copy (Note [Signed zeros on ties]); ``out`` is returned unless it is a zero."""
    if not _is_float(a.dtype) or a.size == 0 or out != 0:
        return out
    flat = np.ascontiguousarray(a).reshape(-1)
    cuts = _chunks(flat.size)
    vl = lanes(a.dtype)
    parts = [_reduce_all_chunk(flat[c0:c1], big, vl) for c0, c1 in zip(cuts[:-1], cuts[1:])]
    best = parts[0]
    for p in parts[1:]:  # parallel_reduce's combine: max_impl(acc, part)
        best = p if (p > best if big else p < best) else best
    return np.asarray(best, dtype=a.dtype).reshape(np.shape(out))


def _reduce_all_chunk(d: np.ndarray, big: bool, vl: int):
    if d.size < vl:
        return _pick(d, big, last=True)
    lane = [_pick(d[k::vl], big, last=True) for k in range(vl)]
    v = np.array(lane, dtype=d.dtype)
    if vl == 8 and d.dtype == np.float32 and cpu_capability() != "DEFAULT":
        for sh in ((4, 5, 6, 7, 0, 1, 2, 3), (2, 3, 0, 1, 6, 7, 4, 5), (1, 0, 3, 2, 5, 4, 7, 6)):
            v = _vpick(v, v[list(sh)], big)
        return v[0]
    return _pick(v, big, last=True)
