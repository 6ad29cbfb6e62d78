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

from .._grad_mode import STATE
from ._core import Op


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
    in table.py)."""
    return g.shape[:STATE.batch] if STATE.batch else ()
