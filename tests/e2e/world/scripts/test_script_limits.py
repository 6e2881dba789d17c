"""Issue 20 item 11 end to end (real relay, real WebSocket, real script processes): a script
can't write past the API's limits (a chat message past POST /chat's, more than 8 MiB of world
calls), and GET /chat with `limit` 1000 answers at most `rules.chat.PAGE_BYTES` of messages
(before: 4 MiB messages from scripts, 230 MB in one script, a 40 MiB GET /chat)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import api_for

from vttrelay.protocol import CHAT_CONTENT_MAX
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.model import documents
from vttrelay.world.model.chat import PAGE_BYTES

SCOPES = ("chat:read", "chat:write", "execute-js")


@pytest.fixture
async def world(relay: Any, start_world: Any, tmp_path: Path) -> EmbeddedWorld:
    handle: EmbeddedWorld = await start_world(relay, tmp_path / "world-data")
    with handle.world.store.transaction() as tx:
        documents.set_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, True)
    return handle


async def test_scripts_have_the_api_limits_and_chat_pages_are_bounded(
    relay: Any, world: EmbeddedWorld
) -> None:
    api = api_for(relay, SCOPES, rate_per_minute=0)
    script = "await ChatMessage.create({content: 'x'.repeat(4 * 1024 * 1024)})"
    status, body = await api("POST", "/execute-js", {"script": script})
    assert (status, body["error"]) == (
        400,
        f"Error executing script: content is too long (at most {CHAT_CONTENT_MAX} characters)",
    )
    script = f"""
      const text = 'y'.repeat({CHAT_CONTENT_MAX});
      for (let i = 0; i < 200; i++) await ChatMessage.create({{content: text}});
    """
    status, body = await api("POST", "/execute-js", {"script": script})
    assert status == 400
    assert body["error"].endswith("the script sent more than 8 MiB of data in its world calls")
    answer = await relay.call(
        "GET", "/chat", key=relay.key(("chat:read",)), params={"limit": "1000"}
    )
    assert answer.status == 200
    assert len(answer.body) < PAGE_BYTES + 64 * 1024, len(answer.body)
    page = answer.json()["data"]
    assert 0 < len(page["messages"]) < page["total"] and page["limit"] == 1000
