"""Prometheus rules for the server itself (grafana/rules/mysql.rules.yml) and their promtool tests.

Alerts: down, restarted, replication threads and lag (SLAVE and 8.4 REPLICA names),
connections, aborted connections, InnoDB history, checkpoint age, log waits, deadlocks,
failing collectors.  Recording rules: the five-minute rate of every counter the
dashboards rate, so a site can chart or alert on them cheaply.

Thresholds are the fields of ``Thresholds``; the committed file uses the defaults and
``mysql-snmp rules --set NAME=VALUE`` writes a copy with others.  Metric names come
from the catalog and the exporter's collector table (served_names), as on the boards.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import yaml

from ..catalog import Catalog
from . import served_names
from .alert_rules import HEADER, _expected
from .dashboard_boards import boards
from .served_names import replica_column
from ..config.names import did_you_mean

RULES_PATH = "grafana/rules/mysql.rules.yml"
TESTS_PATH = "grafana/rules/mysql.rules.test.yml"


@dataclass(frozen=True)
class Thresholds:
    """Alert thresholds; each field's comment is what the README documents."""

    exporter_jobs: str = "mysql.*"  # regex of the scrape jobs whose `up` == 0 means MySQL is unreachable
    down_for: str = "1m"  # mysql_up == 0 (or the exporter unreachable) this long
    restarted_within_seconds: int = 600  # uptime below this: restarted recently
    replication_thread_for: str = "2m"  # an IO or SQL thread stopped this long
    replication_lag_seconds: int = 300  # Seconds_Behind_Source/Master above this ...
    heartbeat_lag_seconds: int = 300  # pt-heartbeat lag above this ...
    lag_for: str = "5m"  # ... this long
    connections_used_ratio: float = 0.8  # Threads_connected / max_connections above this for 5m
    aborted_connects_per_second: float = 1.0  # Aborted_connects rate above this for 5m
    history_list_length: int = 1_000_000  # undo logs not purged, above this for 15m
    checkpoint_age_ratio: float = 0.8  # checkpoint age / its maximum above this for 5m
    log_waits_per_second: float = 0.1  # Innodb_log_waits rate above this for 5m
    deadlocks_per_minute: float = 2.0  # deadlocks rate above this for 5m
    collector_failing_for: str = "5m"  # mysql_exporter_collector_success == 0 this long


def parse_overrides(pairs: list[str]) -> Thresholds:
    """``["replication_lag_seconds=600", ...]`` -> Thresholds; ValueError names a bad pair."""
    defaults = Thresholds()
    fields = {f.name: f for f in dataclasses.fields(Thresholds)}
    changes = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"{pair!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}"
                             + (did_you_mean(name, fields) if sep else ""))
        problem = _threshold_problem(name, type(getattr(defaults, name)), text)
        if problem:
            raise ValueError(f"{pair!r}: {name} {problem}")
        changes[name] = type(getattr(defaults, name))(text)
    return dataclasses.replace(defaults, **changes)


# Prometheus' duration syntax (units largest first, each at most once); anything else makes
# promtool reject the whole file, which `rules` would otherwise print with exit status 0.
PROMETHEUS_DURATION = re.compile(r"(?=.)(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?")
NUMBER_WORDS = {int: "a whole number", float: "a number"}


def _threshold_problem(name: str, kind: type, text: str) -> str | None:
    """Why ``text`` cannot be the threshold ``name``; None when it can."""
    if name == "exporter_jobs":
        if '"' in text or "\\" in text:  # it is pasted into a PromQL string as it is
            return 'takes a regular expression without " or \\'
        try:
            re.compile(text)
        except re.error as exc:
            return f"takes a regular expression ({exc})"
        return None
    if kind is str:  # the *_for durations
        return None if PROMETHEUS_DURATION.fullmatch(text) else "takes a Prometheus duration such as 90s, 5m or 1h30m"
    try:
        value = kind(text)
    except ValueError:
        return f"takes {NUMBER_WORDS[kind]}"
    if not (math.isfinite(value) and value >= 0):
        return f"takes {NUMBER_WORDS[kind]} of 0 or more"
    return None


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    duration: str
    severity: str
    summary: str
    description: str
    # promtool cases: input series (name{labels} -> values) that fire, and that stay quiet
    firing: dict[str, str]
    quiet: dict[str, str]
    fired_labels: dict[str, str]


