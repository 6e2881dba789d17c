"""Encounter actions (endpoints-beyond-seed §8): encounters, start-encounter, next-turn,
next-round, last-turn, last-round, end-encounter, add-to-encounter, remove-from-encounter.

Combats are `Combat` documents holding their `combatants`; `rules.combat` computes the turn
order and every move. The current encounter (`game.combat`) is the active combat. Each action
changes at most one combat, in one transaction; the combat events (`start`, `turn`,
`combatant-add`, `combatant-remove`, `end`) come from those document changes (`runtime.events`).

Effects with a duration in rounds or turns count down as the combat advances: next-turn and
next-round delete the combatants' effects whose duration ran out (`rules.effects.is_expired`);
going back restores nothing, as in the tabletop.

Differences from the module, so that a call does what its caller asked (DESIGN §6 item 9,
endpoints-beyond-seed §15 X1 and X19): `encounterId` picks the encounter on every route (the
relay sends it under that name), `tokenUuids` seeds start-encounter, and a failed last-round
answers `last-round-result` (the module's `encounter-navigation` reply leaves the caller waiting
until the relay times out). Initiative rolled by start-encounter is rolled before the first turn
is taken, so the encounter opens at the top of the order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from vttrelay.world.errors import ActionError
from vttrelay.world.model import documents
from vttrelay.world.rules import combat as rules
from vttrelay.world.rules import effects as effect_rules
from vttrelay.world.rules.permissions import OWNER, assert_can_write, assert_gm, resolved_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action

DEFAULT_NAME: Final = "New Encounter"
NO_ACTIVE: Final = "No active encounter"
NOT_FOUND: Final = "Entity not found"
NO_COMBATANT: Final = "No combatant found for this entity"
NO_ACTOR_TOKEN: Final = "No token found for this actor in the current scene"
NOT_TOKEN_OR_ACTOR: Final = "Entity must be a Token or Actor"
SETTING_TRACKER: Final = "core.combatTrackerConfig"  # {resource, skipDefeated}
SETTING_TIEBREAKER: Final = "dnd5e.initiativeDexTiebreaker"
MAX_UUIDS: Final = 1_000  # uuids one call names (`uuids`, `tokenUuids`)

Token = tuple[dict[str, Any], dict[str, Any]]  # (scene, token)


# Reading combats ---------------------------------------------------------------------------------


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


def _skip_defeated(ctx: ActionContext) -> bool:
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


def _token_of(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> Token | None:
    return (lookup or Lookup(ctx)).token_of(combatant)


def _actor_of(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> dict[str, Any] | None:
    """`Combatant#actor`: its token's actor (an unlinked token's own synthetic actor), else the
    world actor it names."""
    found = _token_of(ctx, combatant, lookup)
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
        if rules.is_defeated(c, _actor_of(ctx, c, lookup))
    }


def combatant_view(
    ctx: ActionContext, combatant: dict[str, Any], lookup: Lookup | None = None
) -> dict[str, Any]:
    """`{id, name, tokenUuid, actorUuid, img, initiative, hidden, defeated}` (§8.1)."""
    lookup = lookup or Lookup(ctx)
    found = _token_of(ctx, combatant, lookup)
    actor = _actor_of(ctx, combatant, lookup)
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


def _owns(ctx: ActionContext, uuid: Any) -> bool:
    res = documents.resolve_uuid(ctx.tx, uuid)
    return res is not None and resolved_level(ctx.user, res) >= OWNER


@action("encounters", error_tail={"encounters": []})
def encounters(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Every combat with its combatants in turn order; a player does not see hidden
    combatants whose actor it does not own."""
    current = documents.current_combat(ctx.tx)
    out = []
    for combat in ctx.tx.all("Combat"):
        views = combatant_views(ctx, combat)
        if not documents.is_gm(ctx.user):
            views = [v for v in views if not v["hidden"] or _owns(ctx, v["actorUuid"])]
        out.append(
            {
                **summary(combat),
                "current": current is not None and current["_id"] == combat["_id"],
                "combatants": views,
            }
        )
    return {"encounters": out}


