"""Running the exporter in-process on a loopback port, and reading its answers."""

from __future__ import annotations

import argparse
import base64
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from prometheus_client.parser import text_string_to_metric_families

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args
from mysql_snmp.agents.exporter.app import ExporterApp
from mysql_snmp.agents.exporter.server import make_servers
from mysql_snmp.agents.exporter.web_config import load_web_config
from mysql_snmp.agents.demo.throwaway import free_loopback_port

PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


@dataclass
class RunningExporter:
    url: str
    app: ExporterApp
    ssl_context: ssl.SSLContext | None = None

    def get(self, path: str = "/metrics", *, user: str | None = None, password: str | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, str, dict]:
        request = urllib.request.Request(self.url + path, headers=dict(headers or {}))
        if user is not None:
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.ssl_context) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)

    def scrape(self, path: str = "/metrics", **kwargs) -> "Scrape":
        status, body, _ = self.get(path, **kwargs)
        assert status == 200, f"{path}: HTTP {status}: {body[:500]}"
        return Scrape(body)


class Scrape:
    """A parsed text exposition: sample name -> {labels: value}, family name -> type."""

    def __init__(self, text: str):
        self.text = text
        self.samples: dict[str, dict[tuple, float]] = {}
        self.types: dict[str, str] = {}
        self.labels: dict[str, set[str]] = {}
        for family in text_string_to_metric_families(text):
            self.types[family.name] = family.type
            for sample in family.samples:
                self.samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
                self.labels.setdefault(family.name, set()).update(sample.labels)

    def value(self, name: str, **labels: str) -> float:
        series = self.samples.get(name)
        assert series is not None, f"{name} not exported"
        key = tuple(sorted(labels.items()))
        assert key in series, f"{name}{labels} not exported; have {list(series)[:10]}"
        return series[key]

    def has(self, name: str) -> bool:
        return name in self.samples

    def names(self, prefix: str = "") -> set[str]:
        return {name for name in self.samples if name.startswith(prefix)}


@contextmanager
def running_exporter(*flags: str, web_config: Path | None = None,
                     environ: dict[str, str] | None = None, catalog=None) -> Iterator[RunningExporter]:
    """The exporter with mysqld_exporter-style ``flags``, serving on a free loopback port (and
    ``catalog`` instead of the shipped one, when given)."""
    port = free_loopback_port()
    state_dir = tempfile.TemporaryDirectory(prefix="exporter-leak-")
    # The leak detector's history goes to a temp dir, not /var/lib/mysql-snmp.
    leak_state = Path(state_dir.name) / "leak-state.json"
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = config_from_args(parser.parse_args([f"--web.listen-address=127.0.0.1:{port}",
                                                 f"--exporter.leak-state-file={leak_state}", *flags]))
    web = load_web_config(web_config)
    app = ExporterApp(config, catalog or load_catalog(), web, environ=environ or {})
    servers = make_servers(app)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    context = None
    if web.tls:
        context = ssl.create_default_context(cafile=str(web.tls.cert_file))
    try:
        yield RunningExporter(f"{'https' if web.tls else 'http'}://127.0.0.1:{port}", app, context)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        app.close()
        state_dir.cleanup()


def scrape_go_exporter(binary: str, my_cnf: Path, flags: list[str], timeout: float = 10.0) -> Scrape:
    """One scrape of mysqld_exporter (the Go one) started with ``flags`` on a free loopback port, then stopped."""
    port = free_loopback_port()
    process = subprocess.Popen([binary, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
                                *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        go_exporter = RunningExporter(f"http://127.0.0.1:{port}", app=None)
        deadline = time.monotonic() + timeout
        while True:
            try:
                return go_exporter.scrape()
            except OSError:  # not listening yet
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
    finally:
        process.terminate()
        process.wait()
