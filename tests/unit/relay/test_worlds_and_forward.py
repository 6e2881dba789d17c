"""Pure helpers of the world socket and the forward path: Origin as publicUrl, IP allow-lists,
the 400 rule of replies, request ids and the frame a world receives (wire-protocol §2-4), which
token may connect as which client id (DESIGN §6 item 8)."""

from __future__ import annotations

import orjson
import pytest

from vttrelay.relay.core import build_frame, new_request_id
from vttrelay.relay.link.handshake import connected_before, ip_allowed, public_url, token_fits
from vttrelay.relay.link.pending import Reply
from vttrelay.relay.routes import ROUTES
from vttrelay.relay.store import KeyRecord, KnownClient, TokenRecord


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("http://foundry.local:30000", "http://foundry.local:30000"),
        ("https://vtt.example.com", "https://vtt.example.com"),
        ("https://vtt.example.com/game", None),  # not a bare origin
        ("ftp://vtt.example.com", None),
        ("null", None),
        ("", None),
        (None, None),
        ("https://" + "a" * 510, None),  # over 512 characters
    ],
)
def test_public_url_is_a_bare_http_origin(origin: str | None, expected: str | None) -> None:
    assert public_url(origin) == expected


@pytest.mark.parametrize(
    ("allow", "host", "ok"),
    [
        ("", "203.0.113.9", True),
        ("  ", "203.0.113.9", True),
        ("203.0.113.9", "203.0.113.9", True),
        ("203.0.113.0/24, 10.0.0.1", "203.0.113.77", True),
        ("10.0.0.0/8", "203.0.113.9", False),
        ("::1", "::1", True),
        ("garbage, 127.0.0.1", "127.0.0.1", True),
        ("10.0.0.0/8", "not-an-ip", False),
    ],
)
def test_ip_allow_list(allow: str, host: str, ok: bool) -> None:
    assert ip_allowed(allow, host) is ok


@pytest.mark.parametrize(
    ("frame", "is_error"),
    [
        ({"error": "Actor not found"}, True),
        ({"error": ""}, True),
        ({"error": None}, False),
        ({"error": {"message": "x"}}, False),
        ({"success": False}, False),
        ({"data": {"error": "nested"}}, False),
    ],
)
def test_reply_is_an_error_only_with_a_top_level_string(frame: dict, is_error: bool) -> None:
    assert Reply(orjson.dumps(frame), frame).is_error is is_error


def test_request_ids_are_unique_and_prefixed() -> None:
    ids = [new_request_id("skill-check") for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("skill-check_") for i in ids)


def _key(**kw: object) -> KeyRecord:
    base: dict = dict(
        id="key_1", account="a", name="", scopes=("dnd5e", "chat:read"), client_ids=(),
        user_id=None, expires_at=None, enabled=True, rate_per_minute=None, created_at=0.0,
        last_used_at=None, request_count=0,
    )  # fmt: skip
    base.update(kw)
    return KeyRecord(**base)


def test_frame_is_flat_with_scopes_and_forced_user() -> None:
    route = next(r for r in ROUTES if r.path == "/dnd5e/skill-check")
    params = {"clientId": "w1", "actorUuid": "Actor.a", "skill": "prc", "userId": "gm"}
    frame = build_frame(route, params, _key())
    assert frame.pop("requestId").startswith("skill-check_")
    assert frame == {
        "type": "skill-check",
        "actorUuid": "Actor.a",
        "skill": "prc",
        "userId": "gm",
        "_scopes": ["dnd5e", "chat:read"],
    }
    forced = build_frame(route, params, _key(user_id="player"))
    assert forced["userId"] == "player"
    no_user = build_frame(route, {"actorUuid": "A"}, _key(user_id="player"))
    assert no_user["userId"] == "player" and "data" not in no_user


def test_a_type_parameter_never_replaces_the_action() -> None:
    route = next(r for r in ROUTES if r.path == "/chat" and r.method == "GET")
    frame = build_frame(route, {"type": "evil", "limit": 10}, _key())
    assert frame["type"] == "chat-messages" and frame["limit"] == 10


def _token(token_id: str, client_id: str) -> TokenRecord:
    return TokenRecord(token_id, "default", client_id, "", "", 0.0, None)


def test_a_token_fits_only_its_own_client_id_and_a_reserved_id_only_its_token() -> None:
    mine = _token("tok_1", "fvtt_a")
    assert token_fits(mine, "fvtt_a", {})
    assert not token_fits(mine, "fvtt_b", {})  # another world's id, same account or not
    demo = _token("tok_demo", "vttrelay-demo")
    older = _token("tok_old", "vttrelay-demo")
    reserved = {"vttrelay-demo": "tok_demo"}
    assert token_fits(demo, "vttrelay-demo", reserved)
    assert not token_fits(older, "vttrelay-demo", reserved)  # only the token serve minted
    assert not token_fits(demo, "vttrelay-demo", {"vttrelay-demo": None})  # reserved for none
    assert token_fits(mine, "fvtt_a", reserved)


def test_a_world_has_connected_before_when_a_connection_was_recorded() -> None:
    def known(metadata: dict[str, str]) -> KnownClient:
        return KnownClient("w", "default", metadata, "", 0.0, 0.0)

    assert not connected_before(None)
    assert not connected_before(known({"worldTitle": "paired, never connected"}))
    assert connected_before(known({"ipAddress": "127.0.0.1:5000"}))
