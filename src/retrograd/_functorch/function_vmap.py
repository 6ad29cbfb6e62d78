"""autograd.Function inside vmap: the ``vmap`` staticmethod and ``generate_vmap_rule``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.func import vmap
    >>> class Cube(torch.autograd.Function):
    ...     generate_vmap_rule = True
    ...     @staticmethod
    ...     def forward(x):
    ...         return x ** 3
    ...     @staticmethod
    ...     def setup_context(ctx, inputs, output):
    ...         ctx.save_for_backward(inputs[0])
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors
    ...         return 3 * g * x ** 2
    >>> vmap(Cube.apply)(torch.tensor([[1., 2.], [3., 4.]]))
    tensor([[ 1.,  8.],
            [27., 64.]])
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

from .._graph.modes import VMAP, set_mode
from .._tensor.tensor import Tensor
from ..autograd import function as _function
from .batched import (
    VMAP_LEVELS,
    BatchedTensor,
    VmapLevel,
    _size_of,
    add_batch_dim,
    full_physical,
    unwrap_level,
    wrap,
)

__all__ = ["VmapInfo", "function_apply"]


# Note [Functions inside vmap]
# As in torch.func, an autograd.Function applied to batched tensors needs to say how it
# batches. With a ``vmap`` staticmethod, that rule is called one vmap level at a time (the
# innermost one): ``vmap(info, in_dims, *args)`` gets the arguments with that level's batch
# dim in front (in_dims 0, or None where an argument is not batched) and returns the
# outputs and where their batch dims are. With ``generate_vmap_rule = True``, the Function
# runs on the physical tensors as one node of the graph: its forward and backward are
# called with batched tensors (the vmap levels reopened for a backward run after vmap has
# returned), so every op inside them is batched, and its saved tensors are batched too.
class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod is told: the batch size and randomness."""

    batch_size: int
    randomness: str


def function_apply(cls, args, kwargs):
    """Function.apply with batched arguments (Note [Functions inside vmap]); NotImplemented
    when no argument is batched."""
    found = [a for a in (*args, *kwargs.values()) if a.__class__ is BatchedTensor]
    if not found:
        return NotImplemented
    generate = getattr(cls, "generate_vmap_rule", False)
    own_rule = cls.vmap is not _function.Function.vmap
    if not generate and not own_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            "more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    if generate and own_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or delete "
            "the overridden vmap staticmethod to avoid ambiguity. For more details, please see "
            "https://pytorch.org/docs/main/notes/extending.func.html")
    if kwargs:
        raise RuntimeError(f"{cls.__name__}.apply under vmap takes positional arguments only")
    if own_rule:
        return _by_rule(cls, args)
    return _generated(cls, args)


def _by_rule(cls, args):
    level = max(lv for a in args if a.__class__ is BatchedTensor for lv in a._levels)
    unwrapped, in_dims = [], []
    for a in args:
        x, was = unwrap_level(a, level)
        unwrapped.append(x)
        in_dims.append(0 if was else None)
    lv = next(v for v in VMAP_LEVELS.stack if v.level == level)
    out, out_dims = cls.vmap(VmapInfo(lv.size, lv.randomness), tuple(in_dims), *unwrapped)
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
    res = tuple(o if d is None or not isinstance(o, Tensor) else add_batch_dim(o, d, level)
                for o, d in zip(outs, dims))
    return res[0] if single else res


@contextlib.contextmanager
def _reopened(levels, sizes):
    """The vmap levels a recorded Function ran under, open again for its backward (which
    the engine may run after vmap has returned)."""
    stack = VMAP_LEVELS.stack
    added = [VmapLevel(lv, n, "error") for lv, n in zip(levels, sizes)
             if all(v.level != lv for v in stack)]
    stack.extend(added)
    stack.sort(key=lambda v: v.level)
    set_mode(VMAP, True)
    try:
        yield
    finally:
        for v in added:
            stack.remove(v)
        if not stack:
            set_mode(VMAP, False)


def _generated(cls, args):
    levels = tuple(sorted({lv for a in args if a.__class__ is BatchedTensor
                           for lv in a._levels}))
    sizes = tuple(_size_of(lv) for lv in levels)
    batched = [a.__class__ is BatchedTensor for a in args]
    held = {}

    def logical(xs):
        return [wrap(x, levels) if isinstance(x, Tensor) else x for x in xs]

    def to_physical(xs):
        return tuple(full_physical(x, levels) if isinstance(x, Tensor) else x for x in xs)

    class Generated(_function.Function):
        @staticmethod
        def forward(*pargs):
            largs = [wrap(p, levels) if b else p for p, b in zip(pargs, batched)]
            out = cls.forward(*largs)
            held["inputs"], held["output"] = tuple(largs), out
            return to_physical(out) if isinstance(out, tuple) else to_physical((out,))[0]

        @staticmethod
        def setup_context(ctx, inputs, output):
            cls.setup_context(ctx, held["inputs"], held["output"])

        @staticmethod
        def backward(ctx, *grads):
            with _reopened(levels, sizes):
                res = cls.backward(ctx, *logical(grads))
                single = not isinstance(res, tuple)
                res = to_physical((res,) if single else res)
            return res[0] if single else res

    Generated.__name__ = cls.__name__
    Generated.__qualname__ = cls.__qualname__
    phys = [full_physical(a, levels) if b else a for a, b in zip(args, batched)]
    out = Generated.apply(*phys)
    if isinstance(out, tuple):
        return tuple(wrap(o, levels) if isinstance(o, Tensor) else o for o in out)
    return wrap(out, levels)


_function.VMAP_APPLY[0] = function_apply
