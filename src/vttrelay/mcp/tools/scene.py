"""The scene tools: which scene is active (switch to another, e.g. the ambush), the tokens on it
with the handles the other tools take ("Goblin 2"), and moving a token."""

from __future__ import annotations

from typing import Any

from vttrelay.client import AsyncClient as Relay
from vttrelay.mcp.tools.base import READ, Tool, ToolInputError, dry, plain
from vttrelay.mcp.tools.names import SceneTokens, scene_tokens


async def tokens(relay: Relay, args: dict[str, Any]) -> Any:
    scene = await scene_tokens(relay, args.get("scene_id"))
    return {"sceneId": scene.scene_id, "tokens": scene.view()}


async def switch_scene(relay: Relay, args: dict[str, Any]) -> Any:
    wanted = str(args["scene"]).strip().removeprefix("vtt://scenes/").removeprefix("Scene.")
    scenes = plain(await relay.scenes.get(all=True)).get("data") or []
    match = [
        s for s in scenes if wanted in (s.get("_id"), s.get("name")) or
        str(s.get("name", "")).casefold() == wanted.casefold()
    ]  # fmt: skip
    if not match:
        names = ", ".join(str(s.get("name")) for s in scenes)
        raise ToolInputError(f"No scene named {args['scene']!r}; the scenes: {names}")
    await relay.scenes.switch(scene_id=str(match[0]["_id"]))
    scene = await scene_tokens(relay)
    return {"activeScene": match[0].get("name"), "sceneId": scene.scene_id, "tokens": scene.view()}


async def preview_switch_scene(relay: Relay, args: dict[str, Any]) -> Any:
    return dry("switch-scene", dict(args), change=f"would make {args['scene']!r} the active scene")


async def _token(relay: Relay, args: dict[str, Any]) -> tuple[SceneTokens, dict[str, Any]]:
    scene = await scene_tokens(relay, args.get("scene_id"))
    token = scene.token_named(args["token"])
    if token is None:
        names = ", ".join(scene.handle.values())
        raise ToolInputError(f"No token named {args['token']!r} on the scene; it has: {names}")
    return scene, token


async def move_token(relay: Relay, args: dict[str, Any]) -> Any:
    scene, token = await _token(relay, args)
    reply = await relay.canvas.move_token(
        args["x"], args["y"], uuid=scene.uuid_of(token), scene_id=args.get("scene_id")
    )
    return {"token": scene.handle[str(token["_id"])], **plain(reply.get("data") or {})}


async def preview_move_token(relay: Relay, args: dict[str, Any]) -> Any:
    scene, token = await _token(relay, args)
    name = scene.handle[str(token["_id"])]
    measured = await relay.canvas.measure_distance(
        origin_x=token.get("x"),
        origin_y=token.get("y"),
        target_x=args["x"],
        target_y=args["y"],
        scene_id=args.get("scene_id"),
    )
    dist = plain(measured.get("data") or {})
    return dry(
        "move-token",
        dict(args),
        change=f"{name}: ({token.get('x')}, {token.get('y')}) -> ({args['x']}, "
        f"{args['y']}), {dist.get('distance')} {dist.get('units', '')}".rstrip(),
    )


SCENE_ID = {"type": "string", "maxLength": 100, "description": "Default: the active scene."}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "switch_scene",
        "Make another scene the active one (everyone sees it; the fight happens there): answers "
        "its tokens with their handles.",
        {"scene": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Name."}},
        ("scene",),
        scopes=("scene:read", "scene:write", "canvas:read"),
        run=switch_scene,
        preview=preview_switch_scene,
    ),
    Tool(
        "scene_tokens",
        "The tokens on a scene (the active one by default) with their handles ('Goblin 2': "
        "what the other tools take) and positions.",
        {"scene_id": SCENE_ID},
        scopes=("canvas:read",),
        run=tokens,
        annotations=READ,
    ),
    Tool(
        "move_token",
        "Move a token (by name or handle) to a position on its scene, in pixels.",
        {
            "token": {"type": "string", "minLength": 1, "maxLength": 200},
            "x": {"type": "number"},
            "y": {"type": "number"},
            "scene_id": SCENE_ID,
        },
        ("token", "x", "y"),
        scopes=("canvas:write", "canvas:read"),
        run=move_token,
        preview=preview_move_token,
    ),
)
