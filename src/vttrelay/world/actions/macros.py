"""Macro actions (endpoints-beyond-seed §6): `macros` (GET /macros) and `macro-execute`
(POST /macro/{uuid}/execute).

Executing is off until a GM turns on the world setting `allowMacroExecute` (`vttrelay world
settings --macro-execute on`), as in the module. Checks in the module's order: (unknown userId,
by the dispatcher) -> the setting -> `Macro UUID is required` -> `Macro not found with UUID` ->
`... is not a macro` -> the write gate (OWNER, with a userId) -> `canExecute` -> run. A chat
macro posts its command as a chat message (`/roll <formula>` rolls it, `/emote` and `/ooc` set
the chat type); a script macro runs in the execute-js sandbox (world/scripts.py) with the same
`game` API, limits and permission rules as POST /execute-js, its body seeing `args` (and
`scope`, `speaker`, `actor`, `token`, `character`) as in the tabletop. Afterwards, unless the
world setting `notifyOnMacroExecute` is off, the active GMs get a whispered notice.

`canExecute` is the tabletop's rule for the acting user (the `userId`, else the GM): LIMITED on
the macro, and for a script macro the role of a Trusted Player or higher (the default holders of
the `MACRO_SCRIPT` permission). A failure answers `{type, requestId, uuid, success: false,
error}`; writes the script made before it failed stay, as in the tabletop.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Final

from vttrelay.world.actions.scripts import (
    SETTING_MEMORY_LIMIT,
    SETTING_TIME_LIMIT,
    limits_from,
    runner,
    snapshot,
    world_call,
)
from vttrelay.world.errors import ActionError, DiceError, ScriptError
from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model import documents
from vttrelay.world.rules.permissions import LIMITED, assert_owner, permission_level
from vttrelay.world.rules.rolls import critical_and_fumble
from vttrelay.world.runtime.context import CHAT_EMOTE, CHAT_OOC, ActionContext
from vttrelay.world.runtime.table import action

FAILED: Final = {"success": False}
TRUSTED_ROLE: Final = 2  # the lowest role holding MACRO_SCRIPT by default
NOTICE_ALIAS: Final = "REST API Module"
# Seconds from the request's arrival to the script's end: under the relay's 10 s for this route.
REPLY_BUDGET: Final = 8.0
DISABLED: Final = (
    "macro-execute is disabled in REST API module settings. "
    "A GM must enable it to allow macro execution."
)
_ROLL_COMMAND = re.compile(r"^/(?:r|roll)\s+(.+?)(?:\s+#\s*(.*))?$", re.S)
_CHAT_MODES = {"/emote": CHAT_EMOTE, "/em": CHAT_EMOTE, "/me": CHAT_EMOTE, "/ooc": CHAT_OOC}


def macro_type(macro: dict[str, Any]) -> str:
    kind = macro.get("type")
    return kind if kind in ("script", "chat") else "unknown"


def can_execute(user: dict[str, Any] | None, macro: dict[str, Any]) -> bool:
    """The tabletop's `Macro#canExecute` for `user` (None: the GM)."""
    if permission_level(user, macro) < LIMITED:
        return False
    if macro_type(macro) == "script":
        return user is None or int(user.get("role", 0)) >= TRUSTED_ROLE
    return True


def _acting(ctx: ActionContext) -> dict[str, Any] | None:
    return ctx.user if ctx.user is not None else documents.gm_user(ctx.tx)


