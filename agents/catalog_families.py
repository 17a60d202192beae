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

The loader checks every catalog entry of a ``rows`` source against these rules: its
``prometheus`` spec must be what the rules make of its key, so the catalog and
``/metrics`` cannot disagree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")
FAMILY_TYPES = ("counter", "gauge", "untyped")


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


@dataclass(frozen=True)
class Projection:
    """Where one printed row goes on ``/metrics``."""

    family: str
    type: str
    help: str
    label: str | None
    label_value: str | None
    grouped: bool  # several rows share the family (it has a label, or is a fixed name)


@dataclass(frozen=True)
class ValueFamily:
    value: str  # catalog name
    name: str
    type: str
    help: str


@dataclass(frozen=True, eq=False)  # hashed by identity: the projection cache keys on it
class FamilyTable:
    rows: dict[str, tuple[RowRule, ...]]
    values: tuple[ValueFamily, ...] = ()

    def project(self, source: str, printed_name: str) -> Projection | None:
        """The family a row of ``source`` lands in; None when upstream serves it nowhere."""
        return _project(self, source, printed_name)

    def names(self) -> set[str]:
        """Fixed family names this table declares (the generic ``{}`` ones excluded)."""
        names = {rule.name for rules in self.rows.values() for rule in rules if not rule.drop and "{}" not in rule.name}
        return names | {family.name for family in self.values}


def prometheus_name_part(name: str) -> str:
    return _INVALID_NAME_CHARS.sub("_", name).lower()


@functools.lru_cache(maxsize=16384)
def _project(table: FamilyTable, source: str, printed_name: str) -> Projection | None:
    # Cached: a server prints the same few hundred names every scrape.
    key = prometheus_name_part(printed_name)
    for rule in table.rows.get(source, ()):
        match = rule.pattern.match(key)
        if match is None:
            continue
        if rule.drop:
            return None
        group = match.group(1) if match.re.groups else None
        if rule.label:
            return Projection(rule.name, rule.type, rule.help, rule.label, group, True)
        if "{}" in rule.name:
            return Projection(rule.name.replace("{}", group or ""), rule.type, rule.help, None, None, False)
        return Projection(rule.name, rule.type, rule.help, None, None, True)
    return None


def _rule(raw: dict, where: str) -> RowRule:
    try:
        pattern = re.compile(raw["match"])
    except (KeyError, re.error) as exc:
        raise FamilyTableError(f"{where}: bad or missing match: {exc}") from exc
    if raw.get("drop"):
        return RowRule(pattern, "", "", "", drop=True)
    try:
        rule = RowRule(pattern, raw["name"], raw["type"], str(raw["help"]).strip(), raw.get("label"))
    except KeyError as exc:
        raise FamilyTableError(f"{where}: missing field {exc}") from exc
    if rule.type not in FAMILY_TYPES:
        raise FamilyTableError(f"{where}: type {rule.type!r} not in {FAMILY_TYPES}")
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
    values = []
    for i, raw in enumerate(document.get("values") or ()):
        try:
            family = ValueFamily(raw["value"], raw["name"], raw["type"], str(raw["help"]).strip())
        except KeyError as exc:
            raise FamilyTableError(f"prometheus_families.values[{i}]: missing field {exc}") from exc
        if family.type not in FAMILY_TYPES:
            raise FamilyTableError(f"prometheus_families.values[{i}]: type {family.type!r} not in {FAMILY_TYPES}")
        values.append(family)
    return FamilyTable(rows, tuple(values))
