"""Op records of the construction, scatter-into-view and add-product ops: ``rot90``,
``diag_embed``, ``block_diag``, ``diagonal_scatter``/``select_scatter``/``slice_scatter``/
``as_strided_scatter``, ``addmv``/``addr``/``addbmm``/``baddbmm``, ``vdot``, ``rsub`` of two
tensors and ``sgn``. Part of the one table (``ops/records/table.py`` gathers every
record); the public functions are in _functions/construction.py,
_functions/scatter_views.py, _functions/add_products.py and
_functions/signs_bits_predicates.py.

Example:
    >>> import retrograd as torch
    >>> x = torch.arange(4.).reshape(2, 2).requires_grad_()
    >>> torch.rot90(x).grad_fn.name()
    'Rot90Backward0'
"""

from __future__ import annotations

import numpy as np

from ..._tensor.tensor import _make
from ..dispatch import apply
from ..jvp_rules import jvp_elementwise, jvp_linear, jvp_multilinear
from ..op import Op
from ..public import LOWER_PRECISION_FP
from .helpers import rule_zeros, zeros_like_of
from .shape import _diagonal_fwd, _strided_view

__all__ = ["rot90", "diag_embed", "block_diag", "diagonal_scatter", "select_scatter",
           "slice_scatter", "as_strided_scatter", "addmv", "addr", "addbmm", "baddbmm",
           "vdot", "rsub", "rsub_scalar_alpha", "sgn"]

# ---------------------------------------------------------------------------------
# rot90 and diag_embed: linear copies, each rule the inverse pick

rot90 = Op("rot90", lambda a, p: np.ascontiguousarray(np.rot90(a, p[0], p[1])),
           (lambda g, s, n: g.rot90(-n._p[0], n._p[1]),), jvp=jvp_linear)


def _diag_embed_fwd(a, p):
    offset, d1, d2 = p  # d1 < d2, dims of the result
    m = a.shape[-1] + abs(offset) if a.ndim else 1 + abs(offset)
    out = np.zeros(a.shape[:-1] + (m, m), a.dtype)
    _diagonal_fwd(out, (offset, -2, -1))[...] = a
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (d1, d2)))


diag_embed = Op("diag_embed", _diag_embed_fwd,
                (lambda g, s, n: g.diagonal(*n._p),), jvp=jvp_linear)


def _block_diag_fwd(*a):
    shapes, dt = a[-1]
    rows = sum(s[0] for s in shapes)
    cols = sum(s[1] for s in shapes)
    out = np.zeros((rows, cols), dt)
    r = c = 0
    for x, (h, w) in zip(a[:-1], shapes):
        out[r:r + h, c:c + w] = x.reshape(h, w)
        r, c = r + h, c + w
    return out


def _block_diag_vjp(g, s, n, needs):
    shapes, _ = n._p
    out, r, c = [], 0, 0
    for i, (h, w) in enumerate(shapes):
        out.append(g[r:r + h, c:c + w].reshape(n.input_shape(i)) if needs[i] else None)
        r, c = r + h, c + w
    return out


block_diag = Op("block_diag", _block_diag_fwd, _block_diag_vjp, jvp=jvp_linear)


# ---------------------------------------------------------------------------------
# Note [Scatter into a view]
# x.<view>_scatter(src, ...) is a copy of x with the view's elements replaced by src:
# out = x.clone(); out.<view>(...).copy_(src), in one node as PyTorch's
# <View>ScatterBackward0. The gradient of x is g with those elements zeroed (the same op
# applied to g and zeros), the gradient of src is the same view of g. One forward serves
# the four records; ``_VIEWS`` maps each to its writable NumPy view of the result.

def _slice_view(a, key):
    return a[key]


def _as_strided_view(a, p):
    return _strided_view(a, *p)


_VIEWS = {"diagonal_scatter": _diagonal_fwd, "select_scatter": _slice_view,
          "slice_scatter": _slice_view, "as_strided_scatter": _as_strided_view}


def _scatter_fwd(name):
    view = _VIEWS[name]

    def fwd(a, src, p):
        out = np.array(a, order="C", copy=True)
        view(out, p)[...] = src
        return out
    return fwd


def _scatter_input_rule(g, s, n):
    # zeros of src's shape (src's edge may be absent: read it off the view of g)
    src_shape = tuple(_scatter_src_rule(g, s, n).shape)
    return apply(n._op, (g, rule_zeros(src_shape, g._data.dtype)), n._p)


def _as_strided_positions(shape, p) -> np.ndarray:
    numel = int(np.prod(shape, dtype=np.int64))
    where = _strided_view(np.arange(numel, dtype=np.int64), *p)
    return np.ascontiguousarray(where).reshape(-1)


def _scatter_src_rule(g, s, n):
    name, p = n._op.name, n._p
    if name == "diagonal_scatter":
        return g.diagonal(*p)
    if name == "as_strided_scatter":
        pos = _make(_as_strided_positions(n.input_shape(0), p))
        return g.reshape(-1)[pos].reshape(tuple(p[0]))
    return g[p]


