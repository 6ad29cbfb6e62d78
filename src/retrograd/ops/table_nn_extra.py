"""Records of the shrink activations (``hardshrink``, ``softshrink``) and of RReLU
(``rrelu_with_noise``), re-exported by ``ops/table.py``.

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

__all__ = ["hardshrink", "hardshrink_backward", "softshrink", "softshrink_backward",
           "rrelu_with_noise", "rrelu_with_noise_backward", "rrelu_with_noise_result"]


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


# Note [RReLU record]: PyTorch's rrelu_with_noise is one node (RreluWithNoiseBackward0;
# RreluWithNoiseBackward1 for the in-place rrelu_) whose rule is a fused backward op,
# grad * noise in training and leaky_relu's backward with the mean slope in eval. Both are
# grad times a per-element slope, so the record takes that slope array as a second,
# non-differentiable input (the drawn noise, or 1 / (lower + upper) / 2 by sign in eval):
# the forward is input * slope (exactly where(x > 0, x, slope * x) in eval), and the
# backward op's own derivative is itself for the incoming gradient
# (RreluWithNoiseBackwardBackward0), so second derivatives w.r.t. the input are zeros.
def _times_slope(x, slope, p=None):
    return (x * slope).astype(x.dtype, copy=False)


def _grad_times_slope(g, x, slope, p=None):
    return (g * slope).astype(g.dtype, copy=False)


rrelu_with_noise_backward = Op(
    "rrelu_with_noise_backward", _grad_times_slope,
    (lambda gg, s, n: apply(rrelu_with_noise_backward, (gg, s[0], s[1])),
     lambda gg, s, n: zeros_like_of(gg), None), (1, 2),
    save_if=((0,), (0,)), jvp=jvp_elementwise, batch_ok=True,
    node_name="RreluWithNoiseBackwardBackward0")


def _rrelu_rule(g, s, n):
    return apply(rrelu_with_noise_backward, (g, s[0], s[1]))


rrelu_with_noise = Op("rrelu_with_noise", _times_slope, (_rrelu_rule, None), (0, 1),
                      jvp=jvp_elementwise, batch_ok=True, node_name="RreluWithNoiseBackward0")
rrelu_with_noise_result = Op("rrelu_with_noise_result", _times_slope, (_rrelu_rule, None),
                             ("out", 1), jvp=jvp_elementwise, batch_ok=True,
                             node_name="RreluWithNoiseBackward1")
