"""Op-database entries of the construction, scatter-into-view, add-product, view-copy and
extra elementwise ops (ops/records/construction.py and the functions of
_functions/construction.py, _functions/shape_composites.py,
_functions/scatter_views.py, _functions/add_products.py,
_functions/signs_bits_predicates.py, _functions/view_copies.py), loaded by opdb.py.
"""

from __future__ import annotations

import numpy as np

from opdb import A, S, _i64, binary, op, unary, vals


def _v(rng, *shape, dom="real", layout=None):
    return A(vals(rng, shape, dom), layout=layout)


# ---------------------------------------------------------------------------------
# construction and shape

op("rot90", lambda m, x, *a: m.rot90(x, *a),
   lambda rng: [S(_v(rng, 3, 4)), S(_v(rng, 2, 3, 4), 2, (1, 2)), S(_v(rng, 2, 3, 4), -1, [2, 0]),
                S(_v(rng, 3, 4), 0), S(_v(rng, 3, 4, layout="T"), 3), S(_v(rng, 3, 4), 1, (0, 0)),
                S(_v(rng, 3), 1)],
   ("rot90",), int_ok=True)
op("diag_embed", lambda m, x, *a: x.diag_embed(*a),
   lambda rng: [S(_v(rng, 3)), S(_v(rng, 2, 3), 1), S(_v(rng, 2, 3), -1, 0, 2),
                S(_v(rng, 2, 3), 0, -1, 0), S(_v(rng, 2, 3), 0, 1, 1), S(_v(rng, 0, 2))],
   ("diag_embed",), int_ok=True)
op("diagflat", lambda m, x, *a: m.diagflat(x, *a),
   lambda rng: [S(_v(rng, 3)), S(_v(rng, 2, 2), -1), S(_v(rng)), S(_v(rng, 2, 3, layout="T"), 2)],
   ("diag_embed",), int_ok=True)
op("block_diag", lambda m, *xs: m.block_diag(*xs),
   lambda rng: [S(_v(rng, 2, 3), _v(rng, 3), _v(rng)), S(_v(rng, 1, 2)),
                S(_v(rng, 2, 2), _v(rng, 0, 2), _v(rng, 3, 1, layout="T")),
                S(_v(rng, 2, 2), A(np.array([1.0, 2.0]), dtype="float32", grad=False),
                  desc="promotes"),
                S(_v(rng, 2, 2, 2))],
   ("block_diag",), int_ok=True)
op("meshgrid", lambda m, *xs, **k: m.meshgrid(*xs, **k),
   lambda rng: [S(_v(rng, 3), _v(rng, 2), indexing="ij"),
                S(_v(rng, 3), _v(rng, 2), _v(rng), indexing="xy"),
                S([_v(rng, 2), _v(rng, 4)], indexing="xy"), S(_v(rng, 3), indexing="xy"),
                S(_v(rng, 2, 2), _v(rng, 2), indexing="ij"), S(_v(rng, 2), indexing="ab")],
   ("view", "expand"), int_ok=True)
op("cartesian_prod", lambda m, *xs: m.cartesian_prod(*xs),
   lambda rng: [S(_v(rng, 3), _v(rng, 2)), S(_v(rng, 2), _v(rng, 1), _v(rng, 2)),
                S(_v(rng, 2, 2), _v(rng, 2))],
   ("stack", "expand"), int_ok=True)
op("combinations", lambda m, x, *a, **k: m.combinations(x, *a, **k),
   lambda rng: [S(_v(rng, 4)), S(_v(rng, 4), 3), S(_v(rng, 3), 2, with_replacement=True),
                S(_v(rng, 3), 1), S(_v(rng, 2), 3), S(_v(rng, 3), 0), S(_v(rng, 2, 2)),
                S(_v(rng, 3), -1)],
   ("stack", "masked_select"), int_ok=True)
op("atleast_nd", lambda m, *xs: (m.atleast_1d(*xs), m.atleast_2d(*xs), m.atleast_3d(*xs)),
   lambda rng: [S(_v(rng)), S(_v(rng, 3)), S(_v(rng, 2, 3)), S(_v(rng, 2, 3, 4)),
                S(_v(rng), _v(rng, 3), _v(rng, 2, 3))],
   ("view", "unsqueeze"), int_ok=True)
