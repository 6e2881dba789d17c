"""Parameter limits (issue 9 item 5), end to end with the real relay and the embedded world over
a real WebSocket: out-of-range numbers, deep JSON and oversized values are refused by the relay
with 400/413 in `{"error": ...}` before they reach the world, nothing is stored, and the world
keeps answering (before these limits, `GET /chat?offset=1e20` wedged it: every later request 408).
"""

from __future__ import annotations

from typing import Any

from vttrelay.relay.routes import CHAT_CONTENT_MAX, CHAT_PAGE_MAX, FLAVOR_MAX, SCRIPT_MAX
from vttrelay.world.embedded import EmbeddedWorld


def nested(depth: int) -> str:
    """`{"gp": {"gp": ... 1}}` nested `depth` levels, as JSON text (deeper than orjson writes)."""
    return '{"gp":' * depth + "1" + "}" * depth


def deep_list(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


async def post_raw(relay: Any, key: str, path: str, body: str) -> tuple[int, Any]:
    got = await relay.call(
        "POST", path, key=key, data=body.encode(), headers={"Content-Type": "application/json"}
    )
    return got.status, got.json()


async def chat_page(api: Any, relay: Any) -> tuple[int, Any]:
    return await api(relay, "GET", "/chat", limit=1)


async def test_huge_offset_is_refused_and_the_world_keeps_answering(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    status, body = await api(relay, "GET", "/chat", offset="1e20")
    assert (status, body) == (400, {"error": "'offset' must be between 0 and 9007199254740991"})
    status, body = await api(relay, "GET", "/chat", limit=CHAT_PAGE_MAX + 1)
    assert (status, body) == (400, {"error": "'limit' must be between 0 and 1000"})
    status, body = await api(relay, "GET", "/chat", offset=-1)
    assert status == 400
    status, body = await chat_page(api, relay)
    assert status == 200 and body["data"]["limit"] == 1


async def test_deep_currency_is_refused(relay: Any, world: EmbeddedWorld, api: Any) -> None:
    key = relay.key(("dnd5e",))
    for depth in (2, 300, 1000):
        body = f'{{"currency":{nested(depth)},"sourceActorName":"a","targetActorName":"b"}}'
        got = await post_raw(relay, key, "/dnd5e/transfer-currency", body)
        assert got == (400, {"error": "'currency' is nested too deeply (at most 1 level)"})
    assert (await chat_page(api, relay))[0] == 200


async def test_deep_json_in_untyped_and_array_parameters_is_a_400(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    key = relay.key(("entity:read",))
    got = await post_raw(relay, key, "/select", f'{{"name":{deep_list(500)}}}')
    assert got == (400, {"error": "'name' is nested too deeply (at most 32 levels)"})
    got = await post_raw(relay, key, "/select", f'{{"uuids":{deep_list(300)}}}')
    assert got == (400, {"error": "'uuids' is nested too deeply (at most 32 levels)"})
    status, body = await api(
        relay, "GET", "/dnd5e/get-actor-details", actorUuid="Actor.x", details=deep_list(500)
    )
    assert (status, body) == (400, {"error": "'details' is nested too deeply (at most 32 levels)"})
    assert (await chat_page(api, relay))[0] == 200


async def test_chat_size_limits_413_and_nothing_stored(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    _, before = await api(relay, "GET", "/chat", limit=1)
    status, body = await api(relay, "POST", "/chat", json={"content": "x" * (CHAT_CONTENT_MAX + 1)})
    assert (status, body) == (413, {"error": "'content' is too long (at most 100000 characters)"})
    status, body = await api(
        relay, "POST", "/chat", json={"content": "hi", "flavor": "f" * (FLAVOR_MAX + 1)}
    )
    assert (status, body) == (413, {"error": "'flavor' is too long (at most 10000 characters)"})
    _, after = await api(relay, "GET", "/chat", limit=1)
    assert after["data"]["total"] == before["data"]["total"]
    # At the limit: accepted, stored and listed.
    status, body = await api(relay, "POST", "/chat", json={"content": "y" * CHAT_CONTENT_MAX})
    assert status == 200, body
    _, after = await api(relay, "GET", "/chat", limit=1)
    assert after["data"]["messages"][0]["content"] == "y" * CHAT_CONTENT_MAX


async def test_script_size_limit(relay: Any, world: EmbeddedWorld) -> None:
    key = relay.key(("execute-js",))
    script = "return 1;" + " " * SCRIPT_MAX
    got = await relay.call("POST", "/execute-js", key=key, json={"script": script})
    assert (got.status, got.json()) == (
        413,
        {"error": "'script' is too long (at most 1000000 characters)"},
    )


async def test_a_body_past_what_the_route_can_need_is_refused_before_it_is_read(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    """The 240 MB chat message of the report, scaled down: a body far past what POST /chat's
    parameters can need (its limit is ~12 MiB, not the global 250 MB) is refused with 413, sized
    by Content-Length or counted while a chunked body arrives, and nothing is stored."""
    key = relay.key(("chat:read", "chat:write"))
    _, before = await api(relay, "GET", "/chat", limit=1)
    body = b'{"content":"' + b"x" * (40 * 1024 * 1024) + b'"}'
    got = await relay.call(
        "POST", "/chat", key=key, data=body, headers={"Content-Type": "application/json"}
    )
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})

    async def chunked() -> Any:
        yield b'{"content":"'
        for _ in range(40):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    got = await relay.call(
        "POST", "/chat", key=key, data=chunked(), headers={"Content-Type": "application/json"}
    )
    assert (got.status, got.json()) == (413, {"error": "Request body too large"})
    _, after = await api(relay, "GET", "/chat", limit=1)
    assert after["data"]["total"] == before["data"]["total"]
    assert (await chat_page(api, relay))[0] == 200
