"""The activity log's store on both engines (real SQLite file, real PostgreSQL server): a batch
written with one transaction, the filters, usage per key per hour and day, and pruning by age
and by the size bound; the pending buffer's bound."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.keys import key_record

from vttrelay.relay import activity
from vttrelay.relay.accesslog import RequestRecord
from vttrelay.relay.store import RelayStore

NOW = 1_800_000_000.0  # a fixed time (2027-01-15), on an hour boundary


def _record(at: float, status: int = 200, key: str = "k1", world: str = "w1") -> RequestRecord:
    """What the middleware hands over: the key object, the account left to the writer."""
    return RequestRecord(
        at,
        key_record(key, "alice", f"name {key}"),
        "",
        world,
        "GET",
        "/clients",
        "/clients",
        status,
        1.5,
        "10.0.0.1",
        1,
        10,
    )


def test_filters_usage_and_pruning(store_target: str | Path) -> None:
    store = RelayStore(store_target)
    try:
        log = activity.ActivityLog(store.db, days=30, max_rows=1000)
        log.add(_record(NOW - 86400 * 2, status=500, key="k2", world="w2"))  # two days ago
        assert log.flush() == 1
        log.add(_record(NOW - 3600 - 10, status=403))  # the previous hour
        assert log.flush() == 1
        log.add(_record(NOW - 10))
        other = _record(NOW - 5)._replace(key=key_record("kb", "bob", "name kb"))
        log.add(other)
        assert log.flush() == 2 and log.flush() == 0
        batches = store.db.all("SELECT account, calls FROM activity_batches ORDER BY last_at")
        assert [(b["account"], b["calls"]) for b in batches] == [
            ("alice", 1),
            ("alice", 1),
            ("alice", 1),
            ("bob", 1),
        ]  # one row per account per write

        def find(account: str | None = "alice", **f: Any) -> list[int]:
            return [a.status for a in activity.find(store.db, account, activity.Filter(**f))]

        assert find() == [200, 403, 500]
        assert len(find(None)) == 4 and find("bob") == [200]
        assert find(failures=True) == [403, 500]
        assert find(status_class="5xx") == [500] and find(status_class="2xx") == [200]
        assert find(world="w2") == [500] and find(key_id="k1") == [200, 403]
        assert find(route="/clients", since=NOW - 7200) == [200, 403]
        assert find(until=NOW - 3600) == [403, 500]

        used = activity.usage(store.db, "alice", NOW - 1)
        assert [u.key_id for u in used] == ["k1", "k2"]
        k1 = used[0]
        assert k1.key_name == "name k1" and len(k1.hours) == 24 and len(k1.days) == 30
        assert k1.hours[-1] == 1 and k1.hours[-2] == 1 and sum(k1.hours) == 2
        assert k1.days[-1] == 2 and used[1].days[-3] == 1 and sum(used[1].hours) == 0

        log.max_rows = 2
        log.prune(NOW)
        assert len(find(None)) == 2  # the two newest (whole batches go)
        assert find("alice") == [200] and find("bob") == [200]
        log.prune(NOW + 30 * 86400)
        assert find(None) == []
    finally:
        store.close()


def test_bad_filters_and_the_pending_bound(tmp_path: Path) -> None:
    for bad in ({"status_class": "6xx"}, {"world": "w" * 300}):
        try:
            activity.Filter(**bad)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")
    store = RelayStore(tmp_path / "relay.db")
    try:
        log = activity.ActivityLog(store.db, days=1, max_rows=10**6)
        for i in range(activity.MAX_PENDING + 5):
            log.add(_record(NOW + i))
        assert log.dropped == 5
        assert log.flush() == activity.MAX_PENDING
        rows = store.db.one("SELECT COUNT(*) AS n, SUM(calls) AS c FROM activity_batches")
        assert (rows["n"], rows["c"]) == (activity.MAX_PENDING // activity.MAX_BATCH, 50_000)
        newest = activity.find(store.db, None, activity.Filter())
        assert len(newest) == activity.MAX_SHOWN and newest[0].at == NOW + activity.MAX_PENDING + 4
        assert not activity.ActivityLog(store.db, days=0, max_rows=10).enabled
    finally:
        store.close()


def test_one_write_of_several_keys_and_a_row_of_the_former_format(tmp_path: Path) -> None:
    """Calls of two keys of one account and of an acting account, interleaved in one write: a
    row per (account, key), each key's calls in order, its id and name stored once; a row
    written before (one JSON array of whole calls) is still read."""
    store = RelayStore(tmp_path / "relay.db")
    try:
        log = activity.ActivityLog(store.db, days=30, max_rows=1000)
        k1, k2 = key_record("k1", "alice", "name k1"), key_record("k2", "alice", "")
        for i, key in enumerate((k1, k2, k1, None, k2)):
            log.add(_record(NOW - 50 + i)._replace(key=key, status=200 + i))
        log.add(_record(NOW - 40)._replace(key=None, account="carol", status=299))
        assert log.flush() == 6
        rows = store.db.all("SELECT account, calls, data FROM activity_batches ORDER BY first_at")
        assert [(r["account"], r["calls"]) for r in rows] == [
            ("alice", 2),
            ("alice", 2),
            ("", 1),
            ("carol", 1),
        ]
        assert '"key":["k1","name k1"]' in rows[0]["data"] and "10.0.0.1" in rows[0]["data"]
        store.db.run(
            "INSERT INTO activity_batches (id, account, first_at, last_at, calls, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                "old",
                "alice",
                NOW - 100,
                NOW - 100,
                1,
                '[[%r,"k0","old key","w9","GET","/get",404,2.5,"10.0.0.9"]]' % (NOW - 100),
            ),
        )
        found = activity.find(store.db, "alice", activity.Filter())
        assert [(a.key_id, a.key_name, a.status) for a in found] == [
            ("k2", "", 204),
            ("k1", "name k1", 202),
            ("k2", "", 201),
            ("k1", "name k1", 200),
            ("k0", "old key", 404),
        ]
        assert found[-1].world == "w9" and found[-1].peer == "10.0.0.9" and found[-1].ms == 2.5
        assert [a.status for a in activity.find(store.db, "carol", activity.Filter())] == [299]
        assert activity.find(store.db, "", activity.Filter())[0].key_id == ""
    finally:
        store.close()
