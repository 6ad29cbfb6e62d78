"""Matrix products: ``matmul`` (Note [What matmul saves], Note [matmul dtypes]), ``mm``,
``bmm``, ``mv``, ``dot``, ``outer``, ``addmm``, ``einsum``, ``tensordot``.

Example:
    >>> import retrograd as torch
    >>> torch.ones(2, 3) @ torch.ones(3)
    tensor([3., 3.])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

import numpy as np

from .._core import dtype as D
from .._core.grad_mode import STATE
from .._core.hints import Number
from .._tensor.tensor import _C_NAMES, _LEGACY_NAMES, Tensor, _make, _wrap_dim, result_type
from ..ops.argcheck import type_name
from ..ops.dispatch import apply, view_apply
from ..ops.op import _LOW, FLOAT_NP
from ..ops.public import LOWER_PRECISION_FP, alias, public
from ..ops.records import table as T
from .arguments import _py_max
from .conversion import contiguous
from .legacy_forms import beta_alpha_first
from .pointwise import _check_broadcast
from .reductions import sum as rsum
from .shape import diagonal, movedim, reshape

# ----------------------------------------------------------------------------------
# matrix products


def _mm_error(a, b):
    """PyTorch's error for ``a @ b`` whose inner sizes differ: that of the product its
    _matmul_impl calls (dot, mv, mm, or bmm on the broadcast batch), then the fix."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    na, nb = len(sa), len(sb)
    fix = (f" (matmul of shapes {list(sa)} and {list(sb)}: the last dim of the first must "
           f"equal the {'only' if nb == 1 else 'second-to-last'} dim of the second)")
    if na == 1 and nb == 1:
        return RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                            f"[{sb[0]}] to have the same number of elements, but got {sa[0]} "
                            f"and {sb[0]} elements respectively{fix}")
    rows = math.prod(sa[:-1])
    if nb == 1:  # mv, the batch of the first folded into its rows
        return RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec "
                            f"({sb[0]}){fix}")
    if nb == 2:  # mm (a vector as one row)
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and {sb[0]}x{sb[1]}): "
            f"the inner sizes {sa[-1]} and {sb[0]} must be equal (transpose one operand or fix "
            "the layer size)")
    try:
        batch = math.prod(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        batch = "?"
    return RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                        f"[{batch}, {sa[-1]}] but got: [{batch}, {sb[-2]}].{fix}")


