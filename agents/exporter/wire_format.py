"""The exposition formats Prometheus negotiates: text 0.0.4 / 1.0.0 and OpenMetrics 1.0.

``negotiate_format`` reads an Accept header as prometheus_client's ``choose_encoder``
does (the first acceptable entry wins, quality values are not weighed; OpenMetrics
needs version 1.0.0 or later, or none; text/plain needs version 1.0.0 or later and
otherwise falls back to 0.0.4), and ``family_text`` writes one family as
prometheus_client's encoders write it, in each of the four name escapings
(``underscores``, ``allow-utf-8``, ``dots``, ``values``).  The exporter carries these
instead of importing prometheus_client (agents/exporter/metric_types.py says why);
tests/exporter/test_wire_format.py keeps them equal to prometheus_client's bytes and
content types over generated families and Accept headers.

Most families never come here: agents/exporter/sample_lines.py writes plain ones faster.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from .metric_types import Metric, Sample
from ..bounds.served_text import label_value

ALLOW_UTF8 = "allow-utf-8"
UNDERSCORES = "underscores"
DOTS = "dots"
VALUES = "values"
ESCAPINGS = (ALLOW_UTF8, UNDERSCORES, DOTS, VALUES)

TEXT_0_0_4 = "text/plain; version=0.0.4; charset=utf-8"
TEXT_1_0_0 = "text/plain; version=1.0.0; charset=utf-8"
OPENMETRICS_1_0_0 = "application/openmetrics-text; version=1.0.0; charset=utf-8"
OPENMETRICS_EOF = "# EOF\n"

_LEGACY_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LEGACY_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# OpenMetrics-only samples that text 0.0.4 moves to a gauge family of their own, after the family.
MOVED_IN_TEXT = ("_created", "_gsum", "_gcount")
# Text 0.0.4's names for the types it lacks.
_TEXT_TYPES = {"info": "gauge", "stateset": "gauge", "gaugehistogram": "histogram", "unknown": "untyped"}


class Format(NamedTuple):
    kind: str  # "text" or "openmetrics"
    escaping: str
    content_type: str

    @property
    def openmetrics(self) -> bool:
        return self.kind == "openmetrics"


TEXT_DEFAULT = Format("text", UNDERSCORES, TEXT_0_0_4)


def _parameter(parts: list[str], key: str) -> str:
    for part in parts:
        if "=" in part:
            name, value = part.strip().split("=", 1)
            if name == key:
                return value
    return ""


def _escaping(parts: list[str]) -> str:
    value = _parameter(parts, "escaping")
    return value if value in ESCAPINGS else UNDERSCORES


def _at_least_1(version: str) -> bool:
    """version >= 1.0.0, dotted parts compared as numbers from the left; a part that is not a
    number, reached before the answer is known, makes the version unusable."""
    parts = version.split(".")
    for part, wanted in zip(parts, (1, 0, 0)):
        try:
            number = int(part)
        except ValueError:
            return False
        if number != wanted:
            return number > wanted
    return len(parts) >= 3


def negotiate_format(accept: str | None) -> Format:
    """The format an Accept header asks for, as prometheus_client's ``choose_encoder`` answers it."""
    for entry in (accept or "").split(","):
        parts = entry.split(";")
        media = parts[0].strip()
        if media == "application/openmetrics-text":
            version = _parameter(parts, "version")
            if not version:
                return Format("openmetrics", UNDERSCORES, OPENMETRICS_1_0_0)
            if _at_least_1(version):
                escaping = _escaping(parts)
                return Format("openmetrics", escaping,
                              f"application/openmetrics-text; version={version}; charset=utf-8; escaping={escaping}")
        elif media == "text/plain" and _at_least_1(_parameter(parts, "version")):
            escaping = _escaping(parts)
            return Format("text", escaping, f"{TEXT_1_0_0}; escaping={escaping}")
    return TEXT_DEFAULT


# ---------------------------------------------------------------- names, values, escapes

def _legal(char: str, index: int, colon: bool) -> bool:
    """A character a legacy name may hold at ``index`` (a colon only in metric names)."""
    return ("a" <= char <= "z" or "A" <= char <= "Z" or char == "_" or ("0" <= char <= "9" and index > 0)
            or (colon and char == ":"))


def _rewrite(name: str, escaping: str, colon: bool) -> str:
    """``name`` with the characters a legacy name may not hold rewritten as ``escaping`` says."""
    if escaping == ALLOW_UTF8:
        return quote_text(name)
    if escaping == UNDERSCORES:
        return "".join(char if _legal(char, index, colon) else "_" for index, char in enumerate(name))
    if escaping == DOTS:
        return "".join("__" if char == "_" else "_dot_" if char == "." else char if _legal(char, index, colon)
                       else "__" for index, char in enumerate(name))
    out = ["U__"]
    for index, char in enumerate(name):
        if char == "_":
            out.append("__")
        elif _legal(char, index, colon):
            out.append(char)
        elif 0xD800 <= ord(char) <= 0xDFFF:  # a lone surrogate is no character: the replacement mark
            out.append("_FFFD_")
        else:
            out.append(f"_{ord(char):x}_")
    return "".join(out)


