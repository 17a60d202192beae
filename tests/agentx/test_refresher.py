"""The background refresh: collections in a worker thread, failures served as "MySQL down"."""

from __future__ import annotations

import asyncio

from mysql_snmp.agents.agentx.codec import VarType
from mysql_snmp.agents.agentx.refresher import ViewRefresher
from mysql_snmp.agents.agentx.view import TreeLayout
from mysql_snmp.agents.snapshot import labels_of
from tests.agentx.synthetic import LEGACY, NEW, synthetic_catalog, synthetic_snapshot


def refresher_for(collect, hooks=None):
    return ViewRefresher(collect, TreeLayout.from_catalog(synthetic_catalog()), 0.01, "synthetic", hooks)


def test_before_the_first_collection_only_status_is_served():
    refresher = refresher_for(synthetic_snapshot)
    view = refresher.current_view()
    assert view.get(LEGACY + (1, 0)).type == VarType.NO_SUCH_INSTANCE
    assert view.get(NEW + (2, 1, 0)).value == 0
    assert view.get(NEW + (2, 3, 0)).value == b"no collection yet"


def test_a_failing_collection_is_served_as_down_then_recovers():
    outcomes = iter([ConnectionRefusedError("MySQL went away"), None])

    def collect():
        failure = next(outcomes)
        if failure:
            raise failure
        return synthetic_snapshot()

    refresher = refresher_for(collect)
    asyncio.run(refresher.refresh_once())
    assert refresher.current_view().get(NEW + (2, 3, 0)).value == b"ConnectionRefusedError: MySQL went away"
    assert refresher.current_view().get(LEGACY + (1, 0)).type == VarType.NO_SUCH_INSTANCE
    asyncio.run(refresher.refresh_once())
    assert refresher.current_view().get(LEGACY + (1, 0)).value == 2**32 - 1
    assert refresher.current_view().get(NEW + (2, 1, 0)).value == 1


def test_hooks_enrich_the_snapshot_and_a_broken_hook_is_contained():
    def broken(snapshot):
        raise RuntimeError("bug in a consumer")

    def enrich(snapshot):
        snapshot.values["status_wsrep_ready"] = "OFF"

    refresher = refresher_for(synthetic_snapshot, [broken, enrich])
    asyncio.run(refresher.refresh_once())
    assert refresher.current_view().get(LEGACY + (3, 0)).value == b"OFF"


def test_run_stops_when_asked():
    calls = []

    async def scenario():
        stop = asyncio.Event()
        refresher = refresher_for(lambda: calls.append(1) or synthetic_snapshot())
        task = asyncio.create_task(refresher.run(stop))
        while len(calls) < 3:
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 5)

    asyncio.run(scenario())
    assert len(calls) >= 3


def test_published_callbacks_see_the_new_view_already_served():
    refresher = refresher_for(synthetic_snapshot)
    seen = []

    def notify(snapshot):
        # What a manager polling on the notification would read now.
        seen.append((snapshot.up, refresher.current_view().get(NEW + (2, 1, 0)).value))

    refresher.published.append(notify)
    asyncio.run(refresher.refresh_once())
    assert seen == [(True, 1)]


def test_a_failing_published_callback_does_not_stop_the_others():
    refresher = refresher_for(synthetic_snapshot)
    calls = []

    def broken(snapshot):
        raise RuntimeError("trap sink gone")

    refresher.published.extend([broken, lambda snapshot: calls.append(snapshot.up)])
    asyncio.run(refresher.refresh_once())
    assert calls == [True]


