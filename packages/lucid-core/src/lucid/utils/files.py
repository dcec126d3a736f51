"""Writing files so that a reader never sees half of one: :func:`atomic_write`.

The data goes to a temporary file beside the target, is flushed to disk, gets the permissions
``open()`` would have given (or the existing file's), and is renamed over the target; a
failure or a kill leaves the old file as it was. Temporary files are named
``.<target>.lucid-save-<host>-<pid>-<random>.tmp``: only lucid writes that pattern, and the
host and pid tell a killed writer's leftovers, which the next write of the same target
removes, from a live one's.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import tempfile
from collections.abc import Callable
from typing import IO

_TEMP_TAG = "lucid-save"


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """Write a file through ``write(f)`` (``f`` a binary file) so that it appears whole or not.

    Errors name ``path`` (a missing folder, no permission), not the temporary file.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    _remove_stale_temps(directory, os.path.basename(target))
    try:
        prefix = f"{_temp_stem(os.path.basename(target))}{os.getpid()}-"
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    except OSError as exc:
        raise _target_error(exc, target, directory) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode(target))  # mkstemp makes 0600; keep what open() would give
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _target_error(exc: OSError, path: str, directory: str) -> OSError:
    """``exc`` (about the temporary file) restated about the file being written."""
    if isinstance(exc, FileNotFoundError) and not os.path.isdir(directory):
        why = f"its folder {directory!r} does not exist (create it first)"
    else:
        why = f"{exc.strerror or exc} (writing a temporary file in {directory!r})"
    return type(exc)(exc.errno, f"can't save to {path!r}: {why}", path)


def _temp_stem(basename: str) -> str:
    host = hashlib.sha1(socket.gethostname().encode(), usedforsecurity=False).hexdigest()[:8]
    return f".{basename}.{_TEMP_TAG}-{host}-"


def _remove_stale_temps(directory: str, basename: str) -> None:
    """Delete the temporary files of ``basename`` left by writers whose process has died."""
    pattern = re.compile(re.escape(_temp_stem(basename)) + r"(\d+)-[A-Za-z0-9_]+\.tmp")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match and not _process_alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


def _process_alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # (os.kill(pid, 0) terminates on Windows)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but belongs to someone else
    return True


def _file_mode(path: str) -> int:
    """The existing file's permissions, else the usual 0666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["atomic_write"]
