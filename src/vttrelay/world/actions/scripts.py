"""The `execute-js` action (world-behaviour §5.5): module rules, the GM notice, and the world
calls a script's `game` API makes (world/js/prelude.js), run through the world's transactions.

Order of the checks, as the module: (unknown userId, by the dispatcher) -> world setting
`allowExecuteJs` (off by default) -> the caller's role against `codeExecutionPermission`
(default 4) -> `Invalid script provided` -> `Scripts cannot modify REST API module settings` ->
the GM-whispered notice in chat -> run. The handler is async and holds no transaction while the
script runs: the snapshot, the notice and every world call are each one transaction of their own
(`ctx.transact`), run on the event loop thread.

Scripts run with GM rights, as in the module (it runs in a GM's browser), except that when a
`userId` is given (and its role is allowed to run code) writes need that user's OWNER permission
and `game.actors` lists only the actors the user may view.

Limits: the world settings `vttrelay.scriptTimeLimit` (seconds, default 5, at most 15) and
`vttrelay.scriptMemoryLimit` (MiB, default 64) apply per script. Whatever they say, a script is
over (answered, its child process killed) `REPLY_BUDGET` seconds after the request arrived,
waiting for a free slot and starting included: the relay (ours and the reference) stops waiting
for an execute-js reply after 20 s, and a script whose caller already got 408 must not run on.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Final

from vttrelay.world.actions.chat import whisper_recipients
from vttrelay.world.errors import ActionError, HostError, ScriptError
from vttrelay.world.model import chat as chat_rules
from vttrelay.world.model import documents
from vttrelay.world.rules.effects import apply_changes
from vttrelay.world.rules.paths import get_path, set_path
from vttrelay.world.rules.permissions import LIMITED, assert_owner, permission_level
from vttrelay.world.runtime.context import ActionContext
from vttrelay.world.runtime.table import action
from vttrelay.world.scripts.sandbox import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIME_LIMIT,
    ScriptLimits,
    ScriptRunner,
)

FAILED: Final = {"success": False}
NOTICE_ALIAS: Final = "REST API Module"
NOTICE_PREFIX: Final = "<b>⚠ REST API execute-js:</b> "
NOTICE_CHARS: Final = 100
DEFAULT_ROLE: Final = 4
SETTING_TIME_LIMIT: Final = "vttrelay.scriptTimeLimit"
SETTING_MEMORY_LIMIT: Final = "vttrelay.scriptMemoryLimit"
# The relay gives execute-js 20 s; a script (plus its process start and the 2 s kill grace) must
# answer before that.
MAX_TIME_LIMIT: Final = 15.0
# Seconds from the request's arrival to the script's end, whatever the wait for a slot and the
# start took: under the relays' 20 s, with 2 s for the reply to reach the caller.
REPLY_BUDGET: Final = 18.0
PROTECTED_NAMESPACES: Final = ("foundry-rest-api.", "vttrelay.")
# Keys an update may not change: identity, embedded collections (use item.update), bookkeeping.
FIXED_KEYS: Final = frozenset({"_id", "type", "items", "effects", "_stats"})

DISABLED: Final = (
    "execute-js is disabled in REST API module settings. "
    "A GM must enable it to allow JavaScript execution."
)

_runner: ScriptRunner | None = None


def runner() -> ScriptRunner:
    """The process-wide script runner (its worker threads start on first use)."""
    global _runner
    if _runner is None:
        _runner = ScriptRunner()
    return _runner


# Pure helpers -----------------------------------------------------------------------------------


def notice_content(script: str) -> str:
    """The GM notice: the first 100 characters with `<` escaped, and `…` when longer."""
    shown = script[:NOTICE_CHARS].replace("<", "&lt;")
    return f"{NOTICE_PREFIX}<code>{shown}</code>" + ("…" if len(script) > NOTICE_CHARS else "")


def modifies_module_settings(script: str) -> bool:
    return "game.settings.set" in script and "foundry-rest-api" in script


def expand_update(changes: dict[str, Any]) -> dict[str, Any]:
    """`{"system.hp.value": 3}` -> `{"system": {"hp": {"value": 3}}}` (nested keys merged)."""
    out: dict[str, Any] = {}
    for key, value in changes.items():
        if not isinstance(key, str) or not key:
            raise HostError("update keys must be non-empty strings")
        value = expand_update(value) if isinstance(value, dict) else value
        existing = get_path(out, key)
        if isinstance(value, dict) and isinstance(existing, dict):
            merge_into(existing, value)
        else:
            set_path(out, key, value)
    return out


def merge_into(doc: dict[str, Any], changes: dict[str, Any]) -> None:
    """Merge nested changes into `doc`, as the tabletop's update does: objects merge key by key,
    other values replace, and a `-=key` entry deletes `key`."""
    for key, value in changes.items():
        if key.startswith("-="):
            doc.pop(key[2:], None)
        elif isinstance(value, dict) and isinstance(doc.get(key), dict):
            merge_into(doc[key], value)
        else:
            doc[key] = copy.deepcopy(value)


def apply_update(doc: dict[str, Any], changes: Any) -> None:
    """Validate and apply a script's update object to a document (in place)."""
    if not isinstance(changes, dict):
        raise HostError("update needs an object of changes")
    expanded = expand_update(changes)
    for key in FIXED_KEYS & {k.removeprefix("-=") for k in expanded}:
        if key == "_id" and expanded.get("_id") == doc.get("_id"):
            continue
        raise HostError(f"update cannot change '{key}'")
    expanded.pop("_id", None)
    if "name" in expanded and (not isinstance(expanded["name"], str) or not expanded["name"]):
        raise HostError("name must be a non-empty string")
    merge_into(doc, expanded)


