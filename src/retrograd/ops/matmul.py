"""Matrix products: ``matmul`` (Note [What matmul saves], Note [matmul dtypes]), ``mm``,
``bmm``, ``mv``, ``dot``, ``outer``, ``addmm``, ``einsum``, ``tensordot``.

Example:
    >>> import retrograd as torch
    >>> torch.ones(2, 3) @ torch.ones(3)
    tensor([3., 3.])
"""

from __future__ import annotations

import builtins
import collections
import math

import numpy as np

from .. import _dtype as D
from .._grad_mode import STATE
from .._tensor import _C_NAMES, _LEGACY_NAMES, Tensor, _make, _wrap_dim, result_type
from . import table as T
from ._core import _LOW, FLOAT_NP
from .arguments import _py_max
from .conversion import clone
from .dispatch import apply
from .pointwise import _check_broadcast
from .public import alias, public

# ----------------------------------------------------------------------------------
# matrix products


def _mm_error(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if a.ndim == 2 and b.ndim == 2:
        return RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]}): "
            f"the inner sizes {sa[1]} and {sb[0]} must be equal (transpose one operand or fix "
            "the layer size)")
    return RuntimeError(f"matmul: shapes {sa} and {sb} cannot be multiplied: the last dim of "
                        f"the first ({sa[-1] if sa else '-'}) must equal the "
                        f"{'only' if len(sb) == 1 else 'second-to-last'} dim of the second")


@public
def matmul(input, other) -> Tensor:  # noqa: A002
    """Matrix product with NumPy/PyTorch broadcasting of batch dims; 1-D operands allowed.

    Example:
        >>> import retrograd as torch
        >>> (torch.ones(2, 3) @ torch.ones(3)).shape
        torch.Size([2])
    """
    a, b = input, other
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        raise TypeError("matmul expects two tensors")
    if a._data.ndim == 0 or b._data.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a._data.dtype != b._data.dtype:
        return _matmul_mixed(a, b)
    na, nb = a._data.ndim, b._data.ndim
    if na == 2 and nb == 2:
        op = T.mm_ops["mm"]
    elif na == 1 and nb == 1:
        op = T.mm_ops["dot"]
    elif na == 2 and nb == 1:
        op = T.mm_ops["mv"]
    elif na == 3 and nb == 3 and a._data.shape[0] == b._data.shape[0]:
        op = T.mm_ops["bmm"]
    else:
        op = T.mm_ops["matmul"]
    try:
        r = apply(op, (a, b))
        if op is T.mm_ops["matmul"] and r._gfn is not None:
            _save_copies(a, b, r._gfn)
    except ValueError:
        raise _mm_error(a, b) from None
    if na > 1 and nb > 1 and a._data.shape[-1] == 1:
        _gemm_outer_zeros(a, b, r)
    return r


# Note [What matmul saves]
# PyTorch's matmul (at::_matmul_impl) reshapes a batched operand before its mm, mv or
# bmm: folded into a matrix (_should_fold; the second operand as its mT), or with its
# broadcast batch flattened into one dim (the bmm path). Where that reshape cannot be a
# view (a transposed or permuted batch, a broadcast one), it copies, and the copy is
# what the product saves for the other operand's gradient: writing into the operand in
# place afterwards neither invalidates the graph nor changes the gradient. retrograd
# multiplies the operands as they are, and saves a copy (in the graph, as PyTorch's
# CloneBackward0) in exactly those cases. The reshape is NumPy's, whose no-copy rule is
# PyTorch's (computeStride). A batch of 2-D operands of one shape never copies (bmm).
def _save_copies(a: Tensor, b: Tensor, node) -> None:
    """Swap ``a``/``b`` in ``node._saved`` for copies where PyTorch saves its reshape's
    copy (Note [What matmul saves])."""
    da, db = a._data, b._data
    if da.ndim <= 2 and db.ndim <= 2:
        return  # dot, mv and mm: PyTorch reshapes nothing
    if da.flags.c_contiguous and (db.ndim <= 2 or (db.flags.c_contiguous and
                                                   da.shape[:-2] == db.shape[:-2])):
        return  # the common case: a contiguous batch folds or flattens as a view
    saved = node._saved
    if saved.__class__ is not list:  # packed by saved-tensor hooks: kept as they are
        return
    ca, cb = _copied_operands(da, db, a._rg, b._rg)
    for i, (x, copied) in enumerate(((a, ca), (b, cb))):
        if copied and saved[i] is x:
            saved[i] = c = clone(x)
            node._ver[i] = c._vc[0]


