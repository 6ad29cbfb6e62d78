"""Forward-mode AD: dual tensors (a primal and its tangent) pushed through every op.

Inside ``dual_level()``, ``make_dual(x, t)`` gives a tensor that carries the tangent
``t``; every op then computes its output's tangent (the Jacobian-vector product
J t) from its JVP rule, and ``unpack_dual(y)`` returns ``(primal, tangent)``.

Example:
    >>> import retrograd as torch
    >>> import retrograd.autograd.forward_ad as fwAD
    >>> x = torch.tensor([0.0, 1.0])
    >>> with fwAD.dual_level():
    ...     y = torch.sin(fwAD.make_dual(x, torch.ones(2))) * 2
    ...     fwAD.unpack_dual(y).tangent
    tensor([2.0000, 1.0806])
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

from .._grad_mode import _DecoratorContextManager

# PyTorch's API; the rule helpers (jvp_*) and the dispatch hook (fw_op) are used by
# ops/table.py and ops/dispatch.py.
__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


# Note [Forward AD state]
# One thread-local flag, ``FW.active``, tells the dispatch path whether any dual
# level is open; ops read it once and pay nothing else when it is off. A tangent
# lives in the tensor's ``__dict__`` under ``_fw_grad`` (a class-level default of
# None, Note [Tensor fields]: tensors without a tangent stay as small as before).
# Every tensor (and node, see Note [Forward grads of saved outputs]) that gets a
# tangent is remembered weakly so leaving the level can drop them all, as PyTorch
# does. Only one level at a time, as in PyTorch ("Nested forward mode AD is not
# supported at the moment"); nested transforms (``func.jvp`` of ``func.jvp``) use
# reverse mode instead.
class _FwState(threading.local):
    def __init__(self):
        self.active = False
        self.level = -1
        self.owners: list = []


FW = _FwState()


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` returned by ``unpack_dual``; ``tangent`` is None when absent.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.autograd.forward_ad import unpack_dual
        >>> unpack_dual(torch.ones(1)).tangent is None
        True
    """

    primal: object
    tangent: object