def legacy_metric_name(name: str) -> bool:
    return _LEGACY_METRIC_NAME.fullmatch(name) is not None


def legacy_label_name(name: str) -> bool:
    return _LEGACY_LABEL_NAME.fullmatch(name) is not None and not name.startswith("__")


def _escaped_name(name: str, escaping: str, legacy: bool, colon: bool) -> str:
    if not name:
        return name
    if escaping == ALLOW_UTF8:
        return name if legacy else f'"{quote_text(name)}"'
    if legacy and escaping != DOTS:
        return name
    return _rewrite(name, escaping, colon)


def metric_name(name: str, escaping: str) -> str:
    """A metric name where a family's header or a text sample writes it."""
    return _escaped_name(name, escaping, legacy_metric_name(name), colon=True)


def label_name(name: str, escaping: str) -> str:
    return _escaped_name(name, escaping, legacy_label_name(name), colon=False)


def _openmetrics_sample_name(name: str, escaping: str) -> str:
    """OpenMetrics writes a sample's name with label-name characters: a colon is rewritten too, and
    ``values`` escaping prefixes every name."""
    if escaping == UNDERSCORES and _LEGACY_LABEL_NAME.fullmatch(name):
        return name
    return _rewrite(name, escaping, colon=False)


def quote_text(text: str) -> str:
    """A label value (or a quoted name) with backslash, newline and double quote escaped."""
    if "\\" in text or "\n" in text or '"' in text:
        return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return text


def go_float(value: float) -> str:
    """A sample value as Go's Prometheus client writes it: +Inf, -Inf, NaN, and an exponent from
    1e6 up (Go's %g), where Python's repr still writes the digits out."""
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    text = repr(number)
    point = text.find(".")
    if number > 0 and point > 6:
        digits = (text[0] + "." + text[1:point] + text[point + 1:]).rstrip("0").rstrip(".")
        return f"{digits}e+{point - 1:02d}"
    return text


def _labels(labels: dict[str, str], escaping: str) -> str:
    return ",".join(f'{label_name(key, escaping)}="{quote_text(label_value(value))}"'
                    for key, value in sorted(labels.items()))


# ---------------------------------------------------------------- families

def _text_sample(sample: Sample, escaping: str) -> str:
    labels = _labels(sample.labels, escaping) if sample.labels else ""
    name = metric_name(sample.name, escaping)
    if escaping != ALLOW_UTF8 or legacy_metric_name(sample.name):
        return f"{name}{{{labels}}} {go_float(sample.value)}\n" if labels else f"{name} {go_float(sample.value)}\n"
    return f"{{{name}{',' if labels else ''}{labels}}} {go_float(sample.value)}\n"


def _text_family(family: Metric, escaping: str) -> str:
    shown = family.name + {"counter": "_total", "info": "_info"}.get(family.type, "")
    help_text = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
    name = metric_name(shown, escaping)
    lines = [f"# HELP {name} {help_text}\n# TYPE {name} {_TEXT_TYPES.get(family.type, family.type)}\n"]
    moved: dict[str, list[str]] = {}
    for sample in family.samples:
        suffix = sample.name[len(family.name):] if sample.name.startswith(family.name) else ""
        if suffix in MOVED_IN_TEXT:
            moved.setdefault(suffix, []).append(_text_sample(sample, escaping))
        else:
            lines.append(_text_sample(sample, escaping))
    for suffix, samples in sorted(moved.items()):
        name = metric_name(family.name + suffix, escaping)
        lines.append(f"# HELP {name} {help_text}\n# TYPE {name} gauge\n")
        lines.extend(samples)
    return "".join(lines)


def _openmetrics_family(family: Metric, escaping: str) -> str:
    name = metric_name(family.name, escaping)
    lines = [f"# HELP {name} {quote_text(family.documentation)}\n# TYPE {name} {family.type}\n"]
    if family.unit:
        lines.append(f"# UNIT {name} {family.unit}\n")
    for sample in family.samples:
        quoted_name = escaping == ALLOW_UTF8 and not legacy_metric_name(sample.name)
        parts = [metric_name(sample.name, escaping)] if quoted_name else []
        if sample.labels:
            parts.append(_labels(sample.labels, escaping))
        inside = ",".join(parts)
        braces = f"{{{inside}}}" if inside else ""
        written = "" if quoted_name else _openmetrics_sample_name(sample.name, escaping)
        lines.append(f"{written}{braces} {go_float(sample.value)}\n")
    return "".join(lines)


def family_text(family: Metric, form: Format) -> str:
    """``family`` in ``form`` (without OpenMetrics' closing ``# EOF``)."""
    if form.openmetrics:
        return _openmetrics_family(family, form.escaping)
    return _text_family(family, form.escaping)


def families_bytes(families, form: Format, final: bool = True) -> bytes:
    """The exposition of ``families``; ``final`` adds OpenMetrics' ``# EOF``."""
    body = "".join(family_text(family, form) for family in families)
    if final and form.openmetrics:
        body += OPENMETRICS_EOF
    return body.encode("utf-8")
