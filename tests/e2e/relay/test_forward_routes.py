"""Every forward route of the table, over a real relay and a real world socket.

For each route: the exact frame the world receives (declared parameters only, coerced types,
defaults, `_scopes`, a unique `requestId`, no invented `data`), and the relay's answer to a
success reply (200) and an error reply (400), both returned byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from vttrelay.relay.routes import MISSING, ROUTES, Param, Route

FORWARD = [r for r in ROUTES if r.mode == "forward"]
SAMPLES: dict[str | None, Any] = {
    "string": "text-value",
    "number": 3,
    "integer": 2,
    "boolean": True,
    "array": ["items", "spells"],
    "object": {"gp": 5, "sp": 3},
    None: "untyped-value",
}

# Odd spacing and key order: the relay must pass the bytes through untouched.
OK_TEMPLATE = '{"type":"TYPE-result", "requestId":"RID","data":{"ok":true,"n":1.50}}'
ERR_TEMPLATE = '{"type" : "TYPE-result","requestId":"RID", "error":"Nope: TYPE"}'
# Recorded module replies (wire-protocol §4.6).
SKILL_OK = (
    '{"type":"skill-check-result","requestId":"RID","data":{"actorUuid":'
    '"Actor.V5OF1QXHjaIy6iO8","skill":"prc","total":14,"formula":"1d20 + 0",'
    '"result":"14 + 0"}}'
)
SKILL_ERROR = (
    '{"type":"skill-check-result","requestId":"RID","error":"Invalid skill \'xyz\'. '
    "Valid skills: acr, ani, arc, ath, dec, his, ins, itm, inv, med, nat, prc, prf, "
    'per, rel, slt, ste, sur"}'
)


def fill(template: str, action: str | None, request_id: str) -> str:
    return template.replace("TYPE", str(action)).replace("RID", request_id)


def _sample(param: Param) -> Any:
    if param.name == "documentType":
        return "walls"  # a path value the canvas routes accept
    return f"{param.name}-value" if param.type == "string" else SAMPLES[param.type]


def _query_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return orjson.dumps(value).decode()
    return str(value)


def _request_for(
    route: Route, params: list[Param], query: dict[str, str]
) -> tuple[str, dict[str, str], dict[str, Any], dict[str, Any]]:
    """(path, query, body, values sent) with a sample value for each of `params`, each in the
    first place the route reads it from; `query` holds what is sent besides."""
    path = route.path
    query = dict(query)
    body: dict[str, Any] = {}
    sent: dict[str, Any] = {}
    for param in params:
        value = _sample(param)
        sent[param.name] = value
        if "path" in param.sources:
            path = path.replace("{" + param.name + "}", str(value))
        elif route.method != "GET" and "body" in param.sources:
            body[param.name] = value
        else:
            query[param.name] = _query_text(value)
    return path, query, body, sent


def _expected_frame(route: Route, sent: dict[str, Any], scopes: list[str | None]) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": route.action}
    for param in route.params:
        if param.name in sent:
            frame[param.name] = sent[param.name]
        elif param.name != "clientId" and param.default is not MISSING:
            frame[param.name] = param.default
    if route.document_types is not None:
        frame["className"] = route.document_types[sent["documentType"]]
    frame["_scopes"] = scopes
    return frame


@pytest.mark.parametrize("route", FORWARD, ids=[f"{r.method} {r.path}" for r in FORWARD])
async def test_route_frame_and_replies(relay: Any, route: Route) -> None:
    mode = {"error": False}

    def answer(frame: dict[str, Any]) -> str:
        template = ERR_TEMPLATE if mode["error"] else OK_TEMPLATE
        return fill(template, frame["type"], frame["requestId"])

    world = await relay.world("w1", handler=answer)
    scopes = [route.scope]
    key = relay.key(scopes=scopes)
    params = [p for p in route.params if p.name != "clientId"]
    path, query, body, sent = _request_for(route, params, {"clientId": "w1"})
    call = relay.call(route.method, path, key=key, params=query, json=body or None)
    got = await call
    assert got.status == 200, got.body
    assert got.headers["Content-Type"] == "application/json"
    frame = world.received[-1]
    rid = frame.pop("requestId")
    assert frame == _expected_frame(route, sent, scopes)
    assert "data" not in frame or any(p.name == "data" for p in route.params)
    assert rid.startswith(f"{route.action}_")
    assert got.body.decode() == fill(OK_TEMPLATE, route.action, rid)

    mode["error"] = True
    got = await relay.call(route.method, path, key=key, params=query, json=body or None)
    assert got.status == 400
    rid2 = world.received[-1]["requestId"]
    assert rid2 != rid
    assert got.body.decode() == fill(ERR_TEMPLATE, route.action, rid2)


@pytest.mark.parametrize("route", FORWARD, ids=[f"{r.method} {r.path}" for r in FORWARD])
async def test_route_required_parameters(relay: Any, route: Route) -> None:
    """Only the required parameters: defaults are added, nothing else is invented."""
    world = await relay.world("w1")
    key = relay.key(scopes=[route.scope])
    needed = [p for p in route.params if p.required or p.name in route.require_any[:1]]
    path, query, body, sent = _request_for(route, needed, {})
    got = await relay.call(route.method, path, key=key, params=query, json=body or None)
    assert got.status == 200, got.body
    frame = world.received[-1]
    frame.pop("requestId")
    assert frame == _expected_frame(route, sent, [route.scope])
    for param in route.params:
        if param.required and "path" not in param.sources:
            partial = {k: v for k, v in body.items() if k != param.name}
            partial_q = {k: v for k, v in query.items() if k != param.name}
            got = await relay.call(route.method, path, key=key, params=partial_q, json=partial)
            assert (got.status, got.json()) == (400, {"error": f"'{param.name}' is required"})


async def test_worked_example_skill_check(relay: Any) -> None:
    """wire-protocol §4.6, with the module's recorded reply."""

    def module(frame: dict[str, Any]) -> str:
        if frame["skill"] == "xyz":
            return SKILL_ERROR.replace("RID", frame["requestId"])
        return SKILL_OK.replace("RID", frame["requestId"])

    world = await relay.world("fvtt_x", handler=module)
    key = relay.key()
    got = await relay.call(
        "POST",
        "/dnd5e/skill-check",
        key=key,
        params={"clientId": "fvtt_x"},
        json={"actorUuid": "Actor.V5OF1QXHjaIy6iO8", "skill": "prc"},
    )
    frame = world.received[-1]
    assert frame == {
        "type": "skill-check",
        "requestId": frame["requestId"],
        "actorUuid": "Actor.V5OF1QXHjaIy6iO8",
        "skill": "prc",
        "createChatMessage": True,
        "_scopes": list(relay.store.list_keys()[0].scopes),
    }
    assert got.status == 200
    assert got.json()["data"]["total"] == 14
    assert got.body.startswith(b'{"type":"skill-check-result","requestId":"skill-check_')
    got = await relay.call(
        "POST",
        "/dnd5e/skill-check",
        key=key,
        json={"actorUuid": "Actor.V5OF1QXHjaIy6iO8", "skill": "xyz"},
    )
    assert got.status == 400
    assert "Invalid skill 'xyz'" in got.json()["error"]


