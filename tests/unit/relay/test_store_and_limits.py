"""The relay store (keys, pairing codes, tokens, migrations) on SQLite and on PostgreSQL (every
store test runs against both: the `store_target` fixture), token buckets, the key cache."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import pytest
from tests.support.clock import FakeClock

from vttrelay.relay import peer_limits
from vttrelay.relay.accounts.key_cache import KeyCache, UsageCounter
from vttrelay.relay.backends.local import LocalCounters
from vttrelay.relay.config import RelayConfig
from vttrelay.relay.core import retry_after
from vttrelay.relay.ratelimit import TokenBuckets, peer_key
from vttrelay.relay.routes import GM_SCOPES
from vttrelay.relay.store import PAIRING_ALPHABET, PairingError, RelayStore, sha256_hex
from vttrelay.server.prepare import demo_key_path, make_demo_key, prepare


def test_keys_are_stored_hashed(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    key_id, secret = store.create_key(
        "acct", ["dnd5e", "dnd5e", "chat:read"], client_ids=["w1"], user_id="u", name="bot"
    )
    assert len(secret) == 64
    raw = [dict(row) for row in store.db.all("SELECT * FROM api_keys")]
    assert secret not in repr(raw) and sha256_hex(secret) in repr(raw)
    record = store.key_by_secret(secret)
    assert record is not None and record.id == key_id
    assert record.scopes == ("dnd5e", "chat:read") and record.client_ids == ("w1",)
    assert record.user_id == "u" and record.name == "bot" and record.enabled
    assert store.key_by_secret("wrong") is None
    assert store.revoke_key(key_id) and not store.revoke_key(key_id)
    assert not store.key_by_secret(secret).enabled  # type: ignore[union-attr]
    assert [k.id for k in store.list_keys("acct")] == [key_id]
    assert store.list_keys("other") == []
    store.close()


def test_migrations_are_idempotent(store_target: Path | str) -> None:
    first = RelayStore(store_target)
    key_id, _ = first.create_key("a", ["dnd5e"])
    first.close()
    store = RelayStore(store_target)  # migrating again changes nothing
    tables = ["api_keys", "connection_tokens", "pairing_codes", "known_clients", "settings"]
    tables += ["pair_requests", "key_requests"]
    for table in tables:
        assert store.db.one(f"SELECT COUNT(*) AS n FROM {table}")["n"] == (table == "api_keys")
    assert [k.id for k in store.list_keys()] == [key_id]
    store.close()


def test_pairing_codes_single_use_and_expiry(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    codes = {store.create_pairing_code("acct") for _ in range(50)}
    assert len(codes) == 50
    assert all(len(c) == 6 and set(c) <= set(PAIRING_ALPHABET) for c in codes)
    assert not set("0O1I") & set(PAIRING_ALPHABET)
    code = codes.pop()
    pairing = store.redeem_pairing_code(code.lower(), metadata={"worldTitle": "T"})
    assert not isinstance(pairing, PairingError)
    assert pairing.account == "acct" and pairing.client_id.startswith("fvtt_")
    assert store.redeem_pairing_code(code) is PairingError.USED
    assert store.redeem_pairing_code("AAAAAA") is PairingError.INVALID
    old = store.create_pairing_code("acct", ttl=-1)
    assert store.redeem_pairing_code(old) is PairingError.EXPIRED
    token = store.token_by_secret(pairing.token)
    assert token is not None and token.client_id == pairing.client_id and token.name == "T"
    known = store.known_client(pairing.client_id)
    assert known is not None and known.metadata == {"worldTitle": "T"}
    assert store.revoke_token(pairing.token) is not None
    assert store.token_by_secret(pairing.token) is None
    assert store.revoke_token(pairing.token) is None
    store.close()


def test_token_buckets() -> None:
    buckets = TokenBuckets()
    assert [buckets.allow("k", 3, now=0.0) for _ in range(4)] == [True, True, True, False]
    assert buckets.allow("other", 3, now=0.0)
    assert not buckets.allow("k", 3, now=10.0)  # 10 s refill 0.5 token
    assert buckets.allow("k", 3, now=20.0)  # one token back after 20 s
    assert all(buckets.allow("z", 0, now=0.0) for _ in range(1000))
    assert [buckets.allow("p", 2, now=0.0, window=900) for _ in range(3)] == [True, True, False]


def test_retry_after_is_the_longest_wait_for_one_call_of_the_budget() -> None:
    # An empty bucket of N per minute gains one call every 60/N seconds: whole seconds, at least 1.
    assert [retry_after(n) for n in (1, 5, 7, 60, 120, 10_000)] == ["60", "12", "9", "1", "1", "1"]
    buckets = TokenBuckets()
    assert [buckets.allow("k", 5, now=0.0) for _ in range(6)][-1] is False
    assert buckets.allow("k", 5, now=11.9) is False
    assert buckets.allow("k", 5, now=12.0) is True  # after Retry-After, the call goes through


def test_has_token_looks_without_taking() -> None:
    buckets = TokenBuckets()
    assert all(buckets.has_token("k", 2, now=0.0, window=900) for _ in range(10))
    assert buckets.allow("k", 2, now=0.0, window=900) and buckets.allow("k", 2, now=0.0, window=900)
    assert not buckets.has_token("k", 2, now=0.0, window=900)
    assert not buckets.has_token("k", 2, now=400.0, window=900)  # 0.9 token back
    assert buckets.has_token("k", 2, now=450.0, window=900)  # one token back after 450 s
    assert buckets.has_token("z", 0, now=0.0)  # unlimited


def test_peer_key_counts_an_ipv6_host_by_its_64() -> None:
    assert peer_key("203.0.113.7") == "203.0.113.7"
    net = "2001:db8:1:2::/64"
    assert peer_key("2001:db8:1:2:aaaa::1") == peer_key("2001:db8:1:2:ffff::9") == net
    assert peer_key("2001:db8:1:3::1") != peer_key("2001:db8:1:2::1")
    assert peer_key("::ffff:203.0.113.7") == "203.0.113.7"
    assert peer_key("") == "" and peer_key("unix-socket") == "unix-socket"


def test_key_cache_caches_hits_and_misses(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    cache = KeyCache(store, ttl=60)
    key_id, secret = store.create_key("a", ["dnd5e"])
    assert cache.lookup(secret) is not None
    assert cache.lookup("unknown") is None
    store.revoke_key(key_id)
    assert cache.lookup(secret).enabled  # type: ignore[union-attr]  # still cached
    cache.ttl = 0
    cache.clear()
    assert not cache.lookup(secret).enabled  # type: ignore[union-attr]
    store.close()


async def test_unknown_keys_cost_the_address_a_budget_in_the_counters(tmp_path: Path) -> None:
    """An address may look up `unknown_per_minute` unknown secrets; the budget is its bucket in
    the relay's `Counters`, so two caches over one `Counters` (two instances over one Redis)
    share it. Known keys cost nothing; a spent budget reads nothing more."""
    store = RelayStore(tmp_path / "relay.db")
    counters = LocalCounters()
    here = KeyCache(store, ttl=60, unknown_per_minute=3, counters=counters)
    there = KeyCache(store, ttl=60, unknown_per_minute=3, counters=counters)
    _, secret = store.create_key("a", ["dnd5e"])
    guesses = [f"{n:064x}" for n in range(6)]
    assert await here.load(secret, "203.0.113.7") and here.cached(secret) is not None
    for cache, guess in zip((here, there, here), guesses[:3], strict=True):  # both instances
        assert await cache.load(guess, "203.0.113.7")
    bucket = peer_limits.bucket(peer_limits.UNKNOWN_KEYS, "203.0.113.7")
    assert not counters.has_token(bucket, 3)
    assert not await there.load(guesses[3], "203.0.113.7")  # the 4th, on the other instance
    assert there.missing(guesses[3])  # not read
    assert not await there.load(secret, "203.0.113.7")  # not yet known there: not read either
    assert await here.load(guesses[4], "203.0.113.8")  # another address has its own budget
    assert await there.load(guesses[5])  # no address (a tool): no budget
    unlimited = KeyCache(store, ttl=60, unknown_per_minute=3)  # no counters: no budget
    assert all([await unlimited.load(g, "203.0.113.7") for g in guesses])
    store.close()


def test_usage_counter_flushes_in_batches(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    key_id, _ = store.create_key("a", ["dnd5e"])
    usage = UsageCounter(store)
    for _ in range(5):
        usage.count(key_id)
    assert store.get_key(key_id).request_count == 0  # type: ignore[union-attr]
    usage.flush()
    record = store.get_key(key_id)
    assert record is not None and record.request_count == 5
    assert record.last_used_at is not None and record.last_used_at <= time.time()
    store.close()


def test_pairing_code_lives_ten_minutes(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    code = store.create_pairing_code("acct")
    row = store.db.one(
        "SELECT expires_at - created_at AS ttl, created_at FROM pairing_codes WHERE code = ?",
        (code,),
    )
    assert row["ttl"] == 600.0  # times are double precision on both backends
    assert abs(row["created_at"] - time.time()) < 60
    store.close()


def test_pairing_keeps_only_an_own_existing_client_id(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    store.create_connection_token("alice", "fvtt_alice")
    mine = store.redeem_pairing_code(store.create_pairing_code("alice"), "fvtt_alice")
    assert not isinstance(mine, PairingError) and mine.client_id == "fvtt_alice"
    theirs = store.redeem_pairing_code(store.create_pairing_code("bob"), "fvtt_alice")
    assert not isinstance(theirs, PairingError)
    assert theirs.client_id != "fvtt_alice" and theirs.account == "bob"
    assert store.known_client("fvtt_alice").account == "alice"  # type: ignore[union-attr]
    new = store.redeem_pairing_code(store.create_pairing_code("bob"), "fvtt_new")
    assert not isinstance(new, PairingError) and new.client_id == "fvtt_new"
    store.close()


def test_tokens_listed_and_revoked_by_id(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    first = store.create_connection_token("a", "w1", name="one", ip_allow="10.0.0.0/8")
    second = store.create_connection_token("b", "w2", name="two")
    tokens = store.list_tokens()
    assert [(t.account, t.client_id, t.name) for t in tokens] == [
        ("a", "w1", "one"),
        ("b", "w2", "two"),
    ]
    assert tokens[0].ip_allow == "10.0.0.0/8" and tokens[0].revoked_at is None
    assert [t.client_id for t in store.list_tokens("b")] == ["w2"]
    assert first not in repr(tokens) and sha256_hex(first) not in repr(tokens)
    one = tokens[0].id
    assert store.get_token(one) == tokens[0]
    assert store.live_token_ids({one, tokens[1].id}) == {one, tokens[1].id}
    assert store.revoke_token_id(one) and not store.revoke_token_id(one)
    assert not store.revoke_token_id("tok_nope")
    assert store.token_by_secret(first) is None and store.token_by_secret(second) is not None
    assert store.live_token_ids({one, tokens[1].id}) == {tokens[1].id}
    assert store.get_token(one).revoked_at is not None  # type: ignore[union-attr]
    store.close()


def redeem_at_once(code: str, *stores: RelayStore) -> list[object]:
    """Redeem one code from each store in its own thread, all released at the same moment."""
    results: list[object] = []
    start = threading.Barrier(len(stores))

    def redeem(store: RelayStore) -> None:
        start.wait()
        results.append(store.redeem_pairing_code(code))

    threads = [threading.Thread(target=redeem, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_a_code_minted_by_one_instance_is_redeemed_once_by_any(store_target: Path | str) -> None:
    """Two stores on one database (two relay instances): a code minted on one is accepted on
    the other, and when both redeem it at the same moment exactly one wins."""
    one, two = RelayStore(store_target), RelayStore(store_target)
    code = one.create_pairing_code("acct")
    pairing = two.redeem_pairing_code(code)
    assert not isinstance(pairing, PairingError) and pairing.account == "acct"
    assert one.token_by_secret(pairing.token) is not None
    assert one.redeem_pairing_code(code) is PairingError.USED
    for _ in range(5):
        results = redeem_at_once(two.create_pairing_code("acct"), one, two)
        assert sorted(r is PairingError.USED for r in results) == [False, True]
    one.close()
    two.close()


def test_a_failed_transaction_changes_nothing(store_target: Path | str) -> None:
    store = RelayStore(store_target)
    try:
        with store.transaction() as db:
            db.execute("INSERT INTO settings (key, value) VALUES (?, ?)", ("half", "written"))
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert store.get_setting("half") is None
    with store.transaction() as db:  # the connection is usable again
        db.execute("INSERT INTO settings (key, value) VALUES (?, ?)", ("whole", "100%"))
    assert store.get_setting("whole") == "100%"
    store.close()


def test_the_demo_key_is_made_once_per_data_dir_and_instance(
    store_target: Path | str, tmp_path: Path
) -> None:
    """`serve` makes the demo key (gm scopes) on the first start only, writes it owner-only to
    the data dir and never revokes it; instances sharing a database each get one of their own
    (on its own SQLite file the key has no instance part)."""
    store = RelayStore(store_target)
    shared = str(store_target)
    one = RelayConfig(port=3010, database=shared, data_dir=tmp_path)
    two = RelayConfig(port=3011, database=shared, data_dir=tmp_path)
    first, second = prepare(store, one, False), prepare(store, two, False)
    assert first.api_key and second.api_key and first.api_key != second.api_key
    assert first.signin_token and second.signin_token
    assert demo_key_path(one).read_text() == first.api_key + "\n"
    assert demo_key_path(one).stat().st_mode & 0o777 == 0o600
    assert demo_key_path(two).read_text() == second.api_key + "\n"
    restarted = prepare(store, one, False)
    assert (restarted.api_key, restarted.signin_token) == (None, None)
    assert restarted.key_file == demo_key_path(one)
    for key in (first.api_key, second.api_key):
        record = store.key_by_secret(key)
        assert record is not None and record.enabled and set(record.scopes) == set(GM_SCOPES)
    alone = RelayConfig(port=3012, data_dir=tmp_path / "alone")
    assert make_demo_key(store, alone) is not None and make_demo_key(store, alone) is None
    assert (tmp_path / "alone" / "demo-key").exists()
    assert {k.name for k in store.list_keys()} >= {"serve", f"serve @{socket.gethostname()}:3010"}
    store.close()


async def test_key_cache_reads_off_the_event_loop_and_refreshes(
    store_target: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret not seen yet is read in a worker thread (the loop keeps running; concurrent
    loads share one read); known keys are re-read in one batch by `refresh`, so a revocation
    made elsewhere is seen; an unknown secret is remembered as a miss for `ttl`."""
    store = RelayStore(store_target)
    clock = FakeClock()
    cache = KeyCache(store, ttl=5, clock=clock)
    key_id, secret = store.create_key("a", ["dnd5e"])
    reads: list[str] = []
    real = store.key_by_secret

    def slow(wanted: str) -> object:
        reads.append(wanted)
        time.sleep(0.2)  # a database across a slow network
        return real(wanted)

    monkeypatch.setattr(store, "key_by_secret", slow)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    beat = asyncio.ensure_future(ticker())
    assert cache.missing(secret)
    await asyncio.gather(cache.load(secret), cache.load(secret))
    beat.cancel()
    assert reads == [secret] and ticks >= 10  # one read, and the loop ran meanwhile
    assert not cache.missing(secret) and cache.lookup(secret).enabled  # type: ignore[union-attr]
    assert store.revoke_key(key_id)
    assert cache.lookup(secret).enabled  # type: ignore[union-attr]  # until the next refresh
    await cache.refresh()
    assert not cache.lookup(secret).enabled  # type: ignore[union-attr]
    await cache.load("unknown")
    assert not cache.missing("unknown") and cache.lookup("unknown") is None
    clock.advance(4.9)
    assert not cache.missing("unknown")  # the miss is remembered for `ttl`
    clock.advance(0.1)
    assert cache.missing("unknown")
    store.close()
