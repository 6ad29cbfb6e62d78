"""Function transforms in the style of torch.func / JAX: grad, vjp, jvp, jacrev, jacfwd, hessian.

Each transform takes a function of tensors (or of tuples, lists and dicts of tensors)
and returns a new function; transforms compose (``grad(grad(f))``, ``jacrev(jacfwd(f))``).

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import grad
    >>> x = torch.tensor(2.0)
    >>> grad(lambda x: x ** 3)(x), grad(grad(lambda x: x ** 3))(x)
    (tensor(12.), tensor(12.))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ._core.grad_mode import enable_grad
from ._functions.creation import zeros, zeros_like
from ._functions.namespace import cat
from ._functorch.batched import VMAP_LEVELS, BatchedTensor, wrap
from ._functorch.bridge import (
    batched_grad,
    batched_leaf,
    batched_make_dual,
    batched_unpack_dual,
    physical_of,
)
from ._functorch.functional_call import ModuleLike, functional_call, stack_module_state
from ._functorch.rearrange import rearrange
from ._functorch.vmap import vmap
from ._graph.node import AccumulateGrad
from ._graph.transforms import call_transformed
from ._tensor.tensor import Tensor
from .autograd import forward_ad as fwAD
from .autograd.forward_ad import get_tangent, set_tangent

_ModuleT = TypeVar("_ModuleT", bound=ModuleLike)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "linearize", "debug_unwrap",
           "replace_all_batch_norm_modules_", "rearrange", "functionalize"]


# Note [Transforms on the tape]
# retrograd has one autograd tape, so a transform is a reverse-mode (or forward-mode)
# computation on it, run with create_graph=True so that an enclosing transform can
# differentiate the result again. Each transform differentiates with respect to a
# fresh alias of its arguments (a view of an argument that already requires grad,
# so outer transforms still reach it; a new leaf otherwise), and gradients are
# taken with respect to those aliases only, so nested transforms do not confuse
# each other's perturbations. When a result depends on nothing but the transform's
# own aliases, its graph is dropped (as torch.func returns plain tensors); when it
# also depends on anything else that requires grad (an outer transform's alias, a
# parameter closed over), the graph is kept so that outer derivatives are right.
# Tangents of an open forward-AD level are kept throughout, so forward-mode
# transforms compose with reverse-mode ones (jacfwd(jacrev(f))). Forward-AD levels
# do not nest, so an inner jvp/jacfwd inside an open level uses reverse mode (the
# double-backward trick) instead; the numbers are the same.
#
# grad and grad_and_value know before their backward pass whether anything could
# differentiate their result again: only an open forward-AD level (jacfwd(grad(f))), or
# a loss whose graph reaches a leaf other than the transform's own aliases (an outer
# transform's alias, a parameter closed over: then _finish keeps the graph). Otherwise
# the graph of the gradients would be built only to be dropped, and the backward runs
# without create_graph, as ``.backward()`` does: the gradient equals x.grad bit for bit
# (tested), no nodes are recorded, and W9's per-sample-gradient step (vmap(grad(loss)))
# spends about 0.6 ms less beside its outer products (3.5 -> 2.9 ms, medians of 8
# alternating rounds in one process).


def _tensor_cls():

    return Tensor


# -- pytrees (tuples, lists, dicts of tensors) -------------------------------------

def _flatten(tree) -> tuple:
    """(leaves, spec) of a nest of tuples, lists and dicts."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            lv, sp = _flatten(x)
            leaves.extend(lv)
            specs.append(sp)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        keys = list(tree.keys())
        for k in keys:
            lv, sp = _flatten(tree[k])
            leaves.extend(lv)
            specs.append(sp)
        return leaves, (dict, keys, specs)
    return [tree], None


def _unflatten(leaves, spec):
    return _build(spec, iter(leaves))


def _build(sp, it):
    # (not a closure calling itself: a reference cycle per call; see vmap._build)
    if sp is None:
        return next(it)
    if sp[0] is dict:
        return {k: _build(s, it) for k, s in zip(sp[1], sp[2])}
    return sp[0](_build(s, it) for s in sp[1])


