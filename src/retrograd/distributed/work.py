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

__all__ = ["Work", "wait_requests"]


# Note [Waiting with a deadline]
# MPI has no timeouts, and a blocking MPI call cannot be interrupted here. Open MPI's
# fault-tolerance interface (ULFM) has MPI_Comm_revoke, which a watchdog thread once
# called on a timeout to make the blocked call fail; it does so only for a call that
# waits to *receive*. A call that must *send* to a peer that hangs (asleep, in a
# deadlock, busy in Python: alive, but not inside MPI) waits for that peer's
# acknowledgement, and revoking does not end it. Measured with raw mpi4py on 2 ranks,
# one asleep, the other revoking its communicator from a second thread after 1 s:
# blocking MPI_Allreduce of 64 B failed at 1.0 s, of 2 KB to 16 MB never (until the
# sleeper woke), with each of Open MPI's six blocking algorithms when the sleeper was rank
# 0, and MPI_Iallreduce + MPI_Wait stayed blocked too with three of libnbc's four
# algorithms, among them the ring that retrograd selects (Note [Ring all-reduce] in
# _mpi.py). So the DDP job of the issue, one rank asleep at step 5 with a 10 s timeout,
# had not raised after 75 s. Now every wait is a non-blocking request tested from Python
# until it completes, and the waiting rank itself looks at the clock:
# - it spins on Testall for 1 ms (a small collective ends within it), then sleeps between
#   tests, backing off to 200 us, so that a waiting rank leaves the CPU to ranks that
#   still compute when ranks share cores;
# - every 64 tests it looks at the clock and at the failure channel (Note [Failure
#   notices] in process_group.py): past the timeout it raises DistBackendError naming the
#   operation and the timeout, and tells its peers it gave up; a peer's notice (it
#   raised) makes it raise naming that rank; so does, looked for every 10 ms once the wait
#   passed 1 ms, the file a peer leaves when it exits without destroy_process_group.
#   A peer that exited after finishing this very collective is not a failure: the request
#   gets _DEPARTED_GRACE_S more to complete before the notice is raised;
# - nothing else runs: no thread, no signal. A request that timed out is left pending
#   (MPI cannot cancel a collective); the process group is then broken, as PyTorch's is
#   after a timeout, and every later collective raises at once.
# What this costs on the fast path: Note [The all_reduce fast path] in collectives.py.
_SPIN_S = 0.001
_NAP_MAX_S = 2e-4
_DEPARTED_GRACE_S = 1.0
_LOOK_S = 0.01


def _error(why: str) -> _pg.DistBackendError:
    rank = _pg.STATE.world.rank() if _pg.STATE.world is not None else -1
    return _pg.DistBackendError(f"[Rank {rank}] {why}")


def _timed_out(state, op: str, limit: float) -> _pg.DistBackendError:
    """The timeout's error; the peers are told this rank gave up (Note [Failure notices])."""
    after = timedelta(seconds=limit)
    state.broken = f"{op} timed out after {after} (an earlier collective)"
    me = state.world.rank() if state.world is not None else -1
    _pg.notify_failure(f"rank {me} gave up on {op} after its timeout of {after}", wait_s=0.05)
    return _error(
        f"{op} timed out after {after}: a peer did not join it (it may have died, hung, or "
        "be running a different collective). Raise the limit with "
        "init_process_group(timeout=...) if the peers are only slow; otherwise find the "
        "rank that stopped (each rank's last collective) and make every rank run the same "
        "collectives in the same order")


def wait_requests(reqs: list, statuses: list | None, op: str, limit: float) -> None:
    """Test ``reqs`` until they complete; raise ``DistBackendError`` when ``limit`` seconds
    pass first or a peer reports a failure (Note [Waiting with a deadline]).

    Example:
        >>> import numpy as np
        >>> import retrograd.distributed as dist
        >>> from retrograd.distributed.work import wait_requests
        >>> dist.init_process_group()
        >>> comm = dist.group.WORLD.comm
        >>> a = np.ones(4)
        >>> wait_requests([comm.Iallreduce(load_mpi().IN_PLACE, a)], None, "all_reduce", 5.0)
        >>> a
        array([1., 1., 1., 1.])
        >>> dist.destroy_process_group()
    """
    try:
        _poll(_TESTALL, reqs, statuses, op, limit)
    except _MPIError as e:  # MPI's word that a peer died (ULFM), or another error
        exc = failure_error(_pg.STATE, op, e)
        if exc is e:
            raise
        raise exc from None


class _MPIError(Exception):
    """Stands for ``mpi4py.MPI.Exception`` until MPI is loaded (nothing raises it)."""


_TESTALL = None  # MPI.Request.Testall, bound at init (Note [Binding MPI at init])


def _bind_mpi(MPI) -> None:
    global _TESTALL, _MPIError
    _TESTALL, _MPIError = MPI.Request.Testall, MPI.Exception


_pg.ON_MPI.append(_bind_mpi)


def _poll(Testall, reqs: list, statuses, op: str, limit: float) -> None:
    state = _pg.STATE
    start = time.monotonic()
    spins = 0
    nap = 0.0
    notice_at = None
    look_at = start + _SPIN_S
    while not Testall(reqs, statuses):
        spins += 1
        if spins & 63:
            continue
        now = time.monotonic()
        if notice_at is None:
            notice = None if state.broken else _pg.peer_failure()
            if notice is None and now > look_at:  # a departed peer's file: every 10 ms
                look_at = now + _LOOK_S
                notice = _pg.peer_departure()
            if notice is not None:
                state.broken = notice
            if state.broken:
                notice_at = now
        if notice_at is not None and (not _pg.departed(state.broken)
                                      or now - notice_at > _DEPARTED_GRACE_S):
            raise _error(_pg.cannot_finish(state.broken, op))
        if now - start > limit:
            raise _timed_out(state, op, limit)
        if now - start > _SPIN_S:
            nap = min(_NAP_MAX_S, nap * 2 or 2e-5)
            time.sleep(nap)


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
        """Block until done; True. Raises ``DistBackendError`` on a timeout or a failed peer
        (Note [Waiting with a deadline])."""
        if self._exc is not None:
            raise self._exc
        if self._done:
            return True
        state = _pg.STATE
        if state.broken:
            raise self._fail(state.broken)
        limit = (timeout or self._pg.timeout).total_seconds()
        try:
            wait_requests(self._reqs, self._statuses, self._op, limit)
        except _pg.DistBackendError as e:
            self._exc = e
            raise
        self._complete()
        return True

    def _fail(self, why: str) -> _pg.DistBackendError:
        exc = self._exc = _error(why)
        return exc

    def get_future(self):
        raise RuntimeError("Work.get_future() is not supported by retrograd.distributed: "
                           "there is no torch.futures; call wait() and then result()")

    def __repr__(self) -> str:
        return f"<Work {self._op} {'done' if self._done else 'pending'}>"
