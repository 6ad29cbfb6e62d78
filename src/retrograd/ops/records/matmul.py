"""Op records of the matrix products: ``mm``/``mv``/``dot``/``bmm``/``matmul`` (one
record each, ``mm_ops``), ``addmm``, and the float32-accumulating kernel
for half-precision operands (Note [Low-precision accumulation]). Part of the one table
(``ops/records/table.py`` gathers every record).

Example:
    >>> from retrograd.ops.records import matmul as TM
    >>> sorted(TM.mm_ops)[:3]
    ['bmm', 'dot', 'matmul']
"""

from __future__ import annotations

from math import prod

import numpy as np

from ..._core.grad_mode import STATE
from ..._tensor.tensor import _make
from ..batch_rules import addmm_rule, keep_layout_with, matmul_rule
from ..dispatch import apply, view_apply
from ..jvp_rules import jvp_multilinear
from ..kernels.sum import F32, LOW_FLOATS, sum_kernel
from ..op import Op
from ..public import LOWER_PRECISION_FP
from .helpers import arrays_suffice
from .shape import t_op, transpose, view

_ndarray = np.ndarray


# Note [Plain dot]
# ``np.dot`` goes through NumPy's ``__array_function__`` dispatch, a Python-level
# dispatcher on every call (about 0.6 us, a fifth of a 16x32 @ 32x64 product here);
# ``ndarray.dot`` is the same BLAS call without it. The matrix products of a training
# step take the method when both operands are plain ndarrays; anything else (a traced
# array under retrograd.compile, whose tracer sees NumPy functions through that
# protocol) keeps ``np.dot``. An operand of one element goes to matmul instead: np.dot
# takes it for a scalar and calls BLAS axpy, which skips a zero scalar, so 0 @ [inf]
# would be 0 where the product (PyTorch's, and matmul's) is nan.
def _dot(a, b):
    """``np.dot(a, b)`` of two 2-D arrays (Note [Plain dot]).

    Example:
        >>> _dot(np.ones((2, 3)), np.ones((3, 1))).ravel()
        array([3., 3.])
    """
    if a.size == 1 or b.size == 1:
        return np.matmul(a, b)
    if a.__class__ is _ndarray and b.__class__ is _ndarray:
        return a.dot(b)
    return np.dot(a, b)


# ---------------------------------------------------------------------------------
# matrix products (1-D operands handled as numpy.matmul does)

def _mm_rule_a(g, s, n):
    # written from the right so a batched g (Note [Batched rules]) broadcasts through;
    # a itself is saved only for b's gradient (PyTorch's mm saves self only if mat2
    # requires grad): its shape is its edge's
    a, b = s
    ashape = a.shape if a is not None else n.input_shape(0)
    if b.ndim == 1:
        return g.unsqueeze(-1) * b
    if len(ashape) == 1:
        return (g.unsqueeze(-2) @ b.mT).squeeze(-2)
    return g @ b.mT


def _mm_rule_b(g, s, n):
    a, b = s
    bnd = b.ndim if b is not None else len(n.input_shape(1))  # (see _mm_rule_a)
    if a.ndim == 1:
        if bnd == 1:
            return g.unsqueeze(-1) * a
        return a.unsqueeze(-1) * g.unsqueeze(-2)
    if bnd == 1:
        return (a.mT @ g.unsqueeze(-1)).squeeze(-1)
    if bnd == 2 and a.ndim > 2 and g.ndim == a.ndim:
        # a stack times one matrix: the matrix's gradient is one product over all the
        # stack's rows, (k, B*m) @ (B*m, n), as PyTorch's folded matmul has it, not B
        # products summed afterwards (Note [Folding a shared matrix])
        rows = prod(a.shape[:-1])
        return a.reshape(rows, a.shape[-1]).mT @ g.reshape(rows, g.shape[-1])
    return a.mT @ g


_F32, _LOW_MM = F32, LOW_FLOATS


_F16 = np.dtype(np.float16)
_LANE_BUDGET = 1 << 22  # float32 products held at once by low_matmul_f32 (16 MB)


