"""MYSQL-SERVER-MIB: generated from the catalog, committed, clean for smilint, resolvable by
Net-SNMP, and faithful to the original's 160 objects."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.generate import REPO_ROOT, mib, stale_files

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
IETF_MIBS = SHARED / "mibs" / "ietf"
REFERENCE = SHARED / "reference" / "mysql-snmp-legacy-objects.tsv"
MIB_DIR = REPO_ROOT / "mibs"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def generated(catalog):
    return mib.render(catalog)


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"../shared absent: {path} is needed")
    return path


def need_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (Debian: smitools / snmp)")
    return path


def net_snmp_env(tmp_path: Path) -> dict:
    # Net-SNMP announces on stderr each persistent directory it has to create.
    (tmp_path / "cert_indexes").mkdir(exist_ok=True)
    return {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(tmp_path), "HOME": str(tmp_path)}


def expected_objects(catalog) -> dict[str, str]:
    """Every descriptor the catalog puts in the MIB -> its OID."""
    objects = {}
    for metric in catalog:
        snmp = metric.snmp
        if not snmp:
            continue
        if snmp.legacy:
            objects[snmp.legacy.name] = format_oid(snmp.legacy.oid)
        if snmp.table:
            table = catalog.tables[snmp.table]
            objects[snmp.name] = format_oid(table.oid + (1, snmp.column))
        elif snmp.oid:
            objects[snmp.name] = format_oid(snmp.oid)
    for table in catalog.tables.values():
        if catalog.table_columns(table.name):
            objects[table.name] = format_oid(table.oid)
            objects[table.entry_name] = format_oid(table.oid + (1,))
    for notification in catalog.extra.get("notifications") or ():
        objects[notification["name"]] = notification["oid"]
    return objects


def test_committed_mib_is_what_the_catalog_generates(generated):
    committed = MIB_DIR / "MYSQL-SERVER-MIB.txt"
    assert committed.exists(), "run 'mysql-snmp generate' and commit mibs/MYSQL-SERVER-MIB.txt"
    assert committed.read_text() == generated, "mibs/MYSQL-SERVER-MIB.txt is stale: run 'mysql-snmp generate'"


def test_mib_is_registered_with_mysql_snmp_generate(catalog):
    assert mib.MIB_PATH not in stale_files(catalog)


def test_smilint_has_nothing_to_say(tmp_path, generated):
    smilint = need_tool("smilint")
    need(IETF_MIBS)
    (tmp_path / "MYSQL-SERVER-MIB.txt").write_text(generated)
    result = subprocess.run(
        [smilint, "-c", "/dev/null", "-l", "6", "-s", "-m", "./MYSQL-SERVER-MIB.txt"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "SMIPATH": f"{IETF_MIBS.resolve()}:{tmp_path}"},
    )
    # smilint exits 0 even when it reports errors: its output is the verdict.
    assert result.stdout + result.stderr == ""


def test_snmptranslate_resolves_every_name_both_ways(tmp_path, catalog, generated):
    snmptranslate = need_tool("snmptranslate")
    need(IETF_MIBS)
    (tmp_path / "MYSQL-SERVER-MIB.txt").write_text(generated)
    base = [snmptranslate, "-M", f"{IETF_MIBS.resolve()}:{tmp_path}", "-m", "MYSQL-SERVER-MIB"]
    objects = expected_objects(catalog)
    names = sorted(objects)
    forward = subprocess.run(base + ["-On"] + [f"MYSQL-SERVER-MIB::{n}" for n in names],
                             capture_output=True, text=True, env=net_snmp_env(tmp_path))
    assert forward.stderr == ""
    assert [line for line in forward.stdout.splitlines() if line] == ["." + objects[n] for n in names]
    backward = subprocess.run(base + ["." + objects[n] for n in names],
                              capture_output=True, text=True, env=net_snmp_env(tmp_path))
    assert [line for line in backward.stdout.splitlines() if line] == [f"MYSQL-SERVER-MIB::{n}" for n in names]


def test_legacy_objects_keep_oid_name_and_type_of_the_original(generated, catalog):
    rows = [r for r in csv.reader(need(REFERENCE).read_text().splitlines(), delimiter="\t")
            if r and not r[0].startswith("#") and r[0] != "n"]
    assert len(rows) == 160
    legacy = {m.snmp.legacy.n: m.snmp.legacy for m in catalog.legacy()}
    for n, oid, name, syntax, *_ in rows:
        obj = legacy.get(int(n))
        assert obj is not None, f"legacy object {n} ({name}) missing from the catalog"
        expected_name = "myInnoDBSemWaitTime" if name == "myInooDBSemWaitTime" else name
        assert (obj.name, format_oid(obj.oid)) == (expected_name, oid)
        block = generated.split(f"\n{expected_name} OBJECT-TYPE\n", 1)[1].split("::=", 1)
        declared = block[0].split("SYNTAX", 1)[1].split("\n", 1)[0].strip()
        wire = {"MYSQLUnsigned64 (Counter64 on the wire)": ("Counter64",),
                "INTEGER": ("Integer32",)}.get(syntax, (syntax,))
        assert declared in wire, f"{name}: declared {declared}, original {syntax}"
        assert block[1].split("}", 1)[0].strip() == f"{{ myLegacyStatus {n}"
    assert "myInooDBSemWaitTime" not in generated


def test_string_indexed_rows_fit_in_an_oid(generated, catalog):
    for table in catalog.tables.values():
        if not catalog.table_columns(table.name) or table.index != ("state",):
            continue
        assert "OCTET STRING (SIZE (0..100))" in generated.split(f"{table.entry_name.removesuffix('Entry')}Index OBJECT-TYPE")[1][:80]
