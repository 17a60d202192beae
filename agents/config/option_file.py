"""MySQL option files (my.cnf), read as the mysql and mariadb clients read them.

The rules (mysys ``search_default_file_with_ext``), which the tests check against the ``mariadb``
client on the same files:

- a line is a ``[group]``, an ``option`` or ``option = value``, a ``!include FILE`` or
  ``!includedir DIR`` directive, or blank / a comment (first non-blank character ``#`` or ``;``);
- ``#`` outside quotes ends the line anywhere, so ``password = "secret" # note`` is ``secret``;
- spaces around the option name and the value are dropped, then one pair of matching quotes around
  the whole value, then the escapes ``\\n \\t \\r \\b \\s \\" \\' \\\\`` are processed (quoted or not;
  another backslash stays as it is);
- group names are compared without case; text after ``]`` is ignored;
- an option before any group, or a group without ``]``, makes the file unusable;
- ``!include`` reads another file there and then, ``!includedir`` every ``*.cnf`` file of a directory
  in name order; a relative path is taken from the working directory, as the clients take it.

Where the clients skip a file they cannot read, a missing file or directory here is an error: an
option file that silently loses its ``password`` or ``user`` makes the agent log in as someone else.
Option names are folded to lower snake_case (``ssl-ca`` and ``ssl_ca`` are one option to the
clients); an option without ``=`` has the value None.

``cached_option_file`` reads a file again only when it or a file it includes changed: an exporter
with 500 ``[client.NAME]`` sections no longer parses them all for each new /probe target.  What
decides is the status (device, inode, size, modification and change times, in nanoseconds) of every
file read and every ``!includedir`` directory listed, checked at each call: an edit, a file added to
a directory, a chmod or a file replaced is read at the next call, and a file gone is the error it is
to ``read_option_file``.  A file modified less than ``RECENT_CHANGE_SECONDS`` before it was read is not
trusted (the kernel stamps times from a coarse clock: a second edit in the same tick, of the same
size, would look unchanged), so such a result is read again at the next call.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from .textfile import UnusableFile, read_regular_file

# The published logger name: log filters and tests name it (the module moved to agents/config/).
log = logging.getLogger("mysql_snmp.agents.option_file")

WHITESPACE = " \t\n\v\f\r"  # my_isspace() of latin1, the clients' test
# The clients stop following !include past this depth; here it is an error (a loop, most likely).
MAX_INCLUDE_DEPTH = 10
MAX_FILE_BYTES = 1 << 20
RECENT_CHANGE_SECONDS = 2.0
MAX_CACHED_FILES = 8
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "s": " ", '"': '"', "'": "'", "\\": "\\"}

Options = dict[str, "str | None"]
Signature = tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns


class OptionFileError(ValueError):
    """An option file that cannot be used as it stands; the message names the file (and line)."""


@dataclass
class OptionFile:
    """What one option file and the files it includes say, group by group (lowercased names)."""

    path: Path
    groups: dict[str, Options] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)  # every file read, in reading order
    # Every file read and directory listed, with its status then: what cached_option_file checks.
    watched: list[tuple[Path, Signature]] = field(default_factory=list)

    def group(self, name: str) -> Options | None:
        return self.groups.get(name.lower())


def strip_comment(line: str) -> str:
    """The line up to a ``#`` that is not inside quotes (a backslash protects a quote inside them)."""
    quote = ""
    escaped = False
    for index, char in enumerate(line):
        if char in "'\"" and not escaped:
            if not quote:
                quote = char
            elif quote == char:
                quote = ""
        if not quote and char == "#":
            return line[:index]
        escaped = bool(quote) and char == "\\" and not escaped
    return line


def unescape(value: str) -> str:
    out = []
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            index += 1
            out.append(ESCAPES.get(value[index], "\\" + value[index]))
        else:
            out.append(char)
        index += 1
    return "".join(out)


def option_value(raw: str) -> str:
    """The value of ``option = raw`` (``raw`` already without its comment)."""
    value = raw.strip(WHITESPACE)
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        value = value[1:-1]
    return unescape(value)


def option_name(raw: str) -> str:
    name = raw.strip(WHITESPACE).lower().replace("-", "_")
    # loose-NAME: "NAME, if this program knows it"; every client takes it as NAME.
    return name[len("loose_"):] if name.startswith("loose_") else name


def parse_option_line(line: str) -> tuple[str, str | None]:
    """``option`` or ``option = value`` -> (name, value or None)."""
    name, equals, value = strip_comment(line).partition("=")
    return option_name(name), option_value(value) if equals else None


