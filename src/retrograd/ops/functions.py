"""The public tensor functions (``retrograd.add``, ``Tensor.sum``, ...), gathered from the
modules that define them, one module a job:

* ``pointwise.py``: arithmetic, unary and comparison functions, ``where``, ``clamp``, ``lerp``
* ``reductions.py``: ``sum``, ``mean``, ``max``, ``var``, ``softmax``, norms, cumulative ops
* ``shape.py``: views, ``reshape``, ``cat``/``stack``/``split``, ``flip``, ``tril``
* ``matmul.py``: ``matmul``, ``mm``, ``einsum`` and the other products
* ``indexing.py``: ``x[key]``, ``gather``/``scatter``, ``index_*``, ``masked_*``
* ``sorting.py``: ``sort``, ``topk``, ``kthvalue``, ``median``
* ``conversion.py``: ``to``, ``clone``, ``contiguous``
* ``writes.py``: ``x[key] = v``, ``fill_``, ``zero_``, ``copy_``
* ``special_math.py``: ``lgamma``, ``digamma``, ``erfinv``, ``xlogy``, ``logaddexp``,
  ``copysign``, ``frexp`` and the other special functions
* ``sampling.py``: ``uniform_``, ``normal_``, ``bernoulli``, ``multinomial``
* ``inplace.py``: the semantics behind every in-place form (not public functions)

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

# the modules that define the public functions (their @public records fill PUBLIC)
from . import (  # noqa: F401
    construction_extra,
    conversion,
    counting,
    distance,
    foreach,
    gamma_sampling,
    householder_qr,
    indexing,
    linalg_derived,
    linalg_functions,
    linalg_legacy,
    matmul,
    matmul_extra,
    native_forms,
    pointwise,
    pointwise_extra,
    python_map,
    reductions,
    sampling,
    scans,
    scatter_reduce,
    scatter_views,
    shape,
    shape_extra,
    shrink,
    sorting,
    special_math,
    special_polynomials,
    statistics,
    storage_methods,
    view_copies,
    writes,
)

# what other modules take from here besides the public functions
from .conversion import detach_copy, parse_to_args, type_  # noqa: F401
from .creation import tensor, zeros  # noqa: F401
from .indexing import getitem, norm_key  # noqa: F401
from .pointwise import _UNARY_EXAMPLES, lerp_method, tensor_operand_method  # noqa: F401
from .public import PUBLIC
from .reductions import ReturnTypes  # noqa: F401
from .rule_helpers import sum_to  # noqa: F401
from .shape import concatenate  # noqa: F401
from .writes import setitem  # noqa: F401

# Note [Exposure records] (public.py): every public function under the name it is exposed
# by (aliases too); ``retrograd.<name>`` for those marked ``function``
globals().update({name: e.fn for name, e in PUBLIC.items() if e.function or e.method})
__all__ = [name for name, e in PUBLIC.items() if e.function]
