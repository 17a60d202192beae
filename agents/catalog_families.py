"""mysqld_exporter's families, declared in the catalog header (``prometheus_families:``).

Two kinds of declaration, both projections over parsed values:

- ``rows``: the two "every row" pass-throughs (SHOW GLOBAL STATUS, SHOW GLOBAL
  VARIABLES).  Each printed name, lower-cased with every character Prometheus does
  not allow replaced by ``_``, goes to the first rule whose ``match`` fits: a grouped
  family (``Com_select`` -> ``mysql_global_status_commands_total{command="select"}``),
  ``drop`` (upstream serves it nowhere), or the generic rule whose ``name`` holds
  ``{}`` (the match's first group).  A name a grouped family carries is therefore
  never served again under its raw name, exactly as upstream.
- ``values``: a catalog value served under an upstream name as well
  (``innodb_row_queries_inside`` -> ``mysql_engine_innodb_queries_inside_innodb``).
- ``named``: values the server names itself, as parsers/ hand them over
  (``mysql_snmp.parsers.types.NamedRow``: a key, the labels of its row, a value): every replica
  status column, every INNODB_METRICS counter, every TokuDB status line, the processlist
  groups, USER/CLIENT_STATISTICS columns the catalog does not list.  The key is matched
  as the parser composed it (case kept); a rule may also carry the row's ``labels``,
  and type ``row`` takes the row's own kind (a counter gets ``_total``, anything else
  is a gauge).  ``{}`` is filled with the match's first group made Prometheus-safe.

The loader checks every catalog entry of a ``rows`` source against these rules: its
``prometheus`` spec must be what the rules make of its key, so the catalog and
``/metrics`` cannot disagree; and no ``named`` family may take a name a catalog entry
of another source serves (agents/catalog.py).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")
FAMILY_TYPES = ("counter", "gauge", "untyped")
# A named rule's type may also be the row's own: counter (name + "_total") or gauge.
ROW_TYPE = "row"
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


class FamilyTableError(ValueError):
    pass


@dataclass(frozen=True)
class RowRule:
    pattern: re.Pattern
    name: str  # wire name; "{}" stands for the match's first group
    type: str
    help: str
    label: str | None = None  # label whose value is the match's first group
    drop: bool = False
    labels: tuple[str, ...] = ()  # labels taken from the row (named rules only)

    @property
    def generic(self) -> bool:
        return "{}" in self.name


@dataclass(frozen=True)
class Projection:
    """Where one printed row goes on ``/metrics``."""

    family: str
    type: str
    help: str
    label: str | None
    label_value: str | None
    grouped: bool  # several rows share the family (it has a label, or is a fixed name)
    labels: tuple[str, ...] = ()  # labels taken from the row (named rules only)


@dataclass(frozen=True)
class ValueFamily:
    value: str  # catalog name
    name: str
    type: str
    help: str


MAX_ROW_SLOTS = 4096  # a server prints ~650 variables and ~600 status names


@dataclass(frozen=True, eq=False)  # hashed by identity: the projection cache keys on it
class FamilyTable:
    rows: dict[str, tuple[RowRule, ...]]
    values: tuple[ValueFamily, ...] = ()
    named: dict[str, tuple[RowRule, ...]] = field(default_factory=dict)
    # source -> printed name -> project()'s answer, for the names met so far (at most MAX_ROW_SLOTS a source)
    _row_slots: dict[str, dict[str, Projection | None]] = field(default_factory=dict, repr=False)

    def project(self, source: str, printed_name: str) -> Projection | None:
        """The family a row of ``source`` lands in; None when upstream serves it nowhere."""
        return _project(self, source, printed_name, False)

    def row_slots(self, source: str) -> dict[str, Projection | None]:
        """``project()``'s answers for ``source`` by printed name, as far as known: a plain dict lookup per
        row for the ~1,200 rows a scrape projects (``remember_slot`` adds to it)."""
        slots = self._row_slots.get(source)
        if slots is None:
            slots = self._row_slots.setdefault(source, {})
        return slots

    def remember_slot(self, source: str, printed_name: str) -> Projection | None:
        """``project()``, kept in ``row_slots(source)`` while that holds fewer than MAX_ROW_SLOTS names."""
        slot = self.project(source, printed_name)
        slots = self.row_slots(source)
        if len(slots) < MAX_ROW_SLOTS:
            slots[printed_name] = slot
        return slot

    def project_named(self, source: str, key: str) -> Projection | None:
        """The family a ``NamedRow`` of ``source`` lands in (key as its parser made it); None: nowhere."""
        return _project(self, source, key, True)

    def names(self) -> set[str]:
        """Fixed family names this table declares (the generic ``{}`` ones excluded)."""
        names = {rule.name for section in (self.rows, self.named) for rules in section.values() for rule in rules
                 if not rule.drop and not rule.generic}
        return names | {family.name for family in self.values}


def prometheus_name_part(name: str) -> str:
    return _INVALID_NAME_CHARS.sub("_", name).lower()


@functools.lru_cache(maxsize=16384)
def _project(table: FamilyTable, source: str, key: str, named: bool) -> Projection | None:
    # Cached: a server prints the same few hundred names every scrape.
    if not named:
        key = prometheus_name_part(key)
    for rule in (table.named if named else table.rows).get(source, ()):
        match = rule.pattern.match(key)
        if match is None:
            continue
        if rule.drop:
            return None
        group = match.group(1) if match.re.groups else None
        if rule.label:
            return Projection(rule.name, rule.type, rule.help, rule.label, group, True, rule.labels)
        if rule.generic:
            # Case kept: mysqld_exporter keeps it (buffer_LRU_batch_flush_total_pages).
            name = rule.name.replace("{}", _INVALID_NAME_CHARS.sub("_", group or ""))
            return Projection(name, rule.type, rule.help, None, None, bool(rule.labels), rule.labels)
        return Projection(rule.name, rule.type, rule.help, None, None, True, rule.labels)
    return None


def _rule(raw: dict, where: str, named: bool = False) -> RowRule:
    try:
        pattern = re.compile(raw["match"])
    except (KeyError, re.error) as exc:
        raise FamilyTableError(f"{where}: bad or missing match: {exc}") from exc
    if raw.get("drop"):
        return RowRule(pattern, "", "", "", drop=True)
    labels = raw.get("labels") or []
    if labels and not named:
        raise FamilyTableError(f"{where}: row labels exist for prometheus_families.named only")
    if not isinstance(labels, list) or not all(isinstance(l, str) and _LABEL_NAME.match(l) for l in labels):
        raise FamilyTableError(f"{where}: labels must be a list of label names, not {labels!r}")
    try:
        rule = RowRule(pattern, raw["name"], raw["type"], str(raw["help"]).strip(), raw.get("label"),
                       labels=tuple(labels))
    except KeyError as exc:
        raise FamilyTableError(f"{where}: missing field {exc}") from exc
    types = FAMILY_TYPES + (ROW_TYPE,) if named else FAMILY_TYPES
    if rule.type not in types:
        raise FamilyTableError(f"{where}: type {rule.type!r} not in {types}")
    if rule.label in rule.labels or len(set(rule.labels)) != len(rule.labels):
        raise FamilyTableError(f"{where}: a label is named twice in {rule.label!r}, {list(rule.labels)}")
    if (rule.label or "{}" in rule.name) and pattern.groups < 1:
        raise FamilyTableError(f"{where}: {rule.name} needs a group in {raw['match']!r}")
    if rule.label and "{}" in rule.name:
        raise FamilyTableError(f"{where}: a labelled family has a fixed name")
    return rule


def parse_family_table(document: dict | None) -> FamilyTable:
    document = document or {}
    rows = {}
    for source, rules in (document.get("rows") or {}).items():
        rows[source] = tuple(_rule(raw, f"prometheus_families.rows.{source}[{i}]") for i, raw in enumerate(rules))
    named = {}
    for source, rules in (document.get("named") or {}).items():
        if source in rows:
            raise FamilyTableError(f"prometheus_families.named.{source}: already an every-row source (rows)")
        named[source] = tuple(_rule(raw, f"prometheus_families.named.{source}[{i}]", named=True)
                              for i, raw in enumerate(rules))
    values = []
    for i, raw in enumerate(document.get("values") or ()):
        try:
            family = ValueFamily(raw["value"], raw["name"], raw["type"], str(raw["help"]).strip())
        except KeyError as exc:
            raise FamilyTableError(f"prometheus_families.values[{i}]: missing field {exc}") from exc
        if family.type not in FAMILY_TYPES:
            raise FamilyTableError(f"prometheus_families.values[{i}]: type {family.type!r} not in {FAMILY_TYPES}")
        values.append(family)
    table = FamilyTable(rows, tuple(values), named)
    _refuse_duplicate_names(table)
    return table


def _refuse_duplicate_names(table: FamilyTable) -> None:
    seen: set[str] = set()
    for section, rules_by_source in (("rows", table.rows), ("named", table.named)):
        for source, rules in rules_by_source.items():
            for rule in rules:
                if rule.drop or rule.generic:
                    continue
                if rule.name in seen:
                    raise FamilyTableError(f"prometheus_families.{section}.{source}: {rule.name} declared twice")
                seen.add(rule.name)
