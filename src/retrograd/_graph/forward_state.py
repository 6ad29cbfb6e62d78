"""Forward-mode AD's state, below the op layer: whether a dual level is open, each
tensor's tangent, and the hooks dispatch calls while a level is open (Note [Forward AD
interceptor]).

Example:
    >>> from retrograd._graph.forward_state import FW
    >>> FW.active
    False
"""

from __future__ import annotations

import threading
import weakref

from .graph_tensor import GraphTensor, GraphTensorT
from .modes import FORWARD_AD, set_mode

__all__ = ["FW", "ELEMENTWISE", "VIEW", "GENERAL", "get_tangent", "set_tangent", "fw_op",
           "inplace_tangent", "register"]


# Note [Forward AD state]
# One thread-local flag, ``FW.active``, tells the dispatch path whether any dual
# level is open; each write of it sets the forward-AD bit of Note [Optional modes]
# (modes.py), so ops pay nothing beyond that note's one test when it is off. A tangent
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

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "active":  # Note [Optional modes]
            set_mode(FORWARD_AD, value)


FW = _FwState()


def get_tangent(t: GraphTensorT) -> GraphTensorT | None:
    """The tangent of ``t`` at the open level, or None."""
    return t._fw_grad


def set_tangent(t: GraphTensor, tangent: GraphTensor) -> None:
    """Attach ``tangent`` to ``t`` (remembered so the level's exit can drop it)."""
    if t._fw_grad is None:
        FW.owners.append(weakref.ref(t))
    t._fw_grad = tangent


# the kind of op dispatch reports to ``fw_op``: it picks the default JVP rule of an op
# without one (Note [JVP rules] in ops/jvp_rules.py)
ELEMENTWISE, VIEW, GENERAL = 1, 2, 0


# Note [Forward AD interceptor]
# Forward-mode AD is an optional feature of every op call, like autocast (Note [Dispatch
# interceptors] in ops/dispatch.py): an op call tests Note [Optional modes]'s bits once,
# and only while they are set does dispatch's modal path read ``FW.active`` and, while a
# dual level is open, call ``fw_op`` after the op has run (Note [Optional modes at
# dispatch]). The JVP machinery itself (the rules, how a tangent follows an in-place
# write) is written with Tensor ops, so it lives above dispatch, in ops/jvp_rules.py,
# which registers it here when it is imported; this module imports nothing of the op
# layer, and the public API (autograd/forward_ad.py) sits above the op layer.
class _Hooks:
    fw_op = None
    inplace_tangent = None


_HOOKS = _Hooks()


def register(*, fw_op, inplace_tangent) -> None:
    """Install the JVP machinery (Note [Forward AD interceptor]).

    Example:
        >>> import retrograd
        >>> from retrograd._graph import forward_state
        >>> forward_state._HOOKS.fw_op is not None
        True
    """
    _HOOKS.fw_op = fw_op
    _HOOKS.inplace_tangent = inplace_tangent


def fw_op(op, inputs, out, p, kind: int) -> None:
    """Attach the output tangent(s) of ``op(inputs) -> out`` (dispatch calls it while a dual
    level is open)."""
    _HOOKS.fw_op(op, inputs, out, p, kind)


def inplace_tangent(self, res) -> None:
    """``self`` was overwritten in place with ``res``: its tangent follows."""
    _HOOKS.inplace_tangent(self, res)
