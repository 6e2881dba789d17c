"""A world that pairs again after the module's "Reset URL" keeps its client id (issue 24; the
reference keeps one id per account and world id), on SQLite and PostgreSQL, played as the module
does it: the Foundry page pairs with `POST /auth/pair` (`worldId`, `worldTitle`,
`serverOrigin`, from the page's origin), connects to /relay with that Origin, and a bot stores
the client id. "Reset URL" forgets the relay URL, the token and the client id and closes the
socket; the GM pairs again with a new code and no `existingClientId`: same id, and the bot's
stored id reaches the world again. A copy of the world on another server (another origin), a
world still connected, and another account's world of the same world id are never taken."""

from __future__ import annotations

from typing import Any

from tests.support.accounts import Auth
from tests.support.relay import WorldDouble

ORIGIN = "https://foundry.example.org"


async def code_of(auth: Auth, session: str) -> str:
    answer = await auth.call("POST", "/auth/connection-tokens", session=session)
    assert answer.status == 201, answer.body
    code: str = answer.json()["code"]
    return code


async def pair(auth: Auth, code: str, origin: str = ORIGIN, **extra: Any) -> Any:
    """The module's POST /auth/pair from a Foundry page at `origin`."""
    body = {"code": code, "worldId": "lost-mine", "worldTitle": "Lost Mine", "serverOrigin": origin,
            "serverFingerprint": "fp-1", **extra}  # fmt: skip
    answer = await auth.call("POST", "/auth/pair", json=body, headers={"Origin": origin})
    assert answer.status == 200, answer.body
    return answer.json()


async def connect(auth: Auth, paired: Any, origin: str = ORIGIN) -> WorldDouble:
    """The module connecting to /relay with what pairing gave it."""
    world = WorldDouble(
        auth.relay.ws_url,
        paired["clientId"],
        paired["token"],
        query={"worldId": "lost-mine", "worldTitle": "Lost Mine"},
        headers={"Origin": origin},
    )
    auth.relay.worlds.append(world)
    await world.connect()
    return world


async def test_a_world_keeps_its_client_id_after_reset_url(auth: Auth) -> None:
    made = await auth.register("gm@example.com")
    session, account = made["sessionToken"], made["id"]
    key = auth.relay.key(["world:info"], account=account)
    first = await pair(auth, await code_of(auth, session))
    world = await connect(auth, first)
    bot_client_id = first["clientId"]  # what a bot stores
    info = await auth.relay.call("GET", "/world-info", key=key, params={"clientId": bot_client_id})
    assert info.status == 200 and world.received

    # Reset URL: the module forgets its relay URL, token and client id and disconnects
    await world.close()
    again = await pair(auth, await code_of(auth, session))
    assert again["clientId"] == bot_client_id and again["token"] != first["token"]
    back = await connect(auth, again)
    seen = len(back.received)
    info = await auth.relay.call("GET", "/world-info", key=key, params={"clientId": bot_client_id})
    assert info.status == 200 and len(back.received) > seen  # the bot reaches the world again
    # one known world, not two
    worlds = (await auth.call("GET", "/auth/known-clients", session=session)).json()["clients"]
    assert [w["clientId"] for w in worlds] == [bot_client_id]

    # while it is connected, a pairing of the same world id gets a new id (issue 20 item 4)
    live_copy = await pair(auth, await code_of(auth, session))
    assert live_copy["clientId"] != bot_client_id
    await back.close()
    # a copy of the world on another server (another page origin) gets an id of its own
    elsewhere = await pair(auth, await code_of(auth, session), origin="http://localhost:30000")
    assert elsewhere["clientId"] not in (bot_client_id, live_copy["clientId"])
    # ... and pairs again as itself
    copy_again = await pair(auth, await code_of(auth, session), origin="http://localhost:30000")
    assert copy_again["clientId"] == elsewhere["clientId"]
    # the original, offline now, is found by its origin first
    original = await pair(auth, await code_of(auth, session))
    assert original["clientId"] == bot_client_id

    # another account's world of the same world id is never taken
    other = await auth.register("other-gm@example.com")
    theirs = await pair(auth, await code_of(auth, other["sessionToken"]))
    assert theirs["clientId"] not in (
        bot_client_id,
        live_copy["clientId"],
        elsewhere["clientId"],
    )
    # an explicit existingClientId of the account's own world is still honoured
    named = await pair(auth, await code_of(auth, session), existingClientId=live_copy["clientId"])
    assert named["clientId"] == live_copy["clientId"]
