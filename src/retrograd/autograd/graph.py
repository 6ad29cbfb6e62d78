"""retrograd.autograd.graph: the node API and saved-tensor hooks.

Example:
    >>> import retrograd as torch
    >>> y = torch.ones(2, requires_grad=True).exp()
    >>> isinstance(y.grad_fn, torch.autograd.graph.Node)
    True
"""

from .._graph.node import Node, RemovableHandle
from .._graph.saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["Node", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks"]
