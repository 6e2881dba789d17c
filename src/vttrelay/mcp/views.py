"""Compact views of relay replies for an agent's context window. Pure functions over documents.

An actor's full `get-actor-details` document is 20-40 KB of JSON (every item with its
activities, descriptions and sources); an agent needs a few hundred tokens of it: who it is, its
abilities, HP, AC, conditions, slots and the things it can use. `actor_summary` keeps exactly
that; the other views do the same for the world, search results, chat, encounters and tokens.
Nothing here does I/O: the tools (tools.py) fetch the documents and pass them in.
"""

from __future__ import annotations

import re
from typing import Any

from vttrelay.client.types import DetailSection

SUMMARY_SECTIONS: tuple[DetailSection, ...] = (
    "stats",
    "abilities",
    "skills",
    "details",
    "conditions",
    "resources",
    "spells",
    "items",
    "features",
)
ABILITIES = ("str", "dex", "con", "int", "wis", "cha")
SKILL_NAMES = {
    "acr": "Acrobatics", "ani": "Animal Handling", "arc": "Arcana", "ath": "Athletics",
    "dec": "Deception", "his": "History", "ins": "Insight", "itm": "Intimidation",
    "inv": "Investigation", "med": "Medicine", "nat": "Nature", "prc": "Perception",
    "prf": "Performance", "per": "Persuasion", "rel": "Religion", "slt": "Sleight of Hand",
    "ste": "Stealth", "sur": "Survival",
}  # fmt: skip
DENOMINATIONS = ("pp", "gp", "ep", "sp", "cp")
FEATURE_TYPES = ("feat",)
CONSUMABLE_TYPES = ("consumable",)
CHAT_TEXT_MAX = 300  # characters of a chat message kept in a view
_TAG = re.compile(r"<[^>]+>")


def signed(n: Any) -> str:
    """`+3`, `-1`, `+0`."""
    try:
        return f"{int(n):+d}"
    except (TypeError, ValueError):
        return str(n)


