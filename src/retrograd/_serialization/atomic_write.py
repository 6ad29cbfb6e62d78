"""Atomic file writes: a temporary file next to the target, renamed into place, and the
temporaries of killed writers cleaned up (Note [Temporary files]). Checkpoints
(serialization.py) and safetensors files both write through it.

Example:
    >>> import os, tempfile
    >>> from retrograd._serialization.atomic_write import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> atomic_write(path, lambda out: out.write(b"data"))
    >>> open(path, "rb").read()
    b'data'
"""

from __future__ import annotations

import os
import socket
import zlib


def _file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# Note [Temporary files]
# A save writes ``.<name>.<host>.<pid>.<token>.retrograd-tmp`` next to the target and
# renames it into place. A process killed mid-save (SIGKILL, a power cut) leaves its
# temporary file behind; the next save to the same path removes the ones whose writer
# is gone: same host (a hash of the hostname, so a shared file system never sees one
# machine delete another's file in progress) and a pid that no longer runs. A live pid,
# another host's file or anything unparsable is left alone.
_TMP_SUFFIX = ".retrograd-tmp"


def _host_tag() -> str:

    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a pid we could have written: leave the file alone
    if os.name == "nt":  # os.kill(pid, 0) is not a probe on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, owned by someone else
        return True
    return True


def _remove_stale_temps(directory: str, base: str, host: str) -> None:
    """Delete temporary files of ``base`` left by dead writers on this host
    (Note [Temporary files])."""
    prefix = f".{base}.{host}."
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(_TMP_SUFFIX)):
            continue
        pid_text = name[len(prefix):-len(_TMP_SUFFIX)].partition(".")[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass


def atomic_write(path, write) -> None:
    """Call ``write(file)`` on a temporary file next to ``path``, then move it into place.

    A crash or an exception mid-write leaves any existing file at ``path`` untouched;
    temporary files left by writers that were killed are removed by the next write to
    the same path (Note [Temporary files]).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    mode = _file_mode(path)
    host = _host_tag()
    _remove_stale_temps(directory, base, host)
    tmp = os.path.join(directory, f".{base}.{host}.{os.getpid()}.{os.urandom(4).hex()}"
                                  f"{_TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
