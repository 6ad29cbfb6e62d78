"""The public tensor functions (``retrograd.add``, ``Tensor.sum``, ...), gathered from the
modules of ``_functions/`` that define them (its ``__init__`` lists the jobs); the
semantics behind every in-place form are in ``_functions/inplace.py``.

Each function normalises PyTorch's arguments and calls one primitive of the table, or
composes several. The same function serves as the ``retrograd.name`` function and the
``Tensor.name`` method (``methods.py`` installs them).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    >>> x.sum(dim=1)
    tensor([3., 7.], grad_fn=<SumBackward1>)
"""

from __future__ import annotations

from ..ops.public import PUBLIC
from ..ops.records.helpers import sum_to  # noqa: F401

# the modules that define the public functions (their @public records fill PUBLIC)
from . import (  # noqa: F401
    add_products,
    construction,
    conversion,
    counting,
    distance,
    foreach,
    foreach_unary,
    gamma_sampling,
    householder_qr,
    indexing,
    linalg,
    linalg_derived,
    linalg_legacy,
    matmul,
    native_forms,
    pointwise,
    polynomials,
    python_map,
    reductions,
    sampling,
    scans,
    scatter_reduce,
    scatter_views,
    shape,
    shape_composites,
    shrink,
    signs_bits_predicates,
    sorting,
    special,
    statistics,
    storage_methods,
    view_copies,
    writes,
)

# what other modules take from here besides the public functions
from .conversion import detach_copy, parse_to_args, type_  # noqa: F401
from .creation import tensor, zeros  # noqa: F401
from .indexing import getitem, norm_key  # noqa: F401
from .pointwise import lerp_method, tensor_operand_method  # noqa: F401
from .reductions import ReturnTypes  # noqa: F401
from .shape import concatenate  # noqa: F401
from .writes import setitem  # noqa: F401

# Note [Exposure records] (public.py): every public function under the name it is exposed
# by (aliases too); ``retrograd.<name>`` for those marked ``function``
globals().update({name: e.fn for name, e in PUBLIC.items() if e.function or e.method})
__all__ = [name for name, e in PUBLIC.items() if e.function]