@public(autocast=T.mm_ops["matmul"])
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting of batch dims; 1-D operands allowed.

    Example:
        >>> import retrograd as torch
        >>> (torch.ones(2, 3) @ torch.ones(3)).shape
        torch.Size([2])
    """
    a, b = input, other
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        raise TypeError("matmul expects two tensors")
    da, db = a._data, b._data
    if da.ndim == 0 or db.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if da.dtype != db.dtype:
        return _matmul_mixed(a, b)
    if STATE.enabled and (a._rg or b._rg):
        return _matmul_recorded(a, b)
    na, nb = da.ndim, db.ndim
    if na == 2 and nb == 2:
        op = T.mm_ops["mm"]
    elif na == 1 and nb == 1:
        op = T.mm_ops["dot"]
    elif na == 2 and nb == 1:
        op = T.mm_ops["mv"]
    elif na == 3 and nb == 3 and da.shape[0] == db.shape[0]:
        op = T.mm_ops["bmm"]
    else:
        op = T.mm_ops["matmul"]
    try:
        r = apply(op, (a, b))
    except ValueError:
        raise _mm_error(a, b) from None
    if na > 1 and nb > 1 and da.shape[-1] == 1:
        _gemm_outer_zeros(a, b, r)
    return r


# Note [What matmul saves]
# When it records a graph, matmul records PyTorch's decomposition (at::_matmul_impl)
# node for node: dot, mv or mm for 1-D and 2-D operands (a vector times a matrix as
# unsqueeze, mm, squeeze_); a batched operand folded into a matrix for mm or mv
# (_should_fold; the second operand as its mT, the result transposed back); else both
# operands expanded to the broadcast batch and reshaped to 3-D for bmm, the result an
# _unsafe_view. Each product saves its own operands, as PyTorch's do: where a reshape
# cannot be a view (a transposed or permuted batch, a broadcast one) it copies (a
# CloneBackward0 node), and the copy is what the product saves for the other operand's
# gradient, so writing into the operand in place afterwards neither invalidates the
# graph nor changes the gradient. The reshape is ours, whose no-copy rule is PyTorch's
# (computeStride). Without a graph to record (grad mode off, or no operand requires
# grad) one table op computes the product: no node, nothing saved, less to run.
def _matmul_recorded(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` as PyTorch's _matmul_impl records it (Note [What matmul saves])."""
    da, db = a._data, b._data
    sa, sb = da.shape, db.shape
    na, nb = len(sa), len(sb)
    if sa[-1] != (sb[-2] if nb > 1 else sb[0]):
        raise _mm_error(a, b)
    mm_ops = T.mm_ops
    if na <= 2 and nb <= 2:
        if nb == 1:
            return apply(mm_ops["dot" if na == 1 else "mv"], (a, b))
        if na == 2:
            return _mm(a, b)
        return apply(T.squeeze_inplace, (_mm(view_apply(T.unsqueeze, a, 0), b),), (0,))
    try:
        batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise _mm_error(a, b) from None
    if _should_fold(da, db, a._rg, b._rg):
        # the batched operand folded into a matrix: b.mT's when b is the batched one
        swap = nb > na
        t1 = view_apply(T.transpose, b, (nb - 2, nb - 1)) if swap else a
        t2 = (view_apply(T.t_op, a, None) if na == 2 else a) if swap else b
        s1 = t1._data.shape
        out_shape = s1[:-1]
        folded = reshape(t1, (math.prod(out_shape), s1[-1]))
        if t2._data.ndim == 1:
            return apply(T.unsafe_view, (apply(mm_ops["mv"], (folded, t2)),), out_shape)
        out = apply(T.unsafe_view, (_mm(folded, t2),), out_shape + (t2._data.shape[1],))
        if not swap:
            return out
        return contiguous(view_apply(T.transpose, out, (len(s1) - 2, len(s1) - 1)))
    if na == 3 and nb == 3 and sa[0] != sb[0]:
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient (and folds)
        if sa[0] == 1 and a._rg:
            return _matmul_recorded(view_apply(T.squeeze, a, (0,)), b)
        if sb[0] == 1 and b._rg:
            return _matmul_recorded(a, view_apply(T.squeeze, b, (0,)))
    n = sa[-2] if na > 1 else 1
    m, p = sa[-1], (sb[-1] if nb > 1 else 1)
    nbatch = math.prod(batch)
    a3 = reshape(view_apply(T.expand, a, batch + (n, m)), (nbatch, n, m))
    if nb == 1:
        b3 = reshape(view_apply(T.expand, b, batch + (m,)), (nbatch, m))
        b3 = view_apply(T.unsqueeze, b3, 2)
    else:
        b3 = reshape(view_apply(T.expand, b, batch + (m, p)), (nbatch, m, p))
    r = apply(mm_ops["bmm"], (a3, b3))
    if nb == 1:
        r = view_apply(T.squeeze, r, (2,))
    return apply(T.unsafe_view, (r,),
                 batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ()))


def _mm(a: Tensor, b: Tensor) -> Tensor:
    """``mm`` of two 2-D tensors, with the zero signs of PyTorch's gemm
    (Note [Signed zeros of k=1 products])."""
    r = apply(T.mm_ops["mm"], (a, b))
    if a._data.shape[1] == 1:
        _gemm_outer_zeros(a, b, r)
    return r


# Note [Signed zeros of k=1 products]
# With an inner size of 1, a matrix product is an outer product: every element is one
# exact product, so only the sign of a zero can differ. PyTorch's gemm (MKL; taken by mm
# and by matmul when it folds a batched operand, _should_fold) writes the product
# itself: 0.0 * -1.5 gives -0.0. Its gemv and dot (a side of size 1) and its small bmm
# loop start from +0.0, as NumPy's matmul always does: +0.0. The gemm case is repaired.
def _gemm_outer_zeros(a: Tensor, b: Tensor, r: Tensor) -> None:
    da, db = a._data, b._data
    sa, sb = da.shape, db.shape
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0]:
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        if sa[0] == 1 and a._rg:
            da, sa = da[0], sa[1:]
        elif sb[0] == 1 and b._rg:
            db, sb = db[0], sb[1:]
    if len(sa) == 2 and len(sb) == 2:
        m, n = sa[0], sb[1]
    elif _should_fold(da, db, a._rg, b._rg):  # the folded operand's rows, the other's columns
        m, n = ((math.prod(sa[:-1]), sb[-1]) if len(sa) >= len(sb) else
                (math.prod(sb[:-2]) * sb[-1], sa[-2]))
    else:
        return
    out = r._data
    if m > 1 and n > 1 and out.dtype == da.dtype and out.dtype.kind == "f":
        np.copyto(out, np.multiply(da, db), where=out == 0)


