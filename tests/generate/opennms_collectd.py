"""An OpenNMS SNMP collector in miniature (tests): reads the generated ``datacollection/`` group,
polls a real snmpd, and writes RRD files and ``strings.properties`` where and how OpenNMS does.

What it keeps of OpenNMS (collectd's SNMP collector with RRDtool as its strategy):
- the objects of the included ``systemDef``s; a scalar at instance 0, a table column for every
  instance a walk returns (OpenNMS walks the column);
- ``type``: counter32/counter64 -> COUNTER data source; string -> ``strings.properties``, no RRD;
  any other numeric type (gauge, integer, octetstring parsed as a number) -> GAUGE;
- node-level resources in ``<repository>/<node>/``, a table row in
  ``<repository>/<node>/<resource type>/<instance>/``: IndexStorageStrategy names the directory
  after the index OID, SiblingColumnStorageStrategy after the sibling column's text (non-ASCII
  characters dropped, "/" turned into "-", then each ``replace-all``);
- a file is created when an attribute first has a value, never for an object that answers
  nothing (so a report on it is not offered);
- ``storeByGroup=false``: one ``<alias>.rrd`` per attribute, one data source named after the
  alias; ``storeByGroup=true``: one ``<group>.rrd`` per group and resource with a data source per
  alias it had on creation, and ``ds.properties`` mapping each alias to its group's file.

The step is the test's poll interval (OpenNMS's default is 300 s).  Every rrdtool command goes
through one ``rrdtool -`` process (its pipe mode).
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from mysql_snmp.agents.demo.netsnmp_sandbox import Snmpd, SnmpVar

NS = {"d": "http://xmlns.opennms.org/xsd/config/datacollection"}
COUNTER_TYPES = ("counter32", "counter64", "counter")
STRING_TYPES = ("string",)
NUMBER_TYPES = ("Counter32", "Counter64", "Gauge32", "INTEGER", "Timeticks", "Unsigned32")
ABSENT = ("No Such Object", "No Such Instance", "No more variables")
SIBLING = "SiblingColumnStorageStrategy"


@dataclass(frozen=True)
class MibObj:
    group: str
    oid: str  # without the leading dot
    alias: str
    type: str  # lower case, as OpenNMS compares it
    resource_type: str | None  # None: node level

    @property
    def rrd_type(self) -> str | None:
        if self.type in STRING_TYPES:
            return None
        return "COUNTER" if self.type in COUNTER_TYPES else "GAUGE"


@dataclass(frozen=True)
class ResourceType:
    name: str
    label: str  # resourceLabel expression
    sibling: str | None  # the column SiblingColumnStorageStrategy names directories after
    replace: tuple[tuple[str, str], ...] = ()


@dataclass
class Collection:
    objects: list[MibObj]
    resource_types: dict[str, ResourceType]


def _replace_operation(text: str) -> tuple[str, str]:
    match = re.fullmatch(r"s/(.*)/(.*)/", text)
    assert match, text
    return match.group(1), match.group(2)


def read_collection(path: Path, systems: tuple[str, ...]) -> Collection:
    """The objects the named system definitions of a datacollection-group file collect."""
    root = ET.parse(path).getroot()
    groups = {g.get("name"): g for g in root.findall("d:group", NS)}
    types = {}
    for rt in root.findall("d:resourceType", NS):
        strategy = rt.find("d:storageStrategy", NS)
        parameters = {p.get("key"): p.get("value") for p in strategy.findall("d:parameter", NS)}
        sibling = parameters.get("sibling-column-name") if strategy.get("class").endswith(SIBLING) else None
        replace = tuple(_replace_operation(p.get("value")) for p in strategy.findall("d:parameter", NS)
                        if p.get("key") == "replace-all")
        types[rt.get("name")] = ResourceType(rt.get("name"), rt.get("resourceLabel"), sibling, replace)
    objects = []
    for system in root.findall("d:systemDef", NS):
        if system.get("name") not in systems:
            continue
        for include in system.findall("d:collect/d:includeGroup", NS):
            for obj in groups[include.text].findall("d:mibObj", NS):
                instance = obj.get("instance")
                objects.append(MibObj(include.text, obj.get("oid").lstrip("."), obj.get("alias"),
                                      obj.get("type").lower(), None if instance == "0" else instance))
    return Collection(objects, types)


def snmp_text(var: SnmpVar) -> str:
    if var.type == "Hex-STRING":
        return bytes.fromhex(var.value.replace(" ", "")).decode("utf-8", "replace")
    return var.text


def attribute_value(obj: MibObj, var: SnmpVar | None) -> str | int | float | None:
    """What OpenNMS stores for one collected varbind (None: no attribute)."""
    if var is None or var.type in ABSENT or var.value in ABSENT:
        return None
    if obj.rrd_type is None:
        return snmp_text(var)
    if var.type in NUMBER_TYPES:
        return var.number
    try:
        return float(snmp_text(var))
    except ValueError:
        return None


def sibling_directory(text: str, replace: tuple[tuple[str, str], ...]) -> str:
    name = re.sub(r"[^\x00-\x7f]", "", text).replace("/", "-")
    for pattern, replacement in replace:
        name = re.sub(pattern, replacement, name)
    return name


@dataclass
class Node:
    """One node's resources in the repository, written poll after poll."""

    root: Path
    node: str
    collection: Collection
    store_by_group: bool
    step: int
    rrdtool: subprocess.Popen = field(init=False, repr=False)
    created: set[Path] = field(default_factory=set)
    group_sources: dict[Path, list[str]] = field(default_factory=dict)  # storeByGroup: file -> its DS
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rrdtool = subprocess.Popen(["rrdtool", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)

    @property
    def node_dir(self) -> Path:
        return self.root / self.node

    def command(self, line: str) -> None:
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
                raise RuntimeError(f"{line[:300]}: {out.strip()} {''.join(answer)}")
            answer.append(out)

    def _create(self, path: Path, sources: list[tuple[str, str]], start: int) -> None:
        rows = 3600
        definitions = " ".join(f"DS:{alias}:{kind}:{self.step * 2}:U:U" for alias, kind in sources)
        self.command(f"create {path} --start {start - 1} --step {self.step} {definitions} "
                     f"RRA:AVERAGE:0.5:1:{rows} RRA:MIN:0.5:1:{rows} RRA:MAX:0.5:1:{rows}")
        self.created.add(path)

    def _directory(self, obj: MibObj, instance: str, row_texts: dict[tuple[str, str], str]) -> Path:
        if obj.resource_type is None:
            return self.node_dir
        rt = self.collection.resource_types[obj.resource_type]
        leaf = instance
        if rt.sibling is not None:
            text = row_texts.get((rt.sibling, instance))
            if text is not None:  # OpenNMS falls back to the instance without the sibling's value
                leaf = sibling_directory(text, rt.replace)
        return self.node_dir / obj.resource_type / leaf

    def store(self, walk: dict[str, SnmpVar], timestamp: int) -> None:
        """One collection: the attributes of every collected object from one walk."""
        attributes: list[tuple[MibObj, str, object]] = []
        for obj in self.collection.objects:
            if obj.resource_type is None:
                rows = {"0": walk.get(obj.oid + ".0")}
            else:
                prefix = obj.oid + "."
                rows = {oid[len(prefix):]: var for oid, var in walk.items() if oid.startswith(prefix)}
            for instance, var in rows.items():
                value = attribute_value(obj, var)
                if value is not None:
                    attributes.append((obj, instance, value))
        row_texts = {(obj.alias, instance): value for obj, instance, value in attributes if obj.rrd_type is None}
        by_directory: dict[Path, list[tuple[MibObj, object]]] = {}
        for obj, instance, value in attributes:
            by_directory.setdefault(self._directory(obj, instance, row_texts), []).append((obj, value))
        for directory, values in by_directory.items():
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # what OpenNMS logs at every collection: "File name too long"
                self.errors.append(f"{directory}: {exc.strerror}")
                continue
            self._write_strings(directory, [(o, v) for o, v in values if o.rrd_type is None])
            numbers = [(o, int(v) if o.rrd_type == "COUNTER" else v) for o, v in values if o.rrd_type is not None]
            if self.store_by_group:
                self._store_groups(directory, numbers, timestamp)
            else:
                for obj, value in numbers:
                    path = directory / f"{obj.alias}.rrd"
                    if path not in self.created:
                        self._create(path, [(obj.alias, obj.rrd_type)], timestamp)
                    self.command(f"update {path} {timestamp}:{value}")

    def _store_groups(self, directory: Path, numbers: list[tuple[MibObj, object]], timestamp: int) -> None:
        groups: dict[str, list[tuple[MibObj, object]]] = {}
        for obj, value in numbers:
            groups.setdefault(obj.group, []).append((obj, value))
        mapping = {}
        for group, members in groups.items():
            path = directory / f"{group}.rrd"
            if path not in self.created:
                self._create(path, [(o.alias, o.rrd_type) for o, _ in members], timestamp)
                self.group_sources[path] = [o.alias for o, _ in members]
            known = [(o, v) for o, v in members if o.alias in self.group_sources[path]]
            template = ":".join(o.alias for o, _ in known)
            self.command(f"update {path} --template {template} {timestamp}:{':'.join(str(v) for _, v in known)}")
            mapping.update({alias: group for alias in self.group_sources[path]})
        ds = directory / "ds.properties"
        old = dict(line.split("=", 1) for line in ds.read_text().splitlines()) if ds.exists() else {}
        ds.write_text("".join(f"{k}={v}\n" for k, v in sorted({**old, **mapping}.items())))

    @staticmethod
    def _write_strings(directory: Path, strings: list[tuple[MibObj, object]]) -> None:
        if strings:
            path = directory / "strings.properties"
            old = dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}
            values = {**old, **{o.alias: str(v).replace("\n", " ") for o, v in strings}}
            path.write_text("".join(f"{k}={v}\n" for k, v in sorted(values.items())))

    # ------------------------------------------------------------------ reading back

    def resources(self) -> list[tuple[str, Path]]:
        """(resource type or nodeSnmp, directory) of every resource written."""
        out = [("nodeSnmp", self.node_dir)]
        for rt in sorted(self.collection.resource_types):
            base = self.node_dir / rt
            if base.is_dir():
                out += [(rt, d) for d in sorted(base.iterdir()) if d.is_dir()]
        return out

    def attribute_files(self, directory: Path) -> dict[str, Path]:
        """alias -> the RRD file holding it (as OpenNMS's resource DAO finds it)."""
        if self.store_by_group:
            ds = directory / "ds.properties"
            if not ds.exists():
                return {}
            return {alias: directory / f"{group}.rrd"
                    for alias, group in (line.split("=", 1) for line in ds.read_text().splitlines())}
        return {p.stem: p for p in directory.glob("*.rrd")}

    def strings(self, directory: Path) -> dict[str, str]:
        path = directory / "strings.properties"
        return dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}

    def close(self) -> None:
        self.rrdtool.stdin.close()
        self.rrdtool.wait(timeout=30)


def walk(snmpd: Snmpd, root: str) -> dict[str, SnmpVar]:
    """One collection's worth of varbinds: a bulk walk of the agent's subtree."""
    return {var.oid: var for var in snmpd.bulkwalk(root, "-Cr50")}
