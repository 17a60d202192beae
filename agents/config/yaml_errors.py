"""One line for a YAML file that cannot be read or parsed.

PyYAML's messages run over four lines (with a caret under a copy of the line) and an
OSError repeats the path; a start-up error must be one line that names file and place."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # PyYAML is imported only by a process that reads a YAML file
    import yaml


def describe_load_error(exc: OSError | yaml.YAMLError) -> str:
    """What went wrong, without the path (the caller puts it first)."""
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or not problem:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")
