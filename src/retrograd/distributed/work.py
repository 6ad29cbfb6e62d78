"""``Work``: a collective in flight (``async_op=True``), waited on with a timeout.

Example:
    >>> import retrograd as torch
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group()
    >>> t = torch.ones(3)
    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait(), work.is_completed(), t
    (True, True, tensor([1., 1., 1.]))
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from . import process_group as _pg
from ._mpi import load_mpi
from .process_group import failure_error

__all__ = ["Work"]


class Work:
    """One collective or point-to-point operation in flight.

    ``wait()`` blocks until it is done (and raises ``DistBackendError`` when the timeout
    passes or a peer failed), ``is_completed()`` asks without blocking, ``result()``
    gives the output tensors. A blocking call (``async_op=False``) is a Work waited on at
    once.
    """

    def __init__(self, pg, op: str, requests: list, finish: Callable[[], None] | None = None,
                 outputs: list | None = None, statuses: list | None = None):
        self._pg = pg
        self._op = op
        self._reqs = requests
        self._finish = finish
        self._outputs = outputs or []
        self._done = not requests
        self._exc: BaseException | None = None
        self._source = -1
        self._statuses = statuses  # a receive: [MPI.Status], to learn the sender
        self._keep = None  # send buffers MPI reads until the operation completes
        if self._done:
            self._complete()

    def _complete(self) -> None:
        self._done = True
        self._reqs = []
        if self._statuses is not None:
            self._source = self._pg.ranks[self._statuses[0].Get_source()]
        if self._finish is not None:
            fin, self._finish = self._finish, None
            fin()

    def _test(self) -> bool:
        if self._done:
            return True
        if load_mpi().Request.Testall(self._reqs, self._statuses):
            self._complete()
        return self._done

    def is_completed(self) -> bool:
        """Whether the operation has finished (drives MPI's progress; never blocks)."""
        if self._exc is not None:
            return True
        return self._test()

    def is_success(self) -> bool:
        """Whether it finished without an error."""
        return self._done and self._exc is None

    def exception(self) -> BaseException | None:
        """The error it failed with, or None."""
        return self._exc

    def source_rank(self) -> int:
        """For a ``recv`` from any source: the rank the message came from."""
        if not self._done:
            raise RuntimeError("source_rank() is only available once the receive has "
                               "completed; call wait() first")
        return self._source

    def result(self) -> list:
        """The output tensors (after ``wait()``)."""
        return list(self._outputs)

    def synchronize(self) -> None:
        """Same as ``wait()`` on the CPU."""
        self.wait()

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until done; True. Raises ``DistBackendError`` on a timeout or a failed peer.

        Where the watchdog runs (Note [Blocking calls and the watchdog] in watchdog.py),
        this is one blocking ``MPI_Waitall``. Elsewhere, see Note [Failure notices] in
        process_group.py and:

        Note [Waiting by polling]
        MPI progresses non-blocking operations inside MPI calls, so waiting spins on
        ``Testall`` for 1 ms (a small collective ends within it), then sleeps
        between tests, backing off, so that a waiting rank leaves the
        CPU to ranks that still compute when ranks share cores (200 us at most, so a
        large transfer still gets its progress calls).
        """
        if self._exc is not None:
            raise self._exc
        if self._done:
            return True
        state = _pg.STATE
        if state.broken:
            raise self._fail(state.broken)
        limit = (timeout or self._pg.timeout).total_seconds()
        MPI = load_mpi()
        dog = state.watchdog
        if dog is not None:  # Note [Blocking calls and the watchdog]
            dog.busy = (self._op, limit)  # a new tuple: a new call, for the watchdog
            try:
                MPI.Request.Waitall(self._reqs, self._statuses)
            except MPI.Exception as e:
                exc = self._exc = failure_error(state, self._op, e, dog.timed_out)
                raise exc from None
            finally:
                dog.busy = None
            self._complete()
            return True
        try:
            return self._poll(MPI, state, limit)
        except MPI.Exception as e:  # MPI's word that a peer died (ULFM), or another error
            exc = failure_error(state, self._op, e)
            if exc is e:
                raise
            self._exc = exc
            raise exc from None

    def _poll(self, MPI, state, limit: float) -> bool:
        Testall = MPI.Request.Testall
        reqs, statuses = self._reqs, self._statuses
        start = time.monotonic()
        spins = 0
        nap = 0.0
        while not Testall(reqs, statuses):
            spins += 1
            if spins & 63:
                continue
            notice = _pg.peer_failure()
            if notice is not None:
                state.broken = f"{notice}"
                raise self._fail(f"{notice}; this rank cannot finish {self._op} without it")
            waited = time.monotonic() - start
            if waited > limit:
                state.broken = (f"{self._op} timed out after {timedelta(seconds=limit)} "
                                "(an earlier collective)")
                raise self._fail(
                    f"{self._op} timed out after {timedelta(seconds=limit)}: a peer did not "
                    "join it (it may have died, hung, or be running a different "
                    "collective). Raise the limit with init_process_group(timeout=...) if "
                    "the peers are only slow")
            if waited > 0.001:
                nap = min(2e-4, nap * 2 or 2e-5)
                time.sleep(nap)
        self._complete()
        return True

    def _fail(self, why: str) -> _pg.DistBackendError:
        rank = _pg.STATE.world.rank() if _pg.STATE.world is not None else -1
        exc = _pg.DistBackendError(f"[Rank {rank}] {why}")
        self._exc = exc
        return exc

    def get_future(self):
        raise RuntimeError("Work.get_future() is not supported by retrograd.distributed: "
                           "there is no torch.futures; call wait() and then result()")

    def __repr__(self) -> str:
        return f"<Work {self._op} {'done' if self._done else 'pending'}>"
