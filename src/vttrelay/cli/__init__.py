"""The `vttrelay` command: argument parsing only, one module per command group.

`serve` (the relay and the demo world, run by `vttrelay.server`), `dashboard-link`, `pair`,
`keys`, `tokens`, `accounts` (the relay's store), `backup` and `restore` (the data dir),
`world` (the embedded world against a relay) and `mcp` (the MCP server over stdio). Every
command but `mcp` takes `--config` (the TOML file of `vttrelay serve`), `--data-dir` (default
`$VTTRELAY_DATA_DIR`, else `./data`) and `--database` (a `postgresql://` URL shared by several
relay instances; default `$VTTRELAY_DATABASE_URL`, else the SQLite file `relay.db` in the data
dir), and resolves them, and every other setting it uses (`dashboard-link`: the relay's URL), as
`serve` does (`common.settings`). Results a script may capture (a new key, a pairing code) go
to stdout alone on their line; everything else goes to stderr. Nothing imports this package: it
is the top layer (DESIGN §11).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from vttrelay import __version__
from vttrelay.cli import accounts, backup, dashboard, keys, mcp, pair, serve, tokens, world
from vttrelay.cli.common import common_options, err, settings, sub_common_options
from vttrelay.cli.serve_settings import SettingsError
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
    level = getattr(args, "log_level", None) or "INFO"
    try:
        if getattr(args, "relay_settings", False):  # settings as `serve` resolves them
            level = str(settings(args)["log-level"].value)
        setup_logging(level)
        result: int = args.func(args)
    except SettingsError as bad:
        err(f"vttrelay {args.command}: {bad}")
        return 2
    return result
