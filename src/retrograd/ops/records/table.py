"""The table of primitives: every record of the op families below, in one namespace (the
module alias ``T``, Note [Module aliases] in ``ops/__init__.py``).

Note [One table]
Every differentiable primitive is one ``Op`` below. Its rules are written with
retrograd's own Tensor operations, never raw NumPy, so the engine can run them under
``no_grad`` for a plain backward and with grad mode on for ``create_graph=True``:
derivatives of any order come from the same rules. Rules never mention broadcasting:
the engine sums a gradient back to its input's shape (Note [Engine order]).
Composites (var, lerp, ...) live in the public functions (``_functions/namespace.py`` lists their
modules) and have no entry here unless numerical stability or memory asks for one (each
says which).

Rule signature: ``rule(g, s, n)`` with ``g`` the output gradient, ``s`` the saved
values (in the order of ``save``), ``n`` the node (``n._p`` holds the op's
non-tensor arguments, ``n.input_shape(i)`` the shape of input i).

Example:
    >>> import retrograd as torch
    >>> x = torch.tensor([0.5], requires_grad=True)
    >>> g, = torch.autograd.grad(x.sin(), x, create_graph=True)
    >>> g2, = torch.autograd.grad(g, x)
    >>> bool(torch.allclose(g2, -x.sin()))
    True
"""

from __future__ import annotations

from ..op import Op
from .activations import *  # noqa: F403  (re-exported: the one table)
from .ctc import *  # noqa: F403  (re-exported: the one table)
from .distance import *  # noqa: F403  (re-exported: the one table)
from .elementwise import *  # noqa: F403  (re-exported: the one table)
from .elementwise import _CMP, _where  # noqa: F401  (used as T._CMP, T._where)
from .helpers import (  # noqa: F401
    _bdims,
    _no_derivative,
    _no_forward_ad,
    _not_implemented,
    arrays_suffice,
    ones_like_of,
    rule_zeros,
    zeros_like_of,
)
from .linalg import *  # noqa: F403  (re-exported: the one table)
from .matmul import (  # noqa: F401  (re-exported: the one table)
    _F16,
    _F32,
    _LANE_BUDGET,
    _LOW_MM,
    _MM_RULES,
    _addmm_fwd,
    _addmm_jvp,
    _addmm_vjp,
    _matmul_fwd,
    _mm_rule_a,
    _mm_rule_b,
    addmm,
    addmm_layout,
    low_matmul_f32,
    mm_ops,
)
from .polynomials import *  # noqa: F403  (re-exported: the one table)
from .reductions import *  # noqa: F403  (re-exported: the one table)
from .shape import (  # noqa: F401  (re-exported: the one table)
    _SCATTER_REDUCE_HINT,
    _adv_index_fwd,
    _as_strided_fwd,
    _back_to_input_shape,
    _cat,
    _cat_fwd,
    _cat_vjp,
    _diagonal_fwd,
    _expand_fwd,
    _gather_fwd,
    _gather_grid,
    _index_add_fwd,
    _index_fill_into,
    _index_fill_self_rule,
    _index_fill_tensor_jvp,
    _index_fill_value_rule,
    _index_fwd,
    _index_map_rule,
    _index_put_fwd,
    _index_put_vjp,
    _index_rule,
    _index_select_fwd,
    _is_basic,
    _multi_out_vjp,
    _new_dim_strides,
    _pad_fwd,
    _pad_rule,
    _pad_to,
    _repeat_rule,
    _roll_fwd,
    _scatter_fwd,
    _scatter_value_fwd,
    _scatter_value_rule,
    _scatter_vjp,
    _squeeze_fwd,
    _strided_view,
    _take_fwd,
    _unfold_fwd,
    _unsqueeze_fwd,
    _unsqueeze_strides,
    _value_at_index_rule,
    _view_op,
    alias,
    as_strided,
    cat,
    constant_pad,
    diagonal,
    expand,
    flip,
    gather,
    index,
    index_add,
    index_fill,
    index_fill_tensor,
    index_put,
    index_put_setitem,
    index_select,
    permute,
    repeat,
    reshape_alias,
    roll,
    scatter,
    scatter_add,
    scatter_reduce,
    scatter_value,
    scatter_value_reduce,
    select,
    slice_op,
    split,
    split_with_sizes,
    squeeze,
    squeeze_all,
    squeeze_dims,
    squeeze_inplace,
    stack,
    t_op,
    take_ops,
    transpose,
    tril,
    triu,
    unbind,
    unfold,
    unsafe_view,
    unsqueeze,
    view,
    whole_selection,
)

ALL_OPS = {k: v for k, v in dict(globals()).items() if isinstance(v, Op)}

# construction and fill_split are gathered after ALL_OPS: the forward-AD sweep over ALL_OPS
# (tests/autograd/test_forward_ad.py) predates them, and their records are checked by their
# own tests
from .construction import *  # noqa: E402, F403  (re-exported: the one table)
from .fill_split import *  # noqa: E402, F403  (torch.fill, unsafe_split)
