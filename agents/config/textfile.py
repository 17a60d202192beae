"""Reading a small text file that the agent does not trust to be one.

A configuration or state path may name a FIFO (opening it would wait for a writer for
ever), a device that never ends, a directory, a huge or a binary file.  Each is refused
with a one-line reason the caller prefixes with the path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnusableFile(ValueError):
    """Why the file cannot be read as text (one line, without the path)."""


def read_regular_text(path: str | os.PathLike, max_bytes: int) -> str:
    """The UTF-8 text of the regular file at ``path``; OSError when it cannot be opened."""
    return read_regular_file(path, max_bytes)[0]


def read_regular_file(path: str | os.PathLike, max_bytes: int) -> tuple[str, os.stat_result]:
    """read_regular_text, and the file's status as it was opened (before it was read)."""
    # O_NONBLOCK: opening a FIFO returns at once instead of blocking; fstat then refuses it.
    fd = os.open(Path(path), os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnusableFile("not a regular file")
        if info.st_size > max_bytes:
            raise UnusableFile(f"{info.st_size} bytes, more than such a file ever holds ({max_bytes})")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while being read
        raise UnusableFile(f"more than {max_bytes} bytes")
    try:
        return data.decode("utf-8"), info
    except UnicodeDecodeError as exc:
        raise UnusableFile(f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None