# Note [Low-precision accumulation]
# PyTorch's CPU kernels never accumulate a bfloat16/float16 matrix product in the low
# precision: the products of two such numbers are exact in float32, the sum is kept in
# float32, and the result is rounded once (round to nearest even) to the low dtype. A
# bias (linear, addmm's ``beta * input``, a convolution's bias) is added in float32
# before that one rounding. Which float32 sum torch forms differs by dtype:
#
# * bfloat16 goes to oneDNN (mkldnn_bf16_gemm; its convolutions likewise). Its
#   summation order depends on the CPU (avx512_bf16 pairs, AMX tiles, K blocking,
#   threads), so retrograd sums with NumPy's float32 BLAS. The float32 sums then differ
#   in their last bits, which survive the rounding to 8 bits of mantissa rarely: about
#   1 element in 10^4 is 1 ULP off on random data (docs/compatibility.md); on data whose
#   float32 sums are exact (any order gives them) the bits are identical.
# * float16 has no oneDNN kernel on CPUs without AVX512-FP16/AMX-FP16, and torch runs
#   its portable gemm (aten/src/ATen/native/cpu/BlasKernel.cpp): every output element
#   is a dot product in four interleaved float32 partial sums (lane r takes k = r mod 4,
#   in order; the last K mod 4 products go to lane 0), combined as
#   ((p0 + p1) + p2) + p3. ``low_matmul_f32`` forms exactly these sums (a sequential
#   np.add.reduce over the outer axis of the exact products), so float16 results are
#   bit-identical; the cost is one pass over M*N*K products, no faster than torch's
#   own scalar loop but no slower in kind.


