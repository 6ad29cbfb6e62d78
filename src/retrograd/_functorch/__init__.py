"""torch.func's batching transform: batched tensors, batching rules at dispatch, vmap.

Example:
    >>> import retrograd as torch
    >>> from retrograd._functorch import vmap
    >>> vmap(torch.sin)(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
"""

from .vmap import vmap

__all__ = ["vmap"]
