"""Interned, memoised encoding gives exactly prometheus_client's bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from agents.catalog import load_catalog
from agents.exporter.encoding import FamilyInterner, encode
from agents.exporter.projection import rows_families
from parsers.status import parse_status_rows
from parsers.tabular import parse_table_text

LIVE = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "live" / "mariadb-10.11"
OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


class Families:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return iter(self.families)


def reference(families, generate) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Families(families))
    return generate(registry)


def status_families(interner):
    if not LIVE.is_dir():
        pytest.skip("../shared absent: captures of a real MariaDB are not available")
    status = {r["Variable_name"]: r["Value"] for r in parse_table_text((LIVE / "show-global-status.tsv").read_text())}
    variables = {r["Variable_name"]: r["Value"]
                 for r in parse_table_text((LIVE / "show-global-variables.tsv").read_text())}
    return global_status(status, interner) + (
        rows_families(load_catalog(), "global_variables", parse_status_rows(variables.items()), interner))


def global_status(status: dict, interner) -> list:
    return rows_families(load_catalog(), "global_status", parse_status_rows(status.items()), interner)


@pytest.mark.parametrize("accept, generate", [(None, generate_latest), (OPENMETRICS, generate_openmetrics)])
def test_memoised_bytes_equal_prometheus_client(accept, generate):
    interner = FamilyInterner()
    first = status_families(interner)
    body, _ = encode(first, accept, interner)
    assert body == reference(first, generate)
    # Second scrape of unchanged values: same objects, bytes from the memo, same output.
    second = status_families(interner)
    assert sum(a is b for a, b in zip(first, second)) > 400
    again, content_type = encode(second, accept, interner)
    assert again == body
    assert content_type.startswith("application/openmetrics-text" if accept else "text/plain")


def test_changed_value_is_not_served_from_the_memo():
    interner = FamilyInterner()
    status = {"Uptime": "10", "Com_select": "5"}
    body, _ = encode(global_status(status, interner), None, interner)
    assert b"mysql_global_status_uptime 10.0" in body
    status["Uptime"] = "11"
    body, _ = encode(global_status(status, interner), None, interner)
    assert b"mysql_global_status_uptime 11.0" in body and b"uptime 10.0" not in body


def test_interner_limit_starts_over():
    interner = FamilyInterner(limit=3)
    families = global_status({f"Var_{n}": str(n) for n in range(5)}, interner)
    assert len(families) == 5
    body, _ = encode(families, None, interner)
    assert body == reference(families, generate_latest)


def test_names_needing_escapes_still_get_the_negotiated_escaping():
    from prometheus_client.core import GaugeMetricFamily

    plain = GaugeMetricFamily("mysql_plain", "A legacy name.", labels=["state"])
    plain.add_metric(["ok"], 1)
    dotted = GaugeMetricFamily("mysql.dotted", "A name with a dot.", labels=["state"])
    dotted.add_metric(['say "hi"\n'], 2)
    odd_label = GaugeMetricFamily("mysql_odd_label", "A label name with a dash.", labels=["the-label"])
    odd_label.add_metric(["x"], 3)
    families = [plain, dotted, odd_label]
    body, _ = encode(families, OPENMETRICS, FamilyInterner())
    assert body == reference(families, generate_openmetrics)
    assert b"mysql_dotted{" in body and b"the_label=" in body  # underscores escaping applied
    assert b'state="say \\"hi\\"\\n"' in body


def test_families_of_values_that_changed_are_forgotten():
    interner = FamilyInterner()
    for uptime in range(1, 50):
        status = {"Uptime": str(uptime), "Com_select": "5", **{f"Var_{n}": str(n) for n in range(20)}}
        body, _ = encode(global_status(status, interner), None, interner)
        assert f"mysql_global_status_uptime {uptime}.0".encode() in body
    # The 20 steady values and at most a few generations of Uptime, not 49 of them.
    assert len(interner._families) < 32
