"""`vttrelay world run|pair|reset|settings`: the embedded world against a relay
(`vttrelay.world.commands` does the work; each of them holds the world lock, so that none
changes a world another process serves); `world create`: a stored world of this relay's sessions
(`vttrelay.sessions.catalog`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vttrelay.cli.common import data_dir, err, relay_config
from vttrelay.relay.store import DEFAULT_ACCOUNT
from vttrelay.server import datadir
from vttrelay.sessions.catalog import CatalogError, WorldCatalog
from vttrelay.world import commands as world

WorldCommand = Callable[[argparse.Namespace], int]


def _in_data_dir(command: WorldCommand) -> WorldCommand:
    """`command` with `args.data_dir` filled in (`$VTTRELAY_DATA_DIR`, else ./data, when not
    given)."""

    def run(args: argparse.Namespace) -> int:
        args.data_dir = str(data_dir(args))
        return command(args)

    return run


def _world_locked(name: str, command: WorldCommand) -> WorldCommand:
    """`command` (`vttrelay world NAME`) run while this process holds the data dir's world lock
    (`datadir.hold_world`, as `vttrelay serve` does): refused in one line, exit code 1 (as a
    second `serve` is), while another process runs or changes that world."""

    def run(args: argparse.Namespace) -> int:
        try:
            lock = datadir.hold_world(Path(args.data_dir), f"vttrelay world {name}")
        except datadir.WorldBusy as busy:
            err(f"vttrelay world {name}: {busy}")
            return 1
        try:
            return command(args)
        finally:
            datadir.release(lock)

    return run


def cmd_world_create(args: argparse.Namespace) -> int:
    config = relay_config(args)
    catalog = WorldCatalog(Path(config.data_dir) / "sessions" / "worlds")
    try:
        created = catalog.create(args.account, args.name)
    except CatalogError as exc:
        err(f"vttrelay world create: {exc.text}")
        return 1
    print(
        f"Created world {created.name!r} (client id {created.client_id}) for account "
        f'{args.account!r}; POST /start-session with {{"worldName": "{created.name}"}} starts it.'
    )
    return 0


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `world run|pair|reset|settings` to the `vttrelay` command."""
    group = commands.add_parser("world", help="run and manage the embedded D&D 5e world")
    actions = group.add_subparsers(dest="world_command", required=True, metavar="ACTION")

    def add(name: str, help_text: str, command: WorldCommand) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = actions.add_parser(name, parents=[common], help=help_text)
        p.set_defaults(func=_in_data_dir(command))
        return p

    p = add("run", "connect the world to a relay and serve it", _world_locked("run", world.cmd_run))
    p.add_argument("--relay", default=None, help="relay URL, e.g. http://127.0.0.1:3010")
    p.add_argument("--token", default=None, help="connection token (default: the paired one)")
    p.add_argument("--client-id", default=None, help="client id (default: the paired one)")

    p = add(
        "pair",
        "pair the world with a relay using a 6-character code; refused while a serve or world "
        "run runs the world",
        _world_locked("pair", world.cmd_pair),
    )
    p.add_argument("code")
    p.add_argument("--relay", required=True, help="relay URL, e.g. http://127.0.0.1:3010")

    add(
        "reset",
        "restore the demo world (all changes and chat are lost); refused while a serve or "
        "world run runs it",
        _world_locked("reset", world.cmd_reset),
    )

    p = add(
        "settings",
        "show or change world settings; refused while a serve or world run runs the world",
        _world_locked("settings", world.cmd_settings),
    )
    p.add_argument(
        "--execute-js", choices=("on", "off"), default=None, help="allow POST /execute-js"
    )
    p.add_argument(
        "--macro-write",
        choices=("on", "off"),
        default=None,
        help="allow creating, updating and deleting macros through /create, /update, /delete",
    )
    p.add_argument(
        "--macro-execute",
        choices=("on", "off"),
        default=None,
        help="allow POST /macro/{uuid}/execute",
    )

    p = actions.add_parser(
        "create",
        parents=[common],
        help="store an embedded world for an account on this relay (POST /start-session with "
        "worldName starts it)",
    )
    p.add_argument("name")
    p.add_argument("--account", default=DEFAULT_ACCOUNT)
    p.set_defaults(func=cmd_world_create)
