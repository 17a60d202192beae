"""``--log.level`` and ``--log.format`` (logfmt, json), as mysqld_exporter's promlog writes them.

A log pipeline parsing mysqld_exporter's lines (``ts=... level=info msg="..."``) keeps working.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
FORMATS = ("logfmt", "json")
_LEVEL_NAMES = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error",
                logging.CRITICAL: "error"}


def _fields(record: logging.LogRecord) -> dict[str, str]:
    message = record.getMessage()
    if record.exc_info:
        message += "\n" + logging.Formatter().formatException(record.exc_info)
    stamp = datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds")
    return {"ts": stamp.replace("+00:00", "Z"), "level": _LEVEL_NAMES.get(record.levelno, "info"),
            "logger": record.name, "msg": message}


def _logfmt_value(text: str) -> str:
    if text and not any(c in text for c in ' "=\n\t\\'):
        return text
    return json.dumps(text, ensure_ascii=False)  # quotes, with \" \n \\ escaped as logfmt wants


class LogfmtFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return " ".join(f"{key}={_logfmt_value(value)}" for key, value in _fields(record).items())


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(_fields(record), ensure_ascii=False)


def configure_logging(level: str, log_format: str) -> None:
    """The chosen level, and the chosen format on the root logger's console handlers (one on stderr if none).

    Only plain StreamHandlers are reformatted: a handler someone else attached (a test's
    capture, a syslog handler) keeps its own format.
    """
    formatter = JsonFormatter() if log_format == "json" else LogfmtFormatter()
    root = logging.getLogger()
    consoles = [h for h in root.handlers if type(h) is logging.StreamHandler]
    if not consoles:
        consoles = [logging.StreamHandler()]
        root.addHandler(consoles[0])
    for handler in consoles:
        handler.setFormatter(formatter)
    root.setLevel(LEVELS[level])
