"""Issue 20 item 11: scripts (execute-js, and so script macros) go through the same limits as
the API. Before, a script wrote 4 MiB chat messages, 230 MB in one 5-second script, and GET /chat
then answered 40 MiB. Now a script's chat message has POST /chat's content and flavor limits,
all a script's world calls together carry at most MAX_CALL_BYTES, and a page of GET /chat holds
at most PAGE_BYTES of messages whatever `limit` says (real embedded world, real child process)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.world import chat

from vttrelay.protocol import CHAT_CONTENT_MAX, FLAVOR_MAX
from vttrelay.world.model import documents
from vttrelay.world.model.chat import PAGE_BYTES
from vttrelay.world.runtime.world import World
from vttrelay.world.scripts.sandbox import MAX_CALL_BYTES


@pytest.fixture
def enabled(world: World) -> World:
    with world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, True)
    return world


async def execute(world: World, script: str) -> dict[str, Any]:
    return await world.handle({"type": "execute-js", "requestId": "x1", "script": script})


async def test_a_script_chat_message_has_the_api_limits(enabled: World) -> None:
    before = len(chat(enabled))
    script = f"await ChatMessage.create({{content: 'x'.repeat({CHAT_CONTENT_MAX + 1})}})"
    reply = await execute(enabled, script)
    assert reply["error"] == (
        f"Error executing script: content is too long (at most {CHAT_CONTENT_MAX} characters)"
    )
    script = f"await ChatMessage.create({{content: 'a', flavor: 'f'.repeat({FLAVOR_MAX + 1})}})"
    reply = await execute(enabled, script)
    assert reply["error"].endswith(f"flavor is too long (at most {FLAVOR_MAX} characters)")
    assert len(chat(enabled)) == before + 2  # the two GM notices only
    script = f"return (await ChatMessage.create({{content: 'y'.repeat({CHAT_CONTENT_MAX})}})).id"
    assert (await execute(enabled, script))["success"] is True


async def test_a_script_writes_at_most_its_call_budget(enabled: World) -> None:
    chunk = CHAT_CONTENT_MAX
    calls = MAX_CALL_BYTES // chunk + 5  # past the budget, each call within the chat limits
    script = f"""
      const text = 'z'.repeat({chunk});
      for (let i = 0; i < {calls}; i++) await ChatMessage.create({{content: text}});
    """
    reply = await execute(enabled, script)
    assert reply["success"] is False
    assert reply["error"] == (
        "Error executing script: the script sent more than 8 MiB of data in its world calls"
    )
    written = sum(len(m["content"]) for m in chat(enabled) if m["content"].startswith("zzz"))
    assert written <= MAX_CALL_BYTES


async def test_a_chat_page_holds_at_most_page_bytes(enabled: World) -> None:
    big = "b" * CHAT_CONTENT_MAX
    count = PAGE_BYTES // CHAT_CONTENT_MAX + 10
    for i in range(count):
        reply = await enabled.handle(
            {"type": "chat-send", "requestId": f"c{i}", "content": big, "flavor": "f" * 100}
        )
        assert reply["success"] is True
    reply = await enabled.handle({"type": "chat-messages", "requestId": "l", "limit": 1000})
    page = reply["data"]
    assert page["total"] == count and page["limit"] == 1000
    assert 0 < len(page["messages"]) < count
    assert sum(len(m["content"]) for m in page["messages"]) <= PAGE_BYTES
    rest = await enabled.handle(
        {
            "type": "chat-messages",
            "requestId": "m",
            "limit": 1000,
            "offset": len(page["messages"]),
        }
    )
    assert len(page["messages"]) + len(rest["data"]["messages"]) == count


async def test_the_world_refuses_long_chat_text_from_any_relay(world: World) -> None:
    reply = await world.handle(
        {"type": "chat-send", "requestId": "c", "content": "x" * (CHAT_CONTENT_MAX + 1)}
    )
    assert reply == {
        "type": "chat-send-result",
        "requestId": "c",
        "success": False,
        "error": f"content is too long (at most {CHAT_CONTENT_MAX} characters)",
    }


async def test_a_chat_macro_posts_only_what_post_chat_would(enabled: World) -> None:
    with enabled.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_EXECUTE, True)
        tx.put(
            "Macro",
            {
                "_id": "longChatMacro001",
                "name": "Long",
                "type": "chat",
                "command": "w" * (CHAT_CONTENT_MAX + 1),
                "ownership": {"default": 2},
            },
        )
    before = len(chat(enabled))
    reply = await enabled.handle(
        {"type": "macro-execute", "requestId": "m1", "uuid": "Macro.longChatMacro001"}
    )
    assert reply["success"] is False, reply
    assert reply["error"] == f"content is too long (at most {CHAT_CONTENT_MAX} characters)"
    assert len(chat(enabled)) == before
