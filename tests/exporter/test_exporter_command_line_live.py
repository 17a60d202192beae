"""Drop-in command lines against a throwaway MariaDB: DSN, own metrics, slow-log filter, TLS noise."""

from __future__ import annotations

import logging
import socket
import subprocess

import pytest
from exporter_harness import running_exporter

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.exporter.settings import settings_from_dsn

pytestmark = pytest.mark.live


def test_data_source_name_without_option_file(mariadb, monitoring_user, caplog):
    dsn = f"{monitoring_user.name}:{monitoring_user.password}@(127.0.0.1:{mariadb.port})/"
    caplog.set_level(logging.DEBUG)
    uptime_before = int(mariadb.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1])
    with running_exporter("--no-collect.host", environ={"DATA_SOURCE_NAME": dsn}) as exporter:
        scrape = exporter.scrape()
    uptime_after = int(mariadb.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1])
    assert scrape.value("mysql_up") == 1.0
    # The server the DSN names (the shared one may have been restarted just before: compare, not > 0).
    assert uptime_before <= scrape.value("mysql_global_status_uptime") <= uptime_after
    assert monitoring_user.password not in caplog.text
    assert "DATA_SOURCE_NAME" in caplog.text  # the settings' origin is logged, not their secret


def test_own_process_metrics_and_build_info_on_the_telemetry_path_only(mariadb, monitoring_user):
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                          "--web.telemetry-path=/stats") as exporter:
        scrape = exporter.scrape("/stats")
        probe = exporter.scrape(f"/probe?target=127.0.0.1:{mariadb.port}")
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                 "process_start_time_seconds", "process_max_fds", "process_virtual_memory_bytes"):
        assert scrape.value(name) > 0, name
    # This very process: RSS between 10 MB and 1 GB.
    assert 10e6 < scrape.value("process_resident_memory_bytes") < 1e9
    (labels,) = scrape.samples["mysqld_exporter_build_info"]
    assert dict(labels)["implementation"] == "mysql-snmp" and dict(labels)["version"]
    assert not probe.has("process_cpu_seconds_total") and not probe.has("mysqld_exporter_build_info")


def test_log_slow_filter_is_set_on_the_session(mariadb, monitoring_user):
    with Collector(monitoring_user.settings, sources={"global_status"}, log_slow_filter=True) as collector:
        collector.collect()
        (value,) = collector.connection.query("SELECT @@session.log_slow_filter").rows[0]
    assert set(str(value).split(",")) == {"tmp_table_on_disk", "filesort_on_disk"}


def test_tls_handshake_failure_and_disconnect_are_one_line_each(mariadb, monitoring_user, tmp_path, caplog, capfd):
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True)
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {cert.name}\n  key_file: {key.name}\n")
    caplog.set_level(logging.DEBUG, logger="mysql_snmp.agents.exporter.server")
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                          web_config=web) as exporter:
        host, port = exporter.url.removeprefix("https://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as plain:
            plain.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")  # plain HTTP to the TLS port
            plain.recv(1024)
        with socket.create_connection((host, int(port)), timeout=5):
            pass  # connects and hangs up without a word
        assert exporter.scrape().value("mysql_up") == 1.0  # still serving
    lines = [r for r in caplog.records if r.name == "mysql_snmp.agents.exporter.server" and r.levelno >= logging.DEBUG
             and "listening" not in r.getMessage()]
    assert any(r.levelno == logging.INFO and "TLS handshake with 127.0.0.1 failed" in r.getMessage() for r in lines)
    # The plain-HTTP client: one info line.  The silent one: nothing above debug.
    assert len([r for r in lines if r.levelno >= logging.INFO]) == 1
    assert all(r.exc_info is None for r in lines)
    assert "Traceback" not in capfd.readouterr().err


def test_collect_params_that_select_nothing_are_logged_once_and_counted(mariadb, monitoring_user, caplog):
    caplog.set_level(logging.WARNING, logger="mysql_snmp.agents.exporter.collect_params")
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host") as exporter:
        # A typo beside a real name: the real one alone is collected (upstream's filter).
        narrowed = exporter.scrape("/metrics?collect[]=global_statuz&collect[]=global_variables")
        # Only names that select nothing: every enabled collector, as current mysqld_exporter.
        fallback = exporter.scrape("/metrics?collect[]=global_statuz&collect[]=info_schema.tables"
                                   "&collect[]=engine_tokudb_status")
        probe = exporter.scrape(f"/probe?target=127.0.0.1:{mariadb.port}&collect[]=global_statuz")
        counted = exporter.scrape()
    assert narrowed.has("mysql_global_variables_max_connections") and not narrowed.has("mysql_global_status_uptime")
    assert fallback.has("mysql_global_variables_max_connections") and fallback.has("mysql_global_status_uptime")
    assert not fallback.has("mysql_info_schema_table_rows")  # a disabled collector stays off
    assert probe.has("mysql_global_status_uptime")
    ignored = counted.samples["mysql_exporter_collect_params_ignored_total"]
    assert ignored == {(("reason", "unknown"),): 3.0, (("reason", "disabled"),): 2.0}
    warnings = [r.getMessage() for r in caplog.records if r.name.endswith(".collect_params")]
    assert len(warnings) == 3, warnings  # one per name, however often it is asked for
    assert warnings[0].startswith("collect[]='global_statuz': no such collector (did you mean global_status?); "
                                  "ignored, as mysqld_exporter does")
    assert warnings[1].startswith("collect[]='info_schema.tables': this collector is off "
                                  "(turn it on with --collect.info_schema.tables)")
    assert warnings[2].startswith("collect[]='engine_tokudb_status': this collector is off "
                                  "(turn it on with --collect.engine_tokudb_status)")


REFUSED_AT_START = ("(", "a)", "ib.*[", "*.ibd", "[z-a]", "a{3,2}")
LEFT_TO_THE_SERVER = (".*", r"\p{L}+", "(?<schema>[a-z]+)/", "a(?i)b", r"\Qa.b\E", "[[:alpha:]]+")


@pytest.mark.parametrize("pattern", REFUSED_AT_START + LEFT_TO_THE_SERVER)
def test_the_start_time_regexp_check_agrees_with_the_server(mariadb, pattern):
    """A pattern refused at start is one MariaDB's REGEXP (PCRE2) refuses too; one it takes is not refused."""
    import pymysql

    from mysql_snmp.agents.exporter.server_regexp import regexp_problem

    try:
        mariadb.execute(f"SELECT 'ibdata1' REGEXP '{pymysql.converters.escape_string(pattern)}'")
        server_refuses = False
    except pymysql.err.MySQLError as exc:
        assert exc.args[0] == 1139, exc  # ER_REGEXP_ERROR
        server_refuses = True
    assert server_refuses == (pattern in REFUSED_AT_START)
    assert (regexp_problem(pattern) is not None) == server_refuses
