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

__all__ = ["Watchdog", "can_revoke", "revoke_all"]


# Note [Blocking calls and the watchdog]
# A blocking MPI call costs least (mpi4py's comm.Allreduce is what the benchmark compares
# with: polling a non-blocking one from Python added 5-10 us a call, and spinning Python
# took the CPU from a peer that shares the core), but MPI has no timeouts: a blocking call
# whose peer died would wait forever. Open MPI 5 implements the fault-tolerance interface
# ULFM, whose MPI_Comm_revoke, called from any thread, makes every pending and future
# operation on a communicator fail with MPI_ERR_REVOKED, on every rank. So when it is
# there (Open MPI with mpi_ft_enable, which load_mpi turns on under a launcher, and
# MPI_THREAD_MULTIPLE), init_process_group starts this thread and collectives wait in
# blocking MPI calls:
# - before each, the caller stores in ``busy`` an object made for this call, and clears
#   ``busy`` after: one store of a new object, the cheapest mark that tells calls apart.
#   It is ``(operation's name, seconds it may wait)``, or, from the all_reduce fast path,
#   the (array, datatype) message it hands mpi4py anyway: an all_reduce on the world,
#   with the world's limit (``message_watch``). (A counter to bump would make a new int
#   per call, and a constant with a ``fresh`` flag beside it was two stores more, both
#   felt by the fast path: Note [The all_reduce fast path] in collectives.py.)
# - the thread wakes 20 times a second; when ``busy`` holds another object than at its
#   last look (a new call), or None, it starts the clock; when it finds the same object
#   again (the call it saw last is still running), it compares the time since with the
#   limit: past it, it revokes every communicator of the process group; the call raises
#   at once, and the caller sends the peers a failure notice (Note [Failure notices])
#   saying that it gave up. The thread keeps a reference to the object it saw last, so
#   a later call's object cannot reuse its memory and pass for it (``is`` compares
#   addresses); it lets go at its next look.
# - a rank dying of an exception sends its notice and then revokes too, so that peers
#   blocked in a call wake up; a peer whose call fails reads the notice (waiting up to a
#   second for it: the revocation can overtake it) and raises DistBackendError with it.
# The thread itself calls MPI only to revoke: Open MPI's non-blocking collectives
# (libnbc) crashed (SIGSEGV in ompi_coll_libnbc_progress) when a second thread drove MPI's
# progress while the first waited, so nothing here polls from another thread. Elsewhere
# (another MPI, or no thread support) waits poll instead (Note [Waiting by polling] in
# work.py).


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


def revoke_all(state) -> None:
    """Revoke every communicator of the process group (ULFM): their calls fail, everywhere.

    Example:
        >>> from retrograd.distributed.watchdog import revoke_all
        >>> callable(revoke_all)  # Note [Blocking calls and the watchdog]
        True
    """
    for pg in [state.world] + list(state.groups):
        if pg is not None:
            try:
                pg.comm.Revoke()
            except Exception:  # already freed or revoked: nothing waits on it
                pass


class Watchdog:
    """The thread of Note [Blocking calls and the watchdog] for one process group world.

    A caller about to block stores in ``busy`` an object made for this call: ``(operation's
    name, seconds it may wait)``, or the all_reduce fast path's (array, datatype) message
    (an all_reduce on the world: ``message_watch``), and clears ``busy`` afterwards;
    ``failure_error`` (in process_group.py) turns the MPI error a revoked call raised into
    the ``DistBackendError`` to raise.
    """

    def __init__(self, state, period: float = 0.05):
        self.busy: tuple | None = None  # Note [Blocking calls and the watchdog]
        self.timed_out = ""  # set by the thread when it revoked for a timeout
        # what a fast-path message waits for: an all_reduce on the world, and its limit
        self.message_watch = ("all_reduce", state.world.timeout.total_seconds())
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
        since = 0.0
        seen = None  # the object ``busy`` held at the last look (kept alive: see the Note)
        while not self._halt.wait(self._period):
            now = time.monotonic()
            busy = self.busy
            if self._state.broken or busy is None or busy is not seen:
                seen = busy
                since = now
                continue
            op, limit_s = busy if busy[0].__class__ is str else self.message_watch
            if now - since > limit_s:
                from datetime import timedelta

                self.timed_out = (f"{op} timed out after {timedelta(seconds=limit_s)}: a "
                                  "peer did not join it (it may have died, hung, or be "
                                  "running a different collective). Raise the limit with "
                                  "init_process_group(timeout=...) if the peers are only "
                                  "slow")
                revoke_all(self._state)
                since = now
