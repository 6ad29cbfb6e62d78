"""The node a compiled call's outputs hang from (Note [Compiled backward] in plan.py).

Example:
    >>> import retrograd as torch
    >>> lin = torch.nn.Linear(2, 1)
    >>> f = torch.compile(lambda x: lin(x).tanh())
    >>> outs = [f(torch.ones(2)) for _ in range(3)]
    >>> outs[2].grad_fn.name()
    'CompiledFunctionBackward'
"""

from __future__ import annotations

import numpy as np

from .._core.grad_mode import STATE
from .._tensor.tensor import _make
from ..autograd.function import Function


class CompiledFunction(Function):
    """Runs a compiled forward plan; its backward runs the compiled backward plan."""

    @staticmethod
    def forward(ctx, plan, leaves, box, *diff_inputs):
        result, saved, diff = plan.fn(leaves, plan.bufs)
        ctx.backward_plan = plan.backward
        ctx.saved = saved
        ctx.shapes = [(t._data.shape, t._data.dtype) for t in diff]
        box.append(result)
        return diff if len(diff) != 1 else diff[0]

    @staticmethod
    def backward(ctx, *grads):
        if STATE.enabled:  # a backward with create_graph=True
            raise RuntimeError(
                "torch.compile with aot_autograd does not currently support double backward "
                "(retrograd: a compiled call's backward is a plan over arrays, not a graph "
                "of its own; call the function uncompiled, or with backend='eager', where "
                "you differentiate its gradients)")
        bw = ctx.backward_plan
        arrays = tuple(np.zeros(s, d) if g is None else np.ascontiguousarray(g._data, d)
                       for g, (s, d) in zip(grads, ctx.shapes))
        outs = bw.fn(ctx.saved + arrays, bw.bufs)
        return (None, None, None) + tuple(None if a is None else _make(a) for a in outs)
