"""The public tensor functions, one module a job (``pointwise``, ``reductions``, ``shape``,
``matmul``, ``indexing``, ``writes``, ``linalg``, ``special``, ``sampling``, ...). Each
function parses PyTorch's arguments and calls one record of ``ops/records/`` through
``ops/dispatch.py``, or composes several as PyTorch composes them;
``ops/namespace.py`` gathers them all as ``retrograd.<name>`` and ``Tensor.<name>``.

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.functions.pointwise import add
    >>> add(torch.ones(2), 1, alpha=2)
    tensor([3., 3.])
"""