# Writing combats ---------------------------------------------------------------------------------


def save_combat(ctx: ActionContext, combat: dict[str, Any]) -> None:
    documents.touch_stats(combat, ctx.now_ms(), ctx.acting_user_id)
    ctx.tx.put("Combat", combat)


def _new_combatant(
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


def _members(combat: dict[str, Any]) -> set[tuple[Any, Any]]:
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


def _token_for_uuid(ctx: ActionContext, uuid: Any, operation: str) -> Token:
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


def _has_player_owner(ctx: ActionContext, actor: dict[str, Any] | None) -> bool:
    """`Actor#hasPlayerOwner`: some non-GM user owns it."""
    if actor is None:
        return False
    ownership = actor.get("ownership") or {}
    for user in ctx.tx.all("User"):
        if documents.is_gm(user):
            continue
        level = ownership.get(user["_id"], ownership.get("default", 0))
        if isinstance(level, int | float) and level >= OWNER:
            return True
    return False


def roll_initiative(
    ctx: ActionContext,
    combat: dict[str, Any],
    which: Callable[[dict[str, Any]], bool],
    *,
    keep_current: bool,
) -> None:
    """Roll dnd5e initiative for the combatants `which` picks, each roll posted to chat as the
    tabletop does (whispered to the GMs for a hidden combatant); the current combatant stays
    current when `keep_current`."""
    current = rules.current_combatant(combat) if keep_current else None
    tiebreaker = bool(ctx.setting(SETTING_TIEBREAKER, False))
    gms = [u["_id"] for u in ctx.tx.all("User") if documents.is_gm(u)]
    lookup = Lookup(ctx)  # rolling writes chat and the combat, no scene
    for combatant in combat.get("combatants") or []:  # the order they joined, as rollAll does
        if not which(combatant):
            continue
        actor = _actor_of(ctx, combatant, lookup) or {}
        formula = rules.initiative_formula(
            effect_rules.apply_changes(actor), dex_tiebreaker=tiebreaker
        )
        roll = ctx.roll(formula)
        combatant["initiative"] = roll.total
        found = _token_of(ctx, combatant, lookup)
        name = combatant.get("name") or actor.get("name", "")
        ctx.create_chat_message(
            content=str(roll.total),
            speaker={
                "scene": found[0]["_id"] if found else None,
                "actor": actor.get("_id"),
                "token": found[1]["_id"] if found else None,
                "alias": name,
            },
            flavor=f"{name} rolls for Initiative!",
            rolls=[roll.to_chat()],
            whisper=gms if combatant.get("hidden") else (),
            flags={"core": {"initiativeRoll": True}},
        )
    if current is not None:
        combat["turn"] = rules.turn_keeping(combat, current["_id"], combat["combatants"])


def _without_initiative(combatant: dict[str, Any]) -> bool:
    return combatant.get("initiative") is None


def _activate(ctx: ActionContext, combat: dict[str, Any]) -> None:
    """`Combat#activate`: this combat becomes the current one, no other stays active."""
    for other in ctx.tx.all("Combat"):
        if other.get("active") and other["_id"] != combat["_id"]:
            other["active"] = False
            save_combat(ctx, other)
    combat["active"] = True


@action("start-encounter")
def start_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Create and start an encounter with the given, the players' and the selected tokens."""
    assert_gm(ctx, "start encounters")
    name = frame.get("name")
    combat: dict[str, Any] = {
        "_id": ctx.new_id(),
        "type": "base",
        "system": {},
        "name": name if isinstance(name, str) and name else DEFAULT_NAME,
        "scene": None,
        "groups": [],
        "combatants": [],
        "active": False,
        "round": 0,
        "turn": None,
        "sort": 0,
        "flags": {},
        "_stats": documents.new_stats(ctx.now_ms(), ctx.acting_user_id),
    }
    combat.update(rules.start(combat))
    tokens: list[Token] = []
    for uuid in _uuid_list(frame, "tokenUuids"):
        try:
            tokens.append(_token_for_uuid(ctx, uuid, "add to encounter"))
        except ActionError as exc:
            raise ActionError(f"{exc.message}: {uuid}") from None
    scene = documents.active_scene(ctx.tx)
    if frame.get("startWithPlayers") is True and scene is not None:
        tokens += [
            (scene, t)
            for t in scene.get("tokens") or ()
            if _has_player_owner(ctx, ctx.tx.get("Actor", str(t.get("actorId"))))
        ]
    if frame.get("startWithSelected") is True and scene is not None:
        tokens += [(scene, t) for t in ctx.selected_tokens()]
    members = _members(combat)
    for token_scene, token in tokens:
        if (token_scene["_id"], token["_id"]) not in members:
            members.add((token_scene["_id"], token["_id"]))
            combat["combatants"].append(_new_combatant(ctx, token_scene, token))
    if frame.get("rollNPC") is True:
        lookup = Lookup(ctx)
        roll_initiative(
            ctx,
            combat,
            lambda c: (
                _without_initiative(c) and not _has_player_owner(ctx, _actor_of(ctx, c, lookup))
            ),
            keep_current=False,
        )
    if frame.get("rollAll") is True:
        roll_initiative(ctx, combat, _without_initiative, keep_current=False)
    _activate(ctx, combat)
    save_combat(ctx, combat)
    return {
        "encounterId": combat["_id"],
        "encounter": {**summary(combat), "combatants": combatant_views(ctx, combat)},
    }


# Navigation --------------------------------------------------------------------------------------

Move = Callable[[dict[str, Any], set[str], bool], rules.TurnUpdate | None]


def _expire_effects(ctx: ActionContext, combat: dict[str, Any]) -> None:
    """Delete the combatants' effects whose round/turn duration ran out now that the combat
    moved on (each actor once; an unlinked token's own actor through its delta)."""
    seen: set[str] = set()
    for combatant in combat.get("combatants") or ():
        actor = _actor_of(ctx, combatant)
        if actor is None or documents.actor_uuid_of(actor) in seen:
            continue
        seen.add(documents.actor_uuid_of(actor))
        if effect_rules.remove_expired(actor, combat):
            documents.touch_stats(actor, ctx.now_ms(), ctx.acting_user_id)
            documents.put_actor(ctx.tx, actor)


def _navigate(
    ctx: ActionContext,
    frame: dict[str, Any],
    operation: str,
    name: str,
    move: Move,
    *,
    advances: bool = False,
) -> dict[str, Any]:
    assert_gm(ctx, operation)
    combat = target_combat(ctx, frame)
    update = move(combat, defeated_ids(ctx, combat), _skip_defeated(ctx))
    if update is not None:
        combat.update(update)
        save_combat(ctx, combat)
        if advances:
            _expire_effects(ctx, combat)
    reply: dict[str, Any] = {
        "encounterId": combat["_id"],
        "action": name,
        "currentTurn": combat.get("turn"),
        "currentRound": combat.get("round", 0),
    }
    current = rules.current_combatant(combat)
    if current is not None:
        view = combatant_view(ctx, current)
        reply["actorTurn"] = view["actorUuid"]
        reply["tokenTurn"] = view["tokenUuid"]
    reply["encounter"] = summary(combat)
    return reply


@action("next-turn")
def next_turn(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "advance encounter turns", "nextTurn", rules.next_turn, advances=True
    )


@action("next-round")
def next_round(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "advance encounter rounds", "nextRound", rules.next_round, advances=True
    )


@action("last-turn")
def last_turn(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx, frame, "revert encounter turns", "previousTurn", lambda c, *_: rules.previous_turn(c)
    )


@action("last-round")
def last_round(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    return _navigate(
        ctx,
        frame,
        "revert encounter rounds",
        "previousRound",
        lambda c, *_: rules.previous_round(c),
    )


@action("end-encounter")
def end_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Delete the encounter (the current one unless `encounterId` names another)."""
    assert_gm(ctx, "end encounters")
    wanted = frame.get("encounterId")
    if not wanted:
        current = documents.current_combat(ctx.tx)
        if current is None:
            raise ActionError("No encounter not found")  # sic, the module's text
        wanted = current["_id"]
    combat = ctx.tx.get("Combat", str(wanted))
    if combat is None:
        raise ActionError(f"Encounter with ID {wanted} not found")
    ctx.tx.delete("Combat", combat["_id"])
    return {"encounterId": combat["_id"], "message": "Encounter successfully ended"}


# Membership --------------------------------------------------------------------------------------


def _uuid_list(frame: dict[str, Any], name: str = "uuids") -> list[Any]:
    """The frame's list of uuids `name`, at most MAX_UUIDS (each is resolved on its own)."""
    uuids = frame.get(name)
    if not isinstance(uuids, list):
        return []
    if len(uuids) > MAX_UUIDS:
        raise ActionError(f"At most {MAX_UUIDS} uuids can be given in one call")
    return list(uuids)


def _selected(ctx: ActionContext) -> Iterable[tuple[str, Token]]:
    scene = documents.active_scene(ctx.tx)
    if scene is None:
        return ()
    return [
        (documents.token_uuid(scene["_id"], t["_id"]), (scene, t)) for t in ctx.selected_tokens()
    ]


def _failure(uuid: Any, reason: str) -> dict[str, Any]:
    return {"uuid": uuid, "reason": reason}


@action("add-to-encounter")
def add_to_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Add tokens (an actor: its token on the viewed scene) and, with `selected`, the selected
    tokens not yet in the encounter; the current combatant stays current."""
    combat = target_combat(ctx, frame)
    current = rules.current_combatant(combat)
    added: list[Any] = []
    failed: list[dict[str, Any]] = []
    for uuid in _uuid_list(frame):
        try:
            scene, token = _token_for_uuid(ctx, uuid, "add to encounter")
        except ActionError as exc:
            failed.append(_failure(uuid, exc.message))
            continue
        combat["combatants"].append(_new_combatant(ctx, scene, token))
        added.append(uuid)
    if frame.get("selected") is True:
        members = _members(combat)
        for uuid, (scene, token) in _selected(ctx):
            if (scene["_id"], token["_id"]) in members:
                continue
            members.add((scene["_id"], token["_id"]))
            try:
                _token_for_uuid(ctx, uuid, "add to encounter")
            except ActionError as exc:
                failed.append(_failure(uuid, exc.message))
                continue
            combat["combatants"].append(_new_combatant(ctx, scene, token))
            added.append(uuid)
    if not added:
        return {"encounterId": combat["_id"], "added": added, "failed": failed}
    combat["turn"] = rules.turn_keeping(
        combat, current["_id"] if current else None, combat["combatants"]
    )
    if frame.get("rollInitiative") is True:
        roll_initiative(ctx, combat, _without_initiative, keep_current=True)
    save_combat(ctx, combat)
    return {"encounterId": combat["_id"], "added": added, "failed": failed}


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


@action("remove-from-encounter")
def remove_from_encounter(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Remove tokens' combatants, every combatant of an actor, and with `selected` the selected
    tokens' combatants; the turn passes on if the current combatant leaves."""
    combat = target_combat(ctx, frame)
    doomed: dict[str, None] = {}  # combatant ids, in order, each once
    removed: list[Any] = []
    failed: list[dict[str, Any]] = []
    wanted = [(uuid, False) for uuid in _uuid_list(frame)]
    if frame.get("selected") is True:
        wanted += [(uuid, True) for uuid, _ in _selected(ctx)]
    for uuid, from_selection in wanted:
        try:
            ids = combatants_of(ctx, combat, uuid)
        except ActionError as exc:
            if not (from_selection and exc.message == NO_COMBATANT):
                failed.append(_failure(uuid, exc.message))
            continue
        doomed.update(dict.fromkeys(ids))
        removed.append(uuid)
    if doomed:
        turn = rules.turn_after_removal(
            combat, set(doomed), defeated_ids(ctx, combat), _skip_defeated(ctx)
        )
        combat["combatants"] = [c for c in combat["combatants"] if c["_id"] not in doomed]
        combat["turn"] = turn
        save_combat(ctx, combat)
    return {"encounterId": combat["_id"], "removed": removed, "failed": failed}
