"""Load and validate the metric catalog (agents/catalog.yaml).

The catalog is the single list of exported values; every agent and generator
reads it through this module.  Validation happens at load time so a broken
catalog fails loudly with the entry that is wrong, not later as a missing OID.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .catalog_families import FamilyTable, FamilyTableError, parse_family_table
from .config.yaml_errors import describe_load_error

CATALOG_PATH = Path(__file__).with_name("catalog.yaml")
# The same document as JSON, with the SHA-256 of the YAML it came from (`mysql-snmp generate`
# writes it).  Parsing the ~10,000-line YAML costs every process ~15 MB of RSS it never gives
# back (PyYAML's node tree); JSON costs 3 MB and a third of the time.  A stale compiled file
# (the YAML edited since) is ignored, and a test fails on it.
COMPILED_PATH = CATALOG_PATH.with_suffix(".json")

KINDS = ("counter", "gauge", "info", "string")
SNMP_TYPES = (
    "Counter32",
    "Counter64",
    "Gauge32",
    "Integer32",
    "INTEGER",
    "Unsigned32",
    "TimeTicks",
    "OCTET STRING",
    "DisplayString",
)
PROMETHEUS_TYPES = ("counter", "gauge", "untyped", "info", "histogram", "summary")
# A table column no source fills: the SNMP view serves each row's index as text in it, so a
# manager names and labels rows without decoding the index OID.
ROW_NAME_SOURCE = "table_row"
SOURCES = (
    "global_status",
    "global_variables",
    "innodb",
    "replication",
    "binlog",
    "processlist",
    "host",
    "process",
    "heartbeat",
    "slave_hosts",
    "perf_schema_memory",
    "innodb_metrics",
    "derived",
    ROW_NAME_SOURCE,
    "leak",
    "agent",
    # mysqld_exporter's table collectors: one source each (agents/sources/<name>.py)
    "innodb_cmp",
    "innodb_cmpmem",
    "query_response_time",
    "auto_increment",
    "info_schema_tables",
    "innodb_tablespaces",
    "table_statistics",
    "schema_statistics",
    "user_statistics",
    "client_statistics",
    "replica_host",
    "mysql_user",
    "sys_user_summary",
    "perf_schema_events_statements",
    "perf_schema_events_statements_sum",
    "perf_schema_events_waits",
    "perf_schema_file_events",
    "perf_schema_file_instances",
    "perf_schema_table_io_waits",
    "perf_schema_index_io_waits",
    "perf_schema_table_lock_waits",
    "perf_schema_group_members",
    "perf_schema_group_member_stats",
    "perf_schema_applier_workers",
    "rocksdb_perf_context",
)
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class CatalogError(ValueError):
    pass


def parse_oid(text: str | Iterable[int]) -> tuple[int, ...]:
    if isinstance(text, str):
        parts = text.strip().lstrip(".").split(".")
        try:
            return tuple(int(p) for p in parts)
        except ValueError as exc:
            raise CatalogError(f"bad OID {text!r}") from exc
    return tuple(int(p) for p in text)


def format_oid(oid: Iterable[int]) -> str:
    return ".".join(str(p) for p in oid)


@dataclass(frozen=True, slots=True)
class LegacySnmp:
    """One of the 160 objects of the original mysql-snmp MIB (instance .0 under legacy_root)."""

    n: int
    name: str
    type: str
    oid: tuple[int, ...]
    key: str | None = None  # the original's key (legacy_key column of the reference TSV)
    opennms_alias: str | None = None
    # Catalog names whose value the legacy object serves, first present wins, when this
    # metric has none (e.g. an old-server-only InnoDB line and its modern equivalent).
    fallback: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SnmpSpec:
    name: str
    type: str
    oid: tuple[int, ...] | None = None  # scalars: the object OID (instance .0 appended on the wire)
    table: str | None = None  # columns: the conceptual table this column belongs to
    column: int | None = None
    legacy: LegacySnmp | None = None
    # OpenNMS alias (RRD file and data source name) when the one derived from the name is not
    # readable; see agents/generate/opennms_aliases.py.
    opennms_alias: str | None = None


@dataclass(frozen=True, slots=True)
class PrometheusSpec:
    name: str
    type: str
    # Prometheus wants base units: a value the catalog keeps in milliseconds (because the
    # legacy SNMP object is) is exposed in seconds with scale 0.001.
    scale: float = 1.0
    # Labels with a fixed value: the catalog value is one sample of a family that several
    # entries share (Com_select -> mysql_global_status_commands_total{command="select"}).
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Source:
    kind: str  # one of SOURCES (YAML key "from")
    key: str | None = None
    status_override: str | None = None  # SHOW STATUS variable that wins when present
    # A scalar that is one row of the labelled metric with the same source and key: the label
    # sets tried in order, the first row the table has wins (YAML ``row: {series: [a, b]}``).
    # OpenNMS cannot graph a table row with node-level objects; such a scalar serves the row's
    # value at a node-level OID.
    row: tuple[tuple[tuple[str, str], ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    help: str
    unit: str
    kind: str
    source: Source
    labels: tuple[str, ...] = ()
    snmp: SnmpSpec | None = None
    prometheus: PrometheusSpec | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A conceptual SNMP table: rows are label sets, columns are catalog metrics."""

    name: str  # e.g. myBufferPoolTable
    oid: tuple[int, ...]
    index: tuple[str, ...]  # label names forming the row index, in order
    description: str
    entry_name: str  # e.g. myBufferPoolEntry
    # Index labels whose values are non-negative integers (a buffer pool number): one INTEGER
    # sub-identifier each.  Every other index label is an OCTET STRING.
    integer_index: frozenset[str] = frozenset()


