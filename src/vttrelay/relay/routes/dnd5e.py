"""The D&D 5e routes (`/dnd5e/*`): rolls, rests, items, spells, currency of the dnd5e system."""

from __future__ import annotations

from typing import Final

from vttrelay.relay.routes.common import SELECTED, B, bq, forward
from vttrelay.relay.routes.model import DEFAULT_TIMEOUT, USE_TIMEOUT, Group, Param, Route, Sdk

NAME: Final = "DnD5e"

ACTOR_UUID = bq("actorUuid", "string", description="Actor uuid, `Actor.<id>`.")
ACTOR_UUID_REQ = bq("actorUuid", "string", True, description="Actor uuid, `Actor.<id>`.")
ACTOR_NAME = bq("actorName", "string", description="Actor name (case-insensitive).")
ITEM_UUID = bq("itemUuid", "string", description="Item uuid, `Actor.<id>.Item.<id>`.")
ITEM_NAME = bq("itemName", "string", description="Item name (case-insensitive).")

ABILITY = bq(
    "ability",
    "string",
    True,
    description="One of str, dex, con, int, wis, cha.",
    sdk_type="Ability",
)
ADVANTAGE = bq("advantage", "boolean", description="Roll with advantage.")
CREATE_CHAT_MESSAGE = bq(
    "createChatMessage",
    "boolean",
    default=True,
    description="Post the roll to chat (default true).",
)
ROLL_OPTIONS = (
    ADVANTAGE,
    bq("disadvantage", "boolean", description="Roll with disadvantage."),
    bq("bonus", "string", description="Extra bonus formula, e.g. `1d4` or `+2`."),
    CREATE_CHAT_MESSAGE,
)

USE_PARAMS = (
    ACTOR_UUID_REQ,
    bq("abilityUuid", "string", description="Uuid of the item to use."),
    bq("abilityName", "string", description="Name of the item to use."),
    bq("targetUuid", "string", description="Token or actor uuid to target."),
    bq("targetName", "string", description="Token or actor name to target."),
    bq(
        "targetUuids",
        "array",
        description="Several token or actor uuids to target (at most 50; vttrelay): the use is "
        "spent and its damage rolled once, each target saves and takes damage on its own.",
        sdk_type="Sequence[str]",
    ),
    bq(
        "applyDamage",
        "boolean",
        description="The target takes the damage rolled (after its saving throw).",
    ),
)