op("dstack_column_stack_row_stack",
   lambda m, *xs: (m.dstack(xs), m.column_stack(xs), m.row_stack(xs)),
   lambda rng: [S(_v(rng, 3), _v(rng, 3)), S(_v(rng, 2, 3), _v(rng, 2, 3)), S(_v(rng), _v(rng))],
   ("cat",), int_ok=True)
op("hsplit_vsplit_dsplit",
   lambda m, x, s, name: getattr(m, name)(x, s),
   lambda rng: [S(_v(rng, 2, 4, 2), 2, "hsplit"), S(_v(rng, 6), [1, 4], "hsplit"),
                S(_v(rng, 4, 3), [1, 3], "vsplit"), S(_v(rng, 4, 3), 2, "vsplit"),
                S(_v(rng, 1, 2, 4), [3, 1], "dsplit"), S(_v(rng, 2, 2, 2), 2, "dsplit"),
                S(_v(rng, 3, 4), 3, "hsplit"), S(_v(rng, 3), 1, "vsplit"),
                S(_v(rng, 3, 4, layout="T"), [2], "hsplit")],
   ("slice",), int_ok=True)
op("split_with_sizes", lambda m, x, *a: x.split_with_sizes(*a),
   lambda rng: [S(_v(rng, 5, 3), [1, 4]), S(_v(rng, 2, 6), [2, 0, 4], -1),
                S(_v(rng, 2, 6), [2, 3], 1)],
   ("split_with_sizes",), int_ok=True)
op("ravel", lambda m, x: m.ravel(x),
   lambda rng: [S(_v(rng, 3, 4)), S(_v(rng, 3, 4, layout="T")), S(_v(rng))],
   ("view",), int_ok=True)
op("swapdims", lambda m, x, a, b: m.swapdims(x, a, b),
   lambda rng: [S(_v(rng, 2, 3, 4), 0, 2), S(_v(rng, 3, 4), -1, 0)], ("transpose",), int_ok=True)


def _named(m, name, *a, **k):
    """``m.<name>(*a, **k)`` with a ``dtype`` given by its name."""
    if "dtype" in k:
        k["dtype"] = getattr(m, k["dtype"])
    return getattr(m, name)(*a, **k)


op("tril_triu_indices", _named,
   lambda rng: [S("tril_indices", 3, 4, -1), S("triu_indices", 3, 4, 1),
                S("tril_indices", 4, 3, 2, dtype="int32"), S("triu_indices", 0, 3),
                S("tril_indices", 3, 3, dtype="float64"), S("triu_indices", -1, 3)],
   differentiable=False)
op("window_functions", _named,
   lambda rng: [S("hann_window", 8), S("hann_window", 7, False, dtype="float64"),
                S("hamming_window", 9, True, 0.6, 0.3), S("blackman_window", 11),
                S("blackman_window", 6, False, dtype="float64"), S("bartlett_window", 8),
                S("bartlett_window", 7, False), S("kaiser_window", 8),
                S("kaiser_window", 9, False, 5.0, dtype="float64"), S("hann_window", 1),
                S("hann_window", 0), S("hann_window", -1), S("hann_window", 4, dtype="int64")],
   differentiable=False, f32_tol=(1e-6, 1e-6))

# ---------------------------------------------------------------------------------
# scatter into a view

op("diagonal_scatter", lambda m, x, s, *a: m.diagonal_scatter(x, s, *a),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 3)), S(_v(rng, 3, 4), _v(rng, 3), 1),
                S(_v(rng, 2, 3, 3), _v(rng, 3, 1), -1, 0, 2),
                S(_v(rng, 3, 4, layout="T"), _v(rng, 3)), S(_v(rng, 3, 4), _v(rng, 2)),
                S(_v(rng, 3, 3), _v(rng, 3), 0, 1, 1)],
   ("diagonal_scatter",), int_ok=True)
op("select_scatter", lambda m, x, s, *a: x.select_scatter(s, *a),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 4), 0, 1), S(_v(rng, 3, 4), _v(rng, 3), 1, -1),
                S(_v(rng, 2, 3, 4), _v(rng, 2, 4), 1, 2), S(_v(rng, 3, 4), _v(rng, 3), 0, 0),
                S(_v(rng, 3, 4), _v(rng, 4), 0, 5)],
   ("select_scatter",), int_ok=True)
