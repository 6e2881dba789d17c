"""GET /chat paging end to end (the real relay, the embedded world over a real WebSocket): walked
page by page with `offset`, a player's view lists each message they may see exactly once, newest
first, with the same `total` on every page as in one page holding them all; a history of messages
at the content size limit is paged the same way."""

from __future__ import annotations

from typing import Any

from vttrelay.relay.routes import CHAT_CONTENT_MAX
from vttrelay.world.embedded import EmbeddedWorld

ARIA, BEN, GM = "playerAria000001", "playerBen0000001", "gmUser0000000001"


async def _walk(api: Any, relay: Any, limit: int, **query: Any) -> tuple[list[str], set[int]]:
    """Every page in turn: the ids listed, and the totals the pages gave."""
    ids: list[str] = []
    totals: set[int] = set()
    offset = 0
    while True:
        status, body = await api(relay, "GET", "/chat", limit=limit, offset=offset, **query)
        assert status == 200, body
        totals.add(body["data"]["total"])
        page = [m["id"] for m in body["data"]["messages"]]
        ids += page
        if len(page) < limit:
            return ids, totals
        offset += limit


async def test_a_players_pages_list_each_visible_message_once(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    sent: list[tuple[str, bool]] = []  # (id, visible to Aria)
    for n in range(45):
        body: dict[str, Any] = {"content": f"m{n}", "userId": (GM, ARIA, BEN)[n % 3]}
        if n % 4 == 1:
            body["whisper"] = [(ARIA, BEN, GM)[n % 3]]
        if n % 5 == 0:
            body["chatType"] = 2
        status, reply = await api(relay, "POST", "/chat", body)
        assert status == 200, reply
        msg = reply["data"]
        sent.append((msg["id"], not msg["whisper"] or ARIA in (*msg["whisper"], body["userId"])))
    _, whole = await api(relay, "GET", "/chat", limit=1000, userId=ARIA)
    everything = [m["id"] for m in whole["data"]["messages"]]
    visible = [i for i, seen in reversed(sent) if seen]
    assert everything[: len(visible)] == visible and 0 < len(visible) < len(sent)
    ids, totals = await _walk(api, relay, 7, userId=ARIA)
    assert ids == everything and totals == {whole["data"]["total"]} == {len(everything)}
    ids, totals = await _walk(api, relay, 4, userId=ARIA, chatType=2)
    assert totals == {len(ids)} and ids == [
        i for i in everything if i in {s for n, (s, _) in enumerate(sent) if n % 5 == 0}
    ]


async def test_messages_at_the_size_limit_page_as_any(
    relay: Any, world: EmbeddedWorld, api: Any
) -> None:
    contents = [chr(ord("a") + n) * CHAT_CONTENT_MAX for n in range(12)]
    for content in contents:
        status, reply = await api(relay, "POST", "/chat", {"content": content})
        assert status == 200, reply
    status, body = await api(relay, "GET", "/chat", limit=1)
    assert status == 200 and body["data"]["messages"][0]["content"] == contents[-1]
    status, body = await api(relay, "GET", "/chat", limit=3, offset=4)
    assert [m["content"][0] for m in body["data"]["messages"]] == ["h", "g", "f"]
    assert body["data"]["total"] >= len(contents)