def _dnd5e(
    method: str,
    name: str,
    summary: str,
    *params: Param,
    sdk: Sdk,
    action: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Route:
    return forward(
        method,
        f"/dnd5e/{name}",
        action or name,
        summary,
        NAME,
        *params,
        scope="dnd5e",
        timeout=timeout,
        system="dnd5e",
        sdk=sdk,
    )


ROUTES: Final = (
    _dnd5e(
        "GET",
        "get-actor-details",
        "Read an actor's resources, items, spells, features and more.",
        ACTOR_UUID_REQ,
        bq(
            "details",
            "array",
            True,
            description="Sections to return: resources, spells, items, features, stats, "
            "abilities, skills, details, conditions (a JSON array in the query).",
            sdk_type="Sequence[DetailSection]",
        ),
        sdk=Sdk("get_actor_details", "Envelope[ActorDetails]"),
    ),
    _dnd5e(
        "POST",
        "modify-item-charges",
        "Add or spend charges of an item.",
        ACTOR_UUID_REQ,
        bq("amount", "number", True, description="Charges to add (negative spends)."),
        ITEM_UUID,
        ITEM_NAME,
        sdk=Sdk("modify_item_charges", "Envelope[ItemCharges]"),
    ),
    _dnd5e(
        "POST",
        "use-ability",
        "Use any item of an actor.",
        *USE_PARAMS,
        timeout=USE_TIMEOUT,
        sdk=Sdk("use_ability", "Envelope[UseResult]"),
    ),
    _dnd5e(
        "POST",
        "use-feature",
        "Use a feature of an actor.",
        *USE_PARAMS,
        timeout=USE_TIMEOUT,
        sdk=Sdk("use_feature", "Envelope[UseResult]"),
    ),
    _dnd5e(
        "POST",
        "use-spell",
        "Cast a spell of an actor.",
        *USE_PARAMS,
        timeout=USE_TIMEOUT,
        sdk=Sdk("use_spell", "Envelope[UseResult]"),
    ),
    _dnd5e(
        "POST",
        "use-item",
        "Use an item (not a feature or spell).",
        *USE_PARAMS,
        timeout=USE_TIMEOUT,
        sdk=Sdk("use_item", "Envelope[UseResult]"),
    ),
    _dnd5e(
        "POST",
        "short-rest",
        "Take a short rest: hit dice, short-rest features, pact slots.",
        ACTOR_UUID,
        SELECTED,
        bq("autoHD", "boolean", description="Spend hit dice automatically."),
        bq(
            "autoHDThreshold",
            "number",
            description="0 to 1: spend hit dice while HP is below this fraction of maximum HP.",
        ),
        sdk=Sdk("short_rest", "Envelope[RestResult]"),
    ),
    _dnd5e(
        "POST",
        "long-rest",
        "Take a long rest: HP, spell slots, hit dice, features.",
        ACTOR_UUID,
        SELECTED,
        bq("newDay", "boolean", default=True, description="Whether the rest marks a new day."),
        sdk=Sdk("long_rest", "Envelope[RestResult]"),
    ),
    _dnd5e(
        "POST",
        "skill-check",
        "Roll a skill check.",
        ACTOR_UUID_REQ,
        bq(
            "skill",
            "string",
            True,
            description="Skill abbreviation, e.g. `prc`.",
            sdk_type="Skill",
        ),
        *ROLL_OPTIONS,
        sdk=Sdk("skill_check", "Envelope[CheckResult]"),
    ),
    _dnd5e(
        "POST",
        "ability-save",
        "Roll an ability saving throw.",
        ACTOR_UUID_REQ,
        ABILITY,
        *ROLL_OPTIONS,
        sdk=Sdk("ability_save", "Envelope[CheckResult]"),
    ),
    _dnd5e(
        "POST",
        "ability-check",
        "Roll an ability check.",
        ACTOR_UUID_REQ,
        ABILITY,
        *ROLL_OPTIONS,
        sdk=Sdk("ability_check", "Envelope[CheckResult]"),
    ),
    _dnd5e(
        "POST",
        "death-save",
        "Roll a death saving throw.",
        ACTOR_UUID_REQ,
        ADVANTAGE,
        CREATE_CHAT_MESSAGE,
        sdk=Sdk("death_save", "Envelope[DeathSaveResult]"),
    ),
    _dnd5e(
        "POST",
        "modify-experience",
        "Add or remove experience points.",
        bq("amount", "number", True, description="Experience to add (may be negative)."),
        ACTOR_UUID,
        SELECTED,
        sdk=Sdk("modify_experience", "Envelope[ExperienceChange]"),
    ),
    _dnd5e(
        "GET",
        "concentration",
        "Is the actor concentrating, and on what?",
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
        action="get-concentration",
        sdk=Sdk("get_concentration", "Envelope[Concentration]"),
    ),
    _dnd5e(
        "POST",
        "break-concentration",
        "End the actor's concentration.",
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
        sdk=Sdk("break_concentration", "Envelope[ConcentrationBroken]"),
    ),
    _dnd5e(
        "POST",
        "concentration-save",
        "Roll a concentration save: DC max(10, floor(damage / 2)).",
        bq("damage", "number", True, description="Damage taken."),
        ACTOR_UUID,
        ACTOR_NAME,
        SELECTED,
        *ROLL_OPTIONS,
        sdk=Sdk("concentration_save", "Envelope[ConcentrationSave]"),
    ),
    _dnd5e(
        "POST",
        "equip-item",
        "Equip or unequip an item.",
        bq("equipped", "boolean", True, description="true equips, false unequips."),
        ACTOR_UUID,
        ACTOR_NAME,
        ITEM_UUID,
        ITEM_NAME,
        sdk=Sdk("equip_item", "Envelope[ItemEquipped]"),
    ),
    _dnd5e(
        "POST",
        "attune-item",
        "Attune to or end attunement with an item.",
        bq("attuned", "boolean", True, description="true attunes, false ends attunement."),
        ACTOR_UUID,
        ACTOR_NAME,
        ITEM_UUID,
        ITEM_NAME,
        sdk=Sdk("attune_item", "Envelope[ItemAttuned]"),
    ),
    _dnd5e(
        "POST",
        "transfer-currency",
        "Move coins from one actor to another, all or nothing.",
        bq(
            "currency",
            "object",
            True,
            sources=B,
            max_depth=1,
            description='Coins to move, e.g. {"gp": 5, "sp": 3}.',
            sdk_type="Mapping[Denomination, int]",
        ),
        bq("sourceActorUuid", "string", description="Uuid of the paying actor."),
        bq("sourceActorName", "string", description="Name of the paying actor."),
        bq("targetActorUuid", "string", description="Uuid of the receiving actor."),
        bq("targetActorName", "string", description="Name of the receiving actor."),
        sdk=Sdk("transfer_currency", "Envelope[CurrencyTransfer]"),
    ),
    _dnd5e(
        "POST",
        "modify-currency",
        "Add or remove coins of one denomination.",
        ACTOR_UUID_REQ,
        bq(
            "currency",
            "string",
            True,
            description="One of pp, gp, ep, sp, cp.",
            sdk_type="Denomination",
        ),
        bq("amount", "number", True, description="Coins to add (negative removes)."),
        sdk=Sdk("modify_currency", "Envelope[CurrencyChange]"),
    ),
    _dnd5e(
        "POST",
        "prepare-spell",
        "Prepare or unprepare a spell.",
        ACTOR_UUID_REQ,
        bq("spellName", "string", True, description="Name of the spell."),
        bq("prepared", "boolean", True, description="true prepares, false unprepares."),
        sdk=Sdk("prepare_spell", "Envelope[SpellPrepared]"),
    ),
)

GROUP: Final = Group(NAME, "dnd5e", ROUTES)
