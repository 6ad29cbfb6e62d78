"""``backward()`` and ``grad()``: the two ways into the engine, with PyTorch's argument
checks (``retrograd.autograd`` exposes them; ``Tensor.backward`` calls ``backward``).

Example:
    >>> import retrograd as torch
    >>> from retrograd._graph.entry_points import grad
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> grad(x * x, x)
    (tensor([6.]),)
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import TASKS, run_backward
from .graph_tensor import GraphTensor, GraphTensorT
from .provenance import note_backward

__all__ = ["backward", "grad"]


def _as_seq(x) -> list:
    if x is None:
        return []
    if x.__class__ is list or x.__class__ is tuple:
        return list(x)
    if hasattr(x, "_data"):  # a Tensor (itself iterable, so checked before list(x))
        return [x]
    return list(x)


def backward(tensors: GraphTensor | Sequence[GraphTensor],
             grad_tensors: GraphTensor | Sequence[GraphTensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: GraphTensor | Sequence[GraphTensor | None] | None = None,
             inputs: GraphTensor | Sequence[GraphTensor] | None = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (or ``inputs``).

    Example:
        >>> import retrograd as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> torch.autograd.backward([(x * 2).sum()]); x.grad
        tensor([2., 2.])
    """
    outs = _as_seq(tensors)
    grads = _as_seq(grad_tensors if grad_tensors is not None else grad_variables)
    if not grads:
        grads = [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outs)} tensors: backward() "
                           "needs one gradient per output (None for a scalar output)")
    if retain_graph is None:
        retain_graph = create_graph
    ins = _as_seq(inputs) if inputs is not None else None
    if ins is not None and not ins:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty. Pass the "
                           "tensors to accumulate into, or None for all leaves.")
    if ins is not None:
        for t in ins:  # as PyTorch: a non-leaf input keeps its .grad, now and later
            if t.grad_fn is not None and t._rg:
                t.retain_grad()
    if not TASKS.stack:  # a backward() of the user's, not one run inside another's
        note_backward(outs)  # Note [The last backward] (_graph/provenance.py)
    run_backward(outs, grads, retain_graph, create_graph, inputs=ins, accumulate=True)


def grad(outputs: GraphTensor | Sequence[GraphTensor],
         inputs: GraphTensorT | Sequence[GraphTensorT],
         grad_outputs: GraphTensor | Sequence[GraphTensor | None] | None = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[GraphTensorT | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    ``grad_outputs`` is the v of the vector-Jacobian product vᵀJ (implicit ones for
    one-element outputs). With ``create_graph=True`` the result is differentiable.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([2.0], requires_grad=True)
        >>> g, = torch.autograd.grad(x ** 3, x, create_graph=True)
        >>> torch.autograd.grad(g, x)
        (tensor([12.]),)
    """
    outs = _as_seq(outputs)
    ins = _as_seq(inputs)
    grads = _as_seq(grad_outputs)
    if not grads:
        grads = [None] * len(outs)
    if len(grads) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} for "
                           f"{len(outs)} outputs")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    return run_backward(outs, grads, retain_graph, create_graph, inputs=ins,
                        allow_unused=allow_unused, accumulate=False,
                        materialize=materialize_grads, batched=is_grads_batched)
