"""Forward-mode AD in the op layer: the JVP rules of op records and the interceptor that
attaches output tangents while a dual level is open (Note [Forward AD interceptor] in
_graph/forward_state.py).

Example:
    >>> import retrograd as torch
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.ones(2)) ** 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([2., 4.])
"""

from __future__ import annotations

import weakref

from .._core.grad_mode import STATE
from .._graph.engine import run_backward
from .._graph.forward_state import ELEMENTWISE, FW, VIEW, get_tangent, register, set_tangent
from .._graph.node import RuleInputs
from .._tensor.tensor import Tensor
from .dispatch import apply, replay_view, view_apply
from .op import FLOAT_NP
from .records.helpers import ones_like_of, rule_zeros, zeros_like_of

__all__ = ["fw_op", "attach", "inplace_tangent", "jvp_elementwise", "jvp_linear", "jvp_view",
           "jvp_reduction", "jvp_multilinear", "jvp_by_double_vjp"]


class _FwNode(RuleInputs):
    """What a rule reads from a node (``_p``, input shapes in ``_edges``), without a graph."""

    __slots__ = ("_p", "_edges", "_nout", "_op", "_xs")

    def __init__(self, op, inputs, p, nout):
        self._op = op
        self._xs = inputs
        self._p = p
        self._nout = nout
        self._edges = tuple((None, 0, x._data.shape, x._data.dtype) if isinstance(x, Tensor)
                            else None for x in inputs)

    def name(self) -> str:
        return self._op.node_name


def _saved(op, inputs, out, p=None) -> tuple:
    s = []
    for k in op.save:
        if k.__class__ is str and k[0] == "p":  # Note [Tensors saved from parameters]
            s.append(p[int(k[1:])])
        elif k.__class__ is str:  # "out" of a multi-output op is its first output
            if k == "out":
                s.append(out[0] if out.__class__ is tuple else out)
            else:
                s.append(out[int(k[3:])])
        else:
            s.append(inputs[k])
    return tuple(s)


# Note [JVP rules]
# A JVP rule is ``rule(t, s, n, out) -> Tensor`` (a tuple for multi-output ops): ``t``
# the input tangents (None where the tangent is zero or the input is not a
# tensor), ``s`` the saved values in the op's ``save`` order (as for its vjp
# rules), ``n`` a node-like object (``n._p``, ``n.input_shape(i)`` the shape of input
# i), ``out`` the primal output. Like vjp rules they are written with Tensor ops,
# so a tangent is itself differentiable (reverse-over-forward). Most rules come
# from four shapes of op:
#   * elementwise: the Jacobian is diagonal, so the vjp rule applied to the tangent
#     *is* the JVP; for several inputs the terms are summed (``jvp_elementwise``);
#   * linear (views, sum, cat, gather, index_put...): the op applied to the tangents
#     (``jvp_linear``, ``jvp_view``);
#   * reductions whose vjp is "broadcast g, times D": J t = sum(D * t) over the
#     reduced dims, with D = vjp(ones) (``jvp_reduction``);
#   * multilinear (matmul, einsum): one term per input (``jvp_multilinear``).
# An op with no rule falls back to ``jvp_by_double_vjp``: the vjp is linear in its
# cotangent v, so J t = d/dv <vjp(v), t>, one extra backward of the vjp rule.
# Rules run with forward AD switched off, so tangents never get tangents of their own.
def fw_op(op, inputs, out, p, kind: int) -> None:
    """Attach the output tangent(s) of ``op(inputs) -> out`` (called from dispatch)."""
    tans = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            tg = x._fw_grad
            if tg is not None:
                if tans is None:
                    tans = [None] * len(inputs)
                tans[i] = tg
    if tans is None:
        return
    multi = isinstance(out, tuple)
    outs = out if multi else (out,)
    if not any(o is not None and o.is_floating_point() for o in outs):
        return
    rule = op.jvp
    if rule is None:
        if op.vjp is None:
            return
        rule = jvp_view if kind == VIEW else (jvp_elementwise if kind == ELEMENTWISE
                                              else jvp_by_double_vjp)
    n = _FwNode(op, inputs, p, len(outs))
    FW.active = False
    try:
        res = rule(tans, _saved(op, inputs, out, p), n, out)
    finally:
        FW.active = True
    attach(outs, res if multi else (res,), op.node_name)


# Note [Forward grads of saved outputs]
# A node keeps the outputs its rules need as raw arrays (``Node._out``: no reference
# cycle through grad_fn) and makes a fresh tensor for them at backward time. For
# forward-over-reverse (hvp) that fresh tensor must carry the output's tangent, or
# the backward rules of exp, tanh, sqrt... would see a constant and the Hessian-vector
# product would silently miss terms. So the tangent is also kept on the node, in its
# ``__dict__`` under ``_fw_out`` (output number -> tangent), and ``Node._out_tensor``
# re-attaches it; leaving the level drops it with the other tangents.
def attach(outs, res, who: str) -> None:
    """Give each output its tangent (checked against the output's shape)."""
    for k, (o, r) in enumerate(zip(outs, res)):
        if o is None or r is None or not o.is_floating_point():
            continue
        if r._data.shape != o._data.shape:
            raise RuntimeError(
                f"Forward AD: {who} produced a tangent of shape {list(r.shape)} for output {k} "
                f"of shape {list(o.shape)}; a JVP rule must return one tangent per output with "
                "that output's shape.")
        set_tangent(o, r)
        fn = o.grad_fn
        if fn is not None and fn._out is not None:  # Note [Forward grads of saved outputs]
            if fn._fw_out is None:
                fn._fw_out = {}
                FW.owners.append(weakref.ref(fn))
            fn._fw_out[o._out_nr] = r


