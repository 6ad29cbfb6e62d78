"""The machinery behind ``retrograd.func``: batched tensors, batching rules at dispatch
and ``vmap``; swapping a module's tensors for a call (``functional_call``) and stacking
the state of model ensembles.

It sits in the ``func`` layer (below ``nn``), so it reads modules by their attributes
(``_parameters``, ``_buffers``, ``_modules``) rather than importing ``nn.Module``.

Example:
    >>> import retrograd as torch
    >>> from retrograd._functorch.functional_call import functional_call
    >>> m = torch.nn.Linear(2, 1, bias=False)
    >>> functional_call(m, {"weight": torch.ones(1, 2)}, torch.tensor([[1., 2.]]))
    tensor([[3.]])
"""