def limits_from(time_limit: Any, memory_mib: Any) -> ScriptLimits:
    """Per-script limits from the world settings (seconds, MiB), defaults when unset/invalid."""
    seconds = DEFAULT_TIME_LIMIT
    if isinstance(time_limit, int | float) and not isinstance(time_limit, bool):
        seconds = min(max(float(time_limit), 0.01), MAX_TIME_LIMIT)
    memory = DEFAULT_MEMORY_LIMIT
    if isinstance(memory_mib, int | float) and not isinstance(memory_mib, bool):
        memory = int(min(max(float(memory_mib), 1.0), 1024.0) * 1024 * 1024)
    return ScriptLimits(time_limit=seconds, memory_limit=memory)


# The world calls ---------------------------------------------------------------------------------


def _user_name(user: dict[str, Any]) -> str:
    return str(user.get("name", user.get("_id", "")))


def _summary(ctx: ActionContext, user: dict[str, Any]) -> dict[str, Any]:
    return documents.user_summary(user, ctx.is_online(user["_id"]))


def snapshot(ctx: ActionContext) -> dict[str, Any]:
    """What `game` is built from: the same data the REST endpoints return; and the seed of the
    script's `Math.random`, drawn from the world's generator (a seeded world's scripts draw the
    same numbers)."""
    tx = ctx.tx
    meta = documents.world_meta(tx)
    acting = ctx.user or documents.gm_user(tx)
    actors = [  # as the tabletop derives them: with their active effects' changes applied
        apply_changes(a) for a in tx.all("Actor") if permission_level(ctx.user, a) >= LIMITED
    ]
    settings = {
        doc["key"]: doc.get("value")
        for doc in tx.all("Setting")
        if isinstance(doc.get("key"), str) and doc["key"] != documents.SETTING_WORLD
    }
    return {
        **documents.world_and_system(meta),
        "version": meta.get("foundryVersion", ""),
        "user": _summary(ctx, acting) if acting else None,
        "users": [_summary(ctx, u) for u in tx.all("User")],
        "actors": actors,
        "scenes": tx.all("Scene"),
        "settings": settings,
        "randomSeed": ctx.random.getrandbits(32),
    }


def _actor(ctx: ActionContext, actor_id: Any) -> dict[str, Any]:
    actor = ctx.tx.get("Actor", actor_id) if isinstance(actor_id, str) else None
    if actor is None or permission_level(ctx.user, actor) < LIMITED:
        raise HostError(f"Actor not found: {actor_id}")
    return actor


def _touch(ctx: ActionContext, doc: dict[str, Any]) -> None:
    documents.touch_stats(doc, ctx.now_ms(), ctx.acting_user_id)


