"""Datasets: map-style (``__getitem__`` + ``__len__``) and iterable-style (``__iter__``).

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(torch.arange(10), torch.arange(10) * 2)
    >>> ds[3]
    (tensor(3), tensor(6))
    >>> [len(s) for s in random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(0))]
    [8, 2]
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from ..._random.rng import default_generator
from ..._tensor.tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: ``ds[i]`` is sample ``i`` (subclasses define ``__getitem__``,
    and usually ``__len__``).

    Example:
        >>> from retrograd.utils.data import Dataset
        >>> class Squares(Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return i * i
        >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
        ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``. With worker processes
    each worker iterates its own copy; split the stream with ``get_worker_info()``.

    Example:
        >>> from retrograd.utils.data import IterableDataset
        >>> class Count(IterableDataset):
        ...     def __iter__(self): return iter(range(3))
        >>> list(Count()), list(Count() + Count())
        ([0, 1, 2], [0, 1, 2, 0, 1, 2])
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are slices along the first dimension of the given tensors.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import TensorDataset
        >>> ds = TensorDataset(torch.zeros(5, 2), torch.arange(5))
        >>> len(ds), ds[4][1]
        (5, tensor(4))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(f"Size mismatch between tensors: first dimensions are {sizes}; "
                                 "every tensor must have one row per sample")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zip datasets of equal length: samples are tuples (positional) or dicts (keywords).

    Example:
        >>> from retrograd.utils.data import StackDataset
        >>> StackDataset(a=[1, 2], b=['x', 'y'])[1]
        {'a': 2, 'b': 'y'}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: Any = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    Example:
        >>> from retrograd.utils.data import ConcatDataset
        >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
        >>> len(ds), ds[2], ds[-1]
        (5, 3, 5)
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        out, total = [], 0
        for e in sequence:
            total += len(e)
            out.append(total)
        return out

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset; chain "
                                     "iterable datasets with ChainDataset (or ds1 + ds2)")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Several iterable datasets chained into one stream.

    Example:
        >>> from retrograd.utils.data import ChainDataset
        >>> list(ChainDataset([range(2), range(3)]))
        [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``.

    Example:
        >>> from retrograd.utils.data import Subset
        >>> s = Subset(['a', 'b', 'c', 'd'], [3, 0])
        >>> len(s), s[0], s[1]
        (2, 'd', 'a')
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        # batched fetch: hand the whole batch to the dataset when it supports that
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator=default_generator) -> list[Subset]:
    """Split ``dataset`` at random into non-overlapping subsets of the given lengths, or of
    the given fractions (which must sum to 1; the remainder goes round-robin).

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import random_split
        >>> g = torch.Generator().manual_seed(42)
        >>> a, b = random_split(range(10), [3, 7], generator=g)
        >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
        (3, 7, True)
    """
    from ..._functions.creation import randperm

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has "
                         f"{len(dataset)} samples)")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