async def test_select_sends_no_invented_data(relay: Any) -> None:
    world = await relay.world()
    key = relay.key()
    got = await relay.call("POST", "/select", key=key, json={"uuids": ["Scene.a.Token.b"]})
    assert got.status == 200
    frame = world.received[-1]
    assert "data" not in frame and frame["uuids"] == ["Scene.a.Token.b"]
    got = await relay.call("POST", "/select", key=key, json={"data": {"name": "Goblin"}})
    assert world.received[-1]["data"] == {"name": "Goblin"}


async def test_chat_defaults_and_undeclared_params_dropped(relay: Any) -> None:
    world = await relay.world()
    key = relay.key()
    got = await relay.call(
        "GET", "/chat", key=key, params={"speaker": "Bob", "bogus": "1"}, json={"limit": 99}
    )
    assert got.status == 200
    frame = world.received[-1]
    frame.pop("requestId")
    assert frame == {
        "type": "chat-messages",
        "limit": 10,
        "offset": 0,
        "speaker": "Bob",
        "_scopes": list(relay.store.list_keys()[0].scopes),
    }


async def test_forced_user_id_overrides_caller(relay: Any) -> None:
    world = await relay.world()
    key = relay.key(user_id="player-7")
    await relay.call("GET", "/players", key=key, params={"userId": "gm"})
    assert world.received[-1]["userId"] == "player-7"
    key2 = relay.key()
    await relay.call("GET", "/players", key=key2, params={"userId": "gm"})
    assert world.received[-1]["userId"] == "gm"


