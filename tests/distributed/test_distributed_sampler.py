"""DistributedSampler gives PyTorch's index lists, bit for bit (no processes needed)."""

from __future__ import annotations

import pytest
import torch
import torch.utils.data.distributed as tdist

import retrograd.utils.data.distributed as rdist

CASES = [(n, reps, shuffle, drop, seed)
         for n in (0, 1, 5, 10, 101, 1000)
         for reps in (1, 2, 3, 4)
         for shuffle in (True, False)
         for drop in (True, False)
         for seed in (0, 17, -3, 2 ** 40 + 5)
         if not (n == 0 and not drop)]


@pytest.mark.parametrize("n,reps,shuffle,drop,seed", CASES)
def test_index_lists_match_torch(n, reps, shuffle, drop, seed):
    for rank in range(reps):
        kw = dict(num_replicas=reps, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop)
        ours, theirs = rdist.DistributedSampler(range(n), **kw), \
            tdist.DistributedSampler(range(n), **kw)
        for epoch in (0, 3):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


@pytest.mark.parametrize("n,seed", [(2, 0), (50_000, 42), (333, 2 ** 63 - 1)])
def test_the_permutation_is_torch_randperm(n, seed):
    want = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    assert rdist._torch_randperm(n, seed) == want


def test_bad_rank_is_refused_as_torch_does():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                       r"\[0, 1\]"):
        rdist.DistributedSampler(range(4), num_replicas=2, rank=2)
