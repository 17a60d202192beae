"""The catalog as an OID tree, filled from one Snapshot and answered from memory.

``TreeLayout`` is what the catalog declares (fixed for the life of the process): the legacy
scalars 1.3.6.1.4.1.20267.200.1.N.0, the new tree's scalars and table columns.
``build_view(layout, snapshot)`` turns one snapshot into a ``MibView``: a sorted list of
instance OIDs searched with bisect, so a request never waits for MySQL.

A value the snapshot lacks is simply not in the view: Get answers noSuchInstance, GetNext
skips it.  Nothing is ever invented (RULES: never a made-up 0).
"""

from __future__ import annotations

import bisect
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .codec import Oid, SearchRange, VarBind, VarType
from .tableindex import UnindexableRow, encode_index, row_name
from ..catalog import ROW_NAME_SOURCE, Catalog, Metric, Table
from ..bounds.served_text import snmp_string
from ..snapshot import Labels, Snapshot, Value

log = logging.getLogger(__name__)

UINT32_MAX = 2**32 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# SMI type name (catalog) -> wire type.
WIRE_TYPES = {
    "Counter32": VarType.COUNTER32,
    "Counter64": VarType.COUNTER64,
    "Gauge32": VarType.GAUGE32,
    "Unsigned32": VarType.GAUGE32,  # RFC 2578 7.1.11: same encoding as Gauge32
    "Integer32": VarType.INTEGER,
    "INTEGER": VarType.INTEGER,
    "TimeTicks": VarType.TIME_TICKS,
    "OCTET STRING": VarType.OCTET_STRING,
    "DisplayString": VarType.OCTET_STRING,
}


def _as_number(value: Value) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return int(number) if math.isfinite(number) else None
    return None


def wire_value(smi_type: str, value: Value, unit: str = "") -> tuple[VarType, int | bytes] | None:
    """The value as SNMP carries it, or None when the type cannot express it.

    Counters wrap (RFC 2578 7.1.6/7.1.10: only deltas mean anything), gauges stick at their
    maximum (7.1.7), integers clamp to Integer32.  A negative counter or gauge is a server or
    parser bug, not a number to wrap, so it is left out.
    """
    wire = WIRE_TYPES[smi_type]
    if value is None:
        return None
    if wire == VarType.OCTET_STRING:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return wire, snmp_string(str(value))
    number = _as_number(value)
    if number is None:
        return None
    if wire == VarType.TIME_TICKS and unit == "seconds":
        number = int(float(value) * 100)  # TimeTicks are hundredths of a second
    if wire == VarType.INTEGER:
        return wire, min(max(number, INT32_MIN), INT32_MAX)
    if number < 0:
        return None
    if wire == VarType.COUNTER32:
        return wire, number % 2**32
    if wire == VarType.COUNTER64:
        return wire, number % 2**64
    return wire, min(number, UINT32_MAX)


@dataclass(frozen=True)
class ScalarObject:
    oid: Oid  # the object; its one instance is oid + (0,)
    metric: Metric
    smi_type: str
    # Catalog names tried in order: a legacy object whose own value is absent on this server
    # serves the catalog's fallback (e.g. myTotalMemAlloc from "Total large memory allocated").
    sources: tuple[str, ...] = ()
    # A scalar that serves one row of the labelled metric ``row_of`` (catalog ``source.row``),
    # the same value as the table's row, read from it: the first of ``rows`` that the table
    # has (any of ``row_columns`` holds it), so the state and the rate of one object group
    # always describe the same row even while the rate is absent.
    row_of: str = ""
    rows: tuple[Labels, ...] = ()
    row_columns: tuple[str, ...] = ()

    @property
    def value_names(self) -> tuple[str, ...]:
        return self.sources or (self.metric.name,)

    def value(self, snapshot: Snapshot) -> Value:
        if self.row_of:
            labels = next((labels for labels in self.rows
                           if any(labels in snapshot.series.get(name, {}) for name in self.row_columns)), None)
            return None if labels is None else snapshot.series.get(self.row_of, {}).get(labels)
        name = next((name for name in self.value_names if name in snapshot.values), None)
        return None if name is None else snapshot.values[name]


