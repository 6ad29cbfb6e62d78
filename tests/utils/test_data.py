"""retrograd.utils.data against torch.utils.data: datasets, samplers, collation, loaders."""

from __future__ import annotations

import collections
import math
import os

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.utils import data as D


def _py(x):
    """A structure of tensors as plain Python (type tag, dtype name, values) to compare."""
    if isinstance(x, (rg.Tensor, torch.Tensor)):
        return ("T", str(x.dtype).replace("torch.", ""), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: _py(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("nt", tuple(_py(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_py(v) for v in x])
    return x


# ----------------------------------------------------------------------------------
# datasets


def test_tensor_dataset():
    for lib in (rg, torch):
        ds = lib.utils.data.TensorDataset(lib.arange(6).reshape(3, 2), lib.arange(3))
        assert len(ds) == 3 and _py(ds[1]) == ("tuple", [("T", "int64", (2,), [2, 3]),
                                                         ("T", "int64", (), 1)])
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4))


def test_concat_and_subset():
    for lib in (rg, torch):
        U = lib.utils.data
        ds = U.ConcatDataset([list(range(3)), list(range(10, 14))])
        assert len(ds) == 7 and [ds[i] for i in range(7)] == [0, 1, 2, 10, 11, 12, 13]
        assert ds[-1] == 13 and ds.cumulative_sizes == [3, 7]
        with pytest.raises(ValueError, match="absolute value of index should not exceed"):
            ds[-8]
        sub = U.Subset(ds, [6, 0, 3])
        assert len(sub) == 3 and [sub[i] for i in range(3)] == [13, 0, 10]


def test_dataset_add_and_chain():
    class Items(D.Dataset):
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    both = Items([1, 2]) + Items([3])
    assert isinstance(both, D.ConcatDataset) and [both[i] for i in range(3)] == [1, 2, 3]

    class Stream(D.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    assert list(Stream() + Stream()) == [0, 1, 2, 0, 1, 2]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        D.ConcatDataset([Stream()])
    with pytest.raises(NotImplementedError):
        D.Dataset()[0]


def test_stack_dataset():
    for lib in (rg, torch):
        U = lib.utils.data
        assert U.StackDataset([1, 2], ["a", "b"])[1] == (2, "b")
        assert U.StackDataset(x=[1, 2], y=["a", "b"])[0] == {"x": 1, "y": "a"}
        with pytest.raises(ValueError, match="Size mismatch between datasets"):
            U.StackDataset([1], [1, 2])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5]])
def test_random_split(lengths):
    g1 = rg.Generator().manual_seed(5)
    g2 = rg.Generator().manual_seed(5)
    a = D.random_split(range(10), lengths, generator=g1)
    b = D.random_split(range(10), lengths, generator=g2)
    assert [list(s) for s in a] == [list(s) for s in b]
    ref = torch.utils.data.random_split(range(10), lengths,
                                        generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in a] == [len(s) for s in ref]
    assert sorted(i for s in a for i in s) == list(range(10))


