"""The watchdog: a thread that bounds blocking MPI calls by the process group's timeout.

Example:
    >>> import retrograd.distributed as dist
    >>> from retrograd.distributed.watchdog import Watchdog
    >>> dist.init_process_group()
    >>> wd = dist.process_group.STATE.watchdog
    >>> wd is None or isinstance(wd, Watchdog)  # None where MPI cannot revoke
    True
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["Watchdog", "can_revoke"]


# Note [Blocking calls and the watchdog]
# A blocking MPI call costs least (mpi4py's comm.Allreduce is what the benchmark compares
# with: polling a non-blocking one from Python added 5-10 us a call, and spinning Python
# took the CPU from a peer that shares the core), but MPI has no timeouts: a blocking call
# whose peer died would wait forever. Open MPI 5 implements the fault-tolerance interface
# ULFM, whose MPI_Comm_revoke, called from any thread, makes every pending and future
# operation on a communicator fail with MPI_ERR_REVOKED, on every rank. So when it is
# there (Open MPI with mpi_ft_enable, which load_mpi turns on, and MPI_THREAD_MULTIPLE),
# init_process_group starts this thread and collectives wait in blocking MPI calls:
# before each, the caller notes what it waits for and how long it may (``busy``) and bumps
# ``seq``;
# every ``period`` the thread checks whether the same call is still waiting after its
# limit, and polls the failure-notice channel (Note [Failure notices]). On a timeout or a
# notice it records why (STATE.broken) and revokes every communicator of the process
# group: the waiting call raises at once, and the caller turns MPI's error into
# DistBackendError with that reason. The check costs the caller three attribute stores;
# the thread wakes 20 times a second. Elsewhere (another MPI, or no thread support)
# waits poll instead (Note [Waiting by polling] in work.py).


def can_revoke(MPI) -> bool:
    """Whether blocking calls can be interrupted here (Note [Blocking calls and the watchdog]).

    Example:
        >>> from retrograd.distributed._mpi import load_mpi
        >>> from retrograd.distributed.watchdog import can_revoke
        >>> can_revoke(load_mpi()) in (True, False)
        True
    """
    if os.environ.get("RETROGRAD_DIST_POLL", "") not in ("", "0"):
        return False  # the user asked for polled waits
    flag = os.environ.get("OMPI_MCA_mpi_ft_enable", "").lower()
    return (hasattr(MPI.Comm, "Revoke") and flag in ("1", "true", "yes", "on")
            and "Open MPI" in MPI.Get_library_version()
            and MPI.Query_thread() == MPI.THREAD_MULTIPLE)


class Watchdog:
    """The thread of Note [Blocking calls and the watchdog] for one process group world.

    A caller about to block bumps ``seq``, sets ``busy`` to ``(operation's name, seconds
    it may wait)``, and clears ``busy`` afterwards; ``failure`` turns the MPI error a
    revoked call raised into the ``DistBackendError`` to raise.
    """

    def __init__(self, state, period: float = 0.05):
        self.busy: tuple[str, float] | None = None  # (operation, seconds it may wait)
        self.seq = 0
        self._state = state
        self._period = period
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="retrograd-dist-watchdog",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread (before the communicators are freed)."""
        self._halt.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        from . import process_group as pgm

        last, since = -1, 0.0
        while not self._halt.wait(self._period):
            if self._state.broken:
                continue
            notice = pgm.peer_failure()
            if notice is not None:
                self._trip(notice)
                continue
            busy, seq, now = self.busy, self.seq, time.monotonic()
            if busy is None or seq != last:
                last, since = seq, now
                continue
            op, limit_s = busy
            if now - since > limit_s:
                from datetime import timedelta

                limit = timedelta(seconds=limit_s)
                self._trip(f"{op} timed out after {limit}: a peer did not join it (it may "
                           "have died, hung, or be running a different collective). Raise "
                           "the limit with init_process_group(timeout=...) if the peers are "
                           "only slow",
                           f"rank {self._state.world.rank()} gave up on {op} after its "
                           f"timeout of {limit}")

    def _trip(self, why: str, tell: str | None = None) -> None:
        """Record ``why``, tell the peers ``tell`` (a timeout: they could not know), and
        revoke every communicator so that the waiting calls raise."""
        from .process_group import notify_failure

        state = self._state
        state.broken = why
        if tell is not None:
            notify_failure(tell)
        for pg in [state.world] + list(state.groups):
            if pg is not None:
                try:
                    pg.comm.Revoke()
                except Exception:  # already freed or revoked: nothing waits on it
                    pass

    def failure(self, op: str, err: BaseException):
        """The ``DistBackendError`` for ``op``, which MPI failed with ``err``."""
        from .process_group import DistBackendError, peer_failure

        state = self._state
        rank = state.world.rank() if state.world is not None else -1
        # A peer's revocation can overtake the notice that says why: wait for it a little.
        deadline = time.monotonic() + 1.0
        while not state.broken and time.monotonic() < deadline:
            notice = peer_failure()
            if notice is not None:
                state.broken = notice
                break
            time.sleep(0.002)
        why = state.broken
        if not why:
            why = (f"{op} failed: another rank gave up on the process group (its timeout "
                   f"passed or it saw a peer fail): {err}")
            state.broken = why
        elif not why.startswith(op + " timed out"):
            why = f"{why}; this rank cannot finish {op} without it"
        return DistBackendError(f"[Rank {rank}] {why}")
