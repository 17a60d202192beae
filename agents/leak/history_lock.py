"""One agent per leak history file.

Two agents given one state file would each replace it with their own series at every save,
and a restarted one would load the other's.  An agent therefore holds an exclusive lock on
``<state file>.lock`` (flock: the kernel drops it when the process ends, however it ends, so
no stale lock outlives its agent) and writes in it who holds it; a second agent refuses to
start with one line naming the holder.

The lock is a file of its own because a save replaces the state file (rename), and a lock
on the old inode would not be seen through the new one.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

# What a holder writes is one short line; a longer one was not written by an agent.
MAX_HOLDER_BYTES = 512


class HistoryInUse(ValueError):
    """Another process holds the lock (one line, naming the holder)."""


def lock_path(state_path: str | os.PathLike) -> Path:
    """``<state file>.lock``, in the state file's directory as resolved: two agents naming one
    directory by two paths (a symlinked directory) still meet at one lock.  The state file itself
    is not resolved: a symlink planted there must not lead the lock into another directory (and
    the first save replaces such a symlink with the file anyway)."""
    state_path = Path(state_path)
    return Path(os.path.realpath(state_path.parent)) / (state_path.name + ".lock")


class HistoryLock:
    """The lock on one state file, held from acquire() until release() or the process's end."""

    def __init__(self, state_path: str | os.PathLike, holder: str):
        self.state_path = Path(state_path)
        self.path = lock_path(state_path)
        self.holder = f"pid {os.getpid()}, {holder}"
        self._fd: int | None = None
        self._open_failed = False

    def acquire(self) -> bool:
        """Take the lock: True when held; raises HistoryInUse when another process holds it;
        False (with one warning, until it works) when the lock file cannot be opened at all,
        e.g. on a read-only filesystem, where no other agent can write the history either."""
        if self._fd is not None:
            return True
        try:
            fd = self._open()
        except OSError as exc:
            if not self._open_failed:
                log.warning("cannot lock leak state file %s through %s (%s): will try again at each save",
                            self.state_path, self.path, exc.strerror or exc)
            self._open_failed = True
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(fd)
            os.close(fd)
            raise HistoryInUse(f"leak state file {self.state_path} is in use by {holder} "
                               "(its lock: " + str(self.path) + "); give each agent a state file of its own "
                               "(--leak-state / --exporter.leak-state-file)") from None
        self._fd = fd
        if self._open_failed:
            log.warning("leak state file %s locked now", self.state_path)
        self._open_failed = False
        self._write_holder()
        return True

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a symlink planted at the lock's path must not make the agent truncate
        # the file it points to; O_NONBLOCK: a FIFO there must not hang the start.
        flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(self.path, os.O_RDWR | flags, 0o644)
        except PermissionError:
            # another user's lock file: flock works on a read-only descriptor too
            fd = os.open(self.path, os.O_RDONLY | flags)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{self.path} is not a regular file")
        return fd

    def _write_holder(self) -> None:
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, (self.holder + "\n").encode("utf-8", "replace")[:MAX_HOLDER_BYTES], 0)
        except OSError:
            pass  # read-only descriptor or a full disk: the lock holds all the same, unnamed

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        except OSError:
            pass
        os.close(self._fd)  # closing the only descriptor drops the flock
        self._fd = None


def _read_holder(fd: int) -> str:
    try:
        data = os.pread(fd, MAX_HOLDER_BYTES, 0)
    except OSError:
        data = b""
    text = data.decode("utf-8", "replace").strip()
    # the file is anyone's who can write there: print it as one line of printable text
    text = "".join(c if c.isprintable() else " " for c in text).strip()
    return text or "another process"