def _zeros_for(n, i):
    e = n._edges[i]
    return rule_zeros(e[2], e[3])


def _expand_to(r, out):
    if r is not None and r._data.shape != out._data.shape:
        r = r.expand(out.shape)
    return r


def jvp_elementwise(t, s, n, out):
    """Elementwise op: the vjp rule of each input applied to its tangent, summed."""
    op = n._op
    res = None
    for i, ti in enumerate(t):
        if ti is None:
            continue
        if op.per_input:
            rule = op.vjp[i]
            if rule is None:
                continue
            r = rule(ti, s, n)
        else:
            needs = tuple(k == i for k in range(len(t)))
            r = op.vjp(ti, s, n, needs)[i]
        if r is None:
            continue
        res = r if res is None else res + r
    if res is None:
        return zeros_like_of(out)
    return _expand_to(res, out)


def jvp_linear(t, s, n, out):
    """Linear op: the op itself applied to the tangents (zeros for missing float tangents
    and for constant number operands); indices and masks are passed through unchanged."""
    args = []
    for i, (ti, x) in enumerate(zip(t, n._xs)):
        e = n._edges[i]
        if ti is not None:
            args.append(ti)
        elif e is not None and e[3] in FLOAT_NP:
            args.append(_zeros_for(n, i))
        elif x.__class__ in (int, float):
            args.append(x.__class__(0))  # a constant operand: the op is affine in it
        else:
            args.append(x)
    if n._nout > 1:
        return apply(n._op, tuple(args), n._p, nout=n._nout)
    return apply(n._op, tuple(args), n._p)


def jvp_view(t, s, n, out):
    """View op: the same view of the tangent (so a view's tangent is a view of the tangent)."""
    return view_apply(n._op, t[0], n._p)


def jvp_reduction(t, s, n, out):
    """Reduction whose vjp is "broadcast g, times D": J t = sum over reduced dims of D * t."""
    op = n._op
    d = op.vjp[0](ones_like_of(out), s, n)
    if d is None:  # the rule says "no gradient" (e.g. the 0-norm): a zero tangent
        return zeros_like_of(out)
    axes, keepdim = n._p[0], n._p[1]
    prod = d * t[0]
    if axes is None:
        r = prod.sum()
        if keepdim:
            r = r.reshape((1,) * len(n.input_shape(0)))
        return r
    return prod.sum(dim=axes, keepdim=keepdim)


def jvp_multilinear(t, s, n, out):
    """Multilinear op (matmul, einsum): one term per input, the others held at their primal."""
    res = None
    for i, ti in enumerate(t):
        if ti is None:
            continue
        args = list(n._xs)
        args[i] = ti
        r = apply(n._op, tuple(args), n._p)
        res = r if res is None else res + r
    return res


def jvp_by_double_vjp(t, s, n, out):
    """Any op: J t = d/dv <vjp(v), t> (the vjp is linear in v), one backward of the vjp rule."""
    op = n._op
    outs = out if isinstance(out, tuple) else (out,)
    vs = [None if o is None or not o.is_floating_point() else zeros_like_of(o).requires_grad_()
          for o in outs]
    prev = STATE.enabled
    STATE.enabled = True
    try:
        g = vs[0] if len(vs) == 1 else vs
        needs = tuple(ti is not None for ti in t)
        if op.per_input:
            us = [rule(g, s, n) if need and rule is not None else None
                  for rule, need in zip(op.vjp, needs)]
        else:
            us = op.vjp(g, s, n, needs)
        roots, gos = [], []
        for i, (u, ti) in enumerate(zip(us, t)):
            if u is None or ti is None or not u._rg:
                continue
            shape = n.input_shape(i)
            if u._data.shape != shape:
                u = u.sum_to_size(shape)
            roots.append(u)
            gos.append(ti.to(u.dtype) if ti.dtype != u.dtype else ti)
        live = [v for v in vs if v is not None]
        if not roots:
            res = [zeros_like_of(o) if v is not None else None for o, v in zip(outs, vs)]
        else:
            got = run_backward(roots, gos, prev, prev, inputs=live, allow_unused=True,
                               accumulate=False)
            it = iter(got)
            res = []
            for o, v in zip(outs, vs):
                if v is None:
                    res.append(None)
                    continue
                r = next(it)
                res.append(zeros_like_of(o) if r is None else r)
    finally:
        STATE.enabled = prev
    return tuple(res) if isinstance(out, tuple) else res[0]


def inplace_tangent(self, res) -> None:
    """``self`` was just overwritten in place with ``res``: its tangent becomes ``res``'s,
    written into the existing tangent memory so views of it (and their bases) see it."""
    tr = get_tangent(res)
    ts = get_tangent(self)
    if tr is None and ts is None:
        return
    FW.active = False
    try:
        if ts is None and self._base is not None:
            base = self._base
            bt = get_tangent(base)
            if bt is None:
                bt = zeros_like_of(base)
                set_tangent(base, bt)
            ts = replay_view(self._vfn, bt)
            set_tangent(self, ts)
        if ts is None:
            set_tangent(self, tr if tr._data.shape == self._data.shape
                        else tr.expand(self.shape).clone())
            return
        if tr is None:
            ts._data[...] = 0
            ts._vc[0] += 1
            return
        if ts._rg and ts.grad_fn is None:
            set_tangent(self, tr.expand(self.shape) if tr.shape != self.shape else tr)
            return
        ts.copy_(tr)
    finally:
        FW.active = True


register(fw_op=fw_op, inplace_tangent=inplace_tangent)