# Note [matmul dtypes]
# PyTorch's matmul never promotes, but whether mixed dtypes are refused, and with which
# message, depends on the kernel its dispatch picks (_matmul_impl): dot, mv ("addmv"), mm
# (also for a batched operand folded into a matrix, see _should_fold) check the dtypes
# even for empty operands; bmm (the broadcast batched path) returns early when the
# result is empty or the inner size is 0, with the second operand's dtype, and
# otherwise says "expected scalar type Float but found Double". Shape errors come first.
def _matmul_mixed(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for operands of different dtypes: PyTorch's error, or its empty (or
    zero) result (Note [matmul dtypes])."""
    sa, sb = a._data.shape, b._data.shape
    na, nb = len(sa), len(sb)
    fix = (f" (matmul does not promote: convert one operand, e.g. "
           f"b.to({D.promote_types(a.dtype, b.dtype)}))")
    if na == 1 and nb == 1:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_LEGACY_NAMES[a.dtype.name]} and {_LEGACY_NAMES[b.dtype.name]}"
                           + fix)
    if sa[-1] != (sb[-2] if nb > 1 else sb[0]):
        raise _mm_error(a, b)
    try:
        batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:  # stand-ins of the batch shapes (no memory), for the message
        stand_in = [_make(np.broadcast_to(np.int8(0), sh)) for sh in (sa[:-2], sb[:-2])]
        _check_broadcast("matmul", ("the batch dims of input", "of other"), stand_in)
        raise
    if na <= 2 and nb <= 2:  # mm, or mv for a 1-D b
        mat, other = a, b
    elif _should_fold(a._data, b._data, a._rg, b._rg):  # the batched operand, folded
        mat, other = (a, b) if na >= nb else (b, a)
    elif na == 3 and nb == 3 and sa[0] != sb[0] and (
            (sa[0] == 1 and a._rg) or (sb[0] == 1 and b._rg)):
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        return matmul(a.squeeze(0), b) if sa[0] == 1 and a._rg else matmul(a, b.squeeze(0))
    else:  # the bmm path
        out = batch + (sa[-2] if na > 1 else 1,) + (sb[-1] if nb > 1 else 1,)
        if 0 in out or sa[-1] == 0:
            if b._data.dtype not in FLOAT_NP and STATE.enabled and (a._rg or b._rg):
                raise RuntimeError(f"Autograd not support dtype: {_LEGACY_NAMES[b.dtype.name]} "
                                   "(the result of a @ b takes b's dtype here; make b "
                                   "floating-point)")
            return matmul(a.to(b.dtype), b)
        raise RuntimeError(f"expected scalar type {_LEGACY_NAMES[a.dtype.name]} but found "
                           f"{_LEGACY_NAMES[b.dtype.name]}" + fix)
    if other._data.ndim == 1:  # mv: PyTorch names (result, mat, vec), result as vec
        v, m = _LEGACY_NAMES[other.dtype.name], _LEGACY_NAMES[mat.dtype.name]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, "
                           f"and {v}" + fix)
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                       f"{_dt_name(mat.dtype)} != {_dt_name(other.dtype)}" + fix)


def _should_fold(a: np.ndarray, b: np.ndarray, a_rg: bool, b_rg: bool) -> bool:
    """PyTorch's should_fold for ``a @ b`` (arrays, and whether each needs a grad):
    matmul folds the batched operand into a matrix (mm or mv) when the other is 1-D or
    2-D and that needs no copy, or when the small one needs a grad."""
    big, small, small_rg = (a, b, b_rg) if a.ndim >= b.ndim else (b, a, a_rg)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small_rg:
        return True
    if a.ndim == 2:
        return False
    if not big.size:
        return True
    shape = list(big.shape)
    strides = [st // big.itemsize for st in big.strides]
    if big is b:  # PyTorch folds b.mT
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return builtins.all(strides[i] == strides[i + 1] * shape[i + 1]
                        for i in range(len(shape) - 2))


def _dt_name(dt) -> str:
    return _C_NAMES.get(dt.name, dt.name)


@public(autocast=T.mm_ops["mm"])
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.mm(torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm got {input.ndim}-D and {mat2.ndim}-D)")
    return matmul(input, mat2)


@public(autocast=T.mm_ops["bmm"])
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bmm(torch.ones(4, 2, 3), torch.ones(4, 3, 5)).shape
        torch.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm got {input.ndim}-D and "
                           f"{mat2.ndim}-D)")
    sa, sb = input._data.shape, mat2._data.shape
    if sb[:2] != (sa[0], sa[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}]. (bmm does not "
                           "broadcast: use matmul, or expand the batch dims to one size)")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {_LEGACY_NAMES[input.dtype.name]} but found "
                           f"{_LEGACY_NAMES[mat2.dtype.name]} (bmm does not promote: convert "
                           f"one operand, e.g. b.to({D.promote_types(input.dtype, mat2.dtype)}))")
    return apply(T.mm_ops["bmm"], (input, mat2))  # one BmmBackward0 node, as PyTorch


@public
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product.

    Example:
        >>> import retrograd as torch
        >>> torch.mv(torch.eye(2), torch.tensor([1., 2.]))
        tensor([1., 2.])
    """
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim} (mv takes a matrix and a vector; use matmul for "
                           "other shapes)")
    return matmul(input, vec)


