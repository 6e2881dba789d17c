"""The world's stored relay connection: `<data-dir>/world/connection.json`.

Like the module's `connectionToken` / `clientId` / `pairedRelayUrl` settings: written by
`vttrelay world pair`, read by `vttrelay world run`, and the token is forgotten when the relay
closes with a permanent auth failure (1008, 4001, 4002).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

import orjson

from vttrelay.world.runtime.world import world_dir

CONNECTION_FILE: Final = "connection.json"
CONNECTION_TMP: Final = "connection.tmp"  # written first, then renamed over CONNECTION_FILE


@dataclass
class Connection:
    relay_url: str = ""
    token: str = ""
    client_id: str = ""


def connection_path(data_dir: Path) -> Path:
    return world_dir(data_dir) / CONNECTION_FILE


def load_connection(data_dir: Path) -> Connection:
    """The stored connection, or an empty one."""
    path = connection_path(data_dir)
    if not path.exists():
        return Connection()
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, dict):
        return Connection()
    return Connection(
        relay_url=str(data.get("relay_url") or ""),
        token=str(data.get("token") or ""),
        client_id=str(data.get("client_id") or ""),
    )


def save_connection(data_dir: Path, conn: Connection) -> None:
    """Write the connection file (owner-readable only: it holds the token)."""
    path = connection_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(CONNECTION_TMP)
    tmp.write_bytes(orjson.dumps(asdict(conn), option=orjson.OPT_INDENT_2))
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def forget_token(data_dir: Path) -> None:
    """Drop the stored token (keep the relay url and client id), as the module does."""
    conn = load_connection(data_dir)
    if conn.token:
        conn.token = ""
        save_connection(data_dir, conn)
