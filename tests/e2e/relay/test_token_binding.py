"""A connection token connects only as the client id it was issued for (DESIGN §6 item 8, issue 9
"A world token is bound to its client id"): any other `?id=` is refused with the module's
auth-failure close code (1008) before `auth-success`, and nothing stored changes. The embedded
world's fixed id accepts only the token `vttrelay serve` minted for it, before and after a restart.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
from tests.support.e2e import CLIENT_ID, eventually

from vttrelay.protocol import Close
from vttrelay.relay.link.handshake import TOKEN_NOT_FOR_ID

REFUSED: tuple[Any, str, list[Any]] = (Close.AUTH_FAILED, TOKEN_NOT_FOR_ID, [])


async def _first_answer(ws_url: str, client_id: str, token: str) -> tuple[Any, str, list[Any]]:
    """Connect as `client_id` with `token`: (close code, reason, frames before the close)."""
    frames: list[Any] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(ws_url, params={"id": client_id, "worldId": "evil"}) as ws,
    ):
        await ws.send_str(orjson.dumps({"type": "auth", "token": token}).decode())
        while True:
            msg = await ws.receive(timeout=5)
            if msg.type != aiohttp.WSMsgType.TEXT:
                return ws.close_code, str(msg.extra), frames
            frames.append(orjson.loads(msg.data))


async def test_another_accounts_token_cannot_take_an_offline_worlds_id(relay: Any) -> None:
    alice = await relay.world("a-world", account="alice")
    await alice.close()
    await eventually(lambda: relay.state.registry.get("a-world") is None)
    before = relay.store.known_client("a-world")
    bob_token = relay.token(account="bob", client_id="b-world")

    assert await _first_answer(relay.ws_url, "a-world", bob_token) == REFUSED
    assert relay.state.registry.get("a-world") is None
    assert relay.store.known_client("a-world") == before  # still alice's, metadata untouched
    bob_clients = await relay.call("GET", "/clients", key=relay.key(account="bob"))
    assert "a-world" not in bob_clients.body.decode()
    again = await relay.world("a-world", account="alice")  # the real world is not locked out
    assert relay.state.registry.get("a-world").account == "alice" and not again.closed.is_set()


async def test_same_account_other_worlds_token_cannot_replace_a_live_world(relay: Any) -> None:
    live = await relay.world("w-a")
    other = relay.token(client_id="w-b")  # same account, same host

    assert await _first_answer(relay.ws_url, "w-a", other) == REFUSED
    assert not live.closed.is_set()
    registered = relay.state.registry.get("w-a")
    assert registered is not None and registered.token_id != relay.store.token_by_secret(other).id
    answer = await relay.call("GET", "/world-info", key=relay.key(), params={"clientId": "w-a"})
    assert answer.status == 200 and len(live.received) == 1


async def test_the_right_token_still_connects_and_replaces_from_the_same_host(relay: Any) -> None:
    old = await relay.world("w-same")
    new = await relay.world("w-same")  # a new token for the same id, same host: a reconnect
    assert await old.wait_closed() == Close.NORMAL
    new_token = relay.store.token_by_secret(new.token)
    assert new_token is not None and relay.state.registry.get("w-same").token_id == new_token.id


async def test_embedded_world_id_accepts_only_its_pinned_token_across_a_restart(
    relay_factory: Any, start_world: Any, tmp_path: Any
) -> None:
    data = tmp_path / "pinned"
    first = await relay_factory(data_dir=data)
    own = first.token(client_id=CLIENT_ID)
    pinned = first.store.token_by_secret(own).id
    # a token for the same id, of the same account (e.g. minted by an earlier pairing)
    rogue = first.store.create_connection_token("default", CLIENT_ID, name="rogue")
    first.config.reserved_client_ids = {CLIENT_ID: pinned}
    handle = await start_world(first, token=own)

    assert await _first_answer(first.ws_url, CLIENT_ID, rogue) == REFUSED
    assert first.state.registry.get(CLIENT_ID).token_id == pinned

    await first.stop()  # during the restart the embedded world is away
    second = await relay_factory(
        data_dir=data, port=first.port, reserved_client_ids={CLIENT_ID: pinned}
    )
    assert await _first_answer(second.ws_url, CLIENT_ID, rogue) == REFUSED
    await eventually(lambda: handle.agent.connected.is_set(), timeout=10)
    assert second.state.registry.get(CLIENT_ID).token_id == pinned


async def test_a_reserved_id_is_never_handed_out_by_pairing(relay_factory: Any) -> None:
    relay = await relay_factory(reserved_client_ids={CLIENT_ID: None})
    code = relay.store.create_pairing_code()
    body = {"code": code, "worldId": "w", "existingClientId": CLIENT_ID}
    got = await relay.call("POST", "/auth/pair", json=body)
    assert got.status == 200 and got.json()["clientId"] != CLIENT_ID
    own = relay.token(client_id=CLIENT_ID)  # reserved for nobody (serve --no-world)
    assert await _first_answer(relay.ws_url, CLIENT_ID, own) == REFUSED
