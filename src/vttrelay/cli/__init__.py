"""The `vttrelay` command: argument parsing only, one module per command group.

`serve` (the relay and the demo world, run by `vttrelay.server`), `dashboard-link`, `pair`,
`keys`, `tokens`, `accounts` (the relay's store), `backup` and `restore` (the data dir),
`world` (the embedded world against a relay) and `mcp` (the MCP server over stdio). Every
command takes `--data-dir` (default
`$VTTRELAY_DATA_DIR`, else `./data`) and `--database` (a `postgresql://` URL shared by several
relay instances; default `$VTTRELAY_DATABASE_URL`, else the SQLite file `relay.db` in the data
dir). Results a script may capture (a new key, a pairing code) go to stdout alone on their line;
everything else goes to
stderr. Nothing imports this package: it is the top layer (DESIGN §11).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from vttrelay import __version__
from vttrelay.cli import accounts, backup, dashboard, keys, mcp, pair, serve, tokens, world
from vttrelay.cli.common import common_options, sub_common_options
from vttrelay.relay.accesslog import setup_logging


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="vttrelay", description="HTTP relay for virtual tabletop worlds."
    )
    parser.add_argument("--version", action="version", version=f"vttrelay {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.register(commands)
    dashboard.register(commands, common)
    pair.register(commands, common, sub_common_options())
    keys.register(commands, common)
    tokens.register(commands, common)
    accounts.register(commands, common)
    backup.register(commands, common)
    world.register(commands, common)
    mcp.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(getattr(args, "log_level", None) or "INFO")
    result: int = args.func(args)
    return result
