"""Prometheus alert rules for memory leaks, and their ``promtool test rules`` cases.

Two kinds of rule:
- on the agent's own verdict (mysql_leak_state): the detector already separates leaks from
  noise, steps, warm-ups and daily cycles, so the rule only waits out one missed scrape;
- plain PromQL on the memory gauges, for sites that want the judgement on the Prometheus
  side.  Those mirror the detector's questions with what PromQL offers: growth in each of
  three consecutive half hours (a one-off step lands in one of them), at least a minimum
  rate (deriv), and a level above the previous day's high-water mark by a margin (a
  warm-up after a restart or a daily cycle returns to it; a leak passes it).

The test file feeds each rule a leak, a steady server and a warm-up after a restart.
Metric names come from the catalog, so a renamed metric breaks generation, not alerts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import yaml

from ..catalog import Catalog

RULES_PATH = "grafana/rules/mysql-leak.rules.yml"
TESTS_PATH = "grafana/rules/mysql-leak.rules.test.yml"
MIB = 1024 * 1024


@dataclass(frozen=True)
class GaugeRule:
    alert: str
    metric: str  # catalog name of the gauge
    min_rate_bytes_per_hour: int
    min_growth_bytes: int
    what: str
    # for the tests: a plausible level and a leak rate well above the minimum
    level_bytes: int
    leak_bytes_per_minute: int


GAUGE_RULES = (
    GaugeRule("MySQLDictionaryMemoryGrowing", "innodb_mem_dictionary_bytes", 1 * MIB, 2 * MIB,
              "InnoDB dictionary memory", 300 * MIB, 96 * 1024),
    GaugeRule("MySQLProcessMemoryGrowing", "process_resident_memory_bytes", 32 * MIB, 128 * MIB,
              "mysqld resident memory", 4096 * MIB, 2 * MIB),
)


def _name(catalog: Catalog, metric: str) -> str:
    entry = catalog.by_name(metric)
    if entry.prometheus is None:
        raise ValueError(f"{metric} has no Prometheus name in the catalog")
    return entry.prometheus.name


def _gauge_expr(metric: str, rule: GaugeRule) -> str:
    rate = rule.min_rate_bytes_per_hour
    return (
        f"(deriv({metric}[90m]) * 3600 > {rate})\n"
        f"and (delta({metric}[30m]) > 0)\n"
        f"and (delta({metric}[30m] offset 30m) > 0)\n"
        f"and (delta({metric}[30m] offset 1h) > 0)\n"
        f"and ({metric} - max_over_time({metric}[1d] offset 90m) > {rule.min_growth_bytes})"
    )


def _band_value(metric: str, absent: str) -> str:
    """A template reading one end of the forecast band of the alert's series, humanized."""
    query = f'printf "{metric}{{instance=%q,job=%q,series=%q}}" $labels.instance $labels.job $labels.series'
    return f"{{{{ with {query} | query }}}}{{{{ . | first | value | humanizeDuration }}}}{{{{ else }}}}{absent}{{{{ end }}}}"


def rules_document(catalog: Catalog) -> dict:
    state = _name(catalog, "leak_state")
    rate = _name(catalog, "leak_growth_bytes_per_hour")
    ttl = _name(catalog, "leak_time_to_limit_seconds")
    lower, upper = _name(catalog, "leak_time_to_limit_lower_seconds"), _name(catalog, "leak_time_to_limit_upper_seconds")
    rss = _name(catalog, "process_resident_memory_bytes")
    total = _name(catalog, "host_memory_total_bytes")
    agent_rules = [
        {
            "alert": "MySQLMemoryLeakSuspected",
            "expr": f"{state} == 1",
            "for": "30m",
            # info, not warning: in an agent's first day of history every daily cycle's first rise is
            # suspect (the detector cannot know the cycle yet); only leaking is an alarm
            "labels": {"severity": "info"},
            "annotations": {
                "summary": "{{ $labels.series }} on {{ $labels.instance }} grows significantly",
                "description": "The mysql-snmp leak detector has seen {{ $labels.series }} grow to a level not seen "
                "before for 30 minutes without confirming a leak (not yet clear of its usual range by the noise "
                "margin, or less than a day of history: then it may be the first rise of a daily cycle).",
            },
        },
        {
            "alert": "MySQLMemoryLeakDetected",
            "expr": f"{state} == 2",
            "for": "1m",
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "{{ $labels.series }} on {{ $labels.instance }} is leaking",
                "description": "The mysql-snmp leak detector reports steady growth of {{ $labels.series }} above "
                f"its baseline; see {rate}, {ttl} and mysql_leak_reason (tables: more table "
                "definitions cached; unexplained: same tables, more bytes).",
            },
        },
        {
            "alert": "MySQLMemoryExhaustionForecast",
            "expr": f"{ttl} < 7 * 86400 and on (instance, job, series) {state} == 2",
            "for": "5m",
            "labels": {"severity": "critical"},
            "annotations": {
                "summary": "{{ $labels.series }} on {{ $labels.instance }} reaches its limit within a week",
                "description": "At the current growth rate mysqld runs out of memory in {{ $value | humanizeDuration }} "
                f"(the data allows {_band_value(lower, 'unknown')} to {_band_value(upper, 'no limit in sight')}).",
            },
        },
    ]
    gauge_rules = []
    for rule in GAUGE_RULES:
        metric = _name(catalog, rule.metric)
        gauge_rules.append({
            "alert": rule.alert,
            "expr": _gauge_expr(metric, rule),
            "for": "15m",
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": f"{rule.what} on {{{{ $labels.instance }}}} grows steadily",
                "description": f"{metric} rose in each of the last three half hours, faster than "
                f"{rule.min_rate_bytes_per_hour // MIB} MiB/h, to above yesterday's high by more than "
                f"{rule.min_growth_bytes // MIB} MiB.",
            },
        })
    gauge_rules.append({
        "alert": "MySQLProcessMemoryExhaustionPredicted",
        "expr": (
            f"predict_linear({rss}[6h], 86400) > on (instance, job) {total}\n"
            f"and deriv({rss}[6h]) > 0 and delta({rss}[3h]) > 0 and delta({rss}[3h] offset 3h) > 0"
        ),
        "for": "1h",
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": "mysqld on {{ $labels.instance }} will fill physical memory within a day",
            "description": f"The linear trend of {rss} over 6 hours crosses {total} within 24 hours.",
        },
    })
    return {
        "groups": [
            {"name": "mysql-leak-detector", "rules": agent_rules},
            {"name": "mysql-memory-growth", "rules": gauge_rules},
        ]
    }


