"""Every SDK method against the embedded demo world through a real relay, over real sockets.

One case per route of the generated table (`vttrelay.client.groups`): it calls the typed method
with real arguments (after what it needs: a message to delete, an encounter to advance...), and
the reply must conform to the method's declared return type (`types.conforms`) and, for world
replies, be the action's `<action>-result`. GET methods run twice: with `AsyncClient` and with
the sync `Client` (from a thread). Streams: each stream method opens and yields its `connected`
event. A route without a case fails `test_every_route_has_a_case`.
"""

from __future__ import annotations

import asyncio
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.e2e import CLIENT_ID
from tests.support.relay import RelayServer, start_relay

from vttrelay.client import AsyncClient, BadRequest, Client
from vttrelay.client.groups import ROUTES
from vttrelay.client.types import Connected, conforms
from vttrelay.relay.accounts import key_requests
from vttrelay.relay.routes import ALL_SCOPES
from vttrelay.sessions.manager import SessionManager
from vttrelay.sessions.model import RelayHooks, SessionConfig
from vttrelay.world.embedded import EmbeddedWorld
from vttrelay.world.model import documents

PIP = "Actor.pipMonk000000001"
ELARA = "Actor.elaraWizard00001"
BRANN = "Actor.brannFighter0001"
GOBLIN = "Actor.goblinNpc0000001"
PIP_TOKEN = "Scene.sceneTavern00001.Token.tokPip0000000001"
AMBUSH = "Goblin Ambush"
Method = Callable[..., Awaitable[Any]]


@dataclass
class Ctx:
    relay: Any  # the RelayServer fixture
    sdk: AsyncClient  # for a case's own setup calls
    world: EmbeddedWorld


Case = Callable[[Ctx, Method], Awaitable[Any]]
CASES: dict[str, Case] = {}


