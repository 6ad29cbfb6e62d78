"""The graph layer's view of a tensor, for the hints of its public entry points
(``autograd.backward``, ``autograd.grad``): the Tensor class sits a floor above and may not be
imported here, not even for a hint (Note [Type hints] in ``_core/hints.py``), so the entry
points name what they use of one, and retrograd's Tensor is one.

Example:
    >>> import retrograd as torch
    >>> from retrograd._graph.graph_tensor import GraphTensor
    >>> t = torch.ones(1, requires_grad=True)
    >>> all(hasattr(t, name) for name in ("requires_grad", "grad_fn", "grad"))
    True
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from .node import Node

__all__ = ["GraphTensor", "GraphTensorT"]


class GraphTensor(Protocol):
    """A tensor as the engine sees it: whether it requires grad, the node that made it, the
    gradient accumulated into it."""

    @property
    def requires_grad(self) -> bool: ...

    @property
    def grad_fn(self) -> Node | None: ...

    @property
    def grad(self) -> GraphTensor | None: ...


#: the caller's tensor type: ``grad`` returns gradients of the type it was given
GraphTensorT = TypeVar("GraphTensorT", bound=GraphTensor)
