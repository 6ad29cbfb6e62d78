"""Records of the shrink activations (``hardshrink``, ``softshrink``), re-exported by
``ops/table.py``.

Note [Shrink records]: PyTorch has one node per shrink (HardshrinkBackward0,
SoftshrinkBackward0) whose rule is a fused backward op, ``grad`` where |x| > lambd and 0
inside [-lambd, lambd]; that backward op's own derivative is itself for the incoming
gradient and zero for the saved input (HardshrinkBackwardBackward0 & co), so second
derivatives are zeros, as PyTorch's. p = (lambd,).

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import apply
    >>> from retrograd.ops.table_nn_extra import softshrink
    >>> apply(softshrink, (torch.tensor([-2., 0.1, 2.]),), (0.5,))
    tensor([-1.5000,  0.0000,  1.5000])
"""

from __future__ import annotations

import numpy as np

from ._core import Op
from .dispatch import apply
from .jvp_rules import jvp_elementwise
from .rule_helpers import zeros_like_of

__all__ = ["hardshrink", "hardshrink_backward", "softshrink", "softshrink_backward"]


def _inside(x: np.ndarray, lambd: float) -> np.ndarray:
    return (x >= -lambd) & (x <= lambd)


def _hardshrink_fwd(x, p):
    return np.where(_inside(x, p[0]), 0, x).astype(x.dtype, copy=False)


def _softshrink_fwd(x, p):
    lambd = p[0]
    shrunk = np.where(x > lambd, x - lambd, x + lambd)
    return np.where(_inside(x, lambd), 0, shrunk).astype(x.dtype, copy=False)


def _shrink_bwd_fwd(g, x, p):
    return np.where(_inside(x, p[0]), 0, g).astype(g.dtype, copy=False)


def _shrink_ops(name: str, fwd, title: str) -> tuple:
    """The (backward op, op) pair of one shrink (Note [Shrink records])."""
    back = Op(f"{name}_backward", _shrink_bwd_fwd,
              (lambda gg, s, n: apply(back, (gg, s[1]), n._p),
               lambda gg, s, n: zeros_like_of(gg)),
              (0, 1), save_if=((1,), (0,)), jvp=jvp_elementwise, batch_ok=True,
              node_name=f"{title}BackwardBackward0")
    op = Op(name, fwd, (lambda g, s, n: apply(back, (g, s[0]), n._p),), (0,),
            jvp=jvp_elementwise, batch_ok=True, node_name=f"{title}Backward0")
    return back, op


hardshrink_backward, hardshrink = _shrink_ops("hardshrink", _hardshrink_fwd, "Hardshrink")
softshrink_backward, softshrink = _shrink_ops("softshrink", _softshrink_fwd, "Softshrink")
