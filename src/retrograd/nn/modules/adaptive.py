"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016) for large
vocabularies: frequent classes in a head, the rest in tail clusters reached through one
head entry each.

Example:
    >>> import retrograd as torch
    >>> asm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
    >>> out = asm(torch.ones(3, 8), torch.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (torch.Size([3]), torch.Size([]))
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from ..._core.dtype import dtype
from ..._core.hints import DeviceLike
from ..._functions.shape import cat
from ..._tensor.tensor import Tensor, _make
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax, as PyTorch's: ``forward(input, target)`` gives the target log-
    probabilities and their mean negative (``(output, loss)``), ``log_prob`` the full
    (N, n_classes) log-distribution, ``predict`` the most likely class.

    Example:
        >>> import retrograd as torch
        >>> asm = torch.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2], div_value=2.0)
        >>> round(asm.log_prob(torch.zeros(1, 4)).exp().sum().item(), 5)
        1.0
        >>> asm.predict(torch.zeros(2, 4)).shape
        torch.Size([2])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Re-draw the head and the tail projections as at construction."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        x = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0))._data.astype(np.int64)
        output = x.new_zeros(target.shape[0])
        gather = np.empty(target.shape[0], dtype=np.int64)
        bounds = [0] + self.cutoffs
        used = 0
        for i in range(len(bounds) - 1):
            rows = np.nonzero((target >= bounds[i]) & (target < bounds[i + 1]))[0]
            if rows.size == 0:
                continue
            if i == 0:
                gather[rows] = target[rows]
            else:
                gather[rows] = self.shortlist_size + i - 1
                cluster = F.log_softmax(self.tail[i - 1](x.index_select(0, _make(rows))), dim=1)
                local = cluster.gather(1, _make(target[rows, None] - bounds[i])).squeeze(1)
                output = output.index_copy(0, _make(rows), local)
            used += rows.size
        if used != target.shape[0]:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min()}, {target.max()}] were found. ")
        head_logprob = F.log_softmax(self.head(x), dim=1)
        output = output + head_logprob.gather(1, _make(gather[:, None])).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of all ``n_classes`` classes, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (``log_prob(input).argmax(1)``, computing the
        tails only for rows whose head prefers a cluster)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output._data >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        rows = _make(np.nonzero(outside)[0])
        best = self._get_full_log_prob(input.index_select(0, rows),
                                       head_output.index_select(0, rows)).argmax(dim=1)
        return output.index_copy(0, rows, best)
