"""The rolling tools: an actor's checks and saves, and any dice formula."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp import views
from vttrelay.mcp.tools.base import (
    ACTOR,
    ADV,
    BONUS,
    DIS,
    Tool,
    ToolInputError,
    actor_details,
    dry,
    flags,
    plain,
)
from vttrelay.mcp.tools.names import resolve_actor

CHECK_ROUTES = {
    "skill": "skill-check",
    "ability": "ability-check",
    "save": "ability-save",
    "death": "death-save",
}


async def _check_call(relay: Relay, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = args["kind"]
    params: dict[str, Any] = {"actorUuid": await resolve_actor(relay, args["actor"])}
    if kind == "skill":
        if not args.get("skill"):
            raise ToolInputError("kind 'skill' needs `skill` (e.g. 'ste' or 'Stealth')")
        params["skill"] = _skill_id(args["skill"])
    elif kind in ("ability", "save"):
        if not args.get("ability"):
            raise ToolInputError(f"kind {kind!r} needs `ability` (str, dex, con, int, wis, cha)")
        params["ability"] = str(args["ability"]).lower()[:3]
    params.update(flags(args, "advantage", "disadvantage", "bonus"))
    if kind == "death":
        params.pop("disadvantage", None)
        params.pop("bonus", None)
    return CHECK_ROUTES[kind], params


def _skill_id(skill: str) -> str:
    by_name = {v.casefold(): k for k, v in views.SKILL_NAMES.items()}
    return by_name.get(skill.casefold(), skill.lower())


async def roll_check(relay: Relay, args: dict[str, Any]) -> Any:
    route, params = await _check_call(relay, args)
    return plain(await relay.call(route, **params)).get("data")


async def preview_check(relay: Relay, args: dict[str, Any]) -> Any:
    route, params = await _check_call(relay, args)
    data = await actor_details(relay, params["actorUuid"], "abilities", "skills", "stats")
    if route == "skill-check":
        modifier = (data.get("skills") or {}).get(params["skill"], {}).get("total")
        what = views.SKILL_NAMES.get(params["skill"], params["skill"]) + " check"
    elif route == "ability-check":
        modifier = (data.get("abilities") or {}).get(params["ability"], {}).get("mod")
        what = f"{params['ability']} check"
    elif route == "ability-save":
        modifier = (data.get("abilities") or {}).get(params["ability"], {}).get("save")
        what = f"{params['ability']} saving throw"
    else:
        modifier, what = 0, "death saving throw"
        deaths = (data.get("stats") or {}).get("deathSaves")
        params["currentDeathSaves"] = deaths
    dice = "2d20kh" if args.get("advantage") else "2d20kl" if args.get("disadvantage") else "1d20"
    return dry(
        route,
        params,
        change=f"would roll {dice}{views.signed(modifier)}"
        + (f" + {args['bonus']}" if args.get("bonus") else "")
        + f" ({what}) and post it to chat",
    )


async def roll_dice(relay: Relay, args: dict[str, Any]) -> Any:
    reply = await relay.rolls.roll(args["formula"], flavor=args.get("flavor"))
    return reply.get("data")


async def preview_roll(relay: Relay, args: dict[str, Any]) -> Any:
    params = flags(args, "formula", "flavor")
    return dry("roll", params, change=f"would roll {args['formula']} and post it to chat")


TOOLS: tuple[Tool, ...] = (
    Tool(
        "roll_check",
        "Roll a skill check, ability check, saving throw or death save for an actor (D&D 5e); "
        "the roll is posted to chat.",
        {
            "actor": ACTOR,
            "kind": {"type": "string", "enum": list(CHECK_ROUTES)},
            "skill": {"type": "string", "description": "For kind 'skill': 'ste' or 'Stealth'."},
            "ability": {"type": "string", "enum": list(views.ABILITIES)},
            "advantage": ADV,
            "disadvantage": DIS,
            "bonus": BONUS,
        },
        ("actor", "kind"),
        scopes=("dnd5e",),
        run=roll_check,
        preview=preview_check,
    ),
    Tool(
        "roll_dice",
        "Roll any dice formula (`2d6+3`, `4d6kh3`) that is not a check of an actor.",
        {
            "formula": {"type": "string", "description": "Dice formula."},
            "flavor": {"type": "string", "description": "What the roll is for."},
        },
        ("formula",),
        scopes=("roll:execute",),
        run=roll_dice,
        preview=preview_roll,
    ),
)
