"""``retrograd run --nproc N script.py ARGS``: start N ranks of a script under mpiexec.

The role torchrun plays for PyTorch: each rank sees ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` as torchrun
sets them, so ``init_process_group("gloo")`` scripts run unchanged. ``--hostfile`` spreads
the ranks over machines (Open MPI's hostfile: one ``host slots=K`` line per machine).
The exit code is the job's (non-zero if any rank failed); Ctrl-C and SIGTERM are passed
on to mpiexec, which stops every rank.

Example:
    >>> from retrograd.distributed.launch import launch_command
    >>> cmd = launch_command(2, "train.py", ["--epochs", "3"], mpiexec="mpiexec")
    >>> cmd[:3], cmd[-4:]
    (['mpiexec', '-n', '2'], ['retrograd.distributed.launch', 'train.py', '--epochs', '3'])
"""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile

from ._mpi import find_mpiexec
from .process_group import _launcher_rank_env

__all__ = ["launch_command", "run"]

_FORWARD_ENV = ("MASTER_ADDR", "MASTER_PORT", "PYTHONPATH", "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS", "RETROGRAD_DIST_JOBDIR")


def launch_command(nproc: int, script: str, args: list[str], hostfile: str | None = None,
                   mpiexec: str | None = None, extra: list[str] | None = None) -> list[str]:
    """The mpiexec command line that ``retrograd run`` executes."""
    cmd = [mpiexec or find_mpiexec(), "-n", str(nproc)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")  # Open MPI refuses root without it
    if hostfile:
        cmd += ["--hostfile", hostfile]
    elif nproc > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")  # more ranks than cores on one machine
    for var in _FORWARD_ENV:  # to the other machines of a hostfile
        if var in os.environ:
            cmd += ["-x", var]
    cmd += list(extra or [])
    cmd += [sys.executable, "-m", "retrograd.distributed.launch", script] + list(args)
    return cmd


def run(nproc: int, script: str, args: list[str], hostfile: str | None = None,
        extra: list[str] | None = None) -> int:
    """Run ``script`` on ``nproc`` ranks; returns the job's exit code."""
    if nproc < 1:
        raise ValueError(f"--nproc must be at least 1, got {nproc}")
    env = dict(os.environ)
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", "29500")
    # where a rank that exits with the process group up leaves word for its peers (Note
    # [Failure notices] in process_group.py); removed with the job
    jobdir = tempfile.mkdtemp(prefix="retrograd-job-")
    env["RETROGRAD_DIST_JOBDIR"] = jobdir
    try:
        proc = subprocess.Popen(launch_command(nproc, script, args, hostfile, extra=extra),
                                env=env)
        code = _wait(proc)
    finally:
        shutil.rmtree(jobdir, ignore_errors=True)
    return 128 - code if code < 0 else code


def _wait(proc) -> int:
    """The job's exit code; Ctrl-C and SIGTERM go on to mpiexec meanwhile."""

    def forward(signum, frame):
        proc.send_signal(signum)
    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        return proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _child(argv: list[str]) -> None:
    """One rank: set torchrun's variables from the MPI launcher's, then run the script."""
    if not argv:
        raise SystemExit("usage: python -m retrograd.distributed.launch SCRIPT [ARGS]")
    for key, value in _launcher_rank_env().items():
        os.environ[key] = str(value)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    _child(sys.argv[1:])
