"""Flatten parameters into one vector and back.

Example:
    >>> import retrograd as torch
    >>> m = torch.nn.Linear(2, 1)
    >>> v = torch.nn.utils.parameters_to_vector(m.parameters())
    >>> v.shape
    torch.Size([3])
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor with every parameter flattened, in order (differentiable).

    Example:
        >>> import retrograd as torch
        >>> ps = [torch.ones(2, 2), torch.zeros(1)]
        >>> torch.nn.utils.parameters_to_vector(ps)
        tensor([1., 1., 1., 1., 0.])
    """
    from ..._functions.namespace import cat

    vec = [p.reshape(-1) for p in parameters]
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters (``param.data`` is replaced).

    Example:
        >>> import retrograd as torch
        >>> m = torch.nn.Linear(2, 1)
        >>> torch.nn.utils.vector_to_parameters(torch.zeros(3), m.parameters())
        >>> m.weight
        Parameter containing:
        tensor([[0., 0.]], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        param._vc[0] += 1
        pointer += n
