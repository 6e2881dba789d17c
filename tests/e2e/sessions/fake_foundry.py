"""A small fake Foundry server for the browser-session tests: the join page with the
reference's form fields (`select[name=userid]`, `input[name=password]`), `POST /join` taking
`{action: "join", userid, password}` as Foundry does, and a game page (`#ui-left`, `game.world.id`)
whose script refuses, as Foundry does, a browser whose WebGL is missing or software-rendered
(the sessions' WebGL shim is what lets headless chromium through), then connects to the relay's
`/relay` as the module does: the world's client id (its world setting, set when the world was
paired) and the connection token from local storage (`foundry-rest-api.connectionToken`, a JSON
string), the auth frame first, then it answers every
request with `{type: <type>-result, requestId, data: {answeredBy: "fake-foundry"}}`.

With no world running (`running=None`) it shows Foundry's setup page instead, as Foundry does:
`/` and `/join` lead to `/setup`, whose world list (`li.package.world` with `data-package-id`, a
`.package-title` and an `a.control.play`, shown a moment after the page loads, under a
notification that covers the page until its `.close` is clicked) launches a world with
`POST /setup {action: "launchWorld", world}` and then goes to `/join`.

A game page also keeps a socket to the Foundry server (`/socket`, as Foundry's own): when the
world is shut down (`POST /setup {shutdown: true}`, the GM's "Return to Setup") the server
closes those sockets and each game page leaves for `/join`, closing its relay socket as the
module's does when its page goes away; the browser stays open on Foundry's setup page."""

from __future__ import annotations

import secrets
from typing import Any, Final

from aiohttp import web

USERS = (
    ("gm000001", "Gamemaster", False),
    ("pl000001", "Player", False),
    ("bz000001", "Busy", True),
)
PASSWORD = "hunter2"
# package id -> (title, the client id its module connects with)
WORLDS: Final = {
    "fake-world": ("Fake World", "fake-world"),
    "other-world": ("Other World", "other-world"),
    "broken-world": ("Broken World", "broken-world"),  # its game page never shows the game UI
}
LAUNCHED: Final = web.AppKey("launched", list)  # the worlds launched from the setup page
# the game pages' sockets to the server
GAME_SOCKETS: Final = web.AppKey("game_sockets", set[web.WebSocketResponse])
JOIN_PAGE = """<!doctype html><title>Join Game Session</title>
<form id="join"><select name="userid">{options}</select>
<input type="password" name="password"><button>Join</button></form>"""
SETUP_PAGE = """<!doctype html><title>Foundry Virtual Tabletop</title>
<ol id="notifications"></ol>
<section id="setup-packages-worlds"><ul id="worlds-list" style="display: none">{entries}</ul>
</section><script>
setTimeout(() => {{
  const note = document.createElement("li");
  note.className = "notification warning";
  note.style = "position: fixed; inset: 0; z-index: 10; background: #333; color: white";
  note.innerHTML = 'A new Foundry version is available <i class="close fas fa-times">x</i>';
  note.querySelector(".close").addEventListener("click", () => note.remove());
  document.getElementById("notifications").append(note);
}}, 100);
setTimeout(() => document.getElementById("worlds-list").style.display = "block", 400);
for (const play of document.querySelectorAll("a.control.play")) {{
  play.addEventListener("click", async () => {{
    const world = play.closest("li").dataset.packageId;
    await fetch("/setup", {{method: "POST", headers: {{"Content-Type": "application/json"}},
      body: JSON.stringify({{action: "launchWorld", world}})}});
    location.href = "/join";
  }});
}}
</script>"""
WORLD_ENTRY = """<li class="package world" data-package-id="{id}">
<h3 class="package-title"> {title} </h3><a class="control play" data-action="worldLaunch">
<i class="fas fa-play">Launch World</i></a></li>"""
GAME_PAGE = """<!doctype html><title>{title}</title><div id="{ui}">{title}</div><script>
const canvas = document.createElement("canvas");
const gl = canvas.getContext("webgl2") || canvas.getContext("webgl");
const info = gl && gl.getExtension("WEBGL_debug_renderer_info");
const renderer = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : "";
if (!gl || /SwiftShader|llvmpipe|software/i.test(renderer) || !renderer) {{
  document.body.textContent = "WebGL unavailable or software-rendered: " + renderer;
  throw new Error("no hardware WebGL");
}}
globalThis.game = {{world: {{id: "{world_id}", title: "{title}"}}}};
const token = JSON.parse(localStorage.getItem("foundry-rest-api.connectionToken"));
const query = new URLSearchParams({{id: "{client_id}", worldId: "{world_id}",
  worldTitle: "{title}", foundryVersion: "14.363", systemId: "dnd5e",
  systemTitle: "Dungeons & Dragons Fifth Edition", systemVersion: "5.0.4"}});
const ws = new WebSocket("{relay}?" + query);
ws.onopen = () => ws.send(JSON.stringify({{type: "auth", token}}));
ws.onmessage = (message) => {{
  const frame = JSON.parse(message.data);
  if (frame.requestId) ws.send(JSON.stringify({{type: frame.type + "-result",
    requestId: frame.requestId, data: {{answeredBy: "fake-foundry"}}}}));
}};
const server = new WebSocket(location.origin.replace(/^http/, "ws") + "/socket");
server.onclose = () => {{ location.href = "/join"; }};
</script>"""