def plain_text(html: Any, limit: int = CHAT_TEXT_MAX) -> str:
    """Chat/biography HTML as one line of text, cut at `limit` characters."""
    text = " ".join(_TAG.sub(" ", str(html or "")).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _uses(system: dict[str, Any]) -> str | None:
    """`"3/7"` (left/max) for an item whose uses have a numeric maximum, else None."""
    uses = system.get("uses") or {}
    try:
        most = int(str(uses.get("max") or "").strip())
    except ValueError:
        return None
    if most <= 0:
        return None
    return f"{most - int(uses.get('spent') or 0)}/{most}"


def currency_text(currency: dict[str, Any]) -> str:
    """`"25 gp, 8 sp"` (denominations with coins, largest first), or `"none"`."""
    parts = [f"{currency[d]} {d}" for d in DENOMINATIONS if currency.get(d)]
    return ", ".join(parts) or "none"


def _spell_block(data: dict[str, Any]) -> tuple[dict[str, str], dict[str, list[str]]]:
    slots = {
        key.removeprefix("spell"): f"{slot.get('value', 0)}/{slot.get('max', 0)}"
        for key, slot in (data.get("spellSlots") or {}).items()
        if isinstance(slot, dict) and slot.get("max")
    }
    spells: dict[str, list[str]] = {}
    for spell in data.get("spells") or []:
        system = spell.get("system") or {}
        prep = system.get("preparation") or {}
        level = int(system.get("level") or 0)
        if level and prep.get("mode", "prepared") == "prepared" and not prep.get("prepared"):
            continue  # known but not prepared: not castable now
        label = "cantrips" if level == 0 else f"level {level}"
        spells.setdefault(label, []).append(spell.get("name", "?"))
    return slots, spells


def _inventory(items: list[dict[str, Any]]) -> dict[str, Any]:
    weapons, armor, usable, other = [], [], [], []
    for item in items:
        system = item.get("system") or {}
        name = item.get("name", "?")
        qty = system.get("quantity")
        kind = item.get("type")
        if kind == "weapon":
            weapons.append(name + (" (equipped)" if system.get("equipped") else ""))
        elif kind == "equipment":
            armor.append(name + (" (equipped)" if system.get("equipped") else ""))
        elif kind in CONSUMABLE_TYPES or _uses(system):
            uses = _uses(system)
            usable.append(
                name
                + (f" x{qty}" if isinstance(qty, int) and qty != 1 else "")
                + (f" [{uses} uses]" if uses and uses != "1/1" else "")
            )
        elif kind != "container":
            other.append(name + (f" x{qty}" if isinstance(qty, int) and qty != 1 else ""))
    return {"weapons": weapons, "armor": armor, "consumables": usable, "other": other}


def _features(features: list[dict[str, Any]]) -> list[str]:
    names = []
    for feat in features:
        if feat.get("type") not in FEATURE_TYPES:
            continue
        uses = _uses(feat.get("system") or {})
        names.append(feat.get("name", "?") + (f" [{uses}]" if uses else ""))
    return names


def actor_summary(data: dict[str, Any]) -> dict[str, Any]:
    """The compact view of an actor from the `data` of a get-actor-details reply that asked for
    `SUMMARY_SECTIONS`. Missing sections are left out, not invented."""
    stats = data.get("stats") or {}
    details = data.get("details") or {}
    out: dict[str, Any] = {"uuid": data.get("uuid"), "name": stats.get("name")}
    who = [details.get(k) for k in ("race", "class") if details.get(k)]
    if stats.get("level") is not None:
        who.append(f"level {stats['level']}")
    if who:
        out["is"] = " ".join(str(w) for w in who)
    if stats:
        hp = stats.get("hp") or {}
        out["hp"] = f"{hp.get('value')}/{hp.get('max')}" + (
            f" (+{hp['temp']} temp)" if hp.get("temp") else ""
        )
        out["ac"] = stats.get("ac")
        out["speed"] = stats.get("speed")
        out["initiative"] = signed(stats.get("initBonus"))
        out["proficiency"] = signed(stats.get("profBonus"))
        if hp.get("value") == 0:
            out["deathSaves"] = stats.get("deathSaves")
        if stats.get("exhaustion"):
            out["exhaustion"] = stats["exhaustion"]
        if stats.get("currency") is not None:
            out["currency"] = currency_text(stats["currency"])
    abilities = data.get("abilities") or {}
    if abilities:
        out["abilities"] = {
            a: f"{v.get('value')} ({signed(v.get('mod'))}, save {signed(v.get('save'))})"
            for a in ABILITIES
            if (v := abilities.get(a))
        }
    skills = data.get("skills") or {}
    if skills:
        out["proficientSkills"] = {
            SKILL_NAMES.get(k, k): signed(s.get("total"))
            for k, s in skills.items()
            if (s.get("value") or 0) >= 1
        }
        if "prc" in skills:
            out["passivePerception"] = skills["prc"].get("passive")
    if "conditions" in data:
        out["conditions"] = [
            c.get("name") or c.get("id") if isinstance(c, dict) else c
            for c in data.get("conditions") or []
        ]
        conc = data.get("concentration") or {}
        if conc.get("active"):
            out["concentratingOn"] = conc.get("spell") or conc.get("name") or True
    resources = data.get("resources") or {}
    kept = {
        (r.get("label") or k): f"{r.get('value')}/{r.get('max')}"
        for k, r in resources.items()
        if isinstance(r, dict) and r.get("max")
    }
    if kept:
        out["resources"] = kept
    if "spells" in data:
        slots, spells = _spell_block(data)
        if slots:
            out["spellSlots"] = slots
        if spells:
            out["spells"] = spells
    if "items" in data:
        out.update({k: v for k, v in _inventory(data.get("items") or []).items() if v})
    if "features" in data:
        feats = _features(data.get("features") or [])
        if feats:
            out["features"] = feats
    return out


def find_item(data: dict[str, Any], name: str, kinds: tuple[str, ...] = ()) -> dict | None:
    """The first item, spell or feature of a get-actor-details `data` named `name` (case
    insensitive) whose type is in `kinds` (any when empty), as the world's name lookup does."""
    wanted = name.casefold()
    for section in ("items", "spells", "features"):
        for item in data.get(section) or []:
            if str(item.get("name", "")).casefold() == wanted and (
                not kinds or item.get("type") in kinds
            ):
                return item
    return None


def item_view(item: dict[str, Any]) -> dict[str, Any]:
    """One item in a line or two: name, type, quantity, uses, and for spells level and slot."""
    system = item.get("system") or {}
    out: dict[str, Any] = {"name": item.get("name"), "type": item.get("type")}
    if item.get("type") == "spell":
        out["level"] = system.get("level", 0)
    if isinstance(system.get("quantity"), int):
        out["quantity"] = system["quantity"]
    if uses := _uses(system):
        out["uses"] = uses
    if "equipped" in system:
        out["equipped"] = bool(system.get("equipped"))
    return out


def search_results(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A /search reply as `[{name, type, uuid}]`."""
    return [
        {
            "name": r.get("name"),
            "type": r.get("documentType") + (f" ({r['subType']})" if r.get("subType") else ""),
            "uuid": r.get("uuid"),
        }
        for r in reply.get("results") or []
    ]


def world_overview(info: dict[str, Any], structure: dict[str, Any] | None) -> dict[str, Any]:
    """world-info's `data` (and, when readable, a /structure reply's `data` listing actors and
    scenes) as a short page: title, system, users, active scene, actors and scenes by name."""
    out: dict[str, Any] = {
        "world": (info.get("world") or {}).get("title"),
        "worldId": (info.get("world") or {}).get("id"),
        "system": (info.get("system") or {}).get("id"),
        "activeScene": info.get("activeScene"),
        "users": [
            {"id": u.get("id"), "name": u.get("name"), "gm": bool(u.get("isGM"))}
            for u in info.get("users") or []
        ],
    }
    entities = (structure or {}).get("entities") or {}
    for kind in ("actors", "scenes"):
        if kind in entities:
            out[kind] = [{"name": e.get("name"), "uuid": e.get("uuid")} for e in entities[kind]]
    return out


def chat_view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as `{id, speaker, text, flavor?, roll?}`, text stripped of HTML."""
    out = []
    for m in messages:
        speaker = m.get("speaker") or {}
        entry: dict[str, Any] = {
            "id": m.get("_id") or m.get("id"),
            "speaker": speaker.get("alias") or m.get("alias") or m.get("author") or "",
            "text": plain_text(m.get("content")),
        }
        if m.get("flavor"):
            entry["flavor"] = plain_text(m["flavor"], 120)
        rolls = m.get("rolls") or []
        if rolls and isinstance(rolls[0], dict):
            entry["roll"] = {"formula": rolls[0].get("formula"), "total": rolls[0].get("total")}
        out.append(entry)
    return out


def encounter_view(
    encounter: dict[str, Any], names: dict[str, str] | None = None
) -> dict[str, Any]:
    """An encounter (from /encounters) as round, turn, the current combatant and the order with
    initiative and who is defeated; `names` (token uuid -> handle) names the combatants as the
    scene's tools do ("Goblin 2")."""
    names = names or {}
    order = []
    for c in encounter.get("combatants") or []:
        entry = {
            "name": names.get(str(c.get("tokenUuid")), c.get("name")),
            "initiative": c.get("initiative"),
        }
        if c.get("defeated"):
            entry["defeated"] = True
        order.append(entry)
    turn = encounter.get("turn")
    current = order[turn]["name"] if isinstance(turn, int) and 0 <= turn < len(order) else None
    return {
        "id": encounter.get("id") or encounter.get("_id"),
        "round": encounter.get("round"),
        "turn": turn,
        "current": current,
        "order": order,
    }


def skipped(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The defeated combatants a next turn passed over, between two views of one encounter."""
    order = after.get("order") or []
    start, end = before.get("turn"), after.get("turn")
    if not isinstance(start, int) or not isinstance(end, int) or not order:
        return []
    steps = (end - start) % len(order) or (
        len(order) if after.get("round") != before.get("round") else 0
    )
    passed = [order[(start + i) % len(order)] for i in range(1, steps)]
    return [str(c["name"]) for c in passed if c.get("defeated")]


def token_view(token: dict[str, Any]) -> dict[str, Any]:
    """A token as `{id, name, x, y, actorId, hidden?}`."""
    out = {k: token.get(k) for k in ("_id", "name", "x", "y", "actorId")}
    out["id"] = out.pop("_id")
    if token.get("hidden"):
        out["hidden"] = True
    return out


SPENDING = ("spent ", " left", " is used up", "regained ")


def _spent(outcome: dict[str, Any]) -> list[str]:
    return [n for n in outcome.get("notes") or [] if any(s in n for s in SPENDING)]


def _on_one(name: str, found: dict[str, Any]) -> str:
    """One of several targets in a sentence: its save, the damage it takes, its HP after."""
    said = [name]
    save = found.get("save")
    if save:
        said.append(f"save {save.get('total')}, {'success' if save['success'] else 'failure'}")
    damage = found.get("damage")
    if damage:
        said.append(f"takes {damage['taken']}" if damage.get("applied") else "not applied")
    if "healing" in found:
        said.append(f"regains {found['healing']} HP")
    down = str(found.get("hp", "")).startswith("0/")
    said.append(f"at {found.get('hp')} HP" + (", down" if down else ""))
    return said[0] + ": " + ", ".join(said[1:])


def outcome_on_targets(
    actor: str, used: str, names: list[str], data: dict[str, Any]
) -> dict[str, Any]:
    """A use-* reply on several targets (`outcome.targets`, in the order asked) as what
    happened: the save asked and the damage rolled once, then each target's save, damage
    taken and HP after, by the names the agent knows them by."""
    outcome = data.get("outcome") or {}
    found = list(outcome.get("targets") or [])
    said = [f"{actor} uses {used} on {', '.join(names)}"]
    save, damage = outcome.get("save"), outcome.get("damage")
    if save:
        said.append(f"{save.get('ability', '').upper()} save DC {save.get('dc')}")
    if damage:
        said.append(f"{damage.get('total')} damage ({damage.get('formula')})")
    said += [_on_one(name, one) for name, one in zip(names, found, strict=False)]
    spent = _spent(outcome)
    if spent:
        said.append("; ".join(spent))
    out: dict[str, Any] = {"summary": ". ".join(said) + ".", "actor": actor, "used": used}
    for key in ("save", "damage"):
        if key in outcome:
            out[key] = outcome[key]
    out["targets"] = [
        {"name": name, **{k: v for k, v in one.items() if k not in ("name", "uuid")}}
        for name, one in zip(names, found, strict=False)
    ]
    if spent:
        out["spent"] = spent
    return out


def outcome_view(actor: str, used: str, target: str | None, data: dict[str, Any]) -> dict[str, Any]:
    """A use-* reply's `data` as what happened, in one sentence (`summary`) and in fields:
    the attack against the target's AC, its saving throw, the damage and whether it was
    taken, healing, the target's HP after and what was spent. `actor` and `target` are the names
    the agent knows them by (a token's handle)."""
    outcome = data.get("outcome") or {}
    attack, save = outcome.get("attack"), outcome.get("save")
    damage, hit_target = outcome.get("damage"), outcome.get("target") or {}
    target = target or hit_target.get("name")
    said: list[str] = []
    if attack:
        verdict = ""
        if "hit" in attack:
            verdict = (
                ": critical hit"
                if attack.get("critical") and attack["hit"]
                else ": hit"
                if attack["hit"]
                else ": miss"
            )
            verdict = f" against AC {attack.get('ac')}{verdict}"
        elif attack.get("critical"):
            verdict = ": critical"
        said.append(
            f"{actor} attacks {target} with {used}" if target else f"{actor} attacks with {used}"
        )
        said[-1] += f", rolling {attack.get('total')} (d20: {attack.get('natural')}){verdict}"
    else:
        said.append(f"{actor} uses {used}" + (f" on {target}" if target else ""))
    if save:
        line = f"{save.get('ability', '').upper()} save DC {save.get('dc')}"
        if "success" in save:
            line = f"{target} makes a {line}: {save.get('total')}, " + (
                "success" if save["success"] else "failure"
            )
        said.append(line)
    if damage:
        line = f"{damage.get('total')} damage ({damage.get('formula')})"
        if "taken" in damage:
            taken = damage["taken"]
            line += f", {target} takes {taken}" if damage.get("applied") else ", not applied"
        said.append(line)
    if attack and attack.get("hit") is False:
        said.append("no damage")
    if "healing" in outcome:
        said.append(f"{target or actor} regains {outcome['healing']} HP ({outcome.get('hp')})")
    if hit_target.get("hp") and "healing" not in outcome:
        down = str(hit_target["hp"]).startswith("0/")
        said.append(f"{target} is at {hit_target['hp']} HP" + (", down" if down else ""))
    spent = _spent(outcome)
    if spent:
        said.append("; ".join(spent))
    out: dict[str, Any] = {"summary": ". ".join(said) + ".", "actor": actor, "used": used}
    for key in ("attack", "save", "damage", "healing"):
        if key in outcome:
            out[key] = outcome[key]
    if target:
        out["target"] = {"name": target, "hp": hit_target.get("hp")}
    if spent:
        out["spent"] = spent
    return out
