"""The MCP server: a curated set of tools and resources over a relay, for LLM agents.

- `views.py`: compact views of the relay's documents (pure functions; an actor in a few hundred
  tokens instead of the 20 KB+ details document).
- `tools/`: the tool table (name, JSON schema, description, scope, what it calls, its dry run).
- `server.py`: the MCP `Server` (the official `mcp` SDK's low-level server) built from the table,
  plus resources and event subscriptions; every tool calls the relay through `vttrelay.client`.
- `feeds.py`: the event resources a connection follows (the relay's chat and roll streams).
- `worlds.py`: which world a session plays in when its key reaches several, and the relay
  clients the tools call with (one per relay, key and world).
- `stdio.py`: `vttrelay mcp`, the server over stdio for desktop agents.
- `aiohttp_asgi.py`: `/mcp` on the relay, the SDK's streamable HTTP transport bridged into aiohttp.
- `lazy.py`: `/mcp` registered on the relay, the server above loaded on its first request.
"""