# -- promtool unit tests -----------------------------------------------------------------

LABELS = 'instance="db1:9104", job="mysql"'


def _expected(document: dict, alert: str, labels: dict[str, str], value_text: str = "",
              band: tuple[str, str] = ("", "")) -> dict:
    """The alert as promtool reports it: labels plus annotations with the templates filled in
    (``band``: the forecast band's ends as the templates print them)."""
    rule = next(r for g in document["groups"] for r in g["rules"] if r["alert"] == alert)
    annotations = {}
    for key, template in rule["annotations"].items():
        text = template.replace("{{ $value | humanizeDuration }}", value_text)
        for end, filled in zip(re.findall(r"\{\{ with printf .*?\{\{ end \}\}", text), band):
            text = text.replace(end, filled)
        for name, value in labels.items():
            text = text.replace("{{ $labels.%s }}" % name, value)
        annotations[key] = text
    return {"exp_labels": {**rule["labels"], **labels}, "exp_annotations": annotations}


def _values(samples: list[float]) -> str:
    return " ".join(str(int(round(v))) for v in samples)


def _leak(level: int, per_minute: int, steady_minutes: int, leak_minutes: int) -> list[float]:
    return [level] * steady_minutes + [level + per_minute * (i + 1) for i in range(leak_minutes)]


def _warmup(level: int, steady_minutes: int, warm_minutes: int) -> list[float]:
    """Steady, then a restart drops the gauge to 5% and it refills with tau = 40 min."""
    low = level * 0.05
    return [level] * steady_minutes + [
        low + (level - low) * (1 - math.exp(-i / 40.0)) for i in range(warm_minutes)
    ]


def _steady(level: int, minutes: int) -> list[float]:
    # a gentle wobble of 0.1%, so deriv is never exactly 0
    return [level * (1 + 0.001 * math.sin(i / 7.0)) for i in range(minutes)]


