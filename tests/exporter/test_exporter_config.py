"""Flags (mysqld_exporter spellings), web config parsing, basic auth verification, addresses."""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import bcrypt
import pytest

from mysql_snmp.agents.config.settings import ConfigError, ConnectionSettings
from mysql_snmp.agents.exporter import collectors
from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args, parse_listen_address
from mysql_snmp.agents.exporter.probe_access import ProbeAllowList, ProbeRefused
from mysql_snmp.agents.exporter.settings import apply_address, default_settings, probe_settings, without_certificate_check
from mysql_snmp.agents.exporter.web_config import (BasicAuthVerifier, Verdict, WebConfigError, load_web_config,
                                                   parse_web_config)
from mysql_snmp.agents.sources.options import SourceOptions
from tests.exporter.go_exporter import GO_EXPORTER, go_default_scrapers, go_flag_help, go_flags


def parse_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def parse(*argv: str):
    return config_from_args(parse_args(*argv))


# --------------------------------------------------------------------------- flags


def test_defaults_match_mysqld_exporter():
    config = parse()
    assert config.listen_addresses == (":9104",)
    assert config.telemetry_path == "/metrics"
    assert config.timeout_offset == 0.25
    assert config.lock_wait_timeout == 2
    on = {name for name, enabled in config.enabled.items() if enabled}
    assert {"global_status", "global_variables", "slave_status"} <= on
    assert not on & {"info_schema.processlist", "binlog_size", "heartbeat", "slave_hosts",
                     "info_schema.innodb_metrics", "perf_schema.memory_events"}


def test_go_style_flags():
    config = parse("--web.listen-address=127.0.0.1:9200", "--web.telemetry-path=/m", "--collect.binlog_size",
                   "--no-collect.slave_status", "--collect.global_variables=false", "--collect.heartbeat.utc",
                   "--collect.heartbeat.database=hb", "--collect.info_schema.processlist=true",
                   "--no-collect.info_schema.processlist.processes_by_user", "--exporter.min-interval=5")
    assert config.listen_addresses == ("127.0.0.1:9200",)
    assert config.telemetry_path == "/m"
    assert config.enabled["binlog_size"] and config.enabled["info_schema.processlist"]
    assert not config.enabled["slave_status"] and not config.enabled["global_variables"]
    assert config.heartbeat_utc and config.heartbeat_database == "hb"
    assert config.compat.processlist_by_user is False and config.compat.processlist_by_host is True
    assert config.min_interval == 5.0


# Go's printed defaults that are spelled otherwise here, with why the meaning is the same.
SAME_DEFAULT_SPELLED_OTHERWISE = {
    "config.my-cnf": "Go prints ~/.my.cnf expanded for whoever ran --help; ours keeps ~/.my.cnf, expanded at start",
    "log.level": "unset, ours follows mysql-snmp --log-level, whose default is info",
}
# Collectors whose default differs from mysqld_exporter's on purpose (the README's collector table says so).
DEFAULT_DIFFERS_ON_PURPOSE = {"engine_innodb_status"}
# The defaults of mysqld_exporter 0.14's boolean options, which its --help does not print (from its
# source: collector/exporter.go, heartbeat.go, info_schema_processlist.go, mysql_user.go, mysqld_exporter.go
# and exporter-toolkit's web flags).
GO_BOOLEAN_OPTION_DEFAULTS = {
    "exporter.log_slow_filter": False, "collect.heartbeat.utc": False, "collect.mysql.user.privileges": False,
    "collect.info_schema.processlist.processes_by_user": True,
    "collect.info_schema.processlist.processes_by_host": True,
    "tls.insecure-skip-verify": False, "web.systemd-socket": False,
}


