"""A fake world process: N worlds connected to a relay's /relay, each answering at once.

Each world connects exactly like the module (wire-protocol §2: `id` and metadata in the query,
`{"type": "auth", "token"}` first, waits for `auth-success`) and answers every request frame
with the recorded reply of `bench/replies.py`, echoing the requestId. It also emits chat events on
command, each carrying its emission time, so a subscriber can measure fan-out latency.

Run: `python -m bench.fake_world --url http://127.0.0.1:PORT --worlds-file worlds.json
[--replies small|actor|recorded]` where the file is a JSON list of
`{"clientId": ..., "token": ...}`. The process prints one line per event on stdout and reads
commands on stdin (one per line); EOF on stdin stops it:

- stdout `READY <n>` once every world is authenticated, or `ERROR <text>` and exit status 1.
- `emit <n> <interval_ms> [world]` -> emits n `chat-event` frames from world index `world`
  (default 0), then prints `EMITTED <json list of emission times, ns of CLOCK_MONOTONIC>`.
- `subs <channel> <n> <timeout_s> [world]` -> waits until the relay reports at least n
  subscribers on `channel` for that world, prints `SUBS <count>` (the count reached).
- `stats` -> prints `STATS {"requests": <answered so far>}`.
- `quit` -> closes every socket and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
import orjson

from bench.replies import REPLY_SETS, chat_message, reply_parts
from vttrelay import protocol

CONNECT_CONCURRENCY = 50
AUTH_TIMEOUT = 15.0
EVENT_ID_PREFIX = "benchevt"


@dataclass
class World:
    """One connected world: its socket and the subscriber counts the relay told it."""

    client_id: str
    ws: aiohttp.ClientWebSocketResponse
    subs: dict[str, int] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class FakeWorlds:
    """All worlds of this process and the shared reply cache."""

    worlds: list[World] = field(default_factory=list)
    answered: int = 0
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)
    replies: str = "recorded"  # the reply set (bench.replies.REPLY_SETS)

    def reply(self, action: str, request_id: Any) -> str:
        parts = self.parts.get(action)
        if parts is None:
            parts = self.parts[action] = reply_parts(action, self.replies)
        return parts[0] + orjson.dumps(request_id).decode() + parts[1]


def world_url(base: str, client_id: str) -> str:
    """The /relay URL with the query parameters the module sends (wire-protocol §2.1)."""
    ws_base = base.replace("http://", "ws://", 1).replace("https://", "wss://", 1).rstrip("/")
    query = {
        "id": client_id,
        "worldId": "test-world",
        "worldTitle": "Test World",
        "foundryVersion": "14.363",
        "systemId": "dnd5e",
        "systemTitle": "Dungeons & Dragons Fifth Edition",
        "systemVersion": "5.0.4",
    }
    return f"{ws_base}/relay?{urlencode(query)}"


async def connect_world(
    session: aiohttp.ClientSession, base: str, client_id: str, token: str
) -> World:
    """Open one world socket and authenticate; raises RuntimeError if the relay refuses."""
    async with asyncio.timeout(AUTH_TIMEOUT):
        ws = await session.ws_connect(world_url(base, client_id), max_msg_size=0, autoping=True)
    await ws.send_str(orjson.dumps({"type": protocol.AUTH, "token": token}).decode())
    msg = await ws.receive(timeout=AUTH_TIMEOUT)
    if msg.type != aiohttp.WSMsgType.TEXT:
        await ws.close()
        raise RuntimeError(f"{client_id}: no auth-success, got {msg.type.name} {msg.extra}")
    frame = orjson.loads(msg.data)
    if frame.get("type") != protocol.AUTH_SUCCESS:
        await ws.close()
        raise RuntimeError(f"{client_id}: expected auth-success, got {msg.data!r}")
    return World(client_id, ws)


async def serve_world(fake: FakeWorlds, world: World) -> None:
    """Answer every request frame of one world until its socket closes."""
    ws = world.ws
    async for msg in ws:
        if msg.type != aiohttp.WSMsgType.TEXT:
            continue
        frame = orjson.loads(msg.data)
        kind = frame.get("type")
        request_id = frame.get("requestId")
        if request_id is not None and isinstance(kind, str):
            await ws.send_str(fake.reply(kind, request_id))
            fake.answered += 1
        elif kind == protocol.SUBSCRIPTION_UPDATE:
            world.subs[str(frame.get("channel"))] = int(frame.get("count") or 0)
            world.changed.set()
    print(
        f"world {world.client_id} closed: code {ws.close_code}, exception {ws.exception()!r}",
        file=sys.stderr,
        flush=True,
    )


def chat_event(seq: int, emitted_ns: int) -> str:
    """A `chat-event` frame (wire-protocol §3.3) whose message carries its emission time."""
    msg = chat_message(f"{EVENT_ID_PREFIX}{seq:08d}", f"bench event {seq}", "Bench")
    msg["flags"] = {"bench": {"seq": seq, "emittedNs": emitted_ns}}
    return orjson.dumps(
        {"type": "chat-event", "data": {"eventType": "create", "data": msg}}
    ).decode()


async def emit(world: World, count: int, interval: float) -> list[int]:
    """Send `count` chat events, `interval` seconds apart; returns their emission times."""
    times: list[int] = []
    for seq in range(count):
        now = time.monotonic_ns()
        await world.ws.send_str(chat_event(seq, now))
        times.append(now)
        if interval > 0 and seq + 1 < count:
            await asyncio.sleep(interval)
    return times


async def wait_subs(world: World, channel: str, want: int, timeout: float) -> int:
    """Wait until the relay reports `want` subscribers on `channel`; returns the last count."""
    deadline = time.monotonic() + timeout
    while world.subs.get(channel, 0) < want:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        world.changed.clear()
        try:
            await asyncio.wait_for(world.changed.wait(), left)
        except TimeoutError:
            break
    return world.subs.get(channel, 0)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def command_loop(fake: FakeWorlds) -> None:
    """Read commands on stdin until `quit` or EOF."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while True:
        raw = await reader.readline()
        if not raw:
            return
        parts = raw.decode().split()
        if not parts:
            continue
        cmd, args = parts[0], parts[1:]
        try:
            if cmd == "quit":
                return
            if cmd == "stats":
                say("STATS " + orjson.dumps({"requests": fake.answered}).decode())
            elif cmd == "emit":
                index = int(args[2]) if len(args) > 2 else 0
                times = await emit(fake.worlds[index], int(args[0]), float(args[1]) / 1000)
                say("EMITTED " + orjson.dumps(times).decode())
            elif cmd == "subs":
                index = int(args[3]) if len(args) > 3 else 0
                got = await wait_subs(fake.worlds[index], args[0], int(args[1]), float(args[2]))
                say(f"SUBS {got}")
            else:
                say(f"ERROR unknown command {cmd!r}")
        except (IndexError, ValueError) as exc:
            say(f"ERROR bad command {raw.decode().strip()!r}: {exc}")