@public
def dot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.dot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    return matmul(input, other)


@public
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The inner product over the last dims (a product with a 0-d operand).

    Example:
        >>> import retrograd as torch
        >>> torch.inner(torch.ones(2, 3), torch.ones(4, 3)).shape
        torch.Size([2, 4])
    """
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    sa, sb = input._data.shape, other._data.shape
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(sa)} and {list(sb)}")
    if input._data.ndim == 1 and other._data.ndim == 1:
        return dot(input, other)
    return tensordot(input, other, ([-1], [-1]))


@public
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two vectors.

    Example:
        >>> import retrograd as torch
        >>> torch.outer(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor([[3., 4.],
                [6., 8.]])
    """
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D "
                               "(outer takes two vectors; flatten them first, or use "
                               "broadcasting: a[:, None] * b)")
    return input.reshape(input._data.shape[0], 1) * vec2  # PyTorch's: one view, then mul


ger = alias("ger", outer)


@public(inplace=True, autocast=T.addmm)
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *rest, beta: Number = 1,
          alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (the deprecated scalar-first forms warn).

    Example:
        >>> import retrograd as torch
        >>> torch.addmm(torch.zeros(2, 2), torch.eye(2), torch.eye(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if rest or not isinstance(mat1, Tensor):  # Note [Legacy value-first forms]
        # (stacklevel 4: the autocast policy wraps addmm, amp/policy.py)
        (input, mat1, mat2), beta, alpha = beta_alpha_first(
            "addmm", (input, mat1, mat2, *rest), beta != 1 or alpha != 1, 4)
    a, b, c = input._data, mat1._data, mat2._data
    # (float16/bfloat16 take the float32 path below: it rounds each gradient as torch does)
    if b.ndim == 2 and c.ndim == 2 and b.shape[1] == c.shape[0] and a.dtype == b.dtype == \
            c.dtype and b.dtype in FLOAT_NP and b.dtype not in _LOW and a.ndim <= 2 and \
            np.broadcast_shapes(a.shape, (b.shape[0], c.shape[1])) == (b.shape[0], c.shape[1]):
        # one AddmmBackward0 node
        return apply(T.addmm, (input, mat1, mat2), (beta, alpha, T.addmm_layout(b, c)))
    low = mat1._data.dtype
    if low in _LOW and mat2._data.dtype == low and input._data.dtype == low:
        # torch forms beta * input + alpha * (mat1 @ mat2) in float32 and rounds once
        # (Note [Low-precision accumulation] in ops/records/matmul.py); the casts' rules round each
        # gradient once too, as torch's low-precision AddmmBackward0 does
        f32 = D.float32
        return addmm(input.to(f32), mat1.to(f32), mat2.to(f32), beta=beta,
                     alpha=alpha).to(D.FROM_NP[low])
    prod_ = mm(mat1, mat2)
    if alpha != 1:
        prod_ = prod_ * alpha
    return prod_ + (input if beta == 1 else input * beta)


def _addmm_inplace(self, *args, beta=1, alpha=1) -> Tensor:
    """The function ``Tensor.addmm_`` runs: addmm, with the in-place method's name in the
    deprecated scalar-first forms' warning (Note [Legacy value-first forms])."""
    if len(args) != 2 or not isinstance(args[0], Tensor):
        (self, *args), beta, alpha = beta_alpha_first("addmm_", (self, *args),
                                                      beta != 1 or alpha != 1, 4)
    return addmm(self, *args, beta=beta, alpha=alpha)


addmm.inplace_variant = _addmm_inplace


_ELLIPSIS = 52  # label codes: "A".."Z" are 0..25, "a".."z" 26..51 (PyTorch's order)


def _einsum_label(c: str, where: int) -> int:
    if not (c.isascii() and c.isalpha()):
        raise RuntimeError(f"einsum(): invalid subscript given at index {where} in the "
                           "equation string, subscripts must be in [a-zA-Z]")
    return ord(c) - 65 if c.isupper() else ord(c) - 71


def _einsum_operand_labels(lhs: str, n_ops: int) -> list:
    """Each operand's label codes (``_ELLIPSIS`` for ``...``), as PyTorch parses them."""
    labels: list = [[]]
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if _ELLIPSIS in labels[-1]:
                raise RuntimeError(f"einsum(): found '.' for operand {len(labels) - 1} for "
                                   "which an ellipsis was already found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {len(labels) - 1} that "
                                   "is not part of any ellipsis")
            labels[-1].append(_ELLIPSIS)
            i += 2
        elif c == ",":
            if len(labels) == n_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   f"the equation (pass one tensor per term of '{lhs}')")
            labels.append([])
        elif c != " ":
            labels[-1].append(_einsum_label(c, i))
        i += 1
    if len(labels) != n_ops:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           f"equation (the equation has {len(labels)} terms, for {n_ops} "
                           "operands)")
    return labels


