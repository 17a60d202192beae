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
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .textfile import UnusableFile, read_regular_text

# The published logger name: log filters and tests name it (the module moved to agents/config/).
log = logging.getLogger("mysql_snmp.agents.option_file")

WHITESPACE = " \t\n\v\f\r"  # my_isspace() of latin1, the clients' test
# The clients stop following !include past this depth; here it is an error (a loop, most likely).
MAX_INCLUDE_DEPTH = 10
MAX_FILE_BYTES = 1 << 20
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "s": " ", '"': '"', "'": "'", "\\": "\\"}

Options = dict[str, "str | None"]


class OptionFileError(ValueError):
    """An option file that cannot be used as it stands; the message names the file (and line)."""


@dataclass
class OptionFile:
    """What one option file and the files it includes say, group by group (lowercased names)."""

    path: Path
    groups: dict[str, Options] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)  # every file read, in reading order

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
            text = read_regular_text(path, MAX_FILE_BYTES)
        except FileNotFoundError:
            raise OptionFileError(f"{path}: no such file") from None
        except OSError as exc:
            raise OptionFileError(f"{path}: cannot read: {exc.strerror}") from None
        except UnusableFile as exc:
            raise OptionFileError(f"{path}: {exc}") from None
        warn_if_exposed(path)
        self.result.files.append(path)
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
