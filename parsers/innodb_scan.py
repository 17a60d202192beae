"""Scratch state and token helpers shared by the InnoDB status section handlers.

Lines of SHOW ENGINE INNODB STATUS are ``"label N, label N"`` or ``"N label, N label"`` lists; the helpers
read the number next to each label and return None (never a guessed 0) when it is not a number.
"""
from __future__ import annotations

from typing import Callable, TypeVar

from .innodb_numbers import to_float, to_int

T = TypeVar("T")


class ScanState:
    """Mutable scratch space of one parse; never escapes parse_innodb_status."""

    __slots__ = (
        "values", "sums", "pools", "pool", "raw_trx", "in_trx_list", "ibuf_ops", "rows_line",
        "section_first_line", "pre56_loops",
    )

    def __init__(self) -> None:
        self.values: dict[str, int | float | str] = {}
        self.sums: dict[str, int | float] = {}
        self.pools: dict[str, dict[str, int | float]] = {}
        self.pool: dict[str, int | float] | None = None  # current INDIVIDUAL BUFFER POOL INFO instance
        self.raw_trx: dict[str, list[str]] = {}  # trx-id tokens, decoded once hex/decimal is known
        self.in_trx_list = False
        self.ibuf_ops = ""  # "merged" / "discarded": which operations list the next line belongs to
        self.rows_line = ""  # "user" / "system": which row counter line the next rates line follows
        self.section_first_line = True
        self.pre56_loops = False  # "srv_master_thread loops: N 1_second, ..." is printed by 5.1-plugin/5.5 only

    def add(self, name: str, amount: int | float) -> None:
        self.sums[name] = self.sums.get(name, 0) + amount


def ints_before(line: str, labels: tuple[str, ...]) -> list[int | None]:
    """For ``"N label, N label"`` lines: the integer printed just before each label."""
    return _numbers_before(line, labels, to_int)


def floats_before(line: str, labels: tuple[str, ...]) -> list[float | None]:
    """For ``"N label, N label"`` lines: the number printed just before each label, as a float."""
    return _numbers_before(line, labels, to_float)


def _numbers_before(line: str, labels: tuple[str, ...], convert: Callable[[str], T | None]) -> list[T | None]:
    out: list[T | None] = []
    for label in labels:
        pos = line.find(label)
        # pos 0: the label opens the line, so no number precedes it.
        head = line[:pos].rstrip().rsplit(None, 1) if pos > 0 else []
        out.append(convert(head[-1]) if head else None)
    return out


def ints_after(line: str, labels: tuple[str, ...]) -> list[int | None]:
    """For ``"label N, label N"`` lines: the integer printed just after each label."""
    out = []
    for label in labels:
        pos = line.find(label)
        if pos < 0:
            out.append(None)
            continue
        tail = line[pos + len(label):].split(None, 1)
        out.append(to_int(tail[0]) if tail else None)
    return out


def store(target: dict, names: tuple[str, ...], numbers: list) -> None:
    for name, number in zip(names, numbers):
        if number is not None:
            target[name] = number