# Note [einsum as PyTorch records it]
# einsum is PyTorch's algorithm (at::einsum), op for op, so that its graph, what it saves
# and its low-precision roundings are PyTorch's: each operand's repeated labels become
# diagonals (diagonal, movedim), missing labels are unsqueezed and the dims permuted
# into one order (the output's labels, then the summed ones); operands are then
# contracted left to right (sum over a label no later operand has, then
# ``sumproduct_pair``: permute, reshape, bmm, view, permute, or a mul when nothing is
# summed), and the summed dims are viewed away at the end (summed, for one operand).
# (With more than two operands PyTorch follows opt_einsum's contraction order when that
# package is installed; without it, as here, left to right.)
def _einsum_category(args, kwargs):
    """Lower precision when some index is summed between two operands (torch uses bmm)."""
    try:
        eq, operands = einsum_call(args)
    except (TypeError, ValueError, RuntimeError):  # einsum itself raises it
        return None
    if not isinstance(eq, str):
        return None
    eq = eq.replace(" ", "")
    lhs, _, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < 2:
        return None
    if "->" not in eq:
        letters = [c for c in lhs if c.isalpha()]
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    seen = {}
    for term in terms:
        for c in set(term):
            if c.isalpha():
                seen[c] = seen.get(c, 0) + 1
    return LOWER_PRECISION_FP if any(n > 1 and c not in out for c, n in seen.items()) else None


# Note [einsum's call forms]
# torch.einsum (torch/functional.py) takes an equation and the operands (``einsum(eq, a,
# b)``), the equation and one list of them (``einsum(eq, [a, b])``), or the sublist form:
# each operand followed by the list of its subscripts, integers in [0, 52) or ``...``, and
# optionally the output's list last (``einsum(a, [0, 1], b, [1, 2], [0, 2])``). The
# sublists are turned into an equation as PyTorch turns them (0-25 are 'A'-'Z', 26-51
# 'a'-'z'), so every form runs the one algorithm and raises its errors.
_NO_OPERANDS = ("einsum(): must specify the equation string and at least one operand, or at "
                "least one operand and its subscripts list")


def _subscript(n) -> str:
    """One subscript of a sublist as an equation letter (PyTorch's ``parse_subscript``)."""
    if n is Ellipsis:
        return "..."
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     f"[0, 52) (got {n!r}: number the dims from 0, or use ... for an "
                     "ellipsis)")


