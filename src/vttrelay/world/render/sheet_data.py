"""What a character sheet shows, gathered from an actor document: pure, no drawing, no I/O.

`sheet_data(actor, limited)` reads the actor with the dnd5e rules the actions use (ability
modifiers, saves, skills, armor class, attack and damage formulas, spell slots), so the picture
and GET /dnd5e/get-actor-details never disagree. A LIMITED viewer gets the name and portrait
only (`SheetData.limited`, everything else empty).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from vttrelay.world.rules import details
from vttrelay.world.rules import spells as spell_rules
from vttrelay.world.rules import use as use_rules
from vttrelay.world.rules.abilities import ABILITIES, SKILLS, challenge_rating
from vttrelay.world.rules.items import ITEM_TYPES
from vttrelay.world.rules.paths import as_int, as_number, get_path

INVENTORY_TYPES: Final = (*ITEM_TYPES, "container")
MAX_ROWS: Final = 40  # entries a list of the sheet shows (the rest is counted: "+ 3 more")
LEVEL_NAMES: Final = ("Cantrips", *(f"{spell_rules.ordinal(n)} level" for n in range(1, 10)))
# dnd5e's proficiency keys, as the sheet words them (others are capitalised).
PROFICIENCY_NAMES: Final = {
    "lgt": "Light armor",
    "med": "Medium armor",
    "hvy": "Heavy armor",
    "shl": "Shields",
    "sim": "Simple weapons",
    "mar": "Martial weapons",
    "lightcrossbow": "Light crossbow",
    "handcrossbow": "Hand crossbow",
    "heavycrossbow": "Heavy crossbow",
}


@dataclass(frozen=True)
class Ability:
    key: str
    score: int
    mod: int
    save: int
    proficient: bool


@dataclass(frozen=True)
class Skill:
    label: str
    ability: str
    total: int
    proficiency: float  # 0, 0.5, 1 (proficient), 2 (expertise)


@dataclass(frozen=True)
class Attack:
    name: str
    to_hit: str  # "+5"
    damage: str  # "1d8 + 3 slashing"
    range: str


@dataclass(frozen=True)
class Spell:
    name: str
    prepared: bool
    concentration: bool
    ritual: bool


@dataclass(frozen=True)
class Row:
    """An entry of a simple list: a feature (with its uses), an inventory item."""

    name: str
    note: str = ""
    marked: bool = False  # equipped / attuned


@dataclass
class SheetData:
    name: str
    portrait: str | None
    limited: bool = False
    kind: str = "character"
    headline: str = ""  # "Level 3 Wizard (School of Evocation)"
    origin: str = ""  # "Human · Sage · Neutral Good"
    hp: tuple[int, int, int] = (0, 0, 0)  # value, max, temp
    ac: int = 10
    speed: str = ""
    initiative: int = 0
    proficiency: int = 2
    passive_perception: int = 10
    abilities: list[Ability] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    proficiencies: list[tuple[str, str]] = field(default_factory=list)
    attacks: list[Attack] = field(default_factory=list)
    spellcasting: str = ""  # "INT · save DC 13 · attack +5"
    slots: list[tuple[str, int, int]] = field(default_factory=list)  # label, left, max
    spells: list[tuple[str, list[Spell]]] = field(default_factory=list)
    features: list[Row] = field(default_factory=list)
    inventory: list[Row] = field(default_factory=list)
    currency: dict[str, int] = field(default_factory=dict)
    conditions: list[str] = field(default_factory=list)
    exhaustion: int = 0
    death_saves: tuple[int, int] = (0, 0)
    more: dict[str, int] = field(default_factory=dict)  # list -> entries not shown


def signed(n: float) -> str:
    return f"+{n:g}" if n >= 0 else f"\u2212{abs(n):g}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _cap(rows: list[Any], name: str, more: dict[str, int]) -> list[Any]:
    if len(rows) > MAX_ROWS:
        more[name] = len(rows) - MAX_ROWS
    return rows[:MAX_ROWS]


def _headline(actor: dict[str, Any], items: list[dict[str, Any]]) -> str:
    if actor.get("type") == "npc":
        kind = get_path(actor, "system.details.type.value") or "creature"
        cr = challenge_rating(actor)
        shown = {0.125: "1/8", 0.25: "1/4", 0.5: "1/2"}.get(cr, f"{cr:g}")
        return f"CR {shown} {str(kind).capitalize()}"
    classes = [i for i in items if i.get("type") == "class"]
    if not classes:
        return ""
    level = sum(as_int(get_path(i, "system.levels"), 1) for i in classes)
    if len(classes) == 1:
        sub = next((i.get("name") for i in items if i.get("type") == "subclass"), None)
        name = str(classes[0].get("name", ""))
        return f"Level {level} {name}" + (f" ({sub})" if sub else "")
    parts = [f"{i.get('name', '')} {as_int(get_path(i, 'system.levels'), 1)}" for i in classes]
    return f"Level {level} " + " / ".join(parts)


def _origin(actor: dict[str, Any], items: list[dict[str, Any]]) -> str:
    names = [
        str(i.get("name")) for t in ("race", "background") for i in items if i.get("type") == t
    ]
    alignment = _text(get_path(actor, "system.details.alignment"))
    return " \u00b7 ".join([*names[:2], *([alignment] if alignment else [])])


def _speed(actor: dict[str, Any]) -> str:
    movement = get_path(actor, "system.attributes.movement") or {}
    units = _text(movement.get("units")) or "ft"
    shown = [f"{as_number(movement.get('walk'), 0):g} {units}"]
    for mode in ("fly", "swim", "climb", "burrow"):
        value = as_number(movement.get(mode), 0)
        if value:
            shown.append(f"{mode} {value:g}")
    return ", ".join(shown)


def _proficiencies(actor: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for label, path in (
        ("Armor", "armorProf"),
        ("Weapons", "weaponProf"),
        ("Languages", "languages"),
    ):
        trait = get_path(actor, f"system.traits.{path}") or {}
        values = [str(v) for v in trait.get("value") or []]
        custom = _text(trait.get("custom"))
        names = [PROFICIENCY_NAMES.get(v, v.capitalize()) for v in values]
        names += [custom] if custom else []
        if names:
            found.append((label, ", ".join(names)))
    tools = [str(i.get("name")) for i in actor.get("items") or [] if i.get("type") == "tool"]
    if tools:
        found.append(("Tools", ", ".join(tools)))
    return found


def _attacks(actor: dict[str, Any], items: list[dict[str, Any]]) -> list[Attack]:
    found = []
    for item in items:
        if item.get("type") not in ("weapon", "spell"):
            continue
        _, activity = use_rules.first_activity(item)
        if activity is None or activity.get("type") != "attack":
            continue
        formula = use_rules.attack_formula(actor, item, activity)
        to_hit = formula.removeprefix("1d20").replace(" ", "").replace("+-", "-") or "+0"
        try:
            total = sum(int(p) for p in to_hit.replace("-", "+-").split("+") if p)
            to_hit = signed(total)
        except ValueError:
            pass
        damage = use_rules.damage_formula(actor, item, activity) or "\u2014"
        kinds = [
            t
            for part in [
                get_path(item, "system.damage.base"),
                *(get_path(activity, "damage.parts") or []),
            ]
            if isinstance(part, dict)
            for t in part.get("types") or []
        ]
        if kinds:
            damage += f" {kinds[0]}"
        reach = get_path(item, "system.range") or {}
        value, long = reach.get("value"), reach.get("long")
        shown = f"{value}/{long} ft" if value and long else (f"{value} ft" if value else "5 ft")
        found.append(Attack(str(item.get("name")), to_hit, damage, shown))
    return found


def _spells(actor: dict[str, Any], items: list[dict[str, Any]]) -> list[tuple[str, list[Spell]]]:
    by_level: dict[int, list[Spell]] = {}
    for item in items:
        if item.get("type") != "spell":
            continue
        mode = spell_rules.preparation_mode(item)
        prepared = mode != "prepared" or get_path(item, "system.preparation.prepared") is True
        properties = get_path(item, "system.properties") or []
        by_level.setdefault(spell_rules.spell_level(item), []).append(
            Spell(
                str(item.get("name")),
                prepared,
                spell_rules.is_concentration(item),
                "ritual" in properties,
            )
        )
    return [(LEVEL_NAMES[lvl], by_level[lvl]) for lvl in sorted(by_level) if 0 <= lvl <= 9]


def _slots(actor: dict[str, Any]) -> list[tuple[str, int, int]]:
    shown = []
    for key, slot in spell_rules.slots_view(actor).items():
        label = "Pact" if key == "pact" else spell_rules.ordinal(int(key.removeprefix("spell")))
        if key == "pact":
            label = f"Pact {spell_rules.ordinal(as_int(slot.get('level'), 1))}"
        shown.append((label, as_int(slot.get("value"), 0), as_int(slot.get("max"), 0)))
    return shown


def _uses(item: dict[str, Any]) -> str:
    maximum = as_int(get_path(item, "system.uses.max"), 0)
    if not maximum:
        return ""
    left = maximum - as_int(get_path(item, "system.uses.spent"), 0)
    return f"{left}/{maximum}"


def sheet_data(actor: dict[str, Any], limited: bool = False) -> SheetData:
    """What the sheet of `actor` shows (name and portrait only when `limited`)."""
    name = str(actor.get("name") or "")
    portrait = _text(actor.get("img")) or None
    if limited:
        return SheetData(name, portrait, limited=True)
    items = [i for i in actor.get("items") or [] if isinstance(i, dict)]
    stats = details.stats(actor)
    abilities = details.abilities(actor)
    skills = details.skills(actor)
    hp = stats.get("hp") or {}
    more: dict[str, int] = {}
    sheet = SheetData(name, portrait, kind=str(actor.get("type") or "character"), more=more)
    sheet.headline = _headline(actor, items)
    sheet.origin = _origin(actor, items)
    sheet.hp = (as_int(hp.get("value"), 0), as_int(hp.get("max"), 0), as_int(hp.get("temp"), 0))
    sheet.ac = as_int(stats.get("ac"), 10)
    sheet.speed = _speed(actor)
    sheet.initiative = as_int(stats.get("initBonus"), 0)
    sheet.proficiency = as_int(stats.get("profBonus"), 2)
    sheet.passive_perception = as_int((skills.get("prc") or {}).get("passive"), 10)
    sheet.abilities = [
        Ability(
            key,
            as_int(abilities[key]["value"], 10),
            as_int(abilities[key]["mod"], 0),
            as_int(abilities[key]["save"], 0),
            bool(abilities[key]["proficient"]),
        )
        for key in ABILITIES
    ]
    sheet.skills = [
        Skill(label, ability, as_int(skills[key]["total"], 0), as_number(skills[key]["value"], 0))
        for key, (label, ability) in SKILLS.items()
    ]
    sheet.proficiencies = _proficiencies(actor)
    sheet.attacks = _cap(_attacks(actor, items), "attacks", more)
    casting = _text(get_path(actor, "system.attributes.spellcasting"))
    spells = _spells(actor, items)
    if spells:
        dc = use_rules.spell_save_dc(actor)
        attack = dc - 8
        ability = casting.upper() or "\u2014"
        sheet.spellcasting = f"{ability} \u00b7 save DC {dc} \u00b7 attack {signed(attack)}"
    sheet.slots = _slots(actor)
    sheet.spells = spells
    resources = [
        Row(_text(r.get("label")) or key.capitalize(), f"{as_int(r.get('value'), 0)}/{maximum}")
        for key, r in details.resources(actor).items()
        if isinstance(r, dict) and (maximum := as_int(r.get("max"), 0))
    ]
    features = [Row(str(i.get("name")), _uses(i)) for i in items if i.get("type") == "feat"]
    sheet.features = _cap(resources + features, "features", more)
    sheet.inventory = _cap(
        [
            Row(
                str(i.get("name")),
                f"\u00d7{as_int(get_path(i, 'system.quantity'), 1)}"
                if as_int(get_path(i, "system.quantity"), 1) != 1
                else "",
                get_path(i, "system.equipped") is True,
            )
            for i in items
            if i.get("type") in INVENTORY_TYPES
        ],
        "inventory",
        more,
    )
    currency = stats.get("currency") or {}
    sheet.currency = {k: as_int(currency.get(k), 0) for k in ("pp", "gp", "ep", "sp", "cp")}
    sheet.conditions = [str(c["name"]) for c in details.conditions(actor)]
    sheet.exhaustion = as_int(stats.get("exhaustion"), 0)
    saves = stats.get("deathSaves") or {}
    sheet.death_saves = (as_int(saves.get("success"), 0), as_int(saves.get("failure"), 0))
    return sheet
