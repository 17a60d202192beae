"""A scrape's body in three parts: the collection head and the server part shared by every request
for the same collection, and the request's own part, joined into one plain body or one gzip member."""

from __future__ import annotations

import gc
import gzip
import threading
import weakref
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from mysql_snmp.agents.exporter.encoding import encode, negotiate
from mysql_snmp.agents.exporter.metric_types import CounterMetricFamily, GaugeMetricFamily
from mysql_snmp.agents.exporter.response import SharedBodies, scrape_body
from tests.exporter.exporter_harness import PROMETHEUS_ACCEPT, running_exporter


class Record:
    """A collection as SharedBodies sees it: any object a weak reference can point to."""

OPENMETRICS = PROMETHEUS_ACCEPT


def collection_head_families():
    return [GaugeMetricFamily("mysql_up", "1 if the server answered the last collection, 0 if it could not be reached.", value=1)]


def request_families(scrapes: int):
    return [CounterMetricFamily("mysql_exporter_scrapes_total", "Scrapes.", value=scrapes)]


def head_families(scrapes: int):
    return collection_head_families() + request_families(scrapes)


def collection_head(record, accept):
    heads = SharedBodies()
    content_type = encode([], accept)[1]
    return heads.get(record, ("c",), content_type, lambda: encode(collection_head_families(), accept, final=False)[0])


def server_families():
    families = [GaugeMetricFamily(f"mysql_global_variables_v{n}", "A variable.", value=n) for n in range(300)]
    status = CounterMetricFamily("mysql_global_status_commands_total", "Commands.", labels=["command"])
    for n in range(200):
        status.add_metric([f"cmd{n}"], n * 7)
    return families + [status]


@pytest.mark.parametrize("accept", [None, OPENMETRICS])
@pytest.mark.parametrize("compressed", [False, True])
def test_the_two_parts_give_the_same_body_as_encoding_everything_at_once(accept, compressed):
    record = Record()
    bodies = SharedBodies()
    content_type = encode([], accept)[1]
    server = bodies.get(record, ("c",), content_type, lambda: encode(server_families(), accept, final=False)[0])
    body, got_type = scrape_body(collection_head(record, accept), request_families(3), server, negotiate(accept),
                                 compressed)
    expected, expected_type = encode(server_families() + head_families(3), accept)
    assert got_type == expected_type
    if compressed:
        assert body[:2] == b"\x1f\x8b"
        assert gzip.decompress(body) == expected
        # One member: a decoder that stops after the first member sees everything too.
        single = zlib.decompressobj(16 + zlib.MAX_WBITS)
        assert single.decompress(body) == expected and single.eof and not single.unused_data
    else:
        assert body == expected
    if accept == OPENMETRICS:
        assert expected.endswith(b"# EOF\n") and expected.count(b"# EOF") == 1


@pytest.mark.parametrize("compressed", [False, True])
def test_without_a_server_part_the_head_is_the_whole_body(compressed):
    body, _ = scrape_body(collection_head(Record(), OPENMETRICS), request_families(1), None, negotiate(OPENMETRICS),
                        compressed)
    expected, _ = encode(head_families(1), OPENMETRICS)
    assert (gzip.decompress(body) if compressed else body) == expected


def test_requests_for_one_collection_share_one_encoding_and_the_cache_is_bounded():
    bodies = SharedBodies(limit=3)
    builds = []

    def build():
        builds.append(1)
        return encode(server_families(), None)[0]

    records = [Record() for _ in range(5)]
    first = bodies.get(records[0], ("c",), "text/plain", build)
    assert bodies.get(records[0], ("c",), "text/plain", build) is first
    assert len(builds) == 1
    bodies.get(records[0], ("c", "d"), "text/plain", build)  # other collectors: another part
    bodies.get(records[0], ("c",), "application/openmetrics-text", build)  # another content type
    assert len(builds) == 3
    for record in records[1:]:
        bodies.get(record, ("c",), "text/plain", build)
    assert len(builds) == 7 and len(bodies) == 3
    bodies.get(records[0], ("c", "d"), "text/plain", build)
    bodies.get(records[0], ("c",), "application/openmetrics-text", build)
    assert len(builds) == 7  # the other pairs' parts were kept
    bodies.get(records[4], ("e",), "text/plain", build)  # a fourth pair: the least recently used goes
    assert len(bodies) == 3
    bodies.get(records[4], ("c",), "text/plain", build)
    assert len(builds) == 9


def test_a_newer_collection_replaces_the_older_ones_part():
    """Only the newest collection is served again: older parts (and their collections) are not kept."""
    bodies = SharedBodies()
    builds = []

    def build():
        builds.append(1)
        return encode(server_families(), None)[0]

    older, newer = Record(), Record()
    first = bodies.get(older, ("c",), "text/plain", build)
    bodies.get(newer, ("c",), "text/plain", build)
    assert len(bodies) == 1
    assert all(part.owner() is newer for part in bodies._parts.values())
    assert bodies.get(newer, ("c",), "text/plain", build) is not first and len(builds) == 2