def einsum_call(args: tuple) -> tuple[str, tuple]:
    """The equation and operands of any of einsum's call forms (Note [einsum's call
    forms]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd._functions.matmul import einsum_call
        >>> a = torch.ones(2, 3)
        >>> einsum_call((a, [0, 1], a, [2, 1], [0, 2]))[0]
        'AB,CB->AC'
    """
    if len(args) < 2:
        raise ValueError(_NO_OPERANDS)
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum_call((equation, *operands[0]))
    for i, o in enumerate(operands):
        if not isinstance(o, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type_name(o)}")
    return equation, tuple(operands)


@public(method=False, autocast=_einsum_category)
def einsum(*args: str | Tensor | Sequence[Tensor] | Sequence[int]) -> Tensor:
    """Einstein summation, differentiable in every operand (ellipsis supported), in each of
    PyTorch's call forms (Note [einsum's call forms]).

    Example:
        >>> import retrograd as torch
        >>> torch.einsum('ij,jk->ik', torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
        >>> torch.einsum(torch.eye(2), [0, 1], torch.ones(2, 3), [1, 2], [2, 0]).shape
        torch.Size([3, 2])
    """
    equation, operands = einsum_call(args)
    rdt = result_type(*operands)
    ops = [o if o.dtype == rdt else o.to(rdt) for o in operands]
    lhs, arrow, rhs = equation.partition("->")
    op_labels = _einsum_operand_labels(lhs, len(ops))
    count = [0] * _ELLIPSIS
    ell_dims = 0  # the most dims any ellipsis covers
    for i, (labels, x) in enumerate(zip(op_labels, ops)):
        nd = x._data.ndim
        named = len(labels) - (_ELLIPSIS in labels)
        for s in labels:
            if s != _ELLIPSIS:
                count[s] += 1
        if _ELLIPSIS in labels:
            ell_dims = _py_max(ell_dims, nd - named)
        if named > nd if _ELLIPSIS in labels else named != nd:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) "
                + ("is more than the number of dimensions (" if _ELLIPSIS in labels else
                   "does not match the number of dimensions (")
                + f"{nd}) for operand {i}"
                + ("" if _ELLIPSIS in labels else " and no ellipsis was given"))
    # each label's position in the common order: output dims first, then summed ones
    pos = [-1] * _ELLIPSIS
    n_pos = ell_at = 0
    ell_out = False
    if not arrow:
        n_pos, ell_out = ell_dims, True  # implicit output: ellipsis, then labels seen once
        for s in range(_ELLIPSIS):
            if count[s] == 1:
                pos[s] = n_pos
                n_pos += 1
    else:
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_out:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                       "was already found")
                if rhs[i:i + 3] != "...":
                    raise RuntimeError("einsum(): found '.' for output that is not part of "
                                       "any ellipsis (...)")
                ell_at, ell_out = n_pos, True
                n_pos += ell_dims
                i += 2
            elif c != " ":
                s = _einsum_label(c, len(lhs) + 2 + i)
                if count[s] == 0 or pos[s] != -1:
                    raise RuntimeError(
                        f"einsum(): output subscript {c} " + (
                            "appears more than once in the output" if pos[s] != -1 else
                            "does not appear in the equation for any input operand"))
                pos[s] = n_pos
                n_pos += 1
            i += 1
    n_out = n_pos
    if not ell_out:
        ell_at = n_pos
        n_pos += ell_dims
    for s in range(_ELLIPSIS):
        if count[s] and pos[s] == -1:
            pos[s] = n_pos
            n_pos += 1
    # diagonals, unsqueezes and one permutation per operand; sizes checked as PyTorch does
    size = [1] * _ELLIPSIS
    ell_size = [1] * ell_dims
    dim_count = [0] * n_pos  # operands in which each dim has a size other than 1
    aligned = []
    for i, (labels, x) in enumerate(zip(op_labels, ops)):
        perm = [-1] * n_pos
        d = 0
        for s in labels:
            if s == _ELLIPSIS:
                covered = x._data.ndim - (len(labels) - 1)
                for j in range(ell_dims - covered, ell_dims):
                    n = x._data.shape[d]
                    if n != 1:
                        if ell_size[j] not in (1, n):
                            raise RuntimeError(
                                f"einsum(): dimension {d} covered by ellipsis in operand {i}"
                                f"has size {n} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_size[j]} for the respective "
                                "dimension")
                        ell_size[j] = n
                        dim_count[ell_at + j] += 1
                    perm[ell_at + j] = d
                    d += 1
            elif perm[pos[s]] == -1:
                n = x._data.shape[d]
                if n != 1:
                    if size[s] not in (1, n):
                        raise RuntimeError(
                            f"einsum(): subscript {_einsum_char(s)} has size {n} for operand "
                            f"{i} which does not broadcast with previously seen size {size[s]}")
                    size[s] = n
                    dim_count[pos[s]] += 1
                perm[pos[s]] = d
                d += 1
            else:  # a repeated label: its diagonal, where the label first was
                prev = perm[pos[s]]
                if x._data.shape[d] != x._data.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_einsum_char(s)} is repeated for operand {i} "
                        f"but the sizes don't match, {x._data.shape[d]} != "
                        f"{x._data.shape[prev]}")
                x = movedim(diagonal(x, 0, prev, d), -1, prev)
        for k in range(n_pos):
            if perm[k] == -1:
                x = view_apply(T.unsqueeze, x, d)
                perm[k] = d
                d += 1
        aligned.append(view_apply(T.permute, x, tuple(perm)))
    while len(aligned) > 1:  # contract left to right
        a, b = aligned[0], aligned[1]
        sa, sb = a._data.shape, b._data.shape
        sum_dims, a_only, b_only = [], [], []
        for d in range(n_out, n_pos):
            if sa[d] != 1 and sb[d] != 1:
                dim_count[d] -= 1
                if dim_count[d] == 1:
                    sum_dims.append(d)
                    dim_count[d] = 0
            elif dim_count[d] == 1:
                if sa[d] != 1:
                    a_only.append(d)
                    dim_count[d] = 0
                elif sb[d] != 1:
                    b_only.append(d)
                    dim_count[d] = 0
        if a_only:
            a = rsum(a, a_only, True)
        if b_only:
            b = rsum(b, b_only, True)
        aligned[:2] = [_sumproduct_pair(a, b, sum_dims)]
    out = aligned[0]
    if n_pos > n_out:
        if len(ops) > 1:
            return view_apply(T.view, out, out._data.shape[:n_out])
        return rsum(out, list(range(n_out, n_pos)))
    return out