def visible_options() -> dict[str, str]:
    """Our documented options: option -> its --help text."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return {option: action.help for action in parser._actions if action.help != argparse.SUPPRESS
            for option in action.option_strings}


@pytest.fixture(scope="module")
def go_exporter_flags() -> dict[str, str | None]:
    if shutil.which(GO_EXPORTER) is None:
        pytest.skip(f"{GO_EXPORTER} not installed (apt-get install prometheus-mysqld-exporter)")
    return go_flags()


def test_every_mysqld_exporter_flag_is_accepted_with_its_meaning(go_exporter_flags):
    assert len(go_exporter_flags) > 50 and "collect.engine_tokudb_status" in go_exporter_flags
    documented = visible_options()
    defaults = parse_args()
    for name, go_default in go_exporter_flags.items():
        assert f"--{name}" in documented, name
        if go_default is None:  # a boolean: every kingpin spelling, and on and off reach the config apart
            on, off = parse_args(f"--{name}"), parse_args(f"--no-{name}")
            assert parse_args(f"--{name}=true") == on and parse_args(f"--{name}=false") == off, name
            assert config_from_args(on) != config_from_args(off), name
            collector = name.removeprefix("collect.")
            if collector in collectors.BY_NAME:
                assert config_from_args(on).enabled[collector] and not config_from_args(off).enabled[collector]
            else:
                go_default = parse_args(f"--{name}") if GO_BOOLEAN_OPTION_DEFAULTS[name] else off
                assert config_from_args(go_default) == config_from_args(defaults), name
        elif name not in SAME_DEFAULT_SPELLED_OTHERWISE:  # Go's default given explicitly changes nothing
            given = parse_args(f"--{name}={go_default}")
            assert config_from_args(given) == config_from_args(defaults), name
            if name.startswith("log."):  # read from the arguments, not the config
                assert vars(given) == vars(defaults), name
    assert parse("--config.my-cnf=/root/.my.cnf").my_cnf == "/root/.my.cnf"
    assert parse().my_cnf == "~/.my.cnf"


def test_help_is_written_here_not_copied(go_exporter_flags):
    """Flag names and defaults carry over from mysqld_exporter; its help sentences do not."""
    theirs = go_flag_help()
    ours = visible_options()
    assert set(theirs) == set(go_exporter_flags)
    for name, go_text in theirs.items():
        assert len(go_text) > 10, name
        assert go_text.lower() not in ours[f"--{name}"].lower(), name


def test_default_collectors_are_mysqld_exporters(go_exporter_flags, tmp_path):
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser=exporter\npassword=unused\n")  # it refuses to start without; nothing connects
    theirs = go_default_scrapers(my_cnf)
    assert {"global_status", "global_variables", "slave_status"} <= theirs
    go_collectors = {name.removeprefix("collect.") for name, default in go_exporter_flags.items()
                     if default is None and name.removeprefix("collect.") in collectors.BY_NAME}
    assert len(go_collectors) >= 30
    ours = {name for name, enabled in parse().enabled.items() if enabled and name in go_collectors}
    assert ours - theirs == DEFAULT_DIFFERS_ON_PURPOSE and theirs <= ours
    config = config_from_args(parse_args())
    assert not config.enabled["engine_tokudb_status"]  # off by default, as upstream


def test_collector_options_reach_the_sources():
    config = config_from_args(parse_args(
        "--collect.perf_schema.eventsstatements.limit=10", "--collect.perf_schema.eventsstatements.timelimit=60",
        "--collect.perf_schema.eventsstatements.digest_text_limit=30",
        "--collect.perf_schema.eventsstatements.exclude_schemas=app", "--collect.info_schema.tables.databases=a,b",
        "--collect.perf_schema.file_instances.filter=ibd$", "--collect.perf_schema.file_instances.remove_prefix=/x/",
        "--collect.mysql.user.privileges", "--collect.info_schema.userstats", "--no-collect.info_schema.innodb_cmp"))
    assert config.source_options == SourceOptions(
        events_statements_limit=10, events_statements_timelimit=60, events_statements_digest_text_limit=30,
        events_statements_exclude_schemas=("app",), tables_databases="a,b", file_instances_filter="ibd$",
        file_instances_remove_prefix="/x/", user_privileges=True)
    assert config.enabled["info_schema.userstats"] and not config.enabled["info_schema.innodb_cmp"]
    defaults = config_from_args(parse_args())
    assert defaults.source_options == SourceOptions()
    # mysqld_exporter's defaults: the compression tables and the response time histograms on, the rest off.
    on = {name for name, enabled in defaults.enabled.items() if enabled}
    assert {"info_schema.innodb_cmp", "info_schema.innodb_cmpmem", "info_schema.query_response_time"} <= on
    assert not on & {"info_schema.tables", "perf_schema.eventsstatements", "mysql.user", "sys.user_summary"}


def test_insecure_skip_verify_keeps_tls_without_the_check():
    verified = ConnectionSettings(host="db", ssl_ca="/etc/ca.pem", ssl_mode="VERIFY_IDENTITY")
    relaxed = without_certificate_check(verified)
    assert relaxed.ssl_mode == "REQUIRED" and relaxed.ssl_ca is None
    assert relaxed.pymysql_kwargs()["ssl"]["verify_mode"] == ssl.CERT_NONE
    plain = ConnectionSettings(host="db")
    assert without_certificate_check(plain) is plain


def test_bad_boolean_is_an_error():
    with pytest.raises(SystemExit):
        parse("--collect.binlog_size=maybe")


@pytest.mark.parametrize("text, expected", [(":9104", ("", 9104)), ("127.0.0.1:1", ("127.0.0.1", 1)),
                                            ("[::1]:9104", ("::1", 9104))])
def test_listen_address(text, expected):
    assert parse_listen_address(text) == expected


@pytest.mark.parametrize("text", ["9104", "host:port", ":70000"])
def test_bad_listen_address(text):
    with pytest.raises(ValueError):
        parse_listen_address(text)


def test_collect_params_filter_the_enabled_collectors():
    enabled = {"global_status": True, "global_variables": True, "binlog_size": False}
    chosen = collectors.select(enabled, ["global_status", "binlog_size"])
    assert [c.name for c in chosen] == ["global_status"]
    # Nothing enabled matches: every enabled collector runs (mysqld_exporter's fallback).
    fallback = collectors.select(enabled, ["binlog_size"])
    assert {c.name for c in fallback} == {c.name for c in collectors.select(enabled)}


# --------------------------------------------------------------------------- targets and my.cnf


def test_probe_target_addresses():
    base = ConnectionSettings(user="u")
    assert apply_address(base, "db1:3307").host == "db1"
    assert apply_address(base, "db1:3307").port == 3307
    assert apply_address(base, "[::1]:3306").host == "::1"
    unix = apply_address(base, "unix:///run/mysqld/mysqld.sock")
    assert unix.uses_socket and unix.socket == "/run/mysqld/mysqld.sock"
    for bad in ("db1", "unix:relative.sock", "db1:notaport"):
        with pytest.raises(ConfigError):
            apply_address(base, bad)


def test_auth_module_inherits_client(tmp_path):
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = monitor\npassword = secret\nhost = db0\n\n[client.replica]\nuser = replmon\n")
    my_cnf.chmod(0o600)
    allowed = ProbeAllowList.from_flags(["db2:3308"])
    settings = probe_settings(str(my_cnf), "db2:3308", "client.replica", {}, allowed)
    assert (settings.user, settings.password, settings.host, settings.port) == ("replmon", "secret", "db2", 3308)
    env = {"MYSQLD_EXPORTER_PASSWORD": "from-env"}
    assert probe_settings(str(my_cnf), "db2:3308", "client.replica", env, allowed).password == "secret"
    my_cnf.write_text("[client]\nuser = monitor\n\n[client.replica]\nuser = replmon\n")
    assert probe_settings(str(my_cnf), "db2:3308", "client.replica", env, allowed).password == "from-env"
    with pytest.raises(ConfigError):
        probe_settings(str(my_cnf), "db2:3308", "client.nope", {}, allowed)
    with pytest.raises(ProbeRefused):
        probe_settings(str(my_cnf), "db3:3308", "client.replica", {}, allowed)


def test_default_settings_file_wins_flags_fill_in(tmp_path):
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = monitor\n")
    my_cnf.chmod(0o600)
    settings = default_settings(str(my_cnf), "db9:3310", "ignored", {"MYSQLD_EXPORTER_PASSWORD": "from-env"})
    assert (settings.user, settings.host, settings.port, settings.password) == ("monitor", "db9", 3310, "from-env")
    my_cnf.write_text("[client]\nuser = monitor\npassword = in-file\nhost = db1\n")
    settings = default_settings(str(my_cnf), "db9:3310", None, {"MYSQLD_EXPORTER_PASSWORD": "from-env"})
    assert (settings.host, settings.password) == ("db1", "in-file")
    no_file = default_settings(None, "db9:3310", "flaguser", {})
    assert (no_file.host, no_file.user) == ("db9", "flaguser")



def test_leak_flags_reach_the_metrics_targets_detector(tmp_path):
    from mysql_snmp.agents.catalog import load_catalog
    from mysql_snmp.agents.exporter.app import ExporterApp

    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = monitor\nhost = db1\nport = 3307\n")
    my_cnf.chmod(0o600)
    leak_config = tmp_path / "leak.yml"
    leak_config.write_text("leak:\n  bin_seconds: 30\n")
    config = parse(f"--config.my-cnf={my_cnf}", f"--exporter.leak-config={leak_config}",
                   f"--exporter.leak-state-file={tmp_path / 'state.json'}")
    assert (config.leak_config, config.leak_state_file) == (str(leak_config), str(tmp_path / "state.json"))
    app = ExporterApp(config, load_catalog(), load_web_config(None), environ={})
    try:
        (detector,) = app.default_target().observers
        assert detector.state_path == tmp_path / "state.json"
        assert detector.config.bin_seconds == 30.0
    finally:
        app.close()
    off = ExporterApp(parse(f"--config.my-cnf={my_cnf}", "--no-exporter.leak-detector"), load_catalog(),
                      load_web_config(None), environ={})
    try:
        assert off.default_target().observers == ()
    finally:
        off.close()


def test_bad_leak_config_is_a_config_error_naming_the_file(tmp_path):
    from mysql_snmp.agents.catalog import load_catalog
    from mysql_snmp.agents.exporter.app import ExporterApp

    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = monitor\n")
    my_cnf.chmod(0o600)
    leak_config = tmp_path / "leak.yml"
    leak_config.write_text("leak:\n  windows_seconds: []\n")
    app = ExporterApp(parse(f"--config.my-cnf={my_cnf}", f"--exporter.leak-config={leak_config}"),
                      load_catalog(), load_web_config(None), environ={})
    with pytest.raises(ConfigError, match=f"{leak_config}: leak.windows_seconds: needs at least one window"):
        app.default_target()


# --------------------------------------------------------------------------- web config


def self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


def test_web_config_tls_and_users(tmp_path):
    self_signed(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    path = tmp_path / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13\n"
                    f"basic_auth_users:\n  prom: '{hashed}'\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n")
    config = load_web_config(path)
    assert config.tls.cert_file == tmp_path / "server.crt"  # relative to the file, as exporter-toolkit does
    assert config.tls.context().minimum_version == ssl.TLSVersion.TLSv1_3
    assert config.users == {"prom": hashed}
    assert config.headers == {"X-Frame-Options": "deny"}


def test_web_config_cipher_suites_preference_and_an_inline_client_ca(tmp_path):
    cert, _ = self_signed(tmp_path)
    config = parse_web_config({"tls_server_config": {
        "cert_file": "server.crt", "key_file": "server.key", "prefer_server_cipher_suites": False,
        "cipher_suites": ["TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"],
        "client_auth_type": "RequireAndVerifyClientCert", "client_ca": cert.read_text()}}, tmp_path)
    context = config.tls.context()
    assert {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"} == {"ECDHE-RSA-AES256-GCM-SHA384"}
    assert not context.options & ssl.OP_CIPHER_SERVER_PREFERENCE
    assert context.get_ca_certs()[0]["subject"] == ((("commonName", "127.0.0.1"),),)
    # TLS 1.3 suites only: no TLS 1.2 suite is left, so only TLS 1.3 can be agreed on (as in Go)
    only13 = parse_web_config({"tls_server_config": {"cert_file": "server.crt", "key_file": "server.key",
                                                     "cipher_suites": ["TLS_AES_128_GCM_SHA256"]}}, tmp_path)
    assert only13.tls.context().minimum_version == ssl.TLSVersion.TLSv1_3


@pytest.mark.parametrize("document, message", [
    ({"tls_server_config": {"cert_file": "a.crt"}}, "needs both"),
    ({"basic_auth_users": {"u": "plaintext"}}, "not a bcrypt hash"),
    # The right prefix but no salt and checksum: every login would fail while the server looks fine.
    ({"basic_auth_users": {"u": "$2y$10$garbage"}}, "not a bcrypt hash"),
    ({"basic_auth_users": {"u": "$2b$99$" + "a" * 53}}, "not a bcrypt hash"),
    ({"tls_config": {}}, r"^unknown field\(s\) tls_config \(did you mean tls_server_config\?\); known: "),
    ({"basic_auth_user": {}}, r"^unknown field\(s\) basic_auth_user \(did you mean basic_auth_users\?\)"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_ca_files": "c"}},
     r"^tls_server_config: unknown field\(s\) client_ca_files \(did you mean client_ca_file\?\)"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_ca": "c"}}, "client_ca must be PEM text"),
    # Every exporter-toolkit key not implemented here stops the start: a dropped TLS setting is a hole.
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "cipher_suites": ["TLS_RSA_WITH_RC4_128_SHA"]}},
     r"^tls_server_config.cipher_suites: unknown cipher suite\(s\) TLS_RSA_WITH_RC4_128_SHA"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "cipher_suites": "TLS_AES_128_GCM_SHA256"}},
     "must be a list of cipher suite names"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "curve_preferences": ["X25519"]}},
     r"^tls_server_config.curve_preferences is not supported here"),
    ({"tls_server_config": {"cert": "PEM", "key_file": "b"}}, r"^tls_server_config.cert is not supported here"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_allowed_sans": ["prometheus"]}},
     "client_allowed_sans needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_auth_type": "VerifyClientCertIfGiven",
                            "client_ca_file": "ca", "client_allowed_sans": ["prometheus"]}},
     "client_allowed_sans needs client_auth_type"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_auth_type": "RequireAndVerifyClientCert",
                            "client_ca_file": "ca", "client_allowed_sans": []}}, "must be a list of names"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_ca_file": "ca"}},
     "a client CA is given but client_auth_type asks for no client certificate"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "prefer_server_cipher_suites": "yes"}},
     "must be true or false"),
    ({"rate_limit": {"burst": 1}}, r"^unknown field\(s\) rate_limit"),
    ({"http_server_config": {"header": {}}}, r"^http_server_config: unknown field\(s\) header \(did you mean headers\?\)"),
    ({"http_server_config": {"http2": True}}, "serves HTTP/1.1 only"),
    ({"http_server_config": {"headers": {"Server": "x"}}}, "'Server' cannot be set"),
    ({"http_server_config": {"headers": {"X-Frame-Options": "allow"}}}, "is not one of deny, sameorigin"),
    ({"http_server_config": {"headers": {"Content-Security-Policy": "a\r\nSet-Cookie: x"}}}, "must be one line"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "min_version": "SSL3"}}, "min_version"),
    ({"tls_server_config": {"cert_file": "a", "key_file": "b", "client_auth_type": "RequireAndVerifyClientCert"}},
     "client_ca_file"),
])
def test_web_config_errors(document, message, tmp_path):
    with pytest.raises(WebConfigError, match=message):
        parse_web_config(document, tmp_path)


def test_missing_certificate_fails_at_load(tmp_path):
    path = tmp_path / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: none.crt\n  key_file: none.key\n")
    with pytest.raises(WebConfigError, match="none.crt"):
        load_web_config(path)


def test_basic_auth_verifier_caches_successes_only():
    hashed = bcrypt.hashpw(b"right", bcrypt.gensalt(rounds=4)).decode()
    # Apache htpasswd and exporter-toolkit docs write $2y$ hashes.
    verifier = BasicAuthVerifier({"prom": hashed, "old": "$2y$" + hashed[4:]})
    assert verifier.check(b"prom", b"right") is Verdict.ALLOWED
    assert verifier.check(b"old", b"right") is Verdict.ALLOWED
    assert verifier.cached_successes == 2
    assert verifier.check(b"prom", b"wrong") is Verdict.REFUSED
    assert verifier.check(b"nobody", b"right") is Verdict.REFUSED
    assert verifier.cached_successes == 2  # wrong guesses never push a success out
    assert verifier.check(b"prom", b"right") is Verdict.ALLOWED and verifier.cached_successes == 2


def test_a_password_past_72_bytes_is_cut_there_for_every_user_alike():
    # bcrypt reads 72 bytes; the module raises on longer ones, which once dropped the connection
    # for an unknown user while a known one got its 401.
    hashed = bcrypt.hashpw(b"p" * 72, bcrypt.gensalt(rounds=4)).decode()
    verifier = BasicAuthVerifier({"prom": hashed})
    assert verifier.check(b"prom", b"p" * 72 + b"tail") is Verdict.ALLOWED  # as Go's bcrypt and htpasswd
    assert verifier.check(b"prom", b"q" * 100) is Verdict.REFUSED
    assert verifier.check(b"nobody", b"q" * 100) is Verdict.REFUSED
    assert verifier.check_header("Basic " + base64.b64encode(b"nobody:" + b"q" * 5000).decode()) is Verdict.REFUSED


@pytest.mark.parametrize("header", ["Bearer abc", "Basic !!!", "Basic \u00e9t\u00e9", "Basic " + base64.b64encode(b"no-colon").decode()])
def test_a_malformed_authorization_header_is_refused(header):
    verifier = BasicAuthVerifier({"prom": bcrypt.hashpw(b"right", bcrypt.gensalt(rounds=4)).decode()})
    assert verifier.check_header(header) is Verdict.REFUSED


def test_a_listen_address_that_cannot_be_bound_closes_the_ones_already_bound():
    import socket

    from mysql_snmp.agents.catalog import load_catalog
    from mysql_snmp.agents.exporter.app import ExporterApp
    from mysql_snmp.agents.exporter.server import make_servers
    from mysql_snmp.agents.exporter.web_config import WebConfig
    from mysql_snmp.agents.demo.throwaway import free_loopback_port

    port = free_loopback_port()
    config = parse(f"--web.listen-address=127.0.0.1:{port}", f"--web.listen-address=127.0.0.1:{port}")
    app = ExporterApp(config, load_catalog(), WebConfig(), environ={})
    with pytest.raises(OSError) as failure:  # held, as a caller logging it would: no GC to the rescue
        make_servers(app)
    assert failure.value.errno is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # EADDRINUSE while the first server still listens


def test_a_listen_address_in_use_is_one_error_line_naming_it_and_exit_1(caplog, tmp_path):
    import socket

    from mysql_snmp.agents.commands import exporter

    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nhost = 127.0.0.1\nport = 1\nuser = monitor\n")
    my_cnf.chmod(0o600)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        args = parse_args("--config.my-cnf", str(my_cnf), "--web.listen-address", address,
                          "--no-exporter.leak-detector")
        assert exporter.run(args) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == [f"cannot listen on {address}: Address already in use"]


def test_a_malformed_listen_address_is_one_error_line_and_exit_2(caplog):
    from mysql_snmp.agents.commands import exporter

    args = parse_args("--web.listen-address", "127.0.0.1", "--no-exporter.leak-detector")
    assert exporter.run(args) == 2  # was a ValueError traceback from the server start
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == ["listen address '127.0.0.1' needs a port (e.g. :9104)"]


@pytest.mark.parametrize("flag, value", [
    ("--exporter.scrape-timeout", "0"), ("--exporter.scrape-timeout", "nan"),  # every scrape empty at once
    ("--exporter.collector-timeout", "-1"), ("--exporter.collector-timeout", "inf"),
    ("--timeout-offset", "-1"), ("--timeout-offset", "nan"),
])
def test_durations_out_of_range_are_one_error_line_and_exit_2(flag, value, caplog):
    from mysql_snmp.agents.commands import exporter

    assert exporter.run(parse_args(flag, value, "--web.listen-address", "127.0.0.1:1",
                                   "--no-exporter.leak-detector")) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith(f"{flag} must be ")


@pytest.mark.parametrize("kind, message", [
    ("binary", "not UTF-8 text"),
    ("fifo", "not a regular file"),
    ("directory", "Is a directory"),
    ("missing", "cannot read"),
    ("weak tls", "too weak"),
    ("yaml error", "mapping values are not allowed"),
])
def test_unusable_web_config_is_refused_in_one_line_naming_the_file(tmp_path, kind, message):
    path = tmp_path / "web.yml"
    if kind == "binary":
        path.write_bytes(b"\x00\x01\xff\xfe tls_server_config")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "weak tls":
        self_signed(tmp_path)
        path.write_text("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS10\n")
    elif kind == "yaml error":
        path.write_text("basic_auth_users: a: b\n")
    with pytest.raises(WebConfigError) as caught:
        load_web_config(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text


def test_the_exporter_command_refuses_a_binary_web_config_naming_it(tmp_path):
    path = tmp_path / "web.yml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    result = subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "exporter", f"--web.config.file={path}",
                             "--web.listen-address=127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "not UTF-8 text" in lines[0], result.stderr


@pytest.mark.parametrize("text, message", [
    ("tls_server_config: [\n", "line 2, column 1: expected the node content, but found '<stream end>' "
                               "(while parsing a flow node)"),
    ("basic_auth_users: prometheus: x\n", "line 1, column 29: mapping values are not allowed here"),
])
def test_a_web_config_that_is_not_yaml_is_one_line_naming_file_and_place(tmp_path, text, message):
    path = tmp_path / "web.yml"
    path.write_text(text)
    with pytest.raises(WebConfigError) as raised:
        load_web_config(path)
    assert str(raised.value) == f"{path}: {message}"


def test_an_unreadable_web_config_is_one_line(tmp_path):
    with pytest.raises(WebConfigError) as raised:
        load_web_config(tmp_path / "absent.yml")
    assert str(raised.value) == f"{tmp_path / 'absent.yml'}: cannot read: No such file or directory"
    with pytest.raises(WebConfigError) as raised:
        load_web_config(tmp_path)  # a directory given by mistake
    assert str(raised.value) == f"{tmp_path}: cannot read: Is a directory"