@action("macros", error_tail={"macros": []})
def macros(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Every world macro the user may see (LIMITED or better)."""
    users = documents.users_by_id(ctx.tx)
    acting = _acting(ctx)
    out = []
    for macro in ctx.tx.all("Macro"):
        if permission_level(ctx.user, macro) < LIMITED:
            continue
        author = users.get(str(macro.get("author")))
        out.append(
            {
                "uuid": f"Macro.{macro['_id']}",
                "id": macro["_id"],
                "name": macro.get("name", ""),
                "type": macro_type(macro),
                "author": author.get("name", "unknown") if author else "unknown",
                "command": macro.get("command") or "",
                "img": macro.get("img"),
                "scope": macro.get("scope", "global"),
                "canExecute": can_execute(acting, macro),
            }
        )
    return {"macros": out}


def _checked(ctx: ActionContext, frame: dict[str, Any], uuid: str) -> dict[str, Any]:
    """The module's checks before running, in its order; the macro."""
    extra = {"uuid": uuid}
    if ctx.setting(documents.SETTING_ALLOW_MACRO_EXECUTE, False) is not True:
        raise ActionError(DISABLED, extra)
    if not uuid:
        raise ActionError("Macro UUID is required", extra)
    resolved = documents.resolve_uuid(ctx.tx, uuid)
    if resolved is None:
        raise ActionError(f"Macro not found with UUID: {uuid}", extra)
    if resolved.kind != "Macro":
        raise ActionError(f"Entity with UUID {uuid} is not a macro", extra)
    macro = resolved.doc
    try:
        assert_owner(ctx, macro, "execute", uuid=uuid)
    except ActionError as exc:
        raise ActionError(exc.message, extra) from None
    if not can_execute(_acting(ctx), macro):
        raise ActionError(
            f"Macro '{macro.get('name', '')}' cannot be executed by the current user", extra
        )
    return macro


def run_chat(ctx: ActionContext, macro: dict[str, Any]) -> dict[str, Any]:
    """Post a chat macro's command as the acting user: a `/roll` command rolls its formula."""
    text = str(macro.get("command") or "").strip()
    if not text:
        raise ActionError("The macro has no command to post", {"uuid": f"Macro.{macro['_id']}"})
    problem = chat_rules.text_problem(text, "")  # the limits of POST /chat
    if problem is not None:
        raise ActionError(problem, {"uuid": f"Macro.{macro['_id']}"})
    match = _ROLL_COMMAND.match(text)
    if match:
        try:
            roll = ctx.dice.roll(match.group(1))
        except DiceError as exc:
            raise ActionError(str(exc), {"uuid": f"Macro.{macro['_id']}"}) from None
        critical, fumble = critical_and_fumble(roll)
        message = ctx.create_chat_message(
            content=str(roll.total),
            flavor=match.group(2) or "",
            rolls=[{**roll.to_chat(), "isCritical": critical, "isFumble": fumble}],
        )
    else:
        command, _, rest = text.partition(" ")
        chat_type = _CHAT_MODES.get(command.lower())
        message = ctx.create_chat_message(
            content=rest.strip() if chat_type is not None else text, chat_type=chat_type
        )
    doc = ctx.tx.get("ChatMessage", message["id"])
    assert doc is not None
    return doc


async def run_script(
    ctx: ActionContext, macro: dict[str, Any], args: dict[str, Any], deadline: float
) -> Any:
    """Run a script macro in the sandbox; its result as the module maps it: an object, array or
    null as is, anything else as `{value}`, nothing as `{}`."""
    limits = ctx.transact(
        lambda c: limits_from(c.setting(SETTING_TIME_LIMIT), c.setting(SETTING_MEMORY_LIMIT))
    )
    init = ctx.transact(snapshot)
    init["macro"] = {"scope": {"args": args}}
    try:
        outcome = await runner().run(
            str(macro.get("command") or ""),
            init=init,
            host=lambda op, call_args: world_call(ctx, op, call_args),
            limits=limits,
            deadline=deadline,
        )
    except ScriptError as exc:
        raise ActionError(
            f"Error executing macro: {exc.message}", {"uuid": f"Macro.{macro['_id']}"}
        ) from None
    if not outcome.defined:
        return {}
    value = outcome.value
    return value if value is None or isinstance(value, dict | list) else {"value": value}


def _notify(ctx: ActionContext, macro: dict[str, Any], uuid: str) -> None:
    """The whispered notice to the active GMs (world setting `notifyOnMacroExecute`)."""
    if ctx.setting(documents.SETTING_NOTIFY_MACRO_EXECUTE, True) is False:
        return
    gms = [u for u in ctx.tx.all("User") if documents.is_gm(u)]
    active = [u["_id"] for u in gms if ctx.is_online(u["_id"])]
    name = str(macro.get("name", "")).replace("<", "&lt;")
    ctx.create_chat_message(
        content=f"<b>⚠ REST API macro-execute:</b> <code>{name}</code> ({uuid})",
        speaker={"scene": None, "actor": None, "token": None, "alias": NOTICE_ALIAS},
        whisper=active or [u["_id"] for u in gms],
        author=documents.gm_user(ctx.tx),
    )


@action("macro-execute", error_extra=FAILED)
async def macro_execute(ctx: ActionContext, frame: dict[str, Any]) -> dict[str, Any]:
    """Execute a chat or script macro with `args`."""
    deadline = asyncio.get_running_loop().time() + REPLY_BUDGET
    raw = frame.get("uuid")
    uuid = raw if isinstance(raw, str) else ""
    macro = ctx.transact(lambda c: _checked(c, frame, uuid))
    args = frame.get("args")
    if macro_type(macro) == "chat":
        result: Any = ctx.transact(lambda c: run_chat(c, macro))
    elif macro_type(macro) == "script":
        result = await run_script(ctx, macro, args if isinstance(args, dict) else {}, deadline)
    else:
        raise ActionError(f"Macro '{macro.get('name', '')}' has an unknown type", {"uuid": uuid})
    ctx.transact(lambda c: _notify(c, macro, uuid))
    return {"uuid": uuid, "success": True, "result": result}