def fake_foundry(relay_ws_url: str, running: str | None = "fake-world") -> web.Application:
    """A Foundry server running world `running` (a key of `WORLDS`), or none (its setup page)."""
    sessions: set[str] = set()
    world: dict[str, str | None] = {"running": running}

    async def join_page(request: web.Request) -> web.Response:
        if world["running"] is None:
            raise web.HTTPFound("/setup")
        options = "".join(
            f'<option value="{uid}"{" disabled" if busy else ""}>{name}</option>'
            for uid, name, busy in USERS
        )
        return web.Response(text=JOIN_PAGE.format(options=options), content_type="text/html")

    async def setup_page(request: web.Request) -> web.Response:
        if world["running"] is not None:
            raise web.HTTPFound("/join")
        entries = "".join(WORLD_ENTRY.format(id=i, title=t) for i, (t, _) in WORLDS.items())
        return web.Response(text=SETUP_PAGE.format(entries=entries), content_type="text/html")

    async def launch(request: web.Request) -> web.Response:
        body: Any = await request.json()
        if body.get("shutdown") is True:  # the world shuts down: its game pages leave
            world["running"] = None
            await close_game_sockets(request.app)
            return web.json_response({"status": "success"})
        if body.get("action") != "launchWorld" or body.get("world") not in WORLDS:
            return web.json_response({"error": "No such world"}, status=400)
        world["running"] = body["world"]
        request.app[LAUNCHED].append(body["world"])
        return web.json_response({"status": "success"})

    async def join(request: web.Request) -> web.Response:
        body: Any = await request.json()
        if body.get("action") != "join" or body.get("userid") != USERS[0][0]:
            return web.json_response({"status": "failed", "message": "Unknown user"})
        if body.get("password") != PASSWORD:
            return web.json_response(
                {"status": "failed", "message": "Incorrect password for user Gamemaster"}
            )
        cookie = secrets.token_hex(8)
        sessions.add(cookie)
        answer = web.json_response({"status": "success", "redirect": "/game"})
        answer.set_cookie("session", cookie)
        return answer

    async def game(request: web.Request) -> web.Response:
        running_now = world["running"]
        if request.cookies.get("session") not in sessions or running_now is None:
            raise web.HTTPFound("/join")
        title, client_id = WORLDS[running_now]
        ui = "loading" if running_now == "broken-world" else "ui-left"
        page = GAME_PAGE.format(
            world_id=running_now, title=title, client_id=client_id, relay=relay_ws_url, ui=ui
        )
        return web.Response(text=page, content_type="text/html")

    async def game_socket(request: web.Request) -> web.WebSocketResponse:
        page = web.WebSocketResponse()
        await page.prepare(request)
        request.app[GAME_SOCKETS].add(page)
        try:
            async for _ in page:
                pass
        finally:
            request.app[GAME_SOCKETS].discard(page)
        return page

    app = web.Application()
    app[LAUNCHED] = []
    app[GAME_SOCKETS] = set()
    app.router.add_get("/socket", game_socket)
    app.on_shutdown.append(close_game_sockets)
    app.router.add_get("/", join_page)
    app.router.add_get("/join", join_page)
    app.router.add_post("/join", join)
    app.router.add_get("/setup", setup_page)
    app.router.add_post("/setup", launch)
    app.router.add_get("/game", game)
    return app


async def close_game_sockets(app: web.Application) -> None:
    """Close the game pages' sockets to the server (a world shut down, the server stopping)."""
    pages = app[GAME_SOCKETS]
    for page in list(pages):
        await page.close()
