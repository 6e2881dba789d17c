"""Pure event rules: naming and unwrapping, chat types, user visibility, filters, the event log."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from vttrelay import protocol
from vttrelay.relay.events.model import (
    EventFilter,
    EventLog,
    Gap,
    MessageIndex,
    StreamEvent,
    Viewer,
    can_see,
    chat_type_of,
    parse_hooks,
    parse_last_event_id,
    resolve_user,
    sse_frame,
    unwrap,
)

GM = Viewer("gm00000000000000", "Gamemaster", 4)
ALICE = Viewer("alice00000000000", "Alice", 1)
BOB = Viewer("bob0000000000000", "Bob", 1)


def message(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "m1",
        "uuid": "ChatMessage.m1",
        "content": "hello",
        "speaker": {"scene": None, "actor": None, "token": None},
        "timestamp": 1,
        "whisper": [],
        "type": "base",
        "author": {"id": GM.id, "name": GM.name},
        "flavor": "",
        "isRoll": False,
        "rolls": [],
        "flags": {},
    }
    base.update(over)
    return base


def chat(event_type: str, data: dict[str, Any]) -> StreamEvent:
    event = unwrap({"type": "chat-event", "data": {"eventType": event_type, "data": data}})
    assert event is not None
    return event


# unwrap ------------------------------------------------------------------------------------------


def test_chat_events_are_named_by_event_type_and_carry_the_bare_message() -> None:
    msg = message()
    for kind in ("create", "update"):
        event = chat(kind, msg)
        assert (event.channel, event.name, event.data) == ("chat-events", f"chat-{kind}", msg)
        assert event.subject == msg
    deleted = chat("delete", {"id": "m1"})
    assert (deleted.name, deleted.data, deleted.subject) == ("chat-delete", {"id": "m1"}, None)


def test_other_channels_unwrap_data() -> None:
    roll = {"id": "r1", "user": {"id": "u", "name": "U"}, "rollTotal": 12}
    assert unwrap({"type": "roll-data", "data": roll}) == StreamEvent("roll-events", "roll", roll)
    hook = {"hook": "createActor", "args": [{"_id": "a"}]}
    assert unwrap({"type": "hook-event", "data": hook}) == StreamEvent("hooks", "createActor", hook)
    combat = {"eventType": "start", "encounterId": "e1", "round": 0}
    assert unwrap({"type": "combat-event", "data": combat}) == StreamEvent(
        "combat-events", "combat-start", combat
    )
    actor = {"eventType": "item-add", "actorUuid": "Actor.a"}
    assert unwrap({"type": "actor-event", "data": actor}) == StreamEvent(
        "actor-events", "actor-item-add", actor
    )
    scene = {"eventType": "token-create", "sceneId": "s1"}
    assert unwrap({"type": "scene-event", "data": scene}) == StreamEvent(
        "scene-events", "scene-token-create", scene
    )


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "nope", "data": {}},
        {"type": "chat-event"},
        {"type": "chat-event", "data": {"eventType": "create", "data": "x"}},
        {"type": "chat-event", "data": {"data": {"id": "m"}}},
        {"type": "hook-event", "data": {"args": []}},
        {"type": "combat-event", "data": {"eventType": ""}},
        {"type": "actor-event", "data": {"eventType": 3}},
    ],
)
def test_malformed_frames_are_dropped(frame: dict[str, Any]) -> None:
    assert unwrap(frame) is None


def test_payload_at_top_level_is_tolerated() -> None:
    event = unwrap({"type": "scene-event", "eventType": "scene-activate", "sceneId": "s"})
    assert event is not None and event.name == "scene-scene-activate"


# chat types and visibility -----------------------------------------------------------------------


def test_chat_type_is_read_from_our_flag_or_derived() -> None:
    assert chat_type_of(message(flags={"vttrelay": {"chatType": 2}})) == 2
    assert chat_type_of(message(flags={"vttrelay": {"chatType": 9}})) == 0  # invalid: derived
    assert chat_type_of(message(flags={"vttrelay": {"chatType": True}})) == 0
    assert chat_type_of(message(isRoll=True, whisper=["x"])) == 4
    assert chat_type_of(message(whisper=["x"])) == 3
    assert chat_type_of(message(speaker={"actor": "a1", "alias": "Bree"})) == 1
    assert chat_type_of(message()) == 0


def test_visibility_public_author_recipient_gm() -> None:
    public = message()
    to_alice = message(whisper=[ALICE.id])
    by_bob = message(whisper=[GM.id], author={"id": BOB.id, "name": "Bob"})
    assert can_see(public, BOB)
    assert can_see(to_alice, ALICE) and not can_see(to_alice, BOB)
    assert can_see(by_bob, BOB) and not can_see(by_bob, ALICE)
    assert can_see(to_alice, GM)
    assert can_see(to_alice, Viewer("a", "Assistant", 3))
    assert not can_see(message(whisper=[GM.id], author=None), BOB)


def test_resolve_user_by_id_then_case_insensitive_name() -> None:
    users = [
        {"id": GM.id, "name": "Gamemaster", "role": 4, "active": True},
        {"id": ALICE.id, "name": "Alice", "role": 1, "active": False},
    ]
    assert resolve_user(users, ALICE.id) == ALICE
    assert resolve_user(users, "gamemaster") == GM
    assert resolve_user(users, "nobody") is None
    assert resolve_user(None, "Alice") is None


# filters -----------------------------------------------------------------------------------------


def test_chat_filters() -> None:
    ooc = chat("create", message())
    bree = chat("create", message(speaker={"actor": "a1", "alias": "Bree"}))
    whisper = chat("create", message(whisper=[ALICE.id]))
    roll = chat("create", message(isRoll=True))
    emote = chat("update", message(flags={"vttrelay": {"chatType": 2}}))
    everything = [ooc, bree, whisper, roll, emote]

    def kept(f: EventFilter) -> list[StreamEvent]:
        return [e for e in everything if f.matches(e)]

    assert kept(EventFilter()) == everything
    assert kept(EventFilter(speaker="Bree")) == [bree]
    assert kept(EventFilter(speaker="a1")) == [bree]
    assert kept(EventFilter(speaker="Actor.a1")) == [bree]
    assert kept(EventFilter(speaker="bree")) == []
    assert kept(EventFilter(chat_type=0)) == [ooc]
    assert kept(EventFilter(chat_type=1)) == [bree]
    assert kept(EventFilter(chat_type=2)) == [emote]
    assert kept(EventFilter(chat_type=3)) == [whisper]
    assert kept(EventFilter(chat_type=4)) == [roll]
    assert kept(EventFilter(whisper_only=True)) == [whisper]
    assert kept(EventFilter(viewer=BOB)) == [ooc, bree, roll, emote]
    assert kept(EventFilter(viewer=ALICE)) == everything
    assert kept(EventFilter(viewer=GM, whisper_only=True)) == [whisper]


def test_chat_deletes_are_filtered_like_the_message_they_delete() -> None:
    index = MessageIndex(capacity=2)
    secret = message(id="s", whisper=[ALICE.id])
    index.observe(chat("create", secret))
    delete = index.observe(chat("delete", {"id": "s"}))
    assert delete.subject is not None
    assert not EventFilter(viewer=BOB).matches(delete)
    assert EventFilter(viewer=ALICE).matches(delete)
    assert EventFilter(whisper_only=True).matches(delete)
    assert delete.data == {"id": "s"}
    # never seen (or forgotten): delivered only where no content filter needs the message
    unknown = index.observe(chat("delete", {"id": "zzz"}))
    assert unknown.subject is None
    assert EventFilter(viewer=BOB).matches(unknown)
    assert not EventFilter(speaker="Bree").matches(unknown)
    for i in range(3):
        index.observe(chat("create", message(id=f"m{i}")))
    assert len(index) == 2


def test_filters_of_other_channels() -> None:
    mine = unwrap({"type": "roll-data", "data": {"user": {"id": ALICE.id}}})
    theirs = unwrap({"type": "roll-data", "data": {"user": {"id": BOB.id}}})
    assert mine is not None and theirs is not None
    assert EventFilter(viewer=ALICE).matches(mine)
    assert not EventFilter(viewer=ALICE).matches(theirs)

    create = unwrap({"type": "hook-event", "data": {"hook": "createActor", "args": []}})
    pause = unwrap({"type": "hook-event", "data": {"hook": "pauseGame", "args": []}})
    assert create is not None and pause is not None
    hooks = EventFilter(hooks=parse_hooks("createActor, updateActor"))
    assert hooks.matches(create) and not hooks.matches(pause)

    e1 = unwrap({"type": "combat-event", "data": {"eventType": "turn", "encounterId": "e1"}})
    assert e1 is not None
    assert EventFilter(encounter_id="e1").matches(e1)
    assert not EventFilter(encounter_id="e2").matches(e1)

    actor = unwrap({"type": "actor-event", "data": {"eventType": "update", "actorUuid": "Actor.a"}})
    assert actor is not None
    assert EventFilter(actor_uuid="Actor.a").matches(actor)
    assert not EventFilter(actor_uuid="Actor.b").matches(actor)

    scene = unwrap({"type": "scene-event", "data": {"eventType": "token-create", "sceneId": "s1"}})
    assert scene is not None
    assert EventFilter(scene_id="s1").matches(scene)
    assert EventFilter(scene_id="Scene.s1").matches(scene)
    assert not EventFilter(scene_id="s2").matches(scene)
    # a filter of another channel does not apply
    assert EventFilter(encounter_id="zz", actor_uuid="zz").matches(scene)


def test_parse_hooks_and_last_event_id() -> None:
    assert parse_hooks(None) is None
    assert parse_hooks(" , ") is None
    assert parse_hooks("a,b") == frozenset({"a", "b"})
    assert parse_last_event_id("12") == 12
    assert parse_last_event_id(" 7 ") == 7
    assert parse_last_event_id("abc") is None
    assert parse_last_event_id("-3") is None
    assert parse_last_event_id(None) is None


# framing and the log -----------------------------------------------------------------------------


def test_sse_frame_bytes() -> None:
    data = orjson.dumps({"content": "two\nlines"})
    assert sse_frame("chat-create", data, 3) == (
        b'id: 3\nevent: chat-create\ndata: {"content":"two\\nlines"}\n\n'
    )
    assert sse_frame("connected", b"{}") == b"event: connected\ndata: {}\n\n"


def test_logged_event_encodings() -> None:
    log = EventLog(4)
    logged = log.append(chat("create", message(content="hi")))
    assert logged.seq == 1
    assert logged.sse.startswith(b"id: 1\nevent: chat-create\ndata: {")
    size = f"{len(logged.sse):x}".encode()
    assert logged.sse_chunk == size + b"\r\n" + logged.sse + b"\r\n"
    ws = orjson.loads(logged.ws)
    assert ws == {
        "type": "chat-event",
        "event": "chat-create",
        "id": 1,
        "data": message(content="hi"),
    }


def test_event_log_replay_and_gaps() -> None:
    log = EventLog(3)
    assert log.since(0) == (0, None, [])
    for i in range(5):
        log.append(StreamEvent("hooks", f"h{i}", {}))
    assert log.last_seq == 5 and log.oldest_seq == 3
    cursor, gap, events = log.since(3)
    assert (cursor, gap, [e.seq for e in events]) == (3, None, [4, 5])
    assert log.since(5) == (5, None, [])
    cursor, gap, events = log.since(2)
    assert gap is None and [e.seq for e in events] == [3, 4, 5]
    cursor, gap, events = log.since(0)
    assert gap == Gap(1, 3) and [e.seq for e in events] == [3, 4, 5]
    assert gap.as_json() == {"missedFrom": 1, "oldestAvailable": 3}
    # from a position this log never reached (the relay restarted): everything, after a gap
    cursor, gap, events = log.since(99)
    assert (cursor, gap, [e.seq for e in events]) == (0, Gap(100, 3), [3, 4, 5])


def test_event_log_without_history() -> None:
    log = EventLog(0)
    log.append(StreamEvent("hooks", "h", {}))
    assert len(log) == 0
    assert log.since(0) == (0, Gap(1, None), [])
    assert protocol.HOOK_CHANNEL == "hooks"


def test_event_log_is_bounded_in_bytes_too() -> None:
    log = EventLog(100, max_bytes=250)
    for i in range(10):
        log.append(StreamEvent("hooks", "h", {"pad": "x" * 90, "i": i}))  # ~110 bytes each
    assert len(log) == 2 and log.size <= 250 and log.oldest_seq == 9
    log.append(StreamEvent("hooks", "h", {"pad": "x" * 1000}))  # bigger than the bound: kept
    assert len(log) == 1 and log.oldest_seq == 11