def update_actor(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    actor = _actor(ctx, args.get("id"))
    assert_owner(ctx, actor, "update")
    apply_update(actor, args.get("changes"))
    _touch(ctx, actor)
    ctx.tx.put("Actor", actor)
    return apply_changes(actor)  # the script sees it as `game.actors` does


def update_item(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    actor = _actor(ctx, args.get("actorId"))
    item_id = args.get("id")
    item = documents.find_item(actor, item_id) if isinstance(item_id, str) else None
    if item is None:
        raise HostError(f"Item not found on actor {actor.get('name', '')}: {item_id}")
    assert_owner(ctx, actor, "update items on")
    apply_update(item, args.get("changes"))
    _touch(ctx, item)
    ctx.tx.put("Actor", actor)
    return apply_changes(actor)


def _speaker(ctx: ActionContext, raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise HostError("speaker must be an object")
    out: dict[str, Any] = {}
    for key in ("scene", "actor", "token", "alias"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise HostError(f"speaker.{key} must be a string or null")
        out[key] = value
    return out


def create_chat(ctx: ActionContext, args: dict[str, Any]) -> dict[str, Any]:
    """ChatMessage.create: the same creation (shape, events, chat type) as POST /chat."""
    data = args.get("data")
    if not isinstance(data, dict):
        raise HostError("ChatMessage.create needs an object")
    content = data.get("content", "")
    flavor = data.get("flavor", "")
    if not isinstance(content, str) or not isinstance(flavor, str):
        raise HostError("content and flavor must be strings")
    problem = chat_rules.text_problem(content, flavor)  # the limits of POST /chat
    if problem is not None:
        raise HostError(problem)
    chat_type = data.get("chatType")
    if chat_type is not None and (
        not isinstance(chat_type, int) or isinstance(chat_type, bool) or chat_type not in range(5)
    ):
        raise HostError("chatType must be one of 0, 1, 2, 3, 4")
    return ctx.create_chat_message(
        content=content,
        speaker=_speaker(ctx, data.get("speaker")),
        flavor=flavor,
        whisper=whisper_recipients(ctx, data.get("whisper")),
        chat_type=chat_type,
    )


def set_setting(ctx: ActionContext, args: dict[str, Any]) -> Any:
    key = args.get("key")
    if not isinstance(key, str) or key.startswith(PROTECTED_NAMESPACES):
        raise HostError("Scripts cannot modify REST API module settings")
    if documents.setting_doc(ctx.tx, key) is None:
        raise HostError(f'"{key}" is not a registered game setting')
    if not documents.is_gm(ctx.user):
        raise HostError(f"User '{_user_name(ctx.user or {})}' must be a GM to change settings")
    documents.set_setting(ctx.tx, key, args.get("value"))
    return args.get("value")


def from_uuid(ctx: ActionContext, args: dict[str, Any]) -> Any:
    """fromUuid for what the snapshot does not hold (chat messages, combats); null if unknown."""
    resolved = documents.resolve_uuid(ctx.tx, args.get("uuid"))
    if resolved is None:
        return None
    if resolved.kind == "ChatMessage":
        if not documents.can_see_message(ctx.user, resolved.doc):
            return None
        return documents.message_to_api(resolved.doc, documents.users_by_id(ctx.tx))
    if resolved.kind == "Combat":
        return resolved.doc
    return None


WORLD_CALLS: Final = {
    "actor.update": update_actor,
    "item.update": update_item,
    "chat.create": create_chat,
    "settings.set": set_setting,
    "fromUuid": from_uuid,
}


def world_call(ctx: ActionContext, op: str, args: dict[str, Any]) -> Any:
    """Run one script call in a transaction of its own; rule failures reject its Promise."""
    fn = WORLD_CALLS.get(op)
    if fn is None:
        raise HostError(f"unknown world call: {op}")
    try:
        return ctx.transact(lambda c: fn(c, args))
    except ActionError as exc:
        raise HostError(exc.message) from None


# The action --------------------------------------------------------------------------------------


def _prepare(ctx: ActionContext, params: dict[str, Any]) -> tuple[str, ScriptLimits]:
    """The module's checks, in its order, then the notice. One transaction."""
    user = ctx.user
    tx = ctx.tx
    if documents.get_setting(tx, documents.SETTING_ALLOW_EXECUTE_JS, False) is not True:
        raise ActionError(DISABLED)
    if user is not None:
        required = documents.get_setting(tx, documents.SETTING_EXECUTE_JS_ROLE, DEFAULT_ROLE)
        if not isinstance(required, int) or isinstance(required, bool):
            required = DEFAULT_ROLE
        if int(user.get("role", 0)) < required:
            raise ActionError(
                f"User {_user_name(user)} does not have permission to execute code "
                f"(requires role {required}+)"
            )
    script = params.get("script")
    if not isinstance(script, str) or not script:
        raise ActionError("Invalid script provided")
    if modifies_module_settings(script):
        raise ActionError("Scripts cannot modify REST API module settings")
    gms = [u for u in tx.all("User") if documents.is_gm(u)]
    active = [u["_id"] for u in gms if ctx.is_online(u["_id"])]
    ctx.create_chat_message(
        content=notice_content(script),
        speaker={"scene": None, "actor": None, "token": None, "alias": NOTICE_ALIAS},
        whisper=active or [u["_id"] for u in gms],
        author=documents.gm_user(tx),
    )
    limits = limits_from(
        documents.get_setting(tx, SETTING_TIME_LIMIT),
        documents.get_setting(tx, SETTING_MEMORY_LIMIT),
    )
    return script, limits


@action("execute-js", error_extra=FAILED)
async def execute_js(ctx: ActionContext, params: dict[str, Any]) -> dict[str, Any]:
    """Run a script as the body of an async function; its return value is `result`."""
    deadline = asyncio.get_running_loop().time() + REPLY_BUDGET
    script, limits = ctx.transact(lambda c: _prepare(c, params))
    init = ctx.transact(snapshot)
    try:
        outcome = await runner().run(
            script,
            init=init,
            host=lambda op, args: world_call(ctx, op, args),
            limits=limits,
            deadline=deadline,
        )
    except ScriptError as exc:
        raise ActionError(f"Error executing script: {exc.message}") from None
    if not outcome.defined:
        return {"success": True}
    return {"success": True, "result": outcome.value}
