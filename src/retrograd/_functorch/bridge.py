"""Reverse-mode transforms inside vmap: leaves and gradients of batched tensors.

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import grad, vmap
    >>> vmap(grad(lambda x: (x ** 2).sum()))(torch.ones(2, 3))
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import autograd as _autograd
from .._tensor.tensor import Tensor
from .batched import VMAP_LEVELS, BatchedTensor, _size_of, full_physical, physical, wrap

__all__ = ["open_levels", "batched_leaf", "batched_grad", "physical_of", "batched_make_dual",
           "batched_unpack_dual"]


# Note [Transforms inside vmap]
# The autograd graph of a vmapped computation is the graph of its physical tensors (Note
# [Batching rules]), in which the batch elements never mix. A gradient transform inside
# vmap (vmap(grad(f))) therefore differentiates with respect to a *physical* leaf that
# holds every batch element: each element's gradient lands in its own slice. An input
# that is not batched at an open level (the shared parameters of the per-sample-gradient
# recipe) is expanded to the batch first (a stride-0 view, no copy), so that its
# gradient is per element too, as torch.func's is. autograd.grad then runs on the
# physical outputs, leaves and output gradients, and its results are batched again. A
# cotangent batched at a level opened after the graph was built (vmap of a vjp_fn, as
# jacrev does) is a batch of output gradients: autograd.grad's is_grads_batched.
def open_levels() -> tuple:
    """The levels of the open vmaps, outermost first."""
    return tuple(lv.level for lv in VMAP_LEVELS.stack)


def _sizes(levels) -> tuple:
    return tuple(_size_of(lv) for lv in levels)


def batched_leaf(t: Tensor, fresh: Callable[[Tensor], Tensor]) -> Tensor:
    """The leaf a transform inside vmap differentiates with respect to: ``fresh`` applied to
    ``t``'s physical tensor at every open level (Note [Transforms inside vmap])."""
    levels = open_levels()
    return wrap(fresh(full_physical(t, levels)), levels)


def physical_of(t: object) -> object:
    """A batched tensor's physical tensor (anything else as it is)."""
    return t._value if t.__class__ is BatchedTensor else t


def batched_grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
                 grad_outputs: Tensor | Sequence[Tensor | None] | None = None, **kwargs
                 ) -> tuple[Tensor | None, ...]:
    """autograd.grad for batched outputs, inputs or output gradients (Note [Transforms
    inside vmap]); the results batched as the inputs are."""
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is None:
        gos = [None] * len(outs)
    else:
        gos = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) else [grad_outputs]
    every = outs + ins + [g for g in gos if g is not None]
    if not any(x.__class__ is BatchedTensor for x in every):
        return _autograd.grad(outputs, inputs, grad_outputs, **kwargs)
    levels = set()
    for x in ins:
        if x.__class__ is BatchedTensor:
            levels.update(x._levels)
    s = tuple(sorted(levels))
    extra = set()
    for x in outs + gos:
        if x is not None and x.__class__ is BatchedTensor:
            extra.update(lv for lv in x._levels if lv not in levels)
    e = tuple(sorted(extra))
    p_ins = [physical(x, s) for x in ins]
    p_outs = [full_physical(o, s) for o in outs]
    if kwargs.get("is_grads_batched"):
        return _grads_batched(p_outs, p_ins, gos, s, levels, extra, kwargs)
    if not e:
        p_gos = [None if g is None else full_physical(g, s) for g in gos]
        if grad_outputs is None:
            from .._functions.creation import ones_like

            p_gos = [ones_like(o) for o in p_outs]
        res = _autograd.grad(p_outs, p_ins, p_gos, **kwargs)
        return tuple(None if r is None else wrap(r, s) for r in res)
    if any(o.__class__ is BatchedTensor and set(o._levels) & extra for o in outs):
        raise RuntimeError("vmap: an output of the function being differentiated is batched at "
                           "a vmap level its inputs are not batched at; retrograd cannot take "
                           "this gradient. Make the inputs batched at that level too.")
    allv = tuple(sorted(levels | extra))
    ne = len(e)
    pos_e = [allv.index(lv) for lv in e]
    pos_s = [allv.index(lv) for lv in s]
    n_e = 1
    for z in _sizes(e):
        n_e *= z
    p_gos = []
    for g, o in zip(gos, p_outs):
        if g is None:
            raise RuntimeError("vmap: output gradients are needed for every output")
        f = full_physical(g, allv)
        f = f.permute(pos_e + pos_s + list(range(len(allv), f.dim())))
        p_gos.append(f.reshape((n_e,) + tuple(o.shape)))
    res = _autograd.grad(p_outs, p_ins, p_gos, is_grads_batched=True, **kwargs)
    out = []
    for r in res:
        if r is None:
            out.append(None)
            continue
        r = r.reshape(_sizes(e) + tuple(r.shape[1:]))
        # (e dims, s dims, logical) -> the order of allv
        order = [0] * len(allv)
        for k, lv in enumerate(e):
            order[allv.index(lv)] = k
        for k, lv in enumerate(s):
            order[allv.index(lv)] = ne + k
        r = r.permute(order + list(range(len(allv), r.dim())))
        out.append(wrap(r, allv))
    return tuple(out)


def batched_make_dual(primal: Tensor, tangent: Tensor) -> Tensor:
    """forward_ad.make_dual inside vmap: the dual of the physical tensors at every open
    level (Note [Transforms inside vmap])."""
    from ..autograd import forward_ad as fwAD

    levels = open_levels()
    if not levels or (primal.__class__ is not BatchedTensor and
                      tangent.__class__ is not BatchedTensor):
        return fwAD.make_dual(primal, tangent)
    return wrap(fwAD.make_dual(full_physical(primal, levels), full_physical(tangent, levels)),
                levels)


def batched_unpack_dual(t: Tensor) -> tuple[Tensor, Tensor | None]:
    """forward_ad.unpack_dual of a batched tensor: its primal and tangent, batched."""
    from ..autograd import forward_ad as fwAD

    if t.__class__ is not BatchedTensor:
        return fwAD.unpack_dual(t)
    prim, tan = fwAD.unpack_dual(t._value)
    return type(fwAD.unpack_dual(prim))(wrap(prim, t._levels),
                                      None if tan is None else wrap(tan, t._levels))


def _grads_batched(p_outs, p_ins, gos, s, levels, extra, kwargs):
    """autograd.grad(..., is_grads_batched=True) inside vmap: each output gradient has a
    leading dim of its own (not a vmap level) before its logical shape."""
    if extra:
        raise RuntimeError("vmap: batched output gradients (is_grads_batched=True) that are "
                           "batched at a vmap level the inputs are not batched at are not "
                           "supported; make the inputs batched at that level too.")
    nb = len(s)
    p_gos = []
    for g, o in zip(gos, p_outs):
        if g.__class__ is BatchedTensor:
            f = full_physical(g, s)  # (levels, m, logical)
            p_gos.append(f.movedim(nb, 0))
        else:  # (m, logical): the same for every batch element
            m = g.shape[0]
            p_gos.append(g.unsqueeze(1).reshape((m,) + (1,) * nb + tuple(g.shape[1:]))
                         .expand((m,) + tuple(o.shape)))
    res = _autograd.grad(p_outs, p_ins, p_gos, **kwargs)
    return tuple(None if r is None else wrap(r.movedim(0, nb), s) for r in res)
