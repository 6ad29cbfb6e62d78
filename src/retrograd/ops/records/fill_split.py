"""Records of the remaining ``torch`` tensor ops (issue 16): the out-of-place ``torch.fill``
(``FillBackward0``/``FillBackward1``, where the in-place ``fill_`` is ``FillBackward2``/
``FillBackward3``) and ``unsafe_split``/``unsafe_split_with_sizes`` (split's pieces as
outputs that autograd does not treat as views).

Example:
    >>> from retrograd.ops.records import table as T
    >>> T.unsafe_split.node_name, T.fill_out.node_name
    ('UnsafeSplitBackward0', 'FillBackward0')
"""

from __future__ import annotations

import numpy as np

from ..jvp_rules import jvp_linear
from ..op import Op
from .helpers import zeros_like_of
from .shape import _multi_out_vjp

__all__ = ["fill_out", "fill_out_tensor", "unsafe_split", "unsafe_split_with_sizes"]


def _fill_fwd(a, v):
    return np.full_like(a, v)


def _fill_self_rule(g, s, n):
    return zeros_like_of(g)


fill_out = Op("fill", _fill_fwd, (_fill_self_rule, None), node_name="FillBackward0",
              jvp=jvp_linear, batch_ok=True)
fill_out_tensor = Op("fill_tensor", _fill_fwd, (_fill_self_rule, lambda g, s, n: g.sum()),
                     node_name="FillBackward1", jvp=jvp_linear)


def _unsafe_split_jvp(t, s, n, out):
    _, dim, sizes = n._p
    return t[0].split(list(sizes), dim)


# the pieces' gradients are put back together as split's (Note [Batched rules])
unsafe_split = Op("unsafe_split", None, _multi_out_vjp, node_name="UnsafeSplitBackward0",
                  jvp=_unsafe_split_jvp, batch_ok=True)
unsafe_split_with_sizes = Op("unsafe_split_with_sizes", None, _multi_out_vjp,
                             node_name="UnsafeSplitWithSizesBackward0", jvp=_unsafe_split_jvp,
                             batch_ok=True)


# Note [Shape-changing in-place methods] (_functions/shape_inplace.py): the nodes of t_,
# squeeze_() and squeeze_(dims), named as PyTorch's (transpose_/unsqueeze_/squeeze_(dim)
# reuse TransposeBackward1/UnsqueezeBackward1/SqueezeBackward4 of table_scan/table_shape)
def _t_inplace_fwd(a, p=None):
    return a.T if a.ndim == 2 else a.view()


t_inplace = Op("t_", _t_inplace_fwd, (lambda g, s, n: g.t(),), node_name="TBackward1",
               jvp=jvp_linear)


def _squeeze_inplace_fwd(a, axes):
    return np.squeeze(a, axis=axes)


def _unsqueeze_back(g, s, n):
    return g.reshape(n.input_shape(0))


squeeze_all_inplace = Op("squeeze_all_", _squeeze_inplace_fwd, (_unsqueeze_back,),
                         node_name="SqueezeBackward3", jvp=jvp_linear)
squeeze_dims_inplace = Op("squeeze_dims_", _squeeze_inplace_fwd, (_unsqueeze_back,),
                          node_name="SqueezeBackward5", jvp=jvp_linear)
__all__ += ["t_inplace", "squeeze_all_inplace", "squeeze_dims_inplace"]


# geqrf: LAPACK's compact QR (the Householder vectors below R, and their scales), from
# SciPy's LAPACK, imported on first use; PyTorch has no derivative for it (its node
# raises on backward, as PyTorch's GeqrfBackward0)
def _geqrf_fwd(a):
    from scipy.linalg import lapack  # lazily: SciPy's import is slow and rarely needed

    fn = lapack.sgeqrf if a.dtype == np.float32 else lapack.dgeqrf
    m, n = a.shape[-2:]
    flat = a.reshape((-1, m, n))
    qr = np.empty_like(flat)
    tau = np.empty((flat.shape[0], min(m, n)), dtype=a.dtype)
    for i, mat in enumerate(flat):
        qr[i], tau[i] = fn(np.array(mat, dtype=a.dtype, order="F"))[:2]
    return qr.reshape(a.shape), tau.reshape(a.shape[:-2] + (min(m, n),))


def _geqrf_vjp(g, s, n, needs):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented. (geqrf's "
                              "Householder form has no gradient in PyTorch; differentiate "
                              "torch.linalg.qr instead)")


geqrf = Op("geqrf", _geqrf_fwd, _geqrf_vjp, node_name="GeqrfBackward0")
__all__ += ["geqrf"]
