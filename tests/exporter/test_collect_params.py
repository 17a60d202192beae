"""collect[] names that select no collector: the reason, the log bound and the counter."""

from __future__ import annotations

import logging

from mysql_snmp.agents.exporter import collect_params
from mysql_snmp.agents.exporter.collect_params import CollectParams
from mysql_snmp.agents.exporter.collectors import COLLECTORS


def checker() -> CollectParams:
    return CollectParams((c.name for c in COLLECTORS), (c.name for c in COLLECTORS if c.default))


def counts(params: CollectParams) -> dict[str, float]:
    (family,) = params.families()
    return {sample.labels["reason"]: sample.value for sample in family.samples}


def test_each_name_gets_its_reason():
    params = checker()
    assert params.reason("global_status") is None
    assert params.reason("info_schema.tables") == "disabled"
    assert params.reason("engine_tokudb_status") == "disabled"
    assert params.reason("global_statuz") == "unknown"
    assert counts(params) == {"unknown": 0, "disabled": 0}


def test_a_name_repeated_in_one_request_counts_once():
    params = checker()
    params.check(["nope", "nope", "global_status"])
    assert counts(params) == {"unknown": 1, "disabled": 0}


def test_names_from_clients_are_logged_up_to_a_bound_then_only_counted(caplog, monkeypatch):
    monkeypatch.setattr(collect_params, "MAX_LOGGED_NAMES", 5)
    caplog.set_level(logging.WARNING, logger=collect_params.__name__)
    params = checker()
    for _ in range(3):
        params.check([f"junk{i}" for i in range(20)])
    assert counts(params)["unknown"] == 60
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 6
    assert messages[-1] == "collect[]: 5 different names ignored; further new ones are only counted"
    assert [m.split(":")[0] for m in messages[:5]] == [f"collect[]='junk{i}'" for i in range(5)]
