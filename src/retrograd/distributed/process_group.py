"""Process groups on MPI: ``init_process_group``, ``new_group``, ranks, sizes, teardown.

The world is the MPI launcher's: ``retrograd run --nproc N``, ``mpiexec -n N`` or a
cluster scheduler starts the processes, MPI connects them, and ``init_process_group``
checks that what the script or the environment says (``rank=``, ``world_size=``,
``RANK``, ``WORLD_SIZE``) agrees with it.

Example:
    >>> import retrograd.distributed as dist
    >>> dist.init_process_group("mpi")  # one process: a world of one
    >>> dist.get_rank(), dist.get_world_size(), dist.get_backend()
    (0, 1, 'mpi')
    >>> dist.destroy_process_group()
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import time
import warnings
from datetime import timedelta

from ._mpi import load_mpi, mpi_available

# Note [Binding MPI at init]
# The collectives look up MPI's objects once, when the world is made (the fast path of
# all_reduce reads them as module globals): collectives.py, which imports this module,
# registers its binding function here at import, and init_process_group calls it. The
# fast path reads the world's bound Iallreduce and its timeout as module globals too (a
# global is one specialised bytecode; STATE.world.comm.Iallreduce was three lookups):
# every change of STATE.world goes through _set_world, which hands the new world (or
# None) to the functions in ON_WORLD.
ON_MPI: list = []
ON_WORLD: list = []

__all__ = ["Backend", "DistError", "DistBackendError", "ProcessGroup", "GroupMember", "group",
           "init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_mpi_available", "is_gloo_available", "is_nccl_available", "is_torchelastic_launched",
           "get_rank", "get_world_size", "get_backend", "new_group", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class DistError(RuntimeError):
    """An error of the distributed package (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed: a peer died or raised, or the timeout passed."""


class Backend(str):
    """A backend name; ``Backend.MPI`` runs everything here (``"gloo"`` maps onto it).

    Example:
        >>> from retrograd.distributed import Backend
        >>> Backend("MPI"), Backend.GLOO
        ('mpi', 'gloo')
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A set of ranks that run collectives together, on its own MPI communicator.

    ``ranks`` lists the members' global ranks (their rank in the world); ``rank()`` and
    ``size()`` are this process's rank in the group and the group's size.
    """

    def __init__(self, comm, ranks: list[int], timeout: timedelta, name: str):
        self.comm = comm
        self.ranks = ranks
        self.timeout = timeout
        self.group_name = name
        self._rank = comm.Get_rank()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return len(self.ranks)

    def name(self) -> str:
        return "MPI"

    def __repr__(self) -> str:
        return f"ProcessGroup(name={self.group_name!r}, ranks={self.ranks})"


class _State:
    """The default group and everything made with it (Note [One world per process])."""

    def __init__(self):
        self.world: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.backend = ""
        self.fail_comm = None  # Note [Failure notices]
        self.fail_req = None
        self.fail_buf = None
        self.broken = ""  # why the process group cannot be used any more
        self.prev_hook = None
        self.counter = 0
        self.job_dir = ""  # Note [Failure notices]


# Note [One world per process]
# Like PyTorch's default process group, the world is process-wide state: created by
# init_process_group, dropped by destroy_process_group. MPI itself can be initialised
# only once per process, so a destroyed world is re-created from the same MPI world.
STATE = _State()

NON_GROUP_MEMBER = -100


class _Members:
    """``group.WORLD`` (the default group) and ``group.NON_GROUP_MEMBER``."""

    NON_GROUP_MEMBER = NON_GROUP_MEMBER

    @property
    def WORLD(self) -> ProcessGroup | None:
        return STATE.world


group = GroupMember = _Members()


def is_available() -> bool:
    """Whether the distributed package can run here (mpi4py is installed).

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.is_available() in (True, False)
        True
    """
    return mpi_available()


def is_mpi_available() -> bool:
    """Same as ``is_available()``: MPI is the backend."""
    return mpi_available()


def is_gloo_available() -> bool:
    """True when MPI is: ``backend="gloo"`` runs on MPI."""
    return mpi_available()


def is_nccl_available() -> bool:
    """False: retrograd runs on the CPU."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether ``TORCHELASTIC_RUN_ID`` is set (it never is under an MPI launcher)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not).

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.is_initialized()
        False
    """
    return STATE.world is not None


def _launcher_rank_env() -> dict[str, int]:
    """RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE as the MPI launcher set them, if any."""
    pairs = {"RANK": ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"),
             "WORLD_SIZE": ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"),
             "LOCAL_RANK": ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"),
             "LOCAL_WORLD_SIZE": ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS")}
    out = {}
    for key, names in pairs.items():
        for n in names:
            if os.environ.get(n, "").isdigit():
                out[key] = int(os.environ[n])
                break
    return out


def _check_agrees(what: str, given: int, actual: int, source: str) -> None:
    if given != actual:
        raise ValueError(
            f"{what} {given} (from {source}) does not match the MPI launcher's {what} {actual}. "
            "retrograd.distributed takes the world from the launcher: start the processes with "
            "`retrograd run --nproc N script.py` or `mpiexec -n N python script.py`, and "
            "pass rank/world_size only if they agree with it (or leave them out)")


def _check_init_args(backend, init_method, timeout, store) -> tuple[Backend, timedelta]:
    """init_process_group's arguments checked: (the backend's name, the timeout)."""
    name = Backend(backend) if backend is not None else Backend.MPI
    if name in (Backend.NCCL, Backend.UCC) or name.startswith("cuda"):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in. "
                           "retrograd runs on the CPU: use backend='mpi' (or 'gloo', which "
                           "runs on MPI)")
    if name not in (Backend.MPI, Backend.GLOO, "cpu:gloo"):
        raise ValueError(f"Invalid backend: '{backend}'; retrograd.distributed supports "
                         "'mpi' (and 'gloo', run on MPI)")
    if store is not None:
        raise ValueError("store= is not supported: retrograd.distributed takes the world from "
                         "the MPI launcher, which needs no store; drop the argument")
    if init_method not in (None, "env://") and not str(init_method).startswith(
            ("tcp://", "file://")):
        raise ValueError(f"Unsupported init_method {init_method!r}: use 'env://' (or leave it "
                         "out); the MPI launcher connects the processes")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    return name, timeout


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the world of processes started by the MPI launcher (PyTorch's
    ``torch.distributed.init_process_group``).

    ``backend`` is ``"mpi"`` (the default); ``"gloo"`` is accepted and runs on MPI.
    ``init_method`` ``"env://"`` (or none) reads ``RANK`` and ``WORLD_SIZE`` when set and
    checks them against the launcher; ``tcp://`` and ``file://`` addresses are not needed
    (MPI's launcher does the rendezvous) and are accepted for the same check. ``timeout``
    bounds every collective: a collective that has not finished by then, or whose peer
    raised, raises ``DistBackendError`` instead of hanging.

    Example:
        >>> from datetime import timedelta
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("gloo", timeout=timedelta(seconds=30))
        >>> dist.is_initialized()
        True
        >>> dist.destroy_process_group()
    """
    if STATE.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name, timeout = _check_init_args(backend, init_method, timeout, store)
    if not mpi_available():
        raise RuntimeError("Distributed package doesn't have MPI built in: "
                           "retrograd.distributed needs mpi4py; install it with "
                           "`pip install 'retrograd[distributed]'`")
    MPI = load_mpi()
    world = MPI.COMM_WORLD
    mrank, msize = world.Get_rank(), world.Get_size()
    env_size = os.environ.get("WORLD_SIZE")
    if world_size == -1 and env_size is not None and int(env_size) > 1 and msize == 1:
        raise RuntimeError(
            f"WORLD_SIZE is {env_size} but this process was not started by an MPI launcher "
            "(MPI sees a world of 1). retrograd.distributed connects processes with MPI: "
            f"start them with `retrograd run --nproc {env_size} script.py` or "
            f"`mpiexec -n {env_size} python script.py` instead of torchrun")
    if world_size != -1:
        _check_agrees("world_size", world_size, msize, "init_process_group(world_size=...)")
    elif env_size is not None:
        _check_agrees("world_size", int(env_size), msize, "the WORLD_SIZE variable")
    if rank != -1:
        _check_agrees("rank", rank, mrank, "init_process_group(rank=...)")
    elif os.environ.get("RANK") is not None:
        _check_agrees("rank", int(os.environ["RANK"]), mrank, "the RANK variable")
    if name != Backend.MPI and mrank == 0:
        warnings.warn("retrograd.distributed: backend 'gloo' runs on MPI (mpi4py)",
                      stacklevel=2)
    comm = world.Dup()
    STATE.backend = Backend.MPI
    STATE.broken = ""
    STATE.counter = 0
    for bind in ON_MPI:  # Note [Binding MPI at init]
        bind(MPI)
    _set_world(ProcessGroup(comm, list(range(msize)), timeout, group_name or "default_pg"))
    _start_failure_channel(world)
    STATE.job_dir = _job_dir() if msize > 1 else ""
    for key, value in _launcher_rank_env().items():
        os.environ.setdefault(key, str(value))
    os.environ.setdefault("RANK", str(mrank))
    os.environ.setdefault("WORLD_SIZE", str(msize))