def case(key: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        assert key not in CASES, key
        CASES[key] = fn
        return fn

    return register


def simple(key: str, *args: Any, **kwargs: Any) -> None:
    async def run(ctx: Ctx, method: Method) -> Any:
        return await method(*args, **kwargs)

    case(key)(run)


# D&D 5e --------------------------------------------------------------------------------------

simple("GET /dnd5e/get-actor-details", PIP, ["resources", "stats"])
simple("POST /dnd5e/modify-item-charges", ELARA, -1, item_name="Wand of Magic Missiles")
simple("POST /dnd5e/use-ability", PIP, ability_name="Unarmed Strike", target_uuid=GOBLIN)
simple("POST /dnd5e/use-feature", BRANN, ability_name="Second Wind")
simple("POST /dnd5e/use-spell", ELARA, ability_name="Magic Missile")
simple("POST /dnd5e/use-item", PIP, ability_name="Potion of Healing")
simple("POST /dnd5e/short-rest", actor_uuid=PIP, auto_hd=True)
simple("POST /dnd5e/long-rest", actor_uuid=PIP)
simple("POST /dnd5e/skill-check", PIP, "ste", advantage=True, create_chat_message=False)
simple("POST /dnd5e/ability-save", PIP, "dex", bonus="1d4")
simple("POST /dnd5e/ability-check", PIP, "str", disadvantage=True)
simple("POST /dnd5e/modify-experience", 100, actor_uuid=PIP)
simple("GET /dnd5e/concentration", actor_uuid=ELARA)
simple("POST /dnd5e/equip-item", False, actor_uuid=BRANN, item_name="Shield")
simple("POST /dnd5e/attune-item", True, actor_uuid=ELARA, item_name="Wand of Magic Missiles")
simple(
    "POST /dnd5e/transfer-currency",
    {"gp": 1},
    source_actor_uuid=PIP,
    target_actor_uuid=ELARA,
)
simple("POST /dnd5e/modify-currency", PIP, "gp", 5)
simple("POST /dnd5e/prepare-spell", ELARA, "Sleep", True)


@case("POST /dnd5e/death-save")
async def _death_save(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.entities.update({"system.attributes.hp.value": 0}, uuid=PIP)
    return await method(PIP)


async def _concentrating(ctx: Ctx) -> None:
    await ctx.sdk.dnd5e.prepare_spell(ELARA, "Detect Magic", True)
    await ctx.sdk.dnd5e.use_spell(ELARA, ability_name="Detect Magic")


@case("POST /dnd5e/break-concentration")
async def _break(ctx: Ctx, method: Method) -> Any:
    await _concentrating(ctx)
    return await method(actor_uuid=ELARA)


@case("POST /dnd5e/concentration-save")
async def _con_save(ctx: Ctx, method: Method) -> Any:
    await _concentrating(ctx)
    return await method(12, actor_uuid=ELARA)


# Chat ----------------------------------------------------------------------------------------

simple("GET /chat", limit=5)
simple("POST /chat", "Roll for initiative!", alias="Narrator", flavor="The tavern falls silent")
simple("DELETE /chat")


@case("DELETE /chat/{messageId}")
async def _chat_delete(ctx: Ctx, method: Method) -> Any:
    sent = await ctx.sdk.chat.send("to be deleted")
    return await method(sent["data"]["id"])


# Utility, rolls, effects ---------------------------------------------------------------------

simple("POST /select", uuids=[PIP_TOKEN])
simple("GET /selected")
simple("GET /players")
simple("GET /world-info")
simple("POST /execute-js", script="return game.actors.getName('Pip Tealeaf').name")
simple("POST /roll", "2d6+1", flavor="damage")
simple("GET /rolls", limit=5)
simple("GET /effects/list")
simple("GET /effects", PIP)
simple("POST /effects", PIP, status_id="prone")


@case("GET /lastroll")
async def _last_roll(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.rolls.roll("1d20")
    return await method()


@case("DELETE /effects")
async def _remove_effect(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.effects.add(PIP, status_id="prone")
    return await method(PIP, status_id="prone")


# Structure and macros ------------------------------------------------------------------------

simple("GET /structure", types=["Actor"])
simple("POST /create-folder", "SDK folder", "Actor")
simple("GET /macros")
simple("POST /macro/{uuid}/execute", "Macro.macroGreeting001")


@case("GET /get-folder")
async def _get_folder(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.structure.create_folder("Villains", "Actor")
    return await method("Villains")


@case("DELETE /delete-folder")
async def _delete_folder(ctx: Ctx, method: Method) -> Any:
    made = await ctx.sdk.structure.create_folder("Temporary", "Actor")
    return await method(made["data"]["id"])


# Canvas --------------------------------------------------------------------------------------

WALL = {"c": [100, 100, 300, 100]}
simple("GET /canvas/{documentType}", "tokens")
simple("POST /canvas/{documentType}", "walls", WALL)
simple("PUT /canvas/{documentType}", "tokens", "tokPip0000000001", {"x": 900})
simple("POST /move-token", 900, 800, uuid=PIP_TOKEN)
simple("GET /measure-distance", origin_x=0, origin_y=0, target_x=500, target_y=0)


@case("DELETE /canvas/{documentType}")
async def _delete_wall(ctx: Ctx, method: Method) -> Any:
    made = (await ctx.sdk.canvas.create("walls", WALL)).get("data")
    assert isinstance(made, list)  # a create answers a list of documents
    return await method("walls", document_id=made[0]["_id"])  # or document_ids=[...]


# Playlists -----------------------------------------------------------------------------------

simple("GET /playlists")
simple("POST /playlist/play", playlist_name=AMBUSH)
simple("POST /playlist/volume", 0.3, playlist_name=AMBUSH)
simple("POST /play-sound", "sounds/drums.wav", volume=0.5)


@case("POST /playlist/stop")
async def _stop(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.playlists.play(playlist_name=AMBUSH)
    return await method(playlist_name=AMBUSH)


@case("POST /playlist/next")
async def _next(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.playlists.play(playlist_name=AMBUSH)
    return await method(playlist_name=AMBUSH)


@case("POST /stop-sound")
async def _stop_sound(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.playlists.play_sound("sounds/drums.wav")
    return await method(src="sounds/drums.wav")


# Users ---------------------------------------------------------------------------------------

simple("GET /users")
simple("GET /user", name="Aria")
simple("POST /user", "Cara", role=1)
simple("PUT /user", {"color": "#123456"}, name="Ben")
simple("DELETE /user", name="Ben")

# Encounters ----------------------------------------------------------------------------------

simple("GET /encounters")
simple("POST /start-encounter", start_with_players=True, roll_all=True)


def _in_encounter(key: str, **kwargs: Any) -> None:
    async def run(ctx: Ctx, method: Method) -> Any:
        await ctx.sdk.encounters.start(start_with_players=True, roll_all=True)
        return await method(**kwargs)

    case(key)(run)


_in_encounter("POST /next-turn")
_in_encounter("POST /next-round")
_in_encounter("POST /last-turn")
_in_encounter("POST /last-round")
_in_encounter("POST /end-encounter")
_in_encounter("POST /add-to-encounter", uuids=["Scene.sceneTavern00001.Token.tokElara00000001"])


_in_encounter("POST /roll-initiative", uuids=[PIP_TOKEN])
_in_encounter("POST /set-initiative", initiative=12, uuid=PIP_TOKEN)


@case("POST /remove-from-encounter")
async def _remove_from(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.encounters.start(start_with_players=True)
    return await method(uuids=[PIP_TOKEN])


# Scenes --------------------------------------------------------------------------------------

simple("GET /scene", name=AMBUSH)
simple("POST /scene", {"name": "SDK Scene", "width": 1000, "height": 800})
simple("PUT /scene", {"darkness": 0.5}, name=AMBUSH)
simple("DELETE /scene", name=AMBUSH)
simple("GET /scene/image", active=True, width=200)


@case("GET /scene/image/raw")
async def _raw_image(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.scenes.update({"background": "maps/tavern.webp"}, active=True)
    return await method(active=True)


simple("POST /switch-scene", name=AMBUSH)

# Files ---------------------------------------------------------------------------------------

HELLO = "data:text/plain;base64,SGVsbG8="
simple("POST /upload", path="sdk", filename="hello.txt", file_data=HELLO, overwrite=True)
simple("GET /file-system", recursive=True)


simple("GET /sheet", uuid=ELARA, format="jpeg", scale=0.5)


@case("GET /download")
async def _download(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.files.upload(path="sdk", filename="hello.txt", file_data=HELLO, overwrite=True)
    data = await method(path="sdk/hello.txt")
    assert data == b"Hello"
    return data


# Entities and search -------------------------------------------------------------------------

simple("GET /get", uuid=PIP)
simple("POST /create", "Actor", {"name": "Sdk Ogre", "type": "npc"})
simple("PUT /update", {"name": "Pip the Quiet"}, uuid=PIP)
simple("DELETE /delete", uuid=GOBLIN)
simple("POST /give", from_uuid=PIP, to_uuid=ELARA, item_name="Torch")
simple("POST /remove", actor_uuid=PIP, item_name="Torch")
simple("POST /increase", "system.attributes.hp.value", 1, uuid=GOBLIN)
simple("POST /decrease", "system.attributes.hp.value", 1, uuid=GOBLIN)
simple("POST /kill", uuid=GOBLIN)
simple("GET /search", query="pip")

# Sessions (a session manager is attached to the relay: `ctx`) --------------------------------

simple("POST /session-handshake", foundry_url="http://127.0.0.1:30000", username="Gamemaster")
simple("GET /session")
simple("GET /session/worlds")
simple("POST /session/worlds", name="sdk-made")


@case("POST /start-session")
async def _start_session(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.sessions.create_world(name="sdk-start")
    return await method(world_name="sdk-start")


@case("DELETE /end-session")
async def _end_session(ctx: Ctx, method: Method) -> Any:
    await ctx.sdk.sessions.create_world(name="sdk-end")
    started = await ctx.sdk.sessions.start(world_name="sdk-end")
    return await method(session_id=started["sessionId"])


# The relay's own endpoints -------------------------------------------------------------------

simple("GET /clients")
simple("GET /api/key")
simple("GET /api/health")
simple("GET /api/status")
simple("GET /openapi.json")
simple("GET /api/clients/{clientId}/active", CLIENT_ID)
simple("POST /auth/pair-request", "another-world", world_title="Another World")
simple("POST /auth/key-request", "Dice Bot", ["chat:read", "dnd5e"])


@case("POST /auth/pair")
async def _pair(ctx: Ctx, method: Method) -> Any:
    return await method(ctx.relay.store.create_pairing_code(), "second-world")


@case("POST /api/self-unpair")
async def _unpair(ctx: Ctx, method: Method) -> Any:
    return await method(ctx.relay.token(client_id="spare-world"))


@case("GET /auth/pair-request/{code}/status")
async def _pair_status(ctx: Ctx, method: Method) -> Any:
    asked = await ctx.sdk.auth.pair_request("another-world")
    return await method(asked["code"])


@case("GET /auth/key-request/{code}/status")
async def _key_status(ctx: Ctx, method: Method) -> Any:
    asked = await ctx.sdk.auth.key_request("Dice Bot", ["chat:read"])
    return await method(asked["code"])


@case("POST /auth/key-request/exchange")
async def _key_exchange(ctx: Ctx, method: Method) -> Any:
    asked = await ctx.sdk.auth.key_request(
        "Dice Bot", ["chat:read"], callback_url="https://bot.example/done"
    )
    done = key_requests.approve_key_request(ctx.relay.store, asked["code"], "default")
    assert done.exchange_code
    return await method(done.exchange_code)


# The tests -----------------------------------------------------------------------------------

BY_KEY = {r.key: r for r in ROUTES}
CALLED = [r.key for r in ROUTES if r.reply != "stream"]
STREAMS = [r.key for r in ROUTES if r.reply == "stream"]


def test_every_route_has_a_case() -> None:
    assert sorted(set(CALLED) - set(CASES)) == []
    assert sorted(set(CASES) - set(CALLED)) == []


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[RelayServer]:
    """The relay of these tests with a session manager, as `vttrelay serve` makes one (the
    session routes are given it when the application is built)."""
    config = SessionConfig(tmp_path / "sessions", headless_allow=("127.0.0.1:30000",))

    async def no_token(account: str, client_id: str, name: str) -> str:
        raise AssertionError("set once the relay runs")

    sessions = SessionManager(config, RelayHooks(no_token, no_revoke, lambda c, a: False))
    server = await start_relay(tmp_path / "relay", sessions=sessions)

    async def mint(account: str, client_id: str, name: str) -> str:
        return str(server.store.create_connection_token(account, client_id, name=name))

    async def revoke(secret: str) -> None:
        server.store.revoke_token(secret)

    def is_live(client_id: str, account: str) -> bool:
        live = server.state.registry.get(client_id)
        return live is not None and live.account == account

    sessions.hooks = RelayHooks(mint, revoke, is_live, server.ws_url)
    await sessions.open()
    try:
        yield server
    finally:
        await sessions.close()
        await server.stop()


async def no_revoke(secret: str) -> None:
    return None


@pytest.fixture
async def ctx(relay: Any, start_world: Any) -> Any:
    world: EmbeddedWorld = await start_world(relay)
    with world.world.store.transaction() as tx:  # what a GM switches on for scripts and macros
        documents.set_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, True)
        documents.set_setting(tx, documents.SETTING_ALLOW_MACRO_EXECUTE, True)
    key = relay.key(ALL_SCOPES, rate_per_minute=0)
    async with AsyncClient(relay.url, key) as sdk:
        yield Ctx(relay, sdk, world), key


def _check(key: str, method: Any, reply: Any) -> None:
    spec = BY_KEY[key]
    shape = typing.get_type_hints(method)["return"]
    assert conforms(reply, shape) == [], (key, reply)
    if spec.reply == "bytes":
        assert isinstance(reply, bytes) and reply
    elif spec.action is not None:
        assert reply["type"] == f"{spec.action}-result", reply
        assert "error" not in reply


@pytest.mark.parametrize("key", CALLED)
async def test_sdk_method(key: str, ctx: tuple[Ctx, str]) -> None:
    context, api_key = ctx
    spec = BY_KEY[key]
    method = getattr(getattr(context.sdk, spec.group), spec.name)
    try:
        reply = await CASES[key](context, method)
    except BadRequest as exc:
        raise AssertionError(f"{key}: {exc.body}") from None
    _check(key, method, reply)
    if spec.method != "GET":
        return
    with Client(context.relay.url, api_key) as sync:
        sync_method = getattr(getattr(sync, spec.group), spec.name)

        async def in_thread(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(sync_method, *args, **kwargs)

        _check(key, sync_method, await CASES[key](context, in_thread))


@pytest.mark.parametrize("key", STREAMS)
async def test_sdk_stream(key: str, ctx: tuple[Ctx, str]) -> None:
    context, _ = ctx
    spec = BY_KEY[key]
    events = getattr(context.sdk.streams, spec.name)(client_id=CLIENT_ID)
    first = await asyncio.wait_for(anext(events), 5)
    await events.aclose()
    assert first.event == "connected" and conforms(first.data, Connected) == []
    assert first.data["clientId"] == CLIENT_ID
