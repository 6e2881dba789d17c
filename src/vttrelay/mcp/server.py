"""The MCP server: the official `mcp` SDK's low-level `Server` with our tools and resources.

One builder, `build_server(callers)`, serves both transports; they differ only in how a request
finds its caller (`Callers`): over stdio there is one relay client and one key for the whole
process (`stdio.StdioCallers`); on the relay's `/mcp` each HTTP request carries its own API key
(`aiohttp_asgi.HttpCallers`). A `Caller` is the relay client to call with (bound to the world
the session plays in, `worlds`), the key's name (for the log) and the key's scopes (to list
only the tools the key can use).

What the server does per MCP request:

- `tools/list`: the tools of `tools.TOOLS` the key's scopes cover, each with its JSON schema.
- `tools/call`: runs the tool (or, with `dry_run: true` on a changing tool, its preview) and
  answers its compact result as JSON text and structured content. A relay refusal
  (`VttRelayError`: a missing scope, an unknown actor, a world error) or bad arguments come
  back as a tool error (`isError: true`) whose text says what was refused and why (a key over
  several worlds with none chosen: which worlds there are, and how to choose). One log line per
  call, with the key's name, on the `vttrelay.mcp` logger.
- Resources: `vtt://world` (the overview), `vtt://actors/{id}` (an actor's compact sheet),
  `vtt://scenes/{id}` (a scene and its tokens), and two that update, `vtt://events/chat` and
  `vtt://events/rolls`: the last events of the relay's stream. Subscribing to one of those
  (`resources/subscribe` on the handshake protocol versions, a `subscriptions/listen` stream on
  2026-07-28) follows the relay's SSE stream with the caller's key and sends
  `notifications/resources/updated` on each event.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import mcp_types as types
import orjson
from jsonschema import Draft202012Validator
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from vttrelay import __version__
from vttrelay.client import VttRelayError
from vttrelay.mcp import tools as tool_table
from vttrelay.mcp import views, worlds
from vttrelay.mcp.caller import Caller
from vttrelay.mcp.feeds import EVENT_STREAMS, EVENTS_PREFIX, EventFeeds

log = logging.getLogger("vttrelay.mcp")

INSTRUCTIONS = (
    "Tools for a live tabletop world (D&D 5e) through a vttrelay relay. Start with "
    "world_overview, read an actor with actor_summary before acting for it, and pass "
    "dry_run: true to any changing tool to see what it would do first."
)


class Callers(Protocol):
    def __call__(self, ctx: ServerRequestContext[Any, Any]) -> Awaitable[Caller]: ...


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def explain(caller: Caller, exc: VttRelayError) -> str:
    """A relay refusal as the sentence an agent can act on: with no world chosen among several
    or the chosen one offline, which worlds there are; else `refusal_text`."""
    if worlds.is_unchosen(exc):
        return await worlds.unchosen_text(caller.relay, exc)
    if caller.world and worlds.is_gone(exc):
        return await worlds.gone_text(caller.relay, caller.world, exc)
    return refusal_text(exc)


def refusal_text(exc: VttRelayError) -> str:
    """A relay refusal as one sentence an agent can act on."""
    body = exc.body if isinstance(exc.body, dict) else {"error": exc.body}
    text = f"The relay refused the call ({exc.status}): {body.get('error')}"
    if exc.status == 403 and "scope" in str(body.get("error")):
        text += ". This API key may not do that; ask its owner for the scope."
    return text


def _tool(tool: tool_table.Tool) -> types.Tool:
    hints = dict(tool.annotations)
    if tool.changes:
        hints.setdefault("readOnlyHint", False)
    return types.Tool(
        name=tool.name,
        description=tool.description + (" Accepts dry_run." if tool.changes else ""),
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=hints.get("readOnlyHint"), open_world_hint=False
        ),
    )


VALIDATORS: dict[str, Draft202012Validator] = {
    t.name: Draft202012Validator(t.input_schema()) for t in tool_table.TOOLS
}


def schema_problems(tool: tool_table.Tool, args: dict[str, Any]) -> list[str]:
    """What is wrong with `args` against the tool's input schema (empty when nothing is), each
    as `where: what`, at most 10."""
    found = sorted(VALIDATORS[tool.name].iter_errors(args), key=lambda e: list(e.absolute_path))
    return [
        f"{'.'.join(str(p) for p in e.absolute_path) or 'arguments'}: {e.message}"
        for e in found[:10]
    ]


async def call_tool(
    caller: Caller,
    name: str,
    arguments: dict[str, Any],
    choose: Callable[[str], None] | None = None,
) -> types.CallToolResult:
    """Run one tool for `caller`: the result, or a tool error that says why not. A tool that
    picks the session's world tells `choose` its id."""
    tool = tool_table.BY_NAME.get(name)
    if tool is None or tool.run is None:
        return tool_error(f"Unknown tool {name!r}")
    args = dict(arguments or {})
    problems = schema_problems(tool, args)
    if problems:
        return tool_error(f"{name}: bad arguments: {'; '.join(problems)}")
    dry = bool(args.pop("dry_run", False)) and tool.preview is not None
    started = time.perf_counter()
    outcome = "ok"
    try:
        if dry and caller.scopes is not None and not set(tool.scopes) <= set(caller.scopes):
            lacking = sorted(set(tool.scopes) - set(caller.scopes))
            outcome = "refused"
            return tool_error(
                f"Dry run: the call would be refused: this API key lacks scope {', '.join(lacking)}"
            )
        run = tool.preview if dry and tool.preview else tool.run
        result = await run(caller.relay, args)
    except VttRelayError as exc:
        outcome = f"refused {exc.status}"
        return tool_error(await explain(caller, exc))
    except tool_table.ToolInputError as exc:
        outcome = "bad input"
        return tool_error(str(exc))
    except (KeyError, TypeError, ValueError) as exc:
        outcome = "bad input"
        return tool_error(f"{name}: bad arguments ({exc})")
    finally:
        log.info(
            "tool %s%s by key %r: %s (%.0f ms)",
            name,
            " (dry run)" if dry else "",
            caller.key_name,
            outcome,
            (time.perf_counter() - started) * 1000,
        )
    if tool.picks_world and choose is not None:
        choose(str(result["chosen"]["id"]))
    if isinstance(result, tool_table.ToolImage):  # a picture (sheet_picture)
        encoded = base64.b64encode(result.data).decode()
        image = types.ImageContent(type="image", data=encoded, mime_type=result.mime_type)
        return types.CallToolResult(content=[image])
    structured = result if isinstance(result, dict) else {"result": result}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_json(result))],
        structured_content=structured,
    )


