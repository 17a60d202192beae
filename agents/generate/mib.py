"""MYSQL-SERVER-MIB (SMIv2) generated from the catalog: mibs/MYSQL-SERVER-MIB.txt.

Layout (OIDs from the catalog): the original's 160 scalars under the legacy root, the new
tree's groups, scalars and conceptual tables under the new root, notifications under
new_root.0, and compliance/groups under conformance_oid.  Every object lands in exactly one
OBJECT-GROUP so that ``smilint -l 6`` has nothing to say.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from ..agentx.tableindex import MAX_OID_LENGTH
from ..catalog import Catalog, Metric, Table, format_oid

MIB_PATH = "mibs/MYSQL-SERVER-MIB.txt"

# The module identity keeps the original's name and OID (enterprises 20267 200).
MODULE_IDENTITY = "mySQL"
# enterprises.20267, the original's organisation (Days of Wonder), named so that no node is implicit.
ENTERPRISE_NODE = "daysOfWonder"
# The original's node for its 160 objects was "myStatus"; that name now belongs to the new
# tree's SHOW GLOBAL STATUS group, so the legacy node is named for what it is.
LEGACY_NODE = "myLegacyStatus"
NEW_ROOT_NODE = "myObjects"
NOTIFICATIONS_NODE = "myNotifications"
CONFORMANCE_NODE = "myConformance"
# MIB revisions, newest first; add one here when the MIB changes in a way a manager should see.
REVISIONS = (
    ("202612010000Z", "Notifications mysqlDown, mysqlUp, replicationStopped and replicationStarted."),
    ("202611290000Z", "Generated from the mysql-snmp catalog: the original objects unchanged "
                      "(myInnoDBSemWaitTime spelled right), a new tree for everything else, "
                      "conceptual tables, leak notifications and conformance statements."),
    ("200807140000Z", "The original version of this MIB (mysql-snmp 1.x)."),
)
# Index objects are not-accessible columns (RFC 2578 7.7) and need an OID of their own; the
# catalog numbers data columns from 1 and only ever appends, so index columns sit far above.
INDEX_COLUMN_BASE = 100
MAX_STRING_INDEX = 100
SMI_IMPORTS = {
    "Counter32": "SNMPv2-SMI", "Counter64": "SNMPv2-SMI", "Gauge32": "SNMPv2-SMI",
    "Integer32": "SNMPv2-SMI", "Unsigned32": "SNMPv2-SMI", "TimeTicks": "SNMPv2-SMI",
    "DisplayString": "SNMPv2-TC",
}
GAUGE64_TC = "CounterBasedGauge64"


class MibError(ValueError):
    pass


def _description(text: str, indent: str = "        ") -> str:
    # SMI strings cannot contain a double quote.
    text = " ".join(text.replace('"', "'").split())
    lines = textwrap.wrap(text, width=68) or [""]
    quoted = ['"' + lines[0]] + [" " + line for line in lines[1:]]
    return "\n".join(indent + line for line in quoted) + '"'


def _camel(words: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\W]+", words) if part)


@dataclass
class _Module:
    """Collects definitions and checks that every descriptor is defined once."""

    nodes: dict[tuple[int, ...], str] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    imports: set[str] = field(default_factory=set)
    needs_gauge64: bool = False
    chunks: list[str] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)  # group node -> objects

    def claim(self, name: str) -> str:
        if name in self.names:
            raise MibError(f"descriptor {name} defined twice in the MIB")
        self.names.add(name)
        return name

    def parent_of(self, oid: tuple[int, ...]) -> str:
        try:
            return f"{{ {self.nodes[oid[:-1]]} {oid[-1]} }}"
        except KeyError:
            raise MibError(f"no named node for {format_oid(oid[:-1])} (parent of {format_oid(oid)})") from None

    def node(self, name: str, oid: tuple[int, ...], comment: str = "") -> None:
        self.claim(name)
        prefix = f"-- {comment}\n" if comment else ""
        self.chunks.append(f"{prefix}{name} OBJECT IDENTIFIER ::= {self.parent_of(oid)}")
        self.nodes[oid] = name

    def syntax(self, smi_type: str, kind: str) -> str:
        if smi_type == "Counter64" and kind == "gauge":
            self.needs_gauge64 = True
            return GAUGE64_TC
        if smi_type == "INTEGER":
            smi_type = "Integer32"  # same encoding; SMIv2 wants a range or enumeration on INTEGER
        if smi_type in SMI_IMPORTS:
            self.imports.add(smi_type)
        return smi_type

    def object_type(self, name: str, oid: tuple[int, ...], syntax: str, access: str, description: str,
                    units: str = "", extra: str = "") -> None:
        self.claim(name)
        units_clause = f'    UNITS       "{units}"\n' if units else ""
        self.chunks.append(
            f"{name} OBJECT-TYPE\n"
            f"    SYNTAX      {syntax}\n"
            f"{units_clause}"
            f"    MAX-ACCESS  {access}\n"
            f"    STATUS      current\n"
            f"    DESCRIPTION\n{_description(description)}\n"
            f"{extra}"
            f"    ::= {self.parent_of(oid)}"
        )
        self.nodes[oid] = name


def _scalar(module: _Module, name: str, oid: tuple[int, ...], smi_type: str, metric: Metric, group: str,
            legacy: bool = False) -> None:
    # Legacy objects keep the original's declared syntax; the gauge convention is for the new tree.
    syntax = module.syntax(smi_type, "legacy" if legacy else metric.kind)
    module.object_type(name, oid, syntax, "read-only", metric.help, metric.unit)
    module.groups.setdefault(group, []).append(name)


def _index_objects(table: Table) -> list[tuple[str, str, str]]:
    """(descriptor, label, syntax) of each index column, at INDEX_COLUMN_BASE + 1..k."""
    prefix = table.entry_name.removesuffix("Entry")
    strings = [label for label in table.index if label not in table.integer_index]
    integers = len(table.index) - len(strings)
    # RFC 2578 7.7: the whole instance OID within 128 sub-identifiers; each string index
    # costs its length plus one.
    room = MAX_OID_LENGTH - (len(table.oid) + 2) - integers
    size = min(MAX_STRING_INDEX, room // max(1, len(strings)) - 1)
    out = []
    for label in table.index:
        name = prefix + ("Index" if len(table.index) == 1 else _camel(label))
        syntax = "Integer32 (0..2147483647)" if label in table.integer_index else f"OCTET STRING (SIZE (0..{size}))"
        out.append((name, label, syntax))
    return out


def _table(module: _Module, catalog: Catalog, table: Table) -> None:
    columns = catalog.table_columns(table.name)
    if not columns:
        return
    indexes = _index_objects(table)
    for metric in columns:
        if metric.snmp.column > INDEX_COLUMN_BASE:
            raise MibError(f"{metric.name}: column {metric.snmp.column} of {table.name} is in the range "
                           f"reserved for index objects (above {INDEX_COLUMN_BASE})")
    sequence_type = table.entry_name[:1].upper() + table.entry_name[1:]
    entry_oid = table.oid + (1,)
    module.object_type(table.name, table.oid, f"SEQUENCE OF {sequence_type}", "not-accessible", table.description)
    index_clause = "    INDEX       { " + ", ".join(name for name, _, _ in indexes) + " }\n"
    module.object_type(table.entry_name, entry_oid, sequence_type, "not-accessible",
                       f"One row of {table.name}.", extra=index_clause)
    # SEQUENCE members in column order: data columns, then the index columns above them.
    members = [(m.snmp.name, module.syntax(m.snmp.type, m.kind)) for m in columns]
    members += [(name, syntax.split(" (")[0]) for name, _, syntax in indexes]
    module.claim(sequence_type)
    width = max(len(n) for n, _ in members)
    body = ",\n".join(f"    {n.ljust(width)}  {s}" for n, s in members)
    module.chunks.append(f"{sequence_type} ::= SEQUENCE {{\n{body}\n}}")
    for position, (name, label, syntax) in enumerate(indexes, start=INDEX_COLUMN_BASE + 1):
        encoding = ("the number itself" if label in table.integer_index
                    else "its length then one sub-identifier per byte (RFC 2578 7.7)")
        module.object_type(name, entry_oid + (position,), syntax, "not-accessible",
                           f"The {label} of this row; in the instance OID as {encoding}.")
    group = f"{table.name.removesuffix('Table')}Group"
    for metric in columns:
        _scalar(module, metric.snmp.name, entry_oid + (metric.snmp.column,), metric.snmp.type, metric, group)


def _conformance(module: _Module, notifications: list[dict], conformance: tuple[int, ...]) -> None:
    module.node(CONFORMANCE_NODE, conformance, "Conformance")
    module.node("myCompliances", conformance + (1,))
    module.node("myGroups", conformance + (2,))
    group_names = []
    for position, (group, objects) in enumerate(sorted(module.groups.items()), start=1):
        module.claim(group)
        group_names.append(group)
        what = "the original mysql-snmp objects" if group == "myLegacyGroup" else f"objects of {group.removesuffix('Group')}"
        members = ",\n".join(f"        {o}" for o in objects)
        module.chunks.append(
            f"{group} OBJECT-GROUP\n    OBJECTS {{\n{members}\n    }}\n    STATUS      current\n"
            f"    DESCRIPTION\n{_description(f'The {what}.')}\n    ::= {{ myGroups {position} }}"
        )
    if notifications:
        module.claim("myNotificationGroup")
        members = ", ".join(n["name"] for n in notifications)
        module.chunks.append(
            f"myNotificationGroup NOTIFICATION-GROUP\n    NOTIFICATIONS {{ {members} }}\n    STATUS      current\n"
            f"    DESCRIPTION\n{_description('Notifications of the agent: leaks, server reachability, replication threads.')}\n"
            f"    ::= {{ myGroups {len(group_names) + 1} }}"
        )
    mandatory = [g for g in group_names if g in ("myAgentGroup", "myLegacyGroup")]
    optional = [g for g in group_names if g not in mandatory] + (["myNotificationGroup"] if notifications else [])
    clauses = "".join(
        f"    GROUP       {g}\n    DESCRIPTION\n{_description('Implemented when the server and the agent configuration provide these values.')}\n"
        for g in optional
    )
    module.claim("myCompliance")
    module.chunks.append(
        "myCompliance MODULE-COMPLIANCE\n    STATUS      current\n    DESCRIPTION\n"
        f"{_description('An agent serving MySQL, MariaDB or Percona Server through this MIB.')}\n"
        f"    MODULE      -- this module\n    MANDATORY-GROUPS {{ {', '.join(mandatory)} }}\n{clauses}"
        "    ::= { myCompliances 1 }"
    )


def render(catalog: Catalog) -> str:
    module = _Module()
    enterprise = catalog.enterprise_oid
    mib_root = catalog.legacy_root[:-1]
    module.nodes[enterprise[:-1]] = "enterprises"
    if mib_root[:-1] != enterprise:
        raise MibError(f"legacy root {format_oid(catalog.legacy_root)} is not enterprise.N.1")
    module.nodes[mib_root] = MODULE_IDENTITY
    module.claim(MODULE_IDENTITY)

    module.node(LEGACY_NODE, catalog.legacy_root, "The objects of the original mysql-snmp MIB, unchanged.")
    for metric in catalog.legacy():
        legacy = metric.snmp.legacy
        _scalar(module, legacy.name, legacy.oid, legacy.type, metric, "myLegacyGroup", legacy=True)

    module.node(NEW_ROOT_NODE, catalog.new_root, "Everything else the catalog exports.")
    notifications = list(catalog.extra.get("notifications") or ())
    if notifications:
        module.node(NOTIFICATIONS_NODE, catalog.new_root + (0,))
    for group in sorted(catalog.extra.get("groups") or (), key=lambda g: _oid(g["oid"])):
        module.node(group["name"], _oid(group["oid"]), group.get("description", ""))
    for metric in catalog:
        snmp = metric.snmp
        if snmp and snmp.oid and not snmp.table:
            parent = module.nodes.get(snmp.oid[:-1])
            if parent is None:
                raise MibError(f"{metric.name}: no group declared for {format_oid(snmp.oid[:-1])}")
            _scalar(module, snmp.name, snmp.oid, snmp.type, metric, f"{parent}Group")
    for table in sorted(catalog.tables.values(), key=lambda t: t.oid):
        _table(module, catalog, table)
    for notification in notifications:
        objects = ", ".join(_snmp_name(catalog, name) for name in notification.get("objects") or ())
        module.claim(notification["name"])
        objects_clause = f"    OBJECTS     {{ {objects} }}\n" if objects else ""
        module.chunks.append(
            f"{notification['name']} NOTIFICATION-TYPE\n{objects_clause}    STATUS      current\n"
            f"    DESCRIPTION\n{_description(notification['description'])}\n"
            f"    ::= {module.parent_of(_oid(notification['oid']))}"
        )
    conformance = _oid(catalog.extra.get("conformance_oid") or format_oid(mib_root + (4,)))
    _conformance(module, notifications, conformance)
    return _assemble(catalog, module)


def _snmp_name(catalog: Catalog, name: str) -> str:
    """Notification objects may be named by catalog name or by SNMP descriptor."""
    if name in catalog and catalog.by_name(name).snmp:
        return catalog.by_name(name).snmp.name
    return name


def _oid(text) -> tuple[int, ...]:
    return tuple(int(p) for p in str(text).split("."))


def _assemble(catalog: Catalog, module: _Module) -> str:
    by_source: dict[str, list[str]] = {
        "SNMPv2-SMI": ["MODULE-IDENTITY", "OBJECT-TYPE", "enterprises"],
        "SNMPv2-TC": [],
        "SNMPv2-CONF": ["MODULE-COMPLIANCE", "OBJECT-GROUP"],
    }
    if catalog.extra.get("notifications"):
        by_source["SNMPv2-SMI"].append("NOTIFICATION-TYPE")
        by_source["SNMPv2-CONF"].append("NOTIFICATION-GROUP")
    if module.needs_gauge64:
        by_source["SNMPv2-TC"].append("TEXTUAL-CONVENTION")
        module.imports.add("Counter64")
    for name in sorted(module.imports):
        by_source[SMI_IMPORTS[name]].append(name)
    imports = "\n".join(
        f"    {', '.join(names)}\n        FROM {source}" for source, names in by_source.items() if names
    )
    revisions = "".join(
        f'    REVISION    "{date}"\n    DESCRIPTION\n{_description(text)}\n' for date, text in REVISIONS
    )
    mib_root = catalog.legacy_root[:-1]
    header = (
        f"-- {catalog.module}: MySQL, MariaDB and Percona Server monitored through Net-SNMP (mysql-snmp).\n"
        "-- GENERATED from agents/catalog.yaml by agents/generate/mib.py: edit the catalog, then run\n"
        "-- 'mysql-snmp generate'.  A test fails when this file differs from what the catalog generates.\n\n"
        f"{catalog.module} DEFINITIONS ::= BEGIN\n\nIMPORTS\n{imports};\n\n"
        f"{MODULE_IDENTITY} MODULE-IDENTITY\n"
        f'    LAST-UPDATED "{REVISIONS[0][0]}"\n'
        '    ORGANIZATION "mysql-snmp"\n'
        '    CONTACT-INFO\n        "mysql-snmp maintainers, https://github.com/masterzen/mysql-snmp"\n'
        "    DESCRIPTION\n"
        f"{_description('MySQL, MariaDB and Percona Server status, variables, InnoDB internals, replication, host and agent health, as served by the mysql-snmp AgentX subagent.')}\n"
        f"{revisions}"
        f"    ::= {{ {ENTERPRISE_NODE} {' '.join(str(p) for p in mib_root[len(catalog.enterprise_oid):])} }}\n\n"
        f"{ENTERPRISE_NODE} OBJECT IDENTIFIER ::= {{ enterprises {catalog.enterprise_oid[-1]} }}\n"
    )
    tc = ""
    if module.needs_gauge64:
        tc = (
            f'\n{GAUGE64_TC} ::= TEXTUAL-CONVENTION\n    DISPLAY-HINT "d"\n    STATUS      current\n    DESCRIPTION\n'
            f"{_description('A gauge that can exceed 2^32-1 (sizes, memory), carried as a Counter64 as RFC 2856 does: the value goes up and down and is not a counter. Same role as the original MIB MYSQLUnsigned64.')}\n"
            "    SYNTAX      Counter64\n"
        )
    return header + tc + "\n" + "\n\n".join(module.chunks) + "\n\nEND\n"


def outputs(catalog: Catalog) -> dict[str, str]:
    return {MIB_PATH: render(catalog)}