@dataclass
class Catalog:
    module: str
    enterprise_oid: tuple[int, ...]
    legacy_root: tuple[int, ...]
    new_root: tuple[int, ...]
    metrics: tuple[Metric, ...]
    tables: dict[str, Table]
    extra: dict = field(default_factory=dict)  # notifications and other header data
    # mysqld_exporter's families as projections (catalog header prometheus_families:).
    families: FamilyTable = field(default_factory=lambda: FamilyTable({}))

    def __post_init__(self) -> None:
        self._by_name = {m.name: m for m in self.metrics}
        by_kind: dict[str, list[Metric]] = {}
        for metric in self.metrics:
            by_kind.setdefault(metric.source.kind, []).append(metric)
        self._by_kind = {kind: tuple(metrics) for kind, metrics in by_kind.items()}
        self._overridden = tuple(m for m in self.metrics if m.source.status_override)

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def by_name(self, name: str) -> Metric:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{name!r} is not in the catalog") from None

    def legacy(self) -> list[Metric]:
        """The original mysql-snmp objects, in OID order."""
        return sorted(
            (m for m in self.metrics if m.snmp and m.snmp.legacy),
            key=lambda m: m.snmp.legacy.n,
        )

    def from_source(self, kind: str) -> tuple[Metric, ...]:
        """The metrics fed by source kind ``kind``, in catalog order (indexed: every collection asks)."""
        return self._by_kind.get(kind, ())

    def with_status_override(self) -> tuple[Metric, ...]:
        """The metrics a SHOW STATUS variable overrides when printed (indexed: every collection asks)."""
        return self._overridden

    def row_metric(self, metric: Metric) -> Metric:
        """The labelled metric a ``source.row`` scalar serves one row of."""
        if not metric.source.row:
            raise KeyError(f"{metric.name!r} is not a row of another metric")
        matches = [m for m in self.from_source(metric.source.kind)
                   if m.source.key == metric.source.key and m.labels and not m.source.row]
        if len(matches) != 1:
            raise KeyError(f"{metric.name!r}: {len(matches)} labelled metrics read "
                           f"{metric.source.kind} {metric.source.key!r}, expected one")
        return matches[0]

    def table_columns(self, table: str) -> list[Metric]:
        return sorted(
            (m for m in self.metrics if m.snmp and m.snmp.table == table),
            key=lambda m: m.snmp.column,
        )


