"""A plain family's exposition, written without prometheus_client's per-character escaping.

prometheus_client's encoders validate and escape every label name of every sample, one
character at a time: with every collector on (~4,600 samples) that was half of a scrape's
CPU.  For a *plain* family both of its encoders in the escapings Prometheus asks for
(OpenMetrics 1.x and text 0.0.4; ``underscores`` or ``allow-utf-8``) write each sample as
``name{k="v",...} value`` with the label names sorted and the values escaped, and
change no name: that is the case here.  A family is plain when its name, its sample
names and its label names are all ``[a-zA-Z_][a-zA-Z0-9_]*`` (label names not ``__``-reserved) (no colon: OpenMetrics'
underscores escaping rewrites one in a sample name), and no sample has a timestamp, an
exemplar, a native histogram or no value; in text 0.0.4 no sample is one of the
OpenMetrics-only ``_created``/``_gsum``/``_gcount`` that the encoder moves to a gauge of
its own.  Anything else returns None and goes to prometheus_client.

The family's HELP/TYPE/UNIT lines are prometheus_client's own (it encodes an empty copy,
kept per name and help), and each value is its ``floatToGoString``.  Tests compare the
bytes with prometheus_client's over generated families in every format and escaping.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Callable

from prometheus_client.core import Metric
from prometheus_client.exposition import generate_latest as generate_text
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.utils import floatToGoString

_PLAIN_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# A label name starting with "__" is reserved: prometheus_client quotes it in allow-utf-8.
_PLAIN_LABEL = re.compile(r"(?!__)[a-zA-Z_][a-zA-Z0-9_]*")
_PLAIN_ESCAPINGS = (openmetrics.UNDERSCORES, openmetrics.ALLOWUTF8)
_OPENMETRICS_ONLY_SUFFIXES = ("_created", "_gsum", "_gcount")
_OPENMETRICS_EOF = b"# EOF\n"
# Family headers kept: one per name and help text a catalog and a server can produce (~1,200 on
# MariaDB 10.11 with every collector on), so a changed value does not cost prometheus_client's header.
HEADER_MEMO_SIZE = 4096


class _One:
    __slots__ = ("family",)

    def __init__(self, family: Metric):
        self.family = family

    def collect(self):
        return iter((self.family,))


def plain_format(encoder: Callable) -> tuple[str, str] | None:
    """(format, escaping) when ``encoder`` is one of prometheus_client's that writes plain
    families as this module does; None for any other encoder or escaping."""
    function, keywords = encoder, {}
    if isinstance(encoder, functools.partial):
        function, keywords = encoder.func, encoder.keywords
    escaping = keywords.get("escaping", openmetrics.UNDERSCORES)
    if escaping not in _PLAIN_ESCAPINGS:
        return None
    if function is openmetrics.generate_latest:
        return "openmetrics", escaping
    if function is generate_text:
        return "text", escaping
    return None


@functools.lru_cache(maxsize=HEADER_MEMO_SIZE)
def _header(form: tuple[str, str], name: str, documentation: str, family_type: str, unit: str) -> str:
    """prometheus_client's HELP/TYPE(/UNIT) lines for a family (an empty copy encoded)."""
    kind, escaping = form
    empty = Metric(name, documentation, family_type, unit)
    if kind == "openmetrics":
        body = openmetrics.generate_latest(_One(empty), escaping=escaping)
        body = body[: -len(_OPENMETRICS_EOF)]
    else:
        body = generate_text(_One(empty), escaping=escaping)
    return body.decode("utf-8")


def _label_value(value: str) -> str:
    if "\\" in value or "\n" in value or '"' in value:
        return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
    return value


def _value_text(value: float) -> str:
    """floatToGoString(value): for a finite float below 1e6 that is its repr (the Go exponent form
    starts at 1e6), which skips a third of a sample's cost; anything else goes to floatToGoString."""
    if type(value) is float and -math.inf < value < 1e6:
        return repr(value)
    return floatToGoString(value)


def plain_body(family: Metric, form: tuple[str, str]) -> bytes | None:
    """``family`` as ``form``'s encoder writes it, or None when the family is not plain."""
    name = family.name
    if not _PLAIN_NAME.fullmatch(name):
        return None
    refused = {name + suffix for suffix in _OPENMETRICS_ONLY_SUFFIXES} if form[0] == "text" else ()
    plain_names: set[str] = set()
    plain_labels: set[str] = set()
    lines = [_header(form, name, family.documentation, family.type, family.unit)]
    append = lines.append
    for sample in family.samples:
        if (sample.timestamp is not None or sample.exemplar is not None or sample.native_histogram is not None
                or sample.value is None):
            return None
        sample_name = sample.name
        if sample_name not in plain_names:
            if sample_name in refused or not _PLAIN_NAME.fullmatch(sample_name):
                return None
            plain_names.add(sample_name)
        labels = sample.labels
        if not labels:
            append(f"{sample_name} {_value_text(sample.value)}\n")
            continue
        pairs = []
        for label, value in sorted(labels.items()):
            if label not in plain_labels:
                if not _PLAIN_LABEL.fullmatch(label):
                    return None
                plain_labels.add(label)
            pairs.append(f'{label}="{_label_value(value)}"')
        append(f"{sample_name}{{{','.join(pairs)}}} {_value_text(sample.value)}\n")
    return "".join(lines).encode("utf-8")
