"""Pure rules of the dashboard: where a sign-in may send you back to, the path prefix setting,
the scope groups of the key form, a world's requests per minute, the JSON placed in pages,
and sign-in tokens and sessions over a store (once, expiry, sign-out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vttrelay.dashboard.scopes import routes_by_scope, scope_groups
from vttrelay.dashboard.sessions import (
    end_session,
    issue_signin_token,
    redeem_signin_token,
    session_viewer,
)
from vttrelay.dashboard.views import json_data, safe_next, with_query
from vttrelay.relay.config import normalize_base_path
from vttrelay.relay.link.connection import WorldConnection
from vttrelay.relay.routes import ALL_SCOPES, DEFAULT_SCOPES
from vttrelay.relay.store import RelayStore


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/pair/ABCD2345", "/pair/ABCD2345"),
        ("/dashboard/keys?x=1", "/dashboard/keys?x=1"),
        ("//evil.example/x", ""),
        ("https://evil.example/", ""),
        ("/\\evil.example", ""),
        ("", ""),
        (None, ""),
        ("/a\nb", ""),
    ],
)
def test_safe_next_keeps_only_local_paths(text: str | None, expected: str) -> None:
    assert safe_next(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", ""), ("/", ""), ("vtt", "/vtt"), ("/vtt/", "/vtt"), ("/a/b-c_d.e~f", "/a/b-c_d.e~f")],
)
def test_base_path_is_normalized(text: str, expected: str) -> None:
    assert normalize_base_path(text) == expected


@pytest.mark.parametrize("text", ["/a b", "/../etc", "http://x/y", "/a?b", "/a%2F"])
def test_unsafe_base_paths_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        normalize_base_path(text)


def test_every_scope_is_in_one_group_with_its_routes() -> None:
    shown = [s.name for g in scope_groups() for s in g.scopes]
    assert sorted(shown) == sorted(ALL_SCOPES) and len(shown) == len(set(shown))
    info = {s.name: s for g in scope_groups() for s in g.scopes}
    assert all(info[s].default for s in DEFAULT_SCOPES)
    assert info["chat:read"].routes == routes_by_scope()["chat:read"] == ("GET /chat",)
    assert "POST /chat" in info["chat:write"].routes
    assert all(s.help for g in scope_groups() for s in g.scopes)


def _world() -> Any:
    world = WorldConnection.__new__(WorldConnection)
    world._minute = world._this_minute = world._last_minute = 0
    return world


def test_requests_per_minute_slides_over_two_wall_clock_minutes() -> None:
    world = _world()
    start = 60 * 1000.0  # the start of a minute
    for i in range(30):
        world._count_request(start + i)  # 30 requests in the first half of minute 1000
    assert world.requests_per_minute(start + 30) == 30
    assert world.requests_per_minute(start + 90) == 15  # half of the last minute still counts
    world._count_request(start + 90)
    assert world.requests_per_minute(start + 90) == 16
    assert world.requests_per_minute(start + 200) == 0  # two minutes later: nothing


def test_json_data_cannot_close_its_script_element() -> None:
    text = str(json_data({"summary": "</script><script>alert(1)</script> & more"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert text.startswith('{"summary":"\\u003c/script\\u003e')


def test_callback_url_gets_the_exchange_code() -> None:
    assert with_query("https://bot.example/cb", code="ab12") == "https://bot.example/cb?code=ab12"
    assert with_query("https://bot.example/cb?s=1", code="x y") == (
        "https://bot.example/cb?s=1&code=x+y"
    )


def test_signin_tokens_work_once_and_sessions_end(store_target: Path | str) -> None:
    """On the relay store, SQLite and PostgreSQL."""
    store = RelayStore(store_target)
    try:
        token = issue_signin_token(store, "alice", ttl=60, now=1000.0)
        assert redeem_signin_token(store, token, now=1061.0) is None  # expired
        token = issue_signin_token(store, "alice", ttl=60, now=1000.0)
        opened = redeem_signin_token(store, token, session_ttl=100, now=1010.0)
        assert opened is not None
        secret, viewer = opened
        assert viewer.account == "alice" and not viewer.operator and viewer.sees("alice")
        assert not viewer.sees("bob") and not viewer.sees(None)
        assert redeem_signin_token(store, token, now=1011.0) is None  # once
        assert session_viewer(store, secret, now=1020.0) == viewer
        assert session_viewer(store, secret, now=1110.0) is None  # the session expired
        assert viewer.csrf_ok(viewer.csrf) and not viewer.csrf_ok("") and not viewer.csrf_ok(None)
        operator = redeem_signin_token(store, issue_signin_token(store))
        assert operator is not None and operator[1].operator and operator[1].sees("anyone")
        end_session(store, operator[0])
        assert session_viewer(store, operator[0]) is None
        assert session_viewer(store, "not-a-session") is None
    finally:
        store.close()
