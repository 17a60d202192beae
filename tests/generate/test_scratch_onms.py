import subprocess
from tests.generate.test_opennms_collectd import site  # noqa
from tests.generate.test_opennms_collectd import fetch, has_data, offered_reports
from mysql_snmp.agents.generate import opennms_collection, opennms_graphs
from mysql_snmp.agents.catalog import load_catalog

def test_scratch(site, tmp_path):
    objs = opennms_collection.collected_objects(load_catalog())
    legacy = {o.alias: o for o in objs if o.group == "mysql"}
    default_aliases = {o.alias for o in objs if not o.group.endswith("-full")}
    for name, node in site.items():
        files = node.attribute_files(node.node_dir)
        missing = sorted(a for a in legacy if a not in files)
        print(name, "legacy missing", len(missing), missing)
        flat = sorted(a for a in legacy if a in files and not has_data(fetch(files[a], a, node)))
        print(name, "legacy present but nan", flat)
        allfiles = [p for p in node.node_dir.rglob("*.rrd")]
        print(name, "rrd files", len(allfiles), "strings", len(list(node.node_dir.rglob("strings.properties"))))
        if name == "primary":
            d = [p for p in allfiles if p.stem in default_aliases]
            print("primary default files", len(d), "full-only files", len(allfiles) - len(d))
            from collections import Counter
            print(Counter(p.parent.parent.name if p.parent != node.node_dir else "node" for p in allfiles))
            print(Counter(p.parent.parent.name if p.parent != node.node_dir else "node" for p in d))
        offered = {}
        for rid, report, directory, fs in offered_reports(node):
            offered.setdefault(rid, []).append(directory.name)
        print(name, "offered", {k: len(v) for k, v in offered.items()})
    one = tmp_path / "one.rrd"
    subprocess.run(["rrdtool", "create", str(one), "--step", "300", "DS:a:GAUGE:600:U:U",
                    "RRA:AVERAGE:0.5:1:2016", "RRA:AVERAGE:0.5:12:1488", "RRA:AVERAGE:0.5:288:366",
                    "RRA:MAX:0.5:288:366", "RRA:MIN:0.5:288:366"], check=True)
    print("one file bytes", one.stat().st_size)
