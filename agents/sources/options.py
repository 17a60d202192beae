"""Settings of the sources that take them: mysqld_exporter's per-collector flags.

The collector hands one ``SourceOptions`` to every scraper whose class sets
``takes_options``; the defaults are mysqld_exporter's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceOptions:
    # perf_schema.eventsstatements: the slowest `limit` digests seen in the last `timelimit` seconds.
    events_statements_limit: int = 250
    events_statements_timelimit: int = 86400
    events_statements_digest_text_limit: int = 120
    events_statements_exclude_schemas: tuple[str, ...] = ()
    # info_schema.tables: "*" (every schema but the system ones) or a comma-separated list.
    tables_databases: str = "*"
    # perf_schema.file_instances: a REGEXP on FILE_NAME, and a prefix cut from the label.
    file_instances_filter: str = ".*"
    file_instances_remove_prefix: str = "/var/lib/mysql/"
    # mysql.user: also each account's global privileges as 1/0.
    user_privileges: bool = False
    # info_schema.processlist: its families count threads in their state for at least this many seconds.
    processlist_min_time: int = 0
