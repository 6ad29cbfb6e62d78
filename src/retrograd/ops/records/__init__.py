"""The derivative table: one op record (``ops/op.py``'s ``Op``) per primitive, one file a
family, each rule written in Tensor ops so that second derivatives come from the rules
themselves. The files read like PyTorch's derivatives.yaml: a name, a forward kernel, a
rule per input, a forward-mode rule. Aliases: Note [Module aliases] in ``ops/__init__.py``.

Example:
    >>> from retrograd.ops.records import shape as TSH
    >>> TSH.view.name
    'view'
"""
