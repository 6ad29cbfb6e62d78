"""Helpers that several op tables share: the node of an op without a derivative
(PyTorch's ``NotImplemented``) and the leading dims of a batched backward.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([5., 7.], requires_grad=True)
    >>> y = x // 2
    >>> y.grad_fn.name()
    'torch::autograd::NotImplemented'
"""

from __future__ import annotations

import builtins

import numpy as np

from ..._core.grad_mode import STATE
from ..._graph.modes import MODES
from ..._tensor.tensor import _make
from ..op import Op


def arrays_suffice() -> bool:
    """Whether a rule may compute its gradient from the arrays alone, skipping Tensor ops:
    no graph is being recorded (no create_graph) and no optional mode is on (forward-mode
    AD's tangents ride on the Tensor ops: hvp's forward-over-reverse needs them).

    Example:
        >>> arrays_suffice()  # outside backward, grad mode is on
        False
    """
    return not STATE.enabled and not MODES.bits


def _no_derivative(name: str, hint: str):
    """The rule of PyTorch's ``NotImplemented`` node, raising its error on backward."""
    def rule(g, s, n):
        raise RuntimeError(f"derivative for aten::{name} is not implemented (as in PyTorch). "
                           + hint)
    return rule


def _no_forward_ad(name: str, hint: str):
    """The JVP rule of an overload PyTorch has no forward derivative for (its error)."""
    def rule(t, s, n, out):
        raise NotImplementedError(f"Trying to use forward AD with aten::{name} that does not "
                                  f"support it. {hint}")
    return rule


def _not_implemented(name, fwd, rules, hint, save=()):
    """An overload without a derivative (PyTorch's NotImplemented node): ``rules`` True
    where the input has an edge (its rule raises), None where it has none."""
    raising = _no_derivative(name, hint)
    return Op(name, fwd, tuple(raising if r else None for r in rules), save,
              jvp=_no_forward_ad(name, hint), node_name="torch::autograd::NotImplemented")


def _bdims(g):
    """The leading batch dims of ``g``, empty outside a batched backward (Note [Batched rules]
    in ops/records/reductions.py)."""
    return g.shape[:STATE.batch] if STATE.batch else ()


def sum_to(g, shape, node=None, i: int = 0, batch: int = 0):
    """Sum a gradient back to an input's shape (the engine's one place for broadcasting).

    ``batch`` leading dims of ``g`` are kept as they are (Note [Batched rules] in
    ops/records/reductions.py).
    Written with Tensor methods, so the op records (expand's rule) use it too.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.ops.records.helpers import sum_to
        >>> sum_to(torch.ones(2, 3), (1, 3))
        tensor([[2., 2., 2.]])
    """
    gs = g._data.shape
    shape = tuple(shape)
    lead = len(gs) - len(shape) - batch
    ok = lead >= 0 and builtins.all(s == 1 or s == gs[batch + lead + k]
                                    for k, s in enumerate(shape))
    if not ok:
        who = f"Function {node.name()}" if node is not None else "sum_to_size"
        raise RuntimeError(
            f"{who} returned an invalid gradient at index {i} - got {list(gs[batch:])} but "
            f"expected shape compatible with {list(shape)}. A backward must return one gradient "
            "per input, each with that input's shape.")
    axes = tuple(range(batch, batch + lead)) + tuple(
        batch + lead + k for k, s in enumerate(shape) if s == 1 and gs[batch + lead + k] != 1)
    r = g.sum(dim=axes, keepdim=True) if axes else g
    target = gs[:batch] + shape
    if r._data.shape != target:
        r = r.reshape(target)
    return r


# Constants inside rules: tensors that need no grad, of a given shape and NumPy dtype
# (the op records, their JVP rules and the engine's helpers share them).
def rule_zeros(shape, dt):
    """Zeros of ``shape`` and NumPy dtype ``dt``, a constant inside a rule.

    Example:
        >>> import numpy as np
        >>> from retrograd.ops.records.helpers import rule_zeros
        >>> rule_zeros((2,), np.float32)
        tensor([0., 0.])
    """
    return _make(np.zeros(tuple(shape), dt))


def zeros_like_of(t):
    """Zeros shaped and typed as ``t``, a constant inside a rule."""
    return _make(np.zeros(t._data.shape, t._data.dtype))


def ones_like_of(t):
    """Ones shaped and typed as ``t``, a constant inside a rule."""
    return _make(np.ones(t._data.shape, t._data.dtype))
