"""retrograd.autograd: backward(), grad(), and the tools around the engine.

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> torch.autograd.grad(x ** 3 - 4 * x + 2, x)
    (tensor([23.]),)
"""

from __future__ import annotations

from .._core.grad_mode import (
           enable_grad,
           inference_mode,
           is_grad_enabled,
           no_grad,
           set_grad_enabled,
)
from .._graph.engine import run_backward
from .._graph.entry_points import _as_seq, backward, grad
from . import anomaly_mode, function, functional, graph, variable
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function
from .gradcheck import gradcheck, gradgradcheck
from .legacy_modes import NestedIOFunction, enforce_grad_layout_policy, set_multithreading_enabled
from .variable import Variable

__all__ = ["backward", "grad", "Variable", "graph", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "Function",
           "gradcheck", "gradgradcheck", "detect_anomaly", "set_detect_anomaly",
           "forward_ad", "function", "functional", "anomaly_mode", "variable",
           "NestedIOFunction", "enforce_grad_layout_policy", "set_multithreading_enabled"]