async def run(base: str, worlds: list[dict[str, str]], replies: str = "recorded") -> int:
    fake = FakeWorlds(replies=replies)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

        async def one(entry: dict[str, str]) -> World:
            async with gate:
                return await connect_world(session, base, entry["clientId"], entry["token"])

        try:
            fake.worlds = list(await asyncio.gather(*(one(w) for w in worlds)))
        except (RuntimeError, aiohttp.ClientError, TimeoutError) as exc:
            say(f"ERROR {exc}")
            return 1
        servers = [asyncio.create_task(serve_world(fake, w)) for w in fake.worlds]
        say(f"READY {len(fake.worlds)}")
        await command_loop(fake)
        for world in fake.worlds:
            await world.ws.close()
        for task in servers:
            task.cancel()
        await asyncio.gather(*servers, return_exceptions=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="relay base URL, http://127.0.0.1:PORT")
    parser.add_argument("--worlds-file", required=True, help="JSON list of {clientId, token}")
    parser.add_argument(
        "--replies", choices=REPLY_SETS, default="recorded", help="the reply set (replies.py)"
    )
    args = parser.parse_args(argv)
    with open(args.worlds_file, "rb") as fh:
        worlds = orjson.loads(fh.read())
    try:
        import uvloop
    except ImportError:
        return asyncio.run(run(args.url, worlds, args.replies))
    return uvloop.run(run(args.url, worlds, args.replies))


if __name__ == "__main__":
    raise SystemExit(main())