op("slice_scatter", lambda m, x, s, *a, **k: m.slice_scatter(x, s, *a, **k),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 2, 4), 0, 1), S(_v(rng, 3, 4), _v(rng, 3, 2), 1,
                                                          step=2),
                S(_v(rng, 3, 4), _v(rng, 3, 1), 1, -2, 3), S(_v(rng, 3, 4), _v(rng, 3, 4)),
                S(_v(rng, 3, 4), _v(rng, 1, 4), 0, 0, 3, 2), S(_v(rng, 4), _v(rng, 2), 0, 2, 100)],
   ("slice_scatter",), int_ok=True)
# PyTorch 2.13's AsStridedScatterBackward0 gives input the gradient at the scattered
# positions only, and fails its own gradcheck; retrograd gives the true gradient (g with
# those positions zeroed), so only the numerical checks judge it (torch_grad=False)
op("as_strided_scatter", lambda m, x, s, *a: m.as_strided_scatter(x, s, *a),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 2), (2,), (5,), 1, torch_grad=False),
                S(_v(rng, 3, 4), _v(rng, 2, 2), (2, 2), (4, 1), torch_grad=False),
                S(_v(rng, 3, 4), _v(rng, 3), (2,), (5,)), S(_v(rng, 2, 2), _v(rng, 2), (2,),
                                                             (3,), 4)],
   ("as_strided_scatter",), int_ok=True)

# ---------------------------------------------------------------------------------
# add-products, vdot, chain_matmul

op("addmv", lambda m, c, x, y, **k: m.addmv(c, x, y, **k),
   lambda rng: [S(_v(rng, 3), _v(rng, 3, 4), _v(rng, 4)),
                S(_v(rng, 1), _v(rng, 3, 4, layout="T"), _v(rng, 4), beta=0.5, alpha=2.0),
                S(_v(rng), _v(rng, 3, 4), _v(rng, 4), beta=0),
                S(_v(rng, 3), _v(rng, 3, 0), _v(rng, 0)),
                S(_v(rng, 3), _v(rng, 3, 4), _v(rng, 3)), S(_v(rng, 3), _v(rng, 3), _v(rng, 3))],
   ("addmv",), inplace="addmv_", int_ok=True)
op("addr", lambda m, c, x, y, **k: m.addr(c, x, y, **k),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 3), _v(rng, 4)),
                S(_v(rng, 1, 4), _v(rng, 3), _v(rng, 4), beta=2.0, alpha=-1.5),
                S(_v(rng, 3, 4), _v(rng, 3), _v(rng, 4), beta=0),
                S(_v(rng, 3, 4), _v(rng, 3, 1), _v(rng, 4))],
   ("addr",), inplace="addr_", int_ok=True)
op("baddbmm", lambda m, c, x, y, **k: m.baddbmm(c, x, y, **k),
   lambda rng: [S(_v(rng, 2, 3, 4), _v(rng, 2, 3, 2), _v(rng, 2, 2, 4)),
                S(_v(rng, 3, 1), _v(rng, 2, 3, 2), _v(rng, 2, 2, 4), beta=0.5, alpha=3.0),
                S(_v(rng, 2, 3, 4), _v(rng, 2, 3, 2), _v(rng, 2, 2, 4), beta=0),
                S(_v(rng, 2, 3, 4), _v(rng, 2, 3, 2), _v(rng, 2, 3, 4))],
   ("baddbmm",), inplace="baddbmm_", int_ok=True)
op("addbmm", lambda m, c, x, y, **k: m.addbmm(c, x, y, **k),
   lambda rng: [S(_v(rng, 3, 4), _v(rng, 2, 3, 2), _v(rng, 2, 2, 4)),
                S(_v(rng, 4), _v(rng, 2, 3, 2), _v(rng, 2, 2, 4), beta=-1.0, alpha=0.5,
                  inplace=False, desc="broadcast input (torch's addbmm_ resizes self)"),
                S(_v(rng, 3, 4), _v(rng, 0, 3, 2), _v(rng, 0, 2, 4)),
                S(_v(rng, 3, 4), _v(rng, 3, 2), _v(rng, 2, 4))],
   ("addbmm",), inplace="addbmm_", int_ok=True)
op("vdot", lambda m, x, y: m.vdot(x, y),
   lambda rng: [S(_v(rng, 4), _v(rng, 4)), S(_v(rng, 0), _v(rng, 0)),
                S(_v(rng, 3), _v(rng, 4)), S(_v(rng, 2, 2), _v(rng, 4))],
   ("vdot",), int_ok=True)
