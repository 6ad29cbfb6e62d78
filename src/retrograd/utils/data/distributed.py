"""``DistributedSampler``: each rank's share of a dataset, the same lists PyTorch gives.

Example:
    >>> from retrograd.utils.data.distributed import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False))
    ...  for r in range(2)]
    [[0, 2, 4], [1, 3, 0]]
    >>> s = DistributedSampler(range(10), num_replicas=3, rank=0, seed=0)
    >>> s.set_epoch(1); list(s)
    [5, 2, 9, 4]
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..._random import rng
from .sampler import Sampler

__all__ = ["DistributedSampler"]

# Note [PyTorch's permutation]
# DistributedSampler must give every rank the same permutation, and users moving from
# PyTorch expect its exact index lists (to resume a run, or to compare two runs): it draws
# with retrograd.randperm on a generator seeded with seed + epoch, which follows PyTorch's
# CPU randperm (see Note [PyTorch's CPU stream] in retrograd/_random/rng.py).


def _torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``."""
    return rng.randperm(rng.Generator().manual_seed(seed), n).tolist()


class DistributedSampler(Sampler):
    """Restrict a dataset to one rank's share (PyTorch's
    ``torch.utils.data.distributed.DistributedSampler``).

    The indices (shuffled with ``seed + epoch`` when ``shuffle``) are padded by repeating
    the first ones until they divide evenly (or cut, with ``drop_last``), and rank ``r``
    takes every ``num_replicas``-th one starting at ``r``. Call ``set_epoch(epoch)`` at the
    start of each epoch for a new order. ``num_replicas`` and ``rank`` default to the
    default process group's.

    Example:
        >>> from retrograd.utils.data.distributed import DistributedSampler
        >>> list(DistributedSampler(range(7), num_replicas=2, rank=1, drop_last=True,
        ...                         shuffle=False))
        [1, 3, 5]
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = _torch_randperm(n, self.seed + self.epoch)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the shuffle's seed (call it before each epoch's loop)."""
        self.epoch = epoch
