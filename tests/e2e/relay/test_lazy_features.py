"""The relay loads the MCP server (`mcp` SDK) and the dashboard's template engine (Jinja2) only
when they are first used: a relay process that serves neither has not imported them, and an
`/mcp` call without a valid key is refused before the MCP server is loaded. Run in a
fresh Python process (this test process has imported both already), over a real socket."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path

    import aiohttp

    from vttrelay.relay.config import RelayConfig
    from vttrelay.relay.listener import RelaySite, make_runner
    from vttrelay.relay.routes import DEFAULT_SCOPES
    from vttrelay.relay.store import RelayStore
    from vttrelay.server.assemble import build_app

    def loaded(step, **more):
        mods = {m: m in sys.modules for m in ("mcp", "jinja2")}
        print(json.dumps({"step": step, **mods, **more}), flush=True)

    INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}
    HEADERS = {"accept": "application/json, text/event-stream",
               "content-type": "application/json"}

    async def main():
        config = RelayConfig(host="127.0.0.1", port=0, data_dir=Path(sys.argv[1]))
        store = RelayStore(config.store_target)
        key = store.create_key("default", DEFAULT_SCOPES)[1]
        app = build_app(config, store)
        runner = make_runner(app, config, shutdown_timeout=2)
        await runner.setup()
        site = RelaySite(runner, config)
        await site.start()
        url = f"http://127.0.0.1:{site.port}"
        paths = {r.resource.canonical for r in app.router.routes() if r.resource is not None}
        loaded("started", routes=sorted(p for p in paths if "mcp" in p))
        async with aiohttp.ClientSession() as http:
            async with http.get(url + "/health") as resp:
                loaded("health", status=resp.status)
            async with http.get(url + "/dashboard/signin") as resp:
                loaded("dashboard", status=resp.status, html="<form" in await resp.text())
            async with http.post(url + "/mcp", json=INIT, headers=HEADERS) as resp:
                loaded("mcp without key", status=resp.status, body=await resp.json())
            bad = {**HEADERS, "authorization": "Bearer not-a-key"}
            async with http.post(url + "/mcp", json=INIT, headers=bad) as resp:
                loaded("mcp bad key", status=resp.status, body=await resp.json())
            keyed = {**HEADERS, "x-api-key": key}
            async with http.post(url + "/mcp", json=INIT, headers=keyed) as resp:
                body = await resp.text()
                loaded("mcp", status=resp.status, session=bool(resp.headers.get("mcp-session-id")),
                       initialized='"serverInfo"' in body)
            session_id = resp.headers["mcp-session-id"]
            stream = await http.get(url + "/mcp", headers={**keyed, "mcp-session-id": session_id,
                                    "mcp-protocol-version": "2025-06-18"})
            started = time.monotonic()
            await asyncio.wait_for(runner.cleanup(), 10)  # an open GET stream doesn't hold it
            loaded("stopped", status=stream.status, seconds=time.monotonic() - started)
            stream.close()
        store.close()

    asyncio.run(main())
    """
)


def test_mcp_and_jinja2_are_imported_on_first_use_only(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    steps = {s["step"]: s for s in map(json.loads, done.stdout.splitlines())}
    assert steps["started"] == {
        "step": "started",
        "mcp": False,
        "jinja2": False,
        "routes": ["/mcp"],
    }
    assert steps["health"] == {"step": "health", "mcp": False, "jinja2": False, "status": 200}
    assert steps["dashboard"] == {
        "step": "dashboard",
        "mcp": False,
        "jinja2": True,
        "status": 200,
        "html": True,
    }
    # a call without a valid key is refused before the MCP server is loaded
    assert steps["mcp without key"] == {
        "step": "mcp without key",
        "mcp": False,
        "jinja2": True,
        "status": 401,
        "body": {"error": "API key is required"},
    }
    assert steps["mcp bad key"]["mcp"] is False
    assert steps["mcp bad key"]["status"] == 401
    assert steps["mcp bad key"]["body"] == {"error": "Invalid API key"}
    assert steps["mcp"] == {
        "step": "mcp",
        "mcp": True,
        "jinja2": True,
        "status": 200,
        "session": True,
        "initialized": True,
    }
    assert steps["stopped"]["status"] == 200
    assert steps["stopped"]["seconds"] < 5
