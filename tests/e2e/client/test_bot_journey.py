"""The bot developer's journey (issue 24): the SDK installed alone in a fresh virtualenv,
type-checked with `mypy --strict` and run against a real relay and the embedded world; streams
that find their world as REST calls do and yield no keepalive as an event; a relay that is down
raising a documented `VttRelayError`."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from bench.procs import free_port
from tests.support.client_dist import copy_client_distribution
from tests.support.e2e import CLIENT_ID

from vttrelay.client import AsyncClient, Client, ConnectionFailed, StreamEvent, VttRelayError
from vttrelay.client.types import ChatEventData
from vttrelay.relay.routes import ALL_SCOPES

BOT = textwrap.dedent(
    '''
    """A bot on the SDK alone: a stealth check, a message about it, and the chat stream until
    the message comes back; a relay that is down is a VttRelayError like any refusal."""

    from __future__ import annotations

    import sys
    from typing import cast

    from vttrelay.client import BadRequest, Client, ConnectionFailed, StreamEvent, VttRelayError
    from vttrelay.client.types import ChatEventData, ChatMessage, CheckResult, Envelope

    PIP = "Actor.pipMonk000000001"


    def stealth(relay: Client) -> int:
        check: Envelope[CheckResult] = relay.dnd5e.skill_check(PIP, "ste", advantage=True)
        return check["data"]["total"]


    def announce_and_listen(relay: Client, text: str) -> list[str]:
        seen: list[str] = []
        events = relay.streams.chat()  # no client_id: the key's one world, as REST finds it
        first: StreamEvent[ChatEventData] = next(events)
        seen.append(first.event)
        relay.chat.send(text, alias="Bot", chat_type=1)
        for event in events:
            seen.append(event.event)
            if event.event == "chat-create":  # the event's name says what its data is
                message = cast(ChatMessage, event.data)
                if message["content"] == text:
                    break
        events.close()
        return seen


    def main(url: str, key: str) -> int:
        try:
            with Client(url, key) as relay:
                total = stealth(relay)
                try:
                    relay.dnd5e.skill_check(PIP, "xyz")  # type: ignore[arg-type]
                except BadRequest as refused:
                    print("refused:", refused.status, refused.message)
                page = relay.chat.messages(limit=2, offset=0)
                print("messages:", len(page["data"]["messages"]))
                print("events:", " ".join(announce_and_listen(relay, f"Pip hides: {total}")))
        except ConnectionFailed as down:
            print("down:", down.message)
            return 2
        except VttRelayError as error:
            print("error:", error.status, error.message)
            return 1
        return 0


    if __name__ == "__main__":
        sys.exit(main(sys.argv[1], sys.argv[2]))
    '''
)


def _clean_env() -> dict[str, str]:
    """This process's environment without what would put the repository's sources in reach."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}


def _run(args: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout
    )