@dataclass(frozen=True)
class ColumnObject:
    oid: Oid  # table entry + column number; instances are oid + row index
    metric: Metric
    table: Table

    @property
    def names_rows(self) -> bool:
        """The column serves each row's index as text (no source fills it)."""
        return self.metric.source.kind == ROW_NAME_SOURCE


@dataclass
class TreeLayout:
    """Which objects exist, from the catalog; the root of the legacy tree can be moved (--oid)."""

    scalars: list[ScalarObject] = field(default_factory=list)
    columns: list[ColumnObject] = field(default_factory=list)

    @classmethod
    def from_catalog(cls, catalog: Catalog, legacy_root: Oid | None = None) -> "TreeLayout":
        legacy_root = tuple(legacy_root) if legacy_root else catalog.legacy_root
        layout = cls()
        for metric in catalog:
            snmp = metric.snmp
            if snmp is None:
                continue
            if snmp.legacy:
                layout.scalars.append(ScalarObject(legacy_root + (snmp.legacy.n,), metric, snmp.legacy.type,
                                                   (metric.name, *snmp.legacy.fallback)))
            if snmp.table:
                table = catalog.tables[snmp.table]
                layout.columns.append(ColumnObject(table.oid + (1, snmp.column), metric, table))
            elif metric.source.row:
                layout.scalars.append(_row_scalar(catalog, metric))
            elif snmp.oid:
                layout.scalars.append(ScalarObject(snmp.oid, metric, snmp.type))
        return layout

    @property
    def object_oids(self) -> list[Oid]:
        return sorted([s.oid for s in self.scalars] + [c.oid for c in self.columns])


def _row_scalar(catalog: Catalog, metric: Metric) -> ScalarObject:
    row_of = catalog.row_metric(metric)
    table = row_of.snmp.table if row_of.snmp else None
    columns = tuple(m.name for m in catalog.table_columns(table)) if table else (row_of.name,)
    return ScalarObject(metric.snmp.oid, metric, metric.snmp.type, row_of=row_of.name, rows=metric.source.row,
                        row_columns=columns)


# The age of the data is computed when asked, so a collection that hangs shows up as a
# growing age rather than a frozen one.  The other agent status values (MySQL up, last
# error, counts) are in the snapshot: the Collector puts them there.
LiveCompute = Callable[[Snapshot, float], Value]
LIVE_VALUES: dict[str, LiveCompute] = {
    "agent_data_age_seconds": lambda snapshot, now: snapshot.data_age_seconds(now),
}


@dataclass(frozen=True)
class LiveValue:
    """An instance whose value is computed at request time (the age of the data)."""

    compute: Callable[[], Value]
    smi_type: str
    unit: str

    def varbind(self, oid: Oid) -> VarBind:
        converted = wire_value(self.smi_type, self.compute(), self.unit)
        if converted is None:
            return VarBind(VarType.NO_SUCH_INSTANCE, oid)
        return VarBind(converted[0], oid, converted[1])


