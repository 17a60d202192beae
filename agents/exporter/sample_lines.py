"""A plain family's exposition, written sample by sample without the general encoder's escaping.

With every collector on (~4,600 samples) escaping each name one character at a time was
half of a scrape's CPU.  For a *plain* family both formats in the escapings Prometheus asks
for (OpenMetrics 1.x and text; ``underscores`` or ``allow-utf-8``) write each sample as
``name{k="v",...} value`` with the label names sorted and the values escaped, and change no
name: that is the case here.  A family is plain when its name, its sample names and its
label names are all ``[a-zA-Z_][a-zA-Z0-9_]*`` (label names not ``__``-reserved; no colon:
OpenMetrics' underscores escaping rewrites one in a sample name); in text no sample is one
of the OpenMetrics-only ``_created``/``_gsum``/``_gcount`` that the format moves to a gauge
of its own.  Anything else returns None and goes to agents/exporter/wire_format.py.

The family's HELP/TYPE/UNIT lines are wire_format's own (an empty copy written, kept per
name and help), and each value is its ``go_float``.  Tests compare the bytes with
prometheus_client's over generated families in every format and escaping.
"""

from __future__ import annotations

import functools
import math
import re

from .metric_types import Metric
from ..bounds.served_text import label_value
from .wire_format import (ALLOW_UTF8, MOVED_IN_TEXT, UNDERSCORES, Format, family_text, go_float,
                                                    quote_text)

_PLAIN_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# A label name starting with "__" is reserved: allow-utf-8 escaping quotes it.
_PLAIN_LABEL = re.compile(r"(?!__)[a-zA-Z_][a-zA-Z0-9_]*")
_PLAIN_ESCAPINGS = (UNDERSCORES, ALLOW_UTF8)
# Family headers kept: one per name and help text a catalog and a server can produce (~1,200 on
# MariaDB 10.11 with every collector on), so a changed value does not cost the header again.
HEADER_MEMO_SIZE = 4096
# Sample lines up to their value, for samples of one label: a grouped family (a counter per
# command, per handler) is written again whenever one of its values changed, which is every scrape,
# and most of a sample's cost was its label.  Bounded: emptied when full (a family per table
# with every collector on has ~10,000 such samples).
PREFIX_MEMO_SIZE = 16384
# Only short label values are kept (a command, a mode, a table name): a server's values can be long,
# and the memo outlives the scrape, so it holds at most PREFIX_MEMO_SIZE x ~200 characters.
PREFIX_MEMO_VALUE_CHARS = 128


def plain_format(form: Format) -> tuple[str, str] | None:
    """(format, escaping) when ``form`` writes plain families as this module does; None for the
    escapings that rewrite plain names too (dots, values)."""
    if form.escaping not in _PLAIN_ESCAPINGS:
        return None
    return form.kind, form.escaping


@functools.lru_cache(maxsize=HEADER_MEMO_SIZE)
def _header(form: tuple[str, str], name: str, documentation: str, family_type: str, unit: str) -> str:
    """The HELP/TYPE(/UNIT) lines of a family (an empty copy written)."""
    kind, escaping = form
    return family_text(Metric(name, documentation, family_type, unit), Format(kind, escaping, ""))


def _value_text(value: float) -> str:
    """go_float(value): for a finite float below 1e6 that is its repr (the Go exponent form starts
    at 1e6), which skips a third of a sample's cost; anything else goes to go_float."""
    if type(value) is float and -math.inf < value < 1e6:
        return repr(value)
    return go_float(value)


_ONE_LABEL_PREFIXES: dict[tuple[str, str, str], str] = {}


def plain_body(family: Metric, form: tuple[str, str]) -> bytes | None:
    """``family`` as ``form`` writes it, or None when the family is not plain."""
    name = family.name
    if not _PLAIN_NAME.fullmatch(name):
        return None
    refused = {name + suffix for suffix in MOVED_IN_TEXT} if form[0] == "text" else ()
    plain_names: set[str] = set()
    plain_labels: set[str] = set()
    lines = [_header(form, name, family.documentation, family.type, family.unit)]
    append = lines.append
    prefixes = _ONE_LABEL_PREFIXES
    for sample in family.samples:
        sample_name = sample.name
        if sample_name not in plain_names:
            if sample_name in refused or not _PLAIN_NAME.fullmatch(sample_name):
                return None
            plain_names.add(sample_name)
        labels = sample.labels
        if not labels:
            append(f"{sample_name} {_value_text(sample.value)}\n")
            continue
        if len(labels) == 1 and len(next(iter(labels.values()))) <= PREFIX_MEMO_VALUE_CHARS:
            ((label, value),) = labels.items()
            key = (sample_name, label, value)
            prefix = prefixes.get(key)
            if prefix is None:
                if not _PLAIN_LABEL.fullmatch(label):
                    return None
                if len(prefixes) >= PREFIX_MEMO_SIZE:
                    prefixes.clear()
                prefix = prefixes[key] = f'{sample_name}{{{label}="{quote_text(label_value(value))}"}} '
            append(f"{prefix}{_value_text(sample.value)}\n")
            continue
        pairs = []
        for label, value in sorted(labels.items()):
            if label not in plain_labels:
                if not _PLAIN_LABEL.fullmatch(label):
                    return None
                plain_labels.add(label)
            pairs.append(f'{label}="{quote_text(label_value(value))}"')
        append(f"{sample_name}{{{','.join(pairs)}}} {_value_text(sample.value)}\n")
    return "".join(lines).encode("utf-8")
