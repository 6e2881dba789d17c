"""`vttrelay mcp`: the MCP server over stdio for desktop agents (`vttrelay.mcp.stdio`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from typing import Any

from vttrelay.cli.common import err
from vttrelay.mcp.stdio import CLIENT_ID_ENV, DEFAULT_URL, KEY_ENV, URL_ENV, serve
from vttrelay.protocol import valid_id


def cmd_mcp(args: argparse.Namespace) -> int:
    key = args.key or os.environ.get(KEY_ENV)
    if not key:
        err(f"vttrelay mcp: give --key or set {KEY_ENV}")
        return 2
    for chatty in ("httpx", "mcp"):  # their per-request INFO lines would drown ours
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))
    client_id = args.client_id or os.environ.get(CLIENT_ID_ENV) or None
    if client_id is not None and not valid_id(client_id):
        err(f"vttrelay mcp: {client_id!r} is not a world's client id")
        return 2
    asyncio.run(serve(args.url or os.environ.get(URL_ENV) or DEFAULT_URL, key, client_id))
    return 0


def register(commands: Any) -> None:
    """Add `mcp` to the `vttrelay` command."""
    p = commands.add_parser(
        "mcp",
        help="serve the Model Context Protocol on stdio (for desktop agents)",
        description="An MCP server on stdin/stdout that calls a relay with an API key.",
    )
    p.add_argument(
        "--url", default=None, help=f"the relay (default ${URL_ENV}, else {DEFAULT_URL})"
    )
    p.add_argument("--key", default=None, help=f"the API key (default ${KEY_ENV})")
    p.add_argument(
        "--client-id",
        default=None,
        help=f"the world to play in when the key reaches several (default ${CLIENT_ID_ENV}; "
        "else the agent chooses with the choose_world tool)",
    )
    p.add_argument(
        "--log-level", default="INFO", help="stderr log level (default INFO: one line per call)"
    )
    p.set_defaults(func=cmd_mcp)