def _legacy(raw: dict, legacy_root: tuple[int, ...], where: str) -> LegacySnmp:
    try:
        n = int(raw["n"])
        return LegacySnmp(
            n=n,
            name=raw["name"],
            type=raw["type"],
            oid=legacy_root + (n,),
            key=raw.get("key"),
            opennms_alias=raw.get("opennms_alias"),
            fallback=tuple(raw.get("fallback") or ()),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogError(f"{where}: bad snmp.legacy {raw!r}: {exc}") from exc


def _row_candidates(raw: object, where: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict) or len(raw) != 1:
        raise CatalogError(f"{where}: source.row must name one label and its values, got {raw!r}")
    (label, values), = raw.items()
    values = [values] if isinstance(values, str) else values
    if not values or not all(isinstance(v, str) for v in values):
        raise CatalogError(f"{where}: source.row {label} must list label values, got {values!r}")
    return tuple(((str(label), value),) for value in values)


def _metric(raw: dict, legacy_root: tuple[int, ...]) -> Metric:
    where = f"catalog entry {raw.get('name', raw)!r}"
    try:
        name = raw["name"]
        source_raw = raw["source"]
        source = Source(
            kind=sys.intern(source_raw["from"]),
            key=source_raw.get("key"),
            status_override=source_raw.get("status_override"),
            row=_row_candidates(source_raw.get("row"), where),
        )
        snmp = None
        if raw.get("snmp"):
            s = raw["snmp"]
            snmp = SnmpSpec(
                name=s["name"],
                type=s["type"],
                oid=parse_oid(s["oid"]) if s.get("oid") else None,
                table=s.get("table"),
                column=s.get("column"),
                legacy=_legacy(s["legacy"], legacy_root, where) if s.get("legacy") else None,
                opennms_alias=s.get("opennms_alias"),
            )
        prometheus = None
        if raw.get("prometheus"):
            p = raw["prometheus"]
            prometheus = PrometheusSpec(name=p["name"], type=sys.intern(p["type"]), scale=float(p.get("scale", 1.0)),
                                        labels=tuple(sorted((str(k), str(v)) for k, v in (p.get("labels") or {}).items())))
        # A decoded document holds one string per occurrence: the few words these fields
        # take are shared instead (0.3 MB less for the whole catalog).
        return Metric(
            name=name,
            help=str(raw["help"]).strip(),
            unit=sys.intern(str(raw.get("unit") or "")),
            kind=sys.intern(raw["kind"]),
            source=source,
            labels=tuple(sys.intern(label) for label in raw.get("labels") or ()),
            snmp=snmp,
            prometheus=prometheus,
        )
    except (KeyError, TypeError) as exc:
        raise CatalogError(f"{where}: missing or malformed field {exc}") from exc


def validate(catalog: Catalog) -> None:
    """Raise CatalogError naming the first inconsistent entry."""
    seen_names: set[str] = set()
    seen_oids: dict[tuple[int, ...], str] = {}
    seen_snmp_names: dict[str, str] = {}
    seen_prom: dict[tuple[str, tuple[str, ...]], str] = {}

    def claim_oid(oid: tuple[int, ...], owner: str) -> None:
        if oid in seen_oids:
            raise CatalogError(f"OID {format_oid(oid)} used by {seen_oids[oid]} and {owner}")
        seen_oids[oid] = owner

    def claim_snmp_name(name: str, owner: str) -> None:
        if name in seen_snmp_names:
            raise CatalogError(f"SNMP name {name} used by {seen_snmp_names[name]} and {owner}")
        seen_snmp_names[name] = owner

    for table in catalog.tables.values():
        claim_oid(table.oid, f"table {table.name}")
        claim_snmp_name(table.name, f"table {table.name}")
        claim_snmp_name(table.entry_name, f"table {table.name}")
        stray = sorted(table.integer_index - set(table.index))
        if stray:
            raise CatalogError(f"table {table.name}: integer_index {stray} not in its index {list(table.index)}")

    for m in catalog.metrics:
        where = f"catalog entry {m.name!r}"
        if not NAME_RE.match(m.name):
            raise CatalogError(f"{where}: name must be snake_case")
        if m.name in seen_names:
            raise CatalogError(f"{where}: duplicate name")
        seen_names.add(m.name)
        if m.kind not in KINDS:
            raise CatalogError(f"{where}: kind {m.kind!r} not in {KINDS}")
        if m.source.kind not in SOURCES:
            raise CatalogError(f"{where}: source {m.source.kind!r} not in {SOURCES}")
        if not m.help:
            raise CatalogError(f"{where}: empty help")
        if m.snmp:
            if m.snmp.type not in SNMP_TYPES:
                raise CatalogError(f"{where}: SNMP type {m.snmp.type!r} not in {SNMP_TYPES}")
            claim_snmp_name(m.snmp.name, m.name)
            if m.snmp.table:
                table = catalog.tables.get(m.snmp.table)
                if table is None:
                    raise CatalogError(f"{where}: unknown table {m.snmp.table!r}")
                if not m.snmp.column or m.snmp.column < 1:
                    raise CatalogError(f"{where}: table column must be a positive integer")
                if tuple(m.labels) != table.index:
                    raise CatalogError(
                        f"{where}: labels {m.labels} must equal table {table.name} index {table.index}"
                    )
                claim_oid(table.oid + (1, m.snmp.column), m.name)
            elif m.snmp.oid:
                if m.labels:
                    raise CatalogError(f"{where}: a labelled metric needs an SNMP table, not a scalar OID")
                claim_oid(m.snmp.oid, m.name)
            elif not m.snmp.legacy:
                raise CatalogError(f"{where}: snmp needs an oid, a table column or a legacy object")
            if m.snmp.legacy:
                legacy = m.snmp.legacy
                if legacy.type not in SNMP_TYPES:
                    raise CatalogError(f"{where}: legacy type {legacy.type!r} not in {SNMP_TYPES}")
                claim_oid(legacy.oid, m.name)
                claim_snmp_name(legacy.name, m.name)
                unknown = [name for name in legacy.fallback if name not in catalog]
                if unknown:
                    raise CatalogError(f"{where}: legacy fallback names unknown metrics {unknown}")
        if m.source.row:
            _validate_row(catalog, m, where)
        if m.prometheus:
            if m.prometheus.type not in PROMETHEUS_TYPES:
                raise CatalogError(f"{where}: Prometheus type {m.prometheus.type!r} not in {PROMETHEUS_TYPES}")
            if not m.prometheus.scale > 0:
                raise CatalogError(f"{where}: Prometheus scale must be positive")
            if m.prometheus.labels and m.labels:
                raise CatalogError(f"{where}: fixed Prometheus labels are for scalar values only")
            key = (m.prometheus.name, m.labels or m.prometheus.labels)
            if key in seen_prom:
                raise CatalogError(
                    f"{where}: Prometheus name {m.prometheus.name} already used by {seen_prom[key]}"
                )
            seen_prom[key] = m.name
    _validate_families(catalog)


def _validate_row(catalog: Catalog, m: Metric, where: str) -> None:
    if m.labels:
        raise CatalogError(f"{where}: source.row makes a scalar; it takes no labels")
    if m.prometheus:
        raise CatalogError(f"{where}: source.row serves a row that is already on /metrics; no prometheus spec")
    try:
        row_metric = catalog.row_metric(m)
    except KeyError as exc:
        raise CatalogError(f"{where}: {exc.args[0]}") from None
    for labels in m.source.row:
        if tuple(name for name, _ in labels) != row_metric.labels:
            raise CatalogError(f"{where}: source.row labels {labels} do not index {row_metric.name} "
                               f"{list(row_metric.labels)}")


def _validate_families(catalog: Catalog) -> None:
    """Catalog entries of an every-row source say what the family table makes of their key."""
    table = catalog.families
    for m in catalog.metrics:
        if m.source.kind not in table.rows:
            if m.prometheus and m.prometheus.labels:
                raise CatalogError(f"catalog entry {m.name!r}: fixed Prometheus labels belong to the families of "
                                   f"prometheus_families.rows ({', '.join(table.rows)}), not {m.source.kind}")
            continue
        where = f"catalog entry {m.name!r}"
        projected = table.project(m.source.kind, m.source.key or "")
        if m.prometheus is None:
            continue
        if projected is None:
            raise CatalogError(f"{where}: mysqld_exporter serves {m.source.key} nowhere (prometheus_families "
                               f"drops it): remove its prometheus spec")
        expected_labels = ((projected.label, projected.label_value),) if projected.label else ()
        declared = (m.prometheus.name, m.prometheus.type, m.prometheus.labels)
        expected = (projected.family, projected.type, expected_labels)
        if declared != expected or m.prometheus.scale != 1.0:
            raise CatalogError(f"{where}: prometheus spec {declared} differs from prometheus_families for "
                               f"{m.source.key}: {expected}")
    for family in table.values:
        if family.value not in catalog:
            raise CatalogError(f"prometheus_families.values: {family.name} reads unknown catalog value "
                               f"{family.value!r}")
    _validate_named_families(catalog)


def _validate_named_families(catalog: Catalog) -> None:
    """A named family never takes a catalog entry's name: a fixed one none at all, a generic
    one (``mysql_slave_status_{}``) none of another source's (its own parser leaves out the
    keys the catalog lists, as the userstat parsers leave out the columns they know)."""
    served = [(m.prometheus.name, m.source.kind, m.name) for m in catalog.metrics if m.prometheus is not None]
    for source, rules in catalog.families.named.items():
        for rule in rules:
            if rule.drop:
                continue
            prefix = rule.name.split("{}", 1)[0]
            for name, kind, entry in served:
                if name == rule.name or (rule.generic and name.startswith(prefix) and kind != source):
                    raise CatalogError(f"prometheus_families.named.{source}: {rule.name} would take "
                                       f"{name}, served by catalog entry {entry!r}")


def _label_set(raw: object, where: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(label, str) for label in raw):
        raise CatalogError(f"{where}: expected a list of label names, got {raw!r}")
    return frozenset(raw)


def parse_catalog(document: dict) -> Catalog:
    try:
        legacy_root = parse_oid(document["legacy_root"])
        tables = {}
        for raw in document.get("tables") or ():
            tables[raw["name"]] = Table(
                name=raw["name"],
                oid=parse_oid(raw["oid"]),
                index=tuple(raw["index"]),
                description=str(raw.get("description", "")).strip(),
                entry_name=raw.get("entry_name") or raw["name"].removesuffix("Table") + "Entry",
                integer_index=_label_set(raw.get("integer_index"), f"table {raw['name']} integer_index"),
            )
        catalog = Catalog(
            module=document["module"],
            enterprise_oid=parse_oid(document["enterprise_oid"]),
            legacy_root=legacy_root,
            new_root=parse_oid(document["new_root"]),
            metrics=tuple(_metric(raw, legacy_root) for raw in document["metrics"]),
            tables=tables,
            extra={k: v for k, v in document.items() if k not in {"metrics", "tables", "prometheus_families"}},
            families=parse_family_table(document.get("prometheus_families")),
        )
    except (KeyError, TypeError) as exc:
        raise CatalogError(f"catalog header: missing or malformed field {exc}") from exc
    except FamilyTableError as exc:
        raise CatalogError(str(exc)) from None
    validate(catalog)
    return catalog


def _yaml_document(text: str, path: Path) -> dict:
    import yaml  # only when there is no current compiled catalog

    # libyaml's loader reads the catalog in a tenth of the pure-Python time; PyYAML built
    # without libyaml falls back to the safe Python one.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        document = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: {describe_load_error(exc)}") from exc
    if not isinstance(document, dict):
        raise CatalogError(f"{path}: not a YAML mapping")
    return document


def _yaml_file_document(path: Path) -> dict:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise CatalogError(f"{path}: {describe_load_error(exc)}") from exc
    return _yaml_document(text, path)


def load_catalog_file(path: Path) -> Catalog:
    return parse_catalog(_yaml_file_document(path))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def compiled_catalog_text(yaml_path: Path = CATALOG_PATH) -> str:
    """The compiled form of the catalog YAML: its document as JSON, keyed by the YAML's digest."""
    text = yaml_path.read_text()
    document = _yaml_document(text, yaml_path)
    return json.dumps({"source_sha256": _digest(text), "document": document}, separators=(",", ":")) + "\n"


def _compiled_document(yaml_path: Path, compiled_path: Path) -> dict | None:
    """The compiled document when it was compiled from the YAML as it is now, else None."""
    try:
        compiled = json.loads(compiled_path.read_text())
        current = _digest(yaml_path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(compiled, dict) or compiled.get("source_sha256") != current:
        return None
    return compiled.get("document")


def _current_document(yaml_path: Path, compiled_path: Path) -> dict:
    """The compiled document when current, else the YAML's."""
    document = _compiled_document(yaml_path, compiled_path)
    return document if isinstance(document, dict) else _yaml_file_document(yaml_path)


def load_catalog_from(yaml_path: Path, compiled_path: Path) -> Catalog:
    return parse_catalog(_current_document(yaml_path, compiled_path))


@functools.lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The packaged catalog, loaded once per process (from its compiled form when current)."""
    return load_catalog_from(CATALOG_PATH, COMPILED_PATH)


# The header fields every catalog has; the others (notifications, groups, conformance) are SNMP's.
_CORE_HEADER = ("module", "enterprise_oid", "legacy_root", "new_root", "prometheus_families")


def without_snmp(document: dict) -> dict:
    """A catalog document as the exporter reads it: every entry, without its SNMP object, and no
    SNMP tables or notifications.  Names, sources, labels and Prometheus specs are untouched, so
    everything the exporter serves and every check on it stays as the full catalog's."""
    try:
        kept = {key: document[key] for key in _CORE_HEADER if key in document}
        kept["metrics"] = [{key: value for key, value in raw.items() if key != "snmp"}
                           for raw in document["metrics"]]
    except (KeyError, TypeError, AttributeError) as exc:
        raise CatalogError(f"catalog: missing or malformed field {exc}") from exc
    return kept


def load_exporter_catalog_from(yaml_path: Path, compiled_path: Path) -> Catalog:
    return parse_catalog(without_snmp(_current_document(yaml_path, compiled_path)))


@functools.lru_cache(maxsize=1)
def load_exporter_catalog() -> Catalog:
    """The packaged catalog without its SNMP side, loaded once per process: what the exporter
    keeps for its whole life (0.9 MB less resident than the full catalog with the default
    collectors, tests/bench/bench_exporter.py).  The AgentX subagent and the generators load
    the full one."""
    return load_exporter_catalog_from(CATALOG_PATH, COMPILED_PATH)