# Resources ----------------------------------------------------------------------------------------

WORLD_URI = "vtt://world"
ACTOR_PREFIX = "vtt://actors/"
SCENE_PREFIX = "vtt://scenes/"


async def read_resource(caller: Caller, uri: str, feeds: EventFeeds) -> Any:
    """The JSON of a resource."""
    relay = caller.relay
    if uri == WORLD_URI:
        return await tool_table.world_overview(relay, {})
    if uri.startswith(ACTOR_PREFIX):  # an id, or any uuid the tools hand out
        actor = uri.removeprefix(ACTOR_PREFIX)
        uuid = actor if "." in actor else f"Actor.{actor}"
        return await tool_table.actor_summary(relay, {"actor": uuid})
    if uri.startswith(SCENE_PREFIX):
        scene_id = uri.removeprefix(SCENE_PREFIX).removeprefix("Scene.")
        scene = await relay.scenes.get(scene_id=scene_id)
        found: Any = scene.get("data") or {}
        data: dict[str, Any] = (found[0] if found else {}) if isinstance(found, list) else found
        return {
            "id": data.get("_id"),
            "name": data.get("name"),
            "active": data.get("active"),
            "size": [data.get("width"), data.get("height")],
            "grid": data.get("grid"),
            "tokens": [views.token_view(t) for t in data.get("tokens") or []],
        }
    if uri.startswith(EVENTS_PREFIX) and uri.removeprefix(EVENTS_PREFIX) in EVENT_STREAMS:
        kind = uri.removeprefix(EVENTS_PREFIX)
        feed = feeds.get(uri)
        if feed is not None:
            return {"following": True, "events": list(feed.events)}
        if kind == "chat":
            recent = await tool_table.read_chat(relay, {"limit": 20})
            return {"following": False, "events": recent["messages"]}
        reply = await relay.rolls.list(limit=20)
        return {"following": False, "events": reply.get("data") or []}
    raise tool_table.ToolInputError(f"Unknown resource {uri!r}")