def _spec_str(spec) -> str:
    if spec is None:
        return "*"
    if spec[0] is dict:
        return "{" + ", ".join(f"{k!r}: {_spec_str(s)}" for k, s in zip(spec[1], spec[2])) + "}"
    inner = ", ".join(_spec_str(s) for s in spec[1])
    return f"({inner})" if spec[0] is tuple else f"[{inner}]"


# -- aliases, tangents, and graph pruning (Note [Transforms on the tape]) ----------

def _check_tensor(t, api: str):
    if not isinstance(t, _tensor_cls()):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    return t


def _fresh(t):
    """The alias a transform differentiates with respect to (keeps forward-AD tangents;
    inside vmap, Note [Transforms inside vmap] in _functorch/bridge.py)."""

    if VMAP_LEVELS.stack:
        return batched_leaf(t, _fresh_plain)
    return _fresh_plain(t)


def _fresh_plain(t):
    if t._rg:
        return t.view_as(t)
    a = t.detach()
    tan = get_tangent(t)
    if tan is not None:
        set_tangent(a, tan)
    return a.requires_grad_()


def _strip(t):
    """``t`` without its graph, keeping its forward-AD tangent (itself without graph)."""

    if t is None or not isinstance(t, _tensor_cls()):
        return t
    if t.__class__ is BatchedTensor:
        return wrap(_strip(t._value), t._levels)
    tan = get_tangent(t)
    if not t._rg and (tan is None or not tan._rg):
        return t
    d = t._detached()  # (the transform's own cut: no marker, Note [Cut markers])
    if tan is not None:
        set_tangent(d, tan._detached() if tan._rg else tan)
    return d


def _depends_on_others(tensors, own) -> bool:
    """True if a graph from ``tensors`` reaches a leaf that is not one of ``own``."""

    own_ids = {id(physical_of(t)) for t in own}
    tensors = [physical_of(t) for t in tensors]
    stack = [t.grad_fn for t in tensors
             if isinstance(t, _tensor_cls()) and t._rg and t.grad_fn is not None]
    for t in tensors:
        if isinstance(t, _tensor_cls()) and t._rg and t.grad_fn is None and id(t) not in own_ids:
            return True
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.__class__ is AccumulateGrad:
            var = node.variable
            if var is not None and id(var) not in own_ids:
                return True
            continue
        for e in node._edges:
            if e is not None:
                stack.append(e[0])
    return False


def _finish(results, own, outside: bool | None = None):
    """Drop the graphs of ``results`` (a flat list) and of their tangents, unless they
    reach outside ``own`` (``outside``: already known, False or True)."""

    if outside is None:
        T = _tensor_cls()
        tans = [get_tangent(r) for r in results if isinstance(r, T)]
        outside = _depends_on_others(results + [t for t in tans if t is not None], own)
    if outside:
        return results
    return [_strip(r) for r in results]


def _argnums(argnums, nargs: int) -> tuple:
    idx = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not idx:
        raise RuntimeError("argnums must be non-empty")
    for a in idx:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in idx)


def _flatten_argnums(args: list, argnums, api: str, fresh: bool = False) -> tuple:
    """``(indices, flats, specs)``: the tensor leaves of each differentiated argument and
    how to rebuild its structure (every leaf checked to be a Tensor). With ``fresh`` the
    leaves are fresh aliases, also put in place of the arguments in ``args``."""
    idx = _argnums(argnums, len(args))
    flats, specs = [], []
    for i in idx:
        leaves, spec = _flatten(args[i])
        for t in leaves:
            _check_tensor(t, api)
        if fresh:
            leaves = [_fresh(t) for t in leaves]
            args[i] = _unflatten(leaves, spec)
        flats.append(leaves)
        specs.append(spec)
    return idx, flats, specs


def _prepare_args(args, argnums):
    """Replace the differentiated arguments by fresh aliases; return the new args, the
    flat aliases, and how to rebuild the per-argnum structure."""
    args = list(args)
    _, flats, specs = _flatten_argnums(args, argnums, "grad", fresh=True)
    return args, flats, specs


