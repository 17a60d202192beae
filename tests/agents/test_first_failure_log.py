"""A server that has not answered since start is named once in the log by the agents that
collect in the background (the exporter's targets, the subagent's refresher)."""

from __future__ import annotations

import argparse
import logging
import time

import pytest

from agents.catalog import load_catalog
from agents.collection import Collector
from agents.commands import agentx
from agents.connection import ConnectionSettings
from agents.exporter.collectors import BY_NAME
from agents.exporter.targets import Target
from agents.throwaway import free_loopback_port

LOGGER = "agents.first_failure_log"


def first_failure_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def exporter_target(settings: ConnectionSettings) -> Target:
    return Target(settings.target, Collector(settings, load_catalog(), {"global_status"}))


def line_of_two_failed_scrapes(caplog, settings: ConnectionSettings) -> str:
    """The exporter scrapes a server that does not answer twice; the one line logged for it."""
    target = exporter_target(settings)
    caplog.set_level(logging.WARNING)
    try:
        for _ in range(2):
            outcome = target.scrape((BY_NAME["global_status"],), time.monotonic() + 10)
            assert outcome.record is not None and not outcome.record.snapshot.up
    finally:
        target.close()
    (line,) = first_failure_lines(caplog)
    return line


def test_exporter_names_a_server_down_at_start_once(caplog):
    port = free_loopback_port()
    line = line_of_two_failed_scrapes(caplog, ConnectionSettings(host="127.0.0.1", port=port, user="monitor",
                                                                 password="pw"))
    assert line.startswith(f"cannot collect: 127.0.0.1:{port}: Can't connect to MySQL server")
    assert line.endswith("(the server counts as down until it answers; retrying)")


@pytest.mark.live
def test_exporter_names_a_wrong_password_once(caplog, mariadb, monitoring_user):
    settings = ConnectionSettings(host="127.0.0.1", port=mariadb.port, user=monitoring_user.name, password="wrong")
    line = line_of_two_failed_scrapes(caplog, settings)
    assert f"127.0.0.1:{mariadb.port}: ERROR 1045: Access denied for user '{monitoring_user.name}'" in line


@pytest.mark.live
def test_a_server_that_answered_first_is_left_to_the_connection_to_report(caplog, mariadb, monitoring_user):
    target = exporter_target(monitoring_user.settings)
    caplog.set_level(logging.WARNING)
    try:
        outcome = target.scrape((BY_NAME["global_status"],), time.monotonic() + 10)
        assert outcome.record.snapshot.up
    finally:
        target.close()
    assert first_failure_lines(caplog) == []


def test_subagent_names_a_server_down_at_start_once(caplog):
    port = free_loopback_port()
    parser = argparse.ArgumentParser()
    agentx.register(parser.add_subparsers())
    agent = agentx.build_agent(parser.parse_args(["agentx", "--host", "127.0.0.1", "--port", str(port), "--no-leak"]))
    caplog.set_level(logging.WARNING)
    try:
        assert not agent.refresher.collect().up
        assert not agent.refresher.collect().up
    finally:
        agent.close()
    (line,) = first_failure_lines(caplog)
    assert line.startswith(f"cannot collect: 127.0.0.1:{port}: Can't connect to MySQL server")
