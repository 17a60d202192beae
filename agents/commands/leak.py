"""``mysql-snmp leak replay``: run the leak detector over a recorded trace."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from ..leak.config import (
    DEFAULT_SERIES,
    SERIES_ALIASES,
    LeakConfigError,
    canonical_series_name,
    is_known_series,
    load_leak_config,
    series_config,
)
from ..leak.replay import TraceError, read_trace, replay
from ..leak.setup import read_leak_section
from ..config.names import did_you_mean

EPILOG = """\
trace format (CSV with a header row):
  timestamp,value,open_table_definitions      # the last column is optional
  1700000000,314572800,390
timestamps in seconds (any order, gaps allowed), values in bytes.

output: one JSON object per line for each state change, e.g.
  {"t": 1700001800, "state": "leaking", "rate_bytes_per_hour": 5927424.0, "reason": "unexplained"}
states: ok, suspect, leaking; reasons: none, tables, unexplained.

examples:
  mysql-snmp leak replay --input dict.csv --series innodb_mem_dictionary_bytes
  mysql-snmp leak replay --input rss.csv --series process_resident_memory_bytes --limit-bytes 17179869184
  mysql-snmp leak replay --input dict.csv --config /etc/mysql-snmp/leak.yml    # thresholds from its leak: section

--series must name a series the agents watch by default (or an alias of one), or one listed
under leak.series in the --config file; any other name is an error, not generic thresholds.

Exit status: 0 after a full replay, 2 for a bad trace (the message names the line), a bad config
or an unknown series.
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "leak",
        help="memory leak detector tools (replay a recorded trace)",
        description="Tools for the memory leak detector that the exporter and the AgentX agent run.",
    )
    actions = parser.add_subparsers(dest="leak_command", metavar="ACTION", required=True)
    replay_parser = actions.add_parser(
        "replay",
        help="run the detector over a CSV trace and print its state changes as JSON lines",
        description="Feed a recorded trace (one sample per row) to the leak detector, with the settings "
        "the agents would use for that series, and print one JSON object per state change.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay_parser.add_argument("--input", required=True, metavar="TRACE.csv",
                               help="the trace: timestamp,value[,open_table_definitions]; '-' reads stdin")
    replay_parser.add_argument("--series", default="innodb_mem_dictionary_bytes", metavar="NAME",
                               help="catalog name of the traced series; picks its thresholds "
                               "(default: innodb_mem_dictionary_bytes; process_resident_memory_bytes, "
                               "innodb_mem_adaptive_hash_index_bytes, innodb_mem_total_allocated_bytes, "
                               "perf_schema_memory_bytes{event_name=...} ...)")
    replay_parser.add_argument("--config", metavar="FILE",
                               help="YAML agent config whose leak: section overrides the defaults")
    replay_parser.add_argument("--limit-bytes", type=float, metavar="BYTES",
                               help="forecast towards this limit; adds time_to_limit_seconds to each line")
    replay_parser.set_defaults(handler=run_replay)


def _settings(args):
    config = dataclasses.replace(load_leak_config(read_leak_section(args.config)), state_file=None)
    base_name = canonical_series_name(args.series)
    configured = [s for s in config.series if s.name == base_name]
    if not configured and not is_known_series(args.series):
        # a typo would otherwise replay with generic thresholds and look like a verdict
        known = [raw["name"] for raw in DEFAULT_SERIES] + [s.name for s in config.series]
        hint = did_you_mean(base_name, [*known, *SERIES_ALIASES])
        raise LeakConfigError(
            f"--series {args.series} is not a watched memory series{hint}; known: {', '.join(dict.fromkeys(known))}; "
            "another series needs an entry under leak.series in the --config file")
    series = configured[0] if configured else series_config(args.series)
    if args.limit_bytes is not None:
        if not args.limit_bytes > 0:
            raise LeakConfigError("--limit-bytes must be positive")
        series = dataclasses.replace(series, limit_bytes=args.limit_bytes)
    return config, series


def run_replay(args) -> int:
    try:
        config, series = _settings(args)
    except LeakConfigError as exc:
        print(f"mysql-snmp leak replay: {exc}", file=sys.stderr)
        return 2
    try:
        if args.input == "-":
            samples = read_trace(sys.stdin, "<stdin>")
        else:
            with open(args.input, newline="") as stream:
                samples = read_trace(stream, args.input)
    except OSError as exc:
        print(f"mysql-snmp leak replay: cannot read {args.input}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"mysql-snmp leak replay: {args.input} is not text: {exc}", file=sys.stderr)
        return 2
    except TraceError as exc:
        print(f"mysql-snmp leak replay: {exc}", file=sys.stderr)
        return 2
    with_forecast = args.limit_bytes is not None
    for change in replay(samples, args.series, series, config):
        sys.stdout.write(json.dumps(change.as_dict(with_forecast)) + "\n")
    sys.stdout.flush()
    return 0