def _split_aux(output, has_aux: bool, api: str) -> tuple:
    """``(output, aux)`` of ``f``'s result (aux None unless ``has_aux``)."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return output


def _check_only_tensors(leaves, api: str, call: str) -> None:
    for o in leaves:
        if not isinstance(o, _tensor_cls()):
            raise RuntimeError(f"{api}: Expected {call} to return only tensors, got unsupported "
                               f"type {type(o)}")


def _regroup(leaves, flats, specs) -> list:
    """Split flat ``leaves`` (one per input leaf) back into one structure per argnum."""
    res, k = [], 0
    for f, spec in zip(flats, specs):
        res.append(_unflatten(leaves[k:k + len(f)], spec))
        k += len(f)
    return res


def _zeros_for_none(grads, like) -> list:

    return [zeros_like(t) if g is None else g for g, t in zip(grads, like)]


def _jvp_result(done, n: int, out_spec, aux_spec, has_aux: bool) -> tuple:
    """``(outputs, tangents[, aux])`` from ``done = outputs + tangents + aux leaves``."""
    res = (_unflatten(done[:n], out_spec), _unflatten(done[n:2 * n], out_spec))
    if has_aux:
        return res + (_unflatten(done[2 * n:], aux_spec),)
    return res


# -- grad / grad_and_value -------------------------------------------------------

def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar function ``func``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import grad_and_value
        >>> grad_and_value(lambda x: (x * x).sum())(torch.tensor([1.0, 2.0]))
        (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        T = _tensor_cls()
        with enable_grad():
            new_args, flats, specs = _prepare_args(args, argnums)
            output, aux = _split_aux(call_transformed(func, *new_args, **kwargs), has_aux,
                                     "grad_and_value(f)(*args)")
            if not isinstance(output, T):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            flat_in = [t for f in flats for t in f]
            # Note [Transforms on the tape]: a graph of the gradients only if it can be used
            outside = None if fwAD.FW.active else _depends_on_others([output], flat_in)
            if physical_of(output)._rg:
                gs = batched_grad(output, flat_in, create_graph=outside is not False,
                                  allow_unused=True)
            else:
                gs = [None] * len(flat_in)
            gs = _zeros_for_none(gs, flat_in)
        aux_leaves, aux_spec = _flatten(aux)
        if outside is False and aux_leaves:
            outside = None  # (aux may reach outside: _finish looks)
        done = _finish([output, *gs, *aux_leaves], flat_in, outside)
        output, gs, aux_leaves = done[0], done[1:1 + len(gs)], done[1 + len(gs):]
        out_grads = _regroup(gs, flats, specs)
        g = out_grads[0] if isinstance(argnums, int) else tuple(out_grads)
        if has_aux:
            return g, (output, _unflatten(aux_leaves, aux_spec))
        return g, output

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar function, as a function (``grad(grad(f))`` works).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import grad
        >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(torch.ones(2), torch.ones(2) * 3)
        (tensor([3., 3.]), tensor([1., 1.]))
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


# -- vjp ---------------------------------------------------------------------------

def vjp(func: Callable, *primals: Any, has_aux: bool = False
        ) -> tuple[Any, Callable] | tuple[Any, Callable, Any]:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one vector-Jacobian
    product per primal (same structure as ``primals``).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import vjp
        >>> out, vjp_fn = vjp(torch.sin, torch.tensor([0.0, 1.0]))
        >>> vjp_fn(torch.ones(2))
        (tensor([1.0000, 0.5403]),)
    """

    with enable_grad():
        new_args, flats, specs = _prepare_args(primals, tuple(range(len(primals)))) \
            if primals else ([], [], [])
        output, aux = _split_aux(call_transformed(func, *new_args), has_aux, "vjp(f, *primals)")
    out_leaves, out_spec = _flatten(output)
    _check_only_tensors(out_leaves, "vjp(f, *primals)", "f(*primals)")
    for o in out_leaves:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {o.dtype} (return integer and "
                               "bool results through has_aux=True instead)")
    flat_in = [t for f in flats for t in f]

    def vjp_fn(*cotangents):
        if len(cotangents) == 1:
            cotangents = cotangents[0]
        ct_leaves, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec and not (out_spec is None and len(ct_leaves) == 1):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{_spec_str(ct_spec)}, primal output: {_spec_str(out_spec)}")
        for c, o in zip(ct_leaves, out_leaves):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} "
                                   f"and output[0] has a shape of {o.shape}.")
        pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if physical_of(o)._rg]
        with enable_grad():
            if pairs:
                gs = batched_grad([o for o, _ in pairs], flat_in, [c for _, c in pairs],
                                   retain_graph=True, create_graph=True, allow_unused=True)
            else:
                gs = [None] * len(flat_in)
            gs = _zeros_for_none(gs, flat_in)
        return tuple(_regroup(_finish(list(gs), flat_in), flats, specs))

    aux_leaves, aux_spec = _flatten(aux)
    shown = _finish([*out_leaves, *aux_leaves], flat_in)
    out = _unflatten(shown[:len(out_leaves)], out_spec)
    if has_aux:
        return out, vjp_fn, _unflatten(shown[len(out_leaves):], aux_spec)
    return out, vjp_fn