def enter_dual_level() -> int:
    """Open a forward-AD level and return its index (0: levels do not nest).

    Example:
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> lvl = fwAD.enter_dual_level(); fwAD.exit_dual_level(); lvl
        0
    """
    if FW.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    FW.level = 0
    FW.owners = []
    FW.active = True
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the current forward-AD level; every tangent made inside it is dropped.

    Example:
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> _ = fwAD.enter_dual_level(); fwAD.exit_dual_level()
    """
    if level is None:
        level = FW.level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != FW.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in FW.owners:
        obj = ref()
        if obj is not None:
            d = obj.__dict__
            d.pop("_fw_grad", None)
            d.pop("_fw_out", None)
    FW.owners = []
    FW.level = -1
    FW.active = False


class dual_level(_DecoratorContextManager):
    """Context manager (or decorator) that opens a forward-AD level for its block.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(torch.tensor([3.0]), torch.tensor([1.0]))
        ...     fwAD.unpack_dual(d * d).tangent
        tensor([6.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def get_tangent(t):
    """The tangent of ``t`` at the open level, or None."""
    return t._fw_grad


def set_tangent(t, tangent) -> None:
    """Attach ``tangent`` to ``t`` (remembered so the level's exit can drop it)."""
    if t._fw_grad is None:
        FW.owners.append(weakref.ref(t))
    t._fw_grad = tangent


def make_dual(tensor, tangent, *, level: int | None = None):
    """A dual tensor: an alias of ``tensor`` (differentiable) carrying ``tangent``.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(torch.tensor([2.0]), torch.tensor([1.0]))
        ...     fwAD.unpack_dual(d.exp()).tangent
        tensor([7.3891])
    """
    from .._tensor import Tensor
    from ..ops import table as T
    from ..ops.dispatch import view_apply

    if level is None:
        level = FW.level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level != FW.level:
        raise RuntimeError(f"Trying to make a dual Tensor at level {level}, but the open level "
                           f"is {FW.level}: levels do not nest in forward-mode AD.")
    if not isinstance(tensor, Tensor) or not tensor.is_floating_point():
        dt = tensor.dtype if isinstance(tensor, Tensor) else type(tensor).__name__
        raise ValueError(f"Expected primal to be floating point or complex, but got: {dt}")
    if not isinstance(tangent, Tensor) or not tangent.is_floating_point():
        dt = tangent.dtype if isinstance(tangent, Tensor) else type(tangent).__name__
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {dt}")
    if get_tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    prev = FW.active
    FW.active = False
    try:
        out = view_apply(T.alias, tensor, None)
    finally:
        FW.active = prev
    set_tangent(out, tangent)
    return out


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; the primal is a differentiable alias.

    Example:
        >>> import retrograd as torch
        >>> import retrograd.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     p, t = fwAD.unpack_dual(fwAD.make_dual(torch.ones(2), torch.zeros(2)))
        >>> p, t
        (tensor([1., 1.]), tensor([0., 0.]))
    """
    from ..ops import table as T
    from ..ops.dispatch import view_apply

    if level is None:
        level = FW.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tan = get_tangent(tensor)
    prev = FW.active
    FW.active = False
    try:
        primal = view_apply(T.alias, tensor, None)
    finally:
        FW.active = prev
    return UnpackedDualTensor(primal, tan)


# ----------------------------------------------------------------------------------
# The dispatch hook and the rule helpers


class _FwNode:
    """What a rule reads from a node (``_p``, input shapes in ``_edges``), without a graph."""

    __slots__ = ("_p", "_edges", "_nout", "_op", "_xs")

    def __init__(self, op, inputs, p, nout):
        from .._tensor import Tensor

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
        elif k.__class__ is str:
            s.append(out if k == "out" else out[int(k[3:])])
        else:
            s.append(inputs[k])
    return tuple(s)


ELEMENTWISE, VIEW, GENERAL = 1, 2, 0


# Note [JVP rules]
# A JVP rule is ``rule(t, s, n, out) -> Tensor`` (a tuple for multi-output ops): ``t``
# the input tangents (None where the tangent is zero or the input is not a
# tensor), ``s`` the saved values in the op's ``save`` order (as for its vjp
# rules), ``n`` a node-like object (``n._p``, ``n._edges[i][2]`` the shape of input
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
    from .._tensor import Tensor

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
    from .._dtype import FROM_NP
    from ..ops.creation import zeros

    e = n._edges[i]
    return zeros(e[2], dtype=FROM_NP[e[3]])


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
        from ..ops.creation import zeros_like

        return zeros_like(out)
    return _expand_to(res, out)


def jvp_linear(t, s, n, out):
    """Linear op: the op itself applied to the tangents (zeros for missing float tangents
    and for constant number operands); indices and masks are passed through unchanged."""
    from ..ops._core import FLOAT_NP
    from ..ops.dispatch import apply

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
    from ..ops.dispatch import view_apply

    return view_apply(n._op, t[0], n._p)


def jvp_reduction(t, s, n, out):
    """Reduction whose vjp is "broadcast g, times D": J t = sum over reduced dims of D * t."""
    from ..ops.creation import ones_like
    from ..ops.functions import sum as rsum

    op = n._op
    d = op.vjp[0](ones_like(out), s, n)
    if d is None:  # the rule says "no gradient" (e.g. the 0-norm): a zero tangent
        from ..ops.creation import zeros_like

        return zeros_like(out)
    axes, keepdim = n._p[0], n._p[1]
    prod = d * t[0]
    if axes is None:
        r = rsum(prod)
        if keepdim:
            r = r.reshape((1,) * len(n._edges[0][2]))
        return r
    return rsum(prod, dim=axes, keepdim=keepdim)


def jvp_multilinear(t, s, n, out):
    """Multilinear op (matmul, einsum): one term per input, the others held at their primal."""
    from ..ops.dispatch import apply

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
    from .._grad_mode import STATE
    from ..ops.creation import zeros_like
    from ..ops.functions import sum_to
    from .engine import run_backward

    op = n._op
    outs = out if isinstance(out, tuple) else (out,)
    vs = [None if o is None or not o.is_floating_point() else zeros_like(o).requires_grad_()
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
            shape = n._edges[i][2]
            if u._data.shape != shape:
                u = sum_to(u, shape)
            roots.append(u)
            gos.append(ti.to(u.dtype) if ti.dtype != u.dtype else ti)
        live = [v for v in vs if v is not None]
        if not roots:
            res = [zeros_like(o) if v is not None else None for o, v in zip(outs, vs)]
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
                res.append(zeros_like(o) if r is None else r)
    finally:
        STATE.enabled = prev
    return tuple(res) if isinstance(out, tuple) else res[0]


def inplace_tangent(self, res) -> None:
    """``self`` was just overwritten in place with ``res``: its tangent becomes ``res``'s,
    written into the existing tangent memory so views of it (and their bases) see it."""
    from ..ops.creation import zeros_like
    from ..ops.dispatch import replay_view

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
                bt = zeros_like(base)
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
