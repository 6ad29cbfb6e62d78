"""``vmap``: run a function of one example on a whole batch at once, as torch.func.vmap.

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import vmap
    >>> vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2))
    tensor([2., 2., 2.])
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

from .._graph.transforms import call_transformed
from .._tensor.tensor import Tensor
from . import function_vmap as _function_vmap  # noqa: F401  (registers its handler)
from . import random as _random_modes  # noqa: F401  (registers the random handler)
from .batched import add_batch_dim as _add_batch_dim
from .batched import is_batched, pop_level, push_level, unwrap_level

__all__ = ["vmap", "tree_flatten", "tree_unflatten"]


# -- pytrees (tuples, lists, dicts and namedtuples of leaves), as torch.utils._pytree ----

class TreeSpec:
    """The structure of a pytree: its container type, keys and children's specs (None
    for a leaf)."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context, children):
        self.kind, self.context, self.children = kind, context, children

    def __eq__(self, other) -> bool:
        return isinstance(other, TreeSpec) and (self.kind, self.context, self.children) == (
            other.kind, other.context, other.children)

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        return f"TreeSpec({self.kind.__name__}, {self.context}, [{inner}])"


_LEAF = TreeSpec(None, None, ())


def _children(tree):
    if isinstance(tree, (list, tuple)):
        ctx = None if not hasattr(tree, "_fields") else type(tree)
        return type(tree), ctx, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        return type(tree), keys, [tree[k] for k in keys]
    return None


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """(leaves, spec) of a pytree.

    Example:
        >>> tree_flatten((1, [2, 3]))[0]
        [1, 2, 3]
    """
    c = _children(tree)
    if c is None:
        return [tree], _LEAF
    kind, ctx, kids = c
    leaves, specs = [], []
    for k in kids:
        lv, sp = tree_flatten(k)
        leaves.extend(lv)
        specs.append(sp)
    return leaves, TreeSpec(kind, ctx, tuple(specs))


def tree_unflatten(leaves, spec: TreeSpec):
    """The pytree of ``spec`` with ``leaves``.

    Example:
        >>> tree_unflatten([1, 2, 3], tree_flatten((0, [0, 0]))[1])
        (1, [2, 3])
    """
    return _build(spec, iter(leaves))


def _build(sp: TreeSpec, it):
    # (a module function, not a closure calling itself: that closure and its cell would
    # be a reference cycle, garbage left for the cyclic collector at every call)
    if sp.kind is None:
        return next(it)
    kids = [_build(c, it) for c in sp.children]
    if sp.kind is dict or issubclass(sp.kind, dict):
        return sp.kind(zip(sp.context, kids))
    if sp.context is not None:  # a namedtuple
        return sp.kind(*kids)
    return sp.kind(kids)


def _broadcast_to_and_flatten(prefix, spec: TreeSpec):
    """``prefix`` (a pytree whose leaves apply to whole subtrees of ``spec``) flattened to
    one value per leaf of ``spec``; None when the structures do not match."""
    if spec.kind is None or _children(prefix) is None:
        if _children(prefix) is not None:
            return None
        return [prefix] * _count(spec)
    kind, ctx, kids = _children(prefix)
    if len(kids) != len(spec.children) or (kind is dict) != (spec.kind is dict) or \
            (kind is dict and ctx != spec.context):
        return None
    out = []
    for k, sp in zip(kids, spec.children):
        r = _broadcast_to_and_flatten(k, sp)
        if r is None:
            return None
        out.extend(r)
    return out


def _count(spec: TreeSpec) -> int:
    return 1 if spec.kind is None else sum(_count(c) for c in spec.children)


# -- vmap --------------------------------------------------------------------------