async def list_resources(caller: Caller) -> list[types.Resource]:
    out = [
        types.Resource(
            name="world",
            uri=WORLD_URI,
            description="The world: title, system, users, active scene, actors and scenes.",
            mime_type="application/json",
        )
    ]
    for kind, path in EVENT_STREAMS.items():
        out.append(
            types.Resource(
                name=f"{kind} events",
                uri=EVENTS_PREFIX + kind,
                description=f"The latest {kind} events; subscribe to be told of each new one "
                f"(follows the relay's {path} stream).",
                mime_type="application/json",
            )
        )
    with contextlib.suppress(VttRelayError):
        overview = await tool_table.world_overview(caller.relay, {})
        for actor in overview.get("actors") or []:
            out.append(
                types.Resource(
                    name=f"actor: {actor['name']}",
                    uri=ACTOR_PREFIX + str(actor["uuid"]).rsplit(".", 1)[-1],
                    description="The actor's compact sheet.",
                    mime_type="application/json",
                )
            )
        for scene in overview.get("scenes") or []:
            out.append(
                types.Resource(
                    name=f"scene: {scene['name']}",
                    uri=SCENE_PREFIX + str(scene["uuid"]).rsplit(".", 1)[-1],
                    description="The scene and its tokens.",
                    mime_type="application/json",
                )
            )
    return out


TEMPLATES = [
    types.ResourceTemplate(
        name="actor",
        uri_template=ACTOR_PREFIX + "{id}",
        description="An actor's compact sheet by id.",
        mime_type="application/json",
    ),
    types.ResourceTemplate(
        name="scene",
        uri_template=SCENE_PREFIX + "{id}",
        description="A scene and its tokens by id.",
        mime_type="application/json",
    ),
]


# The server ---------------------------------------------------------------------------------------


def _feeds_of(ctx: ServerRequestContext[Any, Any]) -> EventFeeds:
    """The connection's event feeds, created on first use and closed with the connection. (The
    SDK's `ServerSession` keeps its `Connection` private; its per-connection `state` and
    `exit_stack` are what the SDK documents for this.)"""
    connection = ctx.session._connection
    feeds = connection.state.get("vttrelay.feeds")
    if feeds is None:
        feeds = connection.state["vttrelay.feeds"] = EventFeeds()
        connection.exit_stack.push_async_callback(feeds.close)
    return feeds


def build_server(callers: Callers) -> Server[Any]:
    """The MCP server; `callers(ctx)` gives each request its `Caller`."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = await callers(ctx)
        return types.ListToolsResult(tools=[_tool(t) for t in tool_table.usable(caller.scopes)])

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = await callers(ctx)
        return await call_tool(
            caller,
            params.name,
            dict(params.arguments or {}),
            lambda client_id: worlds.choose(ctx, client_id),
        )

    async def on_list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await list_resources(await callers(ctx)))

    async def on_list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = await callers(ctx)
        uri = str(params.uri)
        try:
            value = await read_resource(caller, uri, _feeds_of(ctx))
        except VttRelayError as exc:
            raise _mcp_error(await explain(caller, exc)) from exc
        except tool_table.ToolInputError as exc:
            raise _mcp_error(str(exc)) from exc
        log.info("resource %s read by key %r", uri, caller.key_name)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=uri, mime_type="application/json", text=_json(value))
            ]
        )

    async def on_subscribe(
        ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        caller = await callers(ctx)
        connection = ctx.session._connection
        uri = str(params.uri)
        try:
            await _feeds_of(ctx).follow(caller, uri, connection.send_resource_updated)
        except VttRelayError as exc:
            raise _mcp_error(await explain(caller, exc)) from exc
        except tool_table.ToolInputError as exc:
            raise _mcp_error(str(exc)) from exc
        log.info("resource %s subscribed by key %r", uri, caller.key_name)
        return types.EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        await _feeds_of(ctx).stop(str(params.uri))
        return types.EmptyResult()

    async def on_listen(
        ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """`subscriptions/listen` (protocol 2026-07-28, where resources/subscribe is gone): the
        stream follows the event resources it names, with the caller's key, for as long as it
        is open. Each stream has its own bus, so it gets only what its key may see."""
        caller = await callers(ctx)
        wanted = [str(u) for u in params.notifications.resource_subscriptions or []]
        bus = InMemorySubscriptionBus()
        feeds = EventFeeds()

        async def notify(uri: str) -> None:
            await bus.publish(ResourceUpdated(uri=uri))

        try:
            for uri in wanted:
                if uri.startswith(EVENTS_PREFIX):
                    await feeds.follow(caller, uri, notify)
        except VttRelayError as exc:
            await feeds.close()
            raise _mcp_error(await explain(caller, exc)) from exc
        except tool_table.ToolInputError as exc:
            await feeds.close()
            raise _mcp_error(str(exc)) from exc
        log.info("listen %s by key %r", ", ".join(wanted) or "-", caller.key_name)
        try:
            return await ListenHandler(bus)(ctx, params)
        finally:
            await feeds.close()

    return Server(
        "vttrelay",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_templates,
        on_read_resource=on_read_resource,
        on_subscribe_resource=on_subscribe,
        on_unsubscribe_resource=on_unsubscribe,
        on_subscriptions_listen=on_listen,
    )


def _mcp_error(text: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=text)
