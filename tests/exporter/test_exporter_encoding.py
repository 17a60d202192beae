"""Interned, memoised encoding gives exactly prometheus_client's bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.encoding import FamilyInterner, encode
from mysql_snmp.agents.exporter.metric_types import GaugeMetricFamily
from mysql_snmp.agents.exporter.projection import rows_families
from mysql_snmp.parsers.status import parse_status_rows
from mysql_snmp.parsers.tabular import parse_table_text
from tests.exporter.oracle import ClientRegistry

LIVE = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "live" / "mariadb-10.11"
OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def reference(families, generate) -> bytes:
    """``families`` as prometheus_client's ``generate`` writes them."""
    return generate(ClientRegistry(families))


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


def test_interner_generations_drop_what_is_no_longer_asked_for():
    interner = FamilyInterner(generation_size=3)
    families = global_status({f"Var_{n}": str(n) for n in range(5)}, interner)
    assert len(families) == 5
    body, _ = encode(families, None, interner)
    assert body == reference(families, generate_latest)
    assert len(interner) <= 6


def test_interner_stays_bounded_when_every_value_changes_every_scrape():
    interner = FamilyInterner(generation_size=50)
    for scrape in range(200):
        status = {f"Var_{n}": str(scrape * 100 + n) for n in range(20)}
        families = global_status(status, interner)
        body, _ = encode(families, None, interner)
        assert f"mysql_global_status_var_0 {float(scrape * 100)}".encode() in body
        assert len(interner) <= 100
        assert len(interner.encoded_by_id("text/plain; version=0.0.4; charset=utf-8")) <= 100


def test_interner_keeps_unchanged_families_across_generations():
    interner = FamilyInterner(generation_size=30)
    steady = {f"Steady_{n}": str(n) for n in range(10)}
    first = global_status(steady, interner)
    for scrape in range(20):  # 10 steady + 10 changing values per scrape: many generations go by
        global_status({**steady, **{f"Moving_{n}": str(scrape * 10 + n) for n in range(10)}},
                                      interner)
    again = global_status(steady, interner)
    assert all(a is b for a, b in zip(first, again))


def test_interner_keeps_one_scrape_and_the_previous_ones_changes():
    interner = FamilyInterner()  # the default size: only the scrapes bound it here
    steady = {f"Steady_{n}": str(n) for n in range(10)}
    first = global_status(steady, interner)
    for scrape in range(50):
        interner.new_scrape()
        families = global_status({**steady, **{f"Moving_{n}": str(scrape * 10 + n) for n in range(10)}},
                                 interner)
        body, _ = encode(families, None, interner)
        assert f"mysql_global_status_moving_0 {float(scrape * 10)}".encode() in body
        assert len(interner) <= 30  # 10 steady, 10 moving of this scrape, 10 of the previous one
    assert all(a is b for a, b in zip(first, global_status(steady, interner)))


def test_a_shared_interner_serves_what_other_targets_built_and_stays_bounded():
    # The /probe targets' interner: their scrapes' new_scrape() must not drop what another
    # target just built; only its size starts a generation.
    interner = FamilyInterner(generation_size=40, per_scrape=False)
    shared = {f"Same_{n}": str(n) for n in range(10)}
    first = global_status({**shared, "Own_a": "1"}, interner)
    encode(first, None, interner)
    for scrape in range(30):
        for target in "abc":
            interner.new_scrape()
            own = {f"Own_{target}_{n}": str(scrape * 10 + n) for n in range(5)}
            families = global_status({**shared, **own}, interner)
            body, _ = encode(families, None, interner)
            assert body == reference(families, generate_latest)
            assert f"mysql_global_status_own_{target}_0 {float(scrape * 10)}".encode() in body
            assert len(interner) <= 80
    again = global_status(shared, interner)
    assert all(a is b for a, b in zip(first, again))  # built once, for every target


def test_reuse_keeps_the_newest_equal_inputs_so_older_rows_are_freed():
    import gc
    import weakref

    from mysql_snmp.agents.exporter.metric_types import GaugeMetricFamily

    class Rows(dict):  # a dict that can be watched with a weak reference
        pass

    interner, builds = FamilyInterner(), []

    def build():
        family = GaugeMetricFamily("mysql_rows", "Rows.", labels=["table"])
        family.add_metric(["t"], 1)
        builds.append(family)
        return [family]

    older = Rows(t=1)
    first = interner.reuse("mysql_rows", older, build)
    newer = Rows(t=1)
    assert interner.reuse("mysql_rows", newer, build) is first and len(builds) == 1
    watched = weakref.ref(older)
    del older
    gc.collect()
    assert watched() is None  # the interner compares against the newer copy from now on
    assert interner.reuse("mysql_rows", Rows(t=1), build) is first
    assert interner.reuse("mysql_rows", Rows(t=2), build) is not first and len(builds) == 2


def test_names_needing_escapes_still_get_the_negotiated_escaping():
    from mysql_snmp.agents.exporter.metric_types import GaugeMetricFamily

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



def test_reuse_replaced_by_another_thread_meanwhile_leaves_no_bytes_behind():
    # Two targets sharing an interner build the same key at once: the one storing last must
    # forget what the first stored, or bytes stay keyed by the id() of families nobody holds.
    interner = FamilyInterner(per_scrape=False)
    first_rows = parse_status_rows({"a_size": "1"}.items())
    second_rows = parse_status_rows({"a_size": "2"}.items())
    content_type = "text/plain; version=0.0.4; charset=utf-8"

    def build_first():
        return [GaugeMetricFamily("first", "one", value=1.0)]

    def build_second():
        # Meanwhile another target's build of the same key lands (and is encoded).
        families = interner.reuse("global_variables", first_rows, build_first)
        encode(families, None, interner)
        assert interner.encoded_by_id(content_type)
        return [GaugeMetricFamily("second", "two", value=2.0)]

    second = interner.reuse("global_variables", second_rows, build_second)
    encode(second, None, interner)
    assert set(interner.encoded_by_id(content_type)) == {id(family) for family in second}