def low_matmul_f32(a, b, dtype):
    """``a @ b`` (float32 arrays holding ``dtype`` values) summed as torch sums ``dtype``.

    Returns float32; the caller adds a bias, if any, then rounds once
    (Note [Low-precision accumulation]).

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.records.matmul import low_matmul_f32
        >>> a = np.ones((2, 5), np.float32)
        >>> low_matmul_f32(a, a.T, np.dtype(np.float16))
        array([[5., 5.],
               [5., 5.]], dtype=float32)
    """
    if dtype != _F16:
        if a.ndim == 2 and b.ndim == 2:
            return _dot(a, b)
        return np.matmul(a, b)
    va, vb = a.ndim == 1, b.ndim == 1
    a2 = a[None, :] if va else a
    b2 = b[:, None] if vb else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, k = a2.shape[-2:]
    n = b2.shape[-1]
    a2 = np.broadcast_to(a2, batch + (m, k))
    b2 = np.broadcast_to(b2, batch + (k, n))
    out = np.empty(batch + (m, n), dtype=_F32)
    k4 = k - k % 4
    # rows and columns per block so that one block's k products fit the budget
    nc = max(1, min(n, _LANE_BUDGET // max(1, k)))
    mc = max(1, min(m, _LANE_BUDGET // max(1, k * nc)))
    zero = np.float32(0)
    for idx in np.ndindex(*batch):
        ab, bb, ob = a2[idx], b2[idx], out[idx]
        for i0 in range(0, m, mc):
            at = ab[i0:i0 + mc].T  # (k, mc)
            for j0 in range(0, n, nc):
                bt = bb[:, j0:j0 + nc]
                p = at[:, :, None] * bt[:, None, :]  # (k, mc, nc): exact products
                lanes = np.add.reduce(p[:k4].reshape((k4 // 4, 4) + p.shape[1:]), axis=0,
                                      initial=zero)  # sequential over the outer axis
                p0 = lanes[0]
                for t in range(k4, k):
                    p0 = p0 + p[t]
                ob[i0:i0 + mc, j0:j0 + nc] = ((p0 + lanes[1]) + lanes[2]) + lanes[3]
    if va and vb:
        return out[..., 0, 0]
    if va:
        return out[..., 0, :]
    if vb:
        return out[..., 0]
    return out


def _matmul_fwd(a, b):
    # float16/bfloat16: accumulate in float32 and round the product once
    # (Note [Low-precision accumulation])
    if a.dtype in _LOW_MM:
        return low_matmul_f32(a.astype(_F32), b.astype(_F32), a.dtype).astype(a.dtype)
    if a.ndim == 2 and b.ndim == 2:  # the same BLAS call as matmul, less overhead per call
        return _dot(a, b)
    if a.ndim > 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1:
        return _outer_stack(a, b)
    if a.ndim > 2 and b.ndim >= 2:
        if not any(b.strides[:-2]):
            folded = _fold_rows(a, b)
            if folded is not None:
                return folded
        elif b.shape[-1] == 1 and not any(a.strides[:-2]):
            folded = _fold_columns(a, b)
            if folded is not None:
                return folded
    return np.matmul(a, b)


# Note [Stacks of outer products]
# A stack of matrix products with a contraction of 1 (per-sample weight gradients under
# vmap: W9's (64, 128, 1) @ (64, 1, 784)) is a stack of outer products. NumPy's matmul
# loops slowly over such stacks, and a plain broadcast multiply gives -0.0 for a zero
# times a negative, where a product's sum (PyTorch's, matmul's) starts from +0.0. einsum
# computes each product into a zeroed output, so its zeros are +0.0 as the sum's are;
# that is two passes over the output (zero it, then accumulate), and with an output
# larger than the cache the second pass reads it back from memory. The stack is
# computed in chunks of about 1.6 MB (four of W9's samples), so the accumulating pass
# finds its chunk still in cache. W9's 25.7 MB stack, best medians of 7 alternating
# rounds in each of four sittings (the machine's memory speed moved between them):
# chunked 3.2-4.4 ms, one einsum 3.5-6.2 ms, a plain fill of the array 1.6-2.9 ms; W9's
# step 10.0 ms against 12.1 (median of 10 alternating rounds in one process). A traced
# array (retrograd.compile) keeps the one einsum its tracer records.
_OUTER_CHUNK = 400_000  # elements of output per einsum call


def _outer_stack(a, b):
    """``a @ b`` for stacks ``a`` (..., m, 1) and ``b`` (..., 1, n) (Note [Stacks of outer
    products]).

    Example:
        >>> _outer_stack(np.array([[[0.0], [2.0]]]), np.array([[[-1.0, 3.0]]])).tolist()
        [[[0.0, 0.0], [-2.0, 6.0]]]
    """
    if a.__class__ is not _ndarray or b.__class__ is not _ndarray:
        return np.einsum("...ik,...kj->...ij", a, b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, n = a.shape[-2], b.shape[-1]
    per = max(1, _OUTER_CHUNK // max(1, m * n))
    nb = prod(batch)
    if nb <= per:
        return np.einsum("...ik,...kj->...ij", a, b)
    out = np.empty(batch + (m, n), np.result_type(a, b))
    a3 = np.broadcast_to(a, batch + (m, 1)).reshape(nb, m, 1)
    b3 = np.broadcast_to(b, batch + (1, n)).reshape(nb, 1, n)
    o3 = out.reshape(nb, m, n)
    for s in range(0, nb, per):
        e = s + per
        np.einsum("bik,bkj->bij", a3[s:e], b3[s:e], out=o3[s:e])
    return out


# Note [Folding a shared matrix]
# A stack of matrices times one matrix (``b`` 2-D, or a stack whose batch strides are all
# 0: an expanded weight, as vmap's physical graph has for an unbatched nn.Linear) is one
# product of a's rows: (B*m, k) @ (k, n), one BLAS call, as PyTorch's matmul folds
# tensor1's batch into its rows (and torch.func's batch rule for linear does). NumPy's
# matmul would call gemv once per stack element, reading the whole matrix each time
# (W9's first layer: 64 reads of a 784x128 weight, 0.87 ms against one gemm's fraction).
# The mirror case, one shared matrix times a stack of columns (``a`` expanded, ``b`` of
# shape (..., k, 1): vmap's W @ x.mT, Note [Linear under vmap]), is (B, k) @ a.T.
def _fold_rows(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch != a.shape[:-2] or 0 in b.shape[:-2]:  # b's batch is larger (or empty)
        return None
    b2 = b[(0,) * (b.ndim - 2)] if b.ndim > 2 else b
    m, k = a.shape[-2:]
    return _dot(a.reshape(prod(batch) * m, k), b2).reshape(batch + (m, b2.shape[-1]))


def _fold_columns(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if batch != b.shape[:-2] or 0 in a.shape[:-2]:
        return None
    a2 = a[(0,) * (a.ndim - 2)]
    m, k = a2.shape
    return _dot(b.reshape(prod(batch), k), a2.T).reshape(batch + (m, 1))


_MM_RULES = (_mm_rule_a, _mm_rule_b)


# Note [Product rules as PyTorch writes them]
# mm, bmm, mv and dot differentiate with PyTorch's formulas (derivatives.yaml,
# mm_mat1_backward/mm_mat2_backward's general case): mm's gradients are
# ``grad.mm(mat2.t())`` and ``mat1.t().mm(grad)``, bmm's the same with transpose(1, 2),
# mv's ``grad.ger(vec)`` (``grad.reshape(n, 1) * vec``) and ``self.t().mv(grad)``, dot's
# ``grad * other`` and ``grad * self``. So a double backward records PyTorch's graph
# (TBackward0, MvBackward0, ...) and each gradient is one product node, where the
# generic ``@`` rules would record matmul's decomposition (views, expand, bmm). A batched
# gradient (Note [Batched rules]: one more leading dim than the output) takes the
# generic rules, which broadcast.
def _mm_mat1(g, s, n):
    if g._data.ndim != 2:
        return _mm_rule_a(g, s, n)
    return apply(mm_ops["mm"], (g, view_apply(t_op, s[1], None)))


def _mm_mat2(g, s, n):
    if g._data.ndim != 2:
        return _mm_rule_b(g, s, n)
    return apply(mm_ops["mm"], (view_apply(t_op, s[0], None), g))


def _bmm_mat1(g, s, n):
    if g._data.ndim != 3:
        return _mm_rule_a(g, s, n)
    return apply(mm_ops["bmm"], (g, view_apply(transpose, s[1], (1, 2))))


def _bmm_mat2(g, s, n):
    if g._data.ndim != 3:
        return _mm_rule_b(g, s, n)
    return apply(mm_ops["bmm"], (view_apply(transpose, s[0], (1, 2)), g))


def _mv_self(g, s, n):
    if g._data.ndim != 1:
        return _mm_rule_a(g, s, n)
    return view_apply(view, g, (g._data.shape[0], 1)) * s[1]


def _mv_vec(g, s, n):
    nd = g._data.ndim
    if nd == 1:
        return apply(mm_ops["mv"], (view_apply(t_op, s[0], None), g))
    if nd == 2:  # batched: (B, m) @ (m, n), one product
        return apply(mm_ops["mm"], (g, s[0]))
    return _mm_rule_b(g, s, n)


def _dot_self(g, s, n):
    return g * s[1] if g._data.ndim == 0 else _mm_rule_a(g, s, n)


def _dot_other(g, s, n):
    return g * s[0] if g._data.ndim == 0 else _mm_rule_b(g, s, n)


# each operand is saved only for the other's gradient (as mul; PyTorch's mm likewise)
# (mm and bmm are autocast ops, mv and dot are not: torch.mv stays float32 under autocast)
mm_ops = {k: Op(k, _matmul_fwd, rules, (0, 1), save_if=((1,), (0,)), jvp=jvp_multilinear,
                batch_ok=True, autocast=cast,
                batch=matmul_rule)
          for k, rules, cast in (("mm", (_mm_mat1, _mm_mat2), LOWER_PRECISION_FP),
                                 ("bmm", (_bmm_mat1, _bmm_mat2), LOWER_PRECISION_FP),
                                 ("mv", (_mv_self, _mv_vec), None),
                                 ("dot", (_dot_self, _dot_other), None))}
mm_ops["matmul"] = Op("matmul", _matmul_fwd, _MM_RULES, (0, 1), save_if=((1,), (0,)),
                      node_name="UnsafeViewBackward0", jvp=jvp_multilinear, batch_ok=True,
                      autocast=LOWER_PRECISION_FP, batch=matmul_rule)


def _mm_rule_b_layout(g, s, n):
    # b an expanded column-major matrix (vmap's W.t()): its gradient computed as the
    # transpose of the product in the other order, as mm_mat2_backward does for a
    # column-major mat2 (Note [Linear under vmap]); a gradient batched by
    # is_grads_batched (a leading dim more) broadcasts through
    return (g.mT @ s[0]).mT


keep_layout_with(Op("matmul_keep_layout", _matmul_fwd, (_mm_rule_a, _mm_rule_b_layout), (0, 1),
                    save_if=((1,), (0,)), node_name="UnsafeViewBackward0",
                    jvp=jvp_multilinear, batch_ok=True, batch=matmul_rule))
# (no autocast category of its own: not a PyTorch op; the logical call it stands for,
# linear/addmm/matmul, has cast its operands already)

# addmm: beta * input + alpha * (mat1 @ mat2) in one node, as PyTorch's AddmmBackward0
# (inputs in its order: input, mat1, mat2; nn.functional.linear is addmm(b, x, W.t())).
# One kernel call, no temporary for the product's sum with the bias. p = (beta, alpha,
# layout), layout from ``addmm_layout`` (Note [addmm gradient layouts]).
def _addmm_fwd(b, m1, m2, p):
    beta, alpha = p[0], p[1]
    if m1.dtype in _LOW_MM:  # float32 sums, the bias added in float32, one rounding
        dt = m1.dtype
        out = low_matmul_f32(m1.astype(_F32), m2.astype(_F32), dt)
        b = b.astype(_F32)
    else:
        # np.dot: the same BLAS call as np.matmul for 2-D operands, less overhead per call
        out = _dot(m1, m2)
        dt = None
    if alpha != 1:
        out *= alpha
    if beta != 0:  # beta == 0: input is ignored, its nan/inf do not propagate (PyTorch)
        out += b if beta == 1 else b * beta
    return out if dt is None else out.astype(dt)


def _column_major(x) -> bool:
    st, item = x.strides, x.itemsize
    return st[0] == item and st[1] == item * x.shape[0]


def addmm_layout(m1, m2) -> int:
    """Bit 0: ``m1`` (an array) is column-major; bit 1: ``m2`` is (Note [addmm gradient
    layouts]). ``nn.Linear``'s ``W.t()`` is: its gradient is made so that its TBackward0
    hands the weight a contiguous one.

    Example:
        >>> import numpy as np
        >>> addmm_layout(np.ones((2, 3)), np.ones((4, 3)).T)
        2
    """
    return _column_major(m1) | (_column_major(m2) << 1)


# Note [addmm gradient layouts]
# PyTorch's mm_mat1_backward and mm_mat2_backward give a column-major operand (strides
# (1, rows): a transposed contiguous matrix, such as nn.Linear's W.t()) a gradient of the
# same layout, computed as the transpose of the product in the other order
# (``(g.t() @ mat1).t()``): the transpose that the operand's own node (TBackward0) then
# applies makes it contiguous again, so the weight takes it as its .grad with no copy.
# The layouts are read at the forward (an operand is not always saved) and kept in p.
def _addmm_vjp(g, s, n, needs):
    m1, m2 = s
    beta, alpha, layout = n._p
    r = [None, None, None]
    gd = g._data
    if needs[0]:
        if beta != 1:
            r[0] = g * beta  # the engine sums it back to input's shape
        elif gd.ndim == 2 and len(n.input_shape(0)) == 1 and not STATE.batch:  # g.sum(0)
            # SumBackward1 (sum over dim 0), as PyTorch's addmm backward records it
            r[0] = _make(sum_kernel(gd, _SUM0)) if arrays_suffice() else g.sum(0)
        else:
            r[0] = g
    if needs[1] or needs[2]:
        _addmm_products(g, m1, m2, layout, needs, r)
    if alpha != 1:
        r[1] = None if r[1] is None else r[1] * alpha
        r[2] = None if r[2] is None else r[2] * alpha
    return r


_SUM0 = ((0,), False, None)  # sum's p: over dim 0, no keepdim, the dtype kept


def _addmm_products(g, m1, m2, layout: int, needs, r: list) -> None:
    """The gradients of mat1 and mat2 into ``r[1]``/``r[2]`` (Note [addmm gradient
    layouts])."""
    gd = g._data
    if gd.ndim != 2 or STATE.batch or gd.dtype != (m2 if needs[1] else m1)._data.dtype:
        if needs[1]:
            r[1] = g.matmul(m2.t())
        if needs[2]:
            r[2] = m1.t().matmul(g)
    elif arrays_suffice():  # no graph to record, no tangent: the products of the arrays
        if needs[1]:
            w = m2._data
            r[1] = _make(_matmul_fwd(w, gd.T).T if layout & 1 else _matmul_fwd(gd, w.T))
        if needs[2]:
            x = m1._data
            r[2] = _make(_matmul_fwd(gd.T, x).T if layout & 2 else _matmul_fwd(x.T, gd))
    else:
        mm, t = mm_ops["mm"], _t
        if needs[1]:
            r[1] = t(apply(mm, (m2, t(g)))) if layout & 1 else apply(mm, (g, t(m2)))
        if needs[2]:
            r[2] = t(apply(mm, (t(g), m1))) if layout & 2 else apply(mm, (t(m1), g))


def _t(x):
    return view_apply(t_op, x, None)


def _addmm_jvp(t, s, n, out):
    beta, alpha = n._p[0], n._p[1]
    _, m1, m2 = n._xs
    res = None
    if t[1] is not None:
        res = t[1].matmul(m2)
    if t[2] is not None:
        r = m1.matmul(t[2])
        res = r if res is None else res + r
    if res is not None and alpha != 1:
        res = res * alpha
    if t[0] is not None and beta != 0:
        tb = t[0] if beta == 1 else t[0] * beta
        res = tb.expand(tuple(out.shape)) if res is None else res + tb
    return res


# mat1 is saved only for mat2's gradient and mat2 only for mat1's, as in PyTorch
addmm = Op("addmm", _addmm_fwd, _addmm_vjp, (1, 2), jvp=_addmm_jvp, save_if=((2,), (1,)),
           autocast=LOWER_PRECISION_FP, batch=addmm_rule)
