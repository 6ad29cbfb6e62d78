"""The Tensor (``tensor.py``: data, version counter, grad, grad_fn, views) and how it prints
(``printing.py``: PyTorch's repr, digit for digit).

Example:
    >>> from retrograd._tensor.tensor import Tensor
    >>> import retrograd as torch
    >>> isinstance(torch.ones(1), Tensor)
    True
"""
