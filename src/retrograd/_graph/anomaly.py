"""What anomaly mode adds to a failing backward (autograd/anomaly_mode.py turns it on): the
NaN error naming the node, where it was made and who made the NaN, and the forward
traceback of a node whose rule raised.

Example:
    >>> from retrograd._graph.anomaly import user_trace
    >>> user_trace("")
    ''
"""

from __future__ import annotations

import os
import warnings

from .node import format_site


def nan_error(node, i: int, in_grads_had_nan: bool) -> RuntimeError:
    """PyTorch's NaN message, plus where the node was made and who made the NaN."""
    msg = f"Function '{node.name()}' returned nan values in its {i}th output."
    if in_grads_had_nan:
        msg += ("\nThis node only passed the NaN on: the gradient it received was already NaN "
                "(from the gradient given to backward(), or a hook), so look upstream of it.")
    else:
        msg += ("\nThis node created the NaN: the gradient it received was finite, so its "
                "derivative rule produced NaN for this input (typically 0 * inf, inf - inf, "
                "sqrt/log/pow at 0, or a NaN already present in the forward values it saved).")
    msg += f"\nThe node was created at {format_site(node._site)}"
    trace = user_trace(node._trace)
    if trace:
        msg += "\nTraceback of forward call that caused the error:\n" + trace
    return RuntimeError(msg)


def user_trace(trace) -> str:
    """The recorded forward traceback without retrograd's own frames."""
    if not trace:
        return ""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # retrograd/
    entries, cur = [], []
    for line in trace.splitlines(keepends=True):
        if line.startswith('  File "') and cur:
            entries.append("".join(cur))
            cur = []
        cur.append(line)
    if cur:
        entries.append("".join(cur))
    keep = []
    for e in entries:
        path = e[len('  File "'):].split('"', 1)[0]
        if not path.startswith(pkg + os.sep):  # (a checkout under a tests/ folder is ours)
            keep.append(e)
    return "".join(keep).rstrip() + "\n" if keep else ""


def warn_forward_trace(node) -> None:
    """The warning PyTorch gives when a node fails in anomaly mode: where its op ran."""
    trace = user_trace(node._trace)
    if trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{trace}", stacklevel=4)
