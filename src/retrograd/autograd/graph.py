"""retrograd.autograd.graph: the node API and saved-tensor hooks.

Example:
    >>> import retrograd as torch
    >>> y = torch.ones(2, requires_grad=True).exp()
    >>> isinstance(y.grad_fn, torch.autograd.graph.Node)
    True
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence

from .._graph.engine import TASKS
from .._graph.node import AccumulateGrad, Node, RemovableHandle
from .._graph.saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["Node", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook"]


# Note [Multi-grad hooks]
# ``register_multi_grad_hook`` is PyTorch's, built the same way: a tensor hook on each
# tensor, and per backward pass (the engine's innermost GraphTask, Note [Graph tasks] in
# _graph/engine.py) a count of the gradients seen. In "all" mode the first hook of a pass
# works out how many of the tensors' nodes that pass will run (those reached from its
# roots and, with ``inputs=``, on a path to them: Note [Nodes that run]); the last one calls
# ``fn`` with every tensor's gradient, None for those that got none. In "any" mode ``fn``
# runs once per pass, with the first gradient to arrive. A pass is keyed by its GraphTask
# itself, weakly (PyTorch keys it by a graph task id): an id() could be reused by the next
# pass.
class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` removes the hook of every tensor."""

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _current_task():
    stack = TASKS.stack
    if not stack:
        raise AssertionError("expected this hook to be called inside a backward call")
    return stack[-1]


def _will_run(task, node) -> bool:
    """Whether ``task`` runs ``node`` (Note [Nodes that run] in _graph/engine.py)."""
    if not task.accumulate and node.__class__ is AccumulateGrad:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    return node in task.deps and (task.needed is None or node in task.needed)


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *,
                             mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once the gradients of ``tensors`` are computed (Note [Multi-grad hooks]):
    in ``"all"`` mode with all of them (None where a tensor gets none in this pass), in
    ``"any"`` mode with the first one. Returns a handle whose ``remove()`` unregisters it.

    Example:
        >>> import retrograd as torch
        >>> a = torch.ones(2, requires_grad=True)
        >>> b = torch.ones(2, requires_grad=True)
        >>> c = a * b
        >>> h = torch.autograd.graph.register_multi_grad_hook(
        ...     (a, b, c), lambda grads: print([g is not None for g in grads]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True]
        >>> h.remove()
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        ran = weakref.WeakKeyDictionary()  # graph task -> True once fn has run in it

        @functools.wraps(fn)
        def first(grad):
            key = _current_task()
            with lock:
                prev, ran[key] = ran.get(key, False), True
            if not prev:
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))
    nodes = [t.grad_fn if t.grad_fn is not None else t._grad_accumulator() for t in tensors]
    # per graph task (weakly: a pass that raised leaves nothing behind)
    count, buffer, expected = (weakref.WeakKeyDictionary() for _ in range(3))

    def hook_for(i: int):
        def hook(grad):
            task = _current_task()
            key = task
            with lock:
                seen = count.get(key, 0)
                count[key] = seen + 1
                if seen == 0:
                    expected[key] = sum(_will_run(task, n) for n in nodes)
                    buffer[key] = [None] * len(nodes)
            buffer[key][i] = grad
            if seen == expected[key] - 1:
                grads = buffer.pop(key)
                del count[key], expected[key]
                fn(grads)
        return hook

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))