async def test_any_frame_with_pending_request_id_resolves_it(relay: Any) -> None:
    """Q8: the module's last-round error path answers with another type; it still resolves."""

    def odd(frame: dict[str, Any]) -> dict[str, Any]:
        return {"type": "encounter-navigation", "requestId": frame["requestId"], "error": "x"}

    await relay.world(handler=odd)
    got = await relay.call("GET", "/world-info", key=relay.key())
    assert got.status == 400 and got.json()["type"] == "encounter-navigation"


async def test_error_rule_needs_a_string(relay: Any) -> None:
    replies: Iterator[dict[str, Any]] = iter(
        [
            {"error": ""},  # empty string still counts
            {"error": {"message": "object"}},
            {"error": None},
            {"success": False},
        ]
    )

    def handler(frame: dict[str, Any]) -> dict[str, Any]:
        return {"type": "x-result", "requestId": frame["requestId"], **next(replies)}

    await relay.world(handler=handler)
    key = relay.key()
    statuses = [(await relay.call("GET", "/world-info", key=key)).status for _ in range(4)]
    assert statuses == [400, 200, 200, 200]


async def test_parameter_sources_on_the_wire(relay: Any) -> None:
    """wire-protocol §4.2 as the world sees it: JSON arrays and coercion from the query, empty
    query values and JSON nulls absent, the first query value wins, clientId only from the
    query (never the body or an `x-client-id` header), userId query first then body."""
    world = await relay.world("w1")
    await relay.world("w2")
    key = relay.key()

    async def frame(method: str, path: str, **kw: Any) -> dict[str, Any]:
        got = await relay.call(method, path, key=key, **kw)
        assert got.status == 200, got.body
        sent = dict(world.received[-1])
        sent.pop("requestId")
        sent.pop("_scopes")
        return sent

    query = [
        ("clientId", "w1"),
        ("actorUuid", "Actor.first"),
        ("actorUuid", "Actor.second"),
        ("details", '["items","spells"]'),
        ("userId", ""),
    ]
    assert await frame("GET", "/dnd5e/get-actor-details", params=query) == {
        "type": "get-actor-details",
        "actorUuid": "Actor.first",
        "details": ["items", "spells"],
    }
    body = {"amount": "-5", "actorUuid": None, "selected": "TRUE", "clientId": "w2", "x": 1}
    got = await frame(
        "POST",
        "/dnd5e/modify-experience",
        params={"clientId": "w1", "actorUuid": "Actor.q", "userId": "from-query"},
        json={**body, "userId": "from-body"},
    )
    assert got == {
        "type": "modify-experience",
        "amount": -5,
        "actorUuid": "Actor.q",
        "selected": True,
        "userId": "from-query",
    }
    got = await frame(
        "POST",
        "/dnd5e/short-rest",
        params={"clientId": "w1", "autoHDThreshold": "0.5", "autoHD": ""},
        json={"actorUuid": "Actor.a", "userId": "from-body"},
    )
    assert got == {
        "type": "short-rest",
        "actorUuid": "Actor.a",
        "autoHDThreshold": 0.5,
        "userId": "from-body",
    }
    # The body is JSON whatever its Content-Type; a body that is not an object counts as empty.
    got = await frame(
        "POST",
        "/dnd5e/modify-experience",
        params={"clientId": "w1"},
        data=b'{"amount": 2}',
        headers={"Content-Type": "text/plain"},
    )
    assert got == {"type": "modify-experience", "amount": 2}
    for raw in (b"[1]", b"2", b"{bad", b"\xff"):
        answer = await relay.call(
            "POST", "/dnd5e/modify-experience", key=key, params={"clientId": "w1"}, data=raw
        )
        assert (answer.status, answer.json()) == (400, {"error": "'amount' is required"})
    # A body clientId or an x-client-id header names no world: two are live, so 400.
    got = await relay.call(
        "POST",
        "/dnd5e/modify-experience",
        key=key,
        json={"amount": 1, "clientId": "w1"},
        headers={"x-client-id": "w1"},
    )
    assert got.status == 400 and got.json()["connectedClients"] == ["w1", "w2"]
    got = await relay.call("GET", "/world-info", key=key, params={"clientId": ""})
    assert got.status == 400 and got.json()["connectedClients"] == ["w1", "w2"]  # "" is absent


@pytest.mark.parametrize("text", [" 10", "1_000", "0x10", "1e999", "NaN", "10px"])
async def test_number_text_the_reference_parser_refuses(relay: Any, text: str) -> None:
    world = await relay.world()
    got = await relay.call("GET", "/chat", key=relay.key(), params={"limit": text})
    assert (got.status, got.json()) == (400, {"error": "'limit' must be a valid number"})
    assert world.received == []
