"""Names an agent uses, resolved to the uuids the relay takes.

A name is looked for first among the tokens of the active scene (the fight is there), then among
the world's actors, and in the compendiums only when asked for (a `Compendium.` uuid, or
`compendium: true` on `find`). Tokens that share a name get short handles in scene order,
"Goblin 1", "Goblin 2": every tool shows them and takes them back. A token found on the scene is
acted with through its token uuid (`Scene.<s>.Token.<t>`), so an unlinked token (each goblin)
is itself and not the world's Goblin actor; a linked token (a hero) is its world actor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.client import VttRelayError
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import ToolInputError, plain
from vttrelay.world.rules.canvas import numbered_names

UUID_ROOTS = ("Actor.", "Scene.", "Compendium.")
RESOURCE_PREFIX = "vtt://actors/"


def handles(tokens: list[dict[str, Any]]) -> dict[str, str]:
    """Token id -> the name an agent calls it by: its name, numbered in scene order ("Goblin 1",
    "Goblin 2") when other tokens share it (`rules.canvas.numbered_names`)."""
    names = numbered_names([str(t.get("name") or "") for t in tokens])
    return {str(t.get("_id")): name for t, name in zip(tokens, names, strict=True)}


@dataclass(frozen=True)
class SceneTokens:
    """The tokens of a scene with their handles, and each token uuid's handle."""

    scene_id: str | None
    tokens: list[dict[str, Any]]
    handle: dict[str, str] = field(default_factory=dict)  # token id -> handle

    def uuid_of(self, token: dict[str, Any]) -> str:
        return f"Scene.{self.scene_id}.Token.{token.get('_id')}"

    def actor_uuid_of(self, token: dict[str, Any]) -> str:
        """What to act with: a linked token's world actor, else the token itself."""
        if token.get("actorLink") and token.get("actorId"):
            return f"Actor.{token['actorId']}"
        return self.uuid_of(token)

    def token_named(self, text: str) -> dict[str, Any] | None:
        """The token a handle or name names (None when none does); a ToolInputError listing
        the handles when several tokens share the name."""
        wanted = text.strip().casefold()
        named = [t for t in self.tokens if self.handle[str(t.get("_id"))].casefold() == wanted]
        if not named:
            named = [t for t in self.tokens if str(t.get("name") or "").casefold() == wanted]
        if len(named) > 1:
            raise ToolInputError(
                f"{len(named)} tokens on the scene are named {text!r}: "
                + ", ".join(self.handle[str(t.get("_id"))] for t in named)
                + "; name one of them"
            )
        return named[0] if named else None

    def by_uuid(self) -> dict[str, str]:
        """Token uuid -> handle (to name combatants and targets as the scene does)."""
        return {self.uuid_of(t): self.handle[str(t.get("_id"))] for t in self.tokens}

    def view(self) -> list[dict[str, Any]]:
        return [
            {**views.token_view(t), "name": self.handle[str(t.get("_id"))], "uuid": self.uuid_of(t)}
            for t in self.tokens
        ]


async def scene_tokens(relay: Relay, scene_id: str | None = None) -> SceneTokens:
    reply = plain(await relay.canvas.get("tokens", scene_id=scene_id))
    tokens = [t for t in reply.get("data") or [] if isinstance(t, dict)]
    return SceneTokens(reply.get("sceneId"), tokens, handles(tokens))


async def active_tokens(relay: Relay) -> SceneTokens:
    """The active scene's tokens; none when there is no active scene or the key may not read
    the canvas (names then resolve to world actors only)."""
    try:
        return await scene_tokens(relay)
    except VttRelayError:
        return SceneTokens(None, [])


@dataclass(frozen=True)
class Found:
    """A resolved name: what the agent calls it and the uuid to act with."""

    name: str
    uuid: str


def _as_uuid(text: str) -> str | None:
    text = text.removeprefix(RESOURCE_PREFIX)
    return text if text.startswith(UUID_ROOTS) else None


async def resolve(relay: Relay, text: str, tokens: SceneTokens | None = None) -> Found:
    """A token of the active scene (by handle or name), else a world actor (by exact name), or
    the uuid given. An ambiguous or unknown name is a ToolInputError listing the candidates."""
    text = text.strip()
    scene = tokens if tokens is not None else await active_tokens(relay)
    uuid = _as_uuid(text)
    if uuid is not None:  # named as the scene names it when it is one of its tokens
        known = {scene.actor_uuid_of(t): scene.handle[str(t.get("_id"))] for t in scene.tokens}
        known.update(scene.by_uuid())
        return Found(known.get(uuid, uuid), uuid)
    token = scene.token_named(text)
    if token is not None:
        return Found(scene.handle[str(token.get("_id"))], scene.actor_uuid_of(token))
    wanted = text.casefold()
    reply = plain(
        await relay.search.find(query=text, filter="Actor", exclude_compendiums=True, limit=20)
    )
    results = views.search_results(reply)
    hits = [r for r in results if str(r["name"]).casefold() == wanted]
    if len(hits) == 1:
        return Found(str(hits[0]["name"]), str(hits[0]["uuid"]))
    if not hits:
        near = [str(t) for t in scene.handle.values() if wanted in t.casefold()]
        near += [str(r["name"]) for r in results if r["name"] not in near]
        raise ToolInputError(
            f"No token or actor named {text!r}"
            + (f"; similar: {', '.join(near[:5])}" if near else "")
        )
    raise ToolInputError(
        f"{len(hits)} world actors are named {text!r}; give a uuid: "
        + ", ".join(str(h["uuid"]) for h in hits)
    )


async def resolve_actor(relay: Relay, text: str) -> str:
    """The uuid to act with for a name, handle or uuid."""
    return (await resolve(relay, text)).uuid