op("chain_matmul", lambda m, *xs: m.chain_matmul(*xs),
   lambda rng: [S(_v(rng, 2, 3), _v(rng, 3, 4), _v(rng, 4, 2)), S(_v(rng, 2, 3), _v(rng, 3, 2)),
                S(_v(rng, 2, 3)), S(_v(rng, 2, 3), _v(rng, 3))],
   ("mm",))

# ---------------------------------------------------------------------------------
# elementwise

op("rsub", lambda m, x, y, **k: m.rsub(x, y, **k),
   binary(scalars=(2.5,), extra=lambda rng: [
       S(_v(rng, 3, 4), _v(rng, 4), alpha=2), S(_v(rng, 3, 4), 1.5, alpha=-2),
       S(_v(rng, 3, 4), 2, alpha=1)]),
   ("rsub", "rsub_scalar_alpha", "sub"), int_ok=True)
op("sgn", lambda m, x: m.sgn(x), unary("away0"), ("sgn",), inplace="sgn_", int_ok=True)
op("fix", lambda m, x: m.fix(x), unary("frac"), ("trunc",), inplace="fix_", int_ok=True)
op("true_divide", lambda m, x, y: m.true_divide(x, y), binary("real", "nz"), ("div",),
   inplace="true_divide_", int_ok=True)
op("signbit", lambda m, x: m.signbit(x),
   unary(extra=lambda rng: [S(A([-0.0, 0.0, np.nan, -np.inf]))]), differentiable=False,
   int_ok=True)
for _name in ("gcd", "lcm"):
    op(_name, lambda m, x, y, _n=_name: getattr(m, _n)(x, y),
       lambda rng: [S(_i64([4, -6, 0, 9]), _i64([6, 4, 0, -3])),
                    S(_i64([[12], [5]]), _i64([8, 10, 15])), S(_i64([3]), 2),
                    S(_v(rng, 3), _v(rng, 3))],
       (_name,), differentiable=False, int_ok=True, inplace=_name + "_")
for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    op(_name, lambda m, x, y, _n=_name: getattr(m, _n)(x, y),
       lambda rng: [S(_i64([1, -2, 3, -16]), _i64([3, 1, 70, 2])), S(_i64([[5], [-7]]), 2),
                    S(_i64([1, -8]), _i64([-1, 64])), S(_v(rng, 3), 1)],
       (_name,), differentiable=False, int_ok=True, inplace=_name + "_")
op("positive_conj", lambda m, x: (m.positive(x) * 1, m.conj(x) * 1, x.resolve_conj() * 1,
                                  m.resolve_neg(x) * 1, m.conj_physical(x) * 1),
   unary(), ("mul",), int_ok=True)

# ---------------------------------------------------------------------------------
# the *_copy forms of the views (Note [Copies of views])

_COPIES = {
    "view_copy": [((2, -1),)], "t_copy": [()], "permute_copy": [((2, 0, 1),)],
    "diagonal_copy": [(1, 0, 2)], "expand_copy": [((2, 3, 2, 4),)],
    "narrow_copy": [(2, 1, 2)], "select_copy": [(0, -1)], "slice_copy": [(2, 1, None, 2)],
    "split_copy": [(3, 2)], "split_with_sizes_copy": [([1, 3], 2)], "squeeze_copy": [(), (1,),
                                                                                   ((1, 0),)],
    "transpose_copy": [(0, 2)], "unbind_copy": [(2,)], "unfold_copy": [(2, 3, 1)],
    "unsqueeze_copy": [(-1,)], "alias_copy": [()], "as_strided_copy": [((2, 2), (1, 1), 1)],
}
_COPY_SQUEEZE = {(): "squeeze_copy", (1,): "squeeze_copy_dim", ((1, 0),): "squeeze_copy_dims"}
for _name, _variants in _COPIES.items():
    _shape = (3, 4) if _name == "t_copy" else (3, 1, 4)
    op(_name, lambda m, x, *a, _n=_name: getattr(m, _n)(x, *a),
       lambda rng, _v2=_variants, _s=_shape: [S(_v(rng, *_s), *a) for a in _v2],
       tuple(_COPY_SQUEEZE[a] for a in _variants) if _name == "squeeze_copy" else (_name,),
       int_ok=True)