def tests_document(catalog: Catalog) -> dict:
    state = _name(catalog, "leak_state")
    ttl = _name(catalog, "leak_time_to_limit_seconds")
    lower, upper = _name(catalog, "leak_time_to_limit_lower_seconds"), _name(catalog, "leak_time_to_limit_upper_seconds")
    rules = rules_document(catalog)
    target = {"instance": "db1:9104", "job": "mysql"}
    dictionary = {**target, "series": "innodb_mem_dictionary_bytes"}
    day = 1440
    tests = [
        {
            "name": "agent leak state: suspect, then leaking, then cleared",
            "interval": "1m",
            "input_series": [
                {"series": f'{state}{{{LABELS}, series="innodb_mem_dictionary_bytes"}}',
                 "values": "0x59 1x44 2x29 0x30"},
                {"series": f'{state}{{{LABELS}, series="process_resident_memory_bytes"}}', "values": "0x150"},
                {"series": f'{ttl}{{{LABELS}, series="innodb_mem_dictionary_bytes"}}',
                 "values": "_x104 259200x29 _x30"},
                # the band: 2 to 4 days at first; then the lower end has no upper one (no limit in sight)
                {"series": f'{lower}{{{LABELS}, series="innodb_mem_dictionary_bytes"}}',
                 "values": "_x104 172800x29 _x30"},
                {"series": f'{upper}{{{LABELS}, series="innodb_mem_dictionary_bytes"}}',
                 "values": "_x104 345600x10 _x49"},
            ],
            "alert_rule_test": [
                {"eval_time": "50m", "alertname": "MySQLMemoryLeakSuspected", "exp_alerts": []},
                {"eval_time": "100m", "alertname": "MySQLMemoryLeakSuspected",
                 "exp_alerts": [_expected(rules, "MySQLMemoryLeakSuspected", dictionary)]},
                {"eval_time": "110m", "alertname": "MySQLMemoryLeakDetected",
                 "exp_alerts": [_expected(rules, "MySQLMemoryLeakDetected", dictionary)]},
                {"eval_time": "112m", "alertname": "MySQLMemoryExhaustionForecast",
                 "exp_alerts": [_expected(rules, "MySQLMemoryExhaustionForecast", dictionary, "3d 0h 0m 0s",
                                          ("2d 0h 0m 0s", "4d 0h 0m 0s"))]},
                {"eval_time": "125m", "alertname": "MySQLMemoryExhaustionForecast",
                 "exp_alerts": [_expected(rules, "MySQLMemoryExhaustionForecast", dictionary, "3d 0h 0m 0s",
                                          ("2d 0h 0m 0s", "no limit in sight"))]},
                {"eval_time": "140m", "alertname": "MySQLMemoryLeakDetected", "exp_alerts": []},
                {"eval_time": "140m", "alertname": "MySQLMemoryExhaustionForecast", "exp_alerts": []},
            ],
        }
    ]
    for rule in GAUGE_RULES:
        metric = _name(catalog, rule.metric)
        steady_minutes = day + 60
        cases = (
            ("a leak", _leak(rule.level_bytes, rule.leak_bytes_per_minute, steady_minutes, 180), True),
            ("a steady server", _steady(rule.level_bytes, steady_minutes + 180), False),
            ("a warm-up after a restart", _warmup(rule.level_bytes, steady_minutes, 180), False),
        )
        for label, samples, fires in cases:
            eval_minutes = steady_minutes + 150
            expected = [_expected(rules, rule.alert, target)] if fires else []
            tests.append({
                "name": f"{rule.alert}: {label}",
                "interval": "1m",
                "input_series": [{"series": f"{metric}{{{LABELS}}}", "values": _values(samples)}],
                "alert_rule_test": [
                    {"eval_time": f"{steady_minutes - 10}m", "alertname": rule.alert, "exp_alerts": []},
                    {"eval_time": f"{eval_minutes}m", "alertname": rule.alert, "exp_alerts": expected},
                ],
            })
    rss = _name(catalog, "process_resident_memory_bytes")
    total = _name(catalog, "host_memory_total_bytes")
    rss_leak = _leak(4096 * MIB, 8 * MIB, 60, 600)  # 480 MiB/h towards 16 GiB: about a day left
    tests.append({
        "name": "MySQLProcessMemoryExhaustionPredicted: RSS heading for physical memory",
        "interval": "1m",
        "input_series": [
            {"series": f"{rss}{{{LABELS}}}", "values": _values(rss_leak)},
            {"series": f"{total}{{{LABELS}}}", "values": f"{16384 * MIB}x660"},
        ],
        "alert_rule_test": [
            {"eval_time": "60m", "alertname": "MySQLProcessMemoryExhaustionPredicted", "exp_alerts": []},
            {"eval_time": "640m", "alertname": "MySQLProcessMemoryExhaustionPredicted",
             "exp_alerts": [_expected(rules, "MySQLProcessMemoryExhaustionPredicted", target)]},
        ],
    })
    tests.append({
        "name": "MySQLProcessMemoryExhaustionPredicted: steady RSS",
        "interval": "1m",
        "input_series": [
            {"series": f"{rss}{{{LABELS}}}", "values": _values(_steady(4096 * MIB, 660))},
            {"series": f"{total}{{{LABELS}}}", "values": f"{16384 * MIB}x660"},
        ],
        "alert_rule_test": [
            {"eval_time": "640m", "alertname": "MySQLProcessMemoryExhaustionPredicted", "exp_alerts": []},
        ],
    })
    return {"rule_files": ["mysql-leak.rules.yml"], "evaluation_interval": "1m", "tests": tests}


HEADER = "# Generated by `mysql-snmp generate` from agents/catalog.yaml (agents/generate/alert_rules.py); do not edit.\n"


def _dump(document: dict) -> str:
    return HEADER + yaml.safe_dump(document, sort_keys=False, width=100, default_flow_style=False)


def outputs(catalog: Catalog) -> dict[str, str]:
    return {RULES_PATH: _dump(rules_document(catalog)), TESTS_PATH: _dump(tests_document(catalog))}