async def test_a_bot_installs_the_sdk_alone_type_checks_strict_and_runs(
    relay: Any, start_world: Any, tmp_path: Path
) -> None:
    copy_client_distribution(tmp_path)  # `pip install ./clients/python` from there
    venv = tmp_path / "venv"
    python = str(venv / "bin" / "python")
    mypy = f"mypy=={importlib.metadata.version('mypy')}"  # the version CI checks the repo with

    def install() -> subprocess.CompletedProcess[str]:
        made = _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
        assert made.returncode == 0, made.stderr
        # the client distribution alone (and mypy to check the bot), nothing of the server
        return _run([python, "-m", "pip", "install", "-q", "./clients/python", mypy], tmp_path, 280)

    installed = await asyncio.to_thread(install)
    assert installed.returncode == 0, installed.stderr
    server = await asyncio.to_thread(_run, [python, "-c", "import vttrelay.relay"], tmp_path)
    assert server.returncode != 0 and "No module named 'vttrelay.relay'" in server.stderr

    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    (bot_dir / "bot.py").write_text(BOT)
    checked = await asyncio.to_thread(
        _run, [python, "-m", "mypy", "--strict", "--no-incremental", "bot.py"], bot_dir
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success: no issues found in 1 source file" in checked.stdout

    await start_world(relay)
    await relay.world("another-world")  # the account has two worlds; the key reaches one
    key = relay.key(ALL_SCOPES, client_ids=[CLIENT_ID], rate_per_minute=0)
    ran = await asyncio.to_thread(_run, [python, "bot.py", relay.url, key], bot_dir, 60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("refused: 400 Invalid skill 'xyz'")
    assert lines[1] == "messages: 1"  # the stealth check's card: a fresh world's only message
    assert lines[2].startswith("events: connected") and lines[2].endswith("chat-create")

    down = f"http://127.0.0.1:{free_port()}"
    failed = await asyncio.to_thread(_run, [python, "bot.py", down, key], bot_dir, 60)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert failed.stdout.startswith(f"down: No answer from the relay at {down}")


async def test_keepalive_comments_are_not_events(relay_factory: Any, start_world: Any) -> None:
    relay = await relay_factory(keepalive_interval=0.1)
    await start_world(relay)
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    async with AsyncClient(relay.url, key) as sdk:
        events = sdk.streams.chat(client_id=CLIENT_ID)
        connected = await asyncio.wait_for(anext(events), 5)
        await asyncio.sleep(0.6)  # several keepalives while nothing happens
        await sdk.chat.send("after a quiet while")
        created = await asyncio.wait_for(anext(events), 5)
        await events.aclose()
    assert connected.event == "connected" and connected.data == {"clientId": CLIENT_ID}
    assert created.event == "chat-create" and created.data is not None
    assert created.data["content"] == "after a quiet while"  # type: ignore[typeddict-item]

    def sync_read() -> list[StreamEvent[ChatEventData]]:
        with Client(relay.url, key) as sdk:
            stream = sdk.streams.chat(client_id=CLIENT_ID)
            got = [next(stream)]
            time.sleep(0.6)  # the relay (on the test's loop) sends keepalives meanwhile
            sdk.chat.send("quiet again")
            got.append(next(stream))
            stream.close()
            return got

    got = await asyncio.to_thread(sync_read)
    assert [e.event for e in got] == ["connected", "chat-create"]
    assert all(e.data is not None for e in got)


async def test_a_stream_finds_the_keys_one_world_as_rest_calls_do(
    relay: Any, start_world: Any
) -> None:
    await start_world(relay)
    await relay.world("another-world")
    bound = relay.key(ALL_SCOPES, client_ids=[CLIENT_ID], rate_per_minute=0)
    async with AsyncClient(relay.url, bound) as sdk:
        info = await sdk.utility.world_info()  # REST: the key's one world
        events = sdk.streams.chat()  # the stream: the same world
        connected = await asyncio.wait_for(anext(events), 5)
        await sdk.chat.send("found")
        created = await asyncio.wait_for(anext(events), 5)
        await events.aclose()
    assert info["data"]["world"]["id"] == CLIENT_ID
    assert connected.data == {"clientId": CLIENT_ID}
    assert created.data["content"] == "found"  # type: ignore[typeddict-item]

    # An account key over both worlds names one, on streams as on REST calls.
    both = relay.key(ALL_SCOPES, rate_per_minute=0)
    async with AsyncClient(relay.url, both, retries=0) as sdk:
        with pytest.raises(VttRelayError) as rest:
            await sdk.utility.world_info()
        with pytest.raises(VttRelayError) as stream:
            await anext(sdk.streams.chat(reconnects=0))
    for refused in (rest.value, stream.value):
        assert refused.status == 400
        assert refused.body == {
            "error": "Multiple clients connected. Please specify clientId.",
            "connectedClients": ["another-world", CLIENT_ID],
        }


async def test_a_relay_that_is_down_raises_connection_failed() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    async with AsyncClient(url, "key") as sdk:
        with pytest.raises(ConnectionFailed) as call:
            await sdk.status.health()
        with pytest.raises(ConnectionFailed) as stream:
            await anext(sdk.streams.chat(reconnects=0))

    def sync_call() -> ConnectionFailed:
        with Client(url, "key") as sdk, pytest.raises(ConnectionFailed) as failed:
            sdk.utility.players()
        return failed.value

    for failure in (call.value, stream.value, await asyncio.to_thread(sync_call)):
        assert isinstance(failure, VttRelayError) and failure.status == 0
        assert failure.message.startswith(f"No answer from the relay at {url}")
        assert isinstance(failure.__cause__, httpx.ConnectError)