class MibView:
    """Instances sorted by OID: Get is a dict lookup, GetNext one bisect."""

    def __init__(self, instances: Iterable[tuple[Oid, VarBind | LiveValue]], object_oids: Iterable[Oid]):
        pairs = sorted(instances, key=lambda pair: pair[0])
        self._oids: list[Oid] = [oid for oid, _ in pairs]
        self._entries: list[VarBind | LiveValue] = [entry for _, entry in pairs]
        self._position = {oid: i for i, oid in enumerate(self._oids)}
        if len(self._position) != len(self._oids):
            raise ValueError("two instances share one OID")
        self._objects = sorted(object_oids)

    def __len__(self) -> int:
        return len(self._oids)

    @property
    def oids(self) -> list[Oid]:
        return list(self._oids)

    def fixed_varbinds(self) -> list[tuple[Oid, VarBind | None]]:
        """Every instance in OID order with its varbind, None where the value is computed
        when asked (so it cannot be prepared in advance)."""
        return [(oid, None if isinstance(entry, LiveValue) else entry)
                for oid, entry in zip(self._oids, self._entries)]

    def _varbind(self, i: int) -> VarBind:
        entry = self._entries[i]
        return entry.varbind(self._oids[i]) if isinstance(entry, LiveValue) else entry

    def _is_instance_of_known_object(self, oid: Oid) -> bool:
        # Objects never nest, so the one that could own ``oid`` is the greatest object <= oid.
        i = bisect.bisect_right(self._objects, oid) - 1
        if i < 0:
            return False
        candidate = self._objects[i]
        return len(candidate) < len(oid) and oid[: len(candidate)] == candidate

    def get(self, oid: Oid) -> VarBind:
        """RFC 2741 7.2.3.1: noSuchObject when no object owns the OID, noSuchInstance otherwise."""
        i = self._position.get(oid)
        if i is not None:
            return self._varbind(i)
        if self._is_instance_of_known_object(oid):
            return VarBind(VarType.NO_SUCH_INSTANCE, oid)
        return VarBind(VarType.NO_SUCH_OBJECT, oid)

    def get_next(self, search: SearchRange) -> VarBind:
        """RFC 2741 7.2.3.2: the first instance after start (or at it, with include) and before end."""
        if search.include:
            i = bisect.bisect_left(self._oids, search.start)
        else:
            i = bisect.bisect_right(self._oids, search.start)
        if i < len(self._oids) and (not search.end or self._oids[i] < search.end):
            return self._varbind(i)
        return VarBind(VarType.END_OF_MIB_VIEW, search.start)


def _scalar_instance(obj: ScalarObject, snapshot: Snapshot) -> VarBind | LiveValue | None:
    metric = obj.metric
    oid = obj.oid + (0,)
    compute = LIVE_VALUES.get(metric.name)
    if compute is not None:
        return LiveValue(lambda: compute(snapshot, time.time()), obj.smi_type, metric.unit)
    value = obj.value(snapshot)
    if value is None:
        return None
    converted = wire_value(obj.smi_type, value, metric.unit)
    if converted is None:
        log.debug("%s = %r cannot be served as %s", metric.name, value, obj.smi_type)
        return None
    return VarBind(converted[0], oid, converted[1])


def _column_values(layout: TreeLayout, col: ColumnObject, snapshot: Snapshot) -> dict[Labels, Value]:
    if not col.names_rows:
        return snapshot.series.get(col.metric.name, {})
    # Every row some other column of the table has, named by its index.
    rows: dict[Labels, Value] = {}
    for other in layout.columns:
        if other.table is col.table and not other.names_rows:
            for labels in snapshot.series.get(other.metric.name, {}):
                rows.setdefault(labels, row_name(col.table, labels))
    return rows


def build_view(layout: TreeLayout, snapshot: Snapshot) -> MibView:
    instances: list[tuple[Oid, VarBind | LiveValue]] = []
    for obj in layout.scalars:
        entry = _scalar_instance(obj, snapshot)
        if entry is not None:
            instances.append((obj.oid + (0,), entry))
    for col in layout.columns:
        metric = col.metric
        for labels, value in _column_values(layout, col, snapshot).items():
            converted = wire_value(metric.snmp.type, value, metric.unit)
            if converted is None:
                continue
            try:
                oid = col.oid + encode_index(col.table, labels)
            except UnindexableRow as exc:
                log.debug("%s: %s", metric.name, exc)
                continue
            if len(oid) > 128:
                log.debug("%s: row %r makes an OID longer than 128 sub-identifiers", metric.name, labels)
                continue
            instances.append((oid, VarBind(converted[0], oid, converted[1])))
    return MibView(instances, layout.object_oids)