TARGET = 'instance="db1:9104", job="mysql"'
REPLICA = 'instance="db2:9104", job="mysql", master_host="db1"'


# Test values on either side of a threshold (per-minute increments for rates; ratios of 1000).
def twice(limit: float) -> int:
    return math.ceil(limit * 2)


def half(limit: float) -> int:
    return math.floor(limit / 2)


def above(ratio: float) -> int:
    return math.ceil(1000 * (1 + ratio) / 2)


def below(ratio: float) -> int:
    return math.floor(1000 * ratio / 2)


def counter_cases(series: str, per_minute: float) -> tuple[dict[str, str], dict[str, str]]:
    """promtool input of a counter growing at twice ``per_minute`` (fires) and at half of it (quiet)."""
    key = f"{series}{{{TARGET}}}"
    return {key: f"0+{twice(per_minute)}x15"}, {key: f"0+{half(per_minute)}x15"}


def _labels(text: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', text))


def _alerts(catalog: Catalog, t: Thresholds) -> list[Alert]:
    def name(catalog_name: str) -> str:
        found = served_names.served(catalog, catalog_name)
        return found.selector()

    up, success, errors = served_names.UP, served_names.COLLECTOR_SUCCESS, served_names.SCRAPE_ERRORS
    uptime = name("status_uptime")
    connected, max_conn = name("status_threads_connected"), name("variable_max_connections")
    aborted = name("status_aborted_connects")
    history = name("innodb_trx_history_list_length")
    age, age_max = name("status_innodb_checkpoint_age"), name("status_innodb_checkpoint_max_age")
    parsed_age, parsed_max = name("innodb_log_checkpoint_age_bytes"), name("innodb_log_max_checkpoint_age_bytes")
    log_waits, deadlocks = name("status_innodb_log_waits"), name("status_innodb_deadlocks")
    heartbeat = name("heartbeat_lag_seconds")
    io_new, io_old = replica_column("Replica_IO_Running"), replica_column("Slave_IO_Running")
    sql_new, sql_old = replica_column("Replica_SQL_Running"), replica_column("Slave_SQL_Running")
    lag_new, lag_old = replica_column("Seconds_Behind_Source"), replica_column("Seconds_Behind_Master")
    target = _labels(TARGET)
    replica = _labels(REPLICA)
    on = "on (instance, job)"
    return [
        Alert("MySQLDown", f'{up} == 0 or up{{job=~"{t.exporter_jobs}"}} == 0', t.down_for, "critical",
              "MySQL on {{ $labels.instance }} is down",
              "The exporter cannot reach MySQL (mysql_up is 0), or Prometheus cannot scrape the exporter.",
              {f"{up}{{{TARGET}}}": "1 0x10"}, {f"{up}{{{TARGET}}}": "1x10"}, target),
        Alert("MySQLRestarted", f"{uptime} < {t.restarted_within_seconds}", "", "warning",
              "MySQL on {{ $labels.instance }} restarted recently",
              f"Uptime is below {t.restarted_within_seconds} seconds.",
              {f"{uptime}{{{TARGET}}}": f"{t.restarted_within_seconds // 2}+60x4"},
              {f"{uptime}{{{TARGET}}}": f"{t.restarted_within_seconds * 10}+60x4"}, target),
        Alert("MySQLReplicationIOThreadStopped", f"({io_new} or {io_old}) == 0", t.replication_thread_for,
              "critical", "Replication IO thread stopped on {{ $labels.instance }}",
              "The replica no longer receives the source's binary log (Slave_IO_Running / Replica_IO_Running).",
              {f"{io_old}{{{REPLICA}}}": "1 0x10"}, {f"{io_new}{{{REPLICA}}}": "1x10"}, replica),
        Alert("MySQLReplicationSQLThreadStopped", f"({sql_new} or {sql_old}) == 0", t.replication_thread_for,
              "critical", "Replication SQL thread stopped on {{ $labels.instance }}",
              "The replica no longer applies the relay log (Slave_SQL_Running / Replica_SQL_Running).",
              {f"{sql_new}{{{REPLICA}}}": "1 0x10"}, {f"{sql_old}{{{REPLICA}}}": "1x10"}, replica),
        Alert("MySQLReplicationLag", f"({lag_new} or {lag_old}) > {t.replication_lag_seconds}", t.lag_for,
              "warning", "Replica {{ $labels.instance }} lags behind its source",
              f"Seconds_Behind_Source (Seconds_Behind_Master) above {t.replication_lag_seconds} s.",
              {f"{lag_old}{{{REPLICA}}}": f"{t.replication_lag_seconds * 2}x10"},
              {f"{lag_new}{{{REPLICA}}}": "0x10"}, replica),
        Alert("MySQLHeartbeatLag", f"{heartbeat} > {t.heartbeat_lag_seconds}", t.lag_for, "warning",
              "pt-heartbeat lag on {{ $labels.instance }} is high",
              f"The newest pt-heartbeat row is more than {t.heartbeat_lag_seconds} s old.",
              {f"{heartbeat}{{{TARGET}}}": f"{t.heartbeat_lag_seconds * 2}x10"},
              {f"{heartbeat}{{{TARGET}}}": "0x10"}, target),
        Alert("MySQLConnectionsNearLimit", f"{connected} / {on} {max_conn} > {t.connections_used_ratio}", "5m",
              "warning", "MySQL on {{ $labels.instance }} is running out of connections",
              f"Threads_connected above {t.connections_used_ratio:.0%} of max_connections.",
              {f"{connected}{{{TARGET}}}": f"{above(t.connections_used_ratio)}x10", f"{max_conn}{{{TARGET}}}": "1000x10"},
              {f"{connected}{{{TARGET}}}": f"{below(t.connections_used_ratio)}x10", f"{max_conn}{{{TARGET}}}": "1000x10"},
              target),
        Alert("MySQLAbortedConnections", f"rate({aborted}[5m]) > {t.aborted_connects_per_second}", "5m",
              "warning", "Many aborted connections on {{ $labels.instance }}",
              f"Aborted_connects grows by more than {t.aborted_connects_per_second}/s "
              "(failed logins, handshake timeouts, bad packets).",
              *counter_cases(aborted, t.aborted_connects_per_second * 60), target),
        Alert("MySQLHistoryListLengthHigh", f"{history} > {t.history_list_length}", "15m", "warning",
              "InnoDB history list on {{ $labels.instance }} is long",
              f"More than {t.history_list_length} undo logs await purge: a long-running transaction "
              "or a purge that cannot keep up.",
              {f"{history}{{{TARGET}}}": f"{t.history_list_length * 2}x20"},
              {f"{history}{{{TARGET}}}": f"{half(t.history_list_length)}x20"}, target),
        Alert("MySQLCheckpointAgeNearMax",
              f"({age} or {parsed_age}) / {on} (({age_max} or {parsed_max}) > 0) > {t.checkpoint_age_ratio}",
              "5m",
              "warning", "InnoDB checkpoint age on {{ $labels.instance }} is near its maximum",
              f"Checkpoint age above {t.checkpoint_age_ratio:.0%} of the maximum: InnoDB will soon stall "
              "writes to flush (the redo log is too small for the write load).",
              {f"{age}{{{TARGET}}}": f"{above(t.checkpoint_age_ratio)}x10", f"{age_max}{{{TARGET}}}": "1000x10"},
              {f"{parsed_age}{{{TARGET}}}": f"{below(t.checkpoint_age_ratio)}x10",
               f"{parsed_max}{{{TARGET}}}": "1000x10"}, target),
        Alert("MySQLInnoDBLogWaits", f"rate({log_waits}[5m]) > {t.log_waits_per_second}", "5m", "warning",
              "InnoDB waits for log buffer space on {{ $labels.instance }}",
              f"Innodb_log_waits grows by more than {t.log_waits_per_second}/s: innodb_log_buffer_size "
              "is too small.",
              *counter_cases(log_waits, t.log_waits_per_second * 60), target),
        Alert("MySQLDeadlocksRising", f"rate({deadlocks}[5m]) * 60 > {t.deadlocks_per_minute}", "5m", "warning",
              "Deadlocks on {{ $labels.instance }} are rising",
              f"More than {t.deadlocks_per_minute} InnoDB deadlocks a minute.",
              *counter_cases(deadlocks, t.deadlocks_per_minute), target),
        # A collector whose table this server lacks (query_response_time, on by default, without its
        # plugin) has success 0 at every scrape, counted as reason "unsupported": not a failure.
        Alert("MySQLCollectorFailing",
              f'{success} == 0 unless on (instance, job, collector) '
              f'increase({errors}{{reason="unsupported"}}[5m]) > 0', t.collector_failing_for, "warning",
              "Collector {{ $labels.collector }} fails on {{ $labels.instance }}",
              "A source of the exporter fails at every scrape; see mysql_exporter_scrape_errors_total "
              "for the reason (privilege, timeout, ...). A table the server does not have "
              '(reason="unsupported") is not a failure.',
              {f'{success}{{{TARGET}, collector="collect.heartbeat"}}': "0x10",
               f'{errors}{{{TARGET}, collector="collect.heartbeat", reason="privilege"}}': "1+1x10"},
              {f'{success}{{{TARGET}, collector="collect.info_schema.query_response_time"}}': "0x10",
               f'{errors}{{{TARGET}, collector="collect.info_schema.query_response_time", '
               'reason="unsupported"}': "1+1x10"},
              {**target, "collector": "collect.heartbeat"}),
    ]


_RATED = re.compile(r"rate\(([a-zA-Z_:][a-zA-Z0-9_:]*)\{")


def rated_metrics(catalog: Catalog) -> list[str]:
    """Every counter the dashboards take a rate of, in first-use order."""
    seen: dict[str, None] = {}
    for board in boards(catalog):
        for panel in board.panels:
            for query in panel.queries:
                for metric in _RATED.findall(query.expr):
                    seen.setdefault(metric, None)
    return list(seen)


def recording_rules(catalog: Catalog) -> list[dict]:
    return [{"record": f"instance_job:{metric}:rate5m", "expr": f"rate({metric}[5m])"}
            for metric in rated_metrics(catalog)]


def rules_document(catalog: Catalog, thresholds: Thresholds = Thresholds()) -> dict:
    alerts = []
    for alert in _alerts(catalog, thresholds):
        rule = {"alert": alert.name, "expr": alert.expr}
        if alert.duration:
            rule["for"] = alert.duration
        rule["labels"] = {"severity": alert.severity}
        rule["annotations"] = {"summary": alert.summary, "description": alert.description}
        alerts.append(rule)
    return {"groups": [
        {"name": "mysql-server", "rules": alerts},
        {"name": "mysql-rates", "rules": recording_rules(catalog)},
    ]}


def _eval_minutes(duration: str) -> int:
    if not duration:
        return 2
    number = int(duration[:-1])
    return (number * 60 if duration.endswith("h") else number) + 2


def tests_document(catalog: Catalog, thresholds: Thresholds = Thresholds()) -> dict:
    document = rules_document(catalog, thresholds)
    tests = []
    for alert in _alerts(catalog, thresholds):
        minutes = _eval_minutes(alert.duration) + (5 if "rate(" in alert.expr else 0)
        for case, series, fires in (("fires", alert.firing, True), ("stays quiet", alert.quiet, False)):
            expected = [_expected(document, alert.name, alert.fired_labels)] if fires else []
            tests.append({
                "name": f"{alert.name}: {case}",
                "interval": "1m",
                # each series runs past the evaluation: its last "xN" repeat is stretched to fit
                "input_series": [{"series": s, "values": re.sub(r"x\d+$", f"x{minutes + 1}", v)}
                                 for s, v in series.items()],
                "alert_rule_test": [{"eval_time": f"{minutes}m", "alertname": alert.name, "exp_alerts": expected}],
            })
    return {"rule_files": ["mysql.rules.yml"], "evaluation_interval": "1m", "tests": tests}


def render(document: dict) -> str:
    return HEADER.replace("alert_rules.py", "server_rules.py") + yaml.safe_dump(
        document, sort_keys=False, width=100, default_flow_style=False)


def outputs(catalog: Catalog) -> dict[str, str]:
    return {RULES_PATH: render(rules_document(catalog)), TESTS_PATH: render(tests_document(catalog))}
