"""What the `vttrelay world ...` commands do (`vttrelay.cli.world` parses them): run a world
against a relay, pair it, reset it, and change its settings.

- `vttrelay world run --relay URL [--token T] [--client-id ID]`: connect and serve until Ctrl-C;
  without `--token` it uses the token stored by `pair` in `<data-dir>/world/connection.json`.
- `vttrelay world pair CODE --relay URL`: trade a pairing code for a connection token
  (`POST /auth/pair` with the module's body) and store it.
- `vttrelay world reset`: restore the demo world (every change and all chat are lost).
- `vttrelay world settings [--execute-js on|off]`: show or change world settings.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any, Final

import httpx

from vttrelay.world.actions.table import standard_table
from vttrelay.world.link.agent import Agent, AgentConfig, relay_http_url
from vttrelay.world.link.connection import (
    Connection,
    forget_token,
    load_connection,
    save_connection,
)
from vttrelay.world.model import documents
from vttrelay.world.runtime.world import World, world_db_path
from vttrelay.world.store.seed import reset
from vttrelay.world.store.sqlite import WorldStore


def _err(*parts: Any) -> None:
    print(*parts, file=sys.stderr)


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir)  # `vttrelay.cli.world` fills in the default


def _world_meta(data_dir: Path) -> dict[str, Any]:
    world = World.open(data_dir, actions=standard_table())
    try:
        return world.connection_query()
    finally:
        world.close()


async def run_world(data_dir: Path, config: AgentConfig) -> str:
    """Serve the world until SIGINT/SIGTERM or until the relay refuses it for good."""
    world = World.open(data_dir, actions=standard_table())
    agent = Agent(world, config)
    task = agent.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(agent.stop()))
    try:
        await task
    finally:
        await agent.stop()
        world.close()
    return agent.stopped_reason or "stopped"


def cmd_run(args: argparse.Namespace) -> int:
    data_dir = _data_dir(args)
    stored = load_connection(data_dir)
    token = args.token or stored.token
    relay = args.relay or stored.relay_url
    if not relay:
        _err("No relay: pass --relay URL (or pair first: vttrelay world pair CODE --relay URL).")
        return 2
    if not token:
        _err("No connection token: pass --token, or pair: vttrelay world pair CODE --relay URL.")
        return 2

    def forget(code: int) -> None:
        if load_connection(data_dir).token == token:
            forget_token(data_dir)
        _err(
            f"The relay refused the token ({code}); pair again: vttrelay world pair CODE "
            "--relay URL"
        )

    config = AgentConfig(
        relay_url=relay,
        token=token,
        client_id=args.client_id or stored.client_id or None,
        on_auth_failure=forget,
    )
    _err(f"World {data_dir / 'world'} connecting to {relay} (Ctrl-C to stop)")
    reason = asyncio.run(run_world(data_dir, config))
    _err(f"World stopped: {reason}")
    return 1 if reason.startswith("auth failed") else 0


def cmd_pair(args: argparse.Namespace) -> int:
    data_dir = _data_dir(args)
    code = str(args.code).strip().upper()
    if len(code) != 6:
        _err("A pairing code has 6 characters.")
        return 2
    stored = load_connection(data_dir)
    meta = _world_meta(data_dir)
    body = {
        "code": code,
        "worldId": meta["worldId"],
        "worldTitle": meta["worldTitle"],
        "existingClientId": stored.client_id or None,
    }
    url = relay_http_url(args.relay) + "/auth/pair"
    try:
        resp = httpx.post(url, json=body, timeout=10.0)
    except httpx.HTTPError as exc:
        _err(f"Cannot reach {url}: {exc}")
        return 1
    try:
        answer = resp.json()
    except ValueError:
        answer = {}
    if resp.status_code != 200 or not isinstance(answer, dict) or not answer.get("token"):
        message = answer.get("error") if isinstance(answer, dict) else None
        _err(f"Pairing failed ({resp.status_code}): {message or resp.text}")
        return 1
    save_connection(
        data_dir,
        Connection(
            relay_url=str(answer.get("relayUrl") or args.relay),
            token=str(answer["token"]),
            client_id=str(answer.get("clientId") or ""),
        ),
    )
    print(answer.get("clientId", ""))
    _err("Paired. Start the world with: vttrelay world run")
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    data_dir = _data_dir(args)
    store = WorldStore(world_db_path(data_dir))
    try:
        reset(store)
    finally:
        store.close()
    _err(f"The demo world in {data_dir / 'world'} is restored.")
    return 0


# `vttrelay world settings` switches: option -> (world setting, what it is called when shown).
SWITCHES: Final = {
    "execute_js": (documents.SETTING_ALLOW_EXECUTE_JS, "execute-js"),
    "macro_write": (documents.SETTING_ALLOW_MACRO_WRITE, "macro-write"),
    "macro_execute": (documents.SETTING_ALLOW_MACRO_EXECUTE, "macro-execute"),
}


def cmd_settings(args: argparse.Namespace) -> int:
    data_dir = _data_dir(args)
    world = World.open(data_dir, actions=standard_table())
    shown: list[str] = []
    try:
        with world.store.transaction() as tx:
            for option, (key, label) in SWITCHES.items():
                wanted = getattr(args, option, None)
                if wanted is not None:
                    documents.set_setting(tx, key, wanted == "on")
                allowed = documents.get_setting(tx, key, False) is True
                shown.append(f"{label}: {'on' if allowed else 'off'}")
    finally:
        world.close()
    print("\n".join(shown))
    return 0
