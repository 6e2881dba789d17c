"""Prepare a relay data dir for the bench: one API key and one connection token per fake world.

Written with the relay's own store before the relay starts, exactly as `vttrelay keys create`
and pairing would: the key has every scope and no per-key rate limit (`rate_per_minute=0`), so
the bench measures forwarding, not the 300-per-minute default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from vttrelay.relay.config import RelayConfig
from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.relay.store import DEFAULT_ACCOUNT, RelayStore

CLIENT_PREFIX = "bench-world-"


@dataclass(frozen=True)
class Provisioned:
    """What the loaders and the fake world need: the key and each world's id and token."""

    api_key: str
    worlds: tuple[tuple[str, str], ...]  # (clientId, connection token)

    @property
    def client_ids(self) -> list[str]:
        return [cid for cid, _ in self.worlds]

    def write_worlds(self, path: Path) -> Path:
        """The fake world's `--worlds-file`."""
        path.write_bytes(orjson.dumps([{"clientId": c, "token": t} for c, t in self.worlds]))
        return path


def client_id(index: int) -> str:
    return f"{CLIENT_PREFIX}{index:04d}"


def provision(data_dir: Path, worlds: int) -> Provisioned:
    """Create the key and `worlds` connection tokens in `data_dir`'s relay database."""
    store = RelayStore(RelayConfig(data_dir=data_dir).db_path)
    try:
        _, secret = store.create_key(DEFAULT_ACCOUNT, ALL_SCOPES, rate_per_minute=0, name="bench")
        tokens = tuple(
            (client_id(i), store.create_connection_token(DEFAULT_ACCOUNT, client_id(i), "bench"))
            for i in range(worlds)
        )
    finally:
        store.close()
    return Provisioned(secret, tokens)