diagonal_scatter, select_scatter, slice_scatter, as_strided_scatter = (
    Op(name, _scatter_fwd(name), (_scatter_input_rule, _scatter_src_rule), jvp=jvp_linear)
    for name in ("diagonal_scatter", "select_scatter", "slice_scatter", "as_strided_scatter"))


# ---------------------------------------------------------------------------------
# Note [Add-product records]
# addmv, addr, addbmm and baddbmm are ``beta * input + alpha * product(b, c)``, one node
# each as PyTorch's (inputs: input, b, c; parameters (beta, alpha)). ``beta == 0`` ignores
# input (nan and inf in it do not propagate), as PyTorch. The rules: input gets
# ``beta * g`` (the engine sums it back to input's broadcast shape), the operands get
# ``alpha`` times the product's own rule.

def _product(kind, b, c):
    if kind == "addr":
        return np.multiply.outer(b, c)
    if kind == "addbmm":
        return np.matmul(b, c).sum(0) if b.shape[0] else np.zeros(
            (b.shape[1], c.shape[2]), np.result_type(b, c))
    return np.matmul(b, c)


def _addprod_fwd(kind):
    def fwd(a, b, c, p):
        beta, alpha = p
        prod = _product(kind, b, c)
        out = prod if alpha == 1 else prod * np.asarray(alpha, prod.dtype)
        if beta != 0:
            out = out + (a if beta == 1 else a * np.asarray(beta, a.dtype))
        else:
            out = np.broadcast_to(out, np.broadcast_shapes(a.shape, out.shape))
        return np.ascontiguousarray(out, dtype=prod.dtype)
    return fwd


def _scaled(t, k):
    return t if k == 1 else t * k


def _beta_rule(g, s, n):
    return _scaled(g, n._p[0])


_PRODUCT_RULES = {  # (rule of b, rule of c), each without alpha
    "addmv": (lambda g, b, c: g.unsqueeze(-1) * c, lambda g, b, c: b.mT @ g),
    "addr": (lambda g, b, c: g @ c, lambda g, b, c: g.mT @ b),
    "baddbmm": (lambda g, b, c: g @ c.mT, lambda g, b, c: b.mT @ g),
    "addbmm": (lambda g, b, c: g.unsqueeze(0) @ c.mT, lambda g, b, c: b.mT @ g.unsqueeze(0)),
}


def _operand_rule(kind, which):
    rule = _PRODUCT_RULES[kind][which]

    def vjp(g, s, n):
        return _scaled(rule(g, s[0], s[1]), n._p[1])
    return vjp


def _addprod_jvp(t, s, n, out):
    beta, alpha = n._p
    _, b, c = n._xs
    res = rule_zeros(out.shape, out._data.dtype)
    if t[0] is not None and beta != 0:
        res = res + _scaled(t[0], beta)
    for i, args in ((1, (t[1], c)), (2, (b, t[2]))):
        if t[i] is not None:
            res = res + apply(n._op, (rule_zeros((), out._data.dtype),) + args, (0, alpha))
    return res


def _addprod(kind, autocast=None):
    return Op(kind, _addprod_fwd(kind),
              (_beta_rule, _operand_rule(kind, 0), _operand_rule(kind, 1)), save=(1, 2),
              jvp=_addprod_jvp, autocast=autocast)


addmv = _addprod("addmv")
addr = _addprod("addr")
addbmm = _addprod("addbmm", LOWER_PRECISION_FP)
baddbmm = _addprod("baddbmm", LOWER_PRECISION_FP)

vdot = Op("vdot", lambda a, b: np.asarray(np.dot(a, b)),
          (lambda g, s, n: g * s[1], lambda g, s, n: g * s[0]), save=(0, 1),
          jvp=jvp_multilinear)


# ---------------------------------------------------------------------------------
# rsub(input, other, alpha) = other - alpha * input (RsubBackward0; the number form is
# table.rsub_scalar) and sgn (sign for real tensors, its own SgnBackward0 node)

def _rsub_fwd(a, b, alpha):
    out = np.subtract(b, np.multiply(a, np.asarray(alpha, a.dtype)) if alpha != 1 else a)
    return out.astype(np.result_type(a, b), copy=False)


rsub = Op("rsub", _rsub_fwd, (lambda g, s, n: _scaled(-g, n._p), lambda g, s, n: g),
          jvp=jvp_elementwise)
# a number ``other`` with ``alpha``: rsub.Scalar's RsubBackward1 (table.rsub_scalar is the
# ``alpha == 1`` form, ``number - tensor``)
rsub_scalar_alpha = Op("rsub_scalar_alpha", _rsub_fwd,
                       (lambda g, s, n: _scaled(-g, n._p), None), node_name="RsubBackward1",
                       jvp=jvp_elementwise)


def _sgn_fwd(a):
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind != "f":
        return np.sign(a)
    return ((a > 0).astype(a.dtype) - (a < 0).astype(a.dtype))