def _einsum_char(s: int) -> str:
    return chr(s + 65 if s < 26 else s + 71)


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """``(left * right).sum(sum_dims, keepdim=True)`` for operands of the same number of
    dims (broadcasting), by one bmm, as PyTorch's sumproduct_pair."""
    if not sum_dims:
        return left * right
    sl, sr = left._data.shape, right._data.shape
    lro, lo, ro = [], [], []
    n_lro = n_lo = n_ro = n_sum = 1
    summed = set(sum_dims)
    for i in range(len(sl)):
        if i in summed:
            n_sum *= sl[i]  # (einsum sums a dim here only where both have it)
        elif sl[i] != 1 and sr[i] != 1:
            lro.append(i)
            n_lro *= sl[i]
        elif sl[i] != 1:
            lo.append(i)
            n_lo *= sl[i]
        else:
            ro.append(i)
            n_ro *= sr[i]
    out_size = tuple([sl[d] for d in lro] + [sl[d] for d in lo] + [1] * len(sum_dims)
                     + [sr[d] for d in ro])
    order = lro + lo + sum_dims + ro
    lmat = reshape(view_apply(T.permute, left, tuple(order)), (n_lro, n_lo, n_sum))
    rmat = reshape(view_apply(T.permute, right, tuple(lro + sum_dims + ro + lo)),
                   (n_lro, n_sum, n_ro))
    r = view_apply(T.view, apply(T.mm_ops["bmm"], (lmat, rmat)), out_size)
    back = [0] * len(order)
    for k, d in enumerate(order):
        back[d] = k
    return view_apply(T.permute, r, tuple(back))


@public
def tensordot(a: Tensor, b: Tensor,
              dims: int | Sequence[int | Sequence[int]] = 2) -> Tensor:
    """Contract ``dims`` dimensions of ``a`` with ``b`` (an int or two lists of dims).

    Example:
        >>> import retrograd as torch
        >>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 4), dims=1).shape
        torch.Size([2, 4])
    """
    if isinstance(dims, int):
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [_wrap_dim(d, a.ndim) for d in da]
    db = [_wrap_dim(d, b.ndim) for d in db]
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    am = a.permute(*(fa + da)).reshape(-1, k)
    bm = b.permute(*(db + fb)).reshape(k, -1)
    return (am @ bm).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])
