"""Op-database entries of the remaining ``torch`` tensor ops (_functions/native_forms.py,
ops/records/fill_split.py; issue 16), loaded by opdb.py."""

from __future__ import annotations

from opdb import A, S, op, vals

op("torch_fill", lambda m, x, v: m.fill(x, v),
   lambda rng: [S(A(vals(rng, (3, 4))), 2.5), S(A(vals(rng, (3, 4))), A(vals(rng, ()))),
                S(A(vals(rng, ())), A(vals(rng, ()))), S(A(vals(rng, (0, 2))), 1.0),
                S(A(vals(rng, (3, 4)), layout="T"), -1.0, desc="non-contiguous")],
   ("fill", "fill_tensor"))
op("unsafe_split", lambda m, x, s, *a: m.unsafe_split(x, s, *a),
   lambda rng: [S(A(vals(rng, (5, 3))), 2), S(A(vals(rng, (2, 6))), 3, 1),
                S(A(vals(rng, (2, 6))), 6, -1), S(A(vals(rng, (4, 3)), layout="T"), 2, 1),
                S(A(vals(rng, (5, 3))), [1, 4], desc="a list: TypeError, as torch")],
   ("unsafe_split",), int_ok=True)
op("unsafe_split_with_sizes", lambda m, x, s, *a: x.unsafe_split_with_sizes(s, *a),
   lambda rng: [S(A(vals(rng, (5, 3))), [2, 3]), S(A(vals(rng, (2, 6))), [1, 5], 1),
                S(A(vals(rng, (2, 6))), [2, 0, 4], -1)],
   ("unsafe_split_with_sizes",))
op("unsafe_chunk", lambda m, x, c, *a: x.unsafe_chunk(c, *a),
   lambda rng: [S(A(vals(rng, (5, 3))), 2), S(A(vals(rng, (2, 6))), 3, 1),
                S(A(vals(rng, (0, 3))), 2)],
   ("unsafe_split", "unsafe_split_with_sizes"))
op("adjoint", lambda m, x: m.adjoint(x),
   lambda rng: [S(A(vals(rng, (2, 3)))), S(A(vals(rng, (2, 3, 4)))), S(A(vals(rng, (0, 2))))],
   ("transpose",), int_ok=True)
op("t_", lambda m, x: (x * 1).t_(),
   lambda rng: [S(A(vals(rng, (2, 3)))), S(A(vals(rng, (3,)))), S(A(vals(rng, ())))],
   ("mul", "t_"))
op("transpose_", lambda m, x, a, b: (x * 1).transpose_(a, b),
   lambda rng: [S(A(vals(rng, (2, 3, 4))), 0, 2), S(A(vals(rng, (2, 3))), -1, 0)],
   ("mul", "transpose_"))
op("squeeze_", lambda m, x, *a: (x * 1).squeeze_(*a),
   lambda rng: [S(A(vals(rng, (1, 3, 1)))), S(A(vals(rng, (1, 3, 1))), 2),
                S(A(vals(rng, (1, 3, 1))), (0, 2)), S(A(vals(rng, (2, 3))), (0,))],
   ("mul", "squeeze_all_", "squeeze_inplace", "squeeze_dims_"))
op("unsqueeze_", lambda m, x, d: (x * 1).unsqueeze_(d),
   lambda rng: [S(A(vals(rng, (2, 3))), 1), S(A(vals(rng, ())), -1)],
   ("mul", "unsqueeze_"))
op("geqrf", lambda m, x: m.geqrf(x),
   lambda rng: [S(A(vals(rng, (4, 3)))), S(A(vals(rng, (3, 5)))), S(A(vals(rng, (2, 3, 3))))],
   ("geqrf",), differentiable=False)