# -- jvp ---------------------------------------------------------------------------

def jvp(func: Callable, primals: tuple[Any, ...], tangents: tuple[Any, ...], *,
        strict: bool = False, has_aux: bool = False
        ) -> tuple[Any, Any] | tuple[Any, Any, Any]:
    """``(func(*primals), J @ tangents)`` by forward-mode AD (Note [Transforms on the tape]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import jvp
        >>> jvp(lambda x: x ** 2, (torch.tensor([1.0, 2.0]),), (torch.ones(2),))
        (tensor([1., 4.]), tensor([2., 4.]))
    """

    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           f"same python structure. For example, if primals is a tuple of 3 "
                           f"tensors, tangents also must be. Got primals with structure "
                           f"{_spec_str(p_spec)} and tangents with structure {_spec_str(t_spec)}")
    for p, t in zip(p_leaves, t_leaves):
        _check_tensor(p, "jvp")
        _check_tensor(t, "jvp")
        if p.shape != t.shape:  # PyTorch's message (from make_dual)
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}.")
    return _jvp_flat(func, p_leaves, p_spec, t_leaves, has_aux, call_transformed)


def _jvp_flat(func, p_leaves, p_spec, t_leaves, has_aux: bool, call: Callable):
    """jvp of checked, flattened primals and tangents; ``call(func, *args)`` runs ``func``
    (as a transform, Note [Transform depth], or not: linearize)."""

    if fwAD.FW.level >= 0:
        return _jvp_by_reverse(func, p_leaves, p_spec, t_leaves, has_aux, call)
    with fwAD.dual_level():
        duals = [batched_make_dual(p, t) for p, t in zip(p_leaves, t_leaves)]
        output, aux = _split_aux(call(func, *_unflatten(duals, p_spec)), has_aux,
                                 "jvp(f, primals, tangents)")
        out_leaves, out_spec = _flatten(output)
        _check_only_tensors(out_leaves, "jvp(f, primals, tangents)", "f(*primals)")
        outs, tans = [], []
        for o in out_leaves:
            prim, tan = batched_unpack_dual(o)
            outs.append(prim)
            tans.append(zeros_like(prim) if tan is None else tan)
        aux_leaves, aux_spec = _flatten(aux)
        aux_leaves = [batched_unpack_dual(a).primal if isinstance(a, _tensor_cls()) else a
                      for a in aux_leaves]
    done = _finish(outs + tans + aux_leaves, [])
    return _jvp_result(done, len(outs), out_spec, aux_spec, has_aux)


