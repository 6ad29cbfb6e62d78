"""The public tensor functions, one module a job (``pointwise``, ``reductions``, ``shape``,
``matmul``, ``indexing``, ``writes``, ``linalg``, ``special``, ``sampling``, ...). Each
function parses PyTorch's arguments and calls one record of ``ops/records/`` through
``ops/dispatch.py``, or composes several as PyTorch composes them;
``namespace.py`` gathers them all as ``retrograd.<name>`` and ``methods.py`` installs them as
``Tensor.<name>``; ``inplace.py`` holds the in-place forms' machinery and ``arguments.py``
the argument helpers they share.

Note [The functions are a floor of their own]
DESIGN.md's first layout put the public functions inside ``ops/`` beside the records. They
are a layer above it: a record, its kernel and dispatch need nothing from how PyTorch
spells its functions, while every function calls records. As one folder the two grew to
30% of the code, and imports from the records up into the functions (CopySlices' rules
called the public ``where``) went unseen, because a test of layers only sees top-level
packages. As ``_functions/`` above ``ops/`` (tests/project/test_layout.py's LAYERS), an
import from ``ops/`` into the functions fails that test, and a reader finds the derivative
table (``ops/``) and the argument parsing (``_functions/``) in different places.

Example:
    >>> import retrograd as torch
    >>> from retrograd._functions.pointwise import add
    >>> add(torch.ones(2), 1, alpha=2)
    tensor([3., 3.])
"""
