"""A secret given in the environment, forgotten once read.

Dropping a variable from ``os.environ`` keeps it from children, but ``/proc/PID/environ`` does not
read ``environ``: it reads the block the kernel wrote on the stack at exec, which stays as it was,
readable by the agent's own user and root for the process's life.  So the value is also blanked
in that block, where glibc's ``environ`` still points at it.  Best effort: where libc has no
``environ`` symbol (not glibc), only the dictionary entry goes.
"""

from __future__ import annotations

import ctypes
import os


def _blank_startup_copy(name: str) -> bool:
    """Overwrite the value of ``name=`` in the C environment with NUL bytes; True when one was found."""
    try:
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return False
    prefix = name.encode() + b"="
    blanked = False
    index = 0
    while entries[index]:
        address = entries[index]
        entry = ctypes.string_at(address)
        if entry.startswith(prefix):
            ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
            blanked = True
        index += 1
    return blanked


def forget_environment_variable(name: str) -> None:
    """``name`` leaves the environment children inherit and the start-up copy /proc shows."""
    if name not in os.environ:
        return
    _blank_startup_copy(name)
    os.environ.pop(name, None)
