"""Text from the server, bounded before it is served: Prometheus label values and SNMP strings.

A server's strings (its version, a table or user name, a status value) are whatever it sends: a
64 KiB version made the AgentX answer larger than snmpd takes (it dropped the session, a walk
ended in genError), and would make every series of ``mysql_version_info`` 64 KiB long.  Served
text keeps no control characters (a newline in a label value stays, escaped as the exposition
formats want) and at most a fixed length; a value cut short ends with ``~`` and eight hex digits
of the whole value's CRC-32, so two long values that share their start stay two series.
"""

from __future__ import annotations

import re
import zlib

MAX_LABEL_VALUE_CHARS = 1024
# DisplayString's SIZE (0..255) (RFC 2579); the MIB's OCTET STRINGs hold short words too.
MAX_SNMP_STRING_BYTES = 255

_CONTROLS_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CUT_MARK_CHARS = 9  # "~" and eight hex digits


def _cut_mark(text: str) -> str:
    return f"~{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}"


def label_value(text: str) -> str:
    """A label value fit to serve: control characters but newline dropped, cut to MAX_LABEL_VALUE_CHARS."""
    if len(text) <= MAX_LABEL_VALUE_CHARS and (text.isprintable() or not _CONTROLS_BUT_NEWLINE.search(text)):
        return text  # nearly every value: one C-level scan
    clean = _CONTROLS_BUT_NEWLINE.sub("", text)
    if len(clean) <= MAX_LABEL_VALUE_CHARS:
        return clean
    return clean[:MAX_LABEL_VALUE_CHARS - _CUT_MARK_CHARS] + _cut_mark(clean)


def snmp_string(text: str) -> bytes:
    """An SNMP string fit to serve: UTF-8, control characters dropped, at most MAX_SNMP_STRING_BYTES."""
    data = text.encode("utf-8", "backslashreplace")
    if len(data) <= MAX_SNMP_STRING_BYTES and data.isascii() and text.isprintable():
        return data
    clean = _CONTROLS.sub("", text)
    data = clean.encode("utf-8", "backslashreplace")
    if len(data) <= MAX_SNMP_STRING_BYTES:
        return data
    # Cut on a character boundary: a DisplayString reader must not meet half a UTF-8 sequence.
    head = data[:MAX_SNMP_STRING_BYTES - _CUT_MARK_CHARS].decode("utf-8", "ignore").encode("utf-8")
    return head + _cut_mark(clean).encode("ascii")
