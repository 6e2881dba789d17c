"""The worlds a viewer sees, as rows (live here, live on another relay instance, or known
from an earlier connection): the worlds page, the keys form, live events and the console list
them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vttrelay import protocol
from vttrelay.dashboard.sessions import Viewer
from vttrelay.dashboard.views import ago, iso_time
from vttrelay.relay.link.connection import WorldConnection

if TYPE_CHECKING:
    from vttrelay.dashboard.services import RelayServices


@dataclass(frozen=True)
class WorldRow:
    """One world as the worlds page shows it."""

    client_id: str
    account: str
    title: str
    system: str
    foundry: str
    since: str
    since_ago: str
    origin: str
    rpm: int
    subscribers: dict[str, int]
    online: bool
    instance: str = ""  # the relay instance holding a live world, when it is not this one


async def world_rows(state: RelayServices, viewer: Viewer) -> list[WorldRow]:
    """The worlds `viewer` sees: live ones (here or on another instance) and known ones."""
    hub = state.streams.hub
    rows: list[WorldRow] = []
    live: set[str] = set()
    known_clients = await asyncio.to_thread(state.store.known_clients, viewer.account)
    if viewer.account is not None:
        accounts = {viewer.account}
    else:  # every account with a live world here, or one that ever connected anywhere
        accounts = {w.account for w in state.registry} | {k.account for k in known_clients}
    # the directory's listing, as /clients: this instance's worlds and the others'
    found = [w for account in accounts for w in state.registry.for_account(account)]
    for world in sorted(found, key=lambda w: w.client_id):
        live.add(world.client_id)
        meta = world.metadata
        here = world if isinstance(world, WorldConnection) else None
        since = (meta.get("connectedSince") or 0) / 1000
        rows.append(
            WorldRow(
                client_id=world.client_id,
                account=world.account,
                title=str(meta.get("worldTitle") or meta.get("worldId") or ""),
                system=_system(meta),
                foundry=str(meta.get("foundryVersion") or ""),
                since=iso_time(since),
                since_ago=ago(since),
                origin=str(meta.get("ipAddress") or getattr(world, "peer_host", "") or ""),
                rpm=here.requests_per_minute() if here else 0,
                subscribers={
                    ch: n
                    for ch in protocol.CHANNELS
                    if here and (n := hub.count(world.client_id, ch)) > 0
                },
                online=True,
                instance="" if here else str(world.instance_id or ""),
            )
        )
    for known in known_clients:
        if known.client_id in live:
            continue
        meta = known.metadata
        rows.append(
            WorldRow(
                client_id=known.client_id,
                account=known.account,
                title=str(meta.get("worldTitle") or meta.get("worldId") or known.token_name),
                system=_system(meta),
                foundry=str(meta.get("foundryVersion") or ""),
                since=iso_time(known.last_seen),
                since_ago=ago(known.last_seen),
                origin=str(meta.get("ipAddress") or ""),
                rpm=0,
                subscribers={},
                online=False,
            )
        )
    return rows


def _system(meta: dict[str, Any]) -> str:
    name = str(meta.get("systemTitle") or meta.get("systemId") or "")
    version = str(meta.get("systemVersion") or "")
    return f"{name} {version}".strip()