class _Reader:
    """Fills one OptionFile; ``follow_directives`` False ignores !include (text not from a file)."""

    def __init__(self, root: Path, follow_directives: bool = True):
        self.result = OptionFile(root)
        self.follow_directives = follow_directives

    def read(self, path: Path, depth: int) -> None:
        if depth > MAX_INCLUDE_DEPTH:
            raise OptionFileError(f"{path}: included more than {MAX_INCLUDE_DEPTH} levels deep (an include loop?)")
        try:
            text, info = read_regular_file(path, MAX_FILE_BYTES)
        except FileNotFoundError:
            raise OptionFileError(f"{path}: no such file") from None
        except OSError as exc:
            raise OptionFileError(f"{path}: cannot read: {exc.strerror}") from None
        except UnusableFile as exc:
            raise OptionFileError(f"{path}: {exc}") from None
        warn_if_exposed(path)
        self.result.files.append(path)
        self.result.watched.append((path, signature(info)))
        self.parse(text, str(path), depth)

    def parse(self, text: str, name: str, depth: int) -> None:
        group: Options | None = None  # each file starts outside any group, as in the clients
        for number, raw in enumerate(text.split("\n"), 1):
            line = raw.lstrip(WHITESPACE)
            where = f"{name} line {number}"
            if not line or line[0] in "#;":
                continue
            if line[0] == "!":
                if self.follow_directives:
                    self.directive(line[1:].lstrip(WHITESPACE), where, depth)
            elif line[0] == "[":
                section, bracket, _ = line[1:].partition("]")
                if not bracket:
                    raise OptionFileError(f"{where}: a group name without its closing ]")
                group = self.result.groups.setdefault(section.rstrip(WHITESPACE).lower(), {})
            elif group is None:
                raise OptionFileError(f"{where}: an option before any [group]")
            else:
                option, value = parse_option_line(line)
                group[option] = value

    def directive(self, text: str, where: str, depth: int) -> None:
        keyword, argument = _split_word(text)
        if keyword not in ("include", "includedir"):
            return  # the clients ignore directives they do not know
        if not argument:
            raise OptionFileError(f"{where}: !{keyword} without a path")
        target = Path(argument).expanduser()
        if keyword == "include":
            self.read(target, depth + 1)
            return
        try:
            # Its status before it is listed: a file added after this is seen at the next check.
            self.result.watched.append((target, signature(os.stat(target))))
            names = sorted(entry.name for entry in os.scandir(target) if entry.name.endswith(".cnf"))
        except OSError as exc:
            raise OptionFileError(f"{where}: !includedir {argument}: cannot read: {exc.strerror}") from None
        for name in names:
            self.read(target / name, depth + 1)


def _split_word(text: str) -> tuple[str, str]:
    """``"include  /a b  "`` -> ("include", "/a b"): the keyword must be followed by white space."""
    for index, char in enumerate(text):
        if char in WHITESPACE:
            return text[:index], text[index:].strip(WHITESPACE)
    return text, ""


def read_option_file(path: str | os.PathLike) -> OptionFile:
    """Every group of the option file at ``path`` and of the files it includes.

    Raises OptionFileError naming the file (and line) that cannot be read or parsed.
    """
    root = Path(path).expanduser()
    reader = _Reader(root)
    reader.read(root, 0)
    return reader.result


def signature(info: os.stat_result) -> Signature:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def unchanged(option_file: OptionFile) -> bool:
    """Every file and directory ``option_file`` was read from is as it was then."""
    for path, seen in option_file.watched:
        try:
            if signature(os.stat(path)) != seen:
                return False
        except OSError:
            return False
    return True


_cache_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str], OptionFile] = OrderedDict()


def cached_option_file(path: str | os.PathLike) -> OptionFile:
    """``read_option_file(path)``, read again only when one of its files changed (see the module's
    notes).  The result is shared between callers: read it, never change it."""
    root = Path(path).expanduser()
    key = (os.getcwd(), str(root))  # a relative path, here or in an !include, is from the working directory
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and unchanged(cached):
        return cached
    started = time.time_ns()
    fresh = read_option_file(root)
    settled = started - int(RECENT_CHANGE_SECONDS * 1e9)
    with _cache_lock:
        if all(seen[3] < settled for _, seen in fresh.watched):  # modified long enough before
            _cache[key] = fresh
            _cache.move_to_end(key)
            while len(_cache) > MAX_CACHED_FILES:
                _cache.popitem(last=False)
        else:
            _cache.pop(key, None)
    return fresh


def parse_option_text(text: str, name: str = "<text>") -> dict[str, Options]:
    """The groups of option-file text, its directives ignored (for text that is not a file)."""
    reader = _Reader(Path(name), follow_directives=False)
    reader.parse(text, name, 0)
    return reader.result.groups


def warn_if_exposed(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning(
            "%s is readable by group or others (mode %o): it may hold a password; for the packaged units: "
            "sudo chown root:root %s && sudo chmod 0600 %s (systemd hands them a copy); for an agent you run "
            "yourself: chmod 600 %s",
            path, stat.S_IMODE(mode), path, path, path,
        )