def _copied_operands(da: np.ndarray, db: np.ndarray, a_rg: bool, b_rg: bool) -> tuple:
    """Whether PyTorch's ``a @ b`` (one of them batched) reshapes a, and b, by a copy."""
    if da.ndim == 3 and db.ndim == 3 and da.shape[0] != db.shape[0]:
        # PyTorch drops a batch dim of 1 of an operand that needs a gradient
        if da.shape[0] == 1 and a_rg:
            da = da[0]
        elif db.shape[0] == 1 and b_rg:
            db = db[0]
    sa, sb = da.shape, db.shape
    if _should_fold(da, db, a_rg, b_rg):
        if da.ndim >= db.ndim:
            return not _reshapes_as_view(da, (math.prod(sa[:-1]), sa[-1])), False
        t1 = np.swapaxes(db, -1, -2)
        return False, not _reshapes_as_view(t1, (math.prod(t1.shape[:-1]), sb[-2]))
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    n = math.prod(batch)
    ea = np.broadcast_to(da, batch + ((sa[-2],) if da.ndim > 1 else (1,)) + sa[-1:])
    eb = np.broadcast_to(db, batch + sb[-2:])
    return (not _reshapes_as_view(ea, (n,) + ea.shape[-2:]),
            not _reshapes_as_view(eb, (n,) + (sb[-2:] if db.ndim > 1 else sb)))


def _reshapes_as_view(x: np.ndarray, shape: tuple) -> bool:
    try:
        np.reshape(x, shape, copy=False)
    except ValueError:
        return False
    return True


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


@public
def mm(input, mat2) -> Tensor:  # noqa: A002
    """Product of two 2-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.mm(torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm got {input.ndim}-D and {mat2.ndim}-D)")
    return matmul(input, mat2)


@public
def bmm(input, mat2) -> Tensor:  # noqa: A002
    """Batched product of two 3-D tensors.

    Example:
        >>> import retrograd as torch
        >>> torch.bmm(torch.ones(4, 2, 3), torch.ones(4, 3, 5)).shape
        torch.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm got {input.ndim}-D and "
                           f"{mat2.ndim}-D)")
    return matmul(input, mat2)


@public
def mv(input, vec) -> Tensor:  # noqa: A002
    """Matrix-vector product.

    Example:
        >>> import retrograd as torch
        >>> torch.mv(torch.eye(2), torch.tensor([1., 2.]))
        tensor([1., 2.])
    """
    return matmul(input, vec)


@public
def dot(input, other) -> Tensor:  # noqa: A002
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


inner = alias("inner", dot)


@public
def outer(input, vec2) -> Tensor:  # noqa: A002
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


@public(inplace=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``.

    Example:
        >>> import retrograd as torch
        >>> torch.addmm(torch.zeros(2, 2), torch.eye(2), torch.eye(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    a, b, c = input._data, mat1._data, mat2._data
    # (float16/bfloat16 take the float32 path below: it rounds each gradient as torch does)
    if b.ndim == 2 and c.ndim == 2 and b.shape[1] == c.shape[0] and a.dtype == b.dtype == \
            c.dtype and b.dtype in FLOAT_NP and b.dtype not in _LOW and a.ndim <= 2 and \
            np.broadcast_shapes(a.shape, (b.shape[0], c.shape[1])) == (b.shape[0], c.shape[1]):
        return apply(T.addmm, (input, mat1, mat2), (beta, alpha))  # one AddmmBackward0 node
    low = mat1._data.dtype
    if low in _LOW and mat2._data.dtype == low and input._data.dtype == low:
        # torch forms beta * input + alpha * (mat1 @ mat2) in float32 and rounds once
        # (Note [Low-precision accumulation] in table_matmul.py); the casts' rules round each
        # gradient once too, as torch's low-precision AddmmBackward0 does
        f32 = D.float32
        return addmm(input.to(f32), mat1.to(f32), mat2.to(f32), beta=beta,
                     alpha=alpha).to(D.FROM_NP[low])
    prod_ = mm(mat1, mat2)
    if alpha != 1:
        prod_ = prod_ * alpha
    return prod_ + (input if beta == 1 else input * beta)


def _einsum_parse(eq: str, shapes):
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise RuntimeError(f"einsum(): {len(ins)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    ell_n = 0
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            ell_n = _py_max(ell_n, len(shape) - (len(sub) - 3))
    ell = "".join(free[:ell_n])
    new_ins = []
    for sub, shape in zip(ins, shapes):
        if "..." in sub:
            k = len(shape) - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_n - k:] if k else "")
        if len(sub) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(sub)}) does not match the number of dimensions "
                               f"({len(shape)}) for operand")
        new_ins.append(sub)
    if rhs is None:
        counts = collections.Counter("".join(new_ins))
        rhs = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return new_ins, rhs


@public(method=False)
def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation, differentiable in every operand (ellipsis supported).

    Example:
        >>> import retrograd as torch
        >>> torch.einsum('ij,jk->ik', torch.eye(2), torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ins, out = _einsum_parse(equation, [o.shape for o in operands])
    spec = ",".join(ins) + "->" + out
    rdt = result_type(*operands)
    ops_ = tuple(o if o.dtype == rdt else o.to(rdt) for o in operands)
    return apply(T.einsum_op(len(ops_)), ops_, (ins, out, spec))


@public
def tensordot(a, b, dims=2) -> Tensor:
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
