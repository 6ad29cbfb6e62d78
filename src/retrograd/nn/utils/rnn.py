"""Variable-length sequences: ``PackedSequence``, padding and packing (``nn.utils.rnn``).

Note [Packed layout]
A PackedSequence stores a batch of sequences sorted by decreasing length, time step by
time step: ``data`` holds the ``batch_sizes[0]`` first elements, then the
``batch_sizes[1]`` second elements, and so on (``batch_sizes[t]`` sequences are longer
than ``t``). ``sorted_indices`` maps the packed order back to the caller's batch order
(``unsorted_indices`` is its inverse), so a batch need not arrive sorted. Everything
here is built of Tensor ops (``index_select``, ``split``, ``cat``), so gradients flow
through packing and padding as they do in PyTorch.

Example:
    >>> import retrograd as torch
    >>> from retrograd.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([torch.tensor([1., 2., 3.]), torch.tensor([4., 5.])])
    >>> p.data, p.batch_sizes
    (tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
    >>> pad_packed_sequence(p, batch_first=True)
    (tensor([[1., 2., 3.],
            [4., 5., 0.]]), tensor([3, 2]))
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

from ..._core import dtype as D
from ..._core.hints import Shape
from ..._functions.creation import arange, as_tensor, empty_like, full, tensor
from ..._functions.shape import cat, stack
from ..._tensor.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of an index permutation (``None`` stays ``None``).

    Example:
        >>> import retrograd as torch
        >>> torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    out = empty_like(permutation)
    out.scatter_(0, permutation, arange(permutation.numel()))
    return out


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences packed time step by time step
    (Note [Packed layout]); made by :func:`pack_padded_sequence` or :func:`pack_sequence`
    and accepted by RNN, LSTM and GRU.

    Example:
        >>> import retrograd as torch
        >>> p = torch.nn.utils.rnn.PackedSequence(torch.ones(3), torch.tensor([2, 1]))
        >>> p.double().data.dtype
        torch.float64
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # the legacy form PackedSequence((data, batch_sizes))
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """``data.to(...)``; the index tensors follow to the device, never to a dtype.

        Example:
            >>> import retrograd as torch
            >>> p = torch.nn.utils.rnn.pack_sequence([torch.ones(2)])
            >>> p.to(torch.float16).data
            tensor([1., 1.], dtype=torch.float16)
        """
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs) -> PackedSequence:
        """Itself (one device here)."""
        return self.to("cpu")

    def pin_memory(self) -> PackedSequence:
        """Itself (no pinned memory on a CPU-only library)."""
        return self

    def is_pinned(self) -> bool:
        """False: no pinned memory here."""
        return False

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=D.float64)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=D.float32)

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self.to(dtype=D.float16)

    def long(self) -> PackedSequence:
        """``data`` as int64."""
        return self.to(dtype=D.int64)

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self.to(dtype=D.int32)

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self.to(dtype=D.int16)

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self.to(dtype=D.int8)

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self) -> bool:
        """False: CPU only."""
        return False


def _lengths_tensor(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=D.int64)
    return as_tensor(lengths, dtype=D.int64)


def pack_padded_sequence(input: Tensor, lengths: Tensor | Shape, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) whose sequences
    have the given ``lengths`` (a list or a 1-D tensor).

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[1., 2.], [3., 0.]])  # (T=2, B=2)
        >>> torch.nn.utils.rnn.pack_padded_sequence(x, [2, 1]).data
        tensor([1., 2., 3.])
    """
    lengths = _lengths_tensor(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths.dim() != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor (pass one length per sequence)")
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors. (Every sequence needs at least one "
                           "step: drop empty batches before packing.)")
    if batch_first:
        input = input.transpose(0, 1)
    ls = [int(v) for v in lengths.tolist()]
    if len(ls) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(ls)} (batch_size={input.shape[1]})")
    if ls[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(ls, ls[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if ls[0] > input.shape[0]:
        raise RuntimeError(f"a length of {ls[0]} exceeds the padded sequence length "
                           f"{input.shape[0]} (lengths must not exceed the time dimension "
                           "of the padded input)")
    sizes = [sum(1 for v in ls if v > t) for t in range(ls[0])]
    data = cat([input[t, :b] for t, b in enumerate(sizes)], 0)
    return PackedSequence(data, tensor(sizes, dtype=D.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack_padded_sequence`: the padded batch and the lengths (int64),
    in the original batch order; ``total_length`` pads the time dimension further.

    Example:
        >>> import retrograd as torch
        >>> p = torch.nn.utils.rnn.pack_sequence([torch.ones(2), torch.ones(1)])
        >>> torch.nn.utils.rnn.pad_packed_sequence(p, total_length=3)[0]
        tensor([[1., 1.],
                [1., 0.],
                [0., 0.]])
    """
    sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch = sizes[0]
    tail = tuple(data.shape[1:])
    steps = data.split(sizes, 0)
    rows = []
    for t in range(max_len):
        step = steps[t] if t < len(steps) else None
        have = step.shape[0] if step is not None else 0
        if have < batch:
            filler = full((batch - have, *tail), padding_value, dtype=data.dtype)
            step = filler if step is None else cat([step, filler], 0)
        rows.append(step)
    padded = stack(rows, 1 if batch_first else 0)
    lengths = tensor([sum(1 for b in sizes if b > i) for i in range(batch)], dtype=D.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)``
    if ``batch_first``), padding on ``padding_side`` with ``padding_value``; the result has
    the first sequence's dtype.

    Example:
        >>> import retrograd as torch
        >>> torch.nn.utils.rnn.pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True,
        ...                                 padding_side="left")
        tensor([[1., 1.],
                [0., 1.]])
    """
    if not isinstance(sequences, (Iterable, Tensor)):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("pad_sequence: every sequence needs a time dimension, got a 0-d "
                           "tensor (give each sequence shape (L, *))")
    tail = tuple(first.shape[1:])
    max_len = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        for i, (a, b) in enumerate(zip(tail, tuple(s.shape[1:]))):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor "
                                   f"b ({b}) at non-singleton dimension {i + 1}")
        s = s.to(first.dtype)
        gap = max_len - s.shape[0]
        if gap:
            pad = full((gap, *tail), padding_value, dtype=first.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s], 0)
        out.append(s)
    return stack(out, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
                   ) -> list[Tensor]:
    """Inverse of :func:`pad_sequence`: the list of unpadded sequences.

    Example:
        >>> import retrograd as torch
        >>> x = torch.tensor([[1., 2.], [3., 0.]])
        >>> torch.nn.utils.rnn.unpad_sequence(x, torch.tensor([2, 1]), batch_first=True)
        [tensor([1., 2.]), tensor([3.])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (sorted by decreasing length unless
    ``enforce_sorted=False``).

    Example:
        >>> import retrograd as torch
        >>> p = torch.nn.utils.rnn.pack_sequence([torch.ones(1), torch.ones(2)],
        ...                                      enforce_sorted=False)
        >>> p.batch_sizes, p.sorted_indices
        (tensor([2, 1]), tensor([1, 0]))
    """
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """Inverse of :func:`pack_sequence`: the list of sequences in their original order.

    Example:
        >>> import retrograd as torch
        >>> p = torch.nn.utils.rnn.pack_sequence([torch.ones(1), torch.ones(2)], False)
        >>> [s.shape[0] for s in torch.nn.utils.rnn.unpack_sequence(p)]
        [1, 2]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