sgn = Op("sgn", _sgn_fwd, (lambda g, s, n: zeros_like_of(g),), jvp=jvp_elementwise, batch_ok=True)


# ---------------------------------------------------------------------------------
# integer ops without a gradient: gcd, lcm and the shifts (PyTorch's: a shift by a
# negative amount or by at least the width gives 0, or -1 for a negative value shifted
# right)

def _shift_fwd(left: bool):
    def fwd(a, b):
        bits = a.dtype.itemsize * 8
        out_of_range = (b < 0) | (b >= bits)
        safe = np.where(out_of_range, 0, b).astype(a.dtype, copy=False)
        if left:
            return np.where(out_of_range, 0, np.left_shift(a, safe)).astype(a.dtype)
        fill = np.where(a < 0, -1, 0) if a.dtype.kind == "i" else 0
        return np.where(out_of_range, fill, np.right_shift(a, safe)).astype(a.dtype)
    return fwd


bitwise_left_shift = Op("bitwise_left_shift", _shift_fwd(True))
bitwise_right_shift = Op("bitwise_right_shift", _shift_fwd(False))
gcd = Op("gcd", np.gcd)
lcm = Op("lcm", np.lcm)
__all__ += ["bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"]


# ---------------------------------------------------------------------------------
# Note [Copies of views]
# ``<view>_copy`` is the view's values in a new tensor. One record per function (PyTorch
# names the node after the view's, ``ViewBackward0_copy``); each takes the flat positions
# of the view's elements in the input (the view function run on ``arange(numel)``, as
# Note [Views by index maps]) and gathers them, and its rule scatter-adds g back there, so
# expand_copy and the overlapping as_strided_copy/unfold_copy sum their repeats. The
# copies of the multi-output views (split_copy, split_with_sizes_copy, unbind_copy) are one
# node with an output per piece, as PyTorch's: their parameter is the tuple of the pieces'
# positions.

def _gather_fwd(a, pos):
    return np.ascontiguousarray(np.ascontiguousarray(a).reshape(-1)[pos])


def _gather_rule(g, s, n):
    shape = tuple(n.input_shape(0))
    flat = rule_zeros((int(np.prod(shape, dtype=np.int64)),), n.input_dtype(0))
    pos = _make(np.ascontiguousarray(n._p).reshape(-1))
    return flat.index_put((pos,), g.reshape(-1), accumulate=True).reshape(shape)


#: copy function (or its variant) -> the node's name
COPY_NODE_NAMES = {
    "view_copy": "ViewBackward0_copy", "t_copy": "TBackward0_copy",
    "permute_copy": "PermuteBackward0_copy", "diagonal_copy": "DiagonalBackward0_copy",
    "expand_copy": "ExpandBackward0_copy", "narrow_copy": "NarrowCopyBackward0",
    "select_copy": "SelectBackward0_copy", "slice_copy": "SliceBackward0_copy",
    "split_copy": "SplitBackward0_copy", "split_with_sizes_copy":
    "SplitWithSizesBackward0_copy", "squeeze_copy": "SqueezeBackward0_copy",
    "squeeze_copy_dim": "SqueezeBackward1_copy", "squeeze_copy_dims": "SqueezeBackward2_copy",
    "transpose_copy": "TransposeBackward0_copy", "unbind_copy": "UnbindBackward0_copy",
    "unfold_copy": "UnfoldBackward0_copy", "unsqueeze_copy": "UnsqueezeBackward0_copy",
    "alias_copy": "AliasBackward0_copy", "as_strided_copy": "AsStridedBackward0_copy",
}
def _gather_pieces_fwd(a, pieces):
    if len(pieces) == 1:  # a node of one output holds an array, not a tuple
        return _gather_fwd(a, pieces[0])
    return tuple(_gather_fwd(a, pos) for pos in pieces)


def _gather_pieces_vjp(g, s, n, needs):
    gs = [g] if n._nout == 1 else g
    shape = tuple(n.input_shape(0))
    flat = rule_zeros((int(np.prod(shape, dtype=np.int64)),), n.input_dtype(0))
    for gk, pos in zip(gs, n._p):
        if gk is not None:
            flat = flat.index_put((_make(np.ascontiguousarray(pos).reshape(-1)),),
                                  gk.reshape(-1), accumulate=True)
    return [flat.reshape(shape)]


def _gather_pieces_jvp(t, s, n, out):
    return apply(n._op, (t[0],), n._p, nout=len(n._p))


MULTI_OUTPUT_COPIES = ("split_copy", "split_with_sizes_copy", "unbind_copy")
copy_ops = {name: Op(name, _gather_pieces_fwd, _gather_pieces_vjp, node_name=node,
                     jvp=_gather_pieces_jvp) if name in MULTI_OUTPUT_COPIES else
            Op(name, _gather_fwd, (_gather_rule,), node_name=node, jvp=jvp_linear)
            for name, node in COPY_NODE_NAMES.items()}
__all__ += ["copy_ops", "COPY_NODE_NAMES", "MULTI_OUTPUT_COPIES"]