def test_a_snapshot_the_view_cannot_hold_is_served_as_down_and_the_refresher_goes_on():
    # Pools "1" and "01" both index row 1: building the view fails.  That must cost this
    # collection's values (served as down, with the reason), not the refresher task and
    # with it the agent (serve() gathers the refresher with the session).
    def clashing_rows(snapshot):
        snapshot.add_series("innodb_pool_pages", labels_of(pool="01"), 12)

    refresher = refresher_for(synthetic_snapshot, [clashing_rows])
    snapshot = asyncio.run(refresher.refresh_once())
    view = refresher.current_view()
    assert not snapshot.up
    assert view.get(NEW + (2, 1, 0)).value == 0
    assert b"two instances share one OID" in view.get(NEW + (2, 3, 0)).value
    assert view.get(LEGACY + (1, 0)).type == VarType.NO_SUCH_INSTANCE
    refresher.hooks.clear()
    asyncio.run(refresher.refresh_once())
    assert refresher.current_view().get(LEGACY + (1, 0)).value == 2**32 - 1


def test_values_older_than_refresh_plus_grace_are_withdrawn_while_the_collection_hangs():
    # A frozen server: the collection hangs in its thread.  The values stay on show while they are
    # younger than the refresh interval plus the grace, then go (myAgentMysqlUp 0, the reason)
    # whatever the collection is waiting on; the age counts from the last collection that reached
    # the server, and the collection's own result is served once it ends.
    import threading
    import time

    release = threading.Event()
    calls = []

    def collect():
        calls.append(1)
        if len(calls) == 2:
            release.wait(10)
            return synthetic_snapshot(up=False)
        return synthetic_snapshot()

    refresher = ViewRefresher(collect, TreeLayout.from_catalog(synthetic_catalog()), 1.0, "synthetic",
                              stale_grace=0.5)

    def served():
        view = refresher.current_view()
        return view.get(NEW + (2, 1, 0)).value, view.get(LEGACY + (1, 0)).type, view.get(NEW + (2, 3, 0)).value

    async def scenario():
        await refresher.refresh_once()
        served_at = refresher.snapshot.timestamp
        pending = asyncio.create_task(refresher._refresh_or_go_stale())
        await asyncio.sleep(0.6)
        young = served(), time.time() - served_at
        await asyncio.sleep(1.8 - (time.time() - served_at))
        old = served(), time.time() - served_at, refresher.snapshot.data_timestamp
        release.set()
        await pending
        return served_at, young, old

    served_at, (young, young_age), (old, old_age, stale_since) = asyncio.run(scenario())
    if young_age < 1.4:  # a loaded machine may have slept past the deadline
        assert young[0] == 1 and young[1] != VarType.NO_SUCH_INSTANCE, young
    up, legacy, error = old
    assert up == 0 and legacy == VarType.NO_SUCH_INSTANCE and b"the collection in flight is overdue" in error
    assert b"refresh 1s + grace 0.5s" in error
    assert stale_since == served_at and old_age >= 1.8
    after = refresher.current_view()
    assert after.get(NEW + (2, 1, 0)).value == 0 and b"Can't connect" in after.get(NEW + (2, 3, 0)).value
    # Down after the freeze too: the age still counts from the last collection that reached the server.
    assert refresher.snapshot.data_timestamp == served_at
    assert refresher.snapshot.data_age_seconds(time.time()) >= 1.8


def test_new_values_on_show_are_not_withdrawn_while_their_notifications_are_sent():
    # The deadline moves with the values: a published callback still running (a Notify to a slow
    # master) past the old values' deadline does not withdraw the new ones.
    import time

    def slow_notification(snapshot):
        time.sleep(0.5)

    refresher = ViewRefresher(synthetic_snapshot, TreeLayout.from_catalog(synthetic_catalog()), 0.5, "synthetic",
                              stale_grace=0.2)

    async def scenario():
        await refresher.refresh_once()  # its values are due to go 0.7 s from now...
        await asyncio.sleep(0.4)
        refresher.published.append(slow_notification)
        await refresher._refresh_or_go_stale()  # ...but new ones are on show from 0.4 s to 1.1 s

    asyncio.run(scenario())
    assert refresher.snapshot.up and refresher.current_view().get(NEW + (2, 1, 0)).value == 1