def _set_world(world: ProcessGroup | None) -> None:
    """``STATE.world = world``, told to ON_WORLD (Note [Binding MPI at init])."""
    STATE.world = world
    for mirror in ON_WORLD:
        mirror(world)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free a group's communicator; without ``group``, the default group and all groups.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> dist.destroy_process_group(); dist.is_initialized()
        False
    """
    if STATE.world is None:
        raise ValueError(_NOT_INIT)
    if group is not None and group is not STATE.world:
        if group == NON_GROUP_MEMBER:
            return
        if group in STATE.groups:
            STATE.groups.remove(group)
            group.comm.Free()
        return
    for pg in STATE.groups:
        pg.comm.Free()
    STATE.groups = []
    _stop_failure_channel()
    if not STATE.broken:
        STATE.world.comm.Free()
    _set_world(None)
    STATE.backend = ""


def world_group() -> ProcessGroup:
    """The default group, or PyTorch's error when there is none."""
    if STATE.world is None:
        raise ValueError(_NOT_INIT)
    return STATE.world


def resolve(group) -> ProcessGroup | None:
    """The group to run on: ``None`` means the world; a non-member gets ``None``."""
    pg = world_group()
    if group is None or group is pg:
        return pg
    if group == NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group(), got {type(group)}")
    return group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the world by default); -1 if not a member.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> dist.get_rank()
        0
        >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (the world by default); -1 if not a member.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> dist.get_world_size()
        1
        >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend's name: ``"mpi"``.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group("gloo")
        >>> dist.get_backend()
        'mpi'
        >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return STATE.backend


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None, backend=None,
              pg_options=None, use_local_synchronization: bool = False, group_desc=None,
              device_id=None) -> ProcessGroup | int:
    """A group of some of the world's ranks; every process must call it (as in PyTorch).

    Returns the group on its members and ``GroupMember.NON_GROUP_MEMBER`` elsewhere.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> g = dist.new_group([0])
        >>> dist.get_process_group_ranks(g), dist.get_world_size(g)
        ([0], 1)
        >>> dist.destroy_process_group()
    """
    world = world_group()
    n = world.size()
    members = sorted(range(n) if ranks is None else {int(r) for r in ranks})
    for r in members:
        if not 0 <= r < n:
            raise ValueError(f"Invalid rank {r} in new_group(ranks=...): ranks are 0 to "
                             f"{n - 1} in a world of {n}")
    me = world.rank()
    MPI = load_mpi()
    # Split is collective over the world, so every rank must call new_group, as in PyTorch.
    comm = world.comm.Split(0 if me in members else MPI.UNDEFINED, me)
    STATE.counter += 1
    if me not in members:
        return NON_GROUP_MEMBER
    pg = ProcessGroup(comm, members, timeout or world.timeout, str(STATE.counter))
    STATE.groups.append(pg)
    return pg


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members.

    Example:
        >>> import retrograd.distributed as dist
        >>> dist.init_process_group()
        >>> dist.get_process_group_ranks(dist.group.WORLD)
        [0]
        >>> dist.destroy_process_group()
    """
    pg = resolve(group)
    if pg is None:
        raise ValueError("Group is not registered, please create group with "
                         "torch.distributed.new_group API")
    return list(pg.ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The world rank of the member ``group_rank`` of ``group``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank within ``group`` of the world rank ``global_rank``."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# --------------------------------------------------------------------------------------
# Note [Failure notices]
# MPI has no timeouts, and a rank that raises does not stop its peers: they would wait
# in their next collective forever (or until the launcher kills the job, which says
# nothing about why). So every collective here is non-blocking underneath and waits by
# polling (Note [Waiting with a deadline] in work.py), and each rank keeps one receive
# posted on a private duplicate of the world communicator. A rank whose program dies of
# an uncaught exception sends a short notice ("rank 1 raised ValueError: ...") to every
# peer before exiting; a peer waiting in a collective sees it on its next poll and raises
# DistBackendError naming the rank and its error. A rank that gives up after its timeout
# says so too. A rank that leaves while the process group is still up (its script ended,
# or called sys.exit(), without destroy_process_group) stays inside MPI_Finalize, which
# under ULFM waits for the peers: without a word the job stood still for the whole timeout
# (30 minutes by default), where PyTorch's gloo raises at once ("Connection closed by
# peer"). So an atexit handler, which runs before mpi4py's MPI_Finalize (atexit runs the
# handlers newest first, and MPI was loaded before init_process_group registered this
# one), writes "rank 1 exited ..." to a file in the folder that `retrograd run` makes for
# the job and removes after it (_job_dir), and a waiting peer looks there every 10 ms once
# it has waited 1 ms (peer_departure). Under a bare mpiexec there is no such folder (a
# folder of our own would be left behind by every script that ends without
# destroy_process_group), and a departure shows as the timeout. Not an MPI message: a
# script that simply ends without destroy_process_group leaves too, its peers never take
# the message, and sending one left both ranks of a 2-rank job blocked in MPI_Finalize's
# barrier in about one exit in four. A file reaches only the ranks on the same machine (or
# a shared file system); other ranks learn of the departure from the timeout. A rank
# killed by a signal or by os._exit() says nothing: the launcher (Open MPI's prterun) then
# ends the whole job and names the rank.
# The dying rank also arms an alarm of one timeout, so that MPI's finalisation, which
# waits for the others, cannot keep it alive forever. Open MPI's launcher ends the whole
# job as soon as one rank exits with an error, so a peer killed before it read the notice
# would say nothing: the notice goes by synchronous sends (each complete once the peer's
# receive has taken it, up to 2 s), and the dying rank waits _NOTICE_GRACE_S more.
_NOTICE_BYTES = 1024
_NOTICE_GRACE_S = 0.25
_DEPARTED = " exited without calling destroy_process_group"
_DEPARTED_FILE = "departed-rank-"
_GAVE_UP = " after its timeout of "  # in the notice of a rank that timed out (work.py)


def _start_failure_channel(world) -> None:
    import numpy as np

    STATE.fail_comm = world.Dup()
    STATE.fail_buf = np.zeros(_NOTICE_BYTES, np.uint8)
    STATE.fail_req = STATE.fail_comm.Irecv(STATE.fail_buf, source=load_mpi().ANY_SOURCE)
    if STATE.prev_hook is None:
        STATE.prev_hook = sys.excepthook
        sys.excepthook = _excepthook
        atexit.register(_at_exit)


def _at_exit() -> None:
    """Leaving with the process group up: tell the peers (Note [Failure notices])."""
    if STATE.world is not None and not STATE.broken and STATE.world.size() > 1:
        folder = _job_dir()
        if folder:
            me = STATE.world.rank()
            try:
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, f"{_DEPARTED_FILE}{me}"), "w") as f:
                    f.write(f"rank {me}{_DEPARTED} (its script ended or called sys.exit())")
            except OSError:  # no room to say it: the peers time out instead
                pass
    _stop_failure_channel()


def _job_dir() -> str:
    """Where departing ranks leave their notice: the folder `retrograd run` made for the
    job (Note [Failure notices]); "" under another launcher."""
    return os.environ.get("RETROGRAD_DIST_JOBDIR", "")


def peer_departure() -> str | None:
    """The notice of a peer that exited with the process group up, if one left one.

    Example:
        >>> from retrograd.distributed.process_group import peer_departure
        >>> peer_departure() is None  # no process group here
        True
    """
    folder = STATE.job_dir
    if not folder or STATE.world is None:
        return None
    try:
        names = os.listdir(folder)
    except OSError:  # nobody left yet
        return None
    mine = f"{_DEPARTED_FILE}{STATE.world.rank()}"
    for name in sorted(names):
        if name.startswith(_DEPARTED_FILE) and name != mine:
            try:
                with open(os.path.join(folder, name)) as f:
                    return f.read()
            except OSError:
                continue
    return None


def departed(notice: str) -> bool:
    """Whether a peer's notice says it exited (rather than failed).

    Example:
        >>> from retrograd.distributed.process_group import departed
        >>> departed("rank 1 raised ValueError: bad"), departed(
        ...     "rank 1 exited without calling destroy_process_group (its script ended)")
        (False, True)
    """
    return _DEPARTED in notice


def cannot_finish(why: str, op: str) -> str:
    """What a rank raises when a peer's notice (``why``) stops ``op``: the cause and the fix.

    Example:
        >>> from retrograd.distributed.process_group import cannot_finish
        >>> cannot_finish("rank 1 raised ValueError: bad", "all_reduce")
        'rank 1 raised ValueError: bad; this rank cannot finish all_reduce without it'
    """
    if why.startswith(op + " timed out"):
        return why
    text = f"{why}; this rank cannot finish {op} without it"
    if departed(why):
        text += (". Make every rank run the same collectives before it exits, and end "
                 "each rank's script with dist.destroy_process_group()")
    elif _GAVE_UP in why:  # that rank waited too: another one did not join
        text += (" (that rank was waiting too: another peer did not join, or runs a "
                 "different collective). Raise the limit with init_process_group(timeout="
                 "...) if the peers are only slow")
    return text


def _stop_failure_channel() -> None:
    req, STATE.fail_req = STATE.fail_req, None
    if req is not None:
        try:
            if not req.Test():
                req.Cancel()
                req.Wait()
        except Exception:  # teardown after an MPI error: nothing left to release
            pass
    if STATE.fail_comm is not None and not STATE.broken:
        STATE.fail_comm.Free()
    STATE.fail_comm = None


def peer_failure() -> str | None:
    """The notice a failed peer sent, if one has arrived (polled by waits)."""
    req = STATE.fail_req
    if req is None:
        return None
    try:
        if not req.Test():
            return None
    except load_mpi().Exception:  # (ULFM: a peer died; the receive stays posted)
        return None
    STATE.fail_req = None
    raw = bytes(STATE.fail_buf).rstrip(b"\0")
    return raw.decode("utf-8", "replace")


def notify_failure(text: str, wait_s: float = 2.0) -> None:
    """Tell every peer that this rank is failing with ``text`` (Note [Failure notices]);
    wait up to ``wait_s`` for them to take it."""
    import time

    import numpy as np

    comm = STATE.fail_comm
    if comm is None or STATE.world is None:
        return
    me, n = STATE.world.rank(), STATE.world.size()
    msg = np.zeros(_NOTICE_BYTES, np.uint8)
    raw = text.encode("utf-8")[:_NOTICE_BYTES - 1]
    msg[:len(raw)] = np.frombuffer(raw, np.uint8)
    # synchronous sends: each completes once the peer's posted receive has taken it (the
    # peer was inside an MPI call), not when the message is merely buffered here, so this
    # rank does not exit (and the launcher kill the job) before the peers have it
    try:
        reqs = [comm.Issend(msg, dest=p) for p in range(n) if p != me]
        deadline = time.monotonic() + wait_s
        MPI = load_mpi()
        while reqs and not MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(0.001)
    except load_mpi().Exception:
        pass  # a peer already gone (ULFM): the others have what reached them


def _excepthook(etype, value, tb) -> None:
    if STATE.world is not None and not issubclass(etype, KeyboardInterrupt):
        me = STATE.world.rank()
        notify_failure(f"rank {me} raised {etype.__name__}: {value}")
        # a moment for the peers to read the notice and say so before this rank exits and
        # the launcher ends the job (Note [Failure notices])
        time.sleep(_NOTICE_GRACE_S)
        if hasattr(signal, "SIGALRM"):
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(max(1, int(STATE.world.timeout.total_seconds()) + 1))
    (STATE.prev_hook or sys.__excepthook__)(etype, value, tb)


def failure_error(state, op: str, err: BaseException):
    """The ``DistBackendError`` for ``op``, which MPI failed with ``err`` because a peer
    failed (ULFM's MPI_ERR_PROC_FAILED, or MPI_ERR_IN_STATUS with a peer's notice); any
    other MPI error is given back as it is (the caller raises it).

    Example:
        >>> from retrograd.distributed.process_group import failure_error
        >>> callable(failure_error)  # used where a wait caught an MPI error
        True
    """
    MPI = load_mpi()
    failed = (MPI.ERR_REVOKED, MPI.ERR_PROC_FAILED,
              getattr(MPI, "ERR_PROC_FAILED_PENDING", -1))
    # MPI_Waitall and MPI_Testall report a request that failed (its peer died) as
    # MPI_ERR_IN_STATUS: that is a peer's failure when the peer's notice arrives (below),
    # else an ordinary error given back
    cls = err.Get_error_class()
    in_status = cls == MPI.ERR_IN_STATUS
    if cls not in failed and not in_status:
        return err
    rank = state.world.rank() if state.world is not None else -1
    # MPI's word that a peer died can overtake the notice that says why: wait for it a
    # little.
    deadline = time.monotonic() + 1.0
    while not state.broken and time.monotonic() < deadline:
        notice = peer_failure()
        if notice is not None:
            state.broken = notice
            break
        time.sleep(0.002)
    why = state.broken
    if not why and in_status:
        return err  # no peer said it failed
    if not why:
        why = f"{op} failed: a peer process failed ({err})"
        state.broken = why
    return DistBackendError(f"[Rank {rank}] {cannot_finish(why, op)}")