def test_random_split_errors_and_default_generator():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the "
                                         "input dataset!"):
        D.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        D.random_split(range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(range(1), [0.9, 0.1])
    rg.manual_seed(3)
    a = [list(s) for s in D.random_split(range(8), [4, 4])]
    rg.manual_seed(3)
    assert a == [list(s) for s in D.random_split(range(8), [4, 4])]


# ----------------------------------------------------------------------------------
# samplers


def test_samplers():
    assert list(D.SequentialSampler("abcd")) == [0, 1, 2, 3]
    g = rg.Generator().manual_seed(1)
    perm = list(D.RandomSampler(range(6), generator=g))
    assert sorted(perm) == list(range(6))
    s = D.RandomSampler(range(6), replacement=True, num_samples=70, generator=g)
    drawn = list(s)
    assert len(s) == len(drawn) == 70 and set(drawn) <= set(range(6))
    s = D.RandomSampler(range(4), num_samples=10, generator=g)
    drawn = list(s)
    assert len(drawn) == 10 and sorted(drawn[:4]) == [0, 1, 2, 3]
    assert sorted(D.SubsetRandomSampler([5, 9, 2], generator=g)) == [2, 5, 9]
    w = list(D.WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], 5, generator=g))
    assert w == [2, 2, 2, 2, 2]
    w = list(D.WeightedRandomSampler([1, 1, 1], 3, replacement=False, generator=g))
    assert sorted(w) == [0, 1, 2]
    assert list(D.BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(D.BatchSampler(range(7), 3, False)) == 3
    assert len(D.BatchSampler(range(7), 3, True)) == 2


def test_random_sampler_reproducible_from_manual_seed():
    rg.manual_seed(7)
    a = list(D.RandomSampler(range(20)))
    rg.manual_seed(7)
    assert a == list(D.RandomSampler(range(20)))


@pytest.mark.parametrize("make", [
    lambda U: U.RandomSampler(range(3), replacement=1),
    lambda U: U.RandomSampler(range(3), num_samples=0),
    lambda U: U.WeightedRandomSampler([1.0], num_samples=-1),
    lambda U: U.WeightedRandomSampler([1.0], 2, replacement="yes"),
    lambda U: U.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda U: U.BatchSampler(range(3), 0, False),
    lambda U: U.BatchSampler(range(3), 2, 1),
])
def test_sampler_errors_match_torch(make):
    outs = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            make(lib.utils.data)
        outs.append((type(info.value), str(info.value)))
    assert outs[0][0] is outs[1][0] and outs[0][1].startswith(outs[1][1].split(" torch.")[0])


# ----------------------------------------------------------------------------------
# collation

Point = collections.namedtuple("Point", ["x", "y"])


def _batches(lib):
    t = lib.tensor
    return [
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.int64(3), np.int64(4)],
        [(t([1]), 2), (t([3]), 4)],
        [[t([1]), 2.0], [t([3]), 4.0]],
        [{"a": t([1.0]), "b": {"c": 1}}, {"a": t([2.0]), "b": {"c": 2}}],
        [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
        [Point(1, t(2.0)), Point(3, t(4.0))],
    ]


@pytest.mark.parametrize("i", range(14))
def test_default_collate_matches_torch(i):
    ours = D.default_collate(_batches(rg)[i])
    ref = torch.utils.data.default_collate(_batches(torch)[i])
    assert _py(ours) == _py(ref)


def test_default_collate_errors_match_torch():
    for bad in ([object(), object()], [np.array(["a"]), np.array(["b"])], [[1, 2], [1]]):
        outs = []
        for collate in (D.default_collate, torch.utils.data.default_collate):
            with pytest.raises(Exception) as info:
                collate(bad)
            outs.append((type(info.value), str(info.value)))
        assert outs[0] == outs[1]
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        D.default_collate([rg.zeros(2), rg.zeros(3)])


def test_default_convert_matches_torch():
    for lib, convert in ((rg, D.default_convert), (torch, torch.utils.data.default_convert)):
        out = convert([np.array([1, 2]), (np.float64(1.5), "s"), {"k": np.zeros(2)}])
        if lib is rg:
            ours = _py(out)
        else:
            ref = _py(out)
    assert ours == ref


# ----------------------------------------------------------------------------------
# the DataLoader (single process)


def _xy(lib, n=10):
    x = lib.arange(n * 2, dtype=lib.float32).reshape(n, 2)
    return lib.utils.data.TensorDataset(x, lib.arange(n))


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4, shuffle=False),
                                dict(batch_sampler=[[0, 5], [9, 1, 2]]),
                                dict(sampler=[9, 8, 7], batch_size=2),
                                dict(batch_size=4, collate_fn=lambda b: len(b))])
def test_dataloader_batches_match_torch(kw):
    ours = [_py(b) for b in rg.utils.data.DataLoader(_xy(rg), **kw)]
    ref = [_py(b) for b in torch.utils.data.DataLoader(_xy(torch), **kw)]
    assert ours == ref
    assert len(rg.utils.data.DataLoader(_xy(rg), **kw)) == len(
        torch.utils.data.DataLoader(_xy(torch), **kw))


def test_dataloader_shuffle_is_reproducible_and_covers_everything():
    def epoch(loader):
        return [y.tolist() for _, y in loader]

    loader = D.DataLoader(_xy(rg, 12), batch_size=5, shuffle=True,
                          generator=rg.Generator().manual_seed(0))
    e1, e2 = epoch(loader), epoch(loader)
    assert e1 != e2  # a new order each epoch
    assert sorted(sum(e1, [])) == list(range(12)) and [len(b) for b in e1] == [5, 5, 2]
    loader2 = D.DataLoader(_xy(rg, 12), batch_size=5, shuffle=True,
                           generator=rg.Generator().manual_seed(0))
    assert epoch(loader2) == e1 and epoch(loader2) == e2
    rg.manual_seed(11)
    a = epoch(D.DataLoader(_xy(rg, 12), batch_size=5, shuffle=True))
    rg.manual_seed(11)
    assert a == epoch(D.DataLoader(_xy(rg, 12), batch_size=5, shuffle=True))


