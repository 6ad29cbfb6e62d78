"""Embedding and EmbeddingBag: lookup tables of vectors (bags reduced by sum, mean or max).

Example:
    >>> import retrograd as torch
    >>> emb = torch.nn.Embedding(10, 3, padding_idx=0)
    >>> emb(torch.tensor([[0, 2]])).shape, emb.weight[0].tolist()
    (torch.Size([1, 2, 3]), [0.0, 0.0, 0.0])
"""

from __future__ import annotations

from ..._core import dtype as D
from ..._core.hints import DeviceLike
from ..._functions.creation import empty
from ..._tensor.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _table(m: Module, num_embeddings: int, embedding_dim: int, padding_idx, max_norm,
           norm_type, scale_grad_by_freq, sparse, _weight, freeze, dtype, pad_word) -> None:
    """The attributes and weight Embedding and EmbeddingBag share (PyTorch's checks)."""
    m.num_embeddings = num_embeddings
    m.embedding_dim = embedding_dim
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num_embeddings:
                raise AssertionError(f"{pad_word} must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num_embeddings:
                raise AssertionError(f"{pad_word} must be within num_embeddings")
            padding_idx = num_embeddings + padding_idx
    m.padding_idx = padding_idx
    m.max_norm = max_norm
    m.norm_type = norm_type
    m.scale_grad_by_freq = scale_grad_by_freq
    m.sparse = sparse
    if _weight is None:
        m.weight = Parameter(empty(num_embeddings, embedding_dim,
                                   dtype=dtype if dtype is not None else D.DEFAULTS.float),
                             requires_grad=not freeze)
        m.reset_parameters()
    else:
        if list(_weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError("Shape of weight does not match num_embeddings and "
                                 "embedding_dim")
        m.weight = Parameter(_weight, requires_grad=not freeze)


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings, embedding_dim) at integer indices; the
    ``padding_idx`` row starts at zero and gets no gradient. Initialised N(0, 1).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.Embedding(5, 2, padding_idx=1)
        Embedding(5, 2, padding_idx=1)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        _table(self, num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
               scale_grad_by_freq, sparse, _weight, _freeze, dtype, "Padding_idx")

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row zeroed."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0
            self.weight._vc[0] += 1

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (frozen by default).

        Example:
            >>> import retrograd as torch
            >>> e = torch.nn.Embedding.from_pretrained(torch.eye(2))
            >>> e(torch.tensor([1])), e.weight.requires_grad
            (tensor([[0., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of embedding rows, without building the
    per-row embeddings; initialised N(0, 1) with the ``padding_idx`` row zeroed.

    Example:
        >>> import retrograd as torch
        >>> bag = torch.nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(torch.tensor([1, 2, 4, 5, 4]), torch.tensor([0, 2])).shape
        torch.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: DeviceLike | None = None, dtype: D.dtype | None = None) -> None:
        super().__init__()
        _table(self, num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
               scale_grad_by_freq, sparse, _weight, False, dtype, "padding_idx")
        self.mode = mode
        self.include_last_offset = include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = "{num_embeddings}, {embedding_dim}"
        if self.max_norm is not None:
            s += ", max_norm={max_norm}"
        if self.norm_type != 2:
            s += ", norm_type={norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq={scale_grad_by_freq}"
        s += ", mode={mode!r}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (frozen by default).

        Example:
            >>> import retrograd as torch
            >>> bag = torch.nn.EmbeddingBag.from_pretrained(torch.eye(3), mode="sum")
            >>> bag(torch.tensor([[0, 2]])), bag.weight.requires_grad
            (tensor([[1., 0., 1.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                  mode=mode, sparse=sparse, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