def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func: Callable, in_dims: int | None | tuple | list | dict = 0,
         out_dims: int | None | tuple[int | None, ...] = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorise ``func`` over a dim of its inputs (torch.func.vmap).

    ``in_dims``: the batched dim of each input (an int, None for an unbatched input, or a
    pytree matching the inputs); ``out_dims``: where the batch dim goes in each output;
    ``randomness``: 'error', 'different' or 'same' for random ops inside; ``chunk_size``:
    run that many batch elements at a time. Each op runs once for the whole batch (Note
    [Batching rules]); ops without a rule run once per element, with a warning.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.func import vmap
        >>> x = torch.arange(6.).reshape(2, 3)
        >>> vmap(lambda row, w: (row * w).sum(), in_dims=(0, None))(x, torch.ones(3))
        tensor([ 3., 12.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, flat_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _vmap_once(func, flat_dims, flat_args, spec, size, out_dims, randomness,
                              kwargs)
        return _chunked(func, flat_dims, flat_args, spec, size, out_dims, randomness,
                        kwargs, chunk_size)
    return wrapped


def _process_inputs(func, in_dims, args):
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    sizes = []
    for arg, d in zip(flat_args, flat_dims):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if d is not None:
            n = arg.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                    f"input, but that input is a Tensor of dimensionality {n} so expected "
                    f"in_dim to satisfy -{n} <= in_dim < {n}.")
            sizes.append(arg.size(d))
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _check_out_dims(out_dims, func) -> None:
    leaves = [out_dims] if isinstance(out_dims, int) else tree_flatten(out_dims)[0]
    for x in leaves:
        if x is not None and (not isinstance(x, int) or isinstance(x, bool)):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             "be an int, None or a python collection of ints representing "
                             "where in the outputs the vmapped dimension should appear.")


def _remove_batch_dim(name, out, level: int, size: int, out_dim):
    if out_dim is None:
        if isinstance(out, Tensor) and is_batched(out) and level in out._levels:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             "when out_dim is None")
        return out
    if not isinstance(out, Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for output?")
    t, was = unwrap_level(out, level)
    if not was:  # an output that does not depend on the batch: the same for every element
        t = t.unsqueeze(0).expand((size,) + tuple(t.shape))
    n = t.dim()
    if not -n <= out_dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {out_dim})")
    return t.movedim(0, out_dim) if out_dim % n else t


def _vmap_once(func, flat_dims, flat_args, spec, size, out_dims, randomness, kwargs):
    lv = push_level(size, randomness)
    try:
        batched = [a if d is None else _add_batch_dim(a, d, lv.level)
                   for a, d in zip(flat_args, flat_dims)]
        outputs = call_transformed(func, *tree_unflatten(batched, spec), **kwargs)
        return _unwrap_outputs(func, outputs, out_dims, lv.level, size)
    finally:
        pop_level(lv)


def _unwrap_outputs(func, outputs, out_dims, level, size):
    name = _name(func)
    flat_out, out_spec = tree_flatten(outputs)

    def incompatible():
        return ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                          "compatible with the structure of `outputs`. out_dims has structure "
                          f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}.")
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            dims = list(out_dims)
        else:
            raise incompatible()
    else:
        dims = _broadcast_to_and_flatten(out_dims, out_spec)
        if dims is None:
            raise incompatible()
    return tree_unflatten([_remove_batch_dim(name, o, level, size, d)
                           for o, d in zip(flat_out, dims)], out_spec)


def _chunked(func, flat_dims, flat_args, spec, size, out_dims, randomness, kwargs, chunk):
    """vmap ``chunk`` elements at a time, the outputs concatenated along their out dims."""
    from .._functions.namespace import cat

    bounds = list(range(0, size, chunk)) + [size]
    pieces = []
    for lo, hi in itertools.pairwise(bounds):
        args = [a if d is None else a.narrow(d, lo, hi - lo) for a, d in zip(flat_args, flat_dims)]
        pieces.append(_vmap_once(func, flat_dims, args, spec, hi - lo, out_dims, randomness,
                                 kwargs))
    flat0, out_spec = tree_flatten(pieces[0])
    dims = [out_dims] * len(flat0) if isinstance(out_dims, int) or out_dims is None else \
        _broadcast_to_and_flatten(out_dims, out_spec)
    cols = [tree_flatten(p)[0] for p in pieces]
    joined = []
    for k, d in enumerate(dims):
        if d is None:
            joined.append(cols[0][k])
        else:
            joined.append(cat([c[k] for c in cols], dim=d))
    return tree_unflatten(joined, out_spec)
