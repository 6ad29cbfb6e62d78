"""The DataLoader: batches from a dataset, in this process or in worker processes.

Example:
    >>> import retrograd as torch
    >>> from retrograd.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(6.0).reshape(6, 1), torch.arange(6))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=4)]
    [[0, 1, 2, 3], [4, 5]]
"""

from __future__ import annotations

import itertools
import os
import queue
import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo", "default_collate", "default_convert"]

# How often (seconds) a waiting loader checks that its workers are alive, and a worker
# that its parent is.
_STATUS_CHECK_INTERVAL = 1.0


# ----------------------------------------------------------------------------------
# fetching: index (or batch of indices) -> collated data


class _MapFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.getitems = getattr(dataset, "__getitems__", None) if auto_collation else None

    def fetch(self, index):
        if self.auto_collation:
            if self.getitems is not None:
                data = self.getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _make_fetcher(is_iterable: bool, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The "sampler" of an iterable dataset: None forever (the dataset picks the data)."""

    def __iter__(self):
        while True:
            yield None


# ----------------------------------------------------------------------------------
# worker processes


class WorkerInfo:
    """What a worker process knows about itself: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (its own copy).

    Example:
        >>> from retrograd.utils.data.dataloader import WorkerInfo
        >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
        WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    """

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Inside a DataLoader worker process, its ``WorkerInfo``; in the main process None.

    Example:
        >>> from retrograd.utils.data import get_worker_info
        >>> print(get_worker_info())
        None
    """
    return _worker_info


class _KeyErrorMessage(str):
    """A KeyError's message shown as is (KeyError would otherwise repr() it)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process and re-raised there."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Tells a persistent worker that a new epoch starts."""


def _seed_worker(seed: int, base_seed: int, worker_id: int) -> None:
    import numpy as np

    from ..._random import rng

    random.seed(seed)
    rng.manual_seed(seed)
    # NumPy's global generator gets its own stream per worker (else every worker's
    # np.random would repeat the same numbers): SeedSequence's hash of (worker_id, base
    # seed), the 4 words PyTorch's workers seed np.random with (their _generate_state)
    mask = 0xFFFFFFFF
    ss = np.random.SeedSequence([worker_id, base_seed & mask, (base_seed >> 32) & mask])
    np.random.seed(ss.generate_state(4))


def _worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 parent_pid) -> None:
    """Body of a worker process: fetch the batches whose indices arrive on ``index_queue``."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while os.getppid() == parent_pid:
            try:
                r = index_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break  # the loader shut down (its "None" may never arrive)
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _make_fetcher(is_iterable, dataset, auto_collation, collate_fn,
                                        drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data = init_exception
                init_exception = None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()


# ----------------------------------------------------------------------------------
# the loader


def _get_context(mc):
    import multiprocessing as mp
    from multiprocessing.context import BaseContext

    if mc is None:
        return mp.get_context()
    if isinstance(mc, str):
        valid = mp.get_all_start_methods()
        if mc not in valid:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {valid!r}, but got multiprocessing_context={mc!r}")
        return mp.get_context(mc)
    if isinstance(mc, BaseContext):
        return mc
    raise TypeError("multiprocessing_context option should be a valid context object or a "
                    f"string specifying the start method, but got multiprocessing_context={mc}")


class DataLoader:
    """Iterate over ``dataset`` in batches (PyTorch's ``torch.utils.data.DataLoader``).

    ``batch_size`` samples per batch (``None`` turns batching off), ``shuffle`` (a new
    random order each epoch, drawn from ``generator`` or the default generator),
    ``sampler``/``batch_sampler`` for custom orders, ``drop_last``, ``collate_fn``
    (default: ``default_collate``), and ``num_workers`` worker processes (each seeded with
    ``base_seed + worker_id``, set up by ``worker_init_fn(worker_id)``). Batches come back
    in order; ``len(loader)`` is the number of batches.

    Example:
        >>> import retrograd as torch
        >>> from retrograd.utils.data import DataLoader
        >>> loader = DataLoader(list(range(10)), batch_size=4, shuffle=True, drop_last=True,
        ...                     generator=torch.Generator().manual_seed(0))
        >>> len(loader), [b.shape[0] for b in loader]
        (2, [4, 4])
    """

    _initialized = False

    def __init__(self, dataset: Dataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")
        if multiprocessing_context is not None:
            _get_context(multiprocessing_context)  # fail now on a bad start method
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None
        self._check_worker_number()
        self._initialized = True

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def _check_worker_number(self) -> None:
        if self.num_workers == 0:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        if self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          "create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to "
                          "avoid potential slowness/freeze if necessary.", stacklevel=3)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()


def _draw_base_seed(generator) -> int:
    from ..._random.rng import draw_seed

    return draw_seed(generator)


class _BaseIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=2)
        if loader.pin_memory:  # as PyTorch, on each new iterator (no accelerator here)
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)

    def __iter__(self):
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _make_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                      self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


# Note [DataLoader worker protocol]
# As in PyTorch: each worker has its own index queue and all share one result queue.
# The main process keeps ``prefetch_factor * num_workers`` tasks outstanding, sends
# them round-robin to the active workers, and numbers them (``send_idx``); results
# arriving early wait in ``_task_info`` until every earlier one has been returned
# (``rcvd_idx``), so batches come back in sampler order. An iterable dataset's worker
# answers a StopIteration marker when its copy is exhausted and is then retired. A
# waiting main process polls the workers' liveness, so a crashed worker raises an
# error instead of hanging.
class _MultiProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = _get_context(loader.multiprocessing_context)
        if ctx.get_start_method() != "fork":
            _check_picklable(ctx.get_start_method(), self._num_workers,
                             dataset=loader.dataset, collate_fn=loader.collate_fn,
                             worker_init_fn=loader.worker_init_fn)
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(
                    target=_worker_loop,
                    args=(self._is_iterable, self._dataset, index_queue,
                          self._worker_result_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, i, self._num_workers,
                          os.getpid()))
                w.daemon = True
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # a new epoch for persistent workers: make each re-create its fetcher
            for q in self._index_queues:
                q.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                ok, data = self._get_data()
                if isinstance(data[0], _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = [w for w, active in zip(self._workers, self._workers_status)
                      if active and not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                codes = ", ".join(str(w.exitcode) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly "
                                   f"(exit code(s) {codes}). A worker died, e.g. killed for "
                                   "using too much memory or crashed in native code; run "
                                   "with num_workers=0 to see the error in this "
                                   "process.") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return True, data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(_STATUS_CHECK_INTERVAL)
            if ok:
                return True, data

    def _next_data(self):
        while True:
            # skip over tasks whose worker retired (an exhausted iterable dataset copy)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)

            _, (idx, data) = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return  # no active worker left
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            deadline = time.monotonic() + 2 * _STATUS_CHECK_INTERVAL + 1.0
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass


def _check_picklable(method: str, num_workers: int, **objects: Any) -> None:
    """With the spawn/forkserver start methods the dataset travels to the workers by
    pickle: check that first, and name the object that cannot be pickled."""
    from multiprocessing.reduction import ForkingPickler

    for name, obj in objects.items():
        if obj is None:
            continue
        try:
            ForkingPickler.dumps(obj)
        except Exception as e:
            raise TypeError(
                f"DataLoader(num_workers={num_workers}) with the '{method}' start method sends "
                f"the {name} to each worker process by pickling it, but the {name} "
                f"({type(obj).__name__}) cannot be pickled: {type(e).__name__}: {e}. Define "
                "it (and everything it holds: no lambdas, local classes, open files or "
                "locks) at module level, or use multiprocessing_context='fork', or "
                "num_workers=0.") from e

