"""GET /chat pages on the store's chat index: it reads only the messages of the page, answers
exactly as the former full scan (every message parsed, filtered, sorted, sliced) did for any
filters, limits, offsets, whispers and viewers, keeps the index in step with writes, updates and
deletes, and fills the index of a database written before it existed."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.support.world import call, older_world_file

from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World
from vttrelay.world.store import sqlite as store
from vttrelay.world.store.sqlite import Tx, WorldStore

GM, ARIA, BEN = "gmUser0000000001", "playerAria000001", "playerBen0000001"
ASSISTANT, TRUSTED = "assistantGM00001", "trustedPlayer001"  # added by `_add_users`
ACTORS = ("elaraWizard00001", "corvinWarlock001", "ghostActor000001")
ALIASES = ("Elara Quill", "Corvin", "Narrator", "Bob")


# The former GET /chat, verbatim but for its inputs: the oracle the index must agree with. ------


def _old_chat_type_of(doc: dict[str, Any]) -> int:
    flags = doc.get("flags") or {}
    value = (flags.get("vttrelay") or {}).get("chatType", 0)
    return int(value) if isinstance(value, int | float) else 0


def _old_can_see(user: dict[str, Any] | None, doc: dict[str, Any]) -> bool:
    whisper = doc.get("whisper") or []
    if not whisper or documents.is_gm(user):
        return True
    assert user is not None
    return user["_id"] in whisper or doc.get("author") == user["_id"]


def _old_speaker_matches(doc: dict[str, Any], wanted: str) -> bool:
    speaker = doc.get("speaker") or {}
    actor = speaker.get("actor")
    return speaker.get("alias") == wanted or (
        actor is not None and wanted in (actor, documents.actor_uuid(str(actor)))
    )


def _old_int_param(value: Any, default: int) -> int:
    if isinstance(value, bool) or value is None:
        return default
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        return default
    return max(0, number)


def old_chat_messages(tx: Tx, user: dict[str, Any] | None, params: dict[str, Any]) -> Any:
    limit = _old_int_param(params.get("limit"), 10) or 10
    offset = _old_int_param(params.get("offset"), 0)
    chat_type = params.get("chatType")
    speaker = params.get("speaker")
    docs = tx.all("ChatMessage")
    if user is not None:
        docs = [d for d in docs if _old_can_see(user, d)]
    if chat_type is not None and chat_type != "":
        wanted_type = _old_int_param(chat_type, -1)
        docs = [d for d in docs if _old_chat_type_of(d) == wanted_type]
    if isinstance(speaker, str) and speaker:
        docs = [d for d in docs if _old_speaker_matches(d, speaker)]
    ordered = [
        d
        for _, d in sorted(
            enumerate(docs), key=lambda p: (p[1].get("timestamp", 0), p[0]), reverse=True
        )
    ]
    users = documents.users_by_id(tx)
    page = ordered[offset : offset + limit]
    return {
        "success": True,
        "data": {
            "messages": [documents.message_to_api(d, users) for d in page],
            "total": len(ordered),
            "offset": offset,
            "limit": limit,
        },
    }


# Random worlds and requests ---------------------------------------------------------------------


def _add_users(world: World) -> None:
    with world.store.transaction() as tx:
        tx.put("User", {"_id": ASSISTANT, "name": "Assistant", "role": 3})
        tx.put("User", {"_id": TRUSTED, "name": "Trusted", "role": 2})


def _random_message(rng: random.Random, n: int) -> dict[str, Any]:
    """A ChatMessage in the stored shape, with the fields the list reads drawn from small sets
    (so that timestamps tie and filters match often)."""
    users = (GM, ARIA, BEN, ASSISTANT, TRUSTED)
    doc: dict[str, Any] = {
        "_id": f"msg{n:013d}",
        "type": "base",
        "content": f"message {n}",
        "author": rng.choice((*users, None)),
        "flavor": "",
        "rolls": [],
    }
    if rng.random() < 0.9:
        doc["timestamp"] = rng.choice((1000, 2000, 2000.5, 3000, rng.randrange(10**12)))
    if rng.random() < 0.4:
        doc["whisper"] = rng.sample(users, rng.randrange(0, 3))
    elif rng.random() < 0.5:
        doc["whisper"] = []
    if rng.random() < 0.8:
        speaker: dict[str, Any] = {"scene": None, "token": None}
        speaker["actor"] = rng.choice((*ACTORS, None))
        if rng.random() < 0.7:
            speaker["alias"] = rng.choice(ALIASES)
        doc["speaker"] = speaker
    if rng.random() < 0.85:
        doc["flags"] = {"vttrelay": {"chatType": rng.choice((0, 1, 2, 3, 4, 1.0))}}
    elif rng.random() < 0.5:
        doc["flags"] = {}
    return doc


def _random_params(rng: random.Random, count: int) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if rng.random() < 0.7:
        params["userId"] = rng.choice((GM, ARIA, BEN, ASSISTANT, TRUSTED, "Aria", "ben"))
    if rng.random() < 0.8:
        params["limit"] = rng.choice((0, 1, 2, 3, 10, 1000, count, 2.5, "4"))
    if rng.random() < 0.7:
        params["offset"] = rng.choice((0, 1, 5, rng.randrange(count + 3), count, 10**6, 1.5))
    if rng.random() < 0.5:
        params["chatType"] = rng.choice((0, 1, 2, 3, 4, 5, "", "2", -1, 1.0))
    if rng.random() < 0.5:
        params["speaker"] = rng.choice(
            (*ALIASES, *ACTORS, *(f"Actor.{a}" for a in ACTORS), "", "Nobody", "Actor.None")
        )
    return params


async def _assert_same_as_full_scan(world: World, params: dict[str, Any]) -> None:
    reply = await call(world, "chat-messages", **params)
    with world.store.transaction() as tx:
        ref = params.get("userId")
        user = documents.find_user(tx, ref) if ref is not None else None
        expected = old_chat_messages(tx, user, params)
    got = {k: v for k, v in reply.items() if k not in ("type", "requestId")}
    assert orjson.dumps(got) == orjson.dumps(expected), params


async def test_pages_equal_the_full_scan_for_random_worlds_and_requests(world: World) -> None:
    rng = random.Random(20261124)
    _add_users(world)
    next_id = 0
    for _round in range(6):
        with world.store.transaction() as tx:
            for _ in range(rng.randrange(5, 40)):
                tx.put("ChatMessage", _random_message(rng, next_id))
                next_id += 1
            existing = [d["_id"] for d in tx.all("ChatMessage")]
            for doc_id in rng.sample(existing, min(len(existing), 4)):  # updates keep their place
                tx.put("ChatMessage", {**_random_message(rng, 0), "_id": doc_id})
            for doc_id in rng.sample(existing, min(len(existing), 2)):
                tx.delete("ChatMessage", doc_id)
        for _ in range(60):
            await _assert_same_as_full_scan(world, _random_params(rng, next_id))


async def test_messages_sent_through_the_actions_page_as_before(world: World) -> None:
    """Messages made by chat-send (whispers by name, speakers, chat types, same-millisecond
    ties), deleted one by one, then flushed."""
    rng = random.Random(7)
    _add_users(world)
    for n in range(40):
        params: dict[str, Any] = {"content": f"m{n}", "userId": rng.choice((GM, ARIA, BEN))}
        if rng.random() < 0.4:
            params["whisper"] = rng.sample(["Aria", "Ben", GM], rng.randrange(1, 3))
        if rng.random() < 0.5:
            params["speaker"] = rng.choice(ACTORS[:2])
        if rng.random() < 0.5:
            params["chatType"] = rng.randrange(5)
        assert "error" not in await call(world, "chat-send", **params)
    for _ in range(80):
        await _assert_same_as_full_scan(world, _random_params(rng, 40))
    with world.store.transaction() as tx:
        ids = [d["_id"] for d in tx.all("ChatMessage")]
    for doc_id in ids[::3]:
        assert "error" not in await call(world, "chat-delete", messageId=doc_id)
    for _ in range(40):
        await _assert_same_as_full_scan(world, _random_params(rng, 40))
    assert "error" not in await call(world, "chat-flush")
    await _assert_same_as_full_scan(world, {"userId": ARIA})
    assert (await call(world, "chat-messages"))["data"]["total"] == 0


# Cost: what the page needs, not the whole history --------------------------------------------


class _CountingOrjson:
    """Stands in for `orjson` in the store module: counts the chat messages parsed."""

    def __init__(self) -> None:
        self.chat_parsed = 0

    def loads(self, raw: bytes | str) -> Any:
        doc = orjson.loads(raw)
        if isinstance(doc, dict) and str(doc.get("_id", "")).startswith("msg"):
            self.chat_parsed += 1
        return doc

    def dumps(self, value: Any) -> bytes:
        return orjson.dumps(value)


async def test_a_page_parses_only_its_messages(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    _add_users(world)
    with world.store.transaction() as tx:
        for n in range(5000):
            tx.put("ChatMessage", _random_message(rng, n))
    counting = _CountingOrjson()
    monkeypatch.setattr(store, "orjson", counting)
    for params in (
        {"limit": 10},
        {"limit": 10, "userId": ARIA},
        {"limit": 10, "offset": 20, "chatType": 1, "userId": BEN},
        {"limit": 10, "speaker": "Corvin"},
    ):
        counting.chat_parsed = 0
        reply = await call(world, "chat-messages", **params)
        assert len(reply["data"]["messages"]) == 10 and reply["data"]["total"] > 30
        assert counting.chat_parsed == 10, params
    counting.chat_parsed = 0
    await call(world, "chat-messages", limit=10, offset=10**6)
    assert counting.chat_parsed == 0
    assert "error" not in await call(world, "chat-flush")  # deleting needs only the ids
    assert counting.chat_parsed == 0
    assert (await call(world, "chat-messages"))["data"]["total"] == 0


# The index follows the documents ---------------------------------------------------------------


def test_the_index_follows_writes_and_discarded_transactions(tmp_path: Path) -> None:
    db = WorldStore(tmp_path / "w.db")

    def page(viewer: str | None = None, **filters: Any) -> tuple[int, list[str]]:
        with db.transaction() as tx:
            total, docs = tx.chat_page(
                viewer=viewer,
                chat_type=filters.get("chat_type"),
                speaker=filters.get("speaker"),
                offset=0,
                limit=100,
            )
        return total, [d["_id"] for d in docs]

    with db.transaction() as tx:
        tx.put("ChatMessage", {"_id": "a", "timestamp": 1, "whisper": ["u1"], "author": "u2"})
        tx.put("ChatMessage", {"_id": "b", "timestamp": 2, "speaker": {"alias": "Bo"}})
    assert page() == (2, ["b", "a"])
    assert page("u1") == page("u2") == (2, ["b", "a"]) and page("u3") == (1, ["b"])
    with db.transaction() as tx:  # a replace changes the index rows, keeps the seq
        tx.put("ChatMessage", {"_id": "a", "timestamp": 2, "speaker": {"actor": "x"}})
    assert page() == (2, ["b", "a"]) and page("u3") == (2, ["b", "a"])
    assert page(speaker="Actor.x") == (1, ["a"]) and page(speaker="Bo") == (1, ["b"])
    with pytest.raises(RuntimeError), db.transaction() as tx:
        tx.put("ChatMessage", {"_id": "c", "timestamp": 9})
        tx.delete("ChatMessage", "b")
        raise RuntimeError("discarded")
    assert page() == (2, ["b", "a"])
    with db.transaction() as tx:
        tx.delete("ChatMessage", "b")
        tx.put("ChatMessage", {"_id": "d", "timestamp": 0, "flags": {"vttrelay": {"chatType": 2}}})
        tx.delete("ChatMessage", "d")  # put and deleted in one transaction: never indexed
    assert page() == (1, ["a"]) and page(chat_type=2) == (0, [])
    with db.transaction() as tx:
        rows = tx._conn.execute("SELECT COUNT(*) FROM chat_audience").fetchone()
    assert rows == (0,)
    db.close()


def test_migration_fills_the_index_of_an_older_database(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    rng = random.Random(11)
    docs = [_random_message(rng, n) for n in range(300)]
    older_world_file(path, "0003", [("ChatMessage", doc) for doc in docs])
    db = WorldStore(path)  # applies 0003
    with db.transaction() as tx:
        for viewer in (None, ARIA, BEN):
            user = None if viewer is None else {"_id": viewer, "role": 1}
            visible = [d for d in docs if _old_can_see(user, d)]
            expected = sorted(
                enumerate(visible), key=lambda p: (p[1].get("timestamp", 0), p[0]), reverse=True
            )
            total, page = tx.chat_page(
                viewer=viewer, chat_type=None, speaker=None, offset=3, limit=50
            )
            assert total == len(visible)
            assert [d["_id"] for d in page] == [d["_id"] for _, d in expected[3:53]]
    db.close()


# Messages the world's own actions never write (a document created or updated raw) ------------


def test_odd_stored_fields_have_one_meaning() -> None:
    """Where the former scan raised (a `speaker` that is not an object, flags that are not
    objects, timestamps that are not numbers) or read a string `whisper` as a substring test,
    the rules give one total meaning: no speaker, chat type 0, time 0, a whisper with no
    recipient (its author and game masters see it)."""
    odd: dict[str, Any] = {
        "whisper": "playerAria000001",
        "author": 5,
        "speaker": "Bob",
        "flags": {"vttrelay": "x"},
        "timestamp": None,
    }
    assert chat_rules.message_audience(odd) == []
    assert chat_rules.speaker_keys(odd) == (None, None, None)
    assert chat_rules.chat_type_of(odd) == 0 and chat_rules.chat_type_of({"flags": 3}) == 0
    assert chat_rules.message_time(odd) == 0 and chat_rules.message_time({"timestamp": "9"}) == 0
    assert chat_rules.message_time({"timestamp": True}) == 1
    assert chat_rules.message_time({"timestamp": 2**64 - 1}) == float(2**64 - 1)
    assert not documents.can_see_message({"_id": ARIA, "role": 1}, odd)
    assert documents.can_see_message({"_id": ARIA, "role": 1}, {**odd, "author": ARIA})
    assert documents.can_see_message({"_id": GM, "role": 4}, odd)
    assert chat_rules.index_values({"flags": {"vttrelay": {"chatType": 1e30}}}).chat_type is None
    assert chat_rules.speaker_matches({"speaker": {"actor": 7}}, "Actor.7")
    assert not chat_rules.speaker_matches({"speaker": {"actor": 7}}, "7")


async def test_odd_stored_messages_are_listed(world: World) -> None:
    with world.store.transaction() as tx:
        tx.put("ChatMessage", {"_id": "odd1", "speaker": "Bob", "timestamp": "late"})
        tx.put("ChatMessage", {"_id": "odd2", "whisper": "x", "author": ARIA, "timestamp": 5})
        tx.put("ChatMessage", {"_id": "odd3", "flags": {"vttrelay": {"chatType": 2**64 - 1}}})
    reply = await call(world, "chat-messages", userId=ARIA, chatType=2**64 - 1, offset=2**70)
    assert reply["data"]["total"] == 0 and reply["data"]["messages"] == []
    reply = await call(world, "chat-messages", userId=BEN, limit=5)
    assert [m["id"] for m in reply["data"]["messages"]] == ["odd3", "odd1"]
    reply = await call(world, "chat-messages", userId=ARIA, limit=5)
    assert [m["id"] for m in reply["data"]["messages"]] == ["odd2", "odd3", "odd1"]