def _jvp_by_reverse(func, p_leaves, p_spec, t_leaves, has_aux, call):
    """J t = d/du <uᵀJ, t>: the double-backward trick, for a jvp inside an open dual level."""

    with enable_grad():
        xs = [_fresh(p) for p in p_leaves]
        output = call(func, *_unflatten(xs, p_spec))
        aux = None
        if has_aux:
            output, aux = output
        out_leaves, out_spec = _flatten(output)
        us = [zeros_like(o).requires_grad_() for o in out_leaves]
        diff = [(o, u) for o, u in zip(out_leaves, us) if physical_of(o)._rg]
        if diff:
            gs = batched_grad([o for o, _ in diff], xs, [u for _, u in diff],
                               create_graph=True, allow_unused=True)
            pairs = [(g, t) for g, t in zip(gs, t_leaves) if g is not None and physical_of(g)._rg]
        else:
            pairs = []
        if pairs:
            jt = batched_grad([g for g, _ in pairs], us, [t for _, t in pairs],
                               create_graph=True, allow_unused=True)
        else:
            jt = [None] * len(us)
        jt = _zeros_for_none(jt, out_leaves)
    aux_leaves, aux_spec = _flatten(aux)
    done = _finish([*out_leaves, *jt, *aux_leaves], xs + us)
    return _jvp_result(done, len(out_leaves), out_spec, aux_spec, has_aux)


# Note [linearize by re-running jvp]
# torch.func.linearize traces the jvp of ``func`` at ``primals`` once (make_fx) and
# replays the traced graph for each tangent. retrograd has no tracer, so ``jvp_fn``
# runs ``jvp`` at the stored primals each time: the same values for a deterministic
# ``func`` (PyTorch's evaluates ``func`` twice too), at the cost of a forward pass per
# call. A ``func`` that draws random numbers draws new ones on each call, where
# PyTorch's traced graph keeps the first draw.


def linearize(func: Callable, *primals) -> tuple:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (Note [linearize by re-running jvp]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import linearize
        >>> out, jvp_fn = linearize(torch.sin, torch.zeros(3))
        >>> jvp_fn(torch.ones(3))
        tensor([1., 1., 1.])
    """

    output = func(*primals)  # linearize is no func transform: old-style Functions are fine
    p_leaves, p_spec = _flatten(primals)
    for p in p_leaves:
        _check_tensor(p, "linearize")
    p_leaves = [p._detached() for p in p_leaves]

    def jvp_fn(*tangents):
        t_leaves, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {_spec_str(t_spec)} to have the same "
                               f"argspec as the primals {_spec_str(p_spec)}")
        for i, (t, p) in enumerate(zip(t_leaves, p_leaves)):
            for what, tv, pv in (("shape", t.shape, p.shape), ("device", t.device, p.device),
                                 ("dtype", t.dtype, p.dtype)):
                if tv != pv:
                    raise RuntimeError(f"tangent:{i} with {what} {tv} in flattened pytree "
                                       f"doesn't match the {what} {pv} of the corresponding "
                                       "primal.")
        return _jvp_flat(func, p_leaves, p_spec, t_leaves, False, _call)[1]

    return output, jvp_fn


def _call(func: Callable, *args):
    return func(*args)


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The plain tensor under a transform's wrapper, for printing in a debugger.

    retrograd's grad/vjp/jvp/jacrev/jacfwd wrap nothing (Note [Transforms on the
    tape]): the tensors a transformed function sees are plain tensors, returned as is.

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2)
        >>> torch.func.debug_unwrap(x) is x
        True
    """
    return tensor


def replace_all_batch_norm_modules_(root: _ModuleT) -> _ModuleT:
    """Make every batch-norm module under ``root`` (itself included) stop tracking running
    statistics, in place (``running_mean``/``running_var``/``num_batches_tracked`` become
    None), so that it normalizes with batch statistics under func transforms. Returns
    ``root``.

    Example:
        >>> import retrograd as torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
        >>> _ = torch.func.replace_all_batch_norm_modules_(net)
        >>> net[1].running_mean is None, net[1].track_running_stats
        (True, False)
    """
    for m in root.modules():
        # nn's _BatchNorm by name: func sits below nn (Note [Modules by duck typing])
        if any(c.__name__ == "_BatchNorm" for c in type(m).__mro__) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


# Note [functionalize without a tracer]
# torch.func.functionalize replaces in-place ops and views by out-of-place ones, for
# backends that cannot represent mutation; what a caller can see of that in eager mode
# is the same values, the same writes into the inputs, and outputs that alias the inputs
# less: an output sharing memory with an input that ``func`` wrote into is a fresh
# tensor, and with remove='mutations_and_views' so is any output sharing memory with an
# input but the input itself. retrograd has no tracer and nothing to hand a program to,
# so ``functionalize(func)`` runs ``func`` as it is and then gives its outputs exactly
# that aliasing (memory is shared where the version counter is, Note [Views and
# in-place]); the copies are ``clone``s, so gradients flow through them.

_REMOVE_HELP = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with PyTorch's functionalized semantics: the same values and writes into
    the inputs, and outputs that share no memory with an input ``func`` wrote into
    (nor, with ``remove='mutations_and_views'``, with any input but itself); Note
    [functionalize without a tracer].

    Example:
        >>> import retrograd as torch
        >>> def f(x):
        ...     y = x.view(-1)
        ...     y.add_(1)
        ...     return y
        >>> x = torch.zeros(2)
        >>> out = torch.func.functionalize(f)(x)
        >>> out, x, out._base is x
        (tensor([1., 1.]), tensor([1., 1.]), False)
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_REMOVE_HELP.format(remove))
    T = _tensor_cls()

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        inputs = [t for t in _flatten((args, kwargs))[0] if isinstance(t, T)]
        before = [(t._vc, t._vc[0]) for t in inputs]
        output = func(*args, **kwargs)
        written = {id(vc) for vc, v in before if vc[0] != v}
        shared = {id(vc) for vc, _ in before}
        own = {id(t) for t in inputs}

        def unaliased(o):
            if not isinstance(o, T):
                return o
            if id(o._vc) in written or (remove == "mutations_and_views" and
                                        id(o._vc) in shared and id(o) not in own):
                return o.clone()
            return o

        leaves, spec = _flatten(output)
        return _unflatten([unaliased(o) for o in leaves], spec)

    return wrapper


