"""`python -m tools.mcp_transcript [--write]`: the README's MCP session, recorded for real.

Starts `vttrelay serve` on a fresh data dir with seeded dice (`--seed`), so every roll, id and
reply is the same on every run, and plays the session below through the `mcp` SDK's client
over stdio (`vttrelay mcp` with the demo key, the "gm" preset): reading the world, a check,
dry runs, then a fight on the ambush scene (the encounter started, attacks that hit and miss
with the damage and the HP after, Burning Hands on both goblins with their saves, turns moving
on). Prints the transcript (`> tool arguments`, `< reply`, verbatim); `--write` puts it into
README.md in place of the block after `MARKER`. `tests/e2e/mcp/test_readme_transcript.py`
checks that the README shows what a run prints.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

SEED = 7
README = Path(__file__).resolve().parent.parent / "README.md"
MARKER = "<!-- mcp-transcript: python -m tools.mcp_transcript --write -->"
START_TIMEOUT = 60.0

# The session: (tool, arguments). A fight's steps are taken in turn order by `FIGHT`.
READING: list[tuple[str, dict[str, Any]]] = [
    ("world_overview", {}),
    ("actor_summary", {"actor": "Pip Tealeaf"}),
    ("roll_check", {"actor": "Pip Tealeaf", "kind": "skill", "skill": "Stealth", "dry_run": True}),
    ("roll_check", {"actor": "Pip Tealeaf", "kind": "skill", "skill": "Stealth"}),
    ("change_hp", {"actor": "Pip Tealeaf", "amount": -7, "dry_run": True}),
    (
        "transfer_currency",
        {
            "from_actor": "Pip Tealeaf",
            "to_actor": "Elara Quill",
            "currency": {"gp": 10},
            "dry_run": True,
        },
    ),
    ("send_chat", {"content": "Roll for initiative!", "alias": "DM"}),
    ("switch_scene", {"scene": "Goblin Ambush"}),
    ("encounter", {"action": "start", "combatants": ["Goblin 1", "Goblin 2", "Bandit"]}),
]
# What each combatant does on its turn.
FIGHT: dict[str, tuple[str, dict[str, Any]]] = {
    "Brann Stoneheart": (
        "attack",
        {"actor": "Brann Stoneheart", "weapon": "Longsword", "target": "Goblin 1"},
    ),
    "Goblin 1": (
        "attack",
        {"actor": "Goblin 1", "weapon": "Scimitar", "target": "Brann Stoneheart"},
    ),
    "Goblin 2": ("attack", {"actor": "Goblin 2", "weapon": "Scimitar", "target": "Pip Tealeaf"}),
    "Bandit": ("attack", {"actor": "Bandit", "weapon": "Scimitar", "target": "Elara Quill"}),
    "Elara Quill": (
        "use",
        {
            "actor": "Elara Quill",
            "kind": "spell",
            "name": "Burning Hands",
            "targets": ["Goblin 1", "Goblin 2"],
        },
    ),
    "Corvin Ash": ("attack", {"actor": "Corvin Ash", "weapon": "Dagger", "target": "Bandit"}),
    "Pip Tealeaf": ("attack", {"actor": "Pip Tealeaf", "weapon": "Shortsword", "target": "Bandit"}),
}
MAX_TURNS = 7  # turns played after the start, at most: until Elara has cast her spell


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(data_dir: Path) -> Any:
    """`vttrelay serve` with seeded dice on `data_dir`; yields its ready file's JSON."""
    ready = data_dir / "ready.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vttrelay",
            "serve",
            "--data-dir",
            str(data_dir),
            "--port",
            str(_free_port()),
            "--seed",
            str(SEED),
            "--ready-file",
            str(ready),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("vttrelay serve did not start")
            time.sleep(0.1)
        yield json.loads(ready.read_text())
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.asynccontextmanager
async def session(url: str, key: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vttrelay", "mcp", "--url", url],
        env={**os.environ, "VTTRELAY_API_KEY": key},
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


async def play(client: ClientSession) -> list[str]:
    """The session's lines: each call and its reply as the agent sees it."""
    lines: list[str] = []
    tools = [t.name for t in (await client.list_tools()).tools]
    lines += ["> tools/list", f"< {len(tools)} tools: {', '.join(tools)}", ""]

    async def call(name: str, args: dict[str, Any]) -> Any:
        result = await client.call_tool(name, args)
        text = str(result.content[0].text)  # type: ignore[union-attr]
        if result.is_error:
            raise RuntimeError(f"{name} {args}: {text}")
        lines.extend([f"> {name} {json.dumps(args)}", f"< {text}", ""])
        return json.loads(text)

    for name, args in READING:
        tracker = await call(name, args)
    for _ in range(MAX_TURNS):
        acting = tracker["current"]
        await call(*FIGHT[acting])
        if acting == "Elara Quill":
            break
        tracker = await call("encounter", {"action": "next_turn"})
    return lines[:-1]


async def record() -> str:
    """The transcript of a fresh run."""
    with tempfile.TemporaryDirectory() as tmp, serving(Path(tmp)) as ready:
        async with session(ready["url"], ready["apiKey"]) as client:
            return "\n".join(await play(client))


def with_transcript(readme: str, transcript: str) -> str:
    """The README with `transcript` as the text block after `MARKER`."""
    head, marker, rest = readme.partition(MARKER)
    if not marker:
        raise ValueError(f"README.md has no {MARKER}")
    start = rest.index("```text\n") + len("```text\n")
    end = rest.index("\n```", start)
    return head + marker + rest[:start] + transcript + rest[end:]


def main() -> None:
    transcript = asyncio.run(record())
    if "--write" in sys.argv[1:]:
        README.write_text(with_transcript(README.read_text(), transcript))
        print(f"wrote the MCP transcript into {README.name}")
    else:
        print(transcript)


if __name__ == "__main__":
    main()