class _Squares(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        info = D.get_worker_info()
        return {"i": i, "sq": np.array([i * i]), "worker": -1 if info is None else info.id}


class _Stream(D.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = D.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset_single_process():
    assert [b.tolist() for b in D.DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2],
                                                                           [3, 4, 5], [6]]
    assert [b.tolist() for b in D.DataLoader(_Stream(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert len(D.DataLoader(_Stream(7), batch_size=3)) == 3
    assert [b for b in D.DataLoader(_Stream(3), batch_size=None)] == [0, 1, 2]


@pytest.mark.parametrize("make", [
    lambda U, ds: U.DataLoader(ds, num_workers=-1),
    lambda U, ds: U.DataLoader(ds, timeout=-1),
    lambda U, ds: U.DataLoader(ds, prefetch_factor=2),
    lambda U, ds: U.DataLoader(ds, persistent_workers=True),
    lambda U, ds: U.DataLoader(ds, sampler=[0], shuffle=True),
    lambda U, ds: U.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
    lambda U, ds: U.DataLoader(ds, batch_size=None, drop_last=True),
    lambda U, ds: U.DataLoader(ds, multiprocessing_context="spawn"),
    lambda U, ds: U.DataLoader(ds, num_workers=1, multiprocessing_context="nope"),
])
def test_dataloader_errors_match_torch(make):
    outs = []
    for lib in (rg, torch):
        with pytest.raises(Exception) as info:
            make(lib.utils.data, _xy(lib))
        outs.append((type(info.value), str(info.value)))
    assert outs[0] == outs[1]


def test_dataloader_iterable_dataset_errors_and_frozen_attributes():
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got "
                                         "shuffle=True"):
        D.DataLoader(_Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        D.DataLoader(_Stream(3), sampler=[0])
    loader = D.DataLoader(_xy(rg))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3


# ----------------------------------------------------------------------------------
# worker processes


def test_workers_give_the_same_batches_in_order():
    single = [_py(b) for b in D.DataLoader(_xy(rg, 23), batch_size=4)]
    multi = [_py(b) for b in D.DataLoader(_xy(rg, 23), batch_size=4, num_workers=2)]
    assert multi == single
    batches = list(D.DataLoader(_Squares(), batch_size=3, num_workers=2))
    assert [b["i"].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert [b["worker"].tolist()[0] for b in batches] == [0, 1, 0, 1]
    assert batches[1]["sq"].tolist() == [[9], [16], [25]]


def _init_fn(worker_id):
    info = D.get_worker_info()
    info.dataset.offset = 100 * (worker_id + 1)


class _Offset(D.Dataset):
    offset = 0

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i + self.offset


def test_worker_init_fn_and_worker_info():
    out = [b.tolist() for b in D.DataLoader(_Offset(), batch_size=1, num_workers=2,
                                            worker_init_fn=_init_fn)]
    assert out == [[100], [201], [102], [203]]
    assert D.get_worker_info() is None


class _RandomItems(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (rg.rand(1).item(), float(np.random.rand()))


def test_worker_seeds_are_reproducible_and_distinct():
    def run():
        rg.manual_seed(123)
        return [b for b in D.DataLoader(_RandomItems(), batch_size=None, num_workers=2)]

    a, b = run(), run()
    assert a == b
    # worker 0 fetches items 0 and 2, worker 1 items 1 and 3: their streams differ
    assert a[0] != a[1]


def test_iterable_dataset_with_workers():
    out = sorted(sum((b.tolist() for b in D.DataLoader(_Stream(9), batch_size=2,
                                                        num_workers=2)), []))
    assert out == list(range(9))


class _Failing(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("missing item 2")
        return i


def test_worker_exception_is_reraised_with_its_origin():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(D.DataLoader(_Failing(), batch_size=1, num_workers=2))


class _Crashing(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_dead_worker_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) .*\) exited "
                                           "unexpectedly"):
        list(D.DataLoader(_Crashing(), batch_size=1, num_workers=1))


class _Unpicklable(D.Dataset):
    def __init__(self):
        self.fn = lambda i: i

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.fn(i)


def test_unpicklable_dataset_gets_a_clear_error_with_spawn():
    loader = D.DataLoader(_Unpicklable(), num_workers=1, multiprocessing_context="spawn")
    with pytest.raises(TypeError, match="with the 'spawn' start method sends the dataset to "
                                        "each worker process by pickling it, but the dataset "
                                        r"\(_Unpicklable\) cannot be pickled"):
        iter(loader)
    # with fork (the Linux default) nothing is pickled, as in PyTorch
    if "fork" in __import__("multiprocessing").get_all_start_methods():
        loader = D.DataLoader(_Unpicklable(), num_workers=1, multiprocessing_context="fork")
        assert [b.tolist() for b in loader] == [[0], [1]]


def test_persistent_workers_across_epochs():
    loader = D.DataLoader(_xy(rg, 6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [y.tolist() for _, y in loader]
    it = loader._iterator
    second = [y.tolist() for _, y in loader]
    assert first == second == [[0, 1], [2, 3], [4, 5]]
    assert loader._iterator is it and all(w.is_alive() for w in it._workers)
    it._shutdown_workers()


def test_in_order_false_still_returns_everything():
    out = [y.tolist() for _, y in D.DataLoader(_xy(rg, 8), batch_size=2, num_workers=2,
                                                in_order=False)]
    assert sorted(sum(out, [])) == list(range(8))


def test_len_of_loader():
    assert len(D.DataLoader(_xy(rg, 10), batch_size=4)) == math.ceil(10 / 4)
    assert len(D.DataLoader(_xy(rg, 10), batch_size=4, drop_last=True)) == 2


def test_spawned_workers_receive_a_pickled_dataset():
    loader = D.DataLoader(_xy(rg, 7), batch_size=3, num_workers=2,
                          multiprocessing_context="spawn")
    assert [y.tolist() for _, y in loader] == [[0, 1, 2], [3, 4, 5], [6]]
