"""Samplers: iterables of dataset indices (or of batches of indices) for the DataLoader.

Example:
    >>> from retrograd.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from ..._core import dtype as D
from ..._functions.creation import as_tensor, randint, randperm
from ..._functions.namespace import multinomial
from ..._random.rng import Generator, draw_seed

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _fresh_generator(generator):
    """``generator``, or a new one seeded from the default generator (as PyTorch does)."""

    if generator is not None:
        return generator
    return Generator().manual_seed(draw_seed())


class Sampler:
    """Base class: an iterable of indices (``__iter__``), usually with ``__len__``.

    Example:
        >>> from retrograd.utils.data import Sampler
        >>> class Evens(Sampler):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(0, self.n, 2))
        ...     def __len__(self): return (self.n + 1) // 2
        >>> list(Evens(5))
        [0, 2, 4]
    """

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order.

    Example:
        >>> from retrograd.utils.data import SequentialSampler
        >>> list(SequentialSampler('abc'))
        [0, 1, 2]
    """

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (or ``num_samples`` draws with replacement).

    Without ``generator`` each pass seeds a fresh generator from the default one, so
    ``retrograd.manual_seed`` makes the order reproducible.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import RandomSampler
        >>> s = RandomSampler(range(5), generator=torch.Generator().manual_seed(0))
        >>> sorted(s)
        [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:

        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import SubsetRandomSampler
        >>> sorted(SubsetRandomSampler([7, 3, 5], generator=torch.Generator().manual_seed(0)))
        [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:

        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import WeightedRandomSampler
        >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=torch.Generator())
        >>> list(s)
        [1, 1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:

        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=D.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:

        return iter(multinomial(self.weights, self.num_samples, self.replacement,
                                generator=self.generator).tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Example:
        >>> from retrograd.utils.data import BatchSampler
        >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
        [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while True:
            batch = list(islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
