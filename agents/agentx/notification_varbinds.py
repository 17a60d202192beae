"""The varbinds of a catalog notification, read from a snapshot.

A notification's ``objects`` are catalog names: a scalar is sent at its instance ``.0``, a
table column at the row the notification is about.  An object with no value in the snapshot
is left out rather than sent as a made-up 0.
"""

from __future__ import annotations

from .codec import VarBind
from .tableindex import encode_index
from .view import wire_value
from ..catalog import Catalog, parse_oid
from ..snapshot import Labels, Snapshot


def notification_definition(catalog: Catalog, name: str) -> dict:
    definition = next((n for n in catalog.extra.get("notifications") or () if n["name"] == name), None)
    if definition is None:
        raise KeyError(f"notification {name} is not in the catalog")
    return definition


def notification_message(catalog: Catalog, name: str, snapshot: Snapshot,
                         row: Labels | None = None) -> tuple[tuple[int, ...], list[VarBind]]:
    """(trap OID, varbinds) of notification ``name``; ``row`` picks the table row of column objects."""
    definition = notification_definition(catalog, name)
    varbinds = []
    for object_name in definition.get("objects") or ():
        metric = catalog.by_name(object_name)
        snmp = metric.snmp
        if snmp.table:
            table = catalog.tables[snmp.table]
            value = (snapshot.series.get(object_name) or {}).get(row)
            oid = table.oid + (1, snmp.column) + encode_index(table, row)
        else:
            value = snapshot.values.get(object_name)
            oid = snmp.oid + (0,)
        wire = wire_value(snmp.type, value, metric.unit) if value is not None else None
        if wire is not None:
            varbinds.append(VarBind(wire[0], oid, wire[1]))
    return parse_oid(definition["oid"]), varbinds