def test_a_newer_revision_replaces_the_part_and_frees_the_collections_it_held():
    """A collection head is rebuilt when the counters move (a new revision), every scrape: the
    part it replaces goes, with the collection it held, instead of filling the cache."""
    class Record:  # a collection record that can be watched with a weak reference
        pass

    heads, builds = SharedBodies(), []

    def build(text):
        builds.append(text)
        return text.encode()

    records = [Record() for _ in range(12)]
    watched = [weakref.ref(record) for record in records]
    for version, record in enumerate(records):
        part = heads.get(record, ("c",), "text/plain", lambda: build(f"up {version}\n"), revision=version)
        assert part.body == f"up {version}\n".encode()
        assert heads.get(record, ("c",), "text/plain", lambda: build("again"), revision=version) is part
    assert len(heads) == 1 and "again" not in builds
    assert heads.get(records[-1], ("c",), "text/plain", lambda: build("up 12\n"), revision=12).body == b"up 12\n"
    del records, part
    gc.collect()
    assert [ref() is None for ref in watched] == [True] * 11 + [False]


def test_each_scrape_has_its_own_head():
    record = Record()
    first = SharedBodies().get(record, ("c",), "text/plain", lambda: encode(server_families(), None)[0])
    # Each scrape's own head still differs: the shared part does not freeze the counters.
    head = collection_head(record, None)
    one, _ = scrape_body(head, request_families(1), first, negotiate(None), False)
    two, _ = scrape_body(head, request_families(2), first, negotiate(None), False)
    assert b"mysql_exporter_scrapes_total 1.0" in one and b"mysql_exporter_scrapes_total 2.0" in two


def test_concurrent_requests_for_one_part_wait_for_one_build():
    bodies = SharedBodies()
    record = Record()
    started, release = threading.Event(), threading.Event()
    builds = []

    def build():
        builds.append(1)
        started.set()
        release.wait(10)
        return encode(server_families(), None)[0]

    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(bodies.get, record, ("c",), "text/plain", build)
        assert started.wait(10)
        others = [pool.submit(bodies.get, record, ("c",), "text/plain", build) for _ in range(7)]
        release.set()
        parts = [first.result(10)] + [other.result(10) for other in others]
    assert len(builds) == 1 and bodies.builds == 1
    assert all(part is parts[0] for part in parts)


def test_a_failed_build_fails_its_waiters_and_the_next_request_builds_again():
    bodies = SharedBodies()
    record = Record()

    def broken():
        raise ValueError("a bug in an encoder")

    with pytest.raises(ValueError):
        bodies.get(record, ("c",), "text/plain", broken)
    part = bodies.get(record, ("c",), "text/plain", lambda: b"x 1\n")
    assert part.body == b"x 1\n" and bodies.builds == 2


def test_a_shared_part_is_deflated_and_checksummed_once_and_never_ends_the_stream():
    part = SharedBodies().get(Record(), ("c",), "text/plain", lambda: b"y 2\n")
    assert part.gzip_form() is part.gzip_form()
    deflated, crc = part.gzip_form()
    assert crc == zlib.crc32(b"y 2\n")
    stream = zlib.decompressobj(-zlib.MAX_WBITS)
    assert stream.decompress(deflated) == b"y 2\n" and not stream.eof


def test_a_request_negotiates_its_format_once(tmp_path, monkeypatch):
    """The Accept header is negotiated once per request, and every part is encoded in that format
    (the server here is down: the collection head and the request's own part are encoded)."""
    from mysql_snmp.agents.exporter import encoding

    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nhost = 127.0.0.1\nport = 1\nuser = monitor\n")  # nothing listens on port 1
    my_cnf.chmod(0o600)
    negotiated = []
    negotiate_format = encoding.negotiate_format

    def counted(accept):
        negotiated.append(accept)
        return negotiate_format(accept)

    monkeypatch.setattr(encoding, "negotiate_format", counted)
    with running_exporter(f"--config.my-cnf={my_cnf}", "--no-exporter.leak-detector", "--no-collect.host") as exporter:
        for scrape in range(1, 3):
            status, body, headers = exporter.get(headers={"Accept": OPENMETRICS})
            assert status == 200 and negotiated == [OPENMETRICS] * scrape
            assert headers["Content-Type"].startswith("application/openmetrics-text")
            assert "mysql_up 0.0\n" in body and body.endswith("# EOF\n") and body.count("# EOF") == 1


def test_a_huge_part_is_shared_by_the_requests_waiting_but_not_kept_nor_its_collection():
    bodies = SharedBodies(keep_bytes=1000)
    record = Record()
    huge = bodies.get(record, ("c",), "text/plain", lambda: b"x" * 5000)
    assert len(bodies) == 0  # not kept: the next request of this collection builds it again
    small = bodies.get(record, ("d",), "text/plain", lambda: b"small")
    assert bodies.get(record, ("d",), "text/plain", lambda: b"again") is small
    gone = weakref.ref(record)
    del record
    gc.collect()
    assert gone() is None  # a kept part does not keep its collection alive
    assert len(huge.body) == 5000 and small.owner() is None


def test_a_scrape_without_a_collection_shares_its_part_too():
    heads = SharedBodies()
    part = heads.get(None, ("c",), "text/plain", lambda: b"mysql_up 0\n")
    assert heads.get(None, ("c",), "text/plain", lambda: b"again") is part
