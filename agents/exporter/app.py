"""The exporter's state shared by all request threads: configuration, targets, auth, scraping.

One Target per MySQL server: the /metrics one (from the option file and flags) and
one per /probe target and auth module (agents/exporter/probe_targets.py: one spelling per
server, bounded, idle ones closed).  A scrape picks the collectors (flags narrowed by ``collect[]``),
sets its deadline from Prometheus' scrape timeout, and turns the target's
collection into metric families.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time

from ..catalog import Catalog
from ..config.settings import ConfigError, ConnectionSettings
from .collect_params import CollectParams
from .collect_pool import CollectPool
from .collectors import COLLECTORS, ExporterCollector, select
from .encoding import FamilyInterner, encode_as, negotiate
from .exposition import collection_self_families, request_self_families, server_families
from .flags import ExporterConfig
from .own_metrics import build_info, process_families
from .probe_targets import ProbeTargets, canonical_target
from .response import scrape_body
from .settings import default_settings, probe_settings, without_certificate_check
from .targets import Target
from ..mysql.tls_on_demand import prepare_for
from .web_config import BasicAuthVerifier, WebConfig

log = logging.getLogger(__name__)

SCRAPE_TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
RECONNECT_BACKOFF_MAX_SECONDS = 2.0
PROBE_INTERNER_FAMILIES = 4096
# Bounds on the scrape time a request's X-Prometheus-Scrape-Timeout-Seconds may ask for.
MIN_SCRAPE_SECONDS = 1.0
MAX_SCRAPE_SECONDS = 300.0


class ExporterApp:
    """Everything a request needs: configuration, targets, auth.  Shared by all handler threads."""

    def __init__(self, config: ExporterConfig, catalog: Catalog, web: WebConfig, *,
                 environ: dict[str, str] | None = None):
        self.config = config
        self.catalog = catalog
        self.web = web
        self.verifier = BasicAuthVerifier(web.users) if web.users else None
        self.environ = dict(os.environ if environ is None else environ)
        self._lock = threading.Lock()
        self._bad_timeout_logged = False
        self._default: Target | None = None
        self._probes = ProbeTargets()
        # Every /probe target's collections, on threads started only as they are needed.
        self._probe_pool = CollectPool(config.probe_workers, "collect-probe")
        # The /probe targets' families and encodings, kept once for all of them (a target's own
        # would cost ~1.6 MB each): at most 2 x PROBE_INTERNER_FAMILIES, ~12 MB.
        self._probe_interner = FamilyInterner(generation_size=PROBE_INTERNER_FAMILIES, per_scrape=False)
        self.enabled = tuple(c for c in COLLECTORS if config.enabled.get(c.name, c.default))
        self.collect_params = CollectParams((c.name for c in COLLECTORS), (c.name for c in self.enabled))

    # ------------------------------------------------------------------ targets

    def _new_collector(self, settings: ConnectionSettings):
        from ..collection import Collector
        from ..sources.heartbeat import HeartbeatOptions

        names = {c.name for c in self.enabled}
        heartbeat = None
        if "heartbeat" in names:
            heartbeat = HeartbeatOptions(self.config.heartbeat_database, self.config.heartbeat_table,
                                         self.config.heartbeat_utc)
        sources = {s for c in self.enabled for s in c.sources} - {"heartbeat"}
        collector = Collector(
            settings,
            self.catalog,
            sources,
            statement_timeout=self.config.collector_timeout,
            lock_wait_timeout=self.config.lock_wait_timeout,
            log_slow_filter=self.config.log_slow_filter,
            heartbeat=heartbeat,
            host_metrics="auto" if "host" in names else "off",
            source_options=self.config.source_options,
        )
        # Collections of a target are single-flight and paced by Prometheus: a longer backoff
        # would only fail the first scrapes after the server is back.
        collector.connection.backoff_max = RECONNECT_BACKOFF_MAX_SECONDS
        return collector

    def _target(self, name: str, settings: ConnectionSettings, observers=(), probed: bool = False) -> Target:
        if self.config.tls_insecure_skip_verify:
            settings = without_certificate_check(settings)
        settings = prepare_for(settings)  # OpenSSL is loaded only for a target that may need it
        return Target(name, self._new_collector(settings), min_interval=self.config.min_interval,
                      may_interrupt=self.config.max_open_conns >= 2, observers=observers,
                      remember_between_scrapes=not probed, pool=self._probe_pool if probed else None,
                      shared_interner=self._probe_interner if probed else None)

    def _leak_detectors(self, target: str) -> list:
        """The leak detector of the /metrics target (its history is that server's)."""
        if not self.config.leak_detector:
            return []
        from ..leak.config import LeakConfigError
        from ..leak.setup import build_leak_detector, describe_watched

        try:
            detector = build_leak_detector(target, self.config.leak_config, self.config.leak_state_file,
                                           agent="exporter", catalog=self.catalog, live=True)
        except LeakConfigError as exc:
            raise ConfigError(str(exc)) from None
        log.info("leak detector watching %s", describe_watched(detector))
        return [detector]

    def default_target(self) -> Target:
        with self._lock:
            if self._default is None:
                settings = default_settings(self.config.my_cnf, self.config.mysqld_address,
                                            self.config.mysqld_username, self.environ, self.config.my_cnf_given)
                log.info("/metrics target: %s", settings)
                self._default = self._target(settings.target, settings, self._leak_detectors(settings.target))
            return self._default

    def probe_target(self, target: str, auth_module: str) -> Target:
        target = canonical_target(target)  # one Target, and one connection, per server
        key = (target, (auth_module or "client").lower())
        existing = self._probes.get(key)
        if existing is not None:
            return existing
        settings = probe_settings(self.config.my_cnf, target, auth_module, self.environ, self.config.probe_allowed)
        return self._probes.add(key, self._target(f"{target} ({auth_module})", settings, probed=True))

    def close(self) -> None:
        with self._lock:
            targets = ([self._default] if self._default else []) + self._probes.take_all()
            self._default = None
        for target in targets:
            target.close()
        self._probe_pool.shutdown()

    # ------------------------------------------------------------------ scraping

    def deadline(self, timeout_header: str | None) -> float:
        return time.monotonic() + self.scrape_seconds(timeout_header)

    def scrape_seconds(self, timeout_header: str | None) -> float:
        """How long a scrape may take: Prometheus' timeout less --timeout-offset, within
        [MIN_SCRAPE_SECONDS, MAX_SCRAPE_SECONDS] (anyone who can reach the port can send the
        header: a tiny value would fail the collection other scrapes join, a huge one hold its
        thread); --exporter.scrape-timeout when the header is absent or not a finite positive number."""
        timeout = self.config.scrape_timeout
        if not timeout_header:
            return timeout
        try:
            prometheus_timeout = float(timeout_header)
        except ValueError:
            prometheus_timeout = math.nan
        if not math.isfinite(prometheus_timeout) or prometheus_timeout <= 0:
            if not self._bad_timeout_logged:  # once: any client can send it, on every request
                self._bad_timeout_logged = True
                log.warning("ignoring %s: %r is not a finite positive number of seconds (said once)",
                            SCRAPE_TIMEOUT_HEADER, timeout_header[:40])
            return timeout
        if prometheus_timeout > self.config.timeout_offset:
            prometheus_timeout -= self.config.timeout_offset
        return min(MAX_SCRAPE_SECONDS, max(MIN_SCRAPE_SECONDS, prometheus_timeout))

    def collectors_for(self, requested: list[str]) -> tuple[ExporterCollector, ...]:
        self.collect_params.check(requested)
        return select(self.config.enabled, requested)

    def scrape(self, target: Target, requested: list[str], timeout_header: str | None,
               accept: str | None = None, gzip: bool = False) -> tuple[bytes, str]:
        """(body, content type) of one scrape of ``target``; the MySQL part is shared by every
        request for the same collection (agents/exporter/response.py)."""
        collectors = self.collectors_for(requested)
        outcome = target.scrape(collectors, self.deadline(timeout_header))
        counters = target.counters_now()
        own_target = target is self._default  # the exporter's own process and build, as upstream
        chosen = negotiate(accept)
        content_type = chosen.content_type
        labels = tuple(c.label for c in collectors)
        record = outcome.record

        def collection_head() -> bytes:
            families = collection_self_families(outcome, counters)
            if own_target:
                families.append(build_info())
            return encode_as(families, chosen, None, final=False)

        head = target.heads.get(record, labels, content_type, collection_head, revision=counters.version)
        request = request_self_families(counters, self.catalog)
        if own_target:
            request.extend(process_families())
            request.extend(self.collect_params.families())
        server = None
        if record is not None and record.snapshot.up:
            interner = target.scrape_interner(counters.scrapes)
            server = target.bodies.get(record, labels, content_type, lambda: encode_as(
                server_families(outcome, self.catalog, self.config.compat, interner), chosen,
                interner, final=False))
        return scrape_body(head, request, server, chosen, gzip)
