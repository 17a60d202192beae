"""RRD files as OpenNMS's SNMP collector writes them, filled from the agent's SNMP view (tests).

OpenNMS keeps one RRD file per collected alias, holding one data source of that name (COUNTER
for counter types, GAUGE otherwise; String objects go to strings.properties, not RRD):
node-level objects in ``<repository>/<node>/``, a table row in
``<repository>/<node>/<resource type>/<instance>/`` where the instance is the row's index OID
(IndexStorageStrategy) or the cleaned value of a sibling text column
(SiblingColumnStorageStrategy).  The step here is 1 s (OpenNMS's default is 300 s) so a few real
collections a second apart fill the files.  All rrdtool commands go through one ``rrdtool -``
process (its pipe mode).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from mysql_snmp.agents.agentx.codec import VarType
from mysql_snmp.agents.agentx.view import MibView
from mysql_snmp.agents.generate.opennms_collection import NAME_COLUMNS, Collected

STEP = 1
HEARTBEAT = 10
ABSENT = (VarType.NO_SUCH_OBJECT, VarType.NO_SUCH_INSTANCE, VarType.END_OF_MIB_VIEW)


def numeric(varbind) -> float | int | None:
    """The number OpenNMS stores for a collected value (text is parsed, as for OctetString)."""
    if varbind.type in ABSENT:
        return None
    if isinstance(varbind.value, bytes):
        try:
            return float(varbind.value.decode())
        except ValueError:
            return None
    return varbind.value


def sibling_directory(text: str) -> str:
    # replace-all s/[^A-Za-z0-9_.-]/_/ of the generated resource type
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


class RrdRepository:
    def __init__(self, root: Path, node: str, collected: list[Collected], catalog) -> None:
        self.node_dir = root / node
        self.collected = [c for c in collected if c.rrd_type is not None]
        self.catalog = catalog
        self.created: set[Path] = set()
        self.filled: set[Path] = set()  # files that received at least one value
        self.rrdtool = subprocess.Popen(["rrdtool", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)

    def _command(self, line: str) -> None:
        self.rrdtool.stdin.write(line + "\n")
        self.rrdtool.stdin.flush()
        answer = []
        while True:
            out = self.rrdtool.stdout.readline()
            if not out:
                raise RuntimeError(f"rrdtool ended on: {line}")
            if out.startswith("OK"):
                return
            if out.startswith("ERROR"):
                raise RuntimeError(f"{line}: {out.strip()} {''.join(answer)}")
            answer.append(out)

    def _file(self, directory: Path, column: Collected, start: int) -> Path:
        path = directory / f"{column.alias}.rrd"
        if path not in self.created:
            directory.mkdir(parents=True, exist_ok=True)
            rows = 3600
            self._command(f"create {path} --start {start - 10} --step {STEP} "
                          f"DS:{column.alias}:{column.rrd_type}:{HEARTBEAT}:U:U "
                          f"RRA:AVERAGE:0.5:1:{rows} RRA:MIN:0.5:1:{rows} RRA:MAX:0.5:1:{rows}")
            self.created.add(path)
        return path

    def _rows(self, view: MibView, column: Collected) -> dict[tuple[int, ...], object]:
        """instance -> varbind for a table column, from the view as a walk would see it."""
        oid = column.oid
        return {o[len(oid):]: view.get(o) for o in view.oids if o[: len(oid)] == oid and len(o) > len(oid)}

    def _directory(self, view: MibView, column: Collected, instance: tuple[int, ...]) -> Path:
        table = next(t for t in self.catalog.tables.values() if t.entry_name == column.resource_type)
        name_column = NAME_COLUMNS.get(table.name)
        if name_column:
            metric = self.catalog.by_name(name_column)
            name = view.get(table.oid + (1, metric.snmp.column) + instance).value.decode()
            leaf = sibling_directory(name)
        else:
            leaf = ".".join(map(str, instance))
        return self.node_dir / column.resource_type / leaf

    def store(self, view: MibView, timestamp: int) -> None:
        """One collection: every collected object, with its value at ``timestamp`` when it has one."""
        for column in self.collected:
            if column.resource_type is None:
                values = {(): view.get(column.oid + (0,))}
            else:
                values = self._rows(view, column)
            for instance, varbind in values.items():
                directory = (self.node_dir if column.resource_type is None
                             else self._directory(view, column, instance))
                path = self._file(directory, column, timestamp)
                value = numeric(varbind)
                if value is None:
                    continue
                if column.rrd_type == "COUNTER":
                    value = int(value)
                self._command(f"update {path} {timestamp}:{value}")
                self.filled.add(path)

    def create_empty(self, directory: Path, columns: list[Collected], start: int) -> None:
        """Files for a resource no collection returned (as OpenNMS would on the first row seen)."""
        for column in columns:
            self._file(directory, column, start)

    def close(self) -> None:
        self.rrdtool.stdin.close()
        self.rrdtool.wait(timeout=30)