# -- Jacobians ---------------------------------------------------------------------

def _jac_structure(out_leaves, out_spec, flats, specs, blocks, argnums):
    """blocks[o][i]: Jacobian of output leaf o w.r.t. input leaf i (flat over argnums)."""
    per_out = []
    for o in range(len(out_leaves)):
        res = _regroup(blocks[o], flats, specs)
        per_out.append(res[0] if isinstance(argnums, int) else tuple(res))
    return _unflatten(per_out, out_spec)


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian by reverse mode: all rows in one batched backward pass (or in
    batches of ``chunk_size`` rows).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import jacrev
        >>> jacrev(lambda x: x ** 2)(torch.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        with enable_grad():
            new_args, flats, specs = _prepare_args(args, argnums)
            output, aux = _split_aux(call_transformed(func, *new_args, **kwargs), has_aux,
                                     "jacrev(f, ...)(*args)")
            out_leaves, out_spec = _flatten(output)
            _check_only_tensors(out_leaves, "jacrev(f, ...)(*args)", "f(*args)")
            flat_in = [t for f in flats for t in f]
            numels = [o.numel() for o in out_leaves]
            total = sum(numels)
            diff = [k for k, o in enumerate(out_leaves) if physical_of(o)._rg]
            rows = [[] for _ in flat_in]  # per input: chunks of (rows, *input.shape)
            step = total if chunk_size is None else chunk_size
            for start in range(0, total, max(step, 1)):
                stop = min(total, start + step)
                gos, outs = [], []
                off = 0
                for k, o in enumerate(out_leaves):
                    n = numels[k]
                    if k in diff:
                        e = zeros((stop - start, n), dtype=o.dtype)
                        lo, hi = max(start, off), min(stop, off + n)
                        for r in range(lo, hi):
                            e._data[r - start, r - off] = 1
                        outs.append(o.reshape(-1))
                        gos.append(e)
                    off += n
                gs = batched_grad(outs, flat_in, gos, retain_graph=True, create_graph=True,
                                   allow_unused=True, is_grads_batched=True) if outs else \
                    [None] * len(flat_in)
                for i, (g, t) in enumerate(zip(gs, flat_in)):
                    rows[i].append(zeros((stop - start,) + tuple(t.shape), dtype=t.dtype)
                                   if g is None else g)
            full = [cat(r, 0) if len(r) > 1 else (r[0] if r else
                                                    zeros((0,) + tuple(t.shape), dtype=t.dtype))
                    for r, t in zip(rows, flat_in)]
        blocks = []
        off = 0
        for o, n in zip(out_leaves, numels):
            blocks.append([f.narrow(0, off, n).reshape(tuple(o.shape) + tuple(t.shape))
                           for f, t in zip(full, flat_in)])
            off += n
        aux_leaves, aux_spec = _flatten(aux)
        flat_blocks = [b for row in blocks for b in row]
        done = _finish(flat_blocks + aux_leaves, flat_in)
        m = len(flat_in)
        blocks = [done[k * m:(k + 1) * m] for k in range(len(out_leaves))]
        jac = _jac_structure(out_leaves, out_spec, flats, specs, blocks, argnums)
        if has_aux:
            return jac, _unflatten(done[len(flat_blocks):], aux_spec)
        return jac

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: vmap of a jvp over the basis tangents, one batched
    forward pass (reverse mode inside an already open forward-AD level; Note [Transforms
    on the tape]).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import jacfwd
        >>> jacfwd(lambda x: x.sin())(torch.tensor([0.0, 0.0]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):

        if fwAD.FW.level >= 0:
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        args = list(args)
        idx, flats, specs = _flatten_argnums(args, argnums, "jacfwd")
        flat_in = [t for f in flats for t in f]
        sizes = [x.numel() for x in flat_in]
        total = sum(sizes)

        def call(*xs):
            full = list(args)
            for i, arg in zip(idx, _regroup(list(xs), flats, specs)):
                full[i] = arg
            return call_transformed(func, *full, **kwargs)
        if not total:  # every input is empty: no column to push
            output, aux = _split_aux(call(*flat_in), has_aux, "jacfwd(f, ...)(*args)")
            out_leaves, out_spec = _flatten(output)
            tangents = [zeros((0,) + tuple(o.shape), dtype=o.dtype) for o in out_leaves]
        else:
            basis, off = [], 0
            for x, n in zip(flat_in, sizes):  # the rows of the identity, split per input
                b = zeros((total, n), dtype=x.dtype)
                b._data[off:off + n] = np.eye(n, dtype=b._data.dtype)
                basis.append(b.reshape((total,) + tuple(x.shape)))
                off += n

            def push(*ts):
                return jvp(call, tuple(flat_in), ts, has_aux=has_aux)
            res = vmap(push, randomness=randomness)(*basis)
            output, tangent_tree = res[0], res[1]
            aux = res[2] if has_aux else None
            out_leaves, out_spec = _flatten(output)
            out_leaves = [o[0] for o in out_leaves]  # (the same for every basis tangent)
            tangents = _flatten(tangent_tree)[0]
            if has_aux:
                aux_leaves, aux_spec = _flatten(aux)
                aux = _unflatten([a[0] if isinstance(a, _tensor_cls()) else a
                                  for a in aux_leaves], aux_spec)
        blocks, off = [], 0
        for o, t in zip(out_leaves, tangents):
            row, off = [], 0
            for x, n in zip(flat_in, sizes):
                part = t[off:off + n] if n else zeros((0,) + tuple(o.shape), dtype=o.dtype)
                row.append(part.movedim(0, -1).reshape(tuple(o.shape) + tuple(x.shape)))
                off += n
            blocks.append(row)
        flat_blocks = _finish([b for row in blocks for b in row], [])
        m = len(flat_in)
        blocks = [flat_blocks[k * m:(k + 1) * m] for k in range(len(out_leaves))]
        jac = _jac_structure(out_leaves, out_spec, flats, specs, blocks, argnums)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of a scalar function. torch.func builds it as jacfwd(jacrev(f));
    here it is jacrev(jacrev(f)), two batched backward passes (same numbers, faster
    without vmap).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacrev(jacrev(func, argnums), argnums)
