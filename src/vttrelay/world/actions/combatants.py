"""The combats the encounter actions share (not actions themselves): the combat a call targets,
its combatants' tokens and actors read once per loop (`Lookup`), their views (§8.1), the
tokens a Token or Actor uuid names, new combatants, and saving a combat.

Combats are `Combat` documents holding their `combatants`; `rules.combat` computes the turn
order and every move. The current encounter (`game.combat`) is the active combat.
"""

from __future__ import annotations

from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import combat as rules
from vttrelay.world.rules.permissions import assert_can_write
from vttrelay.world.runtime.context import ActionContext

NO_ACTIVE: Final = "No active encounter"
NOT_FOUND: Final = "Entity not found"
NO_COMBATANT: Final = "No combatant found for this entity"
NO_ACTOR_TOKEN: Final = "No token found for this actor in the current scene"
NOT_TOKEN_OR_ACTOR: Final = "Entity must be a Token or Actor"
SETTING_TRACKER: Final = "core.combatTrackerConfig"  # {resource, skipDefeated}
MAX_UUIDS: Final = 1_000  # uuids one call names (`uuids`, `tokenUuids`)

Token = tuple[dict[str, Any], dict[str, Any]]  # (scene, token)


def target_combat(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """The combat a navigation or membership call acts on: `encounterId`, else the current."""
    wanted = frame.get("encounterId")
    if wanted:
        combat = ctx.tx.get("Combat", str(wanted))
        if combat is None:
            raise ActionError(f"Encounter with ID {wanted} not found")
        return combat
    combat = documents.current_combat(ctx.tx)
    if combat is None:
        raise ActionError(NO_ACTIVE)
    return combat


def skip_defeated(ctx: ActionContext) -> bool:
    config = ctx.setting(SETTING_TRACKER, {})
    return bool(config.get("skipDefeated")) if isinstance(config, dict) else False


class Lookup:
    """The scenes a read-only loop over combatants reads, each read and indexed by token id
    once (reading the scene again for each combatant made such loops quadratic: 2,000
    combatants on a scene of 2,000 tokens took 12 s). Only for loops that write no scene."""

    def __init__(self, ctx: ActionContext) -> None:
        self._ctx = ctx
        self._scenes: dict[str, tuple[dict[str, Any], dict[Any, dict[str, Any]]] | None] = {}

    def token_of(self, combatant: dict[str, Any]) -> Token | None:
        scene_id, token_id = combatant.get("sceneId"), combatant.get("tokenId")
        if not isinstance(scene_id, str):
            return None
        if scene_id not in self._scenes:
            scene = self._ctx.tx.get("Scene", scene_id)
            tokens: dict[Any, dict[str, Any]] = {}
            for t in scene.get("tokens") or () if scene is not None else ():
                tokens.setdefault(t.get("_id"), t)  # the first of an id, as a search finds
            self._scenes[scene_id] = (scene, tokens) if scene is not None else None
        entry = self._scenes[scene_id]
        token = entry[1].get(token_id) if entry is not None else None
        return (entry[0], token) if entry is not None and token is not None else None


def token_of(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> Token | None:
    return (lookup or Lookup(ctx)).token_of(combatant)


def actor_of(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> dict[str, Any] | None:
    """`Combatant#actor`: its token's actor (an unlinked token's own synthetic actor), else the
    world actor it names."""
    found = token_of(ctx, combatant, lookup)
    if found is not None:
        return documents.token_actor(ctx.tx, *found)
    actor_id = combatant.get("actorId")
    return ctx.tx.get("Actor", actor_id) if isinstance(actor_id, str) else None


def defeated_ids(ctx: ActionContext, combat: dict[str, Any]) -> set[str]:
    """Ids of the combat's defeated combatants (`Combatant#isDefeated`)."""
    lookup = Lookup(ctx)
    return {
        str(c["_id"])
        for c in combat.get("combatants") or ()
        if rules.is_defeated(c, actor_of(ctx, c, lookup))
    }


def combatant_view(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> dict[str, Any]:
    """`{id, name, tokenUuid, actorUuid, img, initiative, hidden, defeated}` (§8.1)."""
    lookup = lookup or Lookup(ctx)
    found = token_of(ctx, combatant, lookup)
    actor = actor_of(ctx, combatant, lookup)
    token = found[1] if found else {}
    if found:
        actor_uuid = documents.token_actor_uuid_of(found[0]["_id"], token)
    else:
        actor_uuid = documents.actor_uuid(actor["_id"]) if actor else None
    return {
        "id": combatant["_id"],
        "name": combatant.get("name") or token.get("name") or (actor or {}).get("name"),
        "tokenUuid": documents.token_uuid(found[0]["_id"], token["_id"]) if found else None,
        "actorUuid": actor_uuid,
        "img": combatant.get("img") or (actor or {}).get("img"),
        "initiative": combatant.get("initiative"),
        "hidden": bool(combatant.get("hidden")),
        "defeated": rules.is_defeated(combatant, actor),
    }


def summary(combat: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": combat["_id"],
        "name": combat.get("name"),
        "round": combat.get("round", 0),
        "turn": combat.get("turn"),
    }


def combatant_views(ctx: ActionContext, combat: dict[str, Any]) -> list[dict[str, Any]]:
    lookup = Lookup(ctx)
    return [
        combatant_view(ctx, c, lookup) for c in rules.turn_order(combat.get("combatants") or [])
    ]


def save_combat(ctx: ActionContext, combat: dict[str, Any]) -> None:
    documents.touch_stats(combat, ctx.now_ms(), ctx.acting_user_id)
    ctx.tx.put("Combat", combat)


def new_combatant(
    ctx: ActionContext, scene: dict[str, Any], token: dict[str, Any]
) -> dict[str, Any]:
    actor_id = token.get("actorId")
    actor = ctx.tx.get("Actor", actor_id) if isinstance(actor_id, str) else None
    texture = token.get("texture") or {}
    return {
        "_id": ctx.new_id(),
        "type": "base",
        "system": {},
        "actorId": actor_id,
        "tokenId": token["_id"],
        "sceneId": scene["_id"],
        "name": token.get("name") or (actor or {}).get("name"),
        "img": texture.get("src") or (actor or {}).get("img"),
        "initiative": None,
        "hidden": bool(token.get("hidden")),
        "defeated": False,
        "group": None,
        "flags": {},
        "_stats": documents.new_stats(ctx.now_ms(), ctx.acting_user_id),
    }


def member_keys(combat: dict[str, Any]) -> set[tuple[Any, Any]]:
    """(scene id, token id) of each combatant: whether a token is in the combat, in O(1)."""
    return {(c.get("sceneId"), c.get("tokenId")) for c in combat.get("combatants") or ()}


def _actor_token(ctx: ActionContext, actor: dict[str, Any]) -> Token:
    """The actor's first token on the scene being viewed (the active one)."""
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        raise ActionError("No active scene")
    token = next((t for t in scene.get("tokens") or () if t.get("actorId") == actor["_id"]), None)
    if token is None:
        raise ActionError(NO_ACTOR_TOKEN)
    return scene, token


def token_for_uuid(ctx: ActionContext, uuid: Any, operation: str) -> Token:
    """The token a Token or Actor uuid names; ActionError with the reference's reason."""
    res = documents.resolve_uuid(ctx.tx, uuid)
    if res is None:
        raise ActionError(NOT_FOUND)
    assert_can_write(ctx, res, operation)
    if res.kind == "Token" and res.scene is not None:
        return res.scene, res.doc
    if res.kind == "Actor" and res.parent is None and res.doc is res.root:
        return _actor_token(ctx, res.doc)
    raise ActionError(NOT_TOKEN_OR_ACTOR)


def uuid_list(frame: dict[str, Any], name: str = "uuids") -> list[Any]:
    """The frame's list of uuids `name`, at most MAX_UUIDS (each is resolved on its own)."""
    uuids = frame.get(name)
    if not isinstance(uuids, list):
        return []
    if len(uuids) > MAX_UUIDS:
        raise ActionError(f"At most {MAX_UUIDS} uuids can be given in one call")
    return list(uuids)


def combatants_of(ctx: ActionContext, combat: dict[str, Any], uuid: Any) -> list[str]:
    """Ids of the combatants a Token uuid (its combatant) or an Actor uuid (all of its
    combatants) names; ActionError with the reference's reason."""
    res = documents.resolve_uuid(ctx.tx, uuid)
    if res is None:
        raise ActionError(NOT_FOUND)
    assert_can_write(ctx, res, "remove from encounter")
    members = combat.get("combatants") or []
    if res.kind == "Token" and res.scene is not None:
        scene_id, token_id = res.scene["_id"], res.doc["_id"]
        ids = [
            c["_id"]
            for c in members
            if (c.get("sceneId"), c.get("tokenId")) == (scene_id, token_id)
        ]
    elif res.kind == "Actor" and res.doc is res.root:
        ids = [c["_id"] for c in members if c.get("actorId") == res.doc["_id"]]
    else:
        ids = []
    if not ids:
        raise ActionError(NO_COMBATANT)
    return ids
