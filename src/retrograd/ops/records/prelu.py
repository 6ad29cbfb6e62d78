"""The ``_prelu_kernel`` record behind ``F.prelu``/``torch.prelu`` (re-exported by
``ops/records/table.py`` through ``ops/records/activations.py``).

Note [PReLU record]: PyTorch's ``prelu`` views the weight so it broadcasts over the input
(``(1, C, 1, ...)``; no view when the ranks already agree) and runs one op,
``_prelu_kernel(x, w) = x > 0 ? x : w * x``, recorded as ``PreluKernelBackward0``. Its
rules: ``grad`` where x > 0 else ``w * grad`` for the input, ``0`` where x > 0 else
``x * grad`` for the weight (the engine sums that back to the viewed weight's shape).

Example:
    >>> import retrograd as torch
    >>> from retrograd.ops.dispatch import apply
    >>> from retrograd.ops.records.prelu import prelu_kernel
    >>> apply(prelu_kernel, (torch.tensor([-2., 0., 3.]), torch.tensor([0.25])))
    tensor([-0.5000,  0.0000,  3.0000])
"""

from __future__ import annotations

import numpy as np

from ..jvp_rules import jvp_elementwise
from ..op import Op

__all__ = ["prelu_kernel"]


def _prelu_fwd(x, w):
    return np.where(x > 0, x, w * x).astype(x.dtype, copy=False)


def _prelu_input_rule(g, s, n):
    return g.where(s[0].gt(0), g * s[1])


def _prelu_weight_rule(g, s, n):
    return (s[0] * g).masked_fill(s[0].gt(0), 0)


prelu_kernel = Op("_prelu_kernel", _prelu_fwd, (_prelu_input_rule, _prelu_weight_rule), (0, 1),
                  jvp=jvp_elementwise, batch_ok=True, node_name="PreluKernelBackward0")
